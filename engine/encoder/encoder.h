/* engine/encoder: the Weibull upward-downward variational encoder (WUDVE, paper sec. II-B,
 * eqs. posterior-completely and MLP2) and the ELBO of DATM (eq. ELBO-of-VADTM), with a full
 * backward pass. Used by whai, and by the variants built on it:
 *   iwhai  -> opts.downward = 0 (the KL prior keeps Phi(l+1) theta(l+1));
 *   ghai   -> opts.family = another datm_posterior_family (e.g. gamma via RSVI);
 *   wai    -> datm_encoder_backward(..., dphi) also returns d loss / d Phi(l);
 *   sdatm  -> read ws->theta[l] after forward, pass d(extra loss)/d theta(l) to backward;
 *   layer-wise -> datm_encoder_remap() grows/prunes units keeping trained weights;
 *                 top_shape = r (K_L) for a gamma-NB top layer.
 *
 * Letters: B documents in the batch, V words, L layers, K_l units of layer l (K_0 = V),
 * H_l hidden width of layer l (H_0 = V; default H_l = K_l). Layers are 1-based in every
 * array indexed by layer (index 0 unused), like engine/decoder. Row-major, documents = rows.
 *
 * The network (per document; softplus = ln(1 + e^x)):
 *   h(0) = ln(1 + x)                       h(l) = softplus(h(l-1) W3(l) + b3(l))  (1, H_l)
 *   kt(l) = softplus(h(l) W1(l) + b1(l))   (1, K_l), or (1, 1) broadcast when
 *                                          !shape_per_topic (the authors' code)
 *   lt(l) = max(softplus(h(l) W2(l) + b2(l)), lambda_min)                         (1, K_l)
 *   top-down, l = L .. 1:
 *     a(l)  = theta(l+1) Phi(l+1)^T  (l < L)   -- the prior shape of theta(l), (1, K_l)
 *     k(l)  = clamp(kt(l) + [downward] a(l), k_min, k_max)
 *     lam(l)= lt(l), or lt(l) / Gamma(1 + 1/k(l)) when lambda_is_mean (Weibull only)
 *     theta(l) = T(k, lam; noise)         (Weibull: lam (-ln(1-u))^(1/k), u ~ U(u_lo, u_hi))
 *     KL(l) = KL(q(k, lam) || Gamma(alpha(l), 1)), alpha(l) = max(a(l), alpha_min) for l < L,
 *             top_shape (r, K_L) or opts.top_shape at the top
 * Loss per document (minimised): -(1/B) [ sum_n ln Pois(x_n | theta(1)_n Phi(1)^T)
 *                                          - sum_l w_l KL(l)_n ]
 * with the Poisson rate floored at rate_min inside the log.
 *
 * Precision: every entry point exists in f32 (training, inference) and f64 (gradient checks:
 * datm_encoder_forward_f64 etc. take double params/phi); both come from one source
 * (encoder_impl.h). Noise is always float. Parameters live in e->params (one block, named
 * views "l<l>.W3", "l<l>.b3", "l<l>.W1", "l<l>.b1", "l<l>.W2", "l<l>.b2"); the functions
 * take the block as a pointer so a copy (double, averaged, ...) with the same layout works.
 *
 * Threads: elementwise work is OpenMP over documents, products go through BLAS; noise of
 * document i comes from the stream (seed, purpose, index, doc_ids[i]), so results do not
 * depend on the thread count. */
#ifndef DATM_ENCODER_H
#define DATM_ENCODER_H

#include <stdint.h>

#include "datm_model.h"
#include "core/core.h"
#include "data/csr.h"
#include "nn/nn.h"
#include "rand/rand.h"

/* datm_posterior_family (how q(theta | shape k, scale lam) is sampled and scored; swap it to
 * change the family), the Weibull family datm_posterior_weibull (the default, WHAI) and the
 * name datm_encoder_opts are part of the plugin ABI: include/datm_model.h defines them. */

struct datm_encoder_opts {
    int     n_layers;                        /* L */
    int64_t n_vocab;                         /* V */
    int64_t k[DATM_MAX_LAYERS + 1];      /* K_l, l = 1..L */
    int64_t hidden[DATM_MAX_LAYERS + 1]; /* H_l, l = 1..L; 0 = K_l (paper) */
    int     downward;         /* 1: shape += Phi(l+1) theta(l+1) (WHAI); 0: IWHAI */
    int     shape_per_topic;  /* 1: W1 (H_l, K_l) (paper); 0: W1 (H_l, 1) (authors' code) */
    int     lambda_is_mean;   /* 0: lt is the scale (paper); 1: the mean (PyDPM) */
    double  k_min, k_max;     /* shape clamp; [0.1, 10] (reference code) */
    double  lambda_min;       /* scale floor */
    double  alpha_min;        /* floor of the prior shape Phi(l+1) theta(l+1) in the KL */
    double  rate_min;         /* floor of the Poisson rate inside the log */
    double  u_lo, u_hi;       /* uniform noise range: (0, 1) paper; (0.2, 0.8) PyDPM */
    double  top_shape;        /* top prior Gamma(top_shape, 1) (WHAI: r = 1) */
    double  kl_weight[DATM_MAX_LAYERS + 1];  /* w_l, l = 1..L (paper: 1) */
    double  init_sd;          /* weights ~ N(0, sd^2); <= 0: Xavier sd = sqrt(2/(in+out)) */
    double  init_bias;        /* initial biases */
    const datm_posterior_family *family;         /* NULL: Weibull */
};

void datm_encoder_opts_default(datm_encoder_opts *o);   /* L = 0: fill n_layers, k, n_vocab */
/* The rules on o that need no sizes (shape clamp, floors, noise range, top prior, the
 * family's parameterisation), which datm_encoder_create also applies: for a model's option
 * check before any data is read. *key (may be NULL) gets the name of the field of o at fault
 * (NULL when o passes). */
int  datm_encoder_opts_check(const datm_encoder_opts *o, const char **key, datm_error *err);

typedef struct datm_encoder {
    datm_encoder_opts o;                  /* resolved: hidden filled, family set */
    int     L;
    int64_t K[DATM_MAX_LAYERS + 1];   /* K[0] = V */
    int64_t H[DATM_MAX_LAYERS + 1];   /* H[0] = V */
    int64_t KS[DATM_MAX_LAYERS + 1];  /* width of the shape output: K_l or 1 */
    datm_params params;                   /* value, grad: one block */
    int iW3[DATM_MAX_LAYERS + 1], ib3[DATM_MAX_LAYERS + 1];
    int iW1[DATM_MAX_LAYERS + 1], ib1[DATM_MAX_LAYERS + 1];
    int iW2[DATM_MAX_LAYERS + 1], ib2[DATM_MAX_LAYERS + 1];
} datm_encoder;

/* Validates o, lays out and initialises the parameters from (seed, INIT, 1000 + layer). */
int  datm_encoder_create(const datm_encoder_opts *o, uint64_t seed, datm_encoder **out,
                         datm_error *err);
void datm_encoder_destroy(datm_encoder **e);
/* New encoder with opts o whose unit j of layer l takes the trained weights of unit
 * unit_map[l][j] of src (-1: freshly initialised; unit_map[l] NULL: identity where the
 * unit exists). Layers beyond src's are fresh. Hidden units follow the same map when
 * H_l = K_l. For layer-wise training (grow a layer, prune units). */
int  datm_encoder_remap(const datm_encoder *src, const datm_encoder_opts *o,
                        const int32_t *const *unit_map, uint64_t seed, datm_encoder **out,
                        datm_error *err);
/* Multiply-adds of the dense layers per document in one forward pass (for GFLOP/s). */
double datm_encoder_dense_macs(const datm_encoder *e, double nnz_per_doc);

typedef enum {
    DATM_ENC_MEAN = 0,   /* theta = E[q] top-down (inference); no noise, no KL */
    DATM_ENC_SAMPLE,     /* one reparameterised sample; no KL, no likelihood */
    DATM_ENC_TRAIN       /* sample + KL + Poisson likelihood; enables backward */
} datm_encoder_mode;

/* Where the noise comes from. */
typedef struct datm_encoder_noise {
    const float *const *fixed;  /* fixed[l] (B, K_l noise_dim) to use as is (tests); or NULL */
    uint64_t       seed;
    uint32_t       purpose;     /* e.g. DATM_STREAM_DOC (training), DATM_STREAM_EVAL */
    uint64_t       index;       /* e.g. the iteration */
    const int64_t *doc_ids;     /* (B) stream index2 per row; NULL: first_id + row */
    int64_t        first_id;
} datm_encoder_noise;

typedef struct datm_encoder_loss {
    double loss;                            /* the minimised loss per document */
    double loglik;                          /* Poisson log-likelihood per document */
    double kl[DATM_MAX_LAYERS + 1];     /* KL(l) per document (unweighted), l = 1..L */
} datm_encoder_loss;

/* Activations of one batch: what backward needs, and theta for the caller. */
#define DATM_ENCODER_WS_FIELDS(R)                                                          \
    int64_t cap, nnz_cap, B;   /* capacity (docs, nonzeros) and size of the last batch */  \
    int     mode, L;                                                                       \
    datm_csr Xv;               /* zero-based view of the last batch */                     \
    int64_t *row_ptr;          /* (cap + 1) row pointers of Xv */                          \
    const R *const *phi;       /* phi[l] (K_{l-1}, K_l) of the last forward */            \
    const R *top_shape;        /* (K_L) or NULL */                                         \
    double  kl_weight[DATM_MAX_LAYERS + 1];                                            \
    const float *in_val;       /* (nnz) or NULL: the counts h(0) reads instead of X's      \
                                  (batch-relative; the likelihood reads X) */              \
    R *x0;                     /* (nnz) h(0) values ln(1 + x) */                           \
    R *ratio;                  /* (nnz) x / rate (0 where the rate is floored) */          \
    R *lterm;                  /* (nnz) likelihood term per nonzero */                     \
    R *colsum, *colsum2;       /* (K_1) column sums of Phi(1); scratch */                  \
    double *doc_acc;           /* (cap) per-document partial sums */                       \
    float  *kf;                /* (cap, max K) float copy of a row of shapes */            \
    int64_t hmax, kmax;        /* max H_l, max K_l */                                      \
    int     nb;                /* row blocks (threads) of the last forward */              \
    int64_t B_total;           /* batch size of the last backward (slices see a part) */   \
    int64_t B_norm;            /* > 0: the batch is part of a mini-batch of B_norm docs     \
                                  (engine/par chunks): backward scales by 1 / B_norm */   \
    R *z3[DATM_MAX_LAYERS + 1], *h[DATM_MAX_LAYERS + 1];   /* (B, H_l) */          \
    R *z1[DATM_MAX_LAYERS + 1], *kt[DATM_MAX_LAYERS + 1];  /* (B, KS_l) */         \
    R *z2[DATM_MAX_LAYERS + 1];      /* (B, K_l) */                                    \
    R *lt[DATM_MAX_LAYERS + 1];      /* (B, K_l) floored softplus(z2) */               \
    R *k[DATM_MAX_LAYERS + 1];       /* (B, K_l) final shape */                        \
    R *lam[DATM_MAX_LAYERS + 1];     /* (B, K_l) final scale */                        \
    R *a[DATM_MAX_LAYERS + 1];       /* (B, K_l) Phi(l+1) theta(l+1), l < L */         \
    R *alpha[DATM_MAX_LAYERS + 1];   /* (B, K_l) prior shape used by the KL */         \
    R *theta[DATM_MAX_LAYERS + 1];   /* (B, K_l) sample or mean */                     \
    R *dth_dk[DATM_MAX_LAYERS + 1], *dth_dlam[DATM_MAX_LAYERS + 1];                \
    R *kl[DATM_MAX_LAYERS + 1];      /* (B, K_l) KL per unit */                        \
    R *dkl_dk[DATM_MAX_LAYERS + 1], *dkl_dlam[DATM_MAX_LAYERS + 1];                \
    R *dkl_da[DATM_MAX_LAYERS + 1];                                                    \
    R *dtheta[DATM_MAX_LAYERS + 1];  /* (B, K_l) backward scratch from here on */      \
    R *dz1[DATM_MAX_LAYERS + 1];     /* (B, KS_l) */                                   \
    R *dz2[DATM_MAX_LAYERS + 1], *da[DATM_MAX_LAYERS + 1];   /* (B, K_l) */        \
    R *dz3[DATM_MAX_LAYERS + 1];     /* (B, H_l) */                                    \
    R *dh;                               /* (B, max H) */                                  \
    R *phiT[DATM_MAX_LAYERS + 1];    /* (K_l, K_{l-1}) Phi(l)^T, l >= 2 (per forward) */ \
    R *wT1[DATM_MAX_LAYERS + 1];     /* (KS_l, H_l) W1(l)^T (per backward) */          \
    R *wT2[DATM_MAX_LAYERS + 1];     /* (K_l, H_l) W2(l)^T */                          \
    R *wT3[DATM_MAX_LAYERS + 1];     /* (H_l, H_{l-1}) W3(l)^T, l >= 2 */              \
    float *noise[DATM_MAX_LAYERS + 1];   /* (B, K_l noise_dim) */                      \
    datm_rng *rng;                       /* (cap) per-document streams */                  \
    void *block;                         /* the one allocation behind the arrays */

typedef struct datm_encoder_ws { DATM_ENCODER_WS_FIELDS(float) } datm_encoder_ws;
typedef struct datm_encoder_ws_f64 { DATM_ENCODER_WS_FIELDS(double) } datm_encoder_ws_f64;

/* Workspace for batches of up to cap documents and nnz_cap nonzeros (grown on demand). */
int  datm_encoder_ws_create(const datm_encoder *e, int64_t cap, int64_t nnz_cap,
                            datm_encoder_ws **out, datm_error *err);
void datm_encoder_ws_destroy(datm_encoder_ws **ws);
int  datm_encoder_ws_create_f64(const datm_encoder *e, int64_t cap, int64_t nnz_cap,
                                datm_encoder_ws_f64 **out, datm_error *err);
void datm_encoder_ws_destroy_f64(datm_encoder_ws_f64 **ws);

/* Forward pass on the batch X (B <= cap rows). phi[l], l = 1..L: Phi(l) (K_{l-1}, K_l);
 * phi[1] is read in TRAIN mode, phi[l >= 2] whenever L >= 2 and (downward or TRAIN).
 * top_shape: (K_L) prior shapes of the top layer, or NULL for opts.top_shape.
 * kl_weight: (L + 1, index 0 unused) or NULL for opts.kl_weight. noise: NULL only in MEAN
 * mode. loss (TRAIN mode) may be NULL. */
int datm_encoder_forward(const datm_encoder *e, const float *params, datm_encoder_mode mode,
                         const datm_csr *X, const float *const *phi, const float *top_shape,
                         const double *kl_weight, const datm_encoder_noise *noise,
                         datm_encoder_ws *ws, datm_encoder_loss *loss, datm_error *err);
/* Gradient of the loss of the last TRAIN forward w.r.t. the parameters, into grad (laid out
 * like params; overwritten). dtheta_extra[l] (B, K_l): gradient of an extra per-batch loss
 * term w.r.t. theta(l), added as is (NULL array or entries: none). dphi[l] (K_{l-1}, K_l):
 * if non-NULL, receives d loss / d Phi(l) (overwritten). */
int datm_encoder_backward(const datm_encoder *e, const float *params, datm_encoder_ws *ws,
                          const float *const *dtheta_extra, float *grad, float *const *dphi,
                          datm_error *err);

int datm_encoder_forward_f64(const datm_encoder *e, const double *params,
                             datm_encoder_mode mode, const datm_csr *X,
                             const double *const *phi, const double *top_shape,
                             const double *kl_weight, const datm_encoder_noise *noise,
                             datm_encoder_ws_f64 *ws, datm_encoder_loss *loss, datm_error *err);
int datm_encoder_backward_f64(const datm_encoder *e, const double *params,
                              datm_encoder_ws_f64 *ws, const double *const *dtheta_extra,
                              double *grad, double *const *dphi, datm_error *err);

/* Features of N documents: theta[l] (N, K_l), l = 1..L (caller-allocated), the mean
 * (nsamples = 0) or the average of nsamples draws, draw s from the streams
 * (seed, EVAL, draw0 + s, first_id + row); the upward pass is shared by all draws.
 * Chunks of `chunk` documents (0: 512) run in parallel over OpenMP threads, each with
 * single-threaded BLAS; results do not depend on the thread count. */
int datm_encoder_infer(const datm_encoder *e, const float *params, const datm_csr *X,
                       const float *const *phi, const float *top_shape, int nsamples,
                       uint64_t seed, uint64_t draw0, int64_t first_id, int64_t chunk,
                       float *const *theta, datm_error *err);

/* The same split in two for many draws with fixed encoder weights (evaluation): the
 * network outputs kt(l), lt(l) of every document are computed once (they depend on neither
 * the noise nor Phi), then each call draws from them (top-down pass only). Results equal
 * datm_encoder_infer's for the same arguments and chunk. */
typedef struct datm_encoder_cache {
    int64_t n_docs;
    float  *kt[DATM_MAX_LAYERS + 1];   /* (N, KS_l) */
    float  *lt[DATM_MAX_LAYERS + 1];   /* (N, K_l) */
} datm_encoder_cache;
int  datm_encoder_cache_build(const datm_encoder *e, const float *params, const datm_csr *X,
                              int64_t chunk, datm_encoder_cache **out, datm_error *err);
void datm_encoder_cache_destroy(datm_encoder_cache **c);
int  datm_encoder_infer_cached(const datm_encoder *e, const datm_encoder_cache *c,
                               const float *const *phi, const float *top_shape, int nsamples,
                               uint64_t seed, uint64_t draw0, int64_t first_id, int64_t chunk,
                               float *const *theta, datm_error *err);

#endif
