/* engine/data/corpus_build_tokens.c: a raw-text source read as token sequences over a given
 * vocabulary (data/tokdocs.h), the reference corpus of sliding-window coherence. Texts are
 * found and tokenised as `datm corpus build` does with its default options: a directory is
 * every regular file under it (sorted, one document each), a file is one document per line
 * (plain or gzip). A vocabulary word keeps its id; a stop word of the built-in list that is not
 * in the vocabulary takes no position (the corpus builder removed it before counting); any
 * other word is a position without a vocabulary word (-1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/corpus_build_internal.h"
#include "data/linereader.h"
#include "data/tokdocs.h"
#include "data/tokenize.h"

typedef struct tok_state {
    const datm_strmap *vocab;
    datm_tokdocs *out;
    int64_t cap_tok, cap_docs;
    datm_error *err;
} tok_state;

static int on_tok(void *user, const char *w, size_t len)
{
    tok_state *s = user;
    const int32_t id = datm_strmap_find(s->vocab, w, len);
    if (id < 0 && datm_stopword_is(w)) return 0;
    datm_tokdocs *t = s->out;
    const int64_t n = t->doc_ptr[t->n_docs];
    int rc = datm_cb_grow((void **)&t->tok, &s->cap_tok, n + 1, sizeof *t->tok, s->err);
    if (rc) return rc;
    t->tok[n] = id;
    t->doc_ptr[t->n_docs]++;
    return 0;
}

static int begin_doc(tok_state *s)
{
    datm_tokdocs *t = s->out;
    int rc = datm_cb_grow((void **)&t->doc_ptr, &s->cap_docs, t->n_docs + 2, sizeof *t->doc_ptr,
                          s->err);
    if (rc) return rc;
    t->doc_ptr[t->n_docs + 1] = t->doc_ptr[t->n_docs];
    t->n_docs++;
    return DATM_OK;
}

/* Tokenises the lines of path into the current document (per_line: a document per line). */
static int read_file(tok_state *s, datm_tokenizer *tk, const char *path, int per_line)
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
        if (per_line && (rc = begin_doc(s))) break;
        const int64_t bad = tk->utf8_error_bytes;
        int blank;
        rc = datm_tokenize_line(tk, line, len, &blank);
        if (!rc && tk->utf8_error_bytes > bad)
            rc = datm_error_set(s->err, DATM_E_FORMAT, "%s:%lld: invalid UTF-8", path,
                                (long long)lr.lineno);
        if (rc) break;
    }
    datm_linereader_close(&lr);
    return rc;
}

int datm_tokdocs_read_text(const char *path, char *const *vocab, int64_t V, datm_tokdocs *out,
                           datm_error *err)
{
    memset(out, 0, sizeof *out);
    out->n_vocab = V;
    datm_strmap map;
    int rc = datm_strmap_init(&map, err);
    for (int64_t v = 0; v < V && !rc; v++)
        if (datm_strmap_intern(&map, vocab[v], strlen(vocab[v]), err) != (int32_t)v)
            rc = err->code ? err->code
                           : datm_error_set(err, DATM_E_FORMAT, "vocabulary word %lld ('%s') "
                                            "repeats an earlier one", (long long)v, vocab[v]);
    tok_state s = {&map, out, 0, 0, err};
    datm_corpus_build_opts d;
    datm_corpus_build_defaults(&d);
    datm_tokenizer tk = {.min_len = d.min_token_len, .max_len = d.max_token_len,
                         .on_token = on_tok, .user = &s};
    if (!rc) rc = datm_cb_grow((void **)&out->doc_ptr, &s.cap_docs, 2, sizeof *out->doc_ptr, err);
    if (!rc) out->doc_ptr[0] = 0;
    struct stat st;
    if (!rc && stat(path, &st) != 0)
        rc = datm_error_set(err, DATM_E_IO, "%s: no such file or directory", path);
    if (!rc && S_ISDIR(st.st_mode)) {
        char **names = NULL;
        int64_t n = 0;
        rc = datm_cb_list_files(path, &names, &n, err);
        for (int64_t i = 0; i < n && !rc; i++) {
            char full[8192];
            snprintf(full, sizeof full, "%s/%s", path, names[i]);
            rc = begin_doc(&s);
            if (!rc) rc = read_file(&s, &tk, full, 0);
        }
        for (int64_t i = 0; i < n; i++) datm_free(names[i]);
        free(names);
        if (!rc && n == 0) rc = datm_error_set(err, DATM_E_INVALID, "%s: no text files", path);
    } else if (!rc) {
        rc = read_file(&s, &tk, path, 1);
        if (!rc && out->n_docs == 0) rc = datm_error_set(err, DATM_E_INVALID, "%s: empty", path);
    }
    datm_strmap_free(&map);
    if (rc) {
        free(out->doc_ptr);
        free(out->tok);
        memset(out, 0, sizeof *out);
        return rc;
    }
    /* the arrays were grown with realloc; hand them over in datm_alloc memory */
    const int64_t T = out->doc_ptr[out->n_docs];
    int64_t *dp = datm_alloc_array((size_t)out->n_docs + 1, sizeof *dp, err);
    int32_t *tok = datm_alloc_array((size_t)T + 1, sizeof *tok, err);
    if (dp && tok) {
        memcpy(dp, out->doc_ptr, (size_t)(out->n_docs + 1) * sizeof *dp);
        if (T) memcpy(tok, out->tok, (size_t)T * sizeof *tok);
    }
    free(out->doc_ptr);
    free(out->tok);
    out->doc_ptr = dp;
    out->tok = tok;
    if (!dp || !tok) {
        datm_tokdocs_free(out);
        return DATM_E_NOMEM;
    }
    return DATM_OK;
}
