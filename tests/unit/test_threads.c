/* test_threads.c — one hardware object and one op shared by many threads
 * predicting at once give the same answer as one thread (run under
 * ThreadSanitizer or ASan in CI to catch races). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>
#include "testutil.h"

typedef struct job {
    const opm_op *op;
    const opm_hardware *hw;
    double latency;
    int failures;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    for (int i = 0; i < 20000; i++) {
        opm_profile p;
        opm_error err;
        if (opm_predict("roofline", j->op, j->hw, &p, &err) || p.latency_s != j->latency) j->failures++;
        if (i % 1000 == 0) {
            /* Parsing and loading are reentrant too. */
            opm_op *o = opm_op_gemm(64, 64, 64, OPM_BF16, &err);
            opm_hardware *h = opm_hardware_builtin("a10", &err);
            if (!o || !h) j->failures++;
            opm_op_free(o);
            opm_hardware_free(h);
        }
    }
    return NULL;
}

Test(threads, shared_hardware_and_op)
{
    opm_error err;
    opm_hardware *hw = opm_hardware_builtin("h100_sxm", &err);
    opm_op *op = opm_op_attention(2, 1024, 1024, 16, 4, 128, 1, OPM_BF16, &err);
    cr_assert_not_null(op, "%s", err.message);
    opm_profile ref;
    cr_assert_eq(opm_predict("roofline", op, hw, &ref, &err), 0);
    enum { N = 8 };
    pthread_t t[N];
    job jobs[N];
    for (int i = 0; i < N; i++) {
        jobs[i] = (job){op, hw, ref.latency_s, 0};
        cr_assert_eq(pthread_create(&t[i], NULL, worker, &jobs[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        cr_assert_eq(jobs[i].failures, 0);
    }
    opm_op_free(op);
    opm_hardware_free(hw);
}
