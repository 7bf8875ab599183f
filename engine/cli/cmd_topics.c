/* engine/cli/cmd_topics.c: `datm topics RUN [--layer l] [--top n] [--links m]`: the
 * projected topics of each layer (paper eq. Phi_notation) with their top words, NPMI and
 * diversity per layer, and the strongest links between layers as an indented tree. Reads
 * /topics of the result; when a result has a model but no /topics, computes them (NPMI
 * then needs the training corpus: --data DIR, or the dataset named in /data). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "data/data.h"
#include "io/results.h"
#include "io/results_layout.h"

int datm_cmd_topics(int argc, char **argv);

static void usage(FILE *f)
{
    fprintf(f,
        "usage: datm topics RUN [--layer l] [--top n] [--links m] [--no-tree] [--recompute]\n"
        "                       [--data DIR]\n\n"
        "Prints the topics of each layer projected to the vocabulary (Phi(1)...Phi(l)) with\n"
        "their top words, the NPMI coherence (top 10 words, document co-occurrence in the\n"
        "training corpus) and topic diversity (unique share of the top 25 words) per layer,\n"
        "and the strongest links between layers as an indented tree.\n\n"
        "  --layer l     only layer l (1 = closest to the words); the tree starts there\n"
        "  --top n       words per topic (default 10)\n"
        "  --links m     children per topic in the tree (default 3)\n"
        "  --no-tree     topics only\n"
        "  --recompute   recompute from /model/phi_<l> instead of reading /topics\n"
        "  --data DIR    training corpus for NPMI when recomputing (default: /data of the run)\n");
}

typedef struct view {
    const datm_topic_set *ts;
    char   **vocab;
    int64_t  n_vocab;
    int      top, links;
} view;

static void print_words(const view *v, const datm_topic_layer *t, int64_t k)
{
    const int n = DATM_MIN(v->top, t->top_n);
    for (int j = 0; j < n; j++) {
        int32_t w = t->top_ids[k * t->top_n + j];
        if (v->vocab && w >= 0 && w < v->n_vocab) printf(" %s", v->vocab[w]);
        else printf(" w%d", w);
    }
}

static void print_tree(const view *v, int layer, int64_t k, int depth, double weight)
{
    const datm_topic_layer *t = &v->ts->layer[layer - 1];
    printf("%*s", 2 * depth, "");
    printf("L%d.t%lld", layer, (long long)k);
    if (depth) printf(" (%.3f)", weight);
    printf(":");
    print_words(v, t, k);
    printf("\n");
    if (layer == 1 || t->link_n == 0) return;
    const int m = DATM_MIN(v->links, t->link_n);
    for (int j = 0; j < m; j++)
        print_tree(v, layer - 1, t->link_ids[k * t->link_n + j], depth + 1,
                   t->link_weights[k * t->link_n + j]);
}

int datm_cmd_topics(int argc, char **argv)
{
    const char *run = NULL, *data_dir = NULL;
    int layer = 0, top = 10, links = 3, tree = 1, recompute = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { usage(stdout); return DATM_EXIT_OK; }
        else if (!strcmp(argv[i], "--layer") && i + 1 < argc) layer = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--top") && i + 1 < argc) top = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--links") && i + 1 < argc) links = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--data") && i + 1 < argc) data_dir = argv[++i];
        else if (!strcmp(argv[i], "--no-tree")) tree = 0;
        else if (!strcmp(argv[i], "--recompute")) recompute = 1;
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "datm topics: unknown option or missing value '%s'\n", argv[i]);
            usage(stderr);
            return DATM_EXIT_USAGE;
        } else if (!run) run = argv[i];
        else { fprintf(stderr, "datm topics: one run only\n"); return DATM_EXIT_USAGE; }
    }
    if (!run) { usage(stderr); return DATM_EXIT_USAGE; }
    if (top < 1 || links < 0 || layer < 0) {
        fprintf(stderr, "datm topics: --top must be >= 1, --links >= 0, --layer >= 1\n");
        return DATM_EXIT_USAGE;
    }
    datm_error err = {0};
    datm_h5 *f = NULL;
    if (datm_result_open(run, 0, &f, &err)) {
        fprintf(stderr, "datm topics: %s\n", err.msg);
        return DATM_EXIT_FAIL;
    }
    datm_topic_set ts;
    int rc;
    if (!recompute && datm_h5_is_group(f, DATM_GRP_TOPICS) == 1) {
        rc = datm_topics_read(f, &ts, &err);
    } else {
        datm_corpus corpus;
        memset(&corpus, 0, sizeof corpus);
        const datm_csr *ref = NULL;
        if (data_dir) {
            if (datm_corpus_load(data_dir, "train", &corpus, &err)) {
                fprintf(stderr, "datm topics: %s\n", err.msg);
                datm_h5_close(&f);
                return DATM_EXIT_FAIL;
            }
            ref = &corpus.X;
        }
        rc = datm_topics_compute(f, ref, &ts, &err);
        if (ref) datm_corpus_free(&corpus);
    }
    if (rc) {
        fprintf(stderr, "datm topics: %s\n", err.msg);
        datm_h5_close(&f);
        return DATM_EXIT_FAIL;
    }
    view v = {.ts = &ts, .top = top, .links = links};
    if (datm_result_vocab(f, &v.vocab, &v.n_vocab, &err))
        fprintf(stderr, "datm topics: warning: %s (showing word ids)\n", err.msg);
    datm_h5_close(&f);
    if (layer > ts.n_layers) {
        fprintf(stderr, "datm topics: --layer %d but the model has %d layer(s)\n", layer,
                ts.n_layers);
        datm_topic_set_free(&ts);
        datm_h5_strings_free(v.vocab, v.n_vocab);
        return DATM_EXIT_USAGE;
    }
    if (top > ts.layer[0].top_n)
        fprintf(stderr, "datm topics: %d words stored per topic; showing those\n", ts.layer[0].top_n);

    printf("# topics of %s (%d layer(s), vocabulary %lld)\n", run, ts.n_layers,
           (long long)ts.n_vocab);
    printf("# NPMI: top 10 words, document co-occurrence in the training corpus; "
           "diversity: unique share of the top 25 words\n\n");
    for (int l = 1; l <= ts.n_layers; l++) {
        const datm_topic_layer *t = &ts.layer[l - 1];
        if (layer && l != layer) continue;
        printf("## layer %d: %lld topics, NPMI ", l, (long long)t->k);
        if (isnan(t->npmi_mean)) printf("n/a (no reference corpus)");
        else printf("%.4f", t->npmi_mean);
        printf(", diversity %.4f\n", t->diversity);
        for (int64_t k = 0; k < t->k; k++) {
            printf("t%-4lld", (long long)k);
            if (t->npmi) printf(" [npmi %+.3f]", t->npmi[k]);
            printf(" %.3f:", t->top_weights[k * t->top_n]);
            print_words(&v, t, k);
            printf("\n");
        }
        printf("\n");
    }
    const int root = layer ? layer : ts.n_layers;
    if (tree && root >= 2 && links > 0) {
        printf("## links from layer %d down (each child with its Phi(l) weight)\n", root);
        for (int64_t k = 0; k < ts.layer[root - 1].k; k++) print_tree(&v, root, k, 0, 1.0);
    }
    datm_topic_set_free(&ts);
    datm_h5_strings_free(v.vocab, v.n_vocab);
    return DATM_EXIT_OK;
}
