/* models/dlda_common.h: what the two deep-LDA variants (dlda-gibbs, dlda-tlasgr) share —
 * the schema keys of the decoder, reading them into decoder options, the test-document
 * Gibbs chain used for perplexity and features, and save/load of the decoder state.
 * Not a variant itself: the registry lists dlda_gibbs.c and dlda_tlasgr.c. */
#ifndef DATM_MODELS_DLDA_COMMON_H
#define DATM_MODELS_DLDA_COMMON_H

#include "decoder/decoder.h"
#include "eval/perplexity.h"
#include "io/h5.h"
#include "pipeline/model.h"
#include "pipeline/params.h"

/* Rows common to both variants' tables (pipeline/params.h; each variant's table starts with
 * these) and their struct. */
#define DLDA_COMMON_PARAMS(X) \
    X(layers, "layers", INT_LIST, "[128, 64, 32]", 1, 1e6, NULL, \
      "widths K_1..K_L from the bottom (topics over words) up") \
    X(eta, "eta", REAL_LIST, "[]", 1e-12, 1e6, NULL, \
      "Dirichlet eta(l) of the Phi(l) columns: [] = 1/K_l (paper), one value for all " \
      "layers, or one per layer") \
    X(phi_init_lo, "phi_init_lo", REAL, "0.05", 0, 1, NULL, \
      "Phi init: entries lo + (1 - lo) U(0,1), columns normalised (docs/reference.md 1.1)") \
    X(gamma0, "gamma0", REAL, "1", 1e-12, 1e6, NULL, \
      "r_k ~ Gam(gamma0/K_L, 1/c0): gamma0") \
    X(c0, "c0", REAL, "1", 1e-12, 1e6, NULL, \
      "r_k ~ Gam(gamma0/K_L, 1/c0): c0") \
    X(r_floor, "r_floor", REAL, "1e-10", 0, 1, NULL, \
      "r_k is kept >= r_floor") \
    X(phi_floor, "phi_floor", REAL, "1e-10", 0, 1e-3, NULL, \
      "Phi entries are clamped to >= phi_floor before renormalising (no exact zeros)") \
    X(a0pj, "a0pj", REAL, "0.01", 1e-12, 1e6, NULL, \
      "p_n(2) ~ Beta(a0pj + x_n, b0pj + .)") \
    X(b0pj, "b0pj", REAL, "0.01", 1e-12, 1e6, NULL, \
      "p_n(2) ~ Beta(a0pj + ., b0pj + .)") \
    X(e0cj, "e0cj", REAL, "1", 1e-12, 1e6, NULL, \
      "c_n(t) ~ Gam(e0cj + ., 1)/(f0cj + .)") \
    X(f0cj, "f0cj", REAL, "1", 1e-12, 1e6, NULL, \
      "c_n(t) ~ Gam(e0cj + ., 1)/(f0cj + .)") \
    X(count_mode, "count_mode", CHOICE, "sampled", DATM_NOB, "sampled|expected", \
      "augmented counts fed to the global update: sampled, or their expectations " \
      "(FurCollapse, docs/reference.md 1.8)") \
    X(test_burnin, "test_burnin", INT, "100", 0, 1e7, NULL, \
      "test-document Gibbs sweeps (globals fixed) before the first evaluation draw") \
    X(eval_thin, "eval_thin", INT, "1", 1, 1e6, NULL, \
      "test-document sweeps per evaluation draw") \
    X(eval_globals, "eval_globals", CHOICE, "chain", DATM_NOB, "chain|fixed", \
      "chain: each evaluation draw also advances a copy of the global chain by one training " \
      "iteration, so the rate averages over Phi samples too (the authors' interleaved " \
      "protocol); fixed: the current globals only")
DATM_PARAMS_STRUCT(dlda_common_params, DLDA_COMMON_PARAMS)
void dlda_common_params_get(const datm_config *c, dlda_common_params *p);

/* Everything read from the model: section that both variants use. */
typedef struct dlda_cfg {
    int           L;
    int64_t       K[DATM_MAX_LAYERS + 1];   /* K[0] = V */
    datm_gbn_opts o;
    datm_aug_mode mode;
    int64_t       test_burnin, eval_thin;
    int           eval_chain;                   /* eval_globals == chain */
    int64_t       cp_after;                     /* as given (variant resolves defaults) */
} dlda_cfg;

/* Both variants' check op: the rules on the common keys alone (dlda_cfg_read applies them). */
int dlda_check(const datm_config *cfg, datm_error *err);
/* Decoder options from the common keys; cp_after is the variant's own row. */
int dlda_cfg_read(const dlda_common_params *p, int64_t cp_after, const datm_run_info *info,
                  dlda_cfg *out, datm_error *err);

/* What both variants' model structs start with (as their first member `b`): the plugin
 * header, the configuration, the globals and the borrowed training set. The shared
 * contract functions below take the datm_model pointer of either variant. */
typedef struct dlda_base {
    datm_model      base;
    dlda_cfg        c;
    datm_gbn       *g;
    const datm_csr *train;    /* (N, V) borrowed from datm_run_info */
    int64_t         n_train;
} dlda_base;

/* DLDA-TLASGR's local chain of mini-batch X spread over MPI ranks (train.reduce_chunks > 0;
 * models/dlda_chunks.c): burnin + collect sweeps of this rank's documents, with keys
 * (seed, purpose, step * 4096 + sweep, doc_ids); s gets every rank's counts of the collected
 * sweeps and q_sum, *loglik the log-likelihood sum of the last sweep over all documents, each
 * as one process computes them. ch must hold B documents. */
int dlda_chunks_sweeps(const datm_gbn *g, const datm_csr *X, const int64_t *doc_ids,
                       datm_gbn_chain *ch, int64_t burnin, int64_t collect,
                       const datm_gbn_sweep_opts *so, uint64_t seed, uint32_t purpose,
                       uint64_t step, datm_gbn_stats *s, double *loglik, datm_error *err);

/* Contract entries that are the same for both variants (infer, get_phi, n_layers). */
int dlda_op_infer(const datm_model *mm, const datm_csr *docs, uint64_t seed, int nsamples,
                  datm_theta *out, datm_error *err);
int dlda_op_get_phi(const datm_model *mm, int layer, const float **phi, int64_t *rows,
                    int64_t *cols);
int dlda_op_n_layers(const datm_model *mm);

/* Mixed seed for the evaluation copy's global draws (never the training streams). */
static inline uint64_t dlda_eval_seed(uint64_t seed) { return seed ^ 0xA5A5A5A5DEADBEEFull; }

/* A test-document chain with the globals passed in fixed (docs/reference.md 1.9, 4.2). */
typedef struct dlda_test {
    const datm_csr *X;          /* (N, V) observed part, borrowed */
    datm_gbn_chain *ch;
    float          *theta_f;    /* (N, K_1) float copy for the rate accumulator */
    uint64_t        seed;
    int64_t         cp_after;
    datm_aug_mode   mode;
    int64_t        *ids;        /* (N) stream ids of the rows, or NULL: the row number */
} dlda_test;

int  dlda_test_begin(const datm_gbn *g, const datm_csr *X, uint64_t seed, int64_t cp_after,
                     dlda_test *t, datm_error *err);
/* n sweeps with the globals of g; keys (seed, EVAL, sweep counter, row). */
int  dlda_test_sweeps(const datm_gbn *g, dlda_test *t, int64_t n, datm_error *err);
/* Adds Phi(1) theta(1) of the current state to acc. */
void dlda_test_add(const datm_gbn *g, dlda_test *t, datm_rate_accum *acc);
void dlda_test_end(dlda_test *t);

/* Evaluation state both variants share (the authors' interleaved protocol, docs/reference.md
 * 4.2): the test chain and, in chain mode, a copy of the globals that each draw advances by
 * one training iteration (the variant's own step) before the test sweeps. */
typedef struct dlda_eval {
    dlda_test t;
    datm_gbn *g;       /* chain mode: copy of the globals, else NULL */
    uint64_t  seed;
    int64_t   draws;
} dlda_eval;

/* Starts the test chain (cp_after as the variant resolves it) and, when b->c.eval_chain,
 * the copy of the globals. The caller adds its own parts, then runs dlda_eval_burnin. */
int  dlda_eval_open(const dlda_base *b, const datm_csr *obs, uint64_t seed, int64_t cp_after,
                    dlda_eval *e, datm_error *err);
/* c.test_burnin test sweeps with the globals fixed (before the first draw). */
int  dlda_eval_burnin(const dlda_base *b, dlda_eval *e, datm_error *err);
/* The end of a draw, after the variant advanced e->g (chain mode): c.eval_thin test sweeps
 * with e->g (or b->g when there is no copy), then Phi(1) theta(1) into acc. */
int  dlda_eval_draw(const dlda_base *b, dlda_eval *e, datm_rate_accum *acc, datm_error *err);
void dlda_eval_close(dlda_eval *e);

/* infer(): burn-in sweeps then nsamples (<= 0: 100) sweeps averaging theta per layer. */
int dlda_infer(const datm_gbn *g, const dlda_cfg *c, const datm_csr *docs, uint64_t seed,
               int nsamples, datm_theta *out, datm_error *err);

/* Decoder state under g as phi_1.., M_1.., r, state (datm_gbn_views). */
int dlda_save_gbn(datm_gbn *g, datm_h5 *grp, datm_error *err);
int dlda_load_gbn(datm_gbn *g, datm_h5 *grp, datm_error *err);

/* Per-document Poisson log-likelihood of X under Phi(1) theta(1) (theta (B, K_1)). */
double dlda_loglik_per_doc(const datm_gbn *g, const datm_csr *X, const double *theta1);

#endif
