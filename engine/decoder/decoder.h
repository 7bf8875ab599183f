/* engine/decoder/decoder.h: the gamma belief network (PGBN / deep LDA) decoder of paper
 * section II-A — its global state, the upward count augmentation, the TLASGR-MCMC update
 * of Phi(l) and r, the upward-downward Gibbs sampler of the local variables, and the Gibbs
 * draws of the globals.
 *
 * Dimensions: L layers, K[0] = V words, K[l] units of layer l, B documents of a call.
 * Layout (engine convention): Phi(l) is (K[l-1], K[l]) row-major with columns on the
 * simplex; theta(l) is (B, K[l]) row-major (documents are rows); counts X are CSR (B, V).
 * Everything here is double precision; phi_f[] is a float mirror for float consumers.
 *
 * How the pieces fit (one TLASGR iteration of WHAI or DLDA-TLASGR):
 *     datm_gbn_stats_reset(s);
 *     datm_gbn_augment(g, X, theta, &key, mode, s, err);        WHAI: theta from the encoder
 *  or datm_gbn_chain_sweep(g, X, chain, &key, &sw, s, err);     DLDA: collection sweeps
 *     datm_tlasgr_step(g, s, rho, seed, &rep, err);             paper eqs. (Phi-updata,
 *                                                               r_update, update_M)
 * A Gibbs iteration (DLDA-Gibbs) replaces the last call by datm_gbn_gibbs_globals().
 *
 * Determinism: every random draw of document n comes from the stream
 * (key.seed, key.purpose, key.step, doc_ids[n]); global draws from (seed, PHI_NOISE or
 * BATCH, t*64 + l, column). Count sums over documents are accumulated per thread in 64-bit
 * fixed point (exact for counts), so results are bitwise identical for any thread count. */
#ifndef DATM_DECODER_H
#define DATM_DECODER_H

#include <stdint.h>

#include "core/core.h"
#include "data/csr.h"

/* ---- options: every constant of the decoder (docs/reference.md 1.1-1.9 for defaults) ---- */
typedef struct datm_gbn_opts {
    double eta[DATM_MAX_LAYERS + 1]; /* Dirichlet eta(l), l = 1..L; <= 0 -> 1/K_l (paper) */
    double init_lo;                 /* Phi init: init_lo + (1 - init_lo) U(0,1), normalised */
    int    use_r;                   /* 1: top shape r (DLDA); 0: top prior Gamma(1, 1) (WHAI) */
    double r_init;                  /* <= 0 -> 1/K_L */
    double gamma0, c0;              /* r_k ~ Gam(gamma0/K_L, 1/c0) */
    double r_floor;                 /* r_k >= r_floor after every update */
    /* TLASGR schedule: eps_t = eps0 ((tau0 + t)/(tau0 + 1))^-kappa0, t = 1, 2, ... */
    double eps0, tau0, kappa0;
    /* eps'_t for the annealed M (paper eq. update_M), same form; MATLAB: 0.5, 20, 0.7 */
    double epsm0, taum0, kappam0;
    double m_floor;                 /* M_k >= m_floor (empty topics would blow the step up) */
    double phi_floor;               /* simplex projection clamps entries to >= phi_floor */
    /* local Gibbs hyper-parameters (docs/reference.md 1.9) */
    double a0pj, b0pj;              /* p_n(2) ~ Beta(a0 + ., b0 + .) */
    double e0cj, f0cj;              /* c_n(t) ~ Gam(e0 + ., 1) / (f0 + .) */
    /* Gibbs hyper-priors of gamma0 and c0 (datm_gbn_gibbs_globals with sample_hyper) */
    double a0, b0, e0, f0;
} datm_gbn_opts;

void datm_gbn_opts_default(datm_gbn_opts *o);

typedef struct datm_gbn {
    int     L;
    int64_t K[DATM_MAX_LAYERS + 1];     /* K[0] = V */
    double *phi[DATM_MAX_LAYERS + 1];   /* phi[l] (K[l-1], K[l]); phi[0] unused */
    float  *phi_f[DATM_MAX_LAYERS + 1]; /* float copy, refreshed by every update */
    double *M[DATM_MAX_LAYERS + 1];     /* M[l] (K[l]) TLASGR preconditioner */
    double *r;                              /* (K[L]) top-layer shape, NULL when !use_r */
    double  M_r;                            /* M^(L+1), preconditioner of r */
    double  gamma0, c0;
    double  eta[DATM_MAX_LAYERS + 1];   /* resolved eta(l) */
    int64_t t;                              /* TLASGR steps taken (0 = M not yet set) */
    datm_gbn_opts o;
    double  state[4];                       /* packed [t, M_r, gamma0, c0] for the views */
} datm_gbn;

/* Allocates and initialises (Phi random as in docs/reference.md 1.1, keyed by
 * (seed, INIT, layer); r = r_init; M = 0). K has L + 1 entries, K[0] = V. */
int  datm_gbn_create(int L, const int64_t *K, const datm_gbn_opts *o, uint64_t seed,
                     datm_gbn **out, datm_error *err);
void datm_gbn_destroy(datm_gbn **g);
/* Copies the whole state of src into dst (same shapes). */
void datm_gbn_copy(datm_gbn *dst, const datm_gbn *src);
/* Refreshes phi_f from phi (call after editing phi by hand). */
void datm_gbn_sync_f(datm_gbn *g);
/* First non-finite or out-of-simplex column: returns 0 when all is well, else fills err. */
int  datm_gbn_check(const datm_gbn *g, double tol, datm_error *err);

/* Named views of the state, for save/load by models (the decoder does not depend on io).
 * Names: phi_1..phi_L (K[l-1], K[l]); M_1..M_L (K[l]); r (K[L]) when present; state (4):
 * [t, M_r, gamma0, c0] (packed by datm_gbn_views). After reading data into the views,
 * datm_gbn_view_commit() unpacks "state" and refreshes phi_f. */
typedef struct datm_gbn_view {
    char    name[16];
    double *data;
    int     rank;
    int64_t dims[2];
} datm_gbn_view;
int  datm_gbn_views(datm_gbn *g, datm_gbn_view *out, int max);   /* returns count */
void datm_gbn_view_commit(datm_gbn *g);

/* ---- augmented-count statistics: sums over documents (and passes) ---- */
typedef struct datm_gbn_stats {
    int     L;
    int64_t K[DATM_MAX_LAYERS + 1];
    double *A[DATM_MAX_LAYERS + 1];  /* A[l] (K[l-1], K[l]) summed counts ("WSZS") */
    double *tables;                      /* (K[L]) top-layer CRT tables summed (for r) */
    double  q_sum;                       /* sum over docs of q_n(L+1) = -ln(1 - p_n(L+1)) */
    int64_t n_passes;                    /* augmentation passes added since reset */
    /* private: per-thread fixed-point accumulators, reduced into A/tables on demand */
    int      n_threads;
    int64_t  fx_off[DATM_MAX_LAYERS + 2]; /* fx_off[l]: A[l]; fx_off[L+1]: tables */
    int64_t  fx_len;
    int64_t *fx;                         /* (n_threads, fx_len) */
    int      dirty;
    /* optional sparse bookkeeping (datm_gbn_stats_track): a mini-batch makes ~1 in 50 of
     * A(1)'s V x K1 counts nonzero, so reset, fold and an exchange of the counts between
     * processes visit the listed entries instead of all fx_len of every thread */
    int64_t *trk;        /* (n_threads, fx_len) entries of each accumulator made nonzero */
    int64_t *trk_n;      /* (n_threads) listed; trk_n[0] < 0: unknown, go dense */
    int      trk_lost;   /* an unlisted write since reset (expected counts, a Gibbs sweep,
                          * a second fold): reset and fold go dense */
    int      trk_tail;   /* fold listed thread 0's nonzero entries of layers >= 2 and tables */
} datm_gbn_stats;

int  datm_gbn_stats_create(const datm_gbn *g, datm_gbn_stats **out, datm_error *err);
void datm_gbn_stats_destroy(datm_gbn_stats **s);
void datm_gbn_stats_reset(datm_gbn_stats *s);
/* Makes A / tables current (the consumers below call it themselves). */
void datm_gbn_stats_reduce(datm_gbn_stats *s);
/* Folds the per-thread accumulators into the first (the others become 0) and returns it:
 * fx_len fixed-point counts that another process's counts can be added to exactly
 * (engine/par: the counts of every rank summed before the TLASGR step). On tracked stats
 * the next reset clears all fx_len entries, since what the caller adds is not listed. */
int64_t *datm_gbn_stats_fold(datm_gbn_stats *s);
/* Turns the sparse bookkeeping on (it stays on; the counts are the same either way): the
 * sampled layer-1 counts of datm_gbn_augment list the entries they make nonzero, per thread;
 * layers >= 2 and the tables (K1 K2 + ... entries, small) are cleared and folded densely.
 * Any other write (expected counts, datm_gbn_chain_sweep) turns it off until the next reset. */
int  datm_gbn_stats_track(datm_gbn_stats *s, datm_error *err);
/* datm_gbn_stats_fold that, when tracked, also lists thread 0's nonzero entries: idx (room
 * for fx_len) holds *n of them (an exchange may append the entries it makes nonzero and
 * update *n, or set it to -1: unknown, the next reset clears all). idx and n are NULL when
 * the counts are not listed (not tracked, or an unlisted write since the reset).
 * The counts must be non-negative (sampled counts are). */
int64_t *datm_gbn_stats_fold_listed(datm_gbn_stats *s, int64_t **idx, int64_t **n);

/* Which counts go into the stats: sampled (one categorical draw per token / table), or
 * their conditional expectations ("FurCollapse", docs/reference.md 1.8); m is sampled in both. */
typedef enum { DATM_AUG_SAMPLED = 0, DATM_AUG_EXPECTED = 1 } datm_aug_mode;

/* Random-stream key of one pass over B documents. */
typedef struct datm_gbn_key {
    uint64_t       seed;
    uint32_t       purpose;   /* DATM_STREAM_DOC (training) or DATM_STREAM_EVAL (test) */
    uint64_t       step;      /* unique per pass, e.g. iteration * 4096 + sweep */
    const int64_t *doc_ids;   /* (B) stream index per row; NULL: the row number */
} datm_gbn_key;

/* Upward augmentation from a given theta (docs/reference.md 1.8): layer 1 splits each count
 * x_vn over topics in proportion to phi_vk theta_kn, layers t >= 2 draw
 * CRT(m(t-1)_k'n, (Phi(t) theta(t))_k'n) tables and split them likewise; top-layer tables
 * CRT(m(L)_kn, r_k) when use_r. theta[l] (B, K[l]) for l = 1..L (theta[0] unused).
 * Adds to s (q_sum uses c = 1, i.e. q(t+1) = ln(1 + q(t))). m_out, if non-NULL, gets
 * m_out[l] (B, K[l]) per-document counts (caller-allocated, l = 1..L). */
int datm_gbn_augment(const datm_gbn *g, const datm_csr *X, const double *const *theta,
                     const datm_gbn_key *key, datm_aug_mode mode, datm_gbn_stats *s,
                     int32_t *const *m_out, datm_error *err);

/* ---- TLASGR-MCMC (paper eqs. Phi-updata, r_update, update_M) ---- */
double datm_tlasgr_eps(double eps0, double tau0, double kappa0, int64_t t);

typedef struct datm_tlasgr_report {
    double eps, eps_m;                          /* eps_t and eps'_t used */
    double step_mean[DATM_MAX_LAYERS + 2];  /* mean eps/M_k per layer; [L+1]: r */
} datm_tlasgr_report;

/* One step on every Phi(l) (and r when use_r and s has tables): t = ++g->t; A is averaged
 * over s->n_passes and scaled by rho = N / B; M set on the first step, then annealed with
 * eps'_t and floored; diagonal noise from (seed, PHI_NOISE, t*64 + l, column); projection
 * datm_simplex_project. rep may be NULL. Fails (DATM_E_NUMERIC) naming layer and column if a
 * non-finite value appears. */
int datm_tlasgr_step(datm_gbn *g, datm_gbn_stats *s, double rho, uint64_t seed,
                     datm_tlasgr_report *rep, datm_error *err);

/* The same step with Phi's columns split over `parts` processes (engine/par): this one
 * updates the blocks of 8 columns (over all layers, layer 1 first) datm_tlasgr_part_blocks
 * gives it (parts of about equal rows x columns), then exchange() must give it
 * every other block's new columns of phi, phi_f and M, and merge into bad[l] (l = 1..L; -1:
 * none) the first non-finite column of each layer; then the step ends as datm_tlasgr_step
 * (r, t, the report, the error naming a bad column). Every column gets the operations and
 * noise it gets in datm_tlasgr_step (its noise is keyed by the column): the same numbers.
 * datm_tlasgr_step is part 0 of 1 without exchange. */
typedef int (*datm_tlasgr_exchange_fn)(datm_gbn *g, int part, int parts, int64_t *bad,
                                       void *user, datm_error *err);
int datm_tlasgr_step_part(datm_gbn *g, datm_gbn_stats *s, double rho, uint64_t seed, int part,
                          int parts, datm_tlasgr_exchange_fn exchange, void *user,
                          datm_tlasgr_report *rep, datm_error *err);
int64_t datm_tlasgr_n_blocks(const datm_gbn *g);
/* Blocks [b0, b1) of part `part` of `parts`. */
void    datm_tlasgr_part_blocks(const datm_gbn *g, int part, int parts, int64_t *b0, int64_t *b1);
/* Block bk: layer, first column k0 and width w (<= 8). */
void    datm_tlasgr_block(const datm_gbn *g, int64_t bk, int *layer, int64_t *k0, int *w);
/* datm_tlasgr_step_part over the MPI ranks (engine/decoder/tlasgr_ranks.c): rank r updates
 * part r of R and the ranks exchange their columns; the numbers of datm_tlasgr_step. */
int datm_tlasgr_step_ranks(datm_gbn *g, datm_gbn_stats *s, double rho, uint64_t seed,
                           datm_tlasgr_report *rep, datm_error *err);

/* Plain single-threaded reference of datm_tlasgr_step (one column at a time, one
 * datm_rng_normal per entry): the same results bit for bit; for tests and benchmarks. */
int datm_tlasgr_step_ref(datm_gbn *g, datm_gbn_stats *s, double rho, uint64_t seed,
                         datm_tlasgr_report *rep, datm_error *err);

/* [.]_angle of paper eq. (Phi-updata): shift along the old column so the new one sums to 1,
 * clamp every entry to >= floor, renormalise. col and old are n entries apart by stride. */
void datm_simplex_project(double *col, const double *old, int64_t n, int64_t stride,
                          double floor);

/* ---- local Gibbs chain (upward-downward, paper Fig. 1c; docs/reference.md 1.9) ---- */
typedef struct datm_gbn_chain {
    int      L;
    int64_t  n_docs;                           /* B */
    int64_t  K[DATM_MAX_LAYERS + 1];
    double  *theta[DATM_MAX_LAYERS + 1];   /* theta[l] (B, K[l]) */
    int32_t *m[DATM_MAX_LAYERS + 1];       /* m[l] (B, K[l]) last upward counts */
    double  *c;                                /* (B, L + 2): c_n(t), t = 2..L+1 */
    double  *p;                                /* (B, L + 2): p_n(t), t = 2..L+1 */
    double  *q_top;                            /* (B) q_n(L+1) of the last sweep */
    double  *loglik;                           /* (B) log Pois(x_n | Phi(1) theta(1)) at the
                                                  start of the last sweep */
    int64_t  sweeps;                           /* sweeps since the last init */
} datm_gbn_chain;

int  datm_gbn_chain_create(const datm_gbn *g, int64_t n_docs, datm_gbn_chain **out,
                           datm_error *err);
void datm_gbn_chain_destroy(datm_gbn_chain **ch);
/* theta(t) = 1/K_t, c = 1, sweeps = 0 (docs/reference.md 1.1). n_docs may shrink (<= capacity). */
void datm_gbn_chain_init(datm_gbn_chain *ch, int64_t n_docs);
void datm_gbn_chain_copy(datm_gbn_chain *dst, const datm_gbn_chain *src);

typedef struct datm_gbn_sweep_opts {
    int64_t       cp_after;   /* sample c_n, p_n once ch->sweeps >= cp_after (before: c = 1) */
    datm_aug_mode mode;       /* what goes into the stats */
} datm_gbn_sweep_opts;

/* One sweep for every document: upward augmentation from the current theta (into s when
 * non-NULL, with q_sum from the sampled c/p), c and p, then theta(L) .. theta(1) downward
 * from their gamma conditionals. Globals are read only. */
int datm_gbn_chain_sweep(const datm_gbn *g, const datm_csr *X, datm_gbn_chain *ch,
                         const datm_gbn_key *key, const datm_gbn_sweep_opts *so,
                         datm_gbn_stats *s, datm_error *err);

/* Sum over documents of ch->loglik (fixed order): the Poisson log-likelihood of the counts
 * under the theta(1) the last sweep started from (free by-product of the upward pass). */
double datm_gbn_chain_loglik(const datm_gbn_chain *ch);

/* ---- Gibbs draws of the globals (DLDA-Gibbs) ---- */
/* Phi(l)_k ~ Dir(eta(l) + A(l)_.k) for every layer and column; r_k ~
 * Gam(gamma0/K_L + tables_k, 1) / (c0 + q_sum); with sample_hyper also gamma0 and c0
 * (docs/reference.md 1.7). Streams (seed, BATCH, iteration*64 + l, column). s is one pass. */
int datm_gbn_gibbs_globals(datm_gbn *g, datm_gbn_stats *s, uint64_t seed, int64_t iteration,
                           int sample_hyper, datm_error *err);

/* ---- helpers ---- */
/* Poisson log-likelihood sum over the documents of X under rate Phi(1) theta(1)
 * (theta1 (B, K[1])), including -lgamma(x + 1); rates floored at 1e-300. */
double datm_gbn_loglik(const datm_gbn *g, const datm_csr *X, const double *theta1);

#endif
