// Inverted dropout with counter-based masks (dropout.rs): one thread per four elements, one
// Philox call each, the generator's state read from device memory when the kernel runs (so that
// a captured graph draws new masks at every replay). Compiled after candle_cudnn_rnn's half
// prelude (kernels/half.cuh: bf16, f16, load, store) and its Philox4x32-10 (kernels/philox.cuh:
// philox(c, k0, k1)), which draws the bits of dropout.rs's CPU `philox`.
//
// dropout_N(x, y, s, slot, threshold, scale, n), instantiated per element type T by OPS(T, N),
// one thread per group of four elements (ceil(n / 4) threads in all):
//   x          [n] T      the input
//   y          [n] T      out: 0 where the element's draw is below `threshold`, else x · scale
//   s          [4] u32    the generator's state: seed (low, high), step (low, high)
//   slot       which dropout of the step this is (the counter's second word)
//   threshold  p · 2^32, the drop probability in draws
//   scale      1 / (1 − p)
//   n          the number of elements
// dropout_advance(s), one thread: moves the state's step (s[2], s[3]) on by one.

template <typename T> __device__ void dropout(const T* x, T* y, const unsigned int* s,
        unsigned int slot, unsigned int threshold, float scale, long long n) {
    long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (g * 4 >= n) return;
    unsigned int c[4] = {(unsigned int)g, slot, s[2], s[3]};
    philox(c, s[0], s[1]);
    for (int j = 0; j < 4; ++j) {
        long long i = g * 4 + j;
        if (i < n) store(y + i, c[j] < threshold ? 0.0f : load(x[i]) * scale);
    }
}

#define OPS(T, N) \
extern "C" __global__ void dropout_##N(const T* x, T* y, const unsigned int* s, unsigned int slot, \
        unsigned int threshold, float scale, long long n) { dropout(x, y, s, slot, threshold, scale, n); }
OPS(float, f32)
OPS(bf16, bf16)
OPS(f16, f16)

extern "C" __global__ void dropout_advance(unsigned int* s) {
    unsigned long long step = ((unsigned long long)s[3] << 32 | s[2]) + 1ull;
    s[2] = (unsigned int)step;
    s[3] = (unsigned int)(step >> 32);
}
