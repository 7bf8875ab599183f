/* engine/data/corpus_build_internal.h (internal to engine/data): the state shared by the two
 * halves of `datm corpus build`: corpus_build.c (texts -> units of token ids) and
 * corpus_build_out.c (split, vocabulary, counts, files). */
#ifndef DATM_DATA_CORPUS_BUILD_INTERNAL_H
#define DATM_DATA_CORPUS_BUILD_INTERNAL_H

#include "data/corpus_build.h"
#include "data/strmap.h"

typedef struct datm_cb_state {
    const datm_corpus_build_opts *o;
    datm_corpus_build_stats *st;
    datm_error *err;

    datm_strmap words;         /* non-stop words seen, ids in first-seen order */
    datm_strmap stops;         /* custom stop list (stopwords_path) */
    int         have_stops;
    datm_strmap cats;          /* category names in first-seen order */
    int32_t    *cat_class;     /* (cats.n) class id = rank of the name in byte order */

    /* texts, T of them */
    char      **src_name;      /* (T) owned */
    int32_t    *src_cat;       /* (T) category id in `cats`, -1 = none */
    int8_t     *src_test;      /* (T) 1 = test split */
    int64_t     n_src, cap_src;

    /* units, U of them: tokens tok[unit_tok[u] .. unit_tok[u+1]) */
    int64_t    *unit_tok;      /* (U + 1) */
    int32_t    *unit_src;      /* (U) */
    int32_t    *unit_idx;      /* (U) index of the unit within its text */
    int64_t    *unit_raw;      /* (U) tokens counted for chunking, stop words included */
    int64_t     n_units, cap_units;
    int32_t    *tok;           /* word ids in `words` */
    int64_t     n_tok, cap_tok;

    /* per-text state while reading */
    int         unit_open;
    int64_t     src_raw;       /* tokens of the current text */
    int64_t     src_first_unit;
} datm_cb_state;

struct datm_tokenizer;

/* ---- reading half (corpus_build.c), used by the readers of corpus_build_readers.c ---- */
/* A new text NAME of category cat (-1 none); its units follow. */
int  datm_cb_begin_text(datm_cb_state *s, const char *name, int32_t cat);
void datm_cb_end_text(datm_cb_state *s);
/* One token of the current text (the tokeniser's on_token): stop words counted, others kept. */
int  datm_cb_token(void *user, const char *w, size_t len);
/* Tokenises one line of the current text; invalid UTF-8 is an error naming name:lineno:col;
 * a blank line ends a paragraph unit. */
int  datm_cb_line(datm_cb_state *s, struct datm_tokenizer *tk, const char *line, size_t len,
                  const char *name, int64_t lineno);
/* The readers of the other formats (corpus_build_readers.c). */
int  datm_cb_read_jsonl(datm_cb_state *s, struct datm_tokenizer *tk);
int  datm_cb_read_csv(datm_cb_state *s, struct datm_tokenizer *tk);
int  datm_cb_read_mm(datm_cb_state *s);
int  datm_cb_read_ldac(datm_cb_state *s);

/* Output half: split, vocabulary, counts, files (corpus_build_out.c). */
int datm_cb_finish(datm_cb_state *s);

/* Regular files under root (hidden entries skipped), as paths relative to root in byte
 * order; free each name with datm_free and the array with free(). */
int datm_cb_list_files(const char *root, char ***names, int64_t *n, datm_error *err);

/* Grows *p (elements of `size`) to hold at least `need`; returns 0 or sets err. */
int datm_cb_grow(void **p, int64_t *cap, int64_t need, size_t size, datm_error *err);

#endif
