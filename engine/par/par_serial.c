/* engine/par/par_serial.c: one rank, for builds without MPI (par.h): the collectives have
 * nothing to exchange. */
#include <stdlib.h>

#include "par/par.h"

static datm_par_traffic g_traffic;

int datm_par_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return DATM_OK;
}

void datm_par_finalize(void) {}
void datm_par_abort(int code) { (void)code; }
int  datm_par_rank(void) { return 0; }
int  datm_par_size(void) { return 1; }
int  datm_par_is_mpi(void) { return 0; }
int  datm_par_barrier(datm_error *err) { (void)err; return DATM_OK; }

int datm_par_gather_slots(void *buf, size_t slot_bytes, int64_t C, datm_error *err)
{
    (void)buf;
    (void)slot_bytes;
    (void)C;
    (void)err;
    g_traffic.calls++;
    return DATM_OK;
}

int datm_par_sum_chunks(float *slots, int64_t n, int64_t C, float *out, datm_error *err)
{
    (void)err;
    g_traffic.calls++;
    datm_par_add_rows(slots, C, n, 0, n, out);
    return DATM_OK;
}

int datm_par_sum_chunks_part(float *slots, int64_t n, int64_t C, float *out, datm_error *err)
{
    return datm_par_sum_chunks(slots, n, C, out, err);
}

int datm_par_gather_part_f32(float *x, int64_t n, datm_error *err)
{
    (void)x;
    (void)n;
    (void)err;
    g_traffic.calls++;
    return DATM_OK;
}

int datm_par_any(int flag, int *any, datm_error *err)
{
    (void)err;
    *any = flag != 0;
    return DATM_OK;
}

int datm_par_gather_parts(void *buf, const int64_t *bytes, datm_error *err)
{
    (void)buf;
    (void)bytes;
    (void)err;
    g_traffic.calls++;
    return DATM_OK;
}

int datm_par_sum_i64(int64_t *x, int64_t n, datm_error *err)
{
    (void)x;
    (void)n;
    (void)err;
    g_traffic.calls++;
    return DATM_OK;
}

int datm_par_sum_i64_listed(int64_t *x, int64_t n, int64_t *idx, int64_t *m, datm_error *err)
{
    (void)idx;
    (void)m;
    return datm_par_sum_i64(x, n, err);
}

void datm_par_traffic_get(datm_par_traffic *t) { *t = g_traffic; }
