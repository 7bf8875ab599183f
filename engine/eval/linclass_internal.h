/* engine/eval/linclass_internal.h: between linclass.c (the API: input, standardisation,
 * liblinear rows, prediction) and linclass_ovr.c (the one-vs-rest fits and the CV path).
 * D + 1 = liblinear's feature count (the features and the bias feature). */
#ifndef DATM_LINCLASS_INTERNAL_H
#define DATM_LINCLASS_INTERNAL_H

#include <linear.h>

#include "eval/linclass.h"

/* Chooses C by the CV path of linclass.h over the rows of `all` (labels 0..C-1 as doubles;
 * y the same as int32), filling m->C, cv_accuracy, n_cv_docs and the path. base:
 * liblinear's parameters. w_best (C, D + 1), unless NULL: per class the mean of the folds'
 * one-vs-rest solutions at the chosen C, a start for the final fit. */
int datm_linclass_cv(const struct problem *all, const int32_t *y, int c,
                     const struct parameter *base, const datm_linclass_params *p,
                     datm_linclass *m, double *w_best, datm_error *err);

/* The one-vs-rest model of all rows at base->C (eps base->eps), the binary fits in parallel,
 * assembled into a liblinear model so that liblinear's predict functions read it. The fits
 * start from init (C, D + 1; class k's row for class k's function) or, when NULL, from 0;
 * liblinear's stopping test is relative to the gradient at 0 either way, so a start only
 * saves iterations. NULL with err set on failure. */
struct model *datm_linclass_ovr_fit(const struct problem *all, int c,
                                    const struct parameter *base, const double *init,
                                    datm_error *err);

#endif
