/* engine/eval/linclass_ovr.c: one-vs-rest logistic regression as independent binary fits of
 * liblinear's L2R_LR, the warm-started cross-validation path over them, and the assembly of
 * the final fits into a liblinear model (linclass.h).
 *
 * liblinear's train() runs a multi-class problem's one-vs-rest fits one after another; here
 * every (fold, class) fit is its own train() call on a two-class problem, so that they run
 * in parallel (2 cores: 75 fits per CV step on 15 classes balance where 5 folds do not).
 * Each fit is exactly liblinear's: its two-class model of "class k" (+1) against the rest
 * (-1) is the k-th one-vs-rest function; with exactly two classes the second function is
 * minus the first, as in liblinear's own two-class models. Every fit is single-threaded and
 * writes only its own vector, so the results do not depend on the thread count.
 * The final fits are cold (liblinear's `train -s 0 -c C` on each two-class problem); the
 * CV path's are warm-started with an absolute tolerance (lc_abs_eps). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/linclass_internal.h"

/* ---- binary fits ---- */

/* w (D + 1): the solution of "class cls (+1) against the rest (-1)" over rows at C, by
 * liblinear's train warm-started from init (read before w is written; may alias w).
 * Returns 0, 1 when liblinear failed. */
static int lc_fit_binary(const struct problem *rows, int cls, const struct parameter *base,
                         double C, double eps, const double *init, double *w)
{
    double *yb = malloc((size_t)(rows->l > 0 ? rows->l : 1) * sizeof *yb);
    if (!yb) return 1;
    for (int i = 0; i < rows->l; i++) yb[i] = rows->y[i] == cls ? 1.0 : -1.0;
    struct problem bp = {rows->l, rows->n, yb, rows->x, rows->bias};
    struct parameter param = *base;
    param.C = C;
    param.eps = eps;
    param.init_sol = (double *)init;
    struct model *m = train(&bp, &param);
    /* liblinear orders a -1/+1 problem's labels as +1, -1: w is class cls's function */
    const int bad = !m || m->nr_class != 2 || m->label[0] != 1;
    if (!bad) memcpy(w, m->w, (size_t)rows->n * sizeof *w);
    if (m) free_and_destroy_model(&m);
    free(yb);
    return bad;
}

static double lc_dot(const double *w, const struct feature_node *x)
{
    double s = 0;
    for (; x->index != -1; x++) s += w[x->index - 1] * x->value;
    return s;
}

/* liblinear stops a fit when |grad| <= eps (max(min(#pos, #neg), 1) / l) |grad at w = 0|,
 * relative to the gradient at 0, which grows with C (|grad at 0| = C |sum_n y_n x_n| / 2).
 * Along a warm-started path that criterion is met at the start once C is large: on IMDB
 * (20,000 documents, two classes) every fit from C = 0.0025 on kept its warm start at
 * eps 0.1, the CV accuracy frozen. The path's fits use an absolute tolerance instead: the
 * objective's Hessian is >= I, so |grad| <= tol bounds the error of w by tol. This is the
 * eps that gives |grad| <= tol_abs (g0c = |grad at w = 0| at this C, scale = the
 * min(#pos, #neg) / l factor). */
static double lc_abs_eps(double tol_abs, double g0c, double scale)
{
    return g0c > 0 ? tol_abs / (scale * g0c) : 1.0;
}

/* ---- the one-vs-rest problems over one set of rows ---- */

typedef struct lc_ovr {
    const struct problem *rows;
    int     n_fit;      /* binary problems: the classes present, or 1 when exactly two are */
    int    *cls;        /* (n_fit) their positive classes, ascending */
    int     other;      /* exactly two classes present: the second (its function is -w) */
    int     only;       /* exactly one class present: it; else -1 */
    double *w;          /* (n_fit, D + 1) current solutions (0 before the first fit) */
    double *g0;         /* (n_fit) |sum_n y_n x_n| / 2: the gradient norm at w = 0 over C */
    double *tol_scale;  /* (n_fit) max(min(#pos, #neg), 1) / l: liblinear's scaling of eps */
} lc_ovr;

static int lc_ovr_init(lc_ovr *o, const struct problem *rows, int c, datm_error *err)
{
    memset(o, 0, sizeof *o);
    o->rows = rows;
    o->only = o->other = -1;
    int64_t *count = datm_alloc_array((size_t)c, sizeof *count, err);
    o->cls = datm_alloc_array((size_t)c, sizeof *o->cls, err);
    if (!count || !o->cls) { datm_free(count); return DATM_E_NOMEM; }
    for (int i = 0; i < rows->l; i++) count[(int)rows->y[i]]++;
    int np = 0;
    for (int k = 0; k < c; k++)
        if (count[k] > 0) o->cls[np++] = k;
    datm_free(count);
    if (np == 1) o->only = o->cls[0];
    if (np == 2) o->other = o->cls[1];
    o->n_fit = np == 1 ? 0 : np == 2 ? 1 : np;
    const int dp1 = rows->n;
    const size_t nf = (size_t)(o->n_fit > 0 ? o->n_fit : 1), nw = nf * (size_t)dp1;
    o->w = datm_alloc_array(nw, sizeof(double), err);
    o->g0 = datm_alloc_array(nf, sizeof(double), err);
    o->tol_scale = datm_alloc_array(nf, sizeof(double), err);
    double *sum = datm_alloc_array((size_t)(c + 1) * (size_t)dp1, sizeof(double), err);
    if (!o->w || !o->g0 || !o->tol_scale || !sum) { datm_free(sum); return DATM_E_NOMEM; }
    /* per class the sum of its rows, row c the sum of all: sum_n y_n x_n = 2 S_k - S */
    for (int i = 0; i < rows->l; i++)
        for (const struct feature_node *x = rows->x[i]; x->index != -1; x++) {
            sum[(size_t)(int)rows->y[i] * dp1 + x->index - 1] += x->value;
            sum[(size_t)c * dp1 + x->index - 1] += x->value;
        }
    for (int i = 0; i < o->n_fit; i++) {
        const int k = o->cls[i];
        int64_t npos = 0;
        for (int r = 0; r < rows->l; r++) npos += (int)rows->y[r] == k;
        double g = 0;
        for (int j = 0; j < dp1; j++) {
            const double a = 2 * sum[(size_t)k * dp1 + j] - sum[(size_t)c * dp1 + j];
            g += a * a;
        }
        o->g0[i] = 0.5 * sqrt(g);
        const int64_t mn = DATM_MIN(npos, (int64_t)rows->l - npos);
        o->tol_scale[i] = (double)DATM_MAX(mn, 1) / (double)(rows->l > 0 ? rows->l : 1);
    }
    datm_free(sum);
    return DATM_OK;
}

static void lc_ovr_free(lc_ovr *o)
{
    datm_free(o->cls);
    datm_free(o->w);
    datm_free(o->g0);
    datm_free(o->tol_scale);
    memset(o, 0, sizeof *o);
}

/* liblinear's prediction rule: the class of the largest one-vs-rest decision value (first
 * on ties); with two classes the first when w . x > 0. */
static int lc_ovr_predict(const lc_ovr *o, const struct feature_node *x)
{
    if (o->only >= 0) return o->only;
    const int dp1 = o->rows->n;
    if (o->other >= 0) return lc_dot(o->w, x) > 0 ? o->cls[0] : o->other;
    int best = 0;
    double top = -INFINITY;
    for (int i = 0; i < o->n_fit; i++) {
        const double v = lc_dot(o->w + (size_t)i * dp1, x);
        if (v > top) { top = v; best = i; }
    }
    return o->cls[best];
}

/* One fit per (set, problem) of `n_sets` problem sets, in parallel. tol > 0: warm-started
 * from the current solutions, each stopping when its gradient norm is at most
 * tol max(1, |w_prev|) (see lc_abs_eps); tol == 0: at liblinear's relative eps, warm-started
 * from the current solutions when `warm`, else cold. Returns the number of failed fits. */
static int lc_fit_all(lc_ovr *sets, int n_sets, const struct parameter *base, double C,
                      double eps, double tol, int warm)
{
    int n_tasks = 0;
    for (int s = 0; s < n_sets; s++) n_tasks += sets[s].n_fit;
    int failed = 0;
    #pragma omp parallel for schedule(dynamic, 1) reduction(+ : failed)
    for (int t = 0; t < n_tasks; t++) {
        int s = 0, i = t;
        while (i >= sets[s].n_fit) i -= sets[s++].n_fit;
        const int dp1 = sets[s].rows->n;
        double *w = sets[s].w + (size_t)i * dp1;
        double e = eps;
        if (tol > 0) {
            double wn = 0;
            for (int j = 0; j < dp1; j++) wn += w[j] * w[j];
            e = lc_abs_eps(tol * fmax(1.0, sqrt(wn)), C * sets[s].g0[i], sets[s].tol_scale[i]);
        } else if (!warm) {
            memset(w, 0, (size_t)dp1 * sizeof *w);
        }
        failed += lc_fit_binary(sets[s].rows, sets[s].cls[i], base, C, e,
                                tol > 0 || warm ? w : NULL, w);
    }
    return failed;
}

/* ---- cross-validation ---- */

/* The CV subset (evenly spaced within each class, in document order) and its stratified
 * folds: the j-th kept document of a class goes to fold j % K; -1 = left out. Returns the
 * number kept. */
static int64_t lc_cv_folds(const int32_t *y, int64_t n, int c, int64_t max_docs, int k,
                           int32_t *fold, int64_t *seen, int64_t *kept_per_class)
{
    const double keep = (max_docs > 0 && max_docs < n) ? (double)max_docs / (double)n : 1.0;
    int64_t kept = 0;
    for (int j = 0; j < c; j++) seen[j] = kept_per_class[j] = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t j = seen[y[i]]++;
        /* keep document j of its class when floor((j + 1) keep) steps up */
        if (keep < 1.0 && (int64_t)floor((double)(j + 1) * keep) == (int64_t)floor((double)j * keep)) {
            fold[i] = -1;
            continue;
        }
        fold[i] = (int32_t)(kept_per_class[y[i]]++ % k);
        kept++;
    }
    return kept;
}

/* A fold: the other folds' rows (pointers into `all`) as its training problem, its own rows
 * for validation. */
typedef struct lc_fold {
    struct problem        tr;
    struct feature_node **va;     /* (n_va) */
    double               *va_y;   /* (n_va) */
    int64_t               n_va;
} lc_fold;

static int lc_folds_init(lc_fold *fd, int k, const struct problem *all, const int32_t *fold,
                         datm_error *err)
{
    for (int f = 0; f < k; f++) {
        int64_t ntr = 0, nva = 0;
        for (int64_t i = 0; i < all->l; i++)
            if (fold[i] >= 0) { if (fold[i] == f) nva++; else ntr++; }
        fd[f].tr.x = datm_alloc_array((size_t)(ntr > 0 ? ntr : 1), sizeof *fd[f].tr.x, err);
        fd[f].tr.y = datm_alloc_array((size_t)(ntr > 0 ? ntr : 1), sizeof(double), err);
        fd[f].va = datm_alloc_array((size_t)(nva > 0 ? nva : 1), sizeof *fd[f].va, err);
        fd[f].va_y = datm_alloc_array((size_t)(nva > 0 ? nva : 1), sizeof(double), err);
        if (!fd[f].tr.x || !fd[f].tr.y || !fd[f].va || !fd[f].va_y) return DATM_E_NOMEM;
        fd[f].tr.l = (int)ntr;
        fd[f].tr.n = all->n;
        fd[f].tr.bias = all->bias;
        fd[f].n_va = nva;
        ntr = nva = 0;
        for (int64_t i = 0; i < all->l; i++) {
            if (fold[i] < 0) continue;
            if (fold[i] == f) { fd[f].va[nva] = all->x[i]; fd[f].va_y[nva++] = all->y[i]; }
            else { fd[f].tr.x[ntr] = all->x[i]; fd[f].tr.y[ntr++] = all->y[i]; }
        }
    }
    return DATM_OK;
}

static void lc_folds_free(lc_fold *fd, int k)
{
    for (int f = 0; fd && f < k; f++) {
        datm_free(fd[f].tr.x);
        datm_free(fd[f].tr.y);
        datm_free(fd[f].va);
        datm_free(fd[f].va_y);
    }
    datm_free(fd);
}

/* The path of linclass.h. */
#define LC_C0_PER_DOC 40.0   /* C_0 n = 40: a per-document penalty 1 / (C n) of 0.025 */
#define LC_MIN_C      1e-6
#define LC_RATIO      4.0
#define LC_MAX_C      1024.0 /* liblinear's find_parameters' max_C */
#define LC_MAX_STEPS  16

/* Correct validation predictions of every fold at the current solutions. */
static int64_t lc_cv_correct(const lc_fold *fd, const lc_ovr *ov, int k)
{
    int64_t correct = 0;
    #pragma omp parallel for schedule(static) reduction(+ : correct)
    for (int f = 0; f < k; f++)
        for (int64_t i = 0; i < fd[f].n_va; i++)
            correct += lc_ovr_predict(&ov[f], fd[f].va[i]) == (int)fd[f].va_y[i];
    return correct;
}

/* One path step: every fold's fits at C from their current solutions, and the CV accuracy. */
static int lc_cv_step(const lc_fold *fd, lc_ovr *ov, int k, const struct parameter *base,
                      double C, const datm_linclass_params *p, int64_t ncv, double *acc,
                      datm_error *err)
{
    const double t0 = datm_time_now();
    const int failed = lc_fit_all(ov, k, base, C, 0, p->cv_tol, 1);
    if (failed)
        return datm_error_set(err, DATM_E_NOMEM, "linclass: %d of liblinear's fits failed at C %g",
                              failed, C);
    *acc = (double)lc_cv_correct(fd, ov, k) / (double)ncv;
    if (p->verbose) datm_info("linclass cv: C %.6g accuracy %.6f (%.2fs)", C, *acc, datm_time_now() - t0);
    return DATM_OK;
}

/* w_mean (C, D + 1): per class the mean over the folds of its one-vs-rest solution (minus
 * the first function for the second of exactly two classes); 0 for a class no fold fitted. */
static void lc_cv_mean(const lc_ovr *ov, int k, int c, double *w_mean)
{
    const int dp1 = ov[0].rows->n;
    for (int j = 0; j < c; j++) {
        double *o = w_mean + (size_t)j * dp1;
        int n = 0;
        memset(o, 0, (size_t)dp1 * sizeof *o);
        for (int f = 0; f < k; f++) {
            const double sign = ov[f].other == j ? -1.0 : 1.0;
            const double *w = NULL;
            for (int i = 0; i < ov[f].n_fit; i++)
                if (ov[f].cls[i] == j) w = ov[f].w + (size_t)i * dp1;
            if (ov[f].other == j) w = ov[f].w;
            if (!w) continue;
            for (int d = 0; d < dp1; d++) o[d] += sign * w[d];
            n++;
        }
        for (int d = 0; n > 1 && d < dp1; d++) o[d] /= n;
    }
}

int datm_linclass_cv(const struct problem *all, const int32_t *y, int c,
                     const struct parameter *base, const datm_linclass_params *p,
                     datm_linclass *m, double *w_best, datm_error *err)
{
    const int64_t n = all->l;
    const int k = p->n_folds;
    int32_t *fold = datm_alloc_array((size_t)n, sizeof *fold, err);
    int64_t *seen = datm_alloc_array((size_t)c, sizeof *seen, err);
    int64_t *kept = datm_alloc_array((size_t)c, sizeof *kept, err);
    lc_fold *fd = datm_alloc_array((size_t)k, sizeof *fd, err);
    lc_ovr *ov = datm_alloc_array((size_t)k, sizeof *ov, err);
    m->path_C = datm_alloc_array(LC_MAX_STEPS, sizeof(double), err);
    m->path_accuracy = datm_alloc_array(LC_MAX_STEPS, sizeof(double), err);
    int rc = (!fold || !seen || !kept || !fd || !ov || !m->path_C || !m->path_accuracy)
           ? DATM_E_NOMEM : DATM_OK;
    int64_t ncv = 0;
    if (!rc) {
        ncv = lc_cv_folds(y, n, c, p->cv_max_docs, k, fold, seen, kept);
        if (ncv < k)
            rc = datm_error_set(err, DATM_E_INVALID, "linclass: %lld documents for %d-fold "
                                "cross-validation", (long long)ncv, k);
    }
    if (!rc) rc = lc_folds_init(fd, k, all, fold, err);
    for (int f = 0; f < k && !rc; f++) rc = lc_ovr_init(&ov[f], &fd[f].tr, c, err);

    /* up from C_0 until the accuracy stops gaining; then, when C_0 itself was best, down
     * from it the same way */
    double best_acc = -1, ref_acc = -1;
    const double n_tr = (double)ncv * (double)(k - 1) / (double)k, C0 = LC_C0_PER_DOC / n_tr;
    for (int dir = 1; dir >= -1 && !rc; dir -= 2) {
        int stall = 0;
        for (double C = dir > 0 ? C0 : C0 / LC_RATIO;
             !rc && C <= LC_MAX_C && C >= LC_MIN_C && m->n_path < LC_MAX_STEPS;
             C = dir > 0 ? C * LC_RATIO : C / LC_RATIO) {
            double acc = 0;
            rc = lc_cv_step(fd, ov, k, base, C, p, ncv, &acc, err);
            if (rc) break;
            m->path_C[m->n_path] = C;
            m->path_accuracy[m->n_path++] = acc;
            if (acc > best_acc || (acc == best_acc && C < m->C)) {
                best_acc = acc;
                m->C = C;
                if (w_best) lc_cv_mean(ov, k, c, w_best);
            }
            /* a gain counts when it exceeds one binomial standard error of the reference */
            const double r = ref_acc > 0 ? ref_acc : 0;
            if (acc > ref_acc + sqrt(r * (1 - r) / (double)ncv)) { ref_acc = acc; stall = 0; }
            else if (++stall >= p->cv_patience) break;
        }
        if (m->C != C0) break;
    }
    if (!rc) {
        /* on all N documents, scaled by n_cv / N: keeps a CV subset's per-document penalty
         * and is 1 when the CV used every document (liblinear's find_parameters convention) */
        m->C *= (double)ncv / (double)n;
        m->cv_accuracy = best_acc;
        m->n_cv_docs = ncv;
    }
    for (int f = 0; ov && f < k; f++) lc_ovr_free(&ov[f]);
    datm_free(ov);
    lc_folds_free(fd, k);
    datm_free(fold);
    datm_free(seen);
    datm_free(kept);
    return rc;
}

/* ---- the final model ---- */

struct model *datm_linclass_ovr_fit(const struct problem *all, int c,
                                    const struct parameter *base, const double *init,
                                    datm_error *err)
{
    const int dp1 = all->n;
    lc_ovr o;
    if (lc_ovr_init(&o, all, c, err)) { lc_ovr_free(&o); return NULL; }
    if (o.n_fit == 0) {
        datm_error_set(err, DATM_E_INVALID, "linclass: the training labels hold one class only");
        lc_ovr_free(&o);
        return NULL;
    }
    for (int i = 0; init && i < o.n_fit; i++)
        memcpy(o.w + (size_t)i * dp1, init + (size_t)o.cls[i] * dp1, (size_t)dp1 * sizeof *o.w);
    const int failed = lc_fit_all(&o, 1, base, base->C, base->eps, 0, init != NULL);
    /* liblinear's layout: w[j * nr_w + i], nr_w = 1 for two classes; malloc'd, since
     * free_and_destroy_model frees it */
    const int nc = o.other >= 0 ? 2 : o.n_fit, nw = o.n_fit;
    struct model *m = failed ? NULL : calloc(1, sizeof *m);
    if (m) {
        m->param = *base;
        m->param.init_sol = NULL;
        m->nr_class = nc;
        m->nr_feature = dp1 - 1;
        m->bias = all->bias;
        m->label = malloc((size_t)nc * sizeof *m->label);
        m->w = malloc((size_t)dp1 * (size_t)nw * sizeof *m->w);
        if (!m->label || !m->w) { free(m->label); free(m->w); free(m); m = NULL; }
    }
    if (m) {
        for (int i = 0; i < o.n_fit; i++) m->label[i] = o.cls[i];
        if (o.other >= 0) m->label[1] = o.other;
        for (int i = 0; i < nw; i++)
            for (int j = 0; j < dp1; j++) m->w[(size_t)j * nw + i] = o.w[(size_t)i * dp1 + j];
    } else {
        datm_error_set(err, DATM_E_NOMEM, "linclass: %s", failed ? "liblinear's train failed"
                                                                 : "out of memory");
    }
    lc_ovr_free(&o);
    return m;
}
