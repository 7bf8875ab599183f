/* engine/par/par_mpi.c: the ranks of par.h over MPI (MPI_COMM_WORLD): slots by
 * MPI_Allgatherv, counts by MPI_Allreduce (integer sum, exact in any order). */
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>

#include "par/par.h"

static int g_rank, g_size = 1, g_inited;
static datm_par_traffic g_traffic;

int datm_par_init(int *argc, char ***argv)
{
    int provided = 0;
    /* FUNNELED: only the main thread calls MPI; OpenMP threads work between the calls */
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return DATM_E_IO;
    g_inited = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    return DATM_OK;
}

void datm_par_finalize(void)
{
    if (g_inited) MPI_Finalize();
    g_inited = 0;
}

void datm_par_abort(int code)
{
    if (g_inited && g_size > 1) MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
}

int datm_par_rank(void) { return g_rank; }
int datm_par_size(void) { return g_size; }
int datm_par_is_mpi(void) { return 1; }

static int mpi_fail(datm_error *err, int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return datm_error_set(err, DATM_E_IO, "MPI %s (rank %d of %d): %s", what, g_rank, g_size,
                          msg);
}

int datm_par_barrier(datm_error *err)
{
    if (g_size == 1) return DATM_OK;
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? DATM_OK : mpi_fail(err, rc, "barrier");
}

int datm_par_gather_slots(void *buf, size_t slot_bytes, int64_t C, datm_error *err)
{
    int64_t c0, c1;
    datm_par_own(C, &c0, &c1);
    g_traffic.calls++;
    g_traffic.bytes_sent += (c1 - c0) * (int64_t)slot_bytes;
    if (g_size == 1) return DATM_OK;
    if ((double)C * (double)slot_bytes > (double)INT_MAX)
        return datm_error_set(err, DATM_E_UNSUPPORTED, "MPI: %lld chunks of %zu bytes exceed "
                              "one collective's 2 GB; use fewer train.reduce_chunks",
                              (long long)C, slot_bytes);
    int *counts = malloc(2 * (size_t)g_size * sizeof *counts);
    if (!counts) return datm_error_set(err, DATM_E_NOMEM, "MPI: out of memory");
    int *displs = counts + g_size;
    for (int r = 0; r < g_size; r++) {
        const int64_t a = C * r / g_size, b = C * (r + 1) / g_size;
        counts[r] = (int)((b - a) * (int64_t)slot_bytes);
        displs[r] = (int)(a * (int64_t)slot_bytes);
    }
    int rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, MPI_BYTE,
                            MPI_COMM_WORLD);
    free(counts);
    return rc == MPI_SUCCESS ? DATM_OK : mpi_fail(err, rc, "allgather of the chunk sums");
}

int datm_par_sum_i64(int64_t *x, int64_t n, datm_error *err)
{
    g_traffic.calls++;
    g_traffic.bytes_sent += n * (int64_t)sizeof *x;
    if (g_size == 1) return DATM_OK;
    for (int64_t o = 0; o < n; o += INT_MAX / 2) {   /* counts of one call fit an int */
        const int m = (int)(n - o < INT_MAX / 2 ? n - o : INT_MAX / 2);
        int rc = MPI_Allreduce(MPI_IN_PLACE, x + o, m, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "allreduce of the counts");
    }
    return DATM_OK;
}

void datm_par_traffic_get(datm_par_traffic *t) { *t = g_traffic; }
