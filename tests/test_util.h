/* tests/test_util.h: small helpers of the C tests that are not checks: a generator of the
 * test's own (independent of the engine's datm_rng) and whole-file reads and writes.
 * Header-only; every function is static. */
#ifndef DATM_TEST_UTIL_H
#define DATM_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* splitmix64: U(0, 1) strictly inside (0, 1), from the caller's state. */
__attribute__((unused)) static double tu_unif(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

/* N(0, 1) by Box-Muller from two tu_unif draws. */
__attribute__((unused)) static double tu_gauss(uint64_t *s)
{
    return sqrt(-2 * log(tu_unif(s))) * cos(6.283185307179586 * tu_unif(s));
}

/* Writes text as the whole file at path (the test's own scratch files). */
__attribute__((unused)) static void tu_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); exit(1); }
    fputs(text, f);
    fclose(f);
}

/* The whole file at path, NUL-terminated (free it); *n its size, -1 on a short read; NULL
 * (and *n = -1) when it cannot be opened. */
__attribute__((unused)) static char *tu_slurp(const char *path, long *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) { *n = -1; return NULL; }
    fseek(f, 0, SEEK_END);
    *n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)*n + 1);
    if (fread(b, 1, (size_t)*n, f) != (size_t)*n) *n = -1;
    else b[*n] = '\0';
    fclose(f);
    return b;
}

#endif
