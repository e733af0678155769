// One LSTM layer's recurrence as one persistent kernel: every block owns UNITS hidden units
// (all four gate rows of each) and keeps their rows of W_hh in shared memory for the whole
// sequence, so the weights are read from memory once per call instead of once per step.
// Each step: every warp copies its K slice of h_{t-1} from the exchange buffer (L2) into its
// shared-memory stage with 16-byte asynchronous copies, multiplies the block's rows by it on
// tensor cores, the block sums the warps' partial products and does the gate math for its
// units, writes h_t to y[t] and to the exchange buffer, then one grid-wide barrier.
//
// Specialised at compile time (NVRTC -D): HID, BATCH, UNITS (a multiple of 4), NWARPS,
// ELEM_BF16 (1: bf16, 0: f16). The input projection W_ih x_t is computed before the kernel
// (one GEMM over all steps) and arrives in `xg`, f32 [T, B, 4H], without biases.
// `hx` is the exchange buffer, [2][BATCH][KPAD], zeroed before the launch (its columns past
// HID are never written and must stay zero). With `save` non-null (training), the gate
// activations overwrite `xg` in place and the cell states go to `save`, f32 [T, B, H], for
// the backward pass.

#define ROWS (4 * UNITS)
#define MT (ROWS / 16)
#define NT ((BATCH + 7) / 8)
#define NPAD (NT * 8)
#define KSTEPS ((HID + 15) / 16)
#define KPAD (KSTEPS * 16)
// Row pitch of the weight tile, in elements: an odd number of 16-byte chunks, so that the
// eight row addresses of an ldmatrix fall in different banks.
#define PITCH (KPAD + 8)
#define KPW ((KSTEPS + NWARPS - 1) / NWARPS)
#define THREADS (NWARPS * 32)
#define ITEMS ((UNITS * BATCH + THREADS - 1) / THREADS)
#define RPITCH (ROWS + 4)
// A warp's stage of h: NPAD rows of its KW columns, the pitch an odd number of 16-byte
// chunks (conflict-free ldmatrix). After the products the warp's partial sums, NPAD rows of
// RPITCH floats, reuse the same bytes.
#define KW (KPW * 16)
#define HSP (KW + 8)
#define STAGE_BYTES (NPAD * HSP * 2)
#define RED_BYTES (NPAD * RPITCH * 4)
#define WARP_BYTES ((((STAGE_BYTES > RED_BYTES) ? STAGE_BYTES : RED_BYTES) + 15) / 16 * 16)

extern "C" __global__ void __launch_bounds__(THREADS, 1)
lstm_persistent_fwd(const u16* __restrict__ w_hh,  // [4H, H]
                    float* xg,                      // [T, B, 4H]
                    const u16* __restrict__ b_ih,   // [4H] or null
                    const u16* __restrict__ b_hh,   // [4H] or null
                    const u16* h0,                  // [B, H] or null (zeros)
                    const u16* __restrict__ c0,     // [B, H] or null (zeros)
                    u16* y,                         // [T, B, H]
                    u16* h_n, u16* c_n,             // [B, H]
                    u16* hx,                        // [2, B, KPAD], zeroed
                    float* save,                    // [T, B, H] cell states, or null
                    u32* counter, int seq) {
    extern __shared__ __align__(16) unsigned char smem[];
    u16* w = (u16*)smem;                               // [ROWS][PITCH]
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    unsigned char* warp_region = smem + ROWS * PITCH * 2 + warp * WARP_BYTES;
    u16* hs = (u16*)warp_region;                       // [NPAD][HSP], this warp's stage
    float* red = (float*)(smem + ROWS * PITCH * 2);    // warp q's sums at q * WARP_BYTES
    const int u0 = blockIdx.x * UNITS;

    // Row r of the tile is gate r / UNITS of unit u0 + r % UNITS; rows past H and columns
    // past HID are zero. A warp copies one row at a time, two elements per lane and load
    // (rows start 4-byte aligned: HID is even).
    for (int r = warp; r < ROWS; r += NWARPS) {
        int g = r / UNITS, u = u0 + r % UNITS;
        const u32* src = (const u32*)(w_hh + (size_t)(g * HID + u) * HID);
        u32* dst = (u32*)(w + r * PITCH);
        for (int k2 = lane; k2 < PITCH / 2; k2 += 32)
            dst[k2] = (u < HID && 2 * k2 < HID) ? src[k2] : 0u;
    }

    float c[ITEMS], bias[ITEMS][4];
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
        int idx = tid + it * THREADS, u = u0 + idx % UNITS, n = idx / UNITS;
        bool live = idx < UNITS * BATCH && u < HID;
        c[it] = (live && c0) ? to_f(c0[n * HID + u]) : 0.f;
#pragma unroll
        for (int g = 0; g < 4; ++g) {
            float b = 0.f;
            if (live && b_ih) b += to_f(b_ih[g * HID + u]);
            if (live && b_hh) b += to_f(b_hh[g * HID + u]);
            bias[it][g] = b;
        }
    }
    __syncthreads();

    for (int t = 0; t < seq; ++t) {
        // This step's input projection, loaded now so its latency hides behind the products.
        float xv[ITEMS][4];
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            int idx = tid + it * THREADS, u = u0 + idx % UNITS, n = idx / UNITS;
            bool live = idx < UNITS * BATCH && u < HID;
#pragma unroll
            for (int g = 0; g < 4; ++g)
                xv[it][g] = live ? xg[((size_t)t * BATCH + n) * 4 * HID + g * HID + u] : 0.f;
        }

        // The block's gate rows times h_{t-1}: warp `warp` takes KPW of the K steps, from
        // column kw0.
        const int kw0 = warp * KW;
        if (t > 0) {
            const u16* src = hx + ((t - 1) & 1) * BATCH * KPAD;
            for (int q = lane; q < BATCH * (KW / 8); q += 32) {
                int n = q / (KW / 8), j = (q % (KW / 8)) * 8;
                if (kw0 + j < KPAD) cp_async16(hs + n * HSP + j, src + n * KPAD + kw0 + j);
            }
            cp_async_wait_all();
        } else {
            // h_0 (rows of HID, 4-byte aligned) or zeros; columns past HID are zero.
            for (int q = lane; q < BATCH * (KW / 2); q += 32) {
                int n = q / (KW / 2), k = kw0 + (q % (KW / 2)) * 2;
                u32 v = (h0 && k < HID) ? *(const u32*)(h0 + n * HID + k) : 0u;
                *(u32*)(hs + n * HSP + k - kw0) = v;
            }
        }
        __syncwarp();
        float acc[MT][NT][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                for (int q = 0; q < 4; ++q) acc[mt][nt][q] = 0.f;
#pragma unroll
        for (int j = 0; j < KPW; ++j) {
            int ks = warp * KPW + j;
            if (ks < KSTEPS) {
                u32 b[NT][2];
#pragma unroll
                for (int nt = 0; nt < NT; ++nt)
                    ldsm_x2(b[nt], hs + (nt * 8 + (lane & 7)) * HSP + j * 16 + ((lane >> 3) & 1) * 8);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    u32 a[4];
                    int row = mt * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
                    ldsm_x4(a, w + row * PITCH + ks * 16 + (lane >> 4) * 8);
#pragma unroll
                    for (int nt = 0; nt < NT; ++nt) mma(acc[mt][nt], a, b[nt]);
                }
            }
        }
        // The stage is read; the warp's partial sums take its place.
        __syncwarp();
        float* rw = (float*)warp_region;
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) {
                int r = mt * 16 + (lane >> 2), n = nt * 8 + (lane & 3) * 2;
                rw[n * RPITCH + r] = acc[mt][nt][0];
                rw[(n + 1) * RPITCH + r] = acc[mt][nt][1];
                rw[n * RPITCH + r + 8] = acc[mt][nt][2];
                rw[(n + 1) * RPITCH + r + 8] = acc[mt][nt][3];
            }
        __syncthreads();

        // Gate math for the block's (unit, sample) pairs; the cell state stays in registers.
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            int idx = tid + it * THREADS, ul = idx % UNITS, u = u0 + ul, n = idx / UNITS;
            if (idx < UNITS * BATCH && u < HID) {
                float pre[4];
#pragma unroll
                for (int g = 0; g < 4; ++g) {
                    float s = bias[it][g] + xv[it][g];
                    for (int q = 0; q < NWARPS; ++q)
                        s += red[q * (WARP_BYTES / 4) + n * RPITCH + g * UNITS + ul];
                    pre[g] = s;
                }
                float ig = sigmoid(pre[0]), fg = sigmoid(pre[1]), gg = tanhf(pre[2]),
                      og = sigmoid(pre[3]);
                float cn = fg * c[it] + ig * gg;
                float h = og * tanhf(cn);
                c[it] = cn;
                size_t row = (size_t)t * BATCH + n;
                u16 hb = from_f(h);
                y[row * HID + u] = hb;
                hx[(t & 1) * BATCH * KPAD + n * KPAD + u] = hb;
                if (save) {
                    float* a = xg + row * 4 * HID + u;
                    a[0] = ig;
                    a[HID] = fg;
                    a[2 * HID] = gg;
                    a[3 * HID] = og;
                    save[row * HID + u] = cn;
                }
                if (t == seq - 1) {
                    h_n[n * HID + u] = hb;
                    c_n[n * HID + u] = from_f(cn);
                }
            }
        }
        if (t + 1 < seq) grid_barrier(counter, (u32)(t + 1) * gridDim.x);
    }
}
