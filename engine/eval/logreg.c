/* engine/eval/logreg.c: L2-penalised multinomial logistic regression by L-BFGS, with the
 * penalty chosen by stratified k-fold cross-validation (the classifier of the unsupervised
 * baselines in the paper's Tables 3-4; see logreg.h for the objective).
 *
 * The loss is evaluated over fixed blocks of rows: each block is standardised into a double
 * buffer, logits = Xb W by dgemm, softmax per row (OpenMP), and grad += Xb^T R by dgemm, the
 * blocks summed in order, so the result does not depend on the thread count. */
#include "eval/logreg.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "nn/mlp_head.h"

#define LR_BLOCK 1024   /* rows per block: Xb is BLOCK x (D+1) doubles */
#define LR_MEM 10       /* L-BFGS memory */

void datm_logreg_params_default(datm_logreg_params *p)
{
    memset(p, 0, sizeof *p);
    p->n_folds = 5;
    p->standardize = 1;
    p->fit_bias = 1;
    p->max_iter = 500;
    p->tol = 1e-6;
    p->cv_max_docs = 20000;
}

void datm_logreg_free(datm_logreg *m)
{
    if (!m) return;
    datm_free(m->w);
    datm_free(m->mean);
    datm_free(m->scale);
    datm_free(m->cv_lambdas);
    datm_free(m->cv_error);
    datm_free(m->cv_logloss);
    memset(m, 0, sizeof *m);
}

/* ---- the objective over a row subset ---- */

typedef struct lr_problem {
    const float   *X;        /* (N_all, D) */
    const int32_t *y;        /* (N_all) */
    const int64_t *rows;     /* (n) subset of row ids, or NULL for 0..n-1 */
    int64_t        n, d;
    int            c, fit_bias;
    const double  *mean, *scale;   /* (D) or NULL; scale holds 1/sd */
    double        *inv;            /* (D) owned storage behind scale */
    double         lambda;
    double        *xb;       /* (LR_BLOCK, D + fit_bias) */
    double        *xs;       /* (n, D + fit_bias) all rows prebuilt, or NULL (then per block) */
    int64_t        xs_cap;   /* rows xs can hold */
    double        *z;        /* (LR_BLOCK, C) */
    double        *rl;       /* (LR_BLOCK) per-row loss */
} lr_problem;

static int64_t lr_row(const lr_problem *pb, int64_t i) { return pb->rows ? pb->rows[i] : i; }
static void lr_prebuild(lr_problem *pb);

/* Xb[i, :] = standardised row, plus a trailing 1 for the intercept. */
/* Rows first..first+nb-1 of the problem, standardised, with a trailing 1 for the intercept,
 * into out (nb, D + fit_bias). */
static void lr_standardise(const lr_problem *pb, int64_t first, int64_t nb, double *out)
{
    const int64_t dc = pb->d + pb->fit_bias;
    #pragma omp parallel for schedule(static) if (nb * dc >= 65536)
    for (int64_t i = 0; i < nb; i++) {
        const float *x = pb->X + lr_row(pb, first + i) * pb->d;
        double *o = out + i * dc;
        if (pb->mean)
            for (int64_t j = 0; j < pb->d; j++) o[j] = ((double)x[j] - pb->mean[j]) * pb->scale[j];
        else
            for (int64_t j = 0; j < pb->d; j++) o[j] = x[j];
        if (pb->fit_bias) o[pb->d] = 1.0;
    }
}

/* The block's rows: from the prebuilt matrix when there is one, else standardised now. */
static const double *lr_block(const lr_problem *pb, int64_t first, int64_t nb)
{
    const int64_t dc = pb->d + pb->fit_bias;
    if (pb->xs) return pb->xs + first * dc;
    lr_standardise(pb, first, nb, pb->xb);
    return pb->xb;
}

/* Prebuilds every row of the current subset when it fits in xs (call after setting rows, n). */
static void lr_prebuild(lr_problem *pb)
{
    if (pb->xs && pb->n <= pb->xs_cap) lr_standardise(pb, 0, pb->n, pb->xs);
    else if (pb->xs) { datm_free(pb->xs); pb->xs = NULL; pb->xs_cap = 0; }
}

/* In place: z row -> softmax probabilities; returns -log p[y] (y < 0: not needed). */
static double lr_softmax_row(double *z, int c, int y)
{
    double mx = z[0];
    for (int k = 1; k < c; k++) mx = z[k] > mx ? z[k] : mx;
    const double zy = y >= 0 ? z[y] : 0;
    double s = 0;
    for (int k = 0; k < c; k++) { z[k] = exp(z[k] - mx); s += z[k]; }
    const double inv = 1.0 / s;
    for (int k = 0; k < c; k++) z[k] *= inv;
    return y >= 0 ? mx + log(s) - zy : 0;
}

static double lr_eval(lr_problem *pb, const double *w, double *grad)
{
    const int64_t dc = pb->d + pb->fit_bias;
    const int c = pb->c;
    const double inv_n = 1.0 / (double)pb->n;
    if (grad) memset(grad, 0, (size_t)(dc * c) * sizeof(double));
    double loss = 0;
    for (int64_t first = 0; first < pb->n; first += LR_BLOCK) {
        int64_t nb = DATM_MIN((int64_t)LR_BLOCK, pb->n - first);
        const double *xb = lr_block(pb, first, nb);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nb, c, (int)dc, 1.0,
                    xb, (int)dc, w, c, 0.0, pb->z, c);
        #pragma omp parallel for schedule(static) if (nb * c >= 65536)
        for (int64_t i = 0; i < nb; i++) {
            double *z = pb->z + i * c;
            int yi = pb->y[lr_row(pb, first + i)];
            pb->rl[i] = lr_softmax_row(z, c, yi);
            z[yi] -= 1.0;                       /* R = (p - onehot) / n */
            for (int k = 0; k < c; k++) z[k] *= inv_n;
        }
        for (int64_t i = 0; i < nb; i++) loss += pb->rl[i];   /* fixed order */
        if (grad)
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)dc, c, (int)nb, 1.0,
                        xb, (int)dc, pb->z, c, 1.0, grad, c);
    }
    double reg = 0;
    for (int64_t j = 0; j < pb->d * c; j++) reg += w[j] * w[j];
    if (grad)
        for (int64_t j = 0; j < pb->d * c; j++) grad[j] += pb->lambda * w[j];
    return loss * inv_n + 0.5 * pb->lambda * reg;
}

/* Prebuilt standardised rows are kept when they fit in this many bytes. */
#define LR_PREBUILD_BYTES (INT64_C(256) << 20)

/* mean and scale (the feature sd) are the model's (D) or NULL (features used as given);
 * the problem keeps 1/scale. cap_rows: the most rows any subset of this problem will have. */
static int lr_problem_init(lr_problem *pb, const float *X, const int32_t *y, const int64_t *rows,
                           int64_t n, int64_t d, int c, int fit_bias, const double *mean,
                           const double *scale, double lambda, int64_t cap_rows, datm_error *err)
{
    memset(pb, 0, sizeof *pb);
    pb->X = X; pb->y = y; pb->rows = rows; pb->n = n; pb->d = d; pb->c = c;
    pb->fit_bias = fit_bias; pb->lambda = lambda;
    const int64_t dc = d + fit_bias;
    pb->xb = datm_alloc_array((size_t)(LR_BLOCK * dc), sizeof(double), err);
    pb->z = datm_alloc_array((size_t)(LR_BLOCK * c), sizeof(double), err);
    pb->rl = datm_alloc_array((size_t)LR_BLOCK, sizeof(double), err);
    if (!pb->xb || !pb->z || !pb->rl) return DATM_E_NOMEM;
    if (mean) {
        pb->inv = datm_alloc_array((size_t)d, sizeof(double), err);
        if (!pb->inv) return DATM_E_NOMEM;
        for (int64_t j = 0; j < d; j++) pb->inv[j] = 1.0 / scale[j];
        pb->mean = mean;
        pb->scale = pb->inv;
    }
    if (cap_rows * dc * (int64_t)sizeof(double) <= LR_PREBUILD_BYTES) {
        pb->xs = datm_alloc_array((size_t)(DATM_MAX(cap_rows, 1) * dc), sizeof(double), NULL);
        pb->xs_cap = pb->xs ? cap_rows : 0;   /* without it: standardise per block */
    }
    lr_prebuild(pb);
    return DATM_OK;
}

static void lr_problem_free(lr_problem *pb)
{
    datm_free(pb->xb);
    datm_free(pb->xs);
    datm_free(pb->inv);
    datm_free(pb->z);
    datm_free(pb->rl);
    memset(pb, 0, sizeof *pb);
}

double datm_logreg_objective(const float *X, int64_t n, int64_t d, const int32_t *y, int c,
                             int fit_bias, double lambda, const double *w, double *grad)
{
    lr_problem pb;
    datm_error err = {0};
    if (lr_problem_init(&pb, X, y, NULL, n, d, c, fit_bias, NULL, NULL, lambda, n, &err)) {
        lr_problem_free(&pb);
        return NAN;
    }
    double f = lr_eval(&pb, w, grad);
    lr_problem_free(&pb);
    return f;
}

/* ---- L-BFGS (two-loop recursion, Armijo backtracking) ---- */

static double dot(const double *a, const double *b, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static double norm_inf(const double *a, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = fabs(a[i]) > m ? fabs(a[i]) : m;
    return m;
}

/* Minimises pb's objective from w (in/out). Returns iterations, -1 on allocation failure. */
static int lr_lbfgs(lr_problem *pb, double *w, int max_iter, double tol, double *gnorm_out,
                    datm_error *err)
{
    const int64_t P = (pb->d + pb->fit_bias) * pb->c;
    double *buf = datm_alloc_array((size_t)(P * (4 + 2 * LR_MEM)), sizeof(double), err);
    if (!buf) return -1;
    double *g = buf, *gn = buf + P, *dir = buf + 2 * P, *wn = buf + 3 * P;
    double *S = buf + 4 * P, *Y = S + LR_MEM * P;
    double rho[LR_MEM], alpha[LR_MEM];
    int mem = 0, head = 0;   /* ring buffer of the last `mem` pairs, newest at head-1 */

    double f = lr_eval(pb, w, g);
    double g0 = norm_inf(g, P);
    double gtol = tol * (g0 > 1 ? g0 : 1);
    int it = 0, flat = 0;
    while (it < max_iter && norm_inf(g, P) > gtol && isfinite(f)) {
        /* dir = -H g */
        for (int64_t j = 0; j < P; j++) dir[j] = -g[j];
        for (int i = 0; i < mem; i++) {
            int s = (head - 1 - i + LR_MEM) % LR_MEM;
            alpha[s] = rho[s] * dot(S + s * P, dir, P);
            for (int64_t j = 0; j < P; j++) dir[j] -= alpha[s] * Y[s * P + j];
        }
        if (mem > 0) {
            int s = (head - 1 + LR_MEM) % LR_MEM;
            double gamma = dot(S + s * P, Y + s * P, P) / dot(Y + s * P, Y + s * P, P);
            for (int64_t j = 0; j < P; j++) dir[j] *= gamma;
        }
        for (int i = mem - 1; i >= 0; i--) {
            int s = (head - 1 - i + LR_MEM) % LR_MEM;
            double beta = rho[s] * dot(Y + s * P, dir, P);
            for (int64_t j = 0; j < P; j++) dir[j] += (alpha[s] - beta) * S[s * P + j];
        }
        double gd = dot(g, dir, P);
        if (!(gd < 0)) {   /* not a descent direction: restart from steepest descent */
            mem = 0;
            for (int64_t j = 0; j < P; j++) dir[j] = -g[j];
            gd = -dot(g, g, P);
        }
        double t = 1.0;
        if (mem == 0) {
            double gn2 = sqrt(dot(dir, dir, P));
            t = gn2 > 1 ? 1.0 / gn2 : 1.0;
        }
        double fn = f;
        int ok = 0;
        for (int ls = 0; ls < 50; ls++) {
            for (int64_t j = 0; j < P; j++) wn[j] = w[j] + t * dir[j];
            fn = lr_eval(pb, wn, gn);
            if (isfinite(fn) && fn <= f + 1e-4 * t * gd) { ok = 1; break; }
            t *= 0.5;
        }
        it++;
        if (!ok) break;   /* no decrease possible at double precision: at the optimum */
        /* store the pair s = wn - w, y = gn - g */
        double *s = S + head * P, *yv = Y + head * P;
        for (int64_t j = 0; j < P; j++) { s[j] = wn[j] - w[j]; yv[j] = gn[j] - g[j]; }
        double sy = dot(s, yv, P);
        if (sy > 1e-12 * sqrt(dot(s, s, P) * dot(yv, yv, P))) {
            rho[head] = 1.0 / sy;
            head = (head + 1) % LR_MEM;
            if (mem < LR_MEM) mem++;
        }
        double df = f - fn;
        memcpy(w, wn, (size_t)P * sizeof(double));
        memcpy(g, gn, (size_t)P * sizeof(double));
        f = fn;
        flat = df <= 1e-15 * (fabs(f) > 1 ? fabs(f) : 1) ? flat + 1 : 0;
        if (flat >= 3) break;
    }
    if (gnorm_out) *gnorm_out = norm_inf(g, P);
    datm_free(buf);
    return it;
}

/* ---- fitting ---- */

static int lr_check(const float *X, int64_t n, int64_t d, const int32_t *y, int c, datm_error *err)
{
    if (!X || !y || n < 1 || d < 1 || c < 2)
        return datm_error_set(err, DATM_E_INVALID,
                              "logreg: need N >= 1, D >= 1, C >= 2 (got N %lld, D %lld, C %d)",
                              (long long)n, (long long)d, c);
    for (int64_t i = 0; i < n; i++)
        if (y[i] < 0 || y[i] >= c)
            return datm_error_set(err, DATM_E_INVALID, "logreg: label %d of document %lld not in [0, %d)",
                                  (int)y[i], (long long)i, c);
    for (int64_t i = 0; i < n * d; i++)
        if (!isfinite(X[i]))
            return datm_error_set(err, DATM_E_NUMERIC, "logreg: feature %lld of document %lld is not finite",
                                  (long long)(i % d), (long long)(i / d));
    return DATM_OK;
}

/* Model arrays + standardisation from all N rows (column mean and sd, sd 0 -> 1). */
/* OpenBLAS keeps its own thread count (all cores by default) apart from OpenMP's: cap it at
 * `want` (>= 1) so that `--threads 1` also means one BLAS thread (its idle threads spin in
 * sched_yield and took a whole core of a shared machine). Returns the count to restore. */
static int lr_blas_cap(int want)
{
    const int had = openblas_get_num_threads();
    openblas_set_num_threads(DATM_MAX(1, DATM_MIN(had, want)));
    return had;
}

static int lr_model_init(datm_logreg *m, const float *X, int64_t n, int64_t d, int c,
                         const datm_logreg_params *p, datm_error *err)
{
    memset(m, 0, sizeof *m);
    m->n_features = d;
    m->n_classes = c;
    m->fit_bias = p->fit_bias ? 1 : 0;
    m->w = datm_alloc_array((size_t)((d + 1) * c), sizeof(double), err);
    m->mean = datm_alloc_array((size_t)d, sizeof(double), err);
    m->scale = datm_alloc_array((size_t)d, sizeof(double), err);
    if (!m->w || !m->mean || !m->scale) return DATM_E_NOMEM;
    for (int64_t j = 0; j < d; j++) m->scale[j] = 1.0;
    if (!p->standardize) return DATM_OK;
    double *sq = datm_alloc_array((size_t)d, sizeof(double), err);
    if (!sq) return DATM_E_NOMEM;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < d; j++) {
            double x = X[i * d + j];
            m->mean[j] += x;
            sq[j] += x * x;
        }
    for (int64_t j = 0; j < d; j++) {
        m->mean[j] /= (double)n;
        double var = sq[j] / (double)n - m->mean[j] * m->mean[j];
        m->scale[j] = var > 1e-24 * (1 + m->mean[j] * m->mean[j]) ? sqrt(var) : 1.0;
    }
    datm_free(sq);
    return DATM_OK;
}

/* Intercepts start at the log class frequencies of the rows (the optimum when W = 0). */
static void lr_init_bias(double *w, int64_t d, int c, int fit_bias, const int32_t *y,
                         const int64_t *rows, int64_t n)
{
    memset(w, 0, (size_t)((d + fit_bias) * c) * sizeof(double));
    if (!fit_bias) return;
    for (int k = 0; k < c; k++) w[d * c + k] = 0;
    double cnt[1024];
    if (c > 1024) return;
    for (int k = 0; k < c; k++) cnt[k] = 0.5;   /* smoothing: absent classes stay finite */
    for (int64_t i = 0; i < n; i++) cnt[y[rows ? rows[i] : i]] += 1;
    for (int k = 0; k < c; k++) w[d * c + k] = log(cnt[k] / (double)n);
}

int datm_logreg_fit(const float *X, int64_t n, int64_t d, const int32_t *y, int c,
                    double lambda, const datm_logreg_params *p_in, datm_logreg *out,
                    datm_error *err)
{
    datm_logreg_params pd;
    if (!p_in) { datm_logreg_params_default(&pd); p_in = &pd; }
    memset(out, 0, sizeof *out);
    int st = lr_check(X, n, d, y, c, err);
    if (st) return st;
    if (!(lambda >= 0)) return datm_error_set(err, DATM_E_INVALID, "logreg: lambda %g < 0", lambda);
    if ((st = lr_model_init(out, X, n, d, c, p_in, err))) { datm_logreg_free(out); return st; }
    out->lambda = lambda;
    lr_problem pb;
    if ((st = lr_problem_init(&pb, X, y, NULL, n, d, c, out->fit_bias,
                              p_in->standardize ? out->mean : NULL,
                              p_in->standardize ? out->scale : NULL, lambda, n, err))) {
        lr_problem_free(&pb);
        datm_logreg_free(out);
        return st;
    }
    lr_init_bias(out->w, d, c, out->fit_bias, y, NULL, n);
    const int blas_threads = lr_blas_cap(omp_get_max_threads());
    out->iterations = lr_lbfgs(&pb, out->w, p_in->max_iter, p_in->tol, &out->grad_norm, err);
    openblas_set_num_threads(blas_threads);
    lr_problem_free(&pb);
    if (out->iterations < 0) { datm_logreg_free(out); return DATM_E_NOMEM; }
    return DATM_OK;
}

/* Validation error count and summed log-loss of w on the given rows. */
static void lr_validate(const lr_problem *tmpl, const double *w, const int64_t *rows, int64_t n,
                        int64_t *errors, double *logloss)
{
    lr_problem pb = *tmpl;
    pb.rows = rows;
    pb.n = n;
    pb.xs = NULL;   /* validation rows are not the prebuilt training rows */
    const int c = pb.c;
    int64_t e = 0;
    double ll = 0;
    for (int64_t first = 0; first < n; first += LR_BLOCK) {
        int64_t nb = DATM_MIN((int64_t)LR_BLOCK, n - first);
        const double *xb = lr_block(&pb, first, nb);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nb, c,
                    (int)(pb.d + pb.fit_bias), 1.0, xb, (int)(pb.d + pb.fit_bias), w, c,
                    0.0, pb.z, c);
        for (int64_t i = 0; i < nb; i++) {
            double *z = pb.z + i * c;
            int yi = pb.y[rows[first + i]];
            ll += lr_softmax_row(z, c, yi);
            int best = 0;
            for (int k = 1; k < c; k++) if (z[k] > z[best]) best = k;
            e += (best != yi);
        }
    }
    *errors = e;
    *logloss = ll;
}

int datm_logreg_fit_cv(const float *X, int64_t n, int64_t d, const int32_t *y, int c,
                       const datm_logreg_params *p, datm_logreg *out, datm_error *err)
{
    datm_logreg_params pd;
    if (!p) { datm_logreg_params_default(&pd); p = &pd; }
    memset(out, 0, sizeof *out);
    int st = lr_check(X, n, d, y, c, err);
    if (st) return st;
    int kf = p->n_folds;
    if (kf < 2) return datm_error_set(err, DATM_E_INVALID, "logreg: n_folds %d < 2", kf);
    static const double grid[] = {1e-1, 3.16227766016837952e-2, 1e-2, 3.16227766016837952e-3,
                                  1e-3, 3.16227766016837952e-4, 1e-4, 3.16227766016837952e-5,
                                  1e-5, 3.16227766016837952e-6, 1e-6, 3.16227766016837952e-7};
    const double *lams = p->lambdas ? p->lambdas : grid;
    int nl = p->lambdas ? p->n_lambdas : (int)DATM_COUNTOF(grid);
    if (nl < 1) return datm_error_set(err, DATM_E_INVALID, "logreg: no lambda candidates");
    const int blas_threads = openblas_get_num_threads();   /* restored at done */

    /* The CV subset: evenly spaced within each class (stratified, deterministic). The
     * j-th document of class k (document order) goes to fold j % kf. */
    int64_t *cls_n = datm_alloc_array((size_t)c, sizeof(int64_t), err);
    int64_t *cls_seen = datm_alloc_array((size_t)c, sizeof(int64_t), err);
    int64_t *cls_kept = datm_alloc_array((size_t)c, sizeof(int64_t), err);
    int32_t *fold = datm_alloc_array((size_t)n, sizeof(int32_t), err);
    int64_t *va_err = datm_alloc_array((size_t)nl, sizeof(int64_t), err);
    double *va_ll = datm_alloc_array((size_t)nl, sizeof(double), err);
    lr_problem pb;
    memset(&pb, 0, sizeof pb);
    if (!cls_n || !cls_seen || !cls_kept || !fold || !va_err || !va_ll) {
        st = DATM_E_NOMEM;
        goto done;
    }
    for (int64_t i = 0; i < n; i++) cls_n[y[i]]++;
    double keep = (p->cv_max_docs > 0 && p->cv_max_docs < n) ? (double)p->cv_max_docs / (double)n : 1.0;
    int64_t n_cv = 0;
    for (int64_t i = 0; i < n; i++) {
        int k = y[i];
        int64_t j = cls_seen[k]++;
        /* keep document j of the class when floor((j+1) keep) steps up */
        if (keep < 1.0 && (int64_t)floor((double)(j + 1) * keep) == (int64_t)floor((double)j * keep)) {
            fold[i] = -1;
            continue;
        }
        fold[i] = (int32_t)(cls_kept[k]++ % kf);
        n_cv++;
    }
    if ((st = lr_model_init(out, X, n, d, c, p, err))) goto done;

    /* Path from the largest lambda down, each fold warm-started from its previous solution.
     * Folds run in parallel (one thread each, BLAS single-threaded: no nested threads), their
     * counts summed in fold order afterwards, so the result does not depend on threads. */
    int *order = (int *)datm_alloc_array((size_t)nl, sizeof(int), err);
    int64_t *fe = datm_alloc_array((size_t)(kf * nl), sizeof(int64_t), err);
    double *fll = datm_alloc_array((size_t)(kf * nl), sizeof(double), err);
    int *fst = (int *)datm_alloc_array((size_t)kf, sizeof(int), err);
    if (!order || !fe || !fll || !fst) {
        datm_free(order); datm_free(fe); datm_free(fll); datm_free(fst);
        st = DATM_E_NOMEM;
        goto done;
    }
    for (int i = 0; i < nl; i++) order[i] = i;
    for (int i = 1; i < nl; i++)   /* insertion sort, descending lambda */
        for (int j = i; j > 0 && lams[order[j]] > lams[order[j - 1]]; j--) {
            int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
        }
    const int64_t P = (d + out->fit_bias) * c;
    const int nt = DATM_MIN(omp_get_max_threads(), kf);
    lr_blas_cap(nt > 1 ? 1 : omp_get_max_threads());
    #pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int f = 0; f < kf; f++) {
        datm_error ferr = {0};
        int64_t *rows = datm_alloc_array((size_t)n, sizeof(int64_t), &ferr);
        int64_t *va = datm_alloc_array((size_t)n, sizeof(int64_t), &ferr);
        double *w = datm_alloc_array((size_t)P, sizeof(double), &ferr);
        lr_problem fp;
        memset(&fp, 0, sizeof fp);
        int64_t ntr = 0, nva = 0;
        if (!rows || !va || !w) fst[f] = DATM_E_NOMEM;
        for (int64_t i = 0; i < n && !fst[f]; i++) {
            if (fold[i] < 0) continue;
            if (fold[i] == f) va[nva++] = i; else rows[ntr++] = i;
        }
        if (!fst[f] && ntr > 0 && nva > 0) {
            fst[f] = lr_problem_init(&fp, X, y, rows, ntr, d, c, out->fit_bias,
                                     p->standardize ? out->mean : NULL,
                                     p->standardize ? out->scale : NULL, 0, ntr, &ferr);
            if (!fst[f]) lr_init_bias(w, d, c, out->fit_bias, y, rows, ntr);
            for (int li = 0; li < nl && !fst[f]; li++) {
                int l = order[li];
                fp.lambda = lams[l];
                if (lr_lbfgs(&fp, w, p->max_iter, p->tol, NULL, &ferr) < 0) {
                    fst[f] = DATM_E_NOMEM;
                    break;
                }
                lr_validate(&fp, w, va, nva, &fe[f * nl + l], &fll[f * nl + l]);
            }
        }
        lr_problem_free(&fp);
        datm_free(rows);
        datm_free(va);
        datm_free(w);
    }
    lr_blas_cap(omp_get_max_threads());   /* the final fit: the caller's budget */
    for (int f = 0; f < kf; f++) {
        if (fst[f] && !st) st = datm_error_set(err, fst[f], "logreg: cross-validation fold %d "
                                               "failed (out of memory)", f);
        for (int l = 0; l < nl; l++) {
            va_err[l] += fe[f * nl + l];
            va_ll[l] += fll[f * nl + l];
        }
    }
    if (p->verbose)
        for (int li = 0; li < nl; li++)
            datm_info("logreg cv: lambda %.9g error %.9g logloss %.9g", lams[order[li]],
                      (double)va_err[order[li]] / (double)n_cv, va_ll[order[li]] / (double)n_cv);
    datm_free(order); datm_free(fe); datm_free(fll); datm_free(fst);
    if (st) goto done;
    int best = 0;
    for (int l = 1; l < nl; l++) {
        if (va_err[l] < va_err[best] ||
            (va_err[l] == va_err[best] &&
             (va_ll[l] < va_ll[best] || (va_ll[l] == va_ll[best] && lams[l] > lams[best]))))
            best = l;
    }
    out->n_lambdas = nl;
    out->cv_lambdas = datm_alloc_array((size_t)nl, sizeof(double), err);
    out->cv_error = datm_alloc_array((size_t)nl, sizeof(double), err);
    out->cv_logloss = datm_alloc_array((size_t)nl, sizeof(double), err);
    if (!out->cv_lambdas || !out->cv_error || !out->cv_logloss) { st = DATM_E_NOMEM; goto done; }
    for (int l = 0; l < nl; l++) {
        out->cv_lambdas[l] = lams[l];
        out->cv_error[l] = (double)va_err[l] / (double)n_cv;
        out->cv_logloss[l] = va_ll[l] / (double)n_cv;
    }
    out->lambda = lams[best];

    /* Final fit on all documents. */
    pb.rows = NULL;
    pb.n = n;
    pb.lambda = out->lambda;
    lr_problem_free(&pb);
    if ((st = lr_problem_init(&pb, X, y, NULL, n, d, c, out->fit_bias,
                              p->standardize ? out->mean : NULL,
                              p->standardize ? out->scale : NULL, out->lambda, n, err)))
        goto done;
    lr_init_bias(out->w, d, c, out->fit_bias, y, NULL, n);
    out->iterations = lr_lbfgs(&pb, out->w, p->max_iter, p->tol, &out->grad_norm, err);
    if (out->iterations < 0) st = DATM_E_NOMEM;

done:
    openblas_set_num_threads(blas_threads);
    lr_problem_free(&pb);
    datm_free(cls_n); datm_free(cls_seen); datm_free(cls_kept); datm_free(fold);
    datm_free(va_err); datm_free(va_ll);
    if (st) datm_logreg_free(out);
    return st;
}

void datm_logreg_predict_proba(const datm_logreg *m, const float *X, int64_t n, float *probs)
{
    const int64_t d = m->n_features;
    const int c = m->n_classes;
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        double z[1024];
        DATM_ASSERT(c <= 1024);
        for (int k = 0; k < c; k++) z[k] = m->fit_bias ? m->w[d * c + k] : 0.0;
        const float *x = X + i * d;
        for (int64_t j = 0; j < d; j++) {
            double xs = ((double)x[j] - m->mean[j]) / m->scale[j];
            if (xs == 0) continue;
            const double *wr = m->w + j * c;
            for (int k = 0; k < c; k++) z[k] += xs * wr[k];
        }
        lr_softmax_row(z, c, -1);
        for (int k = 0; k < c; k++) probs[i * c + k] = (float)z[k];
    }
}

void datm_logreg_predict(const datm_logreg *m, const float *X, int64_t n, int32_t *pred)
{
    const int c = m->n_classes;
    float *pr = datm_alloc_array((size_t)(n * c), sizeof(float), NULL);
    DATM_ASSERT(pr != NULL);
    datm_logreg_predict_proba(m, X, n, pr);
    for (int64_t i = 0; i < n; i++) {
        int best = 0;
        for (int k = 1; k < c; k++) if (pr[i * c + k] > pr[i * c + best]) best = k;
        pred[i] = best;
    }
    datm_free(pr);
}

void datm_features_concat(int L, const int64_t *k, const float *const *theta, int64_t n,
                          int transform, float *X)
{
    int64_t S = 0;
    for (int l = 0; l < L; l++) S += k[l];
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        float *o = X + i * S;
        for (int l = 0; l < L; l++) {
            const float *t = theta[l] + i * k[l];
            double sum = 0;
            if (transform == DATM_FEAT_PROP)
                for (int64_t j = 0; j < k[l]; j++) sum += t[j];
            double inv = sum > DBL_MIN ? 1.0 / sum : 0.0;
            for (int64_t j = 0; j < k[l]; j++)
                o[j] = transform == DATM_FEAT_LOG1P ? log1pf(t[j])
                     : transform == DATM_FEAT_PROP  ? (float)(t[j] * inv)
                                                    : t[j];
            o += k[l];
        }
    }
}
