/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_core */
/* tests/test_core_memtune.c: datm_mem_keep_freed (engine/core/memtune.c). A round allocates
 * eight 1 MB blocks through datm_alloc (as an inference pass makes its per-thread workspaces),
 * writes them and frees them all. Under glibc's default policy the freed blocks at the heap's
 * top add up to more than its (dynamic) trim threshold, so every round gives the pages back
 * and faults them in again; after datm_mem_keep_freed the rounds reuse the same pages and take
 * (almost) no page faults. Page faults are counted by getrusage (minor faults), not timed; the
 * first rounds of each half settle the heap and are not counted. The page-fault part needs
 * glibc's allocator; with another (another C library, or AddressSanitizer's) only the part that
 * holds everywhere runs: datm_alloc hands out zeroed blocks before and after the call, also
 * when a block reuses memory that was written and freed (the "changes no value" of memtune.c). */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core/core.h"
#include "test_check.h"

/* (AddressSanitizer has its own allocator: glibc's settings do not apply there) */
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#define GLIBC_ALLOCATOR 1
#endif

enum { BLOCK = 1 << 20, NBLOCK = 8, ROUNDS = 12, COUNTED = 8 };

/* 1 when every block of ROUNDS rounds (each written, then freed) comes out of datm_alloc
 * zeroed */
static int blocks_come_zeroed(void)
{
    datm_error err = {0};
    int zero = 1;
    for (int r = 0; r < ROUNDS; r++) {
        unsigned char *p[NBLOCK];
        for (int b = 0; b < NBLOCK; b++) {
            p[b] = datm_alloc(BLOCK, &err);
            if (!p[b]) return 0;
            for (size_t i = 0; i < BLOCK; i += 509) zero &= p[b][i] == 0;
            zero &= p[b][BLOCK - 1] == 0;
            memset(p[b], 0xA5 ^ (r + b), BLOCK);
        }
        for (int b = NBLOCK - 1; b >= 0; b--) datm_free(p[b]);
    }
    return zero;
}

#ifdef GLIBC_ALLOCATOR

static long minor_faults(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

/* page faults of the last COUNTED of ROUNDS rounds */
static long faults_of_rounds(void)
{
    datm_error err = {0};
    long f0 = 0;
    for (int r = 0; r < ROUNDS; r++) {
        if (r == ROUNDS - COUNTED) f0 = minor_faults();
        char *p[NBLOCK];
        for (int b = 0; b < NBLOCK; b++) {
            p[b] = datm_alloc(BLOCK, &err);
            if (!p[b]) return -1;
            memset(p[b], r + b, BLOCK);   /* every page touched (datm_alloc zeroes too) */
        }
        for (int b = NBLOCK - 1; b >= 0; b--) datm_free(p[b]);
    }
    return minor_faults() - f0;
}
#endif

int main(void)
{
#ifndef GLIBC_ALLOCATOR
    CHECK(blocks_come_zeroed(), "a block from datm_alloc was not zeroed");
    datm_mem_keep_freed();
    CHECK(blocks_come_zeroed(), "after datm_mem_keep_freed, a block from datm_alloc was not zeroed");
    printf("not glibc's allocator: datm_mem_keep_freed leaves its policy; blocks come zeroed "
           "before and after it (the page-fault counts need glibc's allocator)\n");
    return fails ? 1 : 0;
#else
    CHECK(blocks_come_zeroed(), "a block from datm_alloc was not zeroed");
    const long pages = (long)COUNTED * NBLOCK * (BLOCK / 4096);
    const long before = faults_of_rounds();
    CHECK(datm_mem_keep_freed() == 1, "datm_mem_keep_freed did not take");
    const long after = faults_of_rounds();
    printf("page faults of %d rounds of %d blocks of %d KB (%ld pages written): %ld under the "
           "default policy, %ld after datm_mem_keep_freed\n", COUNTED, NBLOCK, BLOCK >> 10,
           pages, before, after);
    CHECK(before >= pages / 4, "the default policy should give the pages back each round "
          "(%ld faults for %ld pages)", before, pages);
    CHECK(after <= pages / 50, "the kept blocks should be reused (%ld faults for %ld pages)",
          after, pages);
    CHECK(blocks_come_zeroed(), "after datm_mem_keep_freed, a block from datm_alloc was not zeroed");
    return fails ? 1 : 0;
#endif
}
