/* engine/decoder/tlasgr.c: topic-layer-adaptive stochastic gradient Riemannian MCMC for
 * the globals of the gamma belief network (paper section II-A: eqs. Phi-updata, r_update,
 * update_M; reference-notes 1.3-1.7).
 *
 * For column k of Phi(l), with A the augmented counts averaged over the passes in the stats,
 * rho = N / B, eta = eta(l), R = K[l-1]:
 *   phi~_vk = phi_vk + (eps_t / M_k) [(rho A_vk + eta) - (rho A_.k + eta R) phi_vk]
 *             + sqrt(2 eps_t phi_vk / M_k) z_vk,         z ~ N(0, 1) elementwise,
 * then the column is projected onto the simplex. M_k = rho A_.k on the first step, then
 * (1 - eps'_t) M_k + eps'_t rho A_.k, floored at m_floor. The r update is eq. r_update with
 * M^(L+1) annealed from rho sum_n q_n(L+1). */
#include <omp.h>
#include <string.h>

#include "decoder/gbn_internal.h"

double datm_tlasgr_eps(double eps0, double tau0, double kappa0, int64_t t)
{
    return eps0 * pow((tau0 + (double)t) / (tau0 + 1.0), -kappa0);
}

void datm_simplex_project(double *col, const double *old, int64_t n, int64_t stride,
                          double floor)
{
    double s = 0.0;
    for (int64_t v = 0; v < n; v++) s += col[v * stride];
    const double d = s - 1.0;
    double s2 = 0.0;
    for (int64_t v = 0; v < n; v++) {
        double x = col[v * stride] - d * old[v * stride];
        if (!(x >= floor)) x = isnan(x) ? x : floor;   /* NaN is left for the caller to see */
        col[v * stride] = x;
        s2 += x;
    }
    for (int64_t v = 0; v < n; v++) col[v * stride] /= s2;
}

/* New M from an estimate: set on the first step, annealed afterwards, floored. */
static double anneal_m(double m_old, double est, int first, double eps_m, double floor)
{
    double m = first ? est : (1.0 - eps_m) * m_old + eps_m * est;
    return m > floor ? m : floor;
}

int datm_tlasgr_step(datm_gbn *g, datm_gbn_stats *s, double rho, uint64_t seed,
                     datm_tlasgr_report *rep, datm_error *err)
{
    if (s->n_passes <= 0)
        return datm_error_set(err, DATM_E_INVALID, "tlasgr: no augmentation pass in the stats");
    if (!(rho > 0) || !isfinite(rho))
        return datm_error_set(err, DATM_E_INVALID, "tlasgr: rho = %.17g", rho);
    datm_gbn_stats_reduce(s);
    const int64_t t = g->t + 1;
    const int first = g->t == 0;
    const double eps = datm_tlasgr_eps(g->o.eps0, g->o.tau0, g->o.kappa0, t);
    const double eps_m = datm_tlasgr_eps(g->o.epsm0, g->o.taum0, g->o.kappam0, t);
    const double inv = 1.0 / (double)s->n_passes;
    datm_tlasgr_report local;
    if (!rep) rep = &local;
    memset(rep, 0, sizeof *rep);
    rep->eps = eps;
    rep->eps_m = eps_m;

    int64_t maxR = 1;
    for (int l = 1; l <= g->L; l++) maxR = g->K[l - 1] > maxR ? g->K[l - 1] : maxR;
    const int T = omp_get_max_threads();
    double *buf = datm_alloc_array((size_t)(T * 2 * maxR), sizeof(double), err);
    if (!buf) return err->code;

    for (int l = 1; l <= g->L; l++) {
        const int64_t R = g->K[l - 1], C = g->K[l];
        const double *A = s->A[l];
        double *phi = g->phi[l];
        const double eta = g->eta[l];
        double *M = g->M[l];
        /* column sums of the averaged counts, in a fixed order */
        double step_sum = 0.0;
        for (int64_t k = 0; k < C; k++) {
            double cs = 0.0;
            for (int64_t v = 0; v < R; v++) cs += A[v * C + k];
            M[k] = anneal_m(M[k], rho * cs * inv, first, eps_m, g->o.m_floor);
            step_sum += eps / M[k];
        }
        rep->step_mean[l] = step_sum / (double)C;
        int64_t bad = -1;
#pragma omp parallel for num_threads(T) schedule(dynamic, 4)
        for (int64_t k = 0; k < C; k++) {
            const int tid = omp_get_thread_num();
            double *nw = buf + (int64_t)tid * 2 * maxR, *old = nw + maxR;
            datm_rng rng;
            datm_rng_init2(&rng, seed, DATM_STREAM_PHI_NOISE, (uint64_t)t * 64 + (uint64_t)l,
                           (uint64_t)k);
            double cs = 0.0;
            for (int64_t v = 0; v < R; v++) cs += A[v * C + k];
            const double b = rho * cs * inv + eta * (double)R;
            const double a = eps / M[k];
            for (int64_t v = 0; v < R; v++) {
                double p = phi[v * C + k];
                old[v] = p;
                double drift = (rho * A[v * C + k] * inv + eta) - b * p;
                double sd = sqrt(2.0 * a * (p > 0 ? p : 0.0));
                nw[v] = p + a * drift + sd * datm_rng_normal(&rng);
            }
            datm_simplex_project(nw, old, R, 1, g->o.phi_floor);
            int ok = 1;
            for (int64_t v = 0; v < R; v++) ok &= isfinite(nw[v]);
            if (!ok) {
#pragma omp critical(datm_tlasgr_bad)
                if (bad < 0 || k < bad) bad = k;
                continue;
            }
            for (int64_t v = 0; v < R; v++) phi[v * C + k] = nw[v];
        }
        if (bad >= 0) {
            datm_free(buf);
            return datm_error_set(err, DATM_E_NUMERIC,
                                  "tlasgr: step %lld: non-finite Phi(%d) column %lld (M_k = %.9g)",
                                  (long long)t, l, (long long)bad, M[bad]);
        }
    }
    datm_free(buf);

    if (g->r) {
        const int64_t KL = g->K[g->L];
        const double q = s->q_sum * inv;
        g->M_r = anneal_m(g->M_r, rho * q, first, eps_m, g->o.m_floor);
        const double a = eps / g->M_r;
        rep->step_mean[g->L + 1] = a;
        datm_rng rng;
        datm_rng_init2(&rng, seed, DATM_STREAM_PHI_NOISE, (uint64_t)t * 64 + 63, 0);
        for (int64_t k = 0; k < KL; k++) {
            double rk = g->r[k];
            double drift = (rho * s->tables[k] * inv + g->gamma0 / (double)KL) -
                           rk * (g->c0 + rho * q);
            double nr = fabs(rk + a * drift + sqrt(2.0 * a * rk) * datm_rng_normal(&rng));
            if (!isfinite(nr))
                return datm_error_set(err, DATM_E_NUMERIC, "tlasgr: step %lld: r[%lld] = %.17g",
                                      (long long)t, (long long)k, nr);
            g->r[k] = nr > g->o.r_floor ? nr : g->o.r_floor;
        }
    }
    g->t = t;
    datm_gbn_sync_f(g);
    return DATM_OK;
}
