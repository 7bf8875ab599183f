/* engine/eval/linclass_internal.h: between linclass.c (the API: input, standardisation,
 * liblinear rows, prediction) and linclass_ovr.c (the one-vs-rest fits and the CV path).
 * D + 1 = liblinear's feature count (the features and the bias feature). */
#ifndef DATM_LINCLASS_INTERNAL_H
#define DATM_LINCLASS_INTERNAL_H

#include <linear.h>

#include "eval/linclass.h"

/* Chooses C by the CV path of linclass.h over the rows of `all` (labels 0..C-1 as doubles;
 * y the same as int32), filling m->C, cv_accuracy, n_cv_docs and the path. base:
 * liblinear's parameters. */
int datm_linclass_cv(const struct problem *all, const int32_t *y, int c,
                     const struct parameter *base, const datm_linclass_params *p,
                     datm_linclass *m, datm_error *err);

/* The one-vs-rest model of all rows at base->C (eps base->eps), the binary fits cold and in
 * parallel, assembled into a liblinear model so that liblinear's predict functions read it.
 * NULL with err set on failure. */
struct model *datm_linclass_ovr_fit(const struct problem *all, int c,
                                    const struct parameter *base, datm_error *err);

#endif
