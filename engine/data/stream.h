/* engine/data/stream.h: mini-batches read from a sharded corpus (data/shard.h) with the next
 * shard read ahead on a background thread: memory is two shards and one mini-batch, whatever
 * the corpus size.
 *
 * The order of epoch e (a stream of all N documents, cut into mini-batches of B):
 *   shards in the order of a permutation of 0..S-1 drawn from (seed, SHUFFLE, 2^64-1, e);
 *   inside shard s, its documents in the order of a permutation drawn from (seed, SHUFFLE,
 *   s, e) (identity order for both when shuffle is off).
 * Mini-batches run on across shard boundaries, so an epoch has as many mini-batches as in
 * memory, and (epoch, batch) is the whole stream position: a checkpoint that records it can
 * be resumed by seeking. The stream of shard 0 is the in-memory iterator's permutation
 * (data/batch.c), so a corpus of one shard is visited in exactly the in-memory order, and
 * any corpus is when shuffle is off.
 * With obs_frac > 0 each document is replaced by the observed part of its token split
 * (data.h, keyed by document: the same split as in memory). Letters: N documents, B batch. */
#ifndef DATM_STREAM_H
#define DATM_STREAM_H

#include <pthread.h>
#include <stdint.h>

#include "data/shard.h"

typedef struct datm_stream_opts {
    int64_t  batch_size;
    uint64_t seed;
    int      shuffle, drop_last;
    double   obs_frac;        /* > 0: train on the observed part of the token split */
    uint64_t split_seed;
    /* own_of > 0: only rows [m own0 / own_of, m own1 / own_of) of a mini-batch of m rows are
     * copied, the others left empty (a data-parallel rank's chunks, par/par.h) */
    int64_t  own0, own1, own_of;
} datm_stream_opts;

/* One shard, loaded and ordered (by the read-ahead thread or in place). */
typedef struct datm_stream_chunk {
    int64_t  epoch;
    int      slot;            /* position in the epoch's shard order */
    int      shard;           /* shard number */
    int64_t  pos0;            /* position of its first document in the epoch's stream */
    datm_csr X;               /* the shard's documents (observed part under a token split) */
    int64_t *perm;            /* (n_docs) visiting order, rows of X */
    int      rc;
    datm_error err;
} datm_stream_chunk;

typedef struct datm_stream {
    const datm_shardset *set;   /* borrowed */
    datm_stream_opts     o;
    int64_t   epoch, batch;     /* next mini-batch */
    int64_t  *order;            /* (S) shard order of `epoch` */
    datm_stream_chunk cur;      /* shard being consumed */
    int64_t   off;              /* next position in cur.perm */
    datm_stream_chunk next;     /* read ahead */
    pthread_t thread;
    int       busy;             /* thread running on `next` */
    datm_csr  X;                /* (<= B, V) the current mini-batch */
    int64_t   cap_nnz;
    int64_t  *ids;              /* (B) document ids of the mini-batch */
} datm_stream;

int  datm_stream_open(datm_stream *s, const datm_shardset *set, const datm_stream_opts *o,
                      datm_error *err);
int64_t datm_stream_batches_per_epoch(const datm_stream *s);
/* Positions the stream at mini-batch `batch` of epoch `epoch` (resume). */
int  datm_stream_seek(datm_stream *s, int64_t epoch, int64_t batch, datm_error *err);
/* The next mini-batch (moving on to the next epoch after the last): *X and *ids (n rows)
 * stay valid until the next call. */
int  datm_stream_next(datm_stream *s, const datm_csr **X, const int64_t **ids, int64_t *n,
                      datm_error *err);
void datm_stream_close(datm_stream *s);

#endif
