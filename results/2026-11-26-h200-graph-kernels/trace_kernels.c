// A CUDA injection library (CUDA_INJECTION64_PATH) that records, through CUPTI's activity API,
// every kernel, memset and memcpy a process runs on the device, graph replays included (one
// record per node), and writes them as CSV to $TRACE_OUT at exit: kind, start and end (ns, the
// GPU's clock), graph id, graph node id, name. Used where Nsight Systems is not installed.
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>

static FILE *out;

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    *size = 16 << 20;
    *buffer = aligned_alloc(8, *size);
    *max_records = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                               size_t valid) {
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)r;
            fprintf(out, "kernel,%llu,%llu,%u,%llu,%s\n", (unsigned long long)k->start,
                    (unsigned long long)k->end, k->graphId,
                    (unsigned long long)k->graphNodeId, k->name);
        } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
            CUpti_ActivityMemset4 *m = (CUpti_ActivityMemset4 *)r;
            fprintf(out, "memset,%llu,%llu,%u,%llu,%llu bytes\n", (unsigned long long)m->start,
                    (unsigned long long)m->end, m->graphId,
                    (unsigned long long)m->graphNodeId, (unsigned long long)m->bytes);
        } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *)r;
            fprintf(out, "memcpy,%llu,%llu,%u,%llu,%llu bytes kind %d\n",
                    (unsigned long long)m->start, (unsigned long long)m->end, m->graphId,
                    (unsigned long long)m->graphNodeId, (unsigned long long)m->bytes,
                    (int)m->copyKind);
        }
    }
    free(buffer);
}

static void flush(void) {
    cuptiActivityFlushAll(1);
    if (out) fclose(out);
}

int InitializeInjection(void) {
    const char *path = getenv("TRACE_OUT");
    out = fopen(path ? path : "trace.csv", "w");
    if (!out) return 0;
    cuptiActivityRegisterCallbacks(requested, completed);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
    atexit(flush);
    return 1;
}
