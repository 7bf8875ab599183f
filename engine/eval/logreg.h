/* engine/eval/logreg.h: multinomial logistic regression with an L2 penalty, the classifier
 * that turns an unsupervised model's document features (theta of all layers) into the
 * "DATM + logistic regression" baseline of the paper's Tables 3-4 (docs/reference.md 4: the
 * authors use liblinear -s 0 with C chosen by 5-fold cross-validation on the training set).
 *
 * Objective (per document, so the penalty does not depend on N):
 *   f(W, b) = (1/N) sum_n -log softmax(x~_n W + b)[y_n] + (lambda/2) ||W||_F^2,
 * x~ = standardised features (training mean/sd) when requested; b is not penalised.
 * (liblinear's C corresponds to lambda = 1 / (C N).) Minimised by L-BFGS in double.
 *
 * Deterministic: folds are stratified by class in document order (no randomness), the loss
 * is summed over fixed row blocks in a fixed order, and BLAS never splits the reduction, so
 * results do not depend on the thread count. N documents, D features, C classes; X is
 * (N, D) row-major float, labels 0..C-1. */
#ifndef DATM_LOGREG_H
#define DATM_LOGREG_H

#include <stdint.h>

#include "core/core.h"

typedef struct datm_logreg_params {
    int           n_folds;      /* cross-validation folds (>= 2); default 5 */
    const double *lambdas;      /* candidate penalties; NULL = default grid 10^{-1..-6.5} */
    int           n_lambdas;
    int           standardize;  /* z-score each feature; default 1 */
    int           fit_bias;     /* unpenalised intercept per class; default 1 */
    int           max_iter;     /* L-BFGS iterations per fit; default 500 */
    double        tol;          /* stop when ||grad||_inf <= tol * max(1, ||grad_0||_inf); 1e-6 */
    int64_t       cv_max_docs;  /* CV on an evenly spaced stratified subset of at most this
                                   many documents (0 = all); the final fit uses all. 20000 */
    int           verbose;      /* log each lambda's CV error */
} datm_logreg_params;

typedef struct datm_logreg {
    int64_t  n_features;        /* D */
    int      n_classes;         /* C */
    int      fit_bias;
    double   lambda;            /* the penalty used for W */
    double  *w;                 /* (D + fit_bias, C): rows 0..D-1 weights on standardised
                                   features, row D the intercepts */
    double  *mean, *scale;      /* (D) x~ = (x - mean) / scale (0 and 1 when not standardised) */
    int      n_lambdas;         /* CV path (0 when fitted without CV) */
    double  *cv_lambdas;        /* (n_lambdas) */
    double  *cv_error;          /* (n_lambdas) mean validation error rate */
    double  *cv_logloss;        /* (n_lambdas) mean validation log-loss per document */
    int      iterations;        /* L-BFGS iterations of the final fit */
    double   grad_norm;         /* ||grad||_inf at the final fit's solution */
} datm_logreg;

void datm_logreg_params_default(datm_logreg_params *p);

/* Chooses lambda by p->n_folds-fold CV (lowest mean validation error, ties: lowest log-loss,
 * then the larger lambda), then refits on all N documents. */
int  datm_logreg_fit_cv(const float *X, int64_t n, int64_t d, const int32_t *y, int c,
                        const datm_logreg_params *p, datm_logreg *out, datm_error *err);
/* One fit at a fixed lambda (p may be NULL for defaults). */
int  datm_logreg_fit(const float *X, int64_t n, int64_t d, const int32_t *y, int c,
                     double lambda, const datm_logreg_params *p, datm_logreg *out,
                     datm_error *err);
/* probs (N, C) row-major. */
void datm_logreg_predict_proba(const datm_logreg *m, const float *X, int64_t n, float *probs);
void datm_logreg_predict(const datm_logreg *m, const float *X, int64_t n, int32_t *pred);
void datm_logreg_free(datm_logreg *m);

/* Classifier features from per-layer document features: X (N, sum_l K_l) row-major is the
 * concatenation over l = 0..L-1 of transform(theta[l]) (theta[l] (N, K_l)); transform is a
 * datm_feat_transform (nn/mlp_head.h): 0 raw, 1 log1p, 2 per-layer proportions. */
void datm_features_concat(int L, const int64_t *k, const float *const *theta, int64_t n,
                          int transform, float *X);

/* The objective f of the header comment at w ((D + fit_bias, C)) on features X that are used
 * as given (no standardisation); grad (same shape) may be NULL. For tests and diagnostics. */
double datm_logreg_objective(const float *X, int64_t n, int64_t d, const int32_t *y, int c,
                             int fit_bias, double lambda, const double *w, double *grad);

#endif
