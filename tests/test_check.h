/* tests/test_check.h: the CHECK macro of the C tests that count failures in `fails` (one per
 * failed check, each printed with file and line); the test's main returns fails ? 1 : 0.
 * Include once per test program (it defines the counter). */
#ifndef DATM_TEST_CHECK_H
#define DATM_TEST_CHECK_H

#include <stdio.h>

static int fails;
#define CHECK(c, ...)                                                  \
    do {                                                               \
        if (!(c)) {                                                    \
            fails++;                                                   \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);       \
            fprintf(stderr, __VA_ARGS__);                              \
            fprintf(stderr, "\n");                                     \
        }                                                              \
    } while (0)

#endif
