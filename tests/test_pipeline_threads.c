/* ctest-labels: e2e  ctest-timeout: 300
 * tests/test_pipeline_threads.c: the spec's `threads` (`datm run --threads N`) caps OpenBLAS's
 * own thread pool as well as OpenMP's, and the numbers do not depend on it.
 * - OpenBLAS is first set to 2 threads (its default on a 2-core machine); a run with
 *   threads 1 must leave openblas_get_num_threads() == 1 (and OpenMP's count 1), a run with
 *   threads 2 must leave 2 (the pthreads build of OpenBLAS does not follow OpenMP's count);
 * - both runs (sdatm-n on digits, a few epochs: encoder, TLASGR, the MLP head and its BLAS
 *   products, perplexity and class prediction) give bit-identical perplexity and error rate.
 * Skips (77) when the digits set is not found (ci/setup.sh writes it into .cache/data). */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "io/h5.h"
#include "io/results_layout.h"
#include "pipeline/pipeline.h"
#include "pipeline_testutil.h"
#include "test_check.h"


static const char *SPEC =
    "name: threads\nseed: 4\ndata:\n  dataset: digits\nmodel:\n  variant: sdatm-n\n"
    "  layers: [16]\n  unsup_epochs: 1\n  kl_warmup_epochs: 1\n  k_min: 1\n  head_hidden: [32]\n"
    "train:\n  epochs: 3\n  batch_size: 100\n  eval_docs: 50\n  eval_samples: 2\n"
    "evaluate:\n  samples: 5\n  predict_samples: 5\noutput:\n  topics: false\n  figures: false\n"
    "  report: false\n";

static int run_spec(const char *threads, const char *dir)
{
    char t[64];
    snprintf(t, sizeof t, "threads=%s", threads);
    const char *ov[1] = {t};
    return pt_run_spec(SPEC, "threads.yaml", ov, 1, dir);
}

#define read_metric pt_read_metric

int main(void)
{
    char dd[1024];
    datm_error derr = {0};
    if (datm_dataset_resolve("digits", dd, sizeof dd, &derr)) {
        printf("skipped: %s\n", derr.msg);
        return 77;
    }

    openblas_set_num_threads(2);
    CHECK(openblas_get_num_threads() == 2);
    if (run_spec("1", "test_pipeline_threads_1")) return 1;
    CHECK(openblas_get_num_threads() == 1);
    CHECK(omp_get_max_threads() == 1);
    if (run_spec("2", "test_pipeline_threads_2")) return 1;
    CHECK(openblas_get_num_threads() == 2);
    CHECK(omp_get_max_threads() == 2);

    const char *m[2] = {DATM_MET_PERPLEXITY, DATM_MET_ERROR_RATE};
    for (int i = 0; i < 2; i++) {
        double a = read_metric("test_pipeline_threads_1", m[i]);
        double b = read_metric("test_pipeline_threads_2", m[i]);
        printf("%s: %.17g (1 thread) %.17g (2 threads)\n", m[i], a, b);
        CHECK(isfinite(a) && a == b);
    }
    return check_result();
}
