// One LSTM layer's recurrence as one persistent kernel: every block owns UNITS hidden units
// (all four gate rows of each) and keeps their rows of W_hh in shared memory for the whole
// sequence, so the weights are read from memory once per call instead of once per step.
// Each step: every group of warps copies its K slice of h_{t-1} from the exchange buffer (L2)
// into its shared-memory stage with 16-byte asynchronous copies, multiplies its rows by it on
// tensor cores, the block sums the groups' partial products and does the gate math for its
// units, writes h_t to y[t] and to the exchange buffer, then one grid-wide barrier.
//
// Specialised at compile time (NVRTC -D): HID, BATCH, UNITS (a multiple of 4), NWARPS,
// ELEM_BF16 (1: bf16, 0: f16), and CL, the blocks of a thread-block cluster (1: none). With
// CL > 1 the CL blocks of a cluster split K (the columns of h) instead of each reading all of
// h: block r of cluster q keeps the gate rows of the cluster's CL * UNITS units for its CL-th
// of the columns, multiplies them by that CL-th of h_{t-1} (a CL-th of the L2 traffic), and
// the cluster sums the partial products through distributed shared memory; block r still does
// the gate math of units blockIdx.x * UNITS.. . Warps: MG groups along the rows times KG along
// K (with CL = 1, one row group: each warp has all rows and its own K slice, and the warps of
// a K group are one warp).
//
// The input projection W_ih x_t is computed before the kernel (one GEMM over all steps) and
// arrives in `xg`, f32 [T, B, 4H], without biases. `hx` is the exchange buffer,
// [2][BATCH][KPAD], zeroed before the launch (its columns past HID are never written and must
// stay zero). With `save` non-null (training), the gate activations overwrite `xg` in place and
// the cell states go to `save`, f32 [T, B, H], for the backward pass. With `yp` non-null
// (training, when H needs padding), h_0 and every y_t also go to `yp` in rows of LDP, the
// GEMMs' padded width (`padded.rs`), for the recurrent weight's gradient in the backward.

#define CU (CL * UNITS)
#define ROWS (4 * CU)
#define MT (ROWS / 16)
#define NT ((BATCH + 7) / 8)
#define NPAD (NT * 8)
#define KSTEPS ((HID + 15) / 16)
#define KPAD (KSTEPS * 16)
// The block's K steps, and its first column.
#define KSB ((KSTEPS + CL - 1) / CL)
// Warp groups: MG along the rows (MPW tiles each), KG along K (KPG steps each).
#define MG ((CL == 1) ? 1 : ((MT >= 4) ? 4 : ((MT >= 2) ? 2 : 1)))
// WREG (1 by default when a warp's tiles take at most 160 registers per thread): each warp
// keeps its tiles of W_hh in registers for the whole sequence instead of reading them from
// shared memory at every step (PTB large's forward: 197 against 206 us a layer; its 144
// registers of tiles leave the kernel at 224 registers, no spills).
#ifndef WREG
#define WREG (KPG * MPW * 4 <= 160)
#endif
#define KG (NWARPS / MG)
#define MPW ((MT + MG - 1) / MG)
#define KPG ((KSB + KG - 1) / KG)
// Row pitch of the weight tile, in elements: an odd number of 16-byte chunks, so that the
// eight row addresses of an ldmatrix fall in different banks.
#define PITCH (KSB * 16 + 8)
#define THREADS (NWARPS * 32)
#define ITEMS ((UNITS * BATCH + THREADS - 1) / THREADS)
#define RPITCH (ROWS + 4)
// A K group's stage of h: NPAD rows of its KW columns, the pitch an odd number of 16-byte
// chunks (conflict-free ldmatrix). After the products the group's partial sums, NPAD rows of
// RPITCH floats, reuse the same bytes.
#define KW (KPG * 16)
// The parts of a K group's columns that are copied and multiplied in turn, PKS K steps each:
// the products of the parts that have landed overlap the copies of the rest (in PTB large's
// forward, 6 parts of 2 K steps took 210 us a layer against 248 us copying all first; -DPARTS
// overrides).
#ifndef PARTS
#define PARTS (KPG < 6 ? KPG : 6)
#endif
#define PKS ((KPG + PARTS - 1) / PARTS)
#define HSP (KW + 8)
#define STAGE_BYTES (NPAD * HSP * 2)
#define RED_BYTES (NPAD * RPITCH * 4)
#define GROUP_BYTES ((((STAGE_BYTES > RED_BYTES) ? STAGE_BYTES : RED_BYTES) + 15) / 16 * 16)
// The cluster's partial products of this block's units' gate rows, [CL][BATCH][4 * UNITS]
// f32, slot q written by block q of the cluster (CL > 1 only; RPITCH sizes the region).
#define PART_BYTES ((CL > 1) ? (BATCH * RPITCH * 4 + 15) / 16 * 16 : 0)
// The exchange buffer's slot of step t: two taken in turn.
#define XSLOT(t) ((size_t)((t) & 1) * BATCH * KPAD)
// `yp`'s row pitch: HID in whole 16-byte rows, as padded.rs pads the GEMMs' operands.
#define LDP ((HID + 7) / 8 * 8)

// The warps of K group `kg` wait for each other (with one warp per group: the warp).
__device__ __forceinline__ void group_sync(int kg) {
#if MG == 1
    __syncwarp();
#else
    asm volatile("bar.sync %0, %1;" ::"r"(1 + kg), "r"(MG * 32) : "memory");
#endif
}

// Item `it`'s outputs that no other block reads during the launch: y (and its padded copy, and
// with dropout after the layer, y through the mask in `dropped`), and in training the gate
// activations (over the step's input projection in `xg`) and the cell state.
__device__ __forceinline__ void store_outputs(int it, int t, const u16* hb, const float (*gate)[4],
                                              const float* c, u16* y, u16* yp, float* xg,
                                              float* save, int u0, u16* dropped,
                                              const Dropout& drop) {
    int idx = threadIdx.x + it * THREADS, u = u0 + idx % UNITS, n = idx / UNITS;
    size_t row = (size_t)t * BATCH + n;
    y[row * HID + u] = hb[it];
    if (yp) yp[(row + BATCH) * LDP + u] = hb[it];
    if (dropped) dropped[row * HID + u] = dropout_apply(drop, row * HID + u, hb[it]);
    if (save) {
        float* a = xg + row * 4 * HID + u;
#pragma unroll
        for (int g = 0; g < 4; ++g) a[g * HID] = gate[it][g];
        save[row * HID + u] = c[it];
    }
}

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
                    u16* yp,                        // [T + 1, B, LDP], zeroed, or null
                    u16* dropped,                   // [T, B, H], or null (no dropout after)
                    const unsigned long long* drop_offset,  // dropout.cu's Dropout, or null
                    unsigned long long drop_seed, unsigned long long drop_p_layer,
                    u32* counter, int seq) {
    extern __shared__ __align__(16) unsigned char smem[];
    u16* w = (u16*)smem;                               // [ROWS][PITCH]
    const Dropout drop = dropout_of(dropped ? drop_offset : nullptr, drop_seed, drop_p_layer);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int mg = warp % MG, kg = warp / MG;
    unsigned char* group_region = smem + ROWS * PITCH * 2 + PART_BYTES + kg * GROUP_BYTES;
    u16* hs = (u16*)group_region;                      // [NPAD][HSP], this group's stage
    float* red = (float*)(smem + ROWS * PITCH * 2 + PART_BYTES);  // group q's at q * GROUP_BYTES
#if CL > 1
    float* part = (float*)(smem + ROWS * PITCH * 2);
#endif
    const u32 rank = cluster_rank();
    const int u0 = blockIdx.x * UNITS, cu0 = (blockIdx.x / CL) * CU;
    const int kb0 = rank * KSB * 16;  // the block's first column of h

    // Row r of the tile is gate r / CU of unit cu0 + r % CU, columns kb0..; rows past H and
    // columns past HID are zero. Pairs of elements (rows start 4-byte aligned: HID and kb0 are
    // even), consecutive threads along a row, FILL loads in flight per thread (one at a time,
    // the fill took tens of microseconds of every launch).
    {
        constexpr int PAIRS = PITCH / 2, TOTAL = ROWS * PAIRS;
        for (int i0 = tid; i0 < TOTAL; i0 += THREADS * FILL) {
            u32 v[FILL];
#pragma unroll
            for (int j = 0; j < FILL; ++j) {
                int i = i0 + j * THREADS, r = i / PAIRS, k = kb0 + 2 * (i % PAIRS);
                int g = min(r / CU, 3), u = cu0 + r % CU;
                // Every load goes (clamped into W_hh), so that none waits behind a branch.
                size_t at = (size_t)(g * HID + min(u, HID - 1)) * HID + min(k, HID - 2);
                u32 x = *(const u32*)(w_hh + at);
                v[j] = (i < TOTAL && u < HID && k < HID) ? x : 0u;
            }
#pragma unroll
            for (int j = 0; j < FILL; ++j) {
                int i = i0 + j * THREADS;
                if (i < TOTAL) ((u32*)(w + (i / PAIRS) * PITCH))[i % PAIRS] = v[j];
            }
        }
    }

#if WREG
    // The warp's tiles of the weights, in registers for the whole sequence.
    u32 wa[KPG][MPW][4];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < KPG; ++j)
#pragma unroll
        for (int i = 0; i < MPW; ++i) {
            int mt = mg * MPW + i;
            int row = min(mt, MT - 1) * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
            ldsm_x4(wa[j][i], w + row * PITCH + (kg * KW + j * 16) + (lane >> 4) * 8);
        }
#endif
    float c[ITEMS], bias[ITEMS][4];
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
        int idx = tid + it * THREADS, u = u0 + idx % UNITS, n = idx / UNITS;
        bool live = idx < UNITS * BATCH && u < HID;
        c[it] = (live && c0) ? to_f(c0[n * HID + u]) : 0.f;
        if (live && yp && h0) yp[n * LDP + u] = h0[n * HID + u];
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
        PHASE(0);
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

        // The group's rows times h_{t-1}: K group kg takes KPG of the block's K steps, from
        // column kw0 of the block's (kb0 + kw0 of h); its MG warps copy them together, in
        // PARTS parts of PKS K steps, and multiply each part as soon as it has landed (the
        // copies wait on L2, which every block reads at once; the products of the parts that
        // have landed overlap the copies of the rest).
        const int kw0 = kg * KW, gl = mg * 32 + lane;
        // h_{t-1} in the exchange buffer, from the block's first column (read for t > 0 only).
        const u16* src = hx + XSLOT(t > 0 ? t - 1 : 0) + kb0;
        if (t > 0) {
#pragma unroll
            for (int p = 0; p < PARTS; ++p) {
                // The part's 16-byte pieces per row, and its first column.
                const int pieces = min(PKS, KPG - p * PKS) * 2, col = p * PKS * 16;
                for (int q = gl; q < BATCH * pieces; q += MG * 32) {
                    int n = q / pieces, j = col + (q % pieces) * 8;
                    if (kb0 + kw0 + j < KPAD) cp_async16(hs + n * HSP + j, src + n * KPAD + kw0 + j);
                }
                cp_async_commit();
            }
        } else {
            // h_0 (rows of HID, 4-byte aligned) or zeros; columns past HID are zero.
            for (int q = gl; q < BATCH * (KW / 2); q += MG * 32) {
                int n = q / (KW / 2), j = (q % (KW / 2)) * 2, k = kb0 + kw0 + j;
                u32 v = (h0 && k < HID) ? *(const u32*)(h0 + n * HID + k) : 0u;
                *(u32*)(hs + n * HSP + j) = v;
            }
        }
        float acc[MPW][NT][4];
#pragma unroll
        for (int i = 0; i < MPW; ++i)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                for (int q = 0; q < 4; ++q) acc[i][nt][q] = 0.f;
#pragma unroll
        for (int p = 0; p < PARTS; ++p) {
            // Part p has landed (for every warp of the group) once at most PARTS - 1 - p of
            // this thread's groups of copies are pending.
            if (t > 0) cp_async_wait_upto(PARTS - 1 - p);
            group_sync(kg);
            if (p == 0) PHASE(1);
#pragma unroll
            for (int j = p * PKS; j < min(KPG, (p + 1) * PKS); ++j) {
                int ks = rank * KSB + kg * KPG + j;  // K step of h
                if (kg * KPG + j < KSB && ks < KSTEPS) {
                    u32 b[NT][2];
#pragma unroll
                    for (int nt = 0; nt < NT; ++nt)
                        ldsm_x2(b[nt], hs + (nt * 8 + (lane & 7)) * HSP + j * 16 + ((lane >> 3) & 1) * 8);
#pragma unroll
                    for (int i = 0; i < MPW; ++i) {
                        int mt = mg * MPW + i;
                        if (mt < MT) {
#if WREG
#pragma unroll
                            for (int nt = 0; nt < NT; ++nt) mma(acc[i][nt], wa[j][i], b[nt]);
#else
                            u32 a[4];
                            int row = mt * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
                            ldsm_x4(a, w + row * PITCH + (kw0 + j * 16) + (lane >> 4) * 8);
#pragma unroll
                            for (int nt = 0; nt < NT; ++nt) mma(acc[i][nt], a, b[nt]);
#endif
                        }
                    }
                }
            }
        }
        PHASE(2);
        // The stage is read (by every warp of the group); the group's partial sums take its
        // place, each warp writing its rows.
        group_sync(kg);
        float* rw = (float*)group_region;
#pragma unroll
        for (int i = 0; i < MPW; ++i) {
            int mt = mg * MPW + i;
            if (mt < MT)
#pragma unroll
                for (int nt = 0; nt < NT; ++nt) {
                    int r = mt * 16 + (lane >> 2), n = nt * 8 + (lane & 3) * 2;
                    rw[n * RPITCH + r] = acc[i][nt][0];
                    rw[(n + 1) * RPITCH + r] = acc[i][nt][1];
                    rw[n * RPITCH + r + 8] = acc[i][nt][2];
                    rw[(n + 1) * RPITCH + r + 8] = acc[i][nt][3];
                }
        }
        __syncthreads();
        PHASE(3);
#if CL > 1
        // The block's partial products of the cluster's rows, stored into the shared memory of
        // the block that owns each row's unit, in this block's slot (remote stores need no
        // round trip, unlike remote loads).
        for (int i = tid; i < BATCH * ROWS; i += THREADS) {
            int n = i / ROWS, r = i % ROWS;
            float s = 0.f;
            for (int q = 0; q < KG; ++q) s += red[q * (GROUP_BYTES / 4) + n * RPITCH + r];
            int g = r / CU, cu = r % CU;
            st_cluster(part + (rank * BATCH + n) * 4 * UNITS + g * UNITS + cu % UNITS, cu / UNITS, s);
        }
        cluster_sync();
#endif

        // Gate math for the block's (unit, sample) pairs; the cell state stays in registers.
        float gate[ITEMS][4];
        u16 hb[ITEMS];
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            int idx = tid + it * THREADS, ul = idx % UNITS, u = u0 + ul, n = idx / UNITS;
            if (idx < UNITS * BATCH && u < HID) {
                float pre[4];
#pragma unroll
                for (int g = 0; g < 4; ++g) {
                    float s = bias[it][g] + xv[it][g];
#if CL > 1
                    for (int q = 0; q < CL; ++q)
                        s += part[(q * BATCH + n) * 4 * UNITS + g * UNITS + ul];
#else
                    for (int q = 0; q < KG; ++q)
                        s += red[q * (GROUP_BYTES / 4) + n * RPITCH + g * UNITS + ul];
#endif
                    pre[g] = s;
                }
                gate[it][0] = sigmoid(pre[0]);
                gate[it][1] = sigmoid(pre[1]);
                gate[it][2] = gate_tanh(pre[2]);
                gate[it][3] = sigmoid(pre[3]);
                c[it] = gate[it][1] * c[it] + gate[it][0] * gate[it][2];
                hb[it] = from_f(gate[it][3] * gate_tanh(c[it]));
                hx[XSLOT(t) + n * KPAD + u] = hb[it];
                if (t == seq - 1) {
                    h_n[n * HID + u] = hb[it];
                    c_n[n * HID + u] = from_f(c[it]);
                }
            }
        }
        PHASE(4);
        // The barrier's release waits only for the stores above (h_t, which other blocks read):
        // the block's arrival comes first, then its outputs (read after the launch), then the
        // wait (205.7 against 209.3 us a layer for PTB large). A block writes into its cluster's
        // `part`s again only after the next barrier, which every block reaches after reading
        // its own.
        if (t + 1 < seq) grid_arrive(counter);
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            int idx = tid + it * THREADS, u = u0 + idx % UNITS;
            if (idx < UNITS * BATCH && u < HID)
                store_outputs(it, t, hb, gate, c, y, yp, xg, save, u0, dropped, drop);
        }
        if (t + 1 < seq) grid_wait(counter, (u32)(t + 1) * gridDim.x);
    }
#if CL > 1
    // No block may leave while another of its cluster may still write into its `part`.
    cluster_sync();
#endif
}
