/* tests/fuzz/no_clones.h: force-included in the fuzz build. clang 14 does not export the
 * plain symbol of a target_clones function from a static library (only its clones and
 * resolver), so the harnesses would not link; the fuzz build compiles each such function once
 * for the baseline instead (what it computes is the same). */
#define target_clones(...) unused
