/* engine/eval/linclass.h: the linear classifier on document features, L2-regularised
 * logistic regression by liblinear (Debian liblinear-dev; solver L2R_LR, `train -s 0`,
 * one-vs-rest for more than two classes). It turns an unsupervised model's document
 * features (theta of all layers) into the "DATM + logistic regression" rows of the paper's
 * Tables 3-4 (docs/reference.md 4.6: the authors use liblinear -s 0 with C chosen by 5-fold
 * cross-validation on the training set).
 *
 * Per one-vs-rest problem liblinear minimises
 *   (1/2) ||w||^2 + C sum_n log(1 + exp(-y_n w . x~_n)),   y_n = +1 / -1,
 * x~ = (features z-scored with the training mean and sd, 1): the trailing 1 is the bias
 * feature, which liblinear 2.3 regularises like the others.
 * Each one-vs-rest function is its own liblinear fit of a two-class problem (class k against
 * the rest; with exactly two classes one fit, the second function its negative, as in
 * liblinear's own two-class models), assembled into a liblinear model that its predict
 * functions read; liblinear's train() runs the same fits one after another, here they run
 * in parallel.
 * C is chosen by K-fold cross-validation accuracy on the training documents only, along a
 * warm-started path as liblinear's find_parameters walks it (each fit at the next C starts
 * from its solution at the previous one, liblinear's init_sol), but with
 *   - stratified folds in document order (the j-th document of a class in fold j % K)
 *     instead of liblinear's rand() shuffle, so no process-wide state is touched;
 *   - a path that starts where it matters and stops: C_0 = 40 / n (n the folds' training
 *     size: a per-document penalty 1 / (C n) of 0.025), x4 per step (/4 from C_0 when C_0
 *     itself is the most accurate), stopping at the first
 *     step (cv_patience) that does not raise the CV accuracy by more than one binomial
 *     standard error over the last step that did (or at liblinear's 1024): further gains
 *     are within the noise of the CV estimate, and the fits get dearer with C. liblinear's own path starts at
 *     1 / (n max_i |x_i|^2) and runs x2 to 1024 unless no fold's model changes: on the
 *     Brown corpus's features (4,458 documents, 15 classes) 37 steps and two minutes;
 *   - an absolute stopping tolerance on the path (cv_tol): liblinear's eps is relative to
 *     the gradient at w = 0, which grows with C, so along a warm-started path its test is
 *     met at the start once C is large (on IMDB's 20,000 documents the CV accuracy froze
 *     from the second step on).
 * The C with the highest CV accuracy (the smallest on ties) is fitted on all documents at
 * liblinear's eps (C times n_cv / N when the CV used a subset, which keeps its per-document
 * penalty), started from the mean of the folds' solutions at that C: liblinear's stopping
 * test is relative to the gradient at w = 0 whatever the start, so the start saves
 * iterations (on Brown's features 2.4 of ~12 CPU seconds) without loosening the test.
 *
 * Deterministic: no random numbers; every fit is single-threaded (BLAS capped at one thread
 * meanwhile) and writes only its own vector, so the result does not depend on the thread
 * count. Fit from one thread at a time (liblinear's print hook is process-wide); prediction
 * is thread-safe.
 * N documents, D features, C classes; X is (N, D) row-major float, labels 0..C-1. */
#ifndef DATM_LINCLASS_H
#define DATM_LINCLASS_H

#include <stdint.h>

#include "core/core.h"

struct model;   /* liblinear's (linear.h); only linclass.c looks inside */

typedef struct datm_linclass_params {
    int      n_folds;       /* cross-validation folds (>= 2); default 5 */
    double   C;             /* > 0: fit at this C without CV; default 0 (choose by CV) */
    double   eps;           /* liblinear's stopping tolerance of the final fit; default 0.01
                               (its -s 0 default) */
    double   cv_tol;        /* the CV path's fits stop at |gradient| <= cv_tol max(1, |w_prev|),
                               which bounds the error of w by as much (the Hessian is >= I);
                               default 0.3 (a gradient reduced ~10x from the warm start,
                               whose gradient is ~3 |w_prev| after a x4 step) */
    int      standardize;   /* z-score each feature with the training mean/sd; default 1 */
    int64_t  cv_max_docs;   /* CV on an evenly spaced per-class subset of at most this many
                               documents (0 = all); the final fit uses all. Default 20000 */
    int      cv_patience;   /* path steps without a significant gain before it stops; 1 */
    int      verbose;       /* log each path step (C, CV accuracy) at info level */
} datm_linclass_params;

typedef struct datm_linclass {
    int64_t       n_features;   /* D */
    int           n_classes;    /* C */
    double        C;            /* the C of the final fit */
    double        cv_accuracy;  /* CV accuracy at C (NAN when C was given) */
    int64_t       n_cv_docs;    /* documents in the CV (0 when C was given) */
    int           n_path;       /* C values tried by the CV */
    double       *path_C;       /* (n_path) */
    double       *path_accuracy;/* (n_path) CV accuracy at path_C */
    double       *mean, *scale; /* (D) x~ = (x - mean) / scale (0 and 1 when not standardised) */
    struct model *lib;          /* liblinear's model (owned) */
} datm_linclass;

void datm_linclass_params_default(datm_linclass_params *p);

/* Fits on N documents (labels y in [0, C)); C by CV unless p->C > 0 (p may be NULL). Bad
 * input (label out of range, non-finite feature) is an error naming the document. */
int  datm_linclass_fit(const float *X, int64_t n, int64_t d, const int32_t *y, int c,
                       const datm_linclass_params *p, datm_linclass *out, datm_error *err);
/* probs (N, C) row-major: liblinear's probability estimates (one-vs-rest sigmoids,
 * normalised); a class absent from the training labels gets 0. */
void datm_linclass_predict_proba(const datm_linclass *m, const float *X, int64_t n, float *probs);
/* pred (N): liblinear's predicted class. */
void datm_linclass_predict(const datm_linclass *m, const float *X, int64_t n, int32_t *pred);
/* w (D + 1): the decision-function coefficients of class k on the standardised features,
 * w[D] the bias term's (liblinear's get_decfun_coef/bias); all 0 if class k was absent from
 * the training labels. Two classes share one function: class 1's is minus class 0's. */
void datm_linclass_coef(const datm_linclass *m, int k, double *w);
void datm_linclass_free(datm_linclass *m);

/* Classifier features from per-layer document features: X (N, sum_l K_l) row-major is the
 * concatenation over l = 0..L-1 of transform(theta[l]) (theta[l] (N, K_l)); transform is a
 * datm_feat_transform (nn/mlp_head.h): 0 raw, 1 log1p, 2 per-layer proportions. */
void datm_features_concat(int L, const int64_t *k, const float *const *theta, int64_t n,
                          int transform, float *X);

#endif
