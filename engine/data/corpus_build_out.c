/* engine/data/corpus_build_out.c: second half of `datm corpus build`: classes, the seeded
 * train/test split of the texts, the vocabulary (document-frequency pruning and top-V cap,
 * computed on the training units only), the count matrices and every output file. */
#include "data/corpus_build_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/data.h"
#include "rand/rand.h"

/* Stream index of the text split (purpose DATM_STREAM_USER): "corpus" in ASCII. */
#define CB_SPLIT_STREAM UINT64_C(0x636f72707573)

/* ---- small helpers ---- */

static int mkdir_p(const char *dir, datm_error *err)
{
    char tmp[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof tmp) return datm_error_set(err, DATM_E_INVALID, "bad output directory '%s'", dir);
    memcpy(tmp, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (tmp[i] != '/' && tmp[i] != '\0') continue;
        char c = tmp[i];
        tmp[i] = '\0';
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
            return datm_error_set(err, DATM_E_IO, "%s: cannot create directory: %s", tmp, strerror(errno));
        tmp[i] = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return datm_error_set(err, DATM_E_IO, "%s: not a directory", dir);
    return DATM_OK;
}

typedef struct { FILE *f; char tmp[4300], path[4200]; } outfile;

static int out_open(outfile *of, const char *dir, const char *name, datm_error *err)
{
    snprintf(of->path, sizeof of->path, "%s/%s", dir, name);
    snprintf(of->tmp, sizeof of->tmp, "%s.tmp%ld", of->path, (long)getpid());
    of->f = fopen(of->tmp, "wb");
    if (!of->f) return datm_error_set(err, DATM_E_IO, "%s: cannot create: %s", of->tmp, strerror(errno));
    return DATM_OK;
}

static int out_close(outfile *of, datm_error *err)
{
    int bad = ferror(of->f);
    bad |= fclose(of->f) != 0;
    if (bad) {
        remove(of->tmp);
        return datm_error_set(err, DATM_E_IO, "%s: write failed", of->tmp);
    }
    if (rename(of->tmp, of->path) != 0) {
        remove(of->tmp);
        return datm_error_set(err, DATM_E_IO, "%s: cannot rename: %s", of->path, strerror(errno));
    }
    return DATM_OK;
}

/* ---- classes ---- */

static const datm_strmap *g_cats;   /* only for the qsort comparator below */
static int cmp_cat(const void *a, const void *b)
{
    return strcmp(g_cats->str[*(const int32_t *)a], g_cats->str[*(const int32_t *)b]);
}

/* class_name[c] for class id c: category names in byte order. */
static int make_classes(datm_cb_state *s, int32_t **order_out)
{
    int32_t n = s->cats.n;
    int32_t *order = malloc((size_t)DATM_MAX(n, 1) * sizeof *order);
    s->cat_class = malloc((size_t)DATM_MAX(n, 1) * sizeof *s->cat_class);
    if (!order || !s->cat_class) { free(order); return datm_error_set(s->err, DATM_E_NOMEM, "out of memory"); }
    for (int32_t i = 0; i < n; i++) order[i] = i;
    g_cats = &s->cats;
    qsort(order, (size_t)n, sizeof *order, cmp_cat);
    for (int32_t c = 0; c < n; c++) s->cat_class[order[c]] = c;
    s->st->n_classes = n;
    *order_out = order;
    return DATM_OK;
}

/* ---- split of the texts ---- */

static int split_texts(datm_cb_state *s)
{
    const int64_t T = s->n_src;
    const int nc = s->st->n_classes;
    s->src_test = calloc((size_t)DATM_MAX(T, 1), 1);
    int64_t *idx = malloc((size_t)DATM_MAX(T, 1) * sizeof *idx);
    if (!s->src_test || !idx) { free(idx); return datm_error_set(s->err, DATM_E_NOMEM, "out of memory"); }
    datm_rng r;
    datm_rng_init(&r, s->o->seed, DATM_STREAM_USER, CB_SPLIT_STREAM);
    /* one group per class (stratified), or a single group without labels */
    for (int g = 0; g < DATM_MAX(nc, 1); g++) {
        int64_t n = 0;
        for (int64_t t = 0; t < T; t++)
            if (nc == 0 || s->cat_class[s->src_cat[t]] == g) idx[n++] = t;
        datm_rng_shuffle_i64(&r, idx, n);
        int64_t n_test = llround(s->o->test_frac * (double)n);
        for (int64_t i = 0; i < n_test; i++) s->src_test[idx[i]] = 1;
    }
    free(idx);
    for (int64_t t = 0; t < T; t++) {
        if (s->src_test[t]) s->st->n_texts_test++;
        else s->st->n_texts_train++;
    }
    for (int64_t u = 0; u < s->n_units; u++) {
        if (s->src_test[s->unit_src[u]]) s->st->n_units_test++;
        else s->st->n_units_train++;
    }
    return DATM_OK;
}

/* ---- vocabulary ---- */

typedef struct { int64_t *cf, *df; const datm_strmap *words; } vocab_ctx;
static const vocab_ctx *g_vc;
static int cmp_word(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    const vocab_ctx *c = g_vc;
    if (c->cf[x] != c->cf[y]) return c->cf[x] > c->cf[y] ? -1 : 1;
    if (c->df[x] != c->df[y]) return c->df[x] > c->df[y] ? -1 : 1;
    return strcmp(c->words->str[x], c->words->str[y]);
}

/* new_id[w] = rank in the vocabulary or -1; vocab[v] = old id of rank v. */
static int make_vocab(datm_cb_state *s, int32_t **new_id_out, int32_t **vocab_out, int64_t *V_out)
{
    const int32_t W = s->words.n;
    int64_t *cf = calloc((size_t)DATM_MAX(W, 1), sizeof *cf);
    int64_t *df = calloc((size_t)DATM_MAX(W, 1), sizeof *df);
    int64_t *last = malloc((size_t)DATM_MAX(W, 1) * sizeof *last);
    int32_t *cand = malloc((size_t)DATM_MAX(W, 1) * sizeof *cand);
    int32_t *new_id = malloc((size_t)DATM_MAX(W, 1) * sizeof *new_id);
    int rc = DATM_OK;
    if (!cf || !df || !last || !cand || !new_id) { rc = datm_error_set(s->err, DATM_E_NOMEM, "out of memory"); goto done; }
    for (int32_t w = 0; w < W; w++) { last[w] = -1; new_id[w] = -1; }
    for (int64_t u = 0; u < s->n_units; u++) {
        if (s->src_test[s->unit_src[u]]) continue;
        for (int64_t j = s->unit_tok[u]; j < s->unit_tok[u + 1]; j++) {
            int32_t w = s->tok[j];
            cf[w]++;
            if (last[w] != u) { df[w]++; last[w] = u; }
        }
    }
    double df_max = s->o->max_df * (double)s->st->n_units_train;
    int64_t nc = 0;
    for (int32_t w = 0; w < W; w++) {
        if (cf[w] > 0) s->st->n_distinct_words++;
        if (cf[w] > 0 && df[w] >= s->o->min_df && (double)df[w] <= df_max) cand[nc++] = w;
    }
    vocab_ctx vc = {cf, df, &s->words};
    g_vc = &vc;
    qsort(cand, (size_t)nc, sizeof *cand, cmp_word);
    int64_t V = (s->o->max_vocab > 0 && nc > s->o->max_vocab) ? s->o->max_vocab : nc;
    if (V == 0) {
        rc = datm_error_set(s->err, DATM_E_INVALID,
                            "corpus build: empty vocabulary: none of the %lld distinct words of the "
                            "%lld training units has document frequency in [%lld, %.9g x %lld]",
                            (long long)s->st->n_distinct_words, (long long)s->st->n_units_train,
                            (long long)s->o->min_df, s->o->max_df, (long long)s->st->n_units_train);
        goto done;
    }
    for (int64_t v = 0; v < V; v++) new_id[cand[v]] = (int32_t)v;
    s->st->n_vocab = V;
    *V_out = V;
    *new_id_out = new_id;
    *vocab_out = cand;
    new_id = NULL;
    cand = NULL;
done:
    free(cf); free(df); free(last); free(cand); free(new_id);
    return rc;
}

/* ---- count matrices ---- */

typedef struct {
    datm_csr X;
    int32_t *labels;    /* (D) or NULL */
    int64_t *unit;      /* (D) unit of each document */
    float    max_count;
} split_out;

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int build_split(datm_cb_state *s, int test, const int32_t *new_id, int64_t V, split_out *out)
{
    memset(out, 0, sizeof *out);
    datm_error *err = s->err;
    int64_t n_units = test ? s->st->n_units_test : s->st->n_units_train, nnz_cap = 0;
    for (int64_t u = 0; u < s->n_units; u++)
        if (s->src_test[s->unit_src[u]] == test) nnz_cap += s->unit_tok[u + 1] - s->unit_tok[u];
    int32_t *cnt = calloc((size_t)V, sizeof *cnt), *touched = malloc((size_t)V * sizeof *touched);
    int rc = datm_csr_alloc(&out->X, n_units, V, nnz_cap, err);
    out->unit = malloc((size_t)DATM_MAX(n_units, 1) * sizeof *out->unit);
    if (s->st->n_classes) out->labels = malloc((size_t)DATM_MAX(n_units, 1) * sizeof *out->labels);
    if (!rc && (!cnt || !touched || !out->unit || (s->st->n_classes && !out->labels)))
        rc = datm_error_set(err, DATM_E_NOMEM, "out of memory");
    int64_t d = 0, p = 0, tokens = 0, oov = 0, dropped = 0;
    for (int64_t u = 0; !rc && u < s->n_units; u++) {
        if (s->src_test[s->unit_src[u]] != test) continue;
        int64_t nt = 0, total = 0;
        for (int64_t j = s->unit_tok[u]; j < s->unit_tok[u + 1]; j++) {
            int32_t v = new_id[s->tok[j]];
            if (v < 0) { oov++; continue; }
            if (cnt[v]++ == 0) touched[nt++] = v;
            total++;
        }
        qsort(touched, (size_t)nt, sizeof *touched, cmp_i32);
        if (total < s->o->min_doc_tokens) {
            dropped++;
            for (int64_t k = 0; k < nt; k++) cnt[touched[k]] = 0;
            continue;
        }
        for (int64_t k = 0; k < nt; k++) {
            out->X.col[p] = touched[k];
            out->X.val[p] = (float)cnt[touched[k]];
            if (out->X.val[p] > out->max_count) out->max_count = out->X.val[p];
            cnt[touched[k]] = 0;
            p++;
        }
        tokens += total;
        out->unit[d] = u;
        if (out->labels) out->labels[d] = s->cat_class[s->src_cat[s->unit_src[u]]];
        out->X.row_ptr[++d] = p;
    }
    free(cnt);
    free(touched);
    out->X.n_rows = d;
    out->X.nnz = p;
    if (test) {
        s->st->n_docs_test = d; s->st->nnz_test = p; s->st->tokens_test = tokens;
        s->st->oov_tokens_test = oov; s->st->n_dropped_test = dropped;
    } else {
        s->st->n_docs_train = d; s->st->nnz_train = p; s->st->tokens_train = tokens;
        s->st->oov_tokens_train = oov; s->st->n_dropped_train = dropped;
    }
    return rc;
}

static void split_free(split_out *o)
{
    datm_csr_free(&o->X);
    free(o->labels);
    free(o->unit);
    memset(o, 0, sizeof *o);
}

/* ---- files ---- */

static int write_split(datm_cb_state *s, const char *name, const split_out *o)
{
    const char *dir = s->o->out_dir;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.docword%s", dir, name, s->o->gzip ? ".gz" : "");
    int rc = datm_docword_write(path, &o->X, s->o->gzip, s->err);
    if (rc) return rc;
    char other[4200];   /* the other compression's file would shadow or confuse */
    snprintf(other, sizeof other, "%s/%s.docword%s", dir, name, s->o->gzip ? "" : ".gz");
    remove(other);
    outfile of;
    char fname[128];
    if (o->labels) {
        snprintf(fname, sizeof fname, "%s.labels", name);
        if ((rc = out_open(&of, dir, fname, s->err))) return rc;
        for (int64_t d = 0; d < o->X.n_rows; d++) fprintf(of.f, "%d\n", o->labels[d]);
        if ((rc = out_close(&of, s->err))) return rc;
    } else {
        snprintf(path, sizeof path, "%s/%s.labels", dir, name);
        remove(path);
    }
    snprintf(fname, sizeof fname, "%s.docs", name);
    if ((rc = out_open(&of, dir, fname, s->err))) return rc;
    for (int64_t d = 0; d < o->X.n_rows; d++) {
        int64_t u = o->unit[d];
        if (s->o->unit == DATM_UNIT_TEXT) fprintf(of.f, "%s\n", s->src_name[s->unit_src[u]]);
        else fprintf(of.f, "%s#%d\n", s->src_name[s->unit_src[u]], s->unit_idx[u] + 1);
    }
    return out_close(&of, s->err);
}

static void remove_split(const char *dir, const char *name)
{
    static const char *const ext[] = {".docword.gz", ".docword", ".labels", ".docs"};
    char path[4200];
    for (size_t i = 0; i < DATM_COUNTOF(ext); i++) {
        snprintf(path, sizeof path, "%s/%s%s", dir, name, ext[i]);
        remove(path);
    }
}

static void write_class_counts(FILE *f, const split_out *o, int nc)
{
    int64_t *cnt = calloc((size_t)DATM_MAX(nc, 1), sizeof *cnt);
    if (!cnt) return;
    for (int64_t d = 0; d < o->X.n_rows; d++) cnt[o->labels[d]]++;
    for (int c = 0; c < nc; c++) fprintf(f, "%s%lld", c ? " " : "", (long long)cnt[c]);
    free(cnt);
}

static int write_readme(datm_cb_state *s, const split_out *tr, const split_out *te,
                        const int32_t *class_order)
{
    const datm_corpus_build_opts *o = s->o;
    const datm_corpus_build_stats *st = s->st;
    outfile of;
    int rc = out_open(&of, o->out_dir, "README.md", s->err);
    if (rc) return rc;
    FILE *f = of.f;
    const char *shown = o->out_name ? o->out_name : o->out_dir;
    const char *base = strrchr(shown, '/');
    base = (base && base[1]) ? base + 1 : shown;
    fprintf(f, "# %s: built by `datm corpus build`\n\n", base);
    fprintf(f, "Built from `%s` (format `%s`) by datm %s. Every number below is from this run.\n\n",
            o->input, datm_text_format_name(o->format), datm_version_string());
    fprintf(f, "## Command\n```\ndatm corpus build --format %s --input %s --out %s", datm_text_format_name(o->format),
            o->input, shown);
    if (o->cats_path) fprintf(f, " --cats %s", o->cats_path);
    if (o->labels_path) fprintf(f, " --labels %s", o->labels_path);
    if (o->label_subdir) fprintf(f, " --label-subdir");
    if (o->text_field) fprintf(f, " --text-field %s", o->text_field);
    if (o->label_field) fprintf(f, " --label-field %s", o->label_field);
    if (o->vocab_path) fprintf(f, " --vocab-file %s", o->vocab_path);
    fprintf(f, " --unit %s", datm_doc_unit_name(o->unit));
    if (o->unit == DATM_UNIT_CHUNK) fprintf(f, " --chunk %lld", (long long)o->chunk_tokens);
    fprintf(f, " --min-len %d --max-len %d --min-df %lld --max-df %.9g --vocab %lld --min-doc-tokens %lld"
               " --test-frac %.9g --seed %llu",
            o->min_token_len, o->max_token_len, (long long)o->min_df, o->max_df, (long long)o->max_vocab,
            (long long)o->min_doc_tokens, o->test_frac, (unsigned long long)o->seed);
    if (o->no_stopwords) fprintf(f, " --no-stopwords");
    else if (o->stopwords_path) fprintf(f, " --stopwords %s", o->stopwords_path);
    else if (o->stopwords_lang) fprintf(f, " --stopwords-lang %s", o->stopwords_lang);
    if (!o->gzip) fprintf(f, " --no-gzip");
    fprintf(f, "\n```\n\n## Processing\n");
    if (o->format == DATM_TEXT_MM || o->format == DATM_TEXT_LDAC)
        fprintf(f, "* Tokens: the counts of the input, words named by %s.\n",
                o->vocab_path ? o->vocab_path : "their ids (w1, w2, ...)");
    else
        fprintf(f, "* Tokens: UTF-8 text in Unicode NFC, cut at ICU's word breaks; a token is a maximal run "
                   "of letters (Unicode Alphabetic, with the combining marks that follow), case folded, "
                   "%d to %d characters; digits, punctuation and symbols separate tokens.%s\n",
                o->min_token_len, o->max_token_len,
                o->format == DATM_TEXT_BROWN ? " Brown items are `word/TAG`; the tag (after the last `/`) is dropped." : "");
    if (o->no_stopwords) fprintf(f, "* Stop words: kept.\n");
    else if (o->stopwords_path) fprintf(f, "* Stop words: the list in `%s`.\n", o->stopwords_path);
    else if (o->stopwords_lang && strcmp(o->stopwords_lang, "en"))
        fprintf(f, "* Stop words: datm's built-in list for `%s` (%lld words).\n", o->stopwords_lang,
                (long long)datm_stopword_lang_count(o->stopwords_lang));
    else fprintf(f, "* Stop words: datm's built-in English list (%zu words).\n", datm_stopword_count());
    if (o->unit == DATM_UNIT_TEXT) fprintf(f, "* Documents: one per text.\n");
    else if (o->unit == DATM_UNIT_PARAGRAPH) fprintf(f, "* Documents: paragraphs (blocks separated by blank lines).\n");
    else fprintf(f, "* Documents: chunks of %lld consecutive tokens of a text (stop words included in the "
                    "count); a tail shorter than %lld joins the previous chunk.\n",
                 (long long)o->chunk_tokens, (long long)(o->chunk_tokens + 1) / 2);
    fprintf(f, "* Split: %.9g of the texts%s go to test (seed %llu); all documents of a text stay on one side.\n",
            o->test_frac, st->n_classes ? " of each category" : "", (unsigned long long)o->seed);
    fprintf(f, "* Vocabulary (training documents only): words in at least %lld and at most %.9g of the "
               "documents, the %lld most frequent kept (ties: more documents, then byte order); "
               "`vocab.txt` is in that order.\n", (long long)o->min_df, o->max_df, (long long)o->max_vocab);
    fprintf(f, "* Documents with fewer than %lld vocabulary tokens are dropped (counted below). "
               "`*.docs` names the source text (and `#k`, its k-th unit) of each document.\n",
            (long long)o->min_doc_tokens);
    fprintf(f, "\n## Statistics\n| split | texts | D | W | NNZ | tokens | max count |\n| --- | --- | --- | --- | --- | --- | --- |\n");
    fprintf(f, "| train | %lld | %lld | %lld | %lld | %lld | %.9g |\n", (long long)st->n_texts_train,
            (long long)tr->X.n_rows, (long long)tr->X.n_cols, (long long)tr->X.nnz,
            (long long)st->tokens_train, (double)tr->max_count);
    if (te->X.n_rows)
        fprintf(f, "| test | %lld | %lld | %lld | %lld | %lld | %.9g |\n", (long long)st->n_texts_test,
                (long long)te->X.n_rows, (long long)te->X.n_cols, (long long)te->X.nnz,
                (long long)st->tokens_test, (double)te->max_count);
    if (st->n_classes) {
        fprintf(f, "\n%d classes (`classes.txt`, byte order): ", st->n_classes);
        for (int c = 0; c < st->n_classes; c++) fprintf(f, "%s%s", c ? ", " : "", s->cats.str[class_order[c]]);
        fprintf(f, ".\nTrain class counts: ");
        write_class_counts(f, tr, st->n_classes);
        if (te->X.n_rows) {
            fprintf(f, ".\nTest class counts: ");
            write_class_counts(f, te, st->n_classes);
        }
        fprintf(f, ".\n");
    }
    fprintf(f, "\n## Reported while building\n| what | count |\n| --- | --- |\n");
    fprintf(f, "| texts read | %lld |\n", (long long)st->n_texts);
    fprintf(f, "| texts without any token | %lld |\n", (long long)st->n_texts_empty);
    fprintf(f, "| non-ASCII characters | %lld |\n", (long long)st->n_non_ascii_chars);
    if (o->format == DATM_TEXT_BROWN) fprintf(f, "| items without /TAG | %lld |\n", (long long)st->n_untagged_tokens);
    fprintf(f, "| tokens kept by the length limits | %lld |\n", (long long)st->n_tokens);
    fprintf(f, "| tokens longer than %d characters (dropped) | %lld |\n", o->max_token_len, (long long)st->n_long_tokens);
    fprintf(f, "| stop-word tokens removed | %lld |\n", (long long)st->n_stop_tokens);
    fprintf(f, "| distinct words in training documents | %lld |\n", (long long)st->n_distinct_words);
    fprintf(f, "| out-of-vocabulary tokens train / test | %lld / %lld |\n", (long long)st->oov_tokens_train,
            (long long)st->oov_tokens_test);
    fprintf(f, "| units formed train / test | %lld / %lld |\n", (long long)st->n_units_train, (long long)st->n_units_test);
    fprintf(f, "| units dropped as empty train / test | %lld / %lld |\n", (long long)st->n_dropped_train,
            (long long)st->n_dropped_test);
    return out_close(&of, s->err);
}

static void report(const datm_cb_state *s)
{
    const datm_corpus_build_stats *st = s->st;
    const datm_corpus_build_opts *o = s->o;
    datm_info("corpus build: %lld texts -> %lld units; train %lld docs, test %lld docs; V = %lld",
              (long long)st->n_texts, (long long)st->n_units, (long long)st->n_docs_train,
              (long long)st->n_docs_test, (long long)st->n_vocab);
    if (st->n_texts_empty)
        datm_warn("corpus build: %lld texts have no token at all", (long long)st->n_texts_empty);
    if (st->n_dropped_train || st->n_dropped_test)
        datm_warn("corpus build: dropped %lld train and %lld test units with fewer than %lld vocabulary tokens",
                  (long long)st->n_dropped_train, (long long)st->n_dropped_test, (long long)o->min_doc_tokens);
    if (st->n_long_tokens)
        datm_info("corpus build: %lld tokens longer than %d characters dropped", (long long)st->n_long_tokens,
                  o->max_token_len);
    if (o->format == DATM_TEXT_BROWN && st->n_untagged_tokens)
        datm_warn("corpus build: %lld items without a /TAG", (long long)st->n_untagged_tokens);
    if (o->test_frac > 0 && st->n_docs_test == 0)
        datm_warn("corpus build: --test-frac %.9g gave no test document", o->test_frac);
}

int datm_cb_finish(datm_cb_state *s)
{
    if (s->n_units == 0)
        return datm_error_set(s->err, DATM_E_INVALID, "corpus build: no token found in %lld texts of %s",
                              (long long)s->n_src, s->o->input);
    s->unit_tok[s->n_units] = s->n_tok;
    int32_t *class_order = NULL, *new_id = NULL, *vocab = NULL;
    int64_t V = 0;
    split_out tr = {0}, te = {0};
    int rc = make_classes(s, &class_order);
    if (!rc) rc = split_texts(s);
    if (!rc) rc = make_vocab(s, &new_id, &vocab, &V);
    if (!rc) rc = build_split(s, 0, new_id, V, &tr);
    if (!rc) rc = build_split(s, 1, new_id, V, &te);
    if (!rc && tr.X.n_rows == 0)
        rc = datm_error_set(s->err, DATM_E_INVALID, "corpus build: no training document left");
    if (!rc) rc = mkdir_p(s->o->out_dir, s->err);
    if (!rc) rc = write_split(s, "train", &tr);
    if (!rc) {
        if (te.X.n_rows) rc = write_split(s, "test", &te);
        else remove_split(s->o->out_dir, "test");
    }
    outfile of;
    if (!rc && !(rc = out_open(&of, s->o->out_dir, "vocab.txt", s->err))) {
        for (int64_t v = 0; v < V; v++) fprintf(of.f, "%s\n", s->words.str[vocab[v]]);
        rc = out_close(&of, s->err);
    }
    if (!rc && s->st->n_classes) {
        if (!(rc = out_open(&of, s->o->out_dir, "classes.txt", s->err))) {
            for (int c = 0; c < s->st->n_classes; c++) fprintf(of.f, "%s\n", s->cats.str[class_order[c]]);
            rc = out_close(&of, s->err);
        }
    } else if (!rc) {
        char path[4200];
        snprintf(path, sizeof path, "%s/classes.txt", s->o->out_dir);
        remove(path);
    }
    if (!rc) rc = write_readme(s, &tr, &te, class_order);
    if (!rc) report(s);
    split_free(&tr);
    split_free(&te);
    free(class_order);
    free(new_id);
    free(vocab);
    return rc;
}
