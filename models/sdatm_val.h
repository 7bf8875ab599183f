/* models/sdatm_val.h: early stopping of sDATM's supervised phase on a validation split of the
 * TRAINING documents (not in the paper, which trains a fixed 300 supervised epochs; the
 * supervised phase can overfit the training labels). This part owns the split
 * (stratified by class and drawn from the run's seed, so a corpus stored sorted by class does
 * not give a one-class validation set) and the record of validation errors that says when a
 * state is the best so far and when to stop. The model state itself (snapshot of encoder,
 * decoder and head; restore) is sdatm.c's. Letters: N training documents, C classes. */
#ifndef DATM_MODELS_SDATM_VAL_H
#define DATM_MODELS_SDATM_VAL_H

#include <stdint.h>

#include "core/core.h"

struct datm_h5;

typedef struct sdatm_val {
    int64_t  N;            /* training documents */
    int64_t  n;            /* validation documents (0: early stopping off) */
    int64_t *rows;         /* (n) row ids of the validation documents, increasing */
    int64_t *fit_rows;     /* (N - n) row ids of the documents that train, increasing */
    uint8_t *is_val;       /* (N) 1 for a validation document */
    int64_t  patience;     /* checks without a new best before stopping; 0 = never stop */
    int64_t  n_checks, cap;
    int64_t *epoch;        /* (cap) 1-based epoch at check i */
    double  *error;        /* (cap) validation error rate at check i */
    int64_t  best;         /* index of the best check whose state is kept; -1 none */
    int64_t  stopped_epoch;/* 1-based epoch after which training stopped; 0 = not stopped */
    int      monitor_only; /* 1: checks are recorded only (sdatm.c's trajectory ensemble):
                              no state is kept or restored */
} sdatm_val;

typedef enum {
    SDATM_VAL_WORSE = 0,   /* no better than the best so far: keep going */
    SDATM_VAL_BEST = 1,    /* new best: the caller snapshots the state */
    SDATM_VAL_STOP = 2     /* patience used up: the caller restores the best and stops */
} sdatm_val_verdict;

/* Draws the split: in each class c (labels (N) in 0..C-1), round(fraction * N_c) documents
 * chosen uniformly by a seeded shuffle. fraction 0 leaves v->n = 0. Errors name
 * model.val_fraction when the split leaves no validation or no training document. */
int  sdatm_val_split(sdatm_val *v, const int32_t *labels, int64_t N, int C, double fraction,
                     int64_t patience, uint64_t seed, datm_error *err);
/* Records the validation error of a check after 1-based epoch `epoch` (strictly smaller than
 * the best = new best; ties keep the earlier state). */
int  sdatm_val_record(sdatm_val *v, int64_t epoch, double error, sdatm_val_verdict *verdict,
                      datm_error *err);
/* Group "early_stopping" in g: val_docs (n), epoch and val_error (n_checks), attributes
 * best_epoch, best_error, stopped_epoch (0 = ran to the end), patience, monitor_only (1: the
 * best state was not kept; the model is the last trained one). */
int  sdatm_val_save(const sdatm_val *v, struct datm_h5 *g, datm_error *err);
/* Reads the record back when g has the group (a resumed run), best included; the best
 * state's snapshot itself is the caller's (sdatm.c saves it beside the record). */
int  sdatm_val_load(sdatm_val *v, struct datm_h5 *g, datm_error *err);
void sdatm_val_free(sdatm_val *v);

#endif
