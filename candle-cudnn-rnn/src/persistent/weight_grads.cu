// A small layer's two weight gradients in one launch, after its backward recurrence:
//   dW_ih[g][i] (+)= sum over rows r of dg[r][g]  * x[r][i]
//   dW_hh[g][j] (+)= sum over rows r of dgh[r][g] * h_prev[r][j]
// over all T * B rows r (step t's sample n at r = t * B + n), h_prev[r] being h_0's row n for
// the first step (zeros without h_0) and y[r - B] after it. At hidden 128 and below cuBLAS takes
// each of these products as a split-K GEMM and a second kernel that sums the splits, two launches
// a gradient that together outlast the products' work (results/2026-12-02-h200-gap-profile/).
// Here each cluster of WG_SPLIT blocks makes one WG_TILE x WG_TILE tile of one gradient: its
// blocks split the rows, each multiplies its share on tensor cores (mma.sync m16n8k16, both
// operands read transposed from shared memory by ldmatrix.trans), and the cluster sums its
// blocks' partial tiles through distributed shared memory, block q summing and storing rows
// q * WG_TILE / WG_SPLIT.. of the tile, in the blocks' order (the same bits from run to run).
//
// Grid: (tiles of dW_ih + tiles of dW_hh) * WG_SPLIT blocks of WG_THREADS in clusters of
// WG_SPLIT, WG_SMEM bytes of dynamic shared memory. Every row of dg, dgh, x, y and h_0 is
// whole and 16-byte aligned (gh, in_size and hidden multiples of 8): the host checks.
// Needs sm_90 (clusters); the prelude half.cuh gives the element types.

#define WG_TILE 128
#define WG_THREADS 256
#ifndef WG_SPLIT
#define WG_SPLIT 8
#endif
// Rows of both operands a stage holds, and the stages in flight.
#define WG_KC 32
#define WG_STAGES 6
// A stage row's elements: 272 bytes, so that the 8 rows an ldmatrix reads hit 8 bank groups.
#define WG_PITCH (WG_TILE + 8)
#define WG_STAGE_ELEMS (2 * WG_KC * WG_PITCH)
// The partial tile's row, f32 (16-byte rows for the cluster's vector loads); the tile takes the
// stages' bytes once the products are made.
#define WG_PART_PITCH (WG_TILE + 4)
#define WG_STAGE_BYTES (WG_STAGES * WG_STAGE_ELEMS * 2)
#define WG_PART_BYTES (WG_TILE * WG_PART_PITCH * 4)
#define WG_SMEM (WG_STAGE_BYTES > WG_PART_BYTES ? WG_STAGE_BYTES : WG_PART_BYTES)
#define WG_ROWS_A_BLOCK (WG_TILE / WG_SPLIT)

__device__ __forceinline__ u32 wg_smem(const void* p) {
    return (u32)__cvta_generic_to_shared(p);
}

// 16 bytes from global memory into shared memory, or 16 zero bytes where `src` is null.
__device__ __forceinline__ void wg_copy16(u16* dst, const u16* src, const u16* valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(wg_smem(dst)),
                 "l"(src ? src : valid), "r"(src ? 16 : 0)
                 : "memory");
}

__device__ __forceinline__ void wg_ldsm_x4_trans(u32* r, const u16* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(wg_smem(p)));
}

template <typename T>
__device__ __forceinline__ void wg_mma(float* d, const u32* a, const u32* b);
template <>
__device__ __forceinline__ void wg_mma<bf16>(float* d, const u32* a, const u32* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <>
__device__ __forceinline__ void wg_mma<f16>(float* d, const u32* a, const u32* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Every block of the cluster has arrived (its shared memory written before, visible after).
__device__ __forceinline__ void wg_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

__device__ __forceinline__ u32 wg_rank() {
    u32 r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

// Four floats of block `rank`'s shared memory at this block's address `p`.
__device__ __forceinline__ float4 wg_load_peer(const float* p, u32 rank) {
    u32 remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(wg_smem(p)), "r"(rank));
    float4 v;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(remote));
    return v;
}

template <typename T>
__device__ void weight_grads(const u16* __restrict__ dg, const u16* __restrict__ dgh,
                             const u16* __restrict__ x, const u16* __restrict__ y,
                             const u16* __restrict__ h0, T* __restrict__ dw_ih, T* __restrict__ dw_hh,
                             int rows, int batch, int gh, int in_size, int hidden, int add) {
    extern __shared__ __align__(16) unsigned char wg_shared[];
    u16* stages = (u16*)wg_shared;
    float* part = (float*)wg_shared;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int q = (int)wg_rank();
    // This cluster's tile: dW_ih's tiles first, then dW_hh's, each by rows of gh then columns.
    const int mtiles = (gh + WG_TILE - 1) / WG_TILE;
    const int ih_tiles = mtiles * ((in_size + WG_TILE - 1) / WG_TILE);
    int tile = blockIdx.x / WG_SPLIT;
    const bool recurrent = tile >= ih_tiles;
    if (recurrent) tile -= ih_tiles;
    const int n_cols = recurrent ? hidden : in_size;
    const int m0 = (tile % mtiles) * WG_TILE, n0 = (tile / mtiles) * WG_TILE;
    const u16* a = recurrent ? dgh : dg;
    T* out = recurrent ? dw_hh : dw_ih;

    // Row r's columns c.. (8 of them) of the second operand, or null for zeros.
    auto b_row = [&](int r, int c) -> const u16* {
        if (!recurrent) return x + (size_t)r * in_size + c;
        if (r >= batch) return y + (size_t)(r - batch) * hidden + c;
        return h0 ? h0 + (size_t)r * hidden + c : nullptr;
    };
    // Chunk `chunk` (rows chunk * WG_KC..) of both operands into stage `s`: the tile's WG_TILE
    // columns of each, rows [k][m] and [k][n].
    auto fetch = [&](int s, int chunk) {
        u16* st = stages + s * WG_STAGE_ELEMS;
        for (int i = tid; i < 2 * WG_KC * (WG_TILE / 8); i += WG_THREADS) {
            const int second = i / (WG_KC * (WG_TILE / 8)), j = i % (WG_KC * (WG_TILE / 8));
            const int k = j / (WG_TILE / 8), c = (j % (WG_TILE / 8)) * 8, r = chunk * WG_KC + k;
            const u16* src = nullptr;
            if (r < rows) {
                if (!second && m0 + c < gh) src = a + (size_t)r * gh + m0 + c;
                if (second && n0 + c < n_cols) src = b_row(r, n0 + c);
            }
            wg_copy16(st + second * WG_KC * WG_PITCH + k * WG_PITCH + c, src, a);
        }
    };

    // Warp (wm, wn) makes rows wm * 64.. and columns wn * 32.. of the tile: 4 x 4 tiles of 16 x 8.
    const int wm = warp >> 2, wn = warp & 3;
    float acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

    // This block's chunks: q, q + WG_SPLIT, ..
    const int chunks = (rows + WG_KC - 1) / WG_KC;
    const int mine = q < chunks ? (chunks - q + WG_SPLIT - 1) / WG_SPLIT : 0;
#pragma unroll
    for (int s = 0; s < WG_STAGES - 1; ++s) {
        if (s < mine) fetch(s, q + s * WG_SPLIT);
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    for (int i = 0; i < mine; ++i) {
        asm volatile("cp.async.wait_group %0;" ::"n"(WG_STAGES - 2) : "memory");
        __syncthreads();
        // Into the stage that the last iteration multiplied, which every warp has left.
        const int next = i + WG_STAGES - 1;
        if (next < mine) fetch(next % WG_STAGES, q + next * WG_SPLIT);
        asm volatile("cp.async.commit_group;" ::: "memory");
        const u16* sa = stages + (i % WG_STAGES) * WG_STAGE_ELEMS;
        const u16* sb = sa + WG_KC * WG_PITCH;
#pragma unroll
        for (int ks = 0; ks < WG_KC; ks += 16) {
            u32 fa[4][4], fb[4][2];
#pragma unroll
            for (int mt = 0; mt < 4; ++mt) {
                // Lanes 0-7: rows m 0-7 at k 0-7; 8-15: m 8-15; 16-23: k 8-15; 24-31 both.
                const int k = ks + (lane & 7) + ((lane >> 4) << 3);
                const int m = wm * 64 + mt * 16 + ((lane >> 3) & 1) * 8;
                wg_ldsm_x4_trans(fa[mt], sa + k * WG_PITCH + m);
            }
#pragma unroll
            for (int np = 0; np < 2; ++np) {
                // Lanes 0-7: k 0-7 of columns 0-7; 8-15: k 8-15; 16-31: columns 8-15 alike.
                const int k = ks + (lane & 7) + ((lane >> 3) & 1) * 8;
                const int n = wn * 32 + np * 16 + (lane >> 4) * 8;
                u32 r[4];
                wg_ldsm_x4_trans(r, sb + k * WG_PITCH + n);
                fb[2 * np][0] = r[0];
                fb[2 * np][1] = r[1];
                fb[2 * np + 1][0] = r[2];
                fb[2 * np + 1][1] = r[3];
            }
#pragma unroll
            for (int mt = 0; mt < 4; ++mt)
#pragma unroll
                for (int nt = 0; nt < 4; ++nt) wg_mma<T>(acc[mt][nt], fa[mt], fb[nt]);
        }
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    // Every warp is done with the stages, which the partial tile takes.
    __syncthreads();

    // The block's partial tile, then the cluster's sum of its rows.
#pragma unroll
    for (int mt = 0; mt < 4; ++mt)
#pragma unroll
        for (int nt = 0; nt < 4; ++nt) {
            const int r = wm * 64 + mt * 16 + (lane >> 2), c = wn * 32 + nt * 8 + (lane & 3) * 2;
            part[r * WG_PART_PITCH + c] = acc[mt][nt][0];
            part[r * WG_PART_PITCH + c + 1] = acc[mt][nt][1];
            part[(r + 8) * WG_PART_PITCH + c] = acc[mt][nt][2];
            part[(r + 8) * WG_PART_PITCH + c + 1] = acc[mt][nt][3];
        }
    wg_cluster_sync();
    for (int i = tid; i < WG_ROWS_A_BLOCK * (WG_TILE / 4); i += WG_THREADS) {
        const int r = q * WG_ROWS_A_BLOCK + i / (WG_TILE / 4), c = (i % (WG_TILE / 4)) * 4;
        // Every block's loads in flight at once, then their sum in the blocks' order.
        float4 v[WG_SPLIT];
#pragma unroll
        for (int p = 0; p < WG_SPLIT; ++p) v[p] = wg_load_peer(part + r * WG_PART_PITCH + c, (u32)p);
        float s[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int p = 0; p < WG_SPLIT; ++p) {
            s[0] += v[p].x;
            s[1] += v[p].y;
            s[2] += v[p].z;
            s[3] += v[p].w;
        }
        const int m = m0 + r;
        if (m < gh)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int n = n0 + c + e;
                if (n < n_cols) {
                    T* o = out + (size_t)m * n_cols + n;
                    store(o, add ? load(*o) + s[e] : s[e]);
                }
            }
    }
    // No block leaves while another still reads its partial tile.
    wg_cluster_sync();
}

extern "C" __global__ void __launch_bounds__(WG_THREADS)
    rnn_weight_grads_bf16(const u16* dg, const u16* dgh, const u16* x, const u16* y, const u16* h0,
                          bf16* dw_ih, bf16* dw_hh, int rows, int batch, int gh, int in_size,
                          int hidden, int add) {
    weight_grads<bf16>(dg, dgh, x, y, h0, dw_ih, dw_hh, rows, batch, gh, in_size, hidden, add);
}

extern "C" __global__ void __launch_bounds__(WG_THREADS)
    rnn_weight_grads_f16(const u16* dg, const u16* dgh, const u16* x, const u16* y, const u16* h0,
                         f16* dw_ih, f16* dw_hh, int rows, int batch, int gh, int in_size,
                         int hidden, int add) {
    weight_grads<f16>(dg, dgh, x, y, h0, dw_ih, dw_hh, rows, batch, gh, in_size, hidden, add);
}
