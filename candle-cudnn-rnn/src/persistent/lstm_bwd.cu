// One LSTM layer's backward through time as one persistent kernel, the mirror of
// lstm_fwd.cu. Block b owns UNITS hidden units (its own count: the saved activations are laid
// out by unit, not by the forward's blocks). Each step, from
// the last: the block's threads turn dh_t (the output's gradient plus the recurrent part)
// into the gradients of their units' four gate pre-activations, written to `dg` (for the
// weight and input GEMMs after the kernel) and to the exchange buffer; after the grid
// barrier, the block multiplies its units' columns of W_hh (transposed, kept in shared
// memory) by all of the step's gate gradients, streamed from L2 in chunks, which is its
// units' part of dh_{t-1}.
//
// Compile-time: HID, BATCH, UNITS (any count), NWARPS, ELEM_BF16, as the forward, NBUF (>= 2),
// the chunk buffers per warp (NBUF - 1 chunks in flight while one is multiplied), and CL, the
// blocks of a thread-block cluster (1: none). With CL > 1 the CL blocks of a cluster split the
// product's K (the gate columns) instead of each reading all of it: block r of cluster q keeps
// the columns of W_hh of the cluster's CL * UNITS units for its CL-th of the gate rows,
// multiplies them by that CL-th of the step's gate gradients (a CL-th of the L2 traffic), and
// the cluster sums the partial products through distributed shared memory; block r then owns
// units q * CL * UNITS + r * UNITS.. as without clusters (u0 = blockIdx.x * UNITS either way).
// Stage buffers: `(u16*)(warp_region + i * BUF_BYTES)`, i < NBUF (no pointer array: it would
// live in local memory). The weight tile and the stage buffers hold only the UNITS rows and
// BATCH rows that exist: the tensor-core tiles' rows past them read a real row (clamped) and
// their products are never used, which leaves shared memory for a deeper pipeline.
// `gates` (f32 [T, B, 4H], the activations i, f, g, o) and `cells` (f32 [T, B, H]) are what
// the training forward saved. `dgx` is the exchange buffer, [2][BATCH][GPAD], zeroed before
// the launch (columns past 4H stay zero). `db_ih` and
// `db_hh` (either may be null) receive the bias gradient of the block's units, every step's gate
// gradients summed over the batch in f32, written over what they hold or, with `db_add`
// non-zero, added to it.

#define G4 (4 * HID)
#define CU (CL * UNITS)
#define MTB ((CU + 15) / 16)
#define MROWS (MTB * 16)
#define NT ((BATCH + 7) / 8)
#define NPAD (NT * 8)
// Gate columns per chunk (-DCH, 32 or 64).
#ifndef CH
#define CH 32
#endif
// The 16-byte pieces of a chunk's BATCH rows, and how many of them each lane copies.
#define PIECES (BATCH * (CH / 8))
#define PER_LANE ((PIECES + 31) / 32)
#define NCHUNKS ((G4 + CH - 1) / CH)
#define GPAD (NCHUNKS * CH)
// A block's chunks of the gate columns, and their columns.
#define NCR ((NCHUNKS + CL - 1) / CL)
#define KR (NCR * CH)
// The weight tile's pitch: an odd number of 16-byte pieces (conflict-free ldmatrix).
#define APITCH (KR + 8)
// A chunk buffer's rows are CH wide, unpadded, their 16-byte pieces swizzled instead: piece q of
// row n sits at piece q ^ SWZ(n), so that the 8 rows an ldmatrix reads at one column hit 8
// different bank groups (rows of 128 bytes, CH = 64: each row its own XOR; rows of 64 bytes,
// CH = 32: pairs of rows share a 128-byte line, XOR by the pair). Without the padding a third
// buffer per warp fits PTB large's shared memory.
#define CPIECES (CH / 8)
#define SWZ(n) ((CH == 64 ? (n) : ((n) >> 1)) & (CPIECES - 1))
#define CHUNK_AT(n, q) ((n) * CH + (((q) ^ SWZ(n)) * 8))
#define CPW ((NCR + NWARPS - 1) / NWARPS)
// The cluster's partial dh of this block's units, [CL][BATCH][UNITS] f32, slot q written by
// block q of the cluster (CL > 1 only; PPITCH sizes the region).
#define PPITCH (CU + 4)
#define PART_BYTES ((CL > 1) ? (BATCH * PPITCH * 4 + 15) / 16 * 16 : 0)
#define THREADS (NWARPS * 32)
#define ITEMS ((UNITS * BATCH + THREADS - 1) / THREADS)
#define BUF_BYTES (BATCH * CH * 2)
#define RPB (MROWS + 4)
// A warp's partial sums, its accumulators' BATCH real rows (the tiles' rows past them are
// never stored: clusters of 8 fit in shared memory only so).
#define RED_BYTES (BATCH * RPB * 4)
#define WARP_BYTES ((((NBUF * BUF_BYTES > RED_BYTES) ? NBUF * BUF_BYTES : RED_BYTES) + 15) / 16 * 16)
// The exchange buffer's slot of step t: two taken in turn.
#define XSLOT(t) ((size_t)((t) & 1) * BATCH * GPAD)

extern "C" __global__ void __launch_bounds__(THREADS, 1)
lstm_persistent_bwd(const u16* __restrict__ w_hh,   // [4H, H]
                    const float* __restrict__ gates, // [T, B, 4H]
                    const float* __restrict__ cells, // [T, B, H]
                    const u16* __restrict__ c0,      // [B, H] or null (zeros)
                    const u16* __restrict__ dy,      // [T, B, H]
                    const u16* __restrict__ dh_n,    // [B, H]
                    const u16* __restrict__ dc_n,    // [B, H]
                    u16* dg,                         // [T, B, 4H]
                    u16* dgx,                        // [2, B, GPAD], zeroed
                    u16* dh0, u16* dc0,              // [B, H]
                    u16* db_ih, u16* db_hh,          // [4H] or null
                    unsigned long long db_add,
                    const unsigned long long* drop_offset,  // dropout.cu's Dropout, or null
                    unsigned long long drop_seed, unsigned long long drop_p_layer,
                    u32* counter, int seq) {
    extern __shared__ __align__(16) unsigned char smem[];
    // The dropout after this layer: `dy` is the gradient of its output through the mask (the
    // next layer's input gradient), which the loads below take through the mask again.
    const Dropout drop = dropout_of(drop_offset, drop_seed, drop_p_layer);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    // at[m][k] = W_hh[k0 + k][cu0 + m]: the cluster's units, the block's gate rows.
    u16* at = (u16*)smem;
#if CL > 1
    float* part = (float*)(smem + CU * APITCH * 2);
#endif
    unsigned char* warp_region = smem + CU * APITCH * 2 + PART_BYTES + warp * WARP_BYTES;
    const float* red = (const float*)(smem + CU * APITCH * 2 + PART_BYTES);
    const int u0 = blockIdx.x * UNITS;
    const u32 rank = cluster_rank();
    const int cu0 = (blockIdx.x / CL) * CU, k0 = rank * KR;

    // Consecutive threads along a row of W_hh, FILL loads in flight per thread (one at a time,
    // the fill took tens of microseconds of every launch).
    for (int i0 = tid; i0 < CU * KR; i0 += THREADS * FILL) {
        u16 v[FILL];
#pragma unroll
        for (int j = 0; j < FILL; ++j) {
            int i = i0 + j * THREADS, k = k0 + i / CU, u = cu0 + i % CU;
            // Every load goes (clamped into W_hh), so that none waits behind a branch.
            u16 x = w_hh[(size_t)min(k, G4 - 1) * HID + min(u, HID - 1)];
            v[j] = (i < CU * KR && u < HID && k < G4) ? x : (u16)0;
        }
#pragma unroll
        for (int j = 0; j < FILL; ++j) {
            int i = i0 + j * THREADS;
            if (i < CU * KR) at[(i % CU) * APITCH + i / CU] = v[j];
        }
    }

    float dhr[ITEMS], dc[ITEMS], dbias[ITEMS][4];
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
        int idx = tid + it * THREADS, u = u0 + idx % UNITS, n = idx / UNITS;
        bool live = idx < UNITS * BATCH && u < HID;
        dhr[it] = live ? to_f(dh_n[n * HID + u]) : 0.f;
        dc[it] = live ? to_f(dc_n[n * HID + u]) : 0.f;
#pragma unroll
        for (int g = 0; g < 4; ++g) dbias[it][g] = 0.f;
    }
    // A step's saved activations, cell states and output gradient, loaded a step ahead (while
    // the previous step's products run) so that their latency leaves the recurrence.
    float ga[ITEMS][4], ct[ITEMS], cp[ITEMS], dyv[ITEMS];
    auto load_step = [&](int t) {
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            int idx = tid + it * THREADS, u = u0 + idx % UNITS, n = idx / UNITS;
            if (idx < UNITS * BATCH && u < HID) {
                size_t row = (size_t)t * BATCH + n;
                const float* a = gates + row * G4 + u;
#pragma unroll
                for (int g = 0; g < 4; ++g) ga[it][g] = a[g * HID];
                ct[it] = cells[row * HID + u];
                cp[it] = t > 0 ? cells[(row - BATCH) * HID + u] : (c0 ? to_f(c0[n * HID + u]) : 0.f);
                u16 d = dy[row * HID + u];
                dyv[it] = to_f(drop.offset ? dropout_apply(drop, row * HID + u, d) : d);
            }
        }
    };
    load_step(seq - 1);
    // Where each of the lane's pieces of a chunk lands in a stage buffer and comes from in a
    // row of the exchange buffer, worked out once: the chunk loop's copies then cost no
    // division (its address arithmetic was a visible share of the issued instructions).
    int piece_smem[PER_LANE], piece_gmem[PER_LANE];
#pragma unroll
    for (int p = 0; p < PER_LANE; ++p) {
        int q = lane + 32 * p, n = q / (CH / 8), j = (q % (CH / 8)) * 8;
        bool live = q < PIECES;
        piece_smem[p] = live ? CHUNK_AT(n, j / 8) : -1;
        piece_gmem[p] = n * GPAD + j;
    }
    __syncthreads();

    for (int t = seq - 1, s = 0; t >= 0; --t, ++s) {
        PHASE(0);
        u16* xch = dgx + XSLOT(t);
        // The gradients of the block's gate pre-activations at step t.
        u16 dgb[ITEMS][4];
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            int idx = tid + it * THREADS, u = u0 + idx % UNITS, n = idx / UNITS;
            if (idx < UNITS * BATCH && u < HID) {
                float gi = ga[it][0], gf = ga[it][1], gg = ga[it][2], go = ga[it][3];
                float dh = dyv[it] + dhr[it];
                float tc = gate_tanh(ct[it]);
                float dct = dc[it] + dh * go * (1.f - tc * tc);
                float d[4] = {dct * gg * gi * (1.f - gi), dct * cp[it] * gf * (1.f - gf),
                              dct * gi * (1.f - gg * gg), dh * tc * go * (1.f - go)};
                dc[it] = dct * gf;
#pragma unroll
                for (int g = 0; g < 4; ++g) {
                    dbias[it][g] += d[g];
                    dgb[it][g] = from_f(d[g]);
                    xch[n * GPAD + g * HID + u] = dgb[it][g];
                }
            }
        }
        PHASE(1);
        // `dg` is read only after the launch: its stores follow the block's arrival at the
        // barrier, so that the release waits only for the exchange buffer's (1% faster).
        grid_arrive(counter);
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            int idx = tid + it * THREADS, u = u0 + idx % UNITS, n = idx / UNITS;
            if (idx < UNITS * BATCH && u < HID)
#pragma unroll
                for (int g = 0; g < 4; ++g) dg[((size_t)t * BATCH + n) * G4 + g * HID + u] = dgb[it][g];
        }
        grid_wait(counter, (u32)(s + 1) * gridDim.x);
        PHASE(2);
        if (t > 0) load_step(t - 1);

        // dh_{t-1} for the block's units: its columns of W_hh times all gate gradients, the
        // warp's chunks of K streamed through its NBUF stage buffers.
        float acc[MTB][NT][4];
#pragma unroll
        for (int mt = 0; mt < MTB; ++mt)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                for (int q = 0; q < 4; ++q) acc[mt][nt][q] = 0.f;
        // The warp's chunks, counted from the block's first; past the last real one, none.
        const int c_begin = warp * CPW;
        const int c_real = min(NCR, NCHUNKS - (int)rank * NCR);
        const int c_count = max(0, min(CPW, c_real - c_begin));
        // Chunk i goes to buffer i % NBUF; every call commits a group (empty past the warp's
        // chunks) so that "chunk i has landed" is always "at most NBUF - 2 groups pending".
        auto issue = [&](int i) {
            if (i < c_count) {
                u16* b = (u16*)(warp_region + (i % NBUF) * BUF_BYTES);
                const u16* src = xch + k0 + (c_begin + i) * CH;
#pragma unroll
                for (int p = 0; p < PER_LANE; ++p)
                    if (piece_smem[p] >= 0) cp_async16(b + piece_smem[p], src + piece_gmem[p]);
            }
            cp_async_commit();
        };
#pragma unroll
        for (int i = 0; i < NBUF - 1; ++i) issue(i);
        for (int i = 0; i < c_count; ++i) {
            cp_async_wait_pending(NBUF - 2);
            // Chunk i is visible to the warp, and every lane is done with chunk i - 1, whose
            // buffer the next issue refills.
            __syncwarp();
            issue(i + NBUF - 1);
            const u16* b = (const u16*)(warp_region + (i % NBUF) * BUF_BYTES);
            const int col = (c_begin + i) * CH;
#pragma unroll
            for (int kk = 0; kk < CH / 16; ++kk) {
                u32 bf[NT][2];
#pragma unroll
                for (int nt = 0; nt < NT; ++nt) {
                    int n = min(nt * 8 + (lane & 7), BATCH - 1);
                    ldsm_x2(bf[nt], b + CHUNK_AT(n, kk * 2 + ((lane >> 3) & 1)));
                }
#pragma unroll
                for (int mt = 0; mt < MTB; ++mt) {
                    u32 a[4];
                    int m = min(mt * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, CU - 1);
                    ldsm_x4(a, at + m * APITCH + col + kk * 16 + (lane >> 4) * 8);
#pragma unroll
                    for (int nt = 0; nt < NT; ++nt) mma(acc[mt][nt], a, bf[nt]);
                }
            }
        }
        PHASE(3);
        // The partial sums below reuse the buffers: nothing may still be landing in them.
        cp_async_wait_all();
        __syncwarp();
        float* rw = (float*)warp_region;
#pragma unroll
        for (int mt = 0; mt < MTB; ++mt)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) {
                int m = mt * 16 + (lane >> 2), n = nt * 8 + (lane & 3) * 2;
                if (n < BATCH) {
                    rw[n * RPB + m] = acc[mt][nt][0];
                    rw[n * RPB + m + 8] = acc[mt][nt][2];
                }
                if (n + 1 < BATCH) {
                    rw[(n + 1) * RPB + m] = acc[mt][nt][1];
                    rw[(n + 1) * RPB + m + 8] = acc[mt][nt][3];
                }
            }
        __syncthreads();
        PHASE(4);
#if CL > 1
        // The block's partial dh of the cluster's units goes straight into the shared memory of
        // the block that owns each unit, in this block's slot (remote stores need no round
        // trip, unlike remote loads: 241 against 246 us a layer); after the cluster's barrier
        // each block sums its slots.
        for (int i = tid; i < BATCH * CU; i += THREADS) {
            int n = i / CU, m = i % CU;
            float sum = 0.f;
            for (int q = 0; q < NWARPS; ++q) sum += red[q * (WARP_BYTES / 4) + n * RPB + m];
            st_cluster(part + (rank * BATCH + n) * UNITS + m % UNITS, m / UNITS, sum);
        }
        cluster_sync();
        PHASE(5);
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            int idx = tid + it * THREADS, ul = idx % UNITS, n = idx / UNITS;
            float sum = 0.f;
            if (idx < UNITS * BATCH)
                for (int q = 0; q < CL; ++q)
                    sum += part[(q * BATCH + n) * UNITS + ul];
            dhr[it] = sum;
        }
        // A block writes into its cluster's `part`s again only after the next grid barrier,
        // which every block reaches after these reads.
#else
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            int idx = tid + it * THREADS, ul = idx % UNITS, n = idx / UNITS;
            float sum = 0.f;
            if (idx < UNITS * BATCH)
                for (int q = 0; q < NWARPS; ++q) sum += red[q * (WARP_BYTES / 4) + n * RPB + ul];
            dhr[it] = sum;
        }
#endif
        // The stage buffers (which hold the sums just read) are refilled after the next
        // step's barrier, which begins with __syncthreads.
    }
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
        int idx = tid + it * THREADS, u = u0 + idx % UNITS, n = idx / UNITS;
        if (idx < UNITS * BATCH && u < HID) {
            dh0[n * HID + u] = from_f(dhr[it]);
            dc0[n * HID + u] = from_f(dc[it]);
        }
    }
    // The bias gradient of the block's units (no other block has their gate gradients):
    // each item's step sums in a slot of its own, then each (gate, unit) adds its samples in
    // order, so that the result does not depend on timing. The slots take the warps' regions,
    // whose last sums every thread has read after the barrier (with clusters, `part` before it
    // stays the cluster's).
    if (db_ih || db_hh) {
        static_assert(BATCH * 4 * UNITS * 4 <= NWARPS * WARP_BYTES, "bias slots exceed the warp regions");
        float* slots = (float*)(smem + CU * APITCH * 2 + PART_BYTES);  // [BATCH][4][UNITS]
        __syncthreads();
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            int idx = tid + it * THREADS, ul = idx % UNITS, n = idx / UNITS;
            if (idx < UNITS * BATCH)
#pragma unroll
                for (int g = 0; g < 4; ++g) slots[(n * 4 + g) * UNITS + ul] = dbias[it][g];
        }
        __syncthreads();
        for (int i = tid; i < 4 * UNITS; i += THREADS) {
            int g = i / UNITS, ul = i % UNITS, u = u0 + ul;
            if (u < HID) {
                float sum = 0.f;
                for (int n = 0; n < BATCH; ++n) sum += slots[(n * 4 + g) * UNITS + ul];
                size_t at = (size_t)g * HID + u;
                if (db_ih) db_ih[at] = from_f(db_add ? to_f(db_ih[at]) + sum : sum);
                if (db_hh) db_hh[at] = from_f(db_add ? to_f(db_hh[at]) + sum : sum);
            }
        }
    }
#if CL > 1
    // No block may leave while another of its cluster may still write into its `part`.
    cluster_sync();
#endif
}
