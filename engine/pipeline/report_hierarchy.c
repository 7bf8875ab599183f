/* engine/pipeline/report_hierarchy.c: the "hierarchy" figure of a pipeline report
 * (report.h): the topic hierarchy of one run as text (paper sec. IV-A, "Topic hierarchy"):
 * the most used topics of the top layer, each with its top words (the topic projected to
 * words through Phi(1) ... Phi(l), paper eq. Phi_notation), and under each its strongest
 * children of the layer below by Phi(l) weight, down to layer 1. Read from the run's /topics
 * and /data/vocab; written to figures/ID.md and shown in REPORT.md. */
#include <stdlib.h>
#include <string.h>

#include "eval/topic_diag.h"
#include "io/h5.h"
#include "io/results_layout.h"
#include "pipeline/report_internal.h"

typedef struct tree_ctx {
    FILE *f;
    const datm_topic_set *ts;
    char **vocab;
    int64_t n_vocab;
    int words, links;
} tree_ctx;

static void tree(const tree_ctx *t, int layer, int64_t k, int depth, double weight)
{
    const datm_topic_layer *y = &t->ts->layer[layer - 1];
    fprintf(t->f, "%*sL%d.t%lld", 2 * depth, "", layer, (long long)k);
    if (depth) fprintf(t->f, " (%.3f)", weight);
    if (!datm_topic_live(y, k)) fputs(" [unused]", t->f);
    fputc(':', t->f);
    for (int j = 0; j < t->words && j < y->top_n; j++) {
        const int32_t w = y->top_ids[k * y->top_n + j];
        if (w >= 0 && w < t->n_vocab) fprintf(t->f, " %s", t->vocab[w]);
        else fprintf(t->f, " w%d", w);
    }
    fputc('\n', t->f);
    if (layer == 1 || y->link_n == 0) return;
    for (int j = 0; j < t->links && j < y->link_n; j++)
        tree(t, layer - 1, y->link_ids[k * y->link_n + j], depth + 1,
             y->link_weights[k * y->link_n + j]);
}

/* Topics of layer y by usage (descending, ties by index), or by index when unknown. */
static const datm_topic_layer *order_layer;
static int by_usage(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, z = *(const int64_t *)b;
    if (order_layer->usage && order_layer->usage[x] != order_layer->usage[z])
        return order_layer->usage[x] > order_layer->usage[z] ? -1 : 1;
    return (x > z) - (x < z);
}

int rep_hierarchy(const rep_ctx *c, const datm_pipe_figure *f, FILE *md,
                  int *made, datm_error *err)
{
    *made = 0;
    const int i = rep_figure_first_run(c, f, md);
    if (i < 0) return DATM_OK;
    datm_h5 *h = NULL;
    datm_error e = {0};
    datm_topic_set ts;
    memset(&ts, 0, sizeof ts);
    char **vocab = NULL;
    int64_t n_vocab = 0;
    int rc = datm_result_open(rep_source(c, i), 0, &h, &e);
    if (!rc) rc = datm_topics_read(h, &ts, &e);
    if (!rc) rc = datm_h5_read_strings(h, "/" DATM_GRP_DATA "/" DATM_DATA_VOCAB, &vocab, &n_vocab, &e);
    datm_h5_close(&h);
    if (rc) {
        fprintf(md, "No figure yet: run %s has no topics to show (see the warning of "
                    "`datm pipeline report`).\n", c->runs[i].run->id);
        datm_warn("figure %s: run %s: %s", f->id, c->runs[i].run->id, e.msg);
        datm_topic_set_free(&ts);
        datm_h5_strings_free(vocab, n_vocab);
        return DATM_OK;
    }
    /* figures/ID.md written whole, like the report's other files: a reader never sees half
     * of it, and a failed write leaves the earlier one */
    char rel[200];
    snprintf(rel, sizeof rel, "figures/%s.md", f->id);
    FILE *out = rep_open(c, rel, err);
    if (!out) rc = err->code ? err->code : DATM_E_IO;
    const int L = ts.n_layers;
    const datm_topic_layer *top = &ts.layer[L - 1];
    int64_t *ord = rc ? NULL : malloc((size_t)top->k * sizeof *ord);
    if (!rc && !ord) rc = datm_error_set(err, DATM_E_NOMEM, "out of memory");
    if (!rc) {
        for (int64_t k = 0; k < top->k; k++) ord[k] = k;
        order_layer = top;
        qsort(ord, (size_t)top->k, sizeof *ord, by_usage);
        tree_ctx t = {out, &ts, vocab, n_vocab, f->words, f->links};
        fprintf(out, "# %s\n\nrun %s: the %d most used topics of layer %d and their %d strongest "
                "children per layer (Phi weight in brackets), %d words each\n\n```\n", f->title,
                c->runs[i].run->id, (int)(f->top < top->k ? f->top : top->k), L, f->links,
                f->words);
        for (int64_t j = 0; j < top->k && j < f->top; j++) tree(&t, L, ord[j], 0, 1.0);
        fputs("```\n", out);
        fputs("```\n", md);   /* the same tree in REPORT.md */
        t.f = md;
        for (int64_t j = 0; j < top->k && j < f->top; j++) tree(&t, L, ord[j], 0, 1.0);
        fputs("```\n\n", md);
    }
    free(ord);
    if (out && !rc) {
        rc = rep_close(c, out, rel, err);
    } else if (out) {
        char tmp[1400];
        fclose(out);
        snprintf(tmp, sizeof tmp, "%s/%s.tmp", c->out, rel);
        remove(tmp);
    }
    *made = !rc;
    if (!rc)
        fprintf(md, "Run %s: the %d most used topics of layer %d, each with its %d strongest "
                    "children per layer (Phi weight in brackets); also in "
                    "[figures/%s.md](figures/%s.md).\n",
                c->runs[i].run->id, (int)(f->top < top->k ? f->top : top->k), L, f->links, f->id,
                f->id);
    datm_topic_set_free(&ts);
    datm_h5_strings_free(vocab, n_vocab);
    return rc;
}
