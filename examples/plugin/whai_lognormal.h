/* examples/plugin/whai_lognormal.h: the log-normal family of the example plugin, for its
 * gradient test. */
#ifndef WHAI_LOGNORMAL_H
#define WHAI_LOGNORMAL_H

#include <datm_model.h>

const datm_posterior_family *whai_lognormal_family(void);

#endif
