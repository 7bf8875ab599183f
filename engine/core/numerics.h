/* engine/core/numerics.h: the version of what datm computes. A finished run is reused by the
 * pipeline's run cache (engine/pipeline/cache.c) when its key matches; the key holds this
 * number, the spec's settings and the data's content hashes, not a hash of the sources, so a
 * refactor, a comment or a faster kernel that computes the same numbers keeps every cached
 * run valid. Bump it in the same commit as any change that alters the numbers a spec produces
 * (a model's maths, a sampler, a random stream, the evaluation, or the default of a key), and
 * record the new golden figures there too: tests/test_numerics_golden.sh runs every variant
 * briefly and fails when the figures move while this number stays. */
#ifndef DATM_NUMERICS_H
#define DATM_NUMERICS_H

#define DATM_NUMERICS_VERSION 2

#endif
