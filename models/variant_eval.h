/* models/variant_eval.h: the "chain" evaluation protocol of models/whai.c (eval_globals =
 * chain) for WHAI variants whose training iteration is not WHAI's (wai: Adam on softmax
 * topics; layerwise: a gamma-NB top layer). Each evaluation draw first advances a COPY of the
 * variant's trainable state by `thin` of its own iterations on random training mini-batches,
 * then pairs the encoder's theta of every evaluation document (observed part) with that
 * copy's Phi(1) and adds theta(1) Phi(1)^T to the rate accumulator (docs/reference.md 4.5; the
 * authors' perplexity.m). The training state itself is never changed. Not a variant. */
#ifndef DATM_MODELS_VARIANT_EVAL_H
#define DATM_MODELS_VARIANT_EVAL_H

#include "encoder/encoder.h"
#include "eval/perplexity.h"
#include "pipeline/model.h"

/* What the protocol needs from a variant; c is a copy made by copy(). */
typedef struct variant_chain_ops {
    void *(*copy)(datm_model *m, datm_error *err);            /* NULL on failure (err set) */
    void  (*free_copy)(datm_model *m, void *c);
    /* one training iteration of c on X (rows doc_ids), random streams (seed, purpose, step) */
    int   (*iterate)(datm_model *m, void *c, const datm_csr *X, const int64_t *doc_ids,
                     uint64_t seed, uint32_t purpose, uint64_t step, datm_error *err);
    /* c's encoder weights (laid out as enc->params) and float topics phi[1..L] */
    void  (*view)(datm_model *m, void *c, const float **params, const float *const **phi);
} variant_chain_ops;

typedef struct variant_eval_cfg {
    const datm_encoder *enc;     /* layout of the weights (the copy's shapes) */
    const datm_csr     *train;   /* training documents for the copy's mini-batches */
    int64_t             B;       /* mini-batch size */
    int64_t             thin;    /* copy iterations per draw (>= 1) */
    int                 theta_sample;   /* 1: one encoder sample per draw; 0: the mean */
} variant_eval_cfg;

int  variant_eval_begin(datm_model *m, const variant_chain_ops *ops, const variant_eval_cfg *cfg,
                        const datm_csr *obs, uint64_t seed, void **state, datm_error *err);
int  variant_eval_step(datm_model *m, void *state, int64_t draw, datm_rate_accum *acc,
                       datm_error *err);
void variant_eval_end(datm_model *m, void *state);

#endif
