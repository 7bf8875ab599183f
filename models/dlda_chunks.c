/* models/dlda_chunks.c: DLDA-TLASGR's local chain of one mini-batch spread over MPI ranks
 * (train.reduce_chunks; engine/par/par.h). Each document's upward-downward chain depends on
 * its own counts, its own random stream and the globals only, so a rank runs the chains of
 * the documents of its chunks; the counts TLASGR needs are fixed-point sums, added over the
 * ranks exactly (datm_par_sum_i64). The two floating-point sums of the mini-batch, the
 * top-layer q over the collected sweeps (for r, paper eq. r_update) and the log-likelihood,
 * are rebuilt on every rank from every document's values (datm_par_gather_slots) in the
 * order one process adds them (sweep by sweep, document by document): the numbers are
 * bit-identical to one process's for any rank count, chunk count and thread count.
 *
 * A chunk's slot: for each collected sweep the q_n(L+1) of its documents, then their
 * log-likelihoods of the last sweep, each row `cap` (the largest chunk) long. */
#include <string.h>

#include "dlda_common.h"
#include "par/par.h"

static double *slot(double *buf, int64_t c, int64_t rows_per_slot) { return buf + c * rows_per_slot; }

int dlda_chunks_sweeps(const datm_gbn *g, const datm_csr *X, const int64_t *doc_ids,
                       datm_gbn_chain *ch, int64_t burnin, int64_t collect,
                       const datm_gbn_sweep_opts *so, uint64_t seed, uint32_t purpose,
                       uint64_t step, datm_gbn_stats *s, double *loglik, datm_error *err)
{
    const int64_t B = X->n_rows, C = datm_par_chunks();
    const int64_t cap = (B + C - 1) / C, per = (collect + 1) * cap;
    int64_t c0, c1, r0, r1, e;
    datm_par_own(C, &c0, &c1);
    datm_par_chunk_rows(B, C, c0, &r0, &e);
    datm_par_chunk_rows(B, C, c1 - 1, &e, &r1);
    double *buf = datm_alloc_array((size_t)(C * per), sizeof(double), err);
    if (!buf) return DATM_E_NOMEM;
    /* this rank's documents, rows [r0, r1) of X */
    datm_csr Xr = *X;
    Xr.n_rows = r1 - r0;
    Xr.row_ptr = X->row_ptr + r0;
    Xr.nnz = X->row_ptr[r1] - X->row_ptr[r0];
    datm_gbn_chain_init(ch, Xr.n_rows);
    datm_gbn_stats_reset(s);
    int rc = DATM_OK;
    for (int64_t sw = 0; sw < burnin + collect && !rc; sw++) {
        datm_gbn_key key = {.seed = seed, .purpose = purpose, .step = step * 4096 + (uint64_t)sw,
                            .doc_ids = doc_ids + r0};
        rc = datm_gbn_chain_sweep(g, &Xr, ch, &key, so, sw >= burnin ? s : NULL, err);
        if (rc || sw < burnin) continue;
        for (int64_t c = c0; c < c1; c++) {   /* q of this sweep into the chunks' slots */
            int64_t a, b;
            datm_par_chunk_rows(B, C, c, &a, &b);
            memcpy(slot(buf, c, per) + (sw - burnin) * cap, ch->q_top + (a - r0),
                   (size_t)(b - a) * sizeof(double));
        }
    }
    for (int64_t c = c0; c < c1 && !rc; c++) {
        int64_t a, b;
        datm_par_chunk_rows(B, C, c, &a, &b);
        memcpy(slot(buf, c, per) + collect * cap, ch->loglik + (a - r0),
               (size_t)(b - a) * sizeof(double));
    }
    if (!rc) rc = datm_par_gather_slots(buf, (size_t)per * sizeof(double), C, err);
    if (!rc) rc = datm_par_sum_i64(datm_gbn_stats_fold(s), s->fx_len, err);
    if (!rc) {
        /* one process's order: s->q_sum += q_n sweep by sweep, document by document */
        double q = 0, ll = 0;
        for (int64_t k = 0; k < collect; k++)
            for (int64_t c = 0; c < C; c++) {
                int64_t a, b;
                datm_par_chunk_rows(B, C, c, &a, &b);
                const double *v = slot(buf, c, per) + k * cap;
                for (int64_t i = 0; i < b - a; i++) q += v[i];
            }
        for (int64_t c = 0; c < C; c++) {
            int64_t a, b;
            datm_par_chunk_rows(B, C, c, &a, &b);
            const double *v = slot(buf, c, per) + collect * cap;
            for (int64_t i = 0; i < b - a; i++) ll += v[i];
        }
        s->q_sum = q;
        s->n_passes = collect;
        *loglik = ll;
    }
    datm_free(buf);
    return rc;
}
