// A CUDA injection library (CUDA_INJECTION64_PATH) that records, through CUPTI's activity API,
// every CUDA driver and runtime API call a process makes and writes, at exit, one CSV line per
// function to $TRACE_OUT: domain, name, calls, total host µs. Two runs with different
// repetition counts give a call's API work by difference.
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_CBID 4096
static unsigned long long calls[2][MAX_CBID], ns[2][MAX_CBID];

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    *size = 16 << 20;
    *buffer = aligned_alloc(8, *size);
    *max_records = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                               size_t valid) {
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind == CUPTI_ACTIVITY_KIND_DRIVER || r->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
            CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)r;
            int d = r->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
            if (a->cbid < MAX_CBID) {
                calls[d][a->cbid] += 1;
                ns[d][a->cbid] += a->end - a->start;
            }
        }
    }
    free(buffer);
}

static void flush(void) {
    cuptiActivityFlushAll(1);
    const char *path = getenv("TRACE_OUT");
    FILE *out = fopen(path ? path : "api.csv", "w");
    if (!out) return;
    for (int d = 0; d < 2; ++d)
        for (int c = 0; c < MAX_CBID; ++c) {
            if (!calls[d][c]) continue;
            const char *name = "?";
            cuptiGetCallbackName(d ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, c, &name);
            fprintf(out, "%s,%s,%llu,%.1f\n", d ? "runtime" : "driver", name, calls[d][c], ns[d][c] / 1e3);
        }
    fclose(out);
}

int InitializeInjection(void) {
    cuptiActivityRegisterCallbacks(requested, completed);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
    atexit(flush);
    return 1;
}
