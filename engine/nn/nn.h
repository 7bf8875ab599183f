/* engine/nn: the small neural-network toolkit the encoders are built from.
 *
 * - datm_params: every trainable number of a model in ONE contiguous float block (value and
 *   gradient), addressed through named views ("l1.W3"), so Adam, checkpoints and gradient
 *   checks see a flat vector. Views start on 64-byte boundaries.
 * - dense layers, batch-major: activations are (B, n) row-major, weights (n_in, n_out), so a
 *   layer is Y = X W + b (one sgemm). A sparse-input variant takes a CSR batch (word counts).
 * - softplus and its derivative (the sigmoid).
 * - Adam with bias correction (Kingma & Ba, Alg. 1).
 * - a central-difference gradient checker in double precision.
 * Every dense kernel exists in f32 (training, inference) and f64 (gradient checks); both are
 * generated from one source (nn_dense_impl.h), so checking the f64 path checks the logic of
 * the f32 one. Letters: B documents in the batch, n_in/n_out layer widths. */
#ifndef DATM_NN_H
#define DATM_NN_H

#include <stdint.h>

#include "core/core.h"
#include "data/csr.h"
#include "rand/rand.h"

/* ---- parameters: one block, named views ---- */
#define DATM_PARAM_NAME_MAX 48

typedef struct datm_param_view {
    char    name[DATM_PARAM_NAME_MAX];
    int64_t offset;          /* first element in the block; a multiple of 16 (64 bytes) */
    int64_t rows, cols;      /* row-major (rows, cols); a bias is (1, cols) */
} datm_param_view;

typedef struct datm_params {
    int64_t          size;       /* elements in the block, alignment padding included */
    int              n_views, cap_views;
    datm_param_view *views;      /* (n_views) */
    float           *value;      /* (size); NULL until datm_params_alloc */
    float           *grad;       /* (size) */
} datm_params;

/* Declares a view (before datm_params_alloc). Returns its index >= 0, or -1 with err set. */
int  datm_params_add(datm_params *p, const char *name, int64_t rows, int64_t cols,
                     datm_error *err);
/* Allocates value and grad (zeroed). */
int  datm_params_alloc(datm_params *p, datm_error *err);
void datm_params_free(datm_params *p);             /* frees and zeroes the struct */
int  datm_params_find(const datm_params *p, const char *name);   /* index or -1 */
/* Total elements in views (without padding). */
int64_t datm_params_count(const datm_params *p);

static inline float *datm_params_value(const datm_params *p, int i)
{
    return p->value + p->views[i].offset;
}
static inline float *datm_params_grad(const datm_params *p, int i)
{
    return p->grad + p->views[i].offset;
}
static inline int64_t datm_params_len(const datm_params *p, int i)
{
    return p->views[i].rows * p->views[i].cols;
}

void datm_params_fill_normal(datm_params *p, int i, double sd, datm_rng *rng);
void datm_params_fill_uniform(datm_params *p, int i, double lo, double hi, datm_rng *rng);
void datm_params_fill_const(datm_params *p, int i, double v);
void datm_params_zero_grad(datm_params *p);

/* ---- dense layers (batch-major) ---- */
/* Y (B, n_out) = X (B, n_in) W (n_in, n_out) + b (n_out); b may be NULL. */
void datm_dense_forward_f32(int64_t B, int64_t n_in, int64_t n_out, const float *X,
                            const float *W, const float *b, float *Y);
void datm_dense_forward_f64(int64_t B, int64_t n_in, int64_t n_out, const double *X,
                            const double *W, const double *b, double *Y);
/* Backward of the above for upstream dY (B, n_out):
 * dW (n_in, n_out) = X^T dY and db (n_out) = colsum dY (both overwritten; either may be
 * NULL); dX (B, n_in) = dY W^T + dx_beta dX (NULL: not needed). */
void datm_dense_backward_f32(int64_t B, int64_t n_in, int64_t n_out, const float *X,
                             const float *W, const float *dY, float *dW, float *db,
                             float *dX, float dx_beta);
void datm_dense_backward_f64(int64_t B, int64_t n_in, int64_t n_out, const double *X,
                             const double *W, const double *dY, double *dW, double *db,
                             double *dX, double dx_beta);

/* Sparse input: the rows of X (B, n_in) with values xval (X->nnz) in place of X->val (e.g.
 * log(1 + counts)); Y (B, n_out) = X W + b. Backward: dW (n_in, n_out) = X^T dY and
 * db = colsum dY (overwritten). The input gradient is never needed (X is data). */
void datm_sparse_dense_forward_f32(const datm_csr *X, const float *xval, int64_t n_out,
                                   const float *W, const float *b, float *Y);
void datm_sparse_dense_forward_f64(const datm_csr *X, const double *xval, int64_t n_out,
                                   const double *W, const double *b, double *Y);
void datm_sparse_dense_backward_f32(const datm_csr *X, const float *xval, int64_t n_out,
                                    const float *dY, float *dW, float *db);
void datm_sparse_dense_backward_f64(const datm_csr *X, const double *xval, int64_t n_out,
                                    const double *dY, double *dW, double *db);

/* y = softplus(z) elementwise (y may alias z only if z is not needed for backward). */
void datm_softplus_f32(int64_t n, const float *z, float *y);
void datm_softplus_f64(int64_t n, const double *z, double *y);
/* dz = dy * sigmoid(z) (the derivative of softplus at its input z). dz may alias dy. */
void datm_softplus_backward_f32(int64_t n, const float *z, const float *dy, float *dz);
void datm_softplus_backward_f64(int64_t n, const double *z, const double *dy, double *dz);

/* ---- Adam ---- */
typedef struct datm_adam {
    double   lr, beta1, beta2, eps;
    double   clip;           /* element-wise gradient clip |g| <= clip (0 = none) */
    double   rms_clip;       /* element-wise clip |g_i| <= rms_clip sqrt(vhat_i) (0 = none) */
    int64_t  n_clipped;      /* entries rms_clip has clipped so far (a diagnostic, not state) */
    int64_t  t;              /* steps taken */
    int64_t  size;
    float   *m, *v;          /* (size) first and second moment estimates */
} datm_adam;

int  datm_adam_init(datm_adam *a, int64_t size, double lr, double beta1, double beta2,
                    double eps, datm_error *err);
void datm_adam_free(datm_adam *a);
/* One step on x (size) with gradient g (of a loss to MINIMISE):
 * m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; x -= lr (m/(1-b1^t)) / (sqrt(v/(1-b2^t)) + eps).
 * Entries with a non-finite gradient are left untouched; returns how many there were.
 * With rms_clip > 0 each g_i is first clipped to +-rms_clip sqrt(v_i / (1 - b2^(t-1))), its
 * own bias-corrected second moment before the step (entries with v_i = 0 are not clipped),
 * and the clipped entries are counted in n_clipped. */
int64_t datm_adam_step(datm_adam *a, float *x, const float *g);
/* The same step on entries [i0, i1) only (t advances as for a whole step): each entry gets
 * exactly the operations of datm_adam_step, so ranks that step disjoint ranges of one block
 * hold together what one whole step gives (data-parallel training, engine/par/par.h). */
int64_t datm_adam_step_range(datm_adam *a, float *x, const float *g, int64_t i0, int64_t i1);

/* ---- gradient checker (double precision) ---- */
/* Returns the objective at x and, when grad != NULL, its analytic gradient (n). */
typedef double (*datm_objective_f64)(void *ctx, const double *x, double *grad);

typedef struct datm_gradcheck {
    int64_t n_checked;
    int64_t n_below_floor;    /* entries where both |analytic| and |numeric| < floor */
    double  max_rel_err;      /* max |a - d| / max(|a|, |d|, floor) */
    int64_t worst;            /* index of the worst entry */
    double  worst_analytic, worst_numeric;
} datm_gradcheck;

/* Compares the analytic gradient with 4th-order central differences
 * (f(x-2h) - 8 f(x-h) + 8 f(x+h) - f(x+2h)) / 12h, h = rel_h * max(1, |x_i|), at the indices
 * idx[0..n_idx) (idx NULL: all n). x is restored on return. */
int datm_gradcheck_f64(datm_objective_f64 f, void *ctx, double *x, int64_t n,
                       const int64_t *idx, int64_t n_idx, double rel_h, double floor,
                       datm_gradcheck *out, datm_error *err);

#endif
