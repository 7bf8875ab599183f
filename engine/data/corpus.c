/* engine/data/corpus.c: loading one split of a data set directory (docword or shards +
 * labels + classes + vocab, cross-checked against each other) and resolving data set names. */
#include "data/data.h"

#include "data/linereader.h"
#include "data/shard.h"
#include "data/strmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int dir_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Labels for SPLIT: SPLIT.labels, or for a derived split "BASE_xxx" (test_obs,
 * test_heldout: the same documents as BASE) BASE.labels. Returns 1 and the path if found. */
static int labels_path(const char *dir, const char *split, char *out, size_t n)
{
    snprintf(out, n, "%s/%s.labels", dir, split);
    if (file_exists(out)) return 1;
    const char *us = strchr(split, '_');
    if (us) {
        snprintf(out, n, "%s/%.*s.labels", dir, (int)(us - split), split);
        if (file_exists(out)) return 1;
    }
    return 0;
}

/* A word id stands for one word: a repeated entry (line i and line j the same word) would
 * split its counts between two ids and show twice among a topic's top words. */
static int check_unique(const char *path, char *const *words, int64_t n, datm_error *err)
{
    datm_strmap m;
    int rc = datm_strmap_init(&m, err);
    for (int64_t i = 0; !rc && i < n; i++) {
        size_t len = strlen(words[i]);
        int32_t id = datm_strmap_find(&m, words[i], len);
        if (id >= 0) {
            char quoted[48];
            datm_quote_field(words[i], len, quoted);
            rc = datm_error_set(err, DATM_E_FORMAT, "%s:%lld: '%s' repeats line %lld (a word "
                                "may have one id only)", path, (long long)i + 1, quoted,
                                (long long)id + 1);
        } else if (datm_strmap_intern(&m, words[i], len, err) < 0) {
            rc = err ? err->code : DATM_E_NOMEM;
        }
    }
    datm_strmap_free(&m);
    return rc;
}

static int read_all_shards(const char *shard_dir, datm_csr *X, datm_error *err)
{
    datm_shardset s;
    int rc = datm_shardset_open(shard_dir, &s, err);
    if (rc) return rc;
    rc = datm_shardset_read_first(&s, 0, X, err);
    datm_shardset_close(&s);
    return rc;
}

int datm_corpus_load(const char *dir, const char *split, datm_corpus *out, datm_error *err)
{
    DATM_ASSERT(dir && split && out);
    memset(out, 0, sizeof *out);
    char path[1024];
    int rc;
    if (strlen(dir) >= sizeof out->dir || strlen(split) >= sizeof out->split)
        return datm_error_set(err, DATM_E_INVALID, "data set path or split name too long: %s/%s",
                              dir, split);
    snprintf(out->dir, sizeof out->dir, "%s", dir);
    snprintf(out->split, sizeof out->split, "%s", split);

    snprintf(path, sizeof path, "%s/%s.docword.gz", dir, split);
    if (!file_exists(path)) snprintf(path, sizeof path, "%s/%s.docword", dir, split);
    if (file_exists(path)) {
        rc = datm_docword_read(path, &out->X, err);
    } else if (datm_shards_path(dir, split, path, sizeof path)) {
        /* A shard-only split (datm corpus synth, or a converted corpus whose docword was
         * removed) read whole, in shard order: what data.stream: false asks for. */
        rc = read_all_shards(path, &out->X, err);
    } else {
        if (!dir_exists(dir))
            return datm_error_set(err, DATM_E_IO, "%s: data set directory not found", dir);
        return datm_error_set(err, DATM_E_IO, "%s/%s.docword.gz: not found (nor %s.docword, "
                              "nor %s.shards)", dir, split, split, split);
    }
    if (rc) goto fail;

    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    if (file_exists(path)) {
        rc = datm_lines_read(path, out->X.n_cols, &out->vocab, &out->n_vocab, err);
        if (rc) {
            datm_error_prefix(err, "vocabulary must have W = %lld words (docword header): ",
                              (long long)out->X.n_cols);
            goto fail;
        }
        rc = check_unique(path, out->vocab, out->n_vocab, err);
        if (rc) goto fail;
    }
    snprintf(path, sizeof path, "%s/classes.txt", dir);
    if (file_exists(path)) {
        int64_t nc = 0;
        rc = datm_lines_read(path, 0, &out->class_names, &nc, err);
        if (rc) goto fail;
        if (nc > INT32_MAX) {
            rc = datm_error_set(err, DATM_E_FORMAT, "%s: too many classes", path);
            goto fail;
        }
        out->n_classes = (int)nc;
    }
    if (labels_path(dir, split, path, sizeof path)) {
        rc = datm_labels_read(path, out->X.n_rows, out->n_classes, &out->labels, err);
        if (rc) goto fail;
        if (out->n_classes == 0) {   /* no classes.txt: classes are 0..max label */
            int32_t mx = -1;
            for (int64_t i = 0; i < out->X.n_rows; i++) mx = DATM_MAX(mx, out->labels[i]);
            out->n_classes = mx + 1;
        }
    }
    return DATM_OK;
fail:
    datm_corpus_free(out);
    return rc;
}

void datm_corpus_free(datm_corpus *c)
{
    if (!c) return;
    datm_csr_free(&c->X);
    datm_free(c->labels);
    /* class_names may exist without labels (classes.txt only) */
    if (c->class_names) {
        int64_t n = c->n_classes;
        datm_lines_free(c->class_names, n);
    }
    datm_lines_free(c->vocab, c->n_vocab);
    memset(c, 0, sizeof *c);
}

int datm_dataset_resolve(const char *name, char *dir, size_t dir_size, datm_error *err)
{
    DATM_ASSERT(name && dir && dir_size > 0);
    char cand[3][1024];
    int n = 0;
    if (dir_exists(name)) {
        snprintf(cand[n++], sizeof cand[0], "%s", name);
    } else if (!strchr(name, '/') && name[0] && name[0] != '.') {
        const char *env = getenv("DATM_DATA");
        snprintf(cand[n++], sizeof cand[0], "%s/%s", (env && *env) ? env : "../shared/data", name);
        snprintf(cand[n++], sizeof cand[0], ".cache/data/%s", name);
        const char *src = getenv("DATM_SOURCE_DIR");   /* set by CTest */
        if (src && *src) snprintf(cand[n++], sizeof cand[0], "%s/.cache/data/%s", src, name);
    }
    for (int i = 0; i < n; i++) {
        if (!dir_exists(cand[i])) continue;
        if (strlen(cand[i]) >= dir_size)
            return datm_error_set(err, DATM_E_INVALID, "%s: path too long", cand[i]);
        snprintf(dir, dir_size, "%s", cand[i]);
        return DATM_OK;
    }
    if (n == 0)
        return datm_error_set(err, DATM_E_IO, "data set '%s': no such directory", name);
    return datm_error_set(err, DATM_E_IO,
                          "data set '%s' not found: looked in %s%s%s%s%s (set DATM_DATA, or run "
                          "ci/setup.sh for the built-in brown corpus)",
                          name, cand[0], n > 1 ? ", " : "", n > 1 ? cand[1] : "",
                          n > 2 ? ", " : "", n > 2 ? cand[2] : "");
}
