/* engine/data/shard.h: the sharded binary corpus, for corpora larger than memory.
 *
 * A split (train, test_obs, ...) of a data set directory DIR may be stored as the directory
 * DIR/SPLIT.shards instead of (or beside) DIR/SPLIT.docword.gz:
 *
 *   DIR/SPLIT.shards/index.bin          the header: V, documents, entries, tokens, the shard
 *                                       table and the content hash (below)
 *   DIR/SPLIT.shards/shard-000000.bin   documents [first_doc, first_doc + n_docs) as CSR
 *   ...
 *
 * Every integer is little-endian (files from a big-endian machine are refused by the magic).
 *
 * index.bin:  "DATMIDX1" | u32 version (1) | u32 n_shards | i64 n_docs | i64 V | i64 nnz |
 *             f64 tokens | u64 content hash | n_shards x { i64 first_doc, i64 n_docs, i64 nnz,
 *             u32 payload crc32, u32 0 } | u32 crc32 of everything before it
 * shard:      "DATMCSR1" | u32 version (1) | u32 shard number | i64 first_doc | i64 n_docs |
 *             i64 V | i64 nnz | u32 payload crc32 | u32 crc32 of the header before it |
 *             payload = row_ptr i64 (n_docs + 1, from 0) | col i32 (nnz, 0-based, strictly
 *             increasing in a row) | val f32 (nnz, positive integer counts)
 *
 * The content hash is FNV-1a 64 over V and, per shard in order, (n_docs, nnz, payload crc32):
 * it changes with any count of any document, and names the corpus in checkpoints.
 *
 * A shard set is written into DIR/SPLIT.shards.tmp.PID, every file synced, and renamed into
 * place last, so a reader never sees half a corpus. Every read is checked: sizes, magic,
 * header and payload crc32, row pointers, column ids and counts; a damaged or truncated file
 * is an error naming the file and what is wrong. Letters: N documents, V words. */
#ifndef DATM_SHARD_H
#define DATM_SHARD_H

#include <stdint.h>

#include "core/core.h"
#include "data/csr.h"

#define DATM_SHARD_DEFAULT_DOCS 65536   /* documents per shard unless told */

typedef struct datm_shard_info {
    int64_t  first_doc, n_docs, nnz;
    uint32_t crc;          /* crc32 of the shard's payload */
} datm_shard_info;

typedef struct datm_shardset {
    char             dir[1024];      /* DIR/SPLIT.shards */
    int64_t          n_docs, n_cols, nnz;
    double           tokens;
    uint64_t         content_hash;
    int              n_shards;
    datm_shard_info *shard;          /* (n_shards) */
} datm_shardset;

/* DIR/SPLIT.shards into out (size >= 1024 recommended); returns 1 if that directory exists. */
int  datm_shards_path(const char *dir, const char *split, char *out, size_t size);
/* Reads and checks index.bin of a shard directory. */
int  datm_shardset_open(const char *shard_dir, datm_shardset *s, datm_error *err);
void datm_shardset_close(datm_shardset *s);
/* Reads shard k (0-based) into out, checked against the index (sizes, crc, structure). */
int  datm_shard_read(const datm_shardset *s, int k, datm_csr *out, datm_error *err);
/* The first n documents (n <= 0 or n >= N: all), read shard by shard, into one CSR. */
int  datm_shardset_read_first(const datm_shardset *s, int64_t n, datm_csr *out, datm_error *err);
/* The content hash as 16 hex digits. */
void datm_shardset_hash_hex(const datm_shardset *s, char out[17]);

/* Converts a UCI docword file (plain or gzip) into the shard set out_dir in one pass holding one
 * shard (a file not ordered by document is read whole instead). */
int  datm_shards_from_docword(const char *docword_path, const char *out_dir,
                              int64_t docs_per_shard, int overwrite, datm_error *err);

/* Writer: documents are appended in order; every docs_per_shard documents make a shard. */
typedef struct datm_shard_writer {
    char     dir[1024], tmp[1100];
    int64_t  n_cols, docs_per_shard;
    int64_t  n_docs, nnz;
    double   tokens;
    int      n_shards, cap_shards;
    datm_shard_info *shard;
    datm_csr pend;              /* (<= docs_per_shard, V) rows not yet written */
    int64_t  pend_cap_nnz;
} datm_shard_writer;

/* Starts DIR (e.g. data/train.shards); an existing DIR is refused unless overwrite, which
 * replaces it only at commit. */
int  datm_shard_writer_open(datm_shard_writer *w, const char *dir, int64_t n_cols,
                            int64_t docs_per_shard, int overwrite, datm_error *err);
/* Appends the rows of m (n_cols must match; counts checked). */
int  datm_shard_writer_add(datm_shard_writer *w, const datm_csr *m, datm_error *err);
/* Writes the last shard and the index, syncs, renames into place. */
int  datm_shard_writer_commit(datm_shard_writer *w, datm_error *err);
/* Removes the temporary directory (after a failure, or instead of commit). */
void datm_shard_writer_abort(datm_shard_writer *w);

#endif
