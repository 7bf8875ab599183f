/* engine/cli/cli_threads.c: the `--threads N` option of the commands that load a trained run
 * (infer, ensemble). OpenBLAS (the pthreads build) keeps its own pool apart from OpenMP's,
 * so both counts are set, as `datm run` does. */
#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

int datm_cli_threads(const char *cmd, const char *value)
{
    char *end = NULL;
    long n = strtol(value, &end, 10);
    if (!end || *end || n < 1 || n > 4096) {
        fprintf(stderr, "datm %s: --threads needs a positive integer, got '%s'\n", cmd, value);
        return DATM_EXIT_USAGE;
    }
    omp_set_num_threads((int)n);
    openblas_set_num_threads((int)n);
    return DATM_EXIT_OK;
}
