/* engine/data: corpus readers (UCI bag-of-words docword[.gz], vocab.txt, *.labels,
 * classes.txt) with strict validation, the seeded per-document token split, the seeded
 * mini-batch iterator, and corpus building from raw text (datm corpus build). */
#ifndef DATM_DATA_H
#define DATM_DATA_H

#include <stdint.h>

#include "core/core.h"
#include "data/csr.h"

/* Reads `D W NNZ` header then `doc word count` lines (1-based). Gzip detected by magic.
 * Errors name the file and line: missing/wrong header, NNZ mismatch, ids out of range,
 * zero/negative/non-integer counts, duplicate (doc, word), unsorted-but-valid input is
 * accepted and sorted, truncated gzip, empty file. */
int datm_docword_read(const char *path, datm_csr *out, datm_error *err);
int datm_docword_write(const char *path, const datm_csr *m, int gzip, datm_error *err);
/* One integer 0..n_classes-1 per line, exactly n_docs lines (n_classes <= 0: not checked). */
int datm_labels_read(const char *path, int64_t n_docs, int n_classes, int32_t **out,
                     datm_error *err);
/* One token per line; expect_n > 0 checks the count. */
int datm_lines_read(const char *path, int64_t expect_n, char ***out, int64_t *n_out,
                    datm_error *err);
void datm_lines_free(char **lines, int64_t n);

typedef struct datm_corpus {
    char     dir[512];
    char     split[64];     /* "train", "test", "test_obs", "test_heldout" */
    datm_csr X;             /* (N, V) counts */
    int32_t *labels;        /* (N) or NULL */
    int      n_classes;     /* 0 when no labels */
    char   **class_names;   /* (n_classes) or NULL */
    char   **vocab;         /* (V) or NULL */
    int64_t  n_vocab;
} datm_corpus;

/* Loads DIR/SPLIT.docword.gz (or .docword), DIR/SPLIT.labels and DIR/classes.txt if
 * present, DIR/vocab.txt if present. A derived split "BASE_xxx" without its own labels file
 * (20news_2000's test_obs, test_heldout) takes DIR/BASE.labels (same documents). Labels are
 * checked against classes.txt; without classes.txt, n_classes = max label + 1. */
int  datm_corpus_load(const char *dir, const char *split, datm_corpus *out, datm_error *err);
void datm_corpus_free(datm_corpus *c);
/* Resolves a dataset name to a directory: an existing path as is, else $DATM_DATA/NAME
 * (default ../shared/data relative to the working directory), else .cache/data/NAME, else
 * $DATM_SOURCE_DIR/.cache/data/NAME (set by CTest). The built-in `brown` set lives in
 * .cache/data/brown (ci/fetch_brown.sh). The error lists every place looked at. */
int  datm_dataset_resolve(const char *name, char *dir, size_t dir_size, datm_error *err);

/* Seeded per-document token split: each token goes to obs with probability obs_frac, with
 * every non-empty document keeping >= 1 observed token. Keyed by (seed, SPLIT, doc). */
int datm_token_split(const datm_csr *X, double obs_frac, uint64_t seed, datm_csr *obs,
                     datm_csr *heldout, datm_error *err);
/* The same split with the held-out parts of the first n_held rows only (n_held < 0: all);
 * heldout's later rows are empty. obs is datm_token_split's: a run that trains on every
 * document's observed part and scores the held-out parts of its first documents does not
 * hold the held-out part of the whole corpus. */
int datm_token_split_held_first(const datm_csr *X, double obs_frac, uint64_t seed,
                                int64_t n_held, datm_csr *obs, datm_csr *heldout,
                                datm_error *err);
/* The same split of rows that are documents first_doc, first_doc + 1, ... of a corpus (a
 * shard): row i is keyed by document first_doc + i. parallel = 0: on the calling thread only
 * (a read-ahead thread must not start an OpenMP team beside training). */
int datm_token_split_rows(const datm_csr *X, int64_t first_doc, int parallel, double obs_frac,
                          uint64_t seed, datm_csr *obs, datm_csr *heldout, datm_error *err);
/* Its observed part alone, on the calling thread, of the rows with keep[i] != 0 (keep NULL:
 * all); the other rows are left empty and cost no draws (a data-parallel rank's stream
 * splits only the rows it trains on). A kept row gets the tokens it gets above. */
int datm_token_split_rows_obs(const datm_csr *X, int64_t first_doc, const uint8_t *keep,
                              double obs_frac, uint64_t seed, datm_csr *obs, datm_error *err);

/* Mini-batch iterator: epoch e visits a permutation keyed by (seed, SHUFFLE, e) (or the
 * identity when shuffle == 0); the last partial batch is returned unless drop_last. */
typedef struct datm_batch_iter {
    int64_t  n;            /* documents */
    int64_t  batch_size;
    int64_t  epoch;        /* current epoch, from 0 */
    int64_t  pos;          /* next position in perm */
    uint64_t seed;
    int      shuffle, drop_last;
    int64_t *perm;         /* (n) */
} datm_batch_iter;
int  datm_batch_iter_init(datm_batch_iter *it, int64_t n, int64_t batch_size, uint64_t seed,
                          int shuffle, int drop_last, datm_error *err);
/* Positions the iterator at (epoch, batch index) — used by resume. */
void datm_batch_iter_seek(datm_batch_iter *it, int64_t epoch, int64_t batch_index);
/* Returns the number of rows in the next batch (>0), or 0 at the end of the epoch (then the
 * next call starts epoch+1). *rows points into the iterator's permutation. */
int64_t datm_batch_iter_next(datm_batch_iter *it, const int64_t **rows);
void datm_batch_iter_free(datm_batch_iter *it);
int64_t datm_batch_iter_batches_per_epoch(const datm_batch_iter *it);

#endif
