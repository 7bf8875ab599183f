/* engine/pipeline/run_data.c: the data of one run, loaded once
 * and split by the evaluation protocol (docs/reference.md 4.5):
 *   heldout-docs: train on train.docword; theta of each test document comes from its observed
 *                 part test_obs, its held-out part test_heldout is scored;
 *   token-split:  a seeded per-document split of every training document (obs_fraction
 *                 observed); train on the observed parts, score the held-out parts.
 * File hashes are kept for provenance. Letters: N documents, V words. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pipeline/run_internal.h"

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The data set under $DATM_DATA (or ../shared/data) whose name is closest to `name`, into
 * out ("" when none is close): the hint after a misspelt data.dataset. */
static void closest_dataset(const char *name, char *out, size_t size)
{
    out[0] = '\0';
    /* the places datm_dataset_resolve looks in, so that the built-in sets of .cache/data
     * (brown) are suggested on a machine without $DATM_DATA too */
    const char *env = getenv("DATM_DATA"), *src = getenv("DATM_SOURCE_DIR");
    char places[3][1024];
    snprintf(places[0], sizeof places[0], "%s", env && *env ? env : "../shared/data");
    snprintf(places[1], sizeof places[1], ".cache/data");
    snprintf(places[2], sizeof places[2], "%s/.cache/data", src && *src ? src : ".");
    enum { MAXN = 256 };
    char names[MAXN][128];
    const char *cand[MAXN];
    int n = 0;
    for (int p = 0; p < 3; p++) {
        DIR *d = opendir(places[p]);
        if (!d) continue;
        for (struct dirent *e; n < MAXN && (e = readdir(d)) != NULL;) {
            if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof names[0]) continue;
            snprintf(names[n], sizeof names[0], "%.*s", (int)sizeof names[0] - 1, e->d_name);
            cand[n] = names[n];
            n++;
        }
        closedir(d);
    }
    const char *near = datm_closest_name(name, cand, n);
    if (near) snprintf(out, size, "%s", near);
}

/* DIR/SPLIT.docword.gz or DIR/SPLIT.docword; 0 when neither exists. */
static int docword_path(const char *dir, const char *split, char *out, size_t size)
{
    snprintf(out, size, "%s/%s.docword.gz", dir, split);
    if (file_exists(out)) return 1;
    snprintf(out, size, "%s/%s.docword", dir, split);
    return file_exists(out);
}

static int hash_split(datm_run_data *d, const char *split, datm_error *err)
{
    char path[1200];
    if (d->n_files >= 4 || !docword_path(d->dir, split, path, sizeof path)) return DATM_OK;
    snprintf(d->file_name[d->n_files], sizeof d->file_name[0], "%s", strrchr(path, '/') + 1);
    int rc = datm_sha256_file(path, d->file_hash[d->n_files], err);
    if (!rc) d->n_files++;
    return rc;
}

/* out = the first n rows of src (n <= 0 or n >= rows: a copy of all). */
static int first_rows(const datm_csr *src, int64_t n, datm_csr *out, datm_error *err)
{
    if (n <= 0 || n >= src->n_rows) return datm_csr_copy(src, out, err);
    int64_t *rows = datm_alloc_array((size_t)n, sizeof *rows, err);
    if (!rows) return DATM_E_NOMEM;
    for (int64_t i = 0; i < n; i++) rows[i] = i;
    int rc = datm_csr_select_rows(src, rows, n, out, err);
    datm_free(rows);
    return rc;
}

static int load_split(const datm_run_data *d, const char *split, datm_corpus *c, int64_t V,
                      datm_error *err)
{
    char sp[1200];
    int rc;
    if (d->stream && datm_shards_path(d->dir, split, sp, sizeof sp)) {
        /* a streamed data set may keep its evaluation splits as shards too */
        datm_shardset set;
        memset(c, 0, sizeof *c);
        rc = datm_shardset_open(sp, &set, err);
        if (!rc) rc = datm_shardset_read_first(&set, 0, &c->X, err);
        datm_shardset_close(&set);
    } else {
        rc = datm_corpus_load(d->dir, split, c, err);
    }
    if (rc) return rc;
    if (c->X.n_cols != V)
        return datm_error_set(err, DATM_E_FORMAT, "%s/%s: %lld words, but train has %lld", d->dir,
                              split, (long long)c->X.n_cols, (long long)V);
    return DATM_OK;
}

/* The data set's own test documents split into observed and held-out parts (protocol
 * heldout-docs): their first n_eval documents are the evaluation documents, and the digests of
 * both docword files join the run's provenance. Streamed and in-memory runs share it. */
static int load_heldout_docs(datm_run_data *d, int64_t V, int64_t n_eval, datm_error *err)
{
    datm_corpus obs = {0}, held = {0};
    int rc = load_split(d, "test_obs", &obs, V, err);
    if (!rc) rc = load_split(d, "test_heldout", &held, V, err);
    if (!rc && obs.X.n_rows != held.X.n_rows)
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: test_obs has %lld documents, "
                            "test_heldout %lld", d->dir, (long long)obs.X.n_rows,
                            (long long)held.X.n_rows);
    if (!rc) rc = first_rows(&obs.X, n_eval, &d->eval_obs, err);
    if (!rc) rc = first_rows(&held.X, n_eval, &d->eval_held, err);
    if (!rc) rc = hash_split(d, "test_obs", err);
    if (!rc) rc = hash_split(d, "test_heldout", err);
    datm_corpus_free(&obs);
    datm_corpus_free(&held);
    return rc;
}

static int split_exists(const datm_run_data *d, const char *split)
{
    char p[1200];
    return docword_path(d->dir, split, p, sizeof p) || datm_shards_path(d->dir, split, p, sizeof p);
}

/* data.stream: the training documents stay on disk (DIR/train.shards) and are read a shard at
 * a time by the training loop (data/stream.h); what is loaded here is the vocabulary and the
 * evaluation documents, the same ones as in memory: under token-split the first eval_docs
 * training documents, split with the same per-document streams. Labels are not streamed: the
 * classification metric needs every training document's features in memory. */
static int stream_load(const datm_spec *spec, datm_run_data *d, datm_error *err)
{
    const datm_data_params *dc = &spec->p.data;
    const datm_train_params *tc = &spec->p.train;
    char sp[1200], path[1300];
    d->stream = 1;
    if (!datm_shards_path(d->dir, "train", sp, sizeof sp))
        return datm_error_set(err, DATM_E_IO, "data.stream: %s has no train.shards (make it with "
                              "datm corpus convert %s)", d->dir, d->dir);
    int rc = datm_shardset_open(sp, &d->shards, err);
    if (rc) return rc;
    const int64_t V = d->shards.n_cols;
    if (dc->train_docs > 0 && dc->train_docs < d->shards.n_docs)
        return datm_error_set(err, DATM_E_UNSUPPORTED, "data.train_docs %lld: not with data.stream "
                              "(a streamed run trains on every document of %s)",
                              (long long)dc->train_docs, sp);
    snprintf(d->train.dir, sizeof d->train.dir, "%.511s", d->dir);
    snprintf(d->train.split, sizeof d->train.split, "train");
    snprintf(path, sizeof path, "%s/vocab.txt", d->dir);
    if (file_exists(path)) {
        rc = datm_lines_read(path, V, &d->train.vocab, &d->train.n_vocab, err);
        if (rc) {
            datm_error_prefix(err, "vocabulary must have V = %lld words (%s/index.bin): ",
                              (long long)V, sp);
            return rc;
        }
    }
    snprintf(d->file_name[0], sizeof d->file_name[0], "train.shards/index.bin");
    snprintf(path, sizeof path, "%s/index.bin", sp);
    rc = datm_sha256_file(path, d->file_hash[0], err);
    if (rc) return rc;
    d->n_files = 1;
    d->n_train = d->shards.n_docs;
    d->n_vocab = V;

    const int has_heldout = split_exists(d, "test_obs") && split_exists(d, "test_heldout");
    const char *proto = dc->protocol;
    if (!strcmp(proto, "auto")) proto = has_heldout ? "heldout-docs" : "token-split";
    snprintf(d->protocol, sizeof d->protocol, "%s", proto);
    if (!strcmp(proto, "heldout-docs")) {
        if (!has_heldout)
            return datm_error_set(err, DATM_E_INVALID, "data.protocol heldout-docs: %s has no "
                                  "test_obs/test_heldout (use token-split)", d->dir);
        rc = load_heldout_docs(d, V, dc->eval_docs, err);
    } else {
        datm_csr first = {0}, obs = {0}, held = {0};
        rc = datm_shardset_read_first(&d->shards, dc->eval_docs, &first, err);
        if (!rc) rc = datm_token_split(&first, dc->obs_fraction, (uint64_t)spec->p.run.seed,
                                       &obs, &held, err);
        if (!rc) { d->eval_obs = obs; d->eval_held = held; }
        else { datm_csr_free(&obs); datm_csr_free(&held); }
        datm_csr_free(&first);
    }
    if (!rc) rc = first_rows(&d->eval_obs, tc->eval_docs, &d->curve_obs, err);
    if (!rc) rc = first_rows(&d->eval_held, tc->eval_docs, &d->curve_held, err);
    return rc;
}

int datm_run_data_load(const datm_spec *spec, datm_run_data *d, datm_error *err)
{
    memset(d, 0, sizeof *d);
    const datm_data_params *dc = &spec->p.data;
    const datm_train_params *tc = &spec->p.train;
    const char *name = dc->dataset;
    if (!name[0]) {
        datm_error_set(err, DATM_E_INVALID, "data.dataset is empty: name a data set under "
                       "$DATM_DATA (e.g. 20news_2000) or a directory");
        datm_spec_locate_error(spec, err);   /* file:line:col of the key */
        return err->code;
    }
    int rc = datm_dataset_resolve(name, d->dir, sizeof d->dir, err);
    if (rc) {
        char near[128];
        closest_dataset(name, near, sizeof near);
        if (near[0]) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            datm_error_set(err, rc, "%s (did you mean '%s'?)", msg, near);
        }
        datm_error_prefix(err, "data.dataset: ");
        datm_spec_locate_error(spec, err);
        return rc;
    }
    if (dc->stream) {
        rc = stream_load(spec, d, err);
        if (rc) datm_run_data_free(d);
        return rc;
    }
    rc = datm_corpus_load(d->dir, "train", &d->train, err);
    if (rc) return rc;
    const int64_t V = d->train.X.n_cols;

    char p1[1200], p2[1200];
    int has_heldout = docword_path(d->dir, "test_obs", p1, sizeof p1) &&
                      docword_path(d->dir, "test_heldout", p2, sizeof p2);
    const char *proto = dc->protocol;
    if (!strcmp(proto, "auto")) proto = has_heldout ? "heldout-docs" : "token-split";
    snprintf(d->protocol, sizeof d->protocol, "%s", proto);
    if (!strcmp(proto, "heldout-docs") && !has_heldout)
        return datm_error_set(err, DATM_E_INVALID, "data.protocol heldout-docs: %s has no "
                              "test_obs/test_heldout docword files (use token-split)", d->dir);
    /* the observed share of a document is the data set's own under heldout-docs */
    const datm_param_schema *of = &datm_data_params_schema[DATM_DATA_ROW_obs_fraction];
    if (!strcmp(proto, "heldout-docs") && dc->obs_fraction != strtod(of->def, NULL))
        return datm_error_set(err, DATM_E_INVALID, "data.%s %g: not used under the heldout-docs "
                              "protocol (%s ships its test documents split into observed and "
                              "held-out parts); remove it or set data.protocol: token-split",
                              of->key, dc->obs_fraction, d->dir);

    const int64_t n_train = dc->train_docs;
    const int64_t n_eval = dc->eval_docs;
    /* train_all: the training documents, taken over from the loaded corpus when they are all
     * of it (no copy); the corpus's own matrix is not read after this, so it is not kept
     * beside them for the whole run */
    datm_csr train_all = {0};
    if (n_train <= 0 || n_train >= d->train.X.n_rows) {
        train_all = d->train.X;
        memset(&d->train.X, 0, sizeof d->train.X);
    } else {
        rc = first_rows(&d->train.X, n_train, &train_all, err);
        datm_csr_free(&d->train.X);
        if (rc) return rc;
    }
    d->train_labels = d->train.labels;
    rc = hash_split(d, "train", err);

    if (!rc && !strcmp(proto, "heldout-docs")) {
        rc = load_heldout_docs(d, V, n_eval, err);
        if (!rc) { d->train_X = train_all; memset(&train_all, 0, sizeof train_all); }
    } else if (!rc) {
        /* token-split of the training documents (docs/reference.md 4.5): the split's seed is
         * the run's; held-out parts are made for the evaluation documents only (the first
         * n_eval, or all when n_eval <= 0), the only ones scored */
        datm_csr obs = {0}, held = {0};
        uint64_t seed = (uint64_t)spec->p.run.seed;
        rc = datm_token_split_held_first(&train_all, dc->obs_fraction, seed,
                                         n_eval > 0 ? n_eval : -1, &obs, &held, err);
        if (!rc) rc = first_rows(&obs, n_eval, &d->eval_obs, err);
        if (!rc) rc = first_rows(&held, n_eval, &d->eval_held, err);
        if (!rc) { d->train_X = obs; memset(&obs, 0, sizeof obs); }
        datm_csr_free(&obs);
        datm_csr_free(&held);
    }
    datm_csr_free(&train_all);
    if (!rc) rc = first_rows(&d->eval_obs, tc->eval_docs, &d->curve_obs, err);
    if (!rc) rc = first_rows(&d->eval_held, tc->eval_docs, &d->curve_held, err);
    d->n_train = d->train_X.n_rows;
    d->n_vocab = d->train_X.n_cols;

    /* full test documents with labels, for the classification metric */
    char lp[1200];
    snprintf(lp, sizeof lp, "%s/test.labels", d->dir);
    if (!rc && file_exists(lp) && docword_path(d->dir, "test", p1, sizeof p1) &&
        spec->p.evaluate.classify) {
        rc = load_split(d, "test", &d->test, V, err);
        /* a test class the training set does not have cannot be predicted, and the error rate
         * would count it only at the end of the run: refused before training */
        for (int64_t i = 0; !rc && d->test.labels && i < d->test.X.n_rows; i++)
            if (d->train.n_classes > 0 && d->test.labels[i] >= d->train.n_classes)
                rc = datm_error_set(err, DATM_E_FORMAT, "%s/test.labels:%lld: class %d, but the "
                                    "training labels have %d classes (0..%d)", d->dir,
                                    (long long)i + 1, (int)d->test.labels[i], d->train.n_classes,
                                    d->train.n_classes - 1);
        if (!rc) d->have_test = 1;
        if (!rc) rc = hash_split(d, "test", err);
    }
    if (rc) datm_run_data_free(d);
    return rc;
}

void datm_run_data_free(datm_run_data *d)
{
    datm_shardset_close(&d->shards);
    datm_corpus_free(&d->train);
    datm_corpus_free(&d->test);
    datm_csr_free(&d->train_X);
    datm_csr_free(&d->eval_obs);
    datm_csr_free(&d->eval_held);
    datm_csr_free(&d->curve_obs);
    datm_csr_free(&d->curve_held);
    memset(d, 0, sizeof *d);
}
