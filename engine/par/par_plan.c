/* engine/par/par_plan.c: the chunk plan of data-parallel training (par.h): which rows a
 * chunk holds and which chunks a rank computes; the same with and without MPI. */
#include "par/par.h"

static int64_t g_chunks;
static int     g_own_rows;

void datm_par_set_chunks(int64_t C)
{
    g_chunks = C > 0 ? C : 0;
    g_own_rows = 0;
}

int64_t datm_par_chunks(void) { return g_chunks; }

static int64_t g_eval_first;
void    datm_par_set_eval_first(int64_t first) { g_eval_first = first; }
int64_t datm_par_eval_first(void) { return g_eval_first; }
void datm_par_set_own_rows(int on) { g_own_rows = on && g_chunks > 0; }
int  datm_par_own_rows(void) { return g_own_rows; }

void datm_par_part(int64_t n, int64_t *i0, int64_t *i1)
{
    const int64_t r = datm_par_rank(), R = datm_par_size();
    *i0 = n * r / R;
    *i1 = n * (r + 1) / R;
}

void datm_par_batch_rows(int64_t B, int64_t *r0, int64_t *r1)
{
    *r0 = 0;
    *r1 = B;
    if (!g_own_rows || datm_par_size() == 1) return;
    int64_t c0, c1;
    datm_par_own(g_chunks, &c0, &c1);
    *r0 = B * c0 / g_chunks;   /* chunk c is rows [B c / C, B (c + 1) / C) */
    *r1 = B * c1 / g_chunks;
}

/* ---- sliced state ---- */

enum { SHARDED_MAX = 16 };
static struct { float *x; int64_t n; } g_sharded[SHARDED_MAX];

int datm_par_sharded_add(float *x, int64_t n)
{
    for (int i = 0; i < SHARDED_MAX; i++)
        if (!g_sharded[i].x) {
            g_sharded[i].x = x;
            g_sharded[i].n = n;
            return DATM_OK;
        }
    return DATM_E_NOMEM;
}

void datm_par_sharded_remove(const float *x)
{
    for (int i = 0; i < SHARDED_MAX; i++)
        if (g_sharded[i].x == x) g_sharded[i].x = NULL;
}

int datm_par_sharded_gather(datm_error *err)
{
    int rc = DATM_OK;
    for (int i = 0; i < SHARDED_MAX && !rc; i++)
        if (g_sharded[i].x) rc = datm_par_gather_part_f32(g_sharded[i].x, g_sharded[i].n, err);
    return rc;
}

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

const char *datm_par_kind_name(int kind)
{
    static const char *const names[DATM_PAR_N_KINDS] = {
        [DATM_PAR_K_SUM_CHUNKS] = "sum_chunks",
        [DATM_PAR_K_SUM_CHUNKS_PART] = "sum_chunks_part",
        [DATM_PAR_K_GATHER_PART_F32] = "gather_part_f32",
        [DATM_PAR_K_GATHER_SLOTS] = "gather_slots",
        [DATM_PAR_K_GATHER_PARTS] = "gather_parts",
        [DATM_PAR_K_SUM_I64] = "sum_i64",
        [DATM_PAR_K_SUM_I64_LISTED] = "sum_i64_listed",
        [DATM_PAR_K_ANY] = "any",
    };
    return kind >= 0 && kind < DATM_PAR_N_KINDS ? names[kind] : "?";
}
