// The sparse gradient of a table lookup (lookup_grad.rs): one block per lookup i, working only
// when i is its id's first lookup (found by its threads' scan of the ids before it), its
// threads striding over the columns. Deterministic: every sum is taken in lookup order by one
// thread. Needs no prelude.
//
// Both kernels run one block per lookup (blockIdx.x is i, gridDim.x = n):
//   sum_repeats(rows, ids, out, n, h), blockDim.x a multiple of 32, at most LIST
//     rows  [n, h] f32   the gradient rows of the lookups
//     ids   [n] u32      the looked-up ids
//     out   [n, h] f32   out: row i the sum of the rows of every lookup of ids[i] if i is that
//                        id's first lookup, else zeros
//   scatter_axpy(table, ids, sums, a, v, h)
//     table  [v, h] f32  the table, updated in place: table[ids[i]] += a[0] · sums[i] for each
//                        id's first lookup i (ids ≥ v skipped; nothing when a[0] is 0)
//     ids    [n] u32     the looked-up ids
//     sums   [n, h] f32  sum_repeats' sums
//     a      [1] f32     the factor

// Whether lookup i is its id's first: the block's threads scan the earlier ids together (all
// of them must call it).
__device__ bool first(const unsigned int* ids, int i) {
    unsigned int id = ids[i];
    int seen = 0;
    for (int k = threadIdx.x; k < i; k += blockDim.x) seen |= ids[k] == id;
    return !__syncthreads_or(seen);
}

// Adds the listed rows to the sums in `o` (started: `o` holds earlier ones), column by column,
// in list order.
__device__ void add_listed(const float* rows, const int* list, int count, bool started, float* o, int h) {
    for (int j = threadIdx.x; j < h; j += blockDim.x) {
        float s = started ? o[j] : 0.0f;
        for (int q = 0; q < count; ++q) s += rows[(long long)list[q] * h + j];
        o[j] = s;
    }
    __syncthreads();
}

// A block per lookup i: if it is its id's first, the block lists the id's lookups (in lookup
// order, blockDim at a time: a ballot per warp and the warps' counts give each hit its place)
// and sums their rows, LIST listed rows at a time; otherwise its sum is zero. (Thread 0
// scanning the ids alone took a visible share of PTB large's step,
// results/2026-11-23-h100-gemm-pad/; every thread scanning them itself, O(n^2 h / threads)
// loads, far more, results/2026-11-23-h100-cuda-graph/.) Blocks of a multiple of 32 threads,
// at most LIST.
#define LIST 1024
extern "C" __global__ void sum_repeats(const float* rows, const unsigned int* ids, float* out, int n, int h) {
    __shared__ int list[LIST];
    __shared__ int warp_hits[32];
    int i = blockIdx.x;
    unsigned int id = ids[i];
    float* o = out + (long long)i * h;
    if (!first(ids, i)) {
        for (int j = threadIdx.x; j < h; j += blockDim.x) o[j] = 0.0f;
        return;
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    int count = 0;
    bool started = false;
    for (int base = i; base < n; base += blockDim.x) {
        int k = base + threadIdx.x;
        bool hit = k < n && ids[k] == id;
        unsigned int ballot = __ballot_sync(0xffffffffu, hit);
        if (lane == 0) warp_hits[warp] = __popc(ballot);
        __syncthreads();
        int before = 0, round = 0;
        for (int w = 0; w < warps; ++w) {
            before += w < warp ? warp_hits[w] : 0;
            round += warp_hits[w];
        }
        if (count + round > LIST) {
            add_listed(rows, list, count, started, o, h);
            started = true;
            count = 0;
        }
        if (hit) list[count + before + __popc(ballot & ((1u << lane) - 1u))] = k;
        count += round;
        // The list is complete for this round, and warp_hits free for the next.
        __syncthreads();
    }
    add_listed(rows, list, count, started, o, h);
}

extern "C" __global__ void scatter_axpy(float* table, const unsigned int* ids, const float* sums, const float* a, int v, int h) {
    int i = blockIdx.x;
    unsigned int id = ids[i];
    bool is_first = first(ids, i);
    float alpha = a[0];
    // A 0 factor (an overflowed f16 step) leaves the table alone: 0 times an inf sum is NaN.
    if (id >= (unsigned int)v || !is_first || alpha == 0.0f) return;
    float* w = table + (long long)id * h;
    const float* s = sums + (long long)i * h;
    for (int j = threadIdx.x; j < h; j += blockDim.x) w[j] += alpha * s[j];
}
