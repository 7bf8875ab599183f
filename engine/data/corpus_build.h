/* engine/data/corpus_build.h: raw text -> a data set directory in our format
 * (`datm corpus build`). Inputs: a directory of text files, a file with one document per
 * line, the Brown corpus's tagged files (word/TAG tokens, genre per text in cats.txt), JSON
 * Lines or CSV with a text field, or bag-of-words files (Matrix Market, LDA-C) with a
 * vocabulary.
 *
 * Pipeline: texts -> units (whole texts, paragraphs, or chunks of N tokens) -> tokens
 * (UTF-8 by Unicode letter classes, NFC, case folded: data/tokenize.h; length limits in
 * characters) -> stop words removed (datm's English list, a built-in list of another
 * language, or a file) -> seeded train/test split of the TEXTS (stratified by category, so
 * chunks of one text never straddle the split) -> vocabulary from the training units (min
 * document frequency, max document-frequency fraction, top V by count) -> counts.
 * Writes train/test.docword.gz, vocab.txt, [classes.txt, train/test.labels],
 * train/test.docs (provenance) and README.md (options and statistics).
 * Invalid UTF-8 is an error naming file:line:column; over-long tokens, texts without any
 * token and units left empty are counted and reported (stats, log warnings, README), never
 * silently lost. The output is a function of the inputs and options only (byte-identical on
 * re-runs). */
#ifndef DATM_DATA_CORPUS_BUILD_H
#define DATM_DATA_CORPUS_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

typedef enum {
    DATM_TEXT_DIR = 0,   /* every regular file under a directory (sorted by path), or the
                            files named in a category file */
    DATM_TEXT_LINES,     /* one document per line of a file (plain or gzip) */
    DATM_TEXT_BROWN,     /* Brown corpus: DIR/cats.txt lists "text genre"; word/TAG tokens */
    DATM_TEXT_JSONL,     /* JSON Lines: one object per line, the text in field text_field */
    DATM_TEXT_CSV,       /* CSV (RFC 4180, header row): the text in column text_field */
    DATM_TEXT_MM,        /* Matrix Market coordinate matrix of counts, documents x words */
    DATM_TEXT_LDAC,      /* LDA-C: "M id:count ..." per document, ids 0-based */
    DATM_TEXT_COUNT_
} datm_text_format;

typedef enum {
    DATM_UNIT_TEXT = 0,  /* one document per text (file or line) */
    DATM_UNIT_PARAGRAPH, /* blocks separated by blank lines */
    DATM_UNIT_CHUNK,     /* consecutive runs of chunk_tokens tokens (counted before stop-word
                            removal); a text's tail shorter than half a chunk joins the
                            previous chunk */
    DATM_UNIT_COUNT_
} datm_doc_unit;

/* "dir", "lines", "brown", "jsonl", "csv", "mm", "ldac" */
const char *datm_text_format_name(datm_text_format f);
const char *datm_doc_unit_name(datm_doc_unit u);         /* "text", "paragraph", "chunk" */
/* Parse the names above; return -1 when unknown. */
int datm_text_format_parse(const char *s);
int datm_doc_unit_parse(const char *s);

typedef struct datm_corpus_build_opts {
    datm_text_format format;
    const char *input;          /* directory (dir, brown) or file (lines) */
    const char *out_dir;        /* created if missing */
    const char *out_name;       /* the --out the README records (NULL: out_dir); differs when
                                   the set is built aside to replace an existing one */
    const char *cats_path;      /* "NAME CATEGORY" lines (NAME relative to input); for dir it
                                   also lists the texts; brown default: INPUT/cats.txt */
    const char *labels_path;    /* lines, mm, ldac: one category name per line (document) */
    const char *text_field;     /* jsonl: object field, csv: header column (default "text") */
    const char *label_field;    /* jsonl / csv: field or column of the category, or NULL */
    const char *vocab_path;     /* mm / ldac: one word per line (default: words w1, w2, ...) */
    const char *stopwords_lang; /* built-in list: "en" (default), "fr", "de", "es" */
    int         label_subdir;   /* dir format: category = first directory of the path */
    const char *stopwords_path; /* one word per line (any language, normalised like tokens),
                                   replaces the built-in list; NULL = built-in */
    int         no_stopwords;   /* keep stop words */
    datm_doc_unit unit;
    int64_t     chunk_tokens;   /* for DATM_UNIT_CHUNK, >= 2 */
    int         min_token_len;  /* shorter tokens (in characters) are dropped (default 2) */
    int         max_token_len;  /* longer tokens are dropped and counted (default 30) */
    int64_t     min_df;         /* a word must occur in >= min_df training units */
    double      max_df;         /* ... and in <= max_df of them (fraction, (0, 1]) */
    int64_t     max_vocab;      /* keep the max_vocab most frequent words; 0 = all */
    int64_t     min_doc_tokens; /* units with fewer in-vocabulary tokens are dropped (>= 1) */
    double      test_frac;      /* fraction of texts held out as test, [0, 1) */
    uint64_t    seed;
    int         gzip;           /* write .docword.gz (default 1) */
} datm_corpus_build_opts;

/* Defaults: text units, min_token_len 2, max_token_len 30, min_df 5, max_df 0.5,
 * max_vocab 5000, min_doc_tokens 1, test_frac 0.1, seed 1, gzip on, built-in stop words. */
void datm_corpus_build_defaults(datm_corpus_build_opts *o);

typedef struct datm_corpus_build_stats {
    int64_t n_texts;               /* texts (files / lines) read */
    int64_t n_texts_empty;         /* texts without a single token */
    int64_t n_texts_utf8_errors;   /* texts with invalid UTF-8 (an error: 0 in a finished build) */
    int64_t n_utf8_error_bytes;    /* invalid bytes (0 in a finished build) */
    int64_t n_non_ascii_chars;     /* valid non-ASCII characters */
    int64_t n_untagged_tokens;     /* brown: whitespace tokens without "/TAG" */
    int64_t n_tokens;              /* alphabetic tokens kept by the length limits */
    int64_t n_long_tokens;         /* dropped by max_token_len */
    int64_t n_stop_tokens;         /* removed as stop words */
    int64_t n_units;               /* units formed */
    int64_t n_texts_train, n_texts_test;
    int64_t n_units_train, n_units_test;     /* before dropping empty units */
    int64_t n_dropped_train, n_dropped_test; /* units under min_doc_tokens after the vocab */
    int64_t n_docs_train, n_docs_test;       /* documents written */
    int64_t n_distinct_words;      /* distinct non-stop words in the training units */
    int64_t n_vocab;
    int64_t nnz_train, nnz_test;
    int64_t tokens_train, tokens_test;       /* in-vocabulary tokens written */
    int64_t oov_tokens_train, oov_tokens_test;
    int     n_classes;
    char    first_utf8_error[256];  /* "NAME:LINE" of the first invalid UTF-8, if any */
} datm_corpus_build_stats;

int datm_corpus_build(const datm_corpus_build_opts *o, datm_corpus_build_stats *st,
                      datm_error *err);

/* A raw-text source as token sequences over vocab (V words): a directory (every regular file
 * under it, sorted, is a document) or a file (a document per line, plain or gzip), tokenised
 * with the default options of the builder. Vocabulary words keep their ids, stop words of the
 * built-in list outside the vocabulary take no position, other words are positions with id -1
 * (data/tokdocs.h). Invalid UTF-8 is an error naming file:line. */
struct datm_tokdocs;
int datm_tokdocs_read_text(const char *path, char *const *vocab, int64_t V,
                           struct datm_tokdocs *out, datm_error *err);

/* The built-in English stop-word list (sorted). */
int         datm_stopword_is(const char *word);
size_t      datm_stopword_count(void);
const char *datm_stopword_at(size_t i);
/* Built-in lists by language ("en", "fr", "de", "es"; folded, NFC, sorted): NULL and -1 for
 * an unknown language. datm_stopword_langs: "en, fr, de, es". */
int         datm_stopword_lang_is(const char *lang, const char *word);
int64_t     datm_stopword_lang_count(const char *lang);
const char *datm_stopword_lang_at(const char *lang, int64_t i);
const char *datm_stopword_langs(void);

#endif
