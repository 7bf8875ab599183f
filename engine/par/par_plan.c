/* engine/par/par_plan.c: the chunk plan of data-parallel training (par.h): which rows a
 * chunk holds and which chunks a rank computes; the same with and without MPI. */
#include "par/par.h"

static int64_t g_chunks;

void datm_par_set_chunks(int64_t C) { g_chunks = C > 0 ? C : 0; }
int64_t datm_par_chunks(void) { return g_chunks; }

void datm_par_own(int64_t C, int64_t *c0, int64_t *c1)
{
    const int64_t r = datm_par_rank(), R = datm_par_size();
    *c0 = C * r / R;
    *c1 = C * (r + 1) / R;
}

void datm_par_chunk_rows(int64_t B, int64_t C, int64_t c, int64_t *r0, int64_t *r1)
{
    *r0 = B * c / C;
    *r1 = B * (c + 1) / C;
}

void datm_par_add_rows(const float *rows, int64_t C, int64_t stride, int64_t i0, int64_t i1,
                       float *out)
{
    /* blocks of entries in parallel; each entry's additions in chunk order */
#pragma omp parallel for schedule(static)
    for (int64_t b0 = i0; b0 < i1; b0 += 4096) {
        const int64_t b1 = b0 + 4096 < i1 ? b0 + 4096 : i1;
        for (int64_t i = b0; i < b1; i++) out[i] = rows[i];
        for (int64_t c = 1; c < C; c++) {
            const float *r = rows + c * stride;
            for (int64_t i = b0; i < b1; i++) out[i] += r[i];
        }
    }
}
