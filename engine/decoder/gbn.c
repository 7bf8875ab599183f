/* engine/decoder/gbn.c: the decoder's global state (Phi(l), M, r) — defaults, creation,
 * initialisation (docs/reference.md 1.1), copies, checks and named views for save/load.
 * Paper section II-A, eq. (PGBN_generate). */
#include "decoder/decoder.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rand/rand.h"

void datm_gbn_opts_default(datm_gbn_opts *o)
{
    memset(o, 0, sizeof *o);
    for (int l = 0; l <= DATM_MAX_LAYERS; l++) o->eta[l] = 0.0;   /* -> 1/K_l */
    o->init_lo = 0.05;
    o->use_r = 1;
    o->r_init = 0.0;                    /* -> 1/K_L */
    o->gamma0 = 1.0;
    o->c0 = 1.0;
    o->r_floor = 1e-10;
    o->eps0 = 1.0;
    o->tau0 = 20.0;
    o->kappa0 = 0.7;
    o->epsm0 = 0.5;
    o->taum0 = 20.0;
    o->kappam0 = 0.7;
    o->m_floor = 1.0;
    o->phi_floor = 1e-10;
    o->a0pj = 0.01;
    o->b0pj = 0.01;
    o->e0cj = 1.0;
    o->f0cj = 1.0;
    o->a0 = 0.01;
    o->b0 = 0.01;
    o->e0 = 1.0;
    o->f0 = 1.0;
}

void datm_gbn_sync_f(datm_gbn *g)
{
    for (int l = 1; l <= g->L; l++) {
        int64_t n = g->K[l - 1] * g->K[l];
        for (int64_t i = 0; i < n; i++) g->phi_f[l][i] = (float)g->phi[l][i];
    }
}

static void init_phi(datm_gbn *g, uint64_t seed)
{
    for (int l = 1; l <= g->L; l++) {
        int64_t R = g->K[l - 1], C = g->K[l];
        datm_rng rng;
        datm_rng_init(&rng, seed, DATM_STREAM_INIT, (uint64_t)l);
        double *phi = g->phi[l];
        for (int64_t i = 0; i < R * C; i++)
            phi[i] = g->o.init_lo + (1.0 - g->o.init_lo) * datm_rng_uniform(&rng);
        for (int64_t k = 0; k < C; k++) {
            double s = 0.0;
            for (int64_t v = 0; v < R; v++) s += phi[v * C + k];
            s = s > 0 ? s : 1.0;
            for (int64_t v = 0; v < R; v++) phi[v * C + k] /= s;
        }
    }
}

int datm_gbn_create(int L, const int64_t *K, const datm_gbn_opts *o, uint64_t seed,
                    datm_gbn **out, datm_error *err)
{
    *out = NULL;
    if (L < 1 || L > DATM_MAX_LAYERS)
        return datm_error_set(err, DATM_E_INVALID, "decoder: %d layers (1..%d allowed)", L,
                              DATM_MAX_LAYERS);
    for (int l = 0; l <= L; l++)
        if (K[l] < 1)
            return datm_error_set(err, DATM_E_INVALID, "decoder: K[%d] = %lld must be >= 1", l,
                                  (long long)K[l]);
    datm_gbn *g = datm_alloc(sizeof *g, err);
    if (!g) return err->code;
    g->L = L;
    g->o = *o;
    for (int l = 0; l <= L; l++) g->K[l] = K[l];
    for (int l = 1; l <= L; l++) {
        int64_t n = K[l - 1] * K[l];
        g->phi[l] = datm_alloc_array((size_t)n, sizeof(double), err);
        g->phi_f[l] = g->phi[l] ? datm_alloc_array((size_t)n, sizeof(float), err) : NULL;
        g->M[l] = g->phi_f[l] ? datm_alloc_array((size_t)K[l], sizeof(double), err) : NULL;
        if (!g->M[l]) { datm_gbn_destroy(&g); return err->code; }
        g->eta[l] = o->eta[l] > 0 ? o->eta[l] : 1.0 / (double)K[l];
    }
    if (o->use_r) {
        g->r = datm_alloc_array((size_t)K[L], sizeof(double), err);
        if (!g->r) { datm_gbn_destroy(&g); return err->code; }
        double r0 = o->r_init > 0 ? o->r_init : 1.0 / (double)K[L];
        for (int64_t k = 0; k < K[L]; k++) g->r[k] = r0;
    }
    g->gamma0 = o->gamma0;
    g->c0 = o->c0;
    g->M_r = 0.0;
    g->t = 0;
    init_phi(g, seed);
    datm_gbn_sync_f(g);
    *out = g;
    return DATM_OK;
}

void datm_gbn_destroy(datm_gbn **pg)
{
    if (!pg || !*pg) return;
    datm_gbn *g = *pg;
    for (int l = 1; l <= g->L; l++) {
        datm_free(g->phi[l]);
        datm_free(g->phi_f[l]);
        datm_free(g->M[l]);
    }
    datm_free(g->r);
    datm_free(g);
    *pg = NULL;
}

void datm_gbn_copy(datm_gbn *dst, const datm_gbn *src)
{
    DATM_ASSERT(dst->L == src->L && (dst->r == NULL) == (src->r == NULL));
    for (int l = 0; l <= src->L; l++) DATM_ASSERT(dst->K[l] == src->K[l]);
    for (int l = 1; l <= src->L; l++) {
        size_t n = (size_t)(src->K[l - 1] * src->K[l]);
        memcpy(dst->phi[l], src->phi[l], n * sizeof(double));
        memcpy(dst->phi_f[l], src->phi_f[l], n * sizeof(float));
        memcpy(dst->M[l], src->M[l], (size_t)src->K[l] * sizeof(double));
        dst->eta[l] = src->eta[l];
    }
    if (src->r) memcpy(dst->r, src->r, (size_t)src->K[src->L] * sizeof(double));
    dst->M_r = src->M_r;
    dst->gamma0 = src->gamma0;
    dst->c0 = src->c0;
    dst->t = src->t;
    dst->o = src->o;
}

int datm_gbn_check(const datm_gbn *g, double tol, datm_error *err)
{
    for (int l = 1; l <= g->L; l++) {
        int64_t R = g->K[l - 1], C = g->K[l];
        for (int64_t k = 0; k < C; k++) {
            double s = 0.0;
            for (int64_t v = 0; v < R; v++) {
                double x = g->phi[l][v * C + k];
                if (!isfinite(x) || x < 0)
                    return datm_error_set(err, DATM_E_NUMERIC,
                                          "decoder: Phi(%d)[%lld, %lld] = %.17g", l,
                                          (long long)v, (long long)k, x);
                s += x;
            }
            if (fabs(s - 1.0) > tol)
                return datm_error_set(err, DATM_E_NUMERIC,
                                      "decoder: column %lld of Phi(%d) sums to %.17g", (long long)k,
                                      l, s);
        }
    }
    if (g->r)
        for (int64_t k = 0; k < g->K[g->L]; k++)
            if (!isfinite(g->r[k]) || g->r[k] <= 0)
                return datm_error_set(err, DATM_E_NUMERIC, "decoder: r[%lld] = %.17g",
                                      (long long)k, g->r[k]);
    return DATM_OK;
}

int datm_gbn_views(datm_gbn *g, datm_gbn_view *out, int max)
{
    int n = 0;
    for (int l = 1; l <= g->L && n < max; l++) {
        datm_gbn_view *w = &out[n++];
        snprintf(w->name, sizeof w->name, "phi_%d", l);
        w->data = g->phi[l];
        w->rank = 2;
        w->dims[0] = g->K[l - 1];
        w->dims[1] = g->K[l];
    }
    for (int l = 1; l <= g->L && n < max; l++) {
        datm_gbn_view *w = &out[n++];
        snprintf(w->name, sizeof w->name, "M_%d", l);
        w->data = g->M[l];
        w->rank = 1;
        w->dims[0] = g->K[l];
        w->dims[1] = 0;
    }
    if (g->r && n < max) {
        datm_gbn_view *w = &out[n++];
        snprintf(w->name, sizeof w->name, "r");
        w->data = g->r;
        w->rank = 1;
        w->dims[0] = g->K[g->L];
        w->dims[1] = 0;
    }
    if (n < max) {
        g->state[0] = (double)g->t;
        g->state[1] = g->M_r;
        g->state[2] = g->gamma0;
        g->state[3] = g->c0;
        datm_gbn_view *w = &out[n++];
        snprintf(w->name, sizeof w->name, "state");
        w->data = g->state;
        w->rank = 1;
        w->dims[0] = 4;
        w->dims[1] = 0;
    }
    return n;
}

void datm_gbn_view_commit(datm_gbn *g)
{
    g->t = (int64_t)llround(g->state[0]);
    g->M_r = g->state[1];
    g->gamma0 = g->state[2];
    g->c0 = g->state[3];
    datm_gbn_sync_f(g);
}
