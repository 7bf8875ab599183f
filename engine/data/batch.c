/* engine/data/batch.c: the seeded mini-batch iterator. Epoch e visits the documents in the
 * permutation drawn from the stream (seed, DATM_STREAM_SHUFFLE, e), so any (epoch, batch)
 * can be re-created from scratch -- which is what resuming from a checkpoint needs. */
#include "data/data.h"

#include <string.h>

#include "rand/rand.h"

/* Fills it->perm with the order of epoch it->epoch. */
static void make_perm(datm_batch_iter *it)
{
    for (int64_t i = 0; i < it->n; i++) it->perm[i] = i;
    if (it->shuffle) {
        datm_rng r;
        datm_rng_init(&r, it->seed, DATM_STREAM_SHUFFLE, (uint64_t)it->epoch);
        datm_rng_shuffle_i64(&r, it->perm, it->n);
    }
}

int datm_batch_iter_init(datm_batch_iter *it, int64_t n, int64_t batch_size, uint64_t seed,
                         int shuffle, int drop_last, datm_error *err)
{
    DATM_ASSERT(it);
    memset(it, 0, sizeof *it);
    if (n <= 0)
        return datm_error_set(err, DATM_E_INVALID, "mini-batches: no documents (n = %lld)",
                              (long long)n);
    if (batch_size <= 0)
        return datm_error_set(err, DATM_E_INVALID, "mini-batches: batch size %lld must be >= 1",
                              (long long)batch_size);
    if (drop_last && batch_size > n)
        return datm_error_set(err, DATM_E_INVALID,
                              "mini-batches: batch size %lld > %lld documents with drop_last gives "
                              "no batch at all", (long long)batch_size, (long long)n);
    it->perm = datm_alloc_array((size_t)n, sizeof *it->perm, err);
    if (!it->perm) return err ? err->code : DATM_E_NOMEM;
    it->n = n;
    it->batch_size = batch_size;
    it->seed = seed;
    it->shuffle = shuffle != 0;
    it->drop_last = drop_last != 0;
    make_perm(it);
    return DATM_OK;
}

int64_t datm_batch_iter_batches_per_epoch(const datm_batch_iter *it)
{
    return it->drop_last ? it->n / it->batch_size : (it->n + it->batch_size - 1) / it->batch_size;
}

void datm_batch_iter_seek(datm_batch_iter *it, int64_t epoch, int64_t batch_index)
{
    DATM_ASSERT(it->perm && epoch >= 0 && batch_index >= 0);
    DATM_ASSERT(batch_index <= datm_batch_iter_batches_per_epoch(it));
    if (epoch != it->epoch || !it->shuffle) {
        it->epoch = epoch;
        make_perm(it);
    }
    it->pos = batch_index * it->batch_size;
    if (it->pos > it->n) it->pos = it->n;
}

int64_t datm_batch_iter_next(datm_batch_iter *it, const int64_t **rows)
{
    DATM_ASSERT(it->perm && rows);
    int64_t left = it->n - it->pos;
    if (left <= 0 || (it->drop_last && left < it->batch_size)) {
        /* end of epoch: report it once, then the next call starts epoch + 1 */
        it->epoch++;
        it->pos = 0;
        make_perm(it);
        *rows = NULL;
        return 0;
    }
    int64_t m = DATM_MIN(left, it->batch_size);
    *rows = it->perm + it->pos;
    it->pos += m;
    return m;
}

void datm_batch_iter_free(datm_batch_iter *it)
{
    if (!it) return;
    datm_free(it->perm);
    memset(it, 0, sizeof *it);
}
