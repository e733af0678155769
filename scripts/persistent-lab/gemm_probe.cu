// The persistent LSTM's GEMMs for PTB large (bf16, f32 accumulation) timed on their own: as
// `gemm.rs` calls them (cublasGemmEx) with padded and unpadded row pitches, a weight gradient
// written straight into 1500-wide rows instead of through padded ones, the row copy that moves
// it there now, and every algorithm cuBLASLt's heuristic offers for each product (is a faster
// one there than the default?). Medians of 30 launches timed with events, after 5. Other
// shapes by argument (`main`).
//
// Build (needs cuBLAS's headers and libraries, e.g. from the nvidia-cublas wheel):
//   nvcc -O2 -arch=sm_90a -I$CUBLAS/include gemm_probe.cu -L$CUBLAS/lib -l:libcublas.so.13 -l:libcublasLt.so.13 -o gemm_probe
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                    \
    do {                                                                            \
        auto err_ = (x);                                                            \
        if ((int)err_ != 0) {                                                        \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, (int)err_); \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

__global__ void fill(__nv_bfloat16* p, size_t n, unsigned seed, float scale) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 13;
        h *= 0x5bd1e995u;
        h ^= h >> 15;
        p[i] = __float2bfloat16(scale * ((h & 0xffff) / 32768.f - 1.f));
    }
}

// A row-major operand: `ld` elements per stored row, `t` the transpose of what is stored.
struct Mat {
    void* p;
    int ld;
    bool t;
};

static cublasHandle_t blas;
static cublasLtHandle_t lt;
static void* workspace;
static const size_t WORKSPACE = 32 << 20;

// c = a . b row-major ([m, k] x [k, n], ldc per row of c), as gemm.rs: cuBLAS computes
// c^T = b^T . a^T.
static void gemm_ex(int m, int n, int k, Mat a, Mat b, void* c, int ldc, cudaDataType ct, float beta) {
    float alpha = 1.f;
    CHECK(cublasGemmEx(blas, b.t ? CUBLAS_OP_T : CUBLAS_OP_N, a.t ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                       &alpha, b.p, CUDA_R_16BF, b.ld, a.p, CUDA_R_16BF, a.ld, &beta, c, ct, ldc,
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

template <class F>
static float median_us(F f) {
    cudaEvent_t s, e;
    CHECK(cudaEventCreate(&s));
    CHECK(cudaEventCreate(&e));
    for (int i = 0; i < 5; ++i) f();
    std::vector<float> t;
    for (int i = 0; i < 30; ++i) {
        CHECK(cudaEventRecord(s));
        f();
        CHECK(cudaEventRecord(e));
        CHECK(cudaEventSynchronize(e));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, s, e));
        t.push_back(ms * 1000.f);
    }
    CHECK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// Every algorithm cuBLASLt's heuristic returns for the product, timed; prints the first (the
// heuristic's pick) and the fastest.
static void lt_sweep(const char* name, int m, int n, int k, Mat a, Mat b, void* c, int ldc, cudaDataType ct,
                     float beta) {
    cublasLtMatmulDesc_t op;
    CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = b.t ? CUBLAS_OP_T : CUBLAS_OP_N, tb = a.t ? CUBLAS_OP_T : CUBLAS_OP_N;
    CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    // Column-major: A' = b (rows n x k as stored transposed or not), B' = a, C' = c^T (n x m).
    cublasLtMatrixLayout_t la, lb, lc;
    CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, b.t ? k : n, b.t ? n : k, b.ld));
    CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, a.t ? m : k, a.t ? k : m, a.ld));
    CHECK(cublasLtMatrixLayoutCreate(&lc, ct, n, m, ldc));
    cublasLtMatmulPreference_t pref;
    CHECK(cublasLtMatmulPreferenceCreate(&pref));
    size_t ws = WORKSPACE;
    CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
    cublasLtMatmulHeuristicResult_t res[64];
    int found = 0;
    CHECK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 64, res, &found));
    float alpha = 1.f;
    float first = -1, best = 1e30f;
    int best_i = -1;
    for (int i = 0; i < found; ++i) {
        if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
        auto run = [&] {
            CHECK(cublasLtMatmul(lt, op, &alpha, b.p, la, a.p, lb, &beta, c, lc, c, lc, &res[i].algo, workspace,
                                 WORKSPACE, 0));
        };
        float us = median_us(run);
        if (first < 0) first = us;
        if (us < best) best = us, best_i = i;
    }
    int tile = -1, splitk = -1, stages = -1, id = -1;
    if (best_i >= 0) {
        size_t w;
        cublasLtMatmulAlgoConfigGetAttribute(&res[best_i].algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id), &w);
        cublasLtMatmulAlgoConfigGetAttribute(&res[best_i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile), &w);
        cublasLtMatmulAlgoConfigGetAttribute(&res[best_i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof(splitk), &w);
        cublasLtMatmulAlgoConfigGetAttribute(&res[best_i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof(stages), &w);
    }
    printf("| lt %s | %d algos | heuristic's first %.1f us | best %.1f us (#%d: algo %d, tile %d, split-k %d, stages %d) |\n",
           name, found, first, best, best_i, id, tile, splitk, stages);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
}

int main(int argc, char** argv) {
    // The shape: `gemm_probe [ROWS GATE_ROWS WIDTH PADDED_WIDTH]` (steps x batch, the gates'
    // rows, the input and hidden width, that width padded), PTB large's by default.
    if (argc != 1 && argc != 5) {
        fprintf(stderr, "usage: %s [ROWS GATE_ROWS WIDTH PADDED_WIDTH]\n", argv[0]);
        return 2;
    }
    const int T = argc == 5 ? atoi(argv[1]) : 700, G = argc == 5 ? atoi(argv[2]) : 6000;
    const int H = argc == 5 ? atoi(argv[3]) : 1500, LD = argc == 5 ? atoi(argv[4]) : 1504;
    CHECK(cublasCreate(&blas));
    CHECK(cublasLtCreate(&lt));
    CHECK(cudaMalloc(&workspace, WORKSPACE));
    CHECK(cublasSetWorkspace(blas, workspace, WORKSPACE));
    auto buf = [](size_t n, unsigned seed) {
        __nv_bfloat16* p;
        CHECK(cudaMalloc(&p, n * 2));
        fill<<<1024, 256>>>(p, n, seed, 0.05f);
        return p;
    };
    __nv_bfloat16 *x = buf((size_t)T * LD, 1), *w = buf((size_t)G * LD, 2), *dg = buf((size_t)T * G, 3);
    __nv_bfloat16 *dw = buf((size_t)G * LD, 4), *dwf = buf((size_t)G * H, 5), *dx = buf((size_t)T * LD, 6);
    float* xg;
    CHECK(cudaMalloc(&xg, (size_t)T * G * 4));
    CHECK(cudaDeviceSynchronize());
    const cudaDataType BF = CUDA_R_16BF, F32 = CUDA_R_32F;
    struct Case {
        const char* name;
        int m, n, k;
        Mat a, b;
        void* c;
        int ldc;
        cudaDataType ct;
        float beta;
    };
    std::vector<Case> cases = {
        {"input projection, rows of 1504", T, G, LD, {x, LD, false}, {w, LD, true}, xg, G, F32, 0},
        {"input projection, rows of 1500", T, G, H, {x, H, false}, {w, H, true}, xg, G, F32, 0},
        {"dW into padded rows", G, LD, T, {dg, G, true}, {x, LD, false}, dw, LD, BF, 0},
        {"dW into 1500-wide rows, operands padded", G, H, T, {dg, G, true}, {x, LD, false}, dwf, H, BF, 0},
        {"dW added into 1500-wide rows, operands padded", G, H, T, {dg, G, true}, {x, LD, false}, dwf, H, BF, 1},
        {"dW, everything 1500 wide", G, H, T, {dg, G, true}, {x, H, false}, dwf, H, BF, 0},
        {"dX into padded rows", T, LD, G, {dg, G, false}, {w, LD, false}, dx, LD, BF, 0},
        {"dX into 1500-wide rows, weight padded", T, H, G, {dg, G, false}, {w, LD, false}, dx, H, BF, 0},
    };
    printf("| product | m x n x k | cublasGemmEx us | TFLOP/s |\n|---|---|---|---|\n");
    for (auto& c : cases) {
        float us = median_us([&] { gemm_ex(c.m, c.n, c.k, c.a, c.b, c.c, c.ldc, c.ct, c.beta); });
        printf("| %s | %dx%dx%d | %.1f | %.0f |\n", c.name, c.m, c.n, c.k, us, 2.0 * c.m * c.n * c.k / us * 1e-6);
    }
    // The row copy that moves a padded product into place now (rnn_copy_rows' bytes).
    float copy = median_us([&] {
        CHECK(cudaMemcpy2DAsync(dwf, H * 2, dw, LD * 2, H * 2, G, cudaMemcpyDeviceToDevice));
    });
    printf("| copy [6000 x 1500] from rows of 1504 (cudaMemcpy2D) | | %.1f | |\n", copy);
    for (auto& c : cases) lt_sweep(c.name, c.m, c.n, c.k, c.a, c.b, c.c, c.ldc, c.ct, c.beta);
    return 0;
}
