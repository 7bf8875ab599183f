/* models/sdatm_ens.h: the states behind sDATM's trajectory ensemble (model.predict_snapshots;
 * not in the paper). The paper's prediction (eq. prediction) averages p(y | x) over joint
 * draws of theta and W from one final state. The topics, though, are an SG-MCMC chain, and
 * perplexity already averages over Phi samples collected along it after burn-in
 * (docs/reference.md 1.10); this part collects the prediction's states the same way: the
 * encoder weights, the head (its standardisation included) and Phi(2..L) (what the encoder's
 * downward terms read; Phi(1) only scores the words) at the ends of the last supervised
 * epochs. Prediction then averages p(y | x) over the held states (sdatm.c).
 *
 * The states are kept oldest first in one block (n x slot_len floats), so that the saved
 * array is in order and a resumed run continues the same ring. */
#ifndef DATM_MODELS_SDATM_ENS_H
#define DATM_MODELS_SDATM_ENS_H

#include <stdint.h>

#include "core/core.h"
#include "encoder/encoder.h"

struct datm_h5;

typedef struct sdatm_ens {
    int      cap;                               /* states kept (0: off) */
    int      n;                                 /* states held, <= cap */
    int      L;
    int64_t  len_enc, len_head;                 /* floats of encoder and head parameters */
    int64_t  len_phi[DATM_MAX_LAYERS + 1];  /* floats of Phi(l), l = 2..L (0 else) */
    int64_t  slot_len;                          /* floats per state */
    float   *block;                             /* (cap, slot_len), states 0..n-1 oldest first */
    int64_t *epoch;                             /* (cap) 1-based epoch each state ends */
} sdatm_ens;

/* One held state, read-only views into the block; phi[l] for l = 2..L, NULL below. */
typedef struct sdatm_ens_state {
    const float *enc, *head;
    const float *phi[DATM_MAX_LAYERS + 1];
} sdatm_ens_state;

/* Allocates cap states of len_enc + len_head + sum_l rows[l] * cols[l] floats (Phi(l) is
 * rows[l] x cols[l], l = 2..L). cap 0 allocates nothing. */
int  sdatm_ens_init(sdatm_ens *e, int cap, int64_t len_enc, int64_t len_head, int L,
                    const int64_t *rows, const int64_t *cols, datm_error *err);
/* Copies a state in as the newest (dropping the oldest when cap are held). */
void sdatm_ens_take(sdatm_ens *e, int64_t epoch, const float *enc, const float *head,
                    const float *const *phi);
/* State j (0 = oldest). */
sdatm_ens_state sdatm_ens_get(const sdatm_ens *e, int j);
/* Group "trajectory_ensemble" in g: states (n, slot_len), epoch (n); attribute cap. Nothing
 * when e->n == 0. */
int  sdatm_ens_save(const sdatm_ens *e, struct datm_h5 *g, datm_error *err);
/* Reads what sdatm_ens_save wrote, when g has the group (else e->n = 0); the shapes must
 * match this model's. */
int  sdatm_ens_load(sdatm_ens *e, struct datm_h5 *g, datm_error *err);
void sdatm_ens_free(sdatm_ens *e);

#endif
