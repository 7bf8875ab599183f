/* datm_model.h: the plugin ABI of datm — write a model variant outside the datm tree, build
 * it as a shared object against the installed headers, and let `datm run` load it.
 *
 * A plugin is a shared object that exports one function, datm_plugin_register() (write it
 * with DATM_PLUGIN below), returning the model API version it was built for and its
 * variants, each a `const datm_model_ops`: the same contract the built-in variants of
 * models/ fill. datm loads plugins named by `model.plugin: PATH.so` in a spec, by
 * `--plugin PATH.so`, or found in the directories of DATM_PLUGIN_PATH; it refuses a file
 * that is not a shared object, has no entry point, was built for a model API version it does
 * not take, names a variant like a registered one, or has a schema that does not validate.
 *
 * A variant of its own fills every function of its ops table but the optional predict and
 * check: datm_rate_accum_add and the
 * datm_h5_* functions below serve eval_step, save and load (tests/plugin_unigram.c is one).
 * The quickest real variant is WHAI with one part swapped (the way iwhai, ghai and sdatm
 * are built): a create() that fills a whai_variant with its changes (another posterior
 * family, no downward term) and calls whai_create_variant(), a check() that calls
 * whai_check_variant() with the same whai_variant, and WHAI_COMMON_OPS for the rest.
 * examples/plugin/ is one: WHAI with a log-normal posterior, in ~120 lines.
 *
 * Everything declared here is exported by the `datm` binary (to the plugins it loads) and
 * by libdatm.so (to a plugin's own test programs: `pkg-config --cflags --libs datm`);
 * nothing else of the engine is. Build a plugin itself without -ldatm: its calls bind to
 * the program that loads it.
 *
 * Conventions (as datm's own code): fallible functions return 0 (DATM_OK) or a status and
 * fill a datm_error; layers count from 1; matrices are row-major; Phi(l) is (K_{l-1}, K_l)
 * with K_0 = V. DATM_MODEL_API_VERSION changes whenever a declaration below changes;
 * datm loads plugins built for any version from DATM_MODEL_API_VERSION_MIN on (version 1:
 * datm_model_ops ends at destroy, version 2 adds check, version 3 datm_config_train). */
#ifndef DATM_MODEL_PLUGIN_H
#define DATM_MODEL_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "datm_base.h"   /* status codes, datm_error, datm_error_set, datm_log, DATM_MAX_LAYERS */

#ifdef __cplusplus
extern "C" {
#endif

#define DATM_MODEL_API_VERSION 3
#define DATM_MODEL_API_VERSION_MIN 1   /* the oldest version datm still loads */

/* ---- the model: section: a schema (one row per key) and its validated values ---- */
typedef enum {
    DATM_PARAM_INT = 0,
    DATM_PARAM_REAL,
    DATM_PARAM_BOOL,
    DATM_PARAM_STRING,
    DATM_PARAM_CHOICE,        /* a string from `choices` ("a|b|c") */
    DATM_PARAM_INT_LIST,      /* a YAML sequence of ints, e.g. [128, 64, 32] */
    DATM_PARAM_REAL_LIST,
    DATM_PARAM_CHOICE_LIST,
    DATM_PARAM_TYPE_COUNT_
} datm_param_type;

typedef struct datm_param_schema {
    const char     *key;      /* under model: ("layers") */
    datm_param_type type;
    const char     *def;      /* default as YAML text ("[128, 64, 32]", "0.7", "true"); NULL: required */
    double          min, max; /* bounds of numbers and list elements (min > max: none) */
    const char     *choices;  /* CHOICE: "a|b|c" */
    const char     *doc;      /* one line (datm describe) */
} datm_param_schema;          /* a table ends with a row whose key is NULL */

typedef struct datm_config datm_config;   /* a validated section: every key of the schema set */

int64_t     datm_config_int(const datm_config *c, const char *key);
double      datm_config_real(const datm_config *c, const char *key);
int         datm_config_bool(const datm_config *c, const char *key);
const char *datm_config_str(const datm_config *c, const char *key);   /* STRING, CHOICE */
int         datm_config_int_list(const datm_config *c, const char *key, const int64_t **vals);
int         datm_config_real_list(const datm_config *c, const char *key, const double **vals);
/* A model section's train: section as the spec gave it (every key of `datm describe --all`'s
 * train table, e.g. "epochs", "batch_size"), for a variant's rules that relate its options to
 * the training run; NULL when the section did not come from a spec (a copy, a test's own
 * configuration): a rule then has nothing to check. */
const datm_config *datm_config_train(const datm_config *c);

/* Tables as X-macros, one row per key (the form datm's own variants use):
 *   #define MY_PARAMS(X) \
 *       X(sigma0, "sigma0", REAL, "1", 1e-6, 1e6, NULL, "prior scale") \
 *       X(mode, "mode", CHOICE, "a", DATM_NOB, "a|b", "which way")
 *   DATM_PARAMS_STRUCT(my_params, MY_PARAMS)          -> struct my_params { double sigma0; ... }
 *   static DATM_PARAMS_GETTER(my_params, MY_PARAMS)   -> my_params_get(cfg, &p)
 *   static const datm_param_schema rows[] = {DATM_PARAMS_ROWS(MY_PARAMS)};
 * Columns: C field, key, type (a datm_param_type without DATM_PARAM_), default, min, max
 * (DATM_NOB: no bounds), choices, doc. */
#define DATM_NOB 1.0, 0.0
typedef struct datm_int_list { const int64_t *v; int n; } datm_int_list;
typedef struct datm_real_list { const double *v; int n; } datm_real_list;
#define DATM_PARAM_CTYPE_INT         int64_t
#define DATM_PARAM_CTYPE_REAL        double
#define DATM_PARAM_CTYPE_BOOL        int
#define DATM_PARAM_CTYPE_STRING      const char *
#define DATM_PARAM_CTYPE_CHOICE      const char *
#define DATM_PARAM_CTYPE_INT_LIST    datm_int_list
#define DATM_PARAM_CTYPE_REAL_LIST   datm_real_list
#define DATM_PARAM_CTYPE_CHOICE_LIST const char *
void datm_param_get_INT(const datm_config *c, const char *key, int64_t *out);
void datm_param_get_REAL(const datm_config *c, const char *key, double *out);
void datm_param_get_BOOL(const datm_config *c, const char *key, int *out);
void datm_param_get_STRING(const datm_config *c, const char *key, const char **out);
void datm_param_get_CHOICE(const datm_config *c, const char *key, const char **out);
void datm_param_get_INT_LIST(const datm_config *c, const char *key, datm_int_list *out);
void datm_param_get_REAL_LIST(const datm_config *c, const char *key, datm_real_list *out);
void datm_param_get_CHOICE_LIST(const datm_config *c, const char *key, const char **out);
#define DATM_PARAM_X_FIELD_(field, key, type, ...) DATM_PARAM_CTYPE_##type field;
#define DATM_PARAM_X_ROW_(field, key, type, ...)   {key, DATM_PARAM_##type, __VA_ARGS__},
#define DATM_PARAM_X_GET_(field, key, type, ...)   datm_param_get_##type(c, key, &p->field);
#define DATM_PARAMS_STRUCT(name, TABLE) typedef struct name { TABLE(DATM_PARAM_X_FIELD_) } name;
#define DATM_PARAMS_GETTER(name, TABLE) \
    void name##_get(const datm_config *c, name *p) { TABLE(DATM_PARAM_X_GET_) }
#define DATM_PARAMS_ROWS(TABLE) TABLE(DATM_PARAM_X_ROW_){NULL, 0, NULL, 0, 0, NULL, NULL}

/* ---- data the engine gives a model ---- */
typedef struct datm_csr {     /* documents x words counts, compressed rows */
    int64_t  n_rows;          /* N documents */
    int64_t  n_cols;          /* V words */
    int64_t  nnz;
    int64_t *row_ptr;         /* (N + 1) */
    int32_t *col;             /* (nnz) 0-based, increasing within a row */
    float   *val;             /* (nnz) counts > 0 */
} datm_csr;

typedef struct datm_run_info {
    int64_t      n_train;     /* N training documents */
    int64_t      n_vocab;     /* V */
    int          n_classes;   /* 0 without labels */
    int64_t      batch_size;  /* B */
    int64_t      epochs;
    int64_t      total_iters; /* mini-batches over the whole run */
    uint64_t     seed;
    int          threads;
    const datm_csr *train;    /* the whole training set */
    const int32_t  *train_labels; /* (N) or NULL */
    char *const    *vocab;    /* (V) or NULL */
    int             streamed; /* 1: data.stream, mini-batches read from disk and train NULL
                               * (a model that needs random access to the training
                               * documents says so at create) */
} datm_run_info;

typedef struct datm_batch {
    const datm_csr *X;        /* (B, V) counts of this mini-batch */
    const int64_t  *doc_ids;  /* (B) row ids in the training set */
    const int32_t  *labels;   /* (B) or NULL */
} datm_batch;

typedef struct datm_train_ctx {
    int64_t  iteration;       /* global mini-batch counter from 1 */
    int64_t  epoch;           /* from 0 */
    uint64_t seed;
    double   rho;             /* N / B */
} datm_train_ctx;

typedef struct datm_train_stats {
    double loss;                      /* per-document negative ELBO (lower is better) */
    double loglik;                    /* per-document Poisson log-likelihood */
    int    n_layers;
    double kl[DATM_MAX_LAYERS];       /* per-document KL of each layer */
    double step[DATM_MAX_LAYERS];     /* mean effective step of each layer */
} datm_train_stats;

typedef struct datm_theta {           /* per-layer document features, each (N, K_l) */
    int      n_layers;
    int64_t  n_docs;
    int64_t  k[DATM_MAX_LAYERS];
    float   *theta[DATM_MAX_LAYERS];
} datm_theta;
void datm_theta_free(datm_theta *t);

/* ---- the contract of a variant ---- */
struct datm_h5;               /* a group of the result file (save/load) */
struct datm_rate_accum;       /* the perplexity accumulator (eval_step) */

typedef struct datm_model {   /* a variant's state struct starts with this */
    const struct datm_model_ops *ops;
} datm_model;

typedef struct datm_model_ops {
    int         api_version;          /* DATM_MODEL_API_VERSION */
    const char *name;                 /* model.variant in a spec; unique */
    const char *summary;              /* one line for `datm models` */
    const datm_param_schema *schema;  /* keys of model: (without variant and plugin) */
    int  (*create)(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                   datm_error *err);
    int  (*train_batch)(datm_model *m, const datm_batch *b, const datm_train_ctx *ctx,
                        datm_train_stats *st, datm_error *err);
    int  (*eval_begin)(datm_model *m, const datm_csr *obs, uint64_t seed, void **state,
                       datm_error *err);
    int  (*eval_step)(datm_model *m, void *state, int64_t draw, struct datm_rate_accum *acc,
                      datm_error *err);
    void (*eval_end)(datm_model *m, void *state);
    int  (*infer)(const datm_model *m, const datm_csr *docs, uint64_t seed, int nsamples,
                  datm_theta *out, datm_error *err);
    int  (*predict)(const datm_model *m, const datm_csr *docs, uint64_t seed, int nsamples,
                    float *probs, datm_error *err);   /* optional (NULL) */
    int  (*get_phi)(const datm_model *m, int layer, const float **phi, int64_t *rows,
                    int64_t *cols);
    int  (*n_layers)(const datm_model *m);
    int  (*save)(const datm_model *m, struct datm_h5 *g, datm_error *err);
    int  (*load)(datm_model *m, struct datm_h5 *g, datm_error *err);
    void (*destroy)(datm_model *m);
    /* Since version 2; optional (NULL: none). The variant's own rules on its options that a
     * schema row cannot state (a key that acts only with another one, a list with one value
     * per layer, a key the variant leaves unused), on the validated model: section alone:
     * no data is read and nothing is allocated. datm calls it whenever it validates a spec
     * (datm check, datm run before it reads data, datm pipeline run/status for every run),
     * so a bad combination is refused before a run starts; create calls it too, so each
     * rule is written once. The message names the key ("model.eta: ...") and datm adds
     * where it was given. datm reads this member only from tables whose api_version >= 2. */
    int  (*check)(const datm_config *cfg, datm_error *err);
} datm_model_ops;

/* ---- for a variant's own contract functions ----
 * eval_step: adds one posterior sample of the Poisson rates of the evaluation documents,
 * rate(d, v) = sum_k theta(d, k) Phi(1)(v, k), with phi1 (V, K) and theta (N, K) row-major
 * (N = the rows of eval_begin's obs); the engine scores the held-out words under the mean. */
void datm_rate_accum_add(struct datm_rate_accum *a, const float *phi1, const float *theta,
                         int64_t K);
/* save/load: datasets of the variant's group of the result file (and checkpoints), by name;
 * a read needs the stored shape to equal dims. datm_h5_shape returns the rank, -1 absent. */
int datm_h5_write_f32(struct datm_h5 *g, const char *name, const float *x, int rank,
                      const int64_t *dims, datm_error *err);
int datm_h5_write_f64(struct datm_h5 *g, const char *name, const double *x, int rank,
                      const int64_t *dims, datm_error *err);
int datm_h5_write_scalar(struct datm_h5 *g, const char *name, double v, datm_error *err);
int datm_h5_read_f32(struct datm_h5 *g, const char *name, float *x, int rank,
                     const int64_t *dims, datm_error *err);
int datm_h5_read_f64(struct datm_h5 *g, const char *name, double *x, int rank,
                     const int64_t *dims, datm_error *err);
int datm_h5_read_scalar(struct datm_h5 *g, const char *name, double *v, datm_error *err);
int datm_h5_shape(struct datm_h5 *g, const char *name, int64_t *dims);

/* ---- the entry point ---- */
typedef struct datm_plugin_info {
    int                          api_version;   /* DATM_MODEL_API_VERSION */
    const char                  *name;          /* the plugin's name, for messages */
    const datm_model_ops *const *models;        /* NULL-terminated */
} datm_plugin_info;

const datm_plugin_info *datm_plugin_register(void);

/* DATM_PLUGIN("my-plugin", &my_variant_ops, ...): defines the entry point. */
#define DATM_PLUGIN(plugin_name, ...)                                                      \
    __attribute__((visibility("default"))) const datm_plugin_info *datm_plugin_register(void) \
    {                                                                                      \
        static const datm_model_ops *const models_[] = {__VA_ARGS__, NULL};                \
        static const datm_plugin_info info_ = {DATM_MODEL_API_VERSION, plugin_name, models_}; \
        return &info_;                                                                     \
    }

/* ---- random numbers (counter-based streams the engine hands to a family's draw_noise) ---- */
typedef struct datm_rng datm_rng;
double datm_rng_normal(datm_rng *r);                           /* N(0, 1) */
void   datm_rng_normal_fill_f(datm_rng *r, float *out, size_t n);
void   datm_rng_uniform_fill_f(datm_rng *r, float *out, size_t n);   /* U(0, 1) */
double datm_rng_gamma(datm_rng *r, double shape);              /* Gamma(shape, 1) */

double datm_digamma(double x);   /* psi(x), x > 0 */

/* ---- WHAI's core, for variants that are WHAI with one part swapped ----
 * WHAI (paper sec. II): a Weibull upward-downward encoder q(theta(l) | x) with shape k and
 * scale lam per unit, a gamma belief network decoder whose topics Phi(l) are sampled by
 * TLASGR-MCMC. A posterior family decides how theta is drawn from (k, lam) and scored. */
typedef struct datm_encoder_opts datm_encoder_opts;   /* the encoder's options (opaque) */

typedef struct datm_posterior_family {
    const char *name;
    int noise_dim;        /* noise numbers stored per unit */
    /* noise of n units of one document (k: their shapes, for families that need them) */
    void (*draw_noise)(const datm_encoder_opts *o, datm_rng *rng, int64_t n, const float *k,
                       float *noise);
    /* theta = T(k, lam; noise) and dT/dk, dT/dlam (derivative outputs may be NULL) */
    void (*sample_f32)(const datm_encoder_opts *o, int64_t n, const float *k, const float *lam,
                       const float *noise, float *theta, float *dk, float *dlam);
    void (*sample_f64)(const datm_encoder_opts *o, int64_t n, const double *k,
                       const double *lam, const float *noise, double *theta, double *dk,
                       double *dlam);
    /* KL(q(k, lam) || Gamma(alpha, rate 1)) per unit and its derivatives (may be NULL) */
    void (*kl_f32)(int64_t n, const float *k, const float *lam, const float *alpha, float *kl,
                   float *dk, float *dlam, float *dalpha);
    void (*kl_f64)(int64_t n, const double *k, const double *lam, const double *alpha,
                   double *kl, double *dk, double *dlam, double *dalpha);
    /* E[theta] (inference without noise) */
    void (*mean_f32)(int64_t n, const float *k, const float *lam, float *mean);
    void (*mean_f64)(int64_t n, const double *k, const double *lam, double *mean);
} datm_posterior_family;

extern const datm_posterior_family datm_posterior_weibull;   /* WHAI's own */

typedef struct whai_model whai_model;            /* WHAI's state (opaque to plugins) */
typedef struct datm_encoder_ws datm_encoder_ws;  /* (opaque to plugins) */
typedef struct whai_chain whai_chain;            /* (opaque to plugins) */
typedef int (*whai_extra_fn)(void *user, const datm_batch *b, const datm_train_ctx *ctx,
                             const datm_encoder_ws *ws, const float *const **dtheta,
                             double *loss, datm_error *err);
typedef int (*whai_pre_tlasgr_fn)(void *user, whai_chain *c, double rho, datm_error *err);
typedef struct whai_hooks {       /* the built-in variants' hooks; leave them NULL */
    whai_extra_fn      extra;
    void              *extra_user;
    whai_pre_tlasgr_fn pre_tlasgr;
    void              *pre_tlasgr_user;
} whai_hooks;

/* What a variant changes; zero-initialised = plain WHAI from the spec. */
typedef struct whai_variant {
    const datm_model_ops        *ops;       /* the variant's table (goes into base.ops) */
    int                          no_downward;   /* 1: no Phi(l+1) theta(l+1) in the shape */
    const datm_posterior_family *family;    /* non-NULL: replaces the Weibull family */
    int                          own_iteration; /* built-in variants only: leave 0 */
    int                          own_eval;      /* built-in variants only: leave 0 */
    whai_hooks                   hooks;
} whai_variant;

/* WHAI's model: keys (`datm describe whai`); a variant's schema is these rows, some with
 * another default or doc, and its own rows after them: variant_schema_build() does it once
 * (call it from a constructor, as examples/plugin does). Read WHAI's keys with
 * datm_config_*(cfg, "key"). */
extern const datm_param_schema datm_whai_schema[];
extern const datm_model_ops    datm_model_whai;

typedef struct variant_schema_edit {
    const char *key;
    const char *def;    /* NULL: keep WHAI's */
    const char *doc;    /* NULL: keep WHAI's */
} variant_schema_edit;
#define VARIANT_SCHEMA_CAP 96
/* dst (cap rows) = base with the edits, then extra's rows (may be NULL), then the end row. */
void variant_schema_build(datm_param_schema *dst, int cap, const datm_param_schema *base,
                          const variant_schema_edit *edits, int n_edits,
                          const datm_param_schema *extra);

/* Creates WHAI from the model: section cfg with the variant's changes v; it refuses what
 * whai_check_variant refuses. */
int  whai_create_variant(const datm_config *cfg, const datm_run_info *info,
                         const whai_variant *v, datm_model **out, datm_error *err);
/* WHAI's own rules on cfg with the variant's changes v (the check op of a variant built on
 * WHAI: its own rules, then this): layer counts of the per-layer lists, keys that act only
 * with others, the encoder's options for v's family. No data, nothing allocated. */
int  whai_check_variant(const datm_config *cfg, const whai_variant *v, datm_error *err);
int  whai_train_batch(datm_model *m, const datm_batch *b, const datm_train_ctx *ctx,
                      datm_train_stats *st, datm_error *err);
int  whai_eval_begin(datm_model *m, const datm_csr *obs, uint64_t seed, void **state,
                     datm_error *err);
int  whai_eval_step(datm_model *m, void *state, int64_t draw, struct datm_rate_accum *acc,
                    datm_error *err);
void whai_eval_end(datm_model *m, void *state);
int  whai_infer(const datm_model *m, const datm_csr *docs, uint64_t seed, int nsamples,
                datm_theta *out, datm_error *err);
int  whai_get_phi(const datm_model *m, int layer, const float **phi, int64_t *rows,
                  int64_t *cols);
int  whai_n_layers(const datm_model *m);
int  whai_save(const datm_model *m, struct datm_h5 *g, datm_error *err);
int  whai_load(datm_model *m, struct datm_h5 *g, datm_error *err);
void whai_destroy(datm_model *m);
/* State a variant may change after creation ((whai_model *) of its datm_model). */
void whai_set_n_train(whai_model *w, int64_t N);
void whai_set_lr(whai_model *w, double lr);
void whai_set_iteration(whai_model *w, int64_t iteration);

/* A variant's ops: { WHAI_COMMON_OPS, .name = ..., .summary = ..., .schema = ...,
 * .create = ..., .check = ... }. */
#define WHAI_COMMON_OPS                                                                     \
    .api_version = DATM_MODEL_API_VERSION, .train_batch = whai_train_batch,                 \
    .eval_begin = whai_eval_begin, .eval_step = whai_eval_step, .eval_end = whai_eval_end,  \
    .infer = whai_infer, .predict = NULL, .get_phi = whai_get_phi,                          \
    .n_layers = whai_n_layers, .save = whai_save, .load = whai_load,                        \
    .destroy = whai_destroy

#ifdef __cplusplus
}
#endif

#endif
