/* engine/io/topics_stage.c: the pipeline's topics stage (results.h): projected topics of
 * every layer from /model/phi_<l>, the coherence measures of the spec's evaluate.coherence
 * against its reference corpus (by default the training documents of the run's dataset),
 * diversity and the per-topic diagnostics (with the run's /usage), all written back into
 * result.h5. Kept apart from results.c because it is the io code that loads corpora. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/corpus_build.h"
#include "data/data.h"
#include "io/results.h"
#include "io/results_layout.h"
#include "io/yaml_flat.h"

/* The training-documents directory named in /data (the `dir` attribute, else `dataset`). */
static int data_dir(datm_h5 *f, char *dir, size_t size, datm_error *err)
{
    dir[0] = '\0';
    if (datm_h5_is_group(f, DATM_GRP_DATA) != 1)
        return datm_error_set(err, DATM_E_IO, "%s: no /%s group naming the dataset",
                              datm_h5_where(f), DATM_GRP_DATA);
    datm_h5 *g = NULL;
    int rc = datm_h5_group(f, DATM_GRP_DATA, 0, &g, err);
    if (rc) return rc;
    char name[512] = "";
    if (datm_h5_attr_exists(g, DATM_DATA_ATTR_DIR))
        datm_h5_attr_get_str(g, DATM_DATA_ATTR_DIR, dir, size, err);
    if (datm_h5_attr_exists(g, DATM_DATA_ATTR_NAME))
        datm_h5_attr_get_str(g, DATM_DATA_ATTR_NAME, name, sizeof name, err);
    datm_h5_close(&g);
    if (!dir[0] && name[0]) return datm_dataset_resolve(name, dir, size, err);
    if (!dir[0])
        return datm_error_set(err, DATM_E_IO, "%s: /%s names no dataset", datm_h5_where(f),
                              DATM_GRP_DATA);
    return DATM_OK;
}

static int is_corpus_dir(const char *path)
{
    char p[1200];
    struct stat st;
    snprintf(p, sizeof p, "%s/train.docword.gz", path);
    if (stat(p, &st) == 0) return 1;
    snprintf(p, sizeof p, "%s/train.docword", path);
    return stat(p, &st) == 0;
}

int datm_topics_reference_load(datm_h5 *f, const char *path, datm_topics_ref *r,
                               datm_error *err)
{
    memset(r, 0, sizeof *r);
    char dir[1024];
    int rc = DATM_OK;
    if (!path || !path[0]) {
        rc = data_dir(f, dir, sizeof dir, err);
        if (!rc) rc = datm_corpus_load(dir, "train", &r->corpus, err);
        if (!rc) {
            r->have_corpus = 1;
            r->ref.X = &r->corpus.X;
            snprintf(r->name, sizeof r->name, "training documents of %s", dir);
        }
        return rc;
    }
    if (is_corpus_dir(path)) {
        rc = datm_corpus_load(path, "train", &r->corpus, err);
        if (!rc) {
            r->have_corpus = 1;
            r->ref.X = &r->corpus.X;
            snprintf(r->name, sizeof r->name, "documents of %s", path);
        }
        return rc;
    }
    char **vocab = NULL;
    int64_t V = 0;
    rc = datm_result_vocab(f, &vocab, &V, err);
    if (!rc && !vocab)
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: no vocabulary (/data/vocab) to read the "
                            "reference text %s with", datm_h5_where(f), path);
    if (!rc) rc = datm_tokdocs_read_text(path, vocab, V, &r->tokens, err);
    datm_h5_strings_free(vocab, V);
    if (!rc) {
        r->ref.T = &r->tokens;
        snprintf(r->name, sizeof r->name, "text %s", path);
    }
    return rc;
}

int datm_topics_reference_check(const char *path, int64_t window, datm_error *err)
{
    struct stat st;
    if (path && path[0] && stat(path, &st) != 0)
        return datm_error_set(err, DATM_E_IO, "evaluate.coherence.reference: %s: no such file or "
                              "directory", path);
    if (window > 0 && (!path || !path[0] || is_corpus_dir(path)))
        return datm_error_set(err, DATM_E_INVALID, "evaluate.coherence.window %lld needs the "
                              "order of the tokens: give evaluate.coherence.reference a raw text "
                              "(a file, one document per line, or a directory of text files); a "
                              "data set holds counts only", (long long)window);
    return DATM_OK;
}

void datm_topics_reference_free(datm_topics_ref *r)
{
    if (r->have_corpus) datm_corpus_free(&r->corpus);
    datm_tokdocs_free(&r->tokens);
    memset(r, 0, sizeof *r);
}

/* evaluate.coherence.* of the run's resolved spec (defaults when absent: older results). */
static int spec_options(datm_h5 *f, datm_topics_opts *o, char *reference, size_t size,
                        datm_error *err)
{
    datm_topics_opts_default(o);
    reference[0] = '\0';
    char *spec = NULL;
    if (!datm_h5_attr_exists(f, DATM_ATTR_SPEC)) return DATM_OK;
    int rc = datm_h5_attr_get_str_alloc(f, DATM_ATTR_SPEC, &spec, err);
    datm_flat fl = {0};
    if (!rc) rc = datm_yaml_flatten(spec, "spec", &fl, err);
    datm_free(spec);
    if (rc) return rc;
    const char *v;
    if ((v = datm_flat_get(&fl, "evaluate.coherence.measures")))
        rc = datm_coh_parse_list(v, &o->coh.measures, err);
    if (!rc && (v = datm_flat_get(&fl, "evaluate.coherence.top_n"))) o->coh.top_n = atoi(v);
    if (!rc && (v = datm_flat_get(&fl, "evaluate.coherence.window"))) o->coh.window = atoll(v);
    if (!rc && (v = datm_flat_get(&fl, "evaluate.coherence.reference")))
        snprintf(reference, size, "%s", v);
    datm_flat_free(&fl);
    return rc;
}

int datm_topics_stage(const char *run_dir, const char *result_path, datm_error *err)
{
    (void)run_dir;
    datm_h5 *f = NULL;
    int rc = datm_h5_open(result_path, 1, &f, err);
    if (rc) return rc;
    datm_topics_opts o;
    char reference[1024];
    rc = spec_options(f, &o, reference, sizeof reference, err);
    if (rc) { datm_h5_close(&f); return rc; }
    datm_topics_ref r;
    datm_error e2 = {0};
    const int have_ref = datm_topics_reference_load(f, reference, &r, &e2) == DATM_OK;
    if (!have_ref) {
        if (reference[0]) {   /* the user asked for this reference: an error, not a warning */
            datm_h5_close(&f);
            return datm_error_set(err, e2.code, "evaluate.coherence.reference: %s", e2.msg);
        }
        datm_warn("topics: no coherence (reference corpus not loaded: %s)", e2.msg);
    }
    datm_topic_set ts;
    rc = datm_topics_compute_with(f, have_ref ? &r.ref : NULL, r.name, &o, &ts, err);
    if (!rc) {
        rc = datm_topics_write(f, &ts, err);
        for (int l = 1; !rc && l <= ts.n_layers; l++) {
            const datm_topic_layer *t = &ts.layer[l - 1];
            char unused[64] = "usage unknown";
            if (t->usage) snprintf(unused, sizeof unused, "%lld unused", (long long)t->n_unused);
            datm_info("topics: layer %d: %lld topics, %s, NPMI %.4f (live %.4f), diversity %.4f",
                      l, (long long)t->k, unused, t->score_mean[0], t->score_live[0],
                      t->diversity);
        }
        datm_topic_set_free(&ts);
    }
    if (have_ref) datm_topics_reference_free(&r);
    datm_h5_close(&f);
    return rc;
}
