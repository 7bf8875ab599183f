/* engine/decoder/tlasgr_ranks.c: the TLASGR step (paper eqs. Phi-updata, update_M) with
 * Phi's columns split over the MPI ranks (engine/par): rank r updates part r of the blocks of
 * 8 columns (datm_tlasgr_step_part), then the ranks exchange the new columns of Phi(l) and
 * M(l) of their blocks; phi_f is the float of phi, as the step writes it. A column's update
 * reads only its own counts, noise stream and old values, so every rank ends with the Phi of
 * datm_tlasgr_step. A rank sends its 1/R of Phi and M (doubles) to every other rank. */
#include <string.h>

#include "decoder/decoder.h"
#include "par/par.h"

/* Doubles of part p's message: per layer the first bad column, then its blocks' columns of
 * Phi (K_{l-1} rows each) and of M. */
static int64_t part_len(const datm_gbn *g, int p, int parts)
{
    int64_t n = g->L, b0, b1;
    datm_tlasgr_part_blocks(g, p, parts, &b0, &b1);
    for (int64_t bk = b0; bk < b1; bk++) {
        int l, w;
        int64_t k0;
        datm_tlasgr_block(g, bk, &l, &k0, &w);
        n += (g->K[l - 1] + 1) * w;
    }
    return n;
}

/* Packs (pack = 1) or unpacks part p's blocks at msg. A part's blocks of one layer are
 * adjacent columns [k0, k1): per layer, each row's run of them, then M's; one copy per row
 * instead of one per row and block (rows are K_l doubles apart). */
static void part_copy(datm_gbn *g, int p, int parts, double *msg, int pack)
{
    int64_t o = g->L, b0, b1;
    datm_tlasgr_part_blocks(g, p, parts, &b0, &b1);
    for (int64_t bk = b0; bk < b1;) {
        int l, w;
        int64_t k0;
        datm_tlasgr_block(g, bk, &l, &k0, &w);
        int64_t k1 = k0 + w;
        for (bk++; bk < b1; bk++) {   /* the part's further blocks of layer l */
            int l2, w2;
            int64_t k2;
            datm_tlasgr_block(g, bk, &l2, &k2, &w2);
            if (l2 != l || k2 != k1) break;
            k1 = k2 + w2;
        }
        const int64_t R = g->K[l - 1], C = g->K[l], n = k1 - k0;
        for (int64_t v = 0; v < R; v++, o += n) {
            double *row = g->phi[l] + v * C + k0;
            if (pack) {
                memcpy(msg + o, row, (size_t)n * sizeof(double));
            } else {
                memcpy(row, msg + o, (size_t)n * sizeof(double));
                float *row_f = g->phi_f[l] + v * C + k0;
                for (int64_t j = 0; j < n; j++) row_f[j] = (float)row[j];
            }
        }
        if (pack) memcpy(msg + o, g->M[l] + k0, (size_t)n * sizeof(double));
        else memcpy(g->M[l] + k0, msg + o, (size_t)n * sizeof(double));
        o += n;
    }
}

static int exchange(datm_gbn *g, int part, int parts, int64_t *bad, void *user,
                    datm_error *err)
{
    (void)user;
    if (parts == 1) return DATM_OK;
    int64_t *bytes = datm_alloc_array((size_t)parts, sizeof *bytes, err);
    if (!bytes) return DATM_E_NOMEM;
    int64_t total = 0, mine = 0;
    for (int p = 0; p < parts; p++) {
        if (p == part) mine = total;
        bytes[p] = part_len(g, p, parts) * (int64_t)sizeof(double);
        total += bytes[p];
    }
    double *buf = datm_alloc((size_t)total, err);
    int rc = buf ? DATM_OK : DATM_E_NOMEM;
    if (!rc) {
        double *msg = buf + mine / (int64_t)sizeof(double);
        for (int l = 1; l <= g->L; l++) msg[l - 1] = (double)bad[l];
        part_copy(g, part, parts, msg, 1);
        rc = datm_par_gather_parts(buf, bytes, err);
    }
    for (int p = 0, o = 0; !rc && p < parts; o += (int)(bytes[p] / (int64_t)sizeof(double)), p++) {
        if (p == part) continue;
        double *msg = buf + o;
        for (int l = 1; l <= g->L; l++) {
            const int64_t b = (int64_t)msg[l - 1];
            if (b >= 0 && (bad[l] < 0 || b < bad[l])) bad[l] = b;
        }
        part_copy(g, p, parts, msg, 0);
    }
    datm_free(buf);
    datm_free(bytes);
    return rc;
}

int datm_tlasgr_step_ranks(datm_gbn *g, datm_gbn_stats *s, double rho, uint64_t seed,
                           datm_tlasgr_report *rep, datm_error *err)
{
    return datm_tlasgr_step_part(g, s, rho, seed, datm_par_rank(), datm_par_size(), exchange,
                                 NULL, rep, err);
}
