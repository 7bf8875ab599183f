/* engine/core/memtune.c: freed memory kept in the process for the next allocation.
 *
 * Why: glibc serves blocks above its mmap threshold (128 KB at first) with fresh mappings and
 * returns them to the system on free, and it trims the heap's free top beyond 128 KB. The
 * engine allocates such blocks per call (the encoder's per-thread workspaces of an inference
 * pass, TLASGR's block buffers per step, the evaluation's draws), so every call touched new
 * pages, and every first touch is a page fault. Where a fault is cheap this hardly shows; on
 * a paravirtualised machine (an AMD EPYC guest) the
 * faults and the zeroing behind them were most of an inference pass: 156k docs/s at
 * 20News 128-64-32 against 890k with the memory kept. Keeping it changes no value (every
 * block is zeroed by datm_alloc either way), only where the pages come from.
 *
 * The settings are the C library's, for the whole process: blocks up to 32 MB (glibc's
 * largest allowed threshold on 64-bit) come from the heap, and up to 512 MB of free heap top
 * stays mapped. Larger blocks (corpora, caches of a whole data set) are still mapped and
 * unmapped one by one; they are made a few times per run. */
#include "core/core.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int datm_mem_keep_freed(void)
{
#if defined(__GLIBC__)
    const int ok_mmap = mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    const int ok_trim = mallopt(M_TRIM_THRESHOLD, 512 * 1024 * 1024);
    return ok_mmap == 1 && ok_trim == 1;
#else
    return 0;   /* another C library: its own policy stays */
#endif
}
