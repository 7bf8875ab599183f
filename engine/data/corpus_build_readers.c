/* engine/data/corpus_build_readers.c: the inputs of `datm corpus build` beyond text files:
 * JSON Lines (json-c) and CSV (libcsv) with a text field, whose texts are tokenised like any
 * text, and the bag-of-words files Matrix Market (coordinate, documents x words) and LDA-C
 * ("M id:count ..." per line, ids 0-based), whose counts become the documents' tokens (stop
 * words of the list in use are removed, as from text). Every error names file:line (and the
 * field or column). A document's name in train/test.docs is "line<N>" (jsonl), "row<N>"
 * (csv: record N after the header; mm: matrix row N) or "doc<N>" (ldac). */
#include <csv.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/corpus_build_internal.h"
#include "data/data.h"
#include "data/linereader.h"
#include "data/tokenize.h"

/* Tokenises text (lines separated by '\n') as the current text; line numbers are lineno. */
static int tokenize_text(datm_cb_state *s, datm_tokenizer *tk, const char *text, size_t n,
                         const char *file, int64_t lineno)
{
    size_t i = 0;
    int rc = DATM_OK;
    while (i <= n && !rc) {
        const char *nl = memchr(text + i, '\n', n - i);
        const size_t end = nl ? (size_t)(nl - text) : n;
        size_t len = end - i;
        if (len && text[i + len - 1] == '\r') len--;
        rc = datm_cb_line(s, tk, text + i, len, file, lineno);
        if (!nl) break;
        i = end + 1;
    }
    return rc;
}

/* The category id of a label text (interned in first-seen order). */
static int category(datm_cb_state *s, const char *label, size_t len, int32_t *cat)
{
    *cat = datm_strmap_intern(&s->cats, label, len, s->err);
    return *cat < 0 ? s->err->code : DATM_OK;
}

/* Invalid UTF-8 in a raw line: an error naming file:line:column. */
static int check_utf8(datm_cb_state *s, const char *line, size_t len, const char *file,
                      int64_t lineno)
{
    const int64_t bad = datm_utf8_first_bad((const unsigned char *)line, len);
    if (bad < 0) return DATM_OK;
    s->st->n_texts_utf8_errors++;
    snprintf(s->st->first_utf8_error, sizeof s->st->first_utf8_error, "%s:%lld", file,
             (long long)lineno);
    return datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld:%lld: invalid UTF-8 (byte 0x%02X); "
                          "convert the file to UTF-8 first (e.g. iconv -f LATIN1 -t UTF-8)", file,
                          (long long)lineno, (long long)bad + 1, (unsigned char)line[bad]);
}

/* ---- JSON Lines ---- */

static int jsonl_line(datm_cb_state *s, datm_tokenizer *tk, const char *line, size_t len,
                      int64_t lineno)
{
    const datm_corpus_build_opts *o = s->o;
    const char *file = o->input, *tf = o->text_field ? o->text_field : "text";
    int rc = check_utf8(s, line, len, file, lineno);
    if (rc) return rc;
    json_tokener *jt = json_tokener_new();
    if (!jt) return datm_error_set(s->err, DATM_E_NOMEM, "out of memory");
    json_tokener_set_flags(jt, JSON_TOKENER_STRICT);   /* no trailing commas, no bare words */
    json_object *obj = json_tokener_parse_ex(jt, line, (int)len);
    enum json_tokener_error je = json_tokener_get_error(jt);
    const size_t used = json_tokener_get_parse_end(jt);
    json_tokener_free(jt);
    if (!obj || je != json_tokener_success)
        rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: not a JSON object: %s", file,
                            (long long)lineno, json_tokener_error_desc(je));
    else if (used < len && line[used + strspn(line + used, " \t\r")] != '\0')
        rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld:%zu: text after the JSON object (JSON "
                            "Lines: one object per line)", file, (long long)lineno, used + 1);
    else if (!json_object_is_type(obj, json_type_object))
        rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: expected a JSON object, got %s",
                            file, (long long)lineno, json_type_to_name(json_object_get_type(obj)));
    json_object *text = NULL, *label = NULL;
    if (!rc && (!json_object_object_get_ex(obj, tf, &text) || !json_object_is_type(text, json_type_string)))
        rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: field \"%s\" %s (the text; "
                            "--text-field names it)", file, (long long)lineno, tf,
                            text ? "is not a string" : "is missing");
    int32_t cat = -1;
    if (!rc && o->label_field) {
        if (!json_object_object_get_ex(obj, o->label_field, &label) ||
            !(json_object_is_type(label, json_type_string) || json_object_is_type(label, json_type_int)))
            rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: field \"%s\" %s (the category; "
                                "--label-field names it)", file, (long long)lineno, o->label_field,
                                label ? "is neither a string nor an integer" : "is missing");
        else {
            const char *l = json_object_get_string(label);
            rc = category(s, l, strlen(l), &cat);
        }
    }
    if (!rc) {
        char name[32];
        snprintf(name, sizeof name, "line%lld", (long long)lineno);
        rc = datm_cb_begin_text(s, name, cat);
        if (!rc)
            rc = tokenize_text(s, tk, json_object_get_string(text),
                               (size_t)json_object_get_string_len(text), file, lineno);
        if (!rc) datm_cb_end_text(s);
    }
    json_object_put(obj);
    return rc;
}

int datm_cb_read_jsonl(datm_cb_state *s, datm_tokenizer *tk)
{
    datm_linereader lr;
    int rc = datm_linereader_open(&lr, s->o->input, s->err);
    if (rc) return rc;
    for (;;) {
        char *line;
        size_t len;
        int r = datm_linereader_next(&lr, &line, &len, s->err);
        if (r < 0) { rc = -r; break; }
        if (r == 0) break;
        if (line[strspn(line, " \t")] == '\0') continue;   /* a blank line holds no document */
        rc = jsonl_line(s, tk, line, len, lr.lineno);
        if (rc) break;
    }
    if (!rc && s->n_src == 0)
        rc = datm_error_set(s->err, DATM_E_FORMAT, "%s: no JSON object", s->o->input);
    datm_linereader_close(&lr);
    return rc;
}

/* ---- CSV ---- */

typedef struct csv_state {
    datm_cb_state  *s;
    datm_tokenizer *tk;
    int64_t lineno;             /* line being parsed */
    int64_t record;             /* records done (the header is record 0) */
    char  **field;              /* (n_fields) of the record being read */
    size_t *flen;
    int     n_fields, cap;
    int     n_header, text_col, label_col;
    int     rc;                 /* first error */
} csv_state;

static void csv_field(void *data, size_t len, void *user)
{
    csv_state *c = user;
    if (c->rc) return;
    if (c->n_fields == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        char **f = realloc(c->field, (size_t)cap * sizeof *f);
        size_t *l = realloc(c->flen, (size_t)cap * sizeof *l);
        if (f) c->field = f;
        if (l) c->flen = l;
        if (!f || !l) { c->rc = datm_error_set(c->s->err, DATM_E_NOMEM, "out of memory"); return; }
        c->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) { c->rc = datm_error_set(c->s->err, DATM_E_NOMEM, "out of memory"); return; }
    if (len) memcpy(copy, data, len);
    copy[len] = '\0';
    c->field[c->n_fields] = copy;
    c->flen[c->n_fields++] = len;
}

static int column(csv_state *c, const char *want, const char *option)
{
    for (int i = 0; i < c->n_fields; i++)
        if (!strcmp(c->field[i], want)) return i;
    return -1 - datm_error_set(c->s->err, DATM_E_FORMAT, "%s:1: no column \"%s\" in the header "
                               "(%s names it)", c->s->o->input, want, option);
}

static void csv_record(int term, void *user)
{
    (void)term;
    csv_state *c = user;
    datm_cb_state *s = c->s;
    const char *file = s->o->input;
    if (!c->rc && c->record == 0) {
        c->n_header = c->n_fields;
        c->text_col = column(c, s->o->text_field ? s->o->text_field : "text", "--text-field");
        if (c->text_col < 0) c->rc = DATM_E_FORMAT;
        if (!c->rc && s->o->label_field) {
            c->label_col = column(c, s->o->label_field, "--label-field");
            if (c->label_col < 0) c->rc = DATM_E_FORMAT;
        }
    } else if (!c->rc && c->n_fields != c->n_header) {
        c->rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: %d field(s) in this record, the "
                               "header has %d", file, (long long)c->lineno, c->n_fields, c->n_header);
    } else if (!c->rc) {
        int32_t cat = -1;
        char name[32];
        snprintf(name, sizeof name, "row%lld", (long long)c->record);
        if (c->label_col >= 0) c->rc = category(s, c->field[c->label_col], c->flen[c->label_col], &cat);
        if (!c->rc) c->rc = datm_cb_begin_text(s, name, cat);
        if (!c->rc) c->rc = tokenize_text(s, c->tk, c->field[c->text_col], c->flen[c->text_col],
                                          file, c->lineno);
        if (!c->rc) datm_cb_end_text(s);
    }
    for (int i = 0; i < c->n_fields; i++) free(c->field[i]);
    c->n_fields = 0;
    c->record++;
}

int datm_cb_read_csv(datm_cb_state *s, datm_tokenizer *tk)
{
    const char *file = s->o->input;
    struct csv_parser p;
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI) != 0)
        return datm_error_set(s->err, DATM_E_NOMEM, "out of memory");
    datm_linereader lr;
    int rc = datm_linereader_open(&lr, file, s->err);
    if (rc) { csv_free(&p); return rc; }
    csv_state c = {.s = s, .tk = tk, .label_col = -1};
    for (;;) {
        char *line;
        size_t len;
        int r = datm_linereader_next(&lr, &line, &len, s->err);
        if (r < 0) { rc = -r; break; }
        if (r == 0) break;
        c.lineno = lr.lineno;
        if ((rc = check_utf8(s, line, len, file, lr.lineno))) break;
        if (csv_parse(&p, line, len, csv_field, csv_record, &c) != len ||
            csv_parse(&p, "\n", 1, csv_field, csv_record, &c) != 1) {
            rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: CSV: %s (a quote inside a "
                                "quoted field is written twice: \"\")", file, (long long)lr.lineno,
                                csv_strerror(csv_error(&p)));
            break;
        }
        if (c.rc) { rc = c.rc; break; }
    }
    if (!rc && csv_fini(&p, csv_field, csv_record, &c) != 0)
        rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: CSV: a quoted field is not closed",
                            file, (long long)lr.lineno);
    if (!rc && c.rc) rc = c.rc;
    if (!rc && c.record == 0)
        rc = datm_error_set(s->err, DATM_E_FORMAT, "%s: empty (expected a header row)", file);
    for (int i = 0; i < c.n_fields; i++) free(c.field[i]);
    free(c.field);
    free(c.flen);
    csv_free(&p);
    datm_linereader_close(&lr);
    return rc;
}

/* ---- bag-of-words inputs ---- */

/* The vocabulary of a bag-of-words input: --vocab-file, or w1..wV. */
static int bow_vocab(datm_cb_state *s, int64_t V, char ***vocab, int64_t *n)
{
    const char *path = s->o->vocab_path;
    if (path) {
        int rc = datm_lines_read(path, V > 0 ? V : 0, vocab, n, s->err);
        if (rc) return rc;
        return DATM_OK;
    }
    *vocab = datm_alloc_array((size_t)(V > 0 ? V : 1), sizeof **vocab, s->err);
    if (!*vocab) return DATM_E_NOMEM;
    for (int64_t v = 0; v < V; v++) {
        char w[32];
        snprintf(w, sizeof w, "w%lld", (long long)v + 1);
        (*vocab)[v] = datm_strdup(w, s->err);
        if (!(*vocab)[v]) { datm_lines_free(*vocab, v); return DATM_E_NOMEM; }
    }
    *n = V;
    return DATM_OK;
}

/* One category name per document from --labels (NULL when not given). */
static int bow_labels(datm_cb_state *s, int64_t n_docs, char ***labels)
{
    *labels = NULL;
    if (!s->o->labels_path) return DATM_OK;
    int64_t n = 0;
    return datm_lines_read(s->o->labels_path, n_docs, labels, &n, s->err);
}

/* Document d (0-based) of a bag-of-words input: counts[i] of words ids[i]. */
static int bow_doc(datm_cb_state *s, const char *prefix, int64_t d, char **labels, char **vocab,
                   const int32_t *ids, const int64_t *counts, int64_t n)
{
    char name[48];
    snprintf(name, sizeof name, "%s%lld", prefix, (long long)d + 1);
    int32_t cat = -1;
    int rc = labels ? category(s, labels[d], strlen(labels[d]), &cat) : DATM_OK;
    if (!rc) rc = datm_cb_begin_text(s, name, cat);
    for (int64_t i = 0; i < n && !rc; i++)
        for (int64_t c = 0; c < counts[i] && !rc; c++)
            rc = datm_cb_token(s, vocab[ids[i]], strlen(vocab[ids[i]]));
    if (!rc) datm_cb_end_text(s);
    return rc;
}

typedef struct mm_entry { int64_t d; int32_t w; int64_t c; int64_t line; } mm_entry;

static int cmp_entry(const void *a, const void *b)
{
    const mm_entry *x = a, *y = b;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return (x->w > y->w) - (x->w < y->w);
}

/* A non-negative integer count from text (a real number must be integral). */
static int parse_count(const char *p, const char **end, int64_t *out)
{
    char *e;
    double v = strtod(p, &e);
    if (e == p || !(v >= 0) || v != (double)(int64_t)v || v > 1e15) return -1;
    *out = (int64_t)v;
    *end = e;
    return 0;
}

int datm_cb_read_mm(datm_cb_state *s)
{
    const char *file = s->o->input;
    datm_linereader lr;
    int rc = datm_linereader_open(&lr, file, s->err);
    if (rc) return rc;
    int64_t D = -1, V = 0, nnz = 0, have = 0;
    int pattern = 0;
    mm_entry *e = NULL;
    for (;;) {
        char *line;
        size_t len;
        int r = datm_linereader_next(&lr, &line, &len, s->err);
        if (r < 0) { rc = -r; break; }
        if (r == 0) break;
        if (lr.lineno == 1) {
            char obj[32] = "", fmt[32] = "", field[32] = "", sym[32] = "";
            if (sscanf(line, "%%%%MatrixMarket %31s %31s %31s %31s", obj, fmt, field, sym) != 4 ||
                strcmp(obj, "matrix") || strcmp(fmt, "coordinate") ||
                (strcmp(field, "integer") && strcmp(field, "real") && strcmp(field, "pattern")) ||
                strcmp(sym, "general")) {
                rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:1: expected '%%%%MatrixMarket matrix "
                                    "coordinate integer|real|pattern general' (documents x words)",
                                    file);
                break;
            }
            pattern = !strcmp(field, "pattern");
            continue;
        }
        const char *p = datm_skip_blank(line);
        if (*p == '%' || *p == '\0') continue;
        if (D < 0) {
            long long a, b, c;
            char extra;
            if (sscanf(p, "%lld %lld %lld %c", &a, &b, &c, &extra) != 3 || a < 0 || b < 1 || c < 0) {
                rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: expected the size line "
                                    "'documents words entries'", file, (long long)lr.lineno);
                break;
            }
            D = a; V = b; nnz = c;
            e = datm_alloc_array((size_t)(nnz ? nnz : 1), sizeof *e, s->err);
            if (!e) { rc = DATM_E_NOMEM; break; }
            continue;
        }
        long long d, w;
        int used = 0;
        int64_t count = 1;
        const char *end = NULL;
        if (sscanf(p, "%lld %lld %n", &d, &w, &used) < 2 || d < 1 || d > D || w < 1 || w > V ||
            (!pattern && parse_count(p + used, &end, &count)) ||
            (!pattern && *datm_skip_blank(end)) || (pattern && p[used] != '\0')) {
            rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: expected 'document word count' "
                                "with document in 1..%lld, word in 1..%lld and a count >= 0 (an "
                                "integer)", file, (long long)lr.lineno, (long long)D, (long long)V);
            break;
        }
        if (have == nnz) {
            rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: more entries than the %lld of "
                                "the size line", file, (long long)lr.lineno, (long long)nnz);
            break;
        }
        e[have++] = (mm_entry){d - 1, (int32_t)(w - 1), count, lr.lineno};
    }
    if (!rc && D < 0) rc = datm_error_set(s->err, DATM_E_FORMAT, "%s: no size line", file);
    if (!rc && have != nnz)
        rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: %lld entries, the size line says "
                            "%lld", file, (long long)lr.lineno, (long long)have, (long long)nnz);
    datm_linereader_close(&lr);
    char **vocab = NULL, **labels = NULL;
    int64_t nv = 0;
    if (!rc) {
        qsort(e, (size_t)have, sizeof *e, cmp_entry);
        for (int64_t i = 1; i < have && !rc; i++)
            if (e[i].d == e[i - 1].d && e[i].w == e[i - 1].w)
                rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: document %lld, word %d "
                                    "given twice (also line %lld)", file, (long long)e[i].line,
                                    (long long)e[i].d + 1, e[i].w + 1, (long long)e[i - 1].line);
    }
    if (!rc) rc = bow_vocab(s, V, &vocab, &nv);
    if (!rc) rc = bow_labels(s, D, &labels);
    int32_t *ids = datm_alloc_array((size_t)(V + 1), sizeof *ids, s->err);
    int64_t *cnt = datm_alloc_array((size_t)(V + 1), sizeof *cnt, s->err);
    if (!rc && (!ids || !cnt)) rc = DATM_E_NOMEM;
    for (int64_t d = 0, i = 0; d < D && !rc; d++) {
        int64_t n = 0;
        for (; i < have && e[i].d == d; i++) { ids[n] = e[i].w; cnt[n++] = e[i].c; }
        rc = bow_doc(s, "row", d, labels, vocab, ids, cnt, n);
    }
    datm_free(ids);
    datm_free(cnt);
    datm_free(e);
    datm_lines_free(vocab, nv);
    datm_lines_free(labels, D);
    return rc;
}

int datm_cb_read_ldac(datm_cb_state *s)
{
    const char *file = s->o->input;
    char **vocab = NULL, **labels = NULL;
    int64_t V = 0, nl = 0;
    int rc = DATM_OK;
    if (s->o->vocab_path) rc = bow_vocab(s, 0, &vocab, &V);
    /* without a vocabulary, ids name the words; a first pass finds the largest */
    datm_linereader lr;
    int64_t D = 0, max_id = -1;
    for (int pass = vocab ? 1 : 0; pass < 2 && !rc; pass++) {
        rc = datm_linereader_open(&lr, file, s->err);
        if (rc) break;
        int32_t *ids = NULL;
        int64_t *cnt = NULL, cap = 0;
        if (pass == 1 && !vocab) rc = bow_vocab(s, max_id + 1, &vocab, &V);
        if (pass == 1 && !rc && s->o->labels_path) {
            rc = datm_lines_read(s->o->labels_path, D, &labels, &nl, s->err);
        }
        D = 0;
        for (;;) {
            char *line;
            size_t len;
            int r = rc ? 0 : datm_linereader_next(&lr, &line, &len, s->err);
            if (r < 0) { rc = -r; break; }
            if (r == 0) break;
            const char *p = datm_skip_blank(line);
            if (*p == '\0') {
                rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: empty line (LDA-C: 'M "
                                    "id:count ...' per document; an empty document is '0')",
                                    file, (long long)lr.lineno);
                break;
            }
            char *end;
            long long m = strtoll(p, &end, 10);
            if (end == p || m < 0) {
                rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: expected the number of "
                                    "distinct words first", file, (long long)lr.lineno);
                break;
            }
            if (m > cap) {
                cap = m;
                int32_t *a = realloc(ids, (size_t)cap * sizeof *ids);
                int64_t *b = realloc(cnt, (size_t)cap * sizeof *cnt);
                if (a) ids = a;
                if (b) cnt = b;
                if (!a || !b) { rc = datm_error_set(s->err, DATM_E_NOMEM, "out of memory"); break; }
            }
            long long k = 0;
            for (p = end; !rc; k++) {
                p = datm_skip_blank(p);
                if (*p == '\0') break;
                long long id = strtoll(p, &end, 10);
                long long c = end[0] == ':' ? strtoll(end + 1, &end, 10) : -1;
                if (end == p || id < 0 || c < 1 || (*end && *end != ' ' && *end != '\t') ||
                    (vocab && pass == 1 && id >= V) || id > INT32_MAX) {
                    rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: pair %lld: expected "
                                        "'id:count' with id in 0..%lld and count >= 1", file,
                                        (long long)lr.lineno, k + 1,
                                        (long long)(vocab && pass == 1 ? V - 1 : INT32_MAX));
                    break;
                }
                if (k < m) { ids[k] = (int32_t)id; cnt[k] = c; }
                if (id > max_id) max_id = id;
                p = end;
            }
            if (!rc && k != m)
                rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: %lld id:count pairs, the line "
                                    "starts with %lld", file, (long long)lr.lineno, k, m);
            if (!rc && pass == 1 && labels && D >= nl)
                rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: more documents than the "
                                    "%lld labels of %s", file, (long long)lr.lineno,
                                    (long long)nl, s->o->labels_path);
            if (!rc && pass == 1) rc = bow_doc(s, "doc", D, labels, vocab, ids, cnt, m);
            D++;
        }
        if (!rc && pass == 1 && labels && D != nl)
            rc = datm_error_set(s->err, DATM_E_FORMAT, "%s: %lld labels but %s has %lld documents",
                                s->o->labels_path, (long long)nl, file, (long long)D);
        free(ids);
        free(cnt);
        datm_linereader_close(&lr);
    }
    datm_lines_free(vocab, V);
    datm_lines_free(labels, nl);
    return rc;
}
