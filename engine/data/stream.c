/* engine/data/stream.c: the mini-batch stream over a sharded corpus (order in stream.h).
 * One read-ahead thread at a time loads the shard after the current one (read, checksum,
 * visiting order, token split) while the caller trains on the current one; a data-parallel
 * rank splits only the rows it will copy. */
#include "data/stream.h"

#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "rand/rand.h"

#define ORDER_INDEX UINT64_MAX   /* the shard order's stream index: no shard has that number */

static void shard_order(const datm_stream *s, int64_t epoch, int64_t *order)
{
    const int S = s->set->n_shards;
    for (int i = 0; i < S; i++) order[i] = i;
    if (s->o.shuffle) {
        datm_rng r;
        datm_rng_init2(&r, s->o.seed, DATM_STREAM_SHUFFLE, ORDER_INDEX, (uint64_t)epoch);
        datm_rng_shuffle_i64(&r, order, S);
    }
}

static void chunk_free(datm_stream_chunk *c)
{
    datm_csr_free(&c->X);
    datm_free(c->perm);
    memset(c, 0, sizeof *c);
}

/* The rows of c's shard that datm_stream_next copies (this rank's rows of each mini-batch,
 * own_of > 0): row perm[p] is position pos0 + p of the epoch's stream, row i of mini-batch
 * (pos0 + p) / B. NULL (all rows) without own_of or when out of memory. */
static uint8_t *rows_needed(const datm_stream *s, const datm_stream_chunk *c, int64_t n)
{
    if (s->o.own_of <= 0) return NULL;
    uint8_t *keep = calloc((size_t)(n > 0 ? n : 1), 1);
    if (!keep) return NULL;
    const int64_t B = s->o.batch_size, N = s->set->n_docs;
    for (int64_t p = 0; p < n; p++) {
        const int64_t pos = c->pos0 + p, b = pos / B, i = pos - b * B;
        const int64_t m = DATM_MIN(B, N - b * B);
        keep[c->perm[p]] = i >= m * s->o.own0 / s->o.own_of && i < m * s->o.own1 / s->o.own_of;
    }
    return keep;
}

/* Loads c->shard for (c->epoch, c->slot) into c; the status goes into c->rc / c->err. */
static void chunk_load(const datm_stream *s, datm_stream_chunk *c)
{
    const datm_shard_info *si = &s->set->shard[c->shard];
    datm_csr raw = {0};
    c->rc = datm_shard_read(s->set, c->shard, &raw, &c->err);
    if (!c->rc) {
        c->perm = datm_alloc_array((size_t)si->n_docs, sizeof *c->perm, &c->err);
        if (!c->perm) c->rc = DATM_E_NOMEM;
    }
    if (!c->rc) {
        for (int64_t i = 0; i < si->n_docs; i++) c->perm[i] = i;
        if (s->o.shuffle) {
            /* shard 0's stream is the in-memory iterator's (seed, SHUFFLE, epoch) */
            datm_rng r;
            datm_rng_init2(&r, s->o.seed, DATM_STREAM_SHUFFLE, (uint64_t)c->shard,
                           (uint64_t)c->epoch);
            datm_rng_shuffle_i64(&r, c->perm, si->n_docs);
        }
    }
    if (!c->rc && s->o.obs_frac > 0) {
        /* a rank splits only the rows it copies (the split of a row is keyed by its
         * document, so those rows get the tokens a whole split gives them) */
        uint8_t *keep = rows_needed(s, c, si->n_docs);
        c->rc = datm_token_split_rows_obs(&raw, si->first_doc, keep, s->o.obs_frac,
                                          s->o.split_seed, &c->X, &c->err);
        free(keep);
        datm_csr_free(&raw);
    } else if (!c->rc) {
        c->X = raw;
    } else {
        datm_csr_free(&raw);
    }
}

static void *load_thread(void *arg)
{
    datm_stream *s = arg;
    chunk_load(s, &s->next);
    return NULL;
}

/* The (epoch, slot) after (epoch, slot), and its shard number. */
static void following(const datm_stream *s, int64_t epoch, int slot, int64_t *e2, int *slot2,
                      int *shard2, int64_t *pos2)
{
    const int S = s->set->n_shards;
    *pos2 = 0;
    if (slot + 1 < S) {
        *e2 = epoch;
        *slot2 = slot + 1;
        *shard2 = (int)s->order[slot + 1];
        *pos2 = s->cur.pos0 + s->set->shard[s->order[slot]].n_docs;
    } else {
        int64_t *o = malloc(sizeof *o * (size_t)S);
        DATM_ASSERT(o);
        shard_order(s, epoch + 1, o);
        *e2 = epoch + 1;
        *slot2 = 0;
        *shard2 = (int)o[0];
        free(o);
    }
}

static void prefetch_join(datm_stream *s)
{
    if (s->busy) {
        pthread_join(s->thread, NULL);
        s->busy = 0;
    }
}

/* Starts reading the shard after s->cur in the background (synchronously if no thread). */
static void prefetch_start(datm_stream *s)
{
    prefetch_join(s);
    chunk_free(&s->next);
    following(s, s->cur.epoch, s->cur.slot, &s->next.epoch, &s->next.slot, &s->next.shard,
              &s->next.pos0);
    if (pthread_create(&s->thread, NULL, load_thread, s) == 0) s->busy = 1;
    else chunk_load(s, &s->next);
}

/* Makes (epoch, slot) current: the read-ahead chunk when it is that one, else read now. */
static int make_current(datm_stream *s, int64_t epoch, int slot, datm_error *err)
{
    prefetch_join(s);
    if (epoch != s->cur.epoch || !s->order) shard_order(s, epoch, s->order);
    chunk_free(&s->cur);
    if (s->next.perm && s->next.epoch == epoch && s->next.slot == slot) {
        s->cur = s->next;
        memset(&s->next, 0, sizeof s->next);
    } else {
        chunk_free(&s->next);
        s->cur.epoch = epoch;
        s->cur.slot = slot;
        s->cur.shard = (int)s->order[slot];
        for (int i = 0; i < slot; i++) s->cur.pos0 += s->set->shard[s->order[i]].n_docs;
        chunk_load(s, &s->cur);
    }
    if (s->cur.rc) {
        datm_error_set(err, s->cur.rc, "%s", s->cur.err.msg);
        return s->cur.rc;
    }
    s->off = 0;
    prefetch_start(s);
    return DATM_OK;
}

int datm_stream_open(datm_stream *s, const datm_shardset *set, const datm_stream_opts *o,
                     datm_error *err)
{
    memset(s, 0, sizeof *s);
    if (o->batch_size <= 0 || set->n_docs <= 0)
        return datm_error_set(err, DATM_E_INVALID, "%s: mini-batches of %lld from %lld documents",
                              set->dir, (long long)o->batch_size, (long long)set->n_docs);
    if (o->drop_last && o->batch_size > set->n_docs)
        return datm_error_set(err, DATM_E_INVALID, "mini-batches: batch size %lld > %lld documents "
                              "with drop_last gives no batch at all", (long long)o->batch_size,
                              (long long)set->n_docs);
    s->set = set;
    s->o = *o;
    s->order = datm_alloc_array((size_t)set->n_shards, sizeof *s->order, err);
    s->ids = datm_alloc_array((size_t)o->batch_size, sizeof *s->ids, err);
    s->X.row_ptr = datm_alloc_array((size_t)o->batch_size + 1, sizeof *s->X.row_ptr, err);
    if (!s->order || !s->ids || !s->X.row_ptr) {
        datm_stream_close(s);
        return DATM_E_NOMEM;
    }
    s->X.n_cols = set->n_cols;
    s->cur.epoch = -1;
    return datm_stream_seek(s, 0, 0, err);
}

int64_t datm_stream_batches_per_epoch(const datm_stream *s)
{
    const int64_t N = s->set->n_docs, B = s->o.batch_size;
    return s->o.drop_last ? N / B : (N + B - 1) / B;
}

int datm_stream_seek(datm_stream *s, int64_t epoch, int64_t batch, datm_error *err)
{
    DATM_ASSERT(epoch >= 0 && batch >= 0 && batch <= datm_stream_batches_per_epoch(s));
    if (batch == datm_stream_batches_per_epoch(s)) { epoch++; batch = 0; }
    shard_order(s, epoch, s->order);
    int64_t pos = batch * s->o.batch_size, cum = 0;
    int slot = 0;
    while (cum + s->set->shard[s->order[slot]].n_docs <= pos) {
        cum += s->set->shard[s->order[slot]].n_docs;
        slot++;
    }
    s->cur.epoch = -1;   /* force a fresh order and load */
    int rc = make_current(s, epoch, slot, err);
    if (rc) return rc;
    s->off = pos - cum;
    s->epoch = epoch;
    s->batch = batch;
    return DATM_OK;
}

static int reserve(datm_stream *s, int64_t need, datm_error *err)
{
    return datm_csr_reserve_nnz(&s->X, &s->cap_nnz, need, "mini-batch", err);
}

int datm_stream_next(datm_stream *s, const datm_csr **X, const int64_t **ids, int64_t *n,
                     datm_error *err)
{
    const int64_t B = s->o.batch_size, N = s->set->n_docs;
    int rc = DATM_OK;
    if (s->batch == datm_stream_batches_per_epoch(s)) {   /* the epoch is over */
        s->epoch++;
        s->batch = 0;
    }
    if (s->batch == 0 && s->cur.epoch != s->epoch) {
        rc = make_current(s, s->epoch, 0, err);
        if (rc) return rc;
    }
    const int64_t m = DATM_MIN(B, N - s->batch * B);
    const int64_t own0 = s->o.own_of > 0 ? m * s->o.own0 / s->o.own_of : 0;
    const int64_t own1 = s->o.own_of > 0 ? m * s->o.own1 / s->o.own_of : m;
    s->X.n_rows = 0;
    s->X.nnz = 0;
    for (int64_t i = 0; i < m; i++) {
        if (s->off == s->cur.X.n_rows) {   /* the next shard of this epoch */
            rc = make_current(s, s->epoch, s->cur.slot + 1, err);
            if (rc) return rc;
        }
        const datm_csr *c = &s->cur.X;
        int64_t r = s->cur.perm[s->off++];
        int64_t a = c->row_ptr[r], b = c->row_ptr[r + 1];
        if (i < own0 || i >= own1) b = a;   /* another rank's row: left empty */
        rc = reserve(s, s->X.nnz + (b - a), err);
        if (rc) return rc;
        memcpy(s->X.col + s->X.nnz, c->col + a, sizeof *c->col * (size_t)(b - a));
        memcpy(s->X.val + s->X.nnz, c->val + a, sizeof *c->val * (size_t)(b - a));
        s->X.nnz += b - a;
        s->X.row_ptr[++s->X.n_rows] = s->X.nnz;
        s->ids[i] = s->set->shard[s->cur.shard].first_doc + r;
    }
    s->batch++;
    *X = &s->X;
    *ids = s->ids;
    *n = m;
    return DATM_OK;
}

void datm_stream_close(datm_stream *s)
{
    if (!s) return;
    prefetch_join(s);
    chunk_free(&s->cur);
    chunk_free(&s->next);
    datm_free(s->order);
    datm_free(s->ids);
    datm_free(s->X.row_ptr);
    free(s->X.col);
    free(s->X.val);
    memset(s, 0, sizeof *s);
}
