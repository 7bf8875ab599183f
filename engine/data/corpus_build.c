/* engine/data/corpus_build.c: first half of `datm corpus build`: find the texts (directory
 * walk, category file, Brown cats.txt, or the lines of one file), tokenise them, drop stop
 * words and cut them into units (texts, paragraphs or chunks). The second half is in
 * corpus_build_out.c. See corpus_build.h for the whole pipeline. */
#include "data/corpus_build_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/data.h"
#include "data/linereader.h"
#include "data/tokenize.h"

static const char *const format_names[] = {"dir", "lines", "brown", "jsonl", "csv", "mm", "ldac"};
static const char *const unit_names[] = {"text", "paragraph", "chunk"};
_Static_assert(DATM_COUNTOF(format_names) == DATM_TEXT_COUNT_, "one name per text format");
_Static_assert(DATM_COUNTOF(unit_names) == DATM_UNIT_COUNT_, "one name per unit");

const char *datm_text_format_name(datm_text_format f)
{
    return (f >= 0 && f < DATM_TEXT_COUNT_) ? format_names[f] : "?";
}
const char *datm_doc_unit_name(datm_doc_unit u)
{
    return (u >= 0 && u < DATM_UNIT_COUNT_) ? unit_names[u] : "?";
}
int datm_text_format_parse(const char *s)
{
    for (int i = 0; i < DATM_TEXT_COUNT_; i++) if (!strcmp(s, format_names[i])) return i;
    return -1;
}
int datm_doc_unit_parse(const char *s)
{
    for (int i = 0; i < DATM_UNIT_COUNT_; i++) if (!strcmp(s, unit_names[i])) return i;
    if (!strcmp(s, "para")) return DATM_UNIT_PARAGRAPH;
    return -1;
}

void datm_corpus_build_defaults(datm_corpus_build_opts *o)
{
    memset(o, 0, sizeof *o);
    o->format = DATM_TEXT_DIR;
    o->unit = DATM_UNIT_TEXT;
    o->chunk_tokens = 200;
    o->min_token_len = 2;
    o->max_token_len = 30;
    o->min_df = 5;
    o->max_df = 0.5;
    o->max_vocab = 5000;
    o->min_doc_tokens = 1;
    o->test_frac = 0.1;
    o->seed = 1;
    o->gzip = 1;
}

int datm_cb_grow(void **p, int64_t *cap, int64_t need, size_t size, datm_error *err)
{
    if (need <= *cap) return DATM_OK;
    int64_t nc = *cap ? *cap : 256;
    while (nc < need) nc *= 2;
    void *q = realloc(*p, (size_t)nc * size);
    if (!q) return datm_error_set(err, DATM_E_NOMEM, "corpus build: out of memory");
    *p = q;
    *cap = nc;
    return DATM_OK;
}

/* ---- texts and units ---- */

int datm_cb_begin_text(datm_cb_state *s, const char *name, int32_t cat)
{
    int64_t need = s->n_src + 1, cap = s->cap_src;
    int rc = datm_cb_grow((void **)&s->src_name, &cap, need, sizeof *s->src_name, s->err);
    if (!rc) { cap = s->cap_src; rc = datm_cb_grow((void **)&s->src_cat, &cap, need, sizeof *s->src_cat, s->err); }
    if (rc) return rc;
    s->cap_src = cap;
    s->src_name[s->n_src] = datm_strdup(name, s->err);
    if (!s->src_name[s->n_src]) return s->err->code;
    s->src_cat[s->n_src] = cat;
    s->n_src++;
    s->unit_open = 0;
    s->src_raw = 0;
    s->src_first_unit = s->n_units;
    s->st->n_texts++;
    return DATM_OK;
}

static int open_unit(datm_cb_state *s)
{
    int64_t need = s->n_units + 2, cap = s->cap_units;
    int rc = datm_cb_grow((void **)&s->unit_tok, &cap, need, sizeof *s->unit_tok, s->err);
    if (!rc) { cap = s->cap_units; rc = datm_cb_grow((void **)&s->unit_src, &cap, need, sizeof *s->unit_src, s->err); }
    if (!rc) { cap = s->cap_units; rc = datm_cb_grow((void **)&s->unit_idx, &cap, need, sizeof *s->unit_idx, s->err); }
    if (!rc) { cap = s->cap_units; rc = datm_cb_grow((void **)&s->unit_raw, &cap, need, sizeof *s->unit_raw, s->err); }
    if (rc) return rc;
    s->cap_units = cap;
    int64_t u = s->n_units++;
    s->unit_tok[u] = s->n_tok;
    s->unit_src[u] = (int32_t)(s->n_src - 1);
    s->unit_idx[u] = (int32_t)(u - s->src_first_unit);
    s->unit_raw[u] = 0;
    s->unit_open = 1;
    return DATM_OK;
}

static int is_stop(const datm_cb_state *s, const char *w, size_t len)
{
    if (s->o->no_stopwords) return 0;
    if (s->have_stops) return datm_strmap_find(&s->stops, w, len) >= 0;
    return datm_stopword_lang_is(s->o->stopwords_lang ? s->o->stopwords_lang : "en", w);
}

int datm_cb_token(void *user, const char *w, size_t len)
{
    datm_cb_state *s = user;
    if (!s->unit_open) {
        int rc = open_unit(s);
        if (rc) return rc;
    }
    s->src_raw++;
    int64_t u = s->n_units - 1;
    s->unit_raw[u]++;
    if (is_stop(s, w, len)) {
        s->st->n_stop_tokens++;
    } else {
        int32_t id = datm_strmap_intern(&s->words, w, len, s->err);
        if (id < 0) return s->err->code;
        int rc = datm_cb_grow((void **)&s->tok, &s->cap_tok, s->n_tok + 1, sizeof *s->tok, s->err);
        if (rc) return rc;
        s->tok[s->n_tok++] = id;
    }
    if (s->o->unit == DATM_UNIT_CHUNK && s->unit_raw[u] >= s->o->chunk_tokens) s->unit_open = 0;
    return DATM_OK;
}

void datm_cb_end_text(datm_cb_state *s)
{
    if (s->src_raw == 0) s->st->n_texts_empty++;
    /* a short tail joins the previous chunk of the same text */
    int64_t u = s->n_units - 1;
    if (s->o->unit == DATM_UNIT_CHUNK && u > s->src_first_unit &&
        2 * s->unit_raw[u] < s->o->chunk_tokens) {
        s->unit_raw[u - 1] += s->unit_raw[u];
        s->n_units--;
    }
    s->unit_open = 0;
}

int datm_cb_line(datm_cb_state *s, datm_tokenizer *tk, const char *line, size_t len,
                 const char *name, int64_t lineno)
{
    int blank = 0;
    tk->bad_column = 0;
    int rc = datm_tokenize_line(tk, line, len, &blank);
    if (rc && tk->bad_column > 0) {
        s->st->n_texts_utf8_errors++;
        snprintf(s->st->first_utf8_error, sizeof s->st->first_utf8_error, "%s:%lld", name,
                 (long long)lineno);
        return datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld:%lld: invalid UTF-8 (byte 0x%02X); "
                              "convert the text to UTF-8 first (e.g. iconv -f LATIN1 -t UTF-8)",
                              name, (long long)lineno, (long long)tk->bad_column, tk->bad_byte);
    }
    if (rc && !s->err->code)
        return datm_error_set(s->err, rc, "%s:%lld: the Unicode tokeniser (ICU) failed", name,
                              (long long)lineno);
    if (!rc && blank && s->o->unit == DATM_UNIT_PARAGRAPH) s->unit_open = 0;
    return rc;
}

/* Feeds the lines of one file to the tokeniser; blank lines end paragraphs. */
static int read_text_file(datm_cb_state *s, datm_tokenizer *tk, const char *path, const char *name)
{
    datm_linereader lr;
    int rc = datm_linereader_open(&lr, path, s->err);
    if (rc) return rc;
    for (;;) {
        char *line;
        size_t len;
        int r = datm_linereader_next(&lr, &line, &len, s->err);
        if (r < 0) { rc = -r; break; }
        if (r == 0) break;
        rc = datm_cb_line(s, tk, line, len, name, lr.lineno);
        if (rc) break;
    }
    datm_linereader_close(&lr);
    return rc;
}

/* ---- category files ---- */

/* Reads "NAME CATEGORY" lines into names / category ids (in `cats`), in file order. */
static int read_cats(datm_cb_state *s, const char *path, char ***names, int32_t **cats, int64_t *n)
{
    char **lines = NULL;
    int64_t nl = 0;
    int rc = datm_lines_read(path, 0, &lines, &nl, s->err);
    if (rc) return rc;
    *names = calloc((size_t)nl, sizeof **names);
    *cats = calloc((size_t)nl, sizeof **cats);
    if (!*names || !*cats) { datm_lines_free(lines, nl); return datm_error_set(s->err, DATM_E_NOMEM, "out of memory"); }
    datm_strmap seen;
    rc = datm_strmap_init(&seen, s->err);
    for (int64_t i = 0; i < nl && !rc; i++) {
        char *a = lines[i], *sp = a + strcspn(a, " \t");
        char *b = (char *)datm_skip_blank(sp);
        if (!*sp || !*b || b[strcspn(b, " \t")]) {
            rc = datm_error_set(s->err, DATM_E_FORMAT,
                                "%s:%lld: expected 'NAME CATEGORY' (two fields)", path, (long long)i + 1);
            break;
        }
        *sp = '\0';
        if (datm_strmap_find(&seen, a, strlen(a)) >= 0) {
            rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: text '%s' listed twice", path,
                                (long long)i + 1, a);
            break;
        }
        if (datm_strmap_intern(&seen, a, strlen(a), s->err) < 0) { rc = s->err->code; break; }
        (*names)[i] = datm_strdup(a, s->err);
        int32_t c = datm_strmap_intern(&s->cats, b, strlen(b), s->err);
        if (!(*names)[i] || c < 0) { rc = s->err->code; break; }
        (*cats)[i] = c;
    }
    datm_strmap_free(&seen);
    datm_lines_free(lines, nl);
    *n = nl;
    return rc;
}

/* ---- directory walk ---- */

typedef struct { char **v; int64_t n, cap; } strlist;

static int strlist_push(strlist *l, const char *s, datm_error *err)
{
    int rc = datm_cb_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v, err);
    if (rc) return rc;
    l->v[l->n] = datm_strdup(s, err);
    if (!l->v[l->n]) return err->code;
    l->n++;
    return DATM_OK;
}

static void strlist_free(strlist *l)
{
    for (int64_t i = 0; i < l->n; i++) datm_free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Regular files under root/rel, as paths relative to root; hidden entries skipped. */
static int walk(const char *root, const char *rel, strlist *out, int depth, datm_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s", root, *rel ? "/" : "", rel);
    DIR *d = opendir(path);
    if (!d) return datm_error_set(err, DATM_E_IO, "%s: cannot open directory: %s", path, strerror(errno));
    if (depth > 32) { closedir(d); return datm_error_set(err, DATM_E_INVALID, "%s: directories nested too deep", path); }
    int rc = DATM_OK;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char sub[4096], full[8192];
        snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        snprintf(full, sizeof full, "%s/%s", root, sub);
        struct stat st;
        if (stat(full, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) rc = walk(root, sub, out, depth + 1, err);
        else if (S_ISREG(st.st_mode)) rc = strlist_push(out, sub, err);
    }
    closedir(d);
    return rc;
}

int datm_cb_list_files(const char *root, char ***names, int64_t *n, datm_error *err)
{
    strlist files = {0};
    int rc = walk(root, "", &files, 0, err);
    if (rc) { strlist_free(&files); return rc; }
    qsort(files.v, (size_t)files.n, sizeof *files.v, cmp_str);
    *names = files.v;
    *n = files.n;
    return DATM_OK;
}

/* ---- the three input formats ---- */

static int read_dir_or_brown(datm_cb_state *s, datm_tokenizer *tk)
{
    const datm_corpus_build_opts *o = s->o;
    char cats_default[4096];
    const char *cats_path = o->cats_path;
    if (!cats_path && o->format == DATM_TEXT_BROWN) {
        snprintf(cats_default, sizeof cats_default, "%s/cats.txt", o->input);
        cats_path = cats_default;
    }
    char **names = NULL;
    int32_t *cats = NULL;
    int64_t n = 0;
    strlist files = {0};
    int rc;
    if (cats_path) {
        rc = read_cats(s, cats_path, &names, &cats, &n);
    } else {
        rc = walk(o->input, "", &files, 0, s->err);
        if (!rc) {
            qsort(files.v, (size_t)files.n, sizeof *files.v, cmp_str);
            names = files.v;
            n = files.n;
            cats = malloc((size_t)DATM_MAX(n, 1) * sizeof *cats);
            if (!cats) rc = datm_error_set(s->err, DATM_E_NOMEM, "out of memory");
            for (int64_t i = 0; !rc && i < n; i++) {
                cats[i] = -1;
                if (!o->label_subdir) continue;
                const char *slash = strchr(names[i], '/');
                if (!slash) {
                    rc = datm_error_set(s->err, DATM_E_INVALID,
                                        "%s/%s: not inside a sub-directory (--label-subdir takes the "
                                        "category from it)", o->input, names[i]);
                    break;
                }
                cats[i] = datm_strmap_intern(&s->cats, names[i], (size_t)(slash - names[i]), s->err);
                if (cats[i] < 0) rc = s->err->code;
            }
        }
        if (!rc && n == 0) rc = datm_error_set(s->err, DATM_E_INVALID, "%s: no text files found", o->input);
    }
    for (int64_t i = 0; !rc && i < n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", o->input, names[i]);
        rc = datm_cb_begin_text(s, names[i], cats[i]);
        if (!rc) rc = read_text_file(s, tk, path, names[i]);
        if (!rc) datm_cb_end_text(s);
        if (rc && cats_path) datm_error_prefix(s->err, "text '%s' listed in %s: ", names[i], cats_path);
    }
    if (cats_path) {
        for (int64_t i = 0; i < n; i++) datm_free(names ? names[i] : NULL);
        free(names);
    } else {
        strlist_free(&files);
    }
    free(cats);
    return rc;
}

static int read_lines(datm_cb_state *s, datm_tokenizer *tk)
{
    const datm_corpus_build_opts *o = s->o;
    char **labels = NULL;
    int64_t n_labels = 0;
    int rc = DATM_OK;
    if (o->labels_path) {
        rc = datm_lines_read(o->labels_path, 0, &labels, &n_labels, s->err);
        if (rc) return rc;
    }
    datm_linereader lr;
    rc = datm_linereader_open(&lr, o->input, s->err);
    if (rc) { datm_lines_free(labels, n_labels); return rc; }
    for (;;) {
        char *line;
        size_t len;
        int r = datm_linereader_next(&lr, &line, &len, s->err);
        if (r < 0) { rc = -r; break; }
        if (r == 0) break;
        int32_t cat = -1;
        if (labels) {
            if (lr.lineno > n_labels) {
                rc = datm_error_set(s->err, DATM_E_FORMAT,
                                    "%s:%lld: more documents than the %lld labels in %s", o->input,
                                    (long long)lr.lineno, (long long)n_labels, o->labels_path);
                break;
            }
            const char *lab = labels[lr.lineno - 1];
            cat = datm_strmap_intern(&s->cats, lab, strlen(lab), s->err);
            if (cat < 0) { rc = s->err->code; break; }
        }
        char name[32];
        snprintf(name, sizeof name, "line%lld", (long long)lr.lineno);
        rc = datm_cb_begin_text(s, name, cat);
        if (rc) break;
        rc = datm_cb_line(s, tk, line, len, o->input, lr.lineno);
        if (rc) break;
        datm_cb_end_text(s);
    }
    if (!rc && labels && lr.lineno != n_labels)
        rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: %lld labels but %s has %lld documents",
                            o->labels_path, (long long)n_labels, (long long)n_labels, o->input,
                            (long long)lr.lineno);
    datm_linereader_close(&lr);
    datm_lines_free(labels, n_labels);
    return rc;
}

static int check_opts(const datm_corpus_build_opts *o, datm_error *err)
{
    if (!o->input || !o->out_dir)
        return datm_error_set(err, DATM_E_INVALID, "corpus build: input and output are required");
    if (o->format < 0 || o->format >= DATM_TEXT_COUNT_ || o->unit < 0 || o->unit >= DATM_UNIT_COUNT_)
        return datm_error_set(err, DATM_E_INVALID, "corpus build: unknown format or unit");
    if (o->format == DATM_TEXT_LINES && o->unit == DATM_UNIT_PARAGRAPH)
        return datm_error_set(err, DATM_E_INVALID,
                              "corpus build: --unit paragraph needs texts with blank lines; the lines "
                              "format has one document per line (use text or chunk)");
    if (o->unit == DATM_UNIT_CHUNK && o->chunk_tokens < 2)
        return datm_error_set(err, DATM_E_INVALID, "corpus build: --chunk %lld must be >= 2",
                              (long long)o->chunk_tokens);
    if (o->min_token_len < 1 || o->max_token_len < o->min_token_len || o->max_token_len > 60)
        return datm_error_set(err, DATM_E_INVALID,
                              "corpus build: token length limits %d..%d must satisfy 1 <= min <= max <= 60",
                              o->min_token_len, o->max_token_len);
    if (o->min_df < 1) return datm_error_set(err, DATM_E_INVALID, "corpus build: --min-df must be >= 1");
    if (!(o->max_df > 0.0 && o->max_df <= 1.0))
        return datm_error_set(err, DATM_E_INVALID, "corpus build: --max-df %.9g must be in (0, 1]", o->max_df);
    if (o->max_vocab < 0) return datm_error_set(err, DATM_E_INVALID, "corpus build: --vocab must be >= 0");
    if (o->min_doc_tokens < 1)
        return datm_error_set(err, DATM_E_INVALID, "corpus build: --min-doc-tokens must be >= 1");
    if (!(o->test_frac >= 0.0 && o->test_frac < 1.0))
        return datm_error_set(err, DATM_E_INVALID, "corpus build: --test-frac %.9g must be in [0, 1)", o->test_frac);
    const int bow = o->format == DATM_TEXT_MM || o->format == DATM_TEXT_LDAC;
    if (o->labels_path && o->format != DATM_TEXT_LINES && !bow)
        return datm_error_set(err, DATM_E_INVALID, "corpus build: --labels is for the lines, mm "
                              "and ldac formats (dir and brown take --cats; jsonl and csv "
                              "--label-field)");
    if (bow && o->unit != DATM_UNIT_TEXT)
        return datm_error_set(err, DATM_E_INVALID, "corpus build: the %s format holds counts "
                              "already, one document per row: --unit must be text",
                              datm_text_format_name(o->format));
    if ((o->text_field || o->label_field) && o->format != DATM_TEXT_JSONL && o->format != DATM_TEXT_CSV)
        return datm_error_set(err, DATM_E_INVALID, "corpus build: --text-field and --label-field "
                              "are for the jsonl and csv formats");
    if (o->vocab_path && !bow)
        return datm_error_set(err, DATM_E_INVALID, "corpus build: --vocab-file is for the mm and "
                              "ldac formats");
    if (o->stopwords_lang && datm_stopword_lang_count(o->stopwords_lang) < 0)
        return datm_error_set(err, DATM_E_INVALID, "corpus build: --stopwords-lang '%s': built-in "
                              "lists are %s (any other language: --stopwords FILE)",
                              o->stopwords_lang, datm_stopword_langs());
    if (o->stopwords_lang && o->stopwords_path)
        return datm_error_set(err, DATM_E_INVALID, "corpus build: --stopwords-lang and --stopwords "
                              "both name the stop list: give one");
    if (o->label_subdir && (o->format != DATM_TEXT_DIR || o->cats_path))
        return datm_error_set(err, DATM_E_INVALID, "corpus build: --label-subdir is for the dir format without --cats");
    if (o->cats_path && o->format != DATM_TEXT_DIR && o->format != DATM_TEXT_BROWN)
        return datm_error_set(err, DATM_E_INVALID, "corpus build: --cats is for the dir and brown "
                              "formats");
    return DATM_OK;
}

/* The stop words of o->stopwords_path, normalised like the tokens (NFC, case folded). */
static int read_stop_file(datm_cb_state *s, datm_tokenizer *tk)
{
    const char *path = s->o->stopwords_path;
    char **lines = NULL;
    int64_t n = 0;
    int rc = datm_strmap_init(&s->stops, s->err);
    if (!rc) rc = datm_lines_read(path, 0, &lines, &n, s->err);
    for (int64_t i = 0; !rc && i < n; i++) {
        char w[1024];
        size_t len = 0;
        int r = datm_token_normalize(tk, lines[i], strlen(lines[i]), w, sizeof w, &len);
        if (r == DATM_E_FORMAT)
            rc = datm_error_set(s->err, r, "%s:%lld: invalid UTF-8", path, (long long)i + 1);
        else if (r)
            rc = datm_error_set(s->err, r, "%s:%lld: stop word too long", path, (long long)i + 1);
        else if (len && datm_strmap_intern(&s->stops, w, len, s->err) < 0)
            rc = s->err->code;
    }
    datm_lines_free(lines, n);
    s->have_stops = 1;
    return rc;
}

static void state_free(datm_cb_state *s)
{
    datm_strmap_free(&s->words);
    datm_strmap_free(&s->stops);
    datm_strmap_free(&s->cats);
    free(s->cat_class);
    for (int64_t i = 0; i < s->n_src; i++) datm_free(s->src_name[i]);
    free(s->src_name); free(s->src_cat); free(s->src_test);
    free(s->unit_tok); free(s->unit_src); free(s->unit_idx); free(s->unit_raw);
    free(s->tok);
}

int datm_corpus_build(const datm_corpus_build_opts *o, datm_corpus_build_stats *st, datm_error *err)
{
    DATM_ASSERT(o && st);
    memset(st, 0, sizeof *st);
    int rc = check_opts(o, err);
    if (rc) return rc;
    datm_cb_state s;
    memset(&s, 0, sizeof s);
    s.o = o;
    s.st = st;
    s.err = err;
    datm_tokenizer tk = {
        .tagged = o->format == DATM_TEXT_BROWN,
        .min_len = o->min_token_len,
        .max_len = o->max_token_len,
        .on_token = datm_cb_token,
        .user = &s,
    };
    rc = datm_strmap_init(&s.words, err);
    if (!rc) rc = datm_strmap_init(&s.cats, err);
    if (!rc && o->stopwords_path && !o->no_stopwords) rc = read_stop_file(&s, &tk);
    if (!rc) {
        switch (o->format) {
        case DATM_TEXT_LINES: rc = read_lines(&s, &tk); break;
        case DATM_TEXT_JSONL: rc = datm_cb_read_jsonl(&s, &tk); break;
        case DATM_TEXT_CSV: rc = datm_cb_read_csv(&s, &tk); break;
        case DATM_TEXT_MM: rc = datm_cb_read_mm(&s); break;
        case DATM_TEXT_LDAC: rc = datm_cb_read_ldac(&s); break;
        default: rc = read_dir_or_brown(&s, &tk); break;
        }
    }
    if (!rc) {
        st->n_utf8_error_bytes = tk.utf8_error_bytes;
        st->n_non_ascii_chars = tk.non_ascii_chars;
        st->n_untagged_tokens = tk.untagged;
        st->n_tokens = tk.tokens;
        st->n_long_tokens = tk.long_tokens;
        st->n_units = s.n_units;
        rc = datm_cb_finish(&s);
    }
    datm_tokenizer_free(&tk);
    state_free(&s);
    return rc;
}
