/* models/ghai.h: the gamma posterior family of GHAI (paper sec. II-E, eq. RSVI-posterior) as a
 * datm_posterior_family for engine/encoder, one table per shape boost B. Exposed for tests;
 * the variant itself is models/ghai.c. */
#ifndef DATM_MODELS_GHAI_H
#define DATM_MODELS_GHAI_H

#include "encoder/encoder.h"

#define GHAI_MAX_BOOST 8
/* Floor of a gamma draw: below it theta is set to the floor with zero gradient (tiny shapes
 * raise U(0,1) to powers up to 1/0.1 = 10, which would otherwise underflow float). */
#define GHAI_THETA_MIN 1e-10

/* The family with boost B (1..GHAI_MAX_BOOST), or NULL when out of range. */
const datm_posterior_family *ghai_family(int boost);

#endif
