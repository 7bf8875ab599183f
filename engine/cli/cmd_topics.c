/* engine/cli/cmd_topics.c: `datm topics RUN`: the projected topics of each layer (paper eq.
 * Phi_notation) with their top words and per-topic diagnostics (usage, coherence, distance
 * from the corpus, nearest topic, children), listed by usage with the unused ones hidden
 * unless --all; per layer the coherence over live topics, the unused count and diversity; and
 * the strongest links between layers as an indented tree. Reads /topics of the result; with
 * --recompute (or a result without /topics) computes them from /model/phi_<l>, against the
 * run's training documents or --reference.
 *
 * Not built on the public API (include/datm.h), by design: what this command prints is the
 * run's evaluation, not its model. The diagnostics come whole from the evaluation module
 * (eval/topic_diag.h: the topic set read from /topics or recomputed with a coherence
 * reference corpus, re-flagged with --unused-share) and the vocabulary from the result
 * readers (io/results.h); this file only parses arguments and formats. It also reads a bare
 * result file or one without a run directory, which datm_open refuses. The API gives a
 * program the topics themselves (datm_top_words, datm_topic_words) without this machinery. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "eval/topic_diag.h"
#include "io/results.h"
#include "io/results_layout.h"

int datm_cmd_topics(int argc, char **argv);

static void usage(FILE *f)
{
    fprintf(f,
        "usage: datm topics RUN [--layer l] [--top n] [--links m] [--all] [--by-index]\n"
        "                       [--no-tree] [--unused-share f] [--dup-cos c] [--format F]\n"
        "                       [--recompute [--reference PATH] [--measures LIST]\n"
        "                                    [--coherence-top n] [--window w]]\n\n"
        "Prints the topics of each layer projected to the vocabulary (Phi(1)...Phi(l)), most\n"
        "used first, each with its diagnostics:\n"
        "  use    share of the training tokens the topic explains (a token of document n is\n"
        "         split over the layer's topics in proportion to [Phi(1..l)]_vk theta_kn)\n"
        "  npmi, uci, umass, cv   coherence of its top words (the run's evaluate.coherence\n"
        "         settings, printed in the header)\n"
        "  kl     KL divergence of the topic from the corpus word frequencies (nats; small =\n"
        "         it repeats the corpus's common words)\n"
        "  then its top words with the probability of the first; a second line names a\n"
        "  near-duplicate (the layer's most similar topic when their cosine >= --dup-cos)\n"
        "  and, for layers >= 2, the children in layer l-1 with their Phi(l) weights.\n"
        "A topic is unused when its share is below f / K_l (--unused-share, default %g:\n"
        "a tenth of an equal share); unused topics are hidden and counted unless --all.\n"
        "Each layer's header gives the coherence over its live topics and over all of them,\n"
        "the unused count and the diversity (unique share of the top 25 words); the tree\n"
        "at the end follows the strongest links from the top layer down.\n\n"
        "  --layer l          only layer l (1 = closest to the words); the tree starts there\n"
        "  --top n            words per topic (default 10)\n"
        "  --links m          children per topic (default 3)\n"
        "  --all              also list unused topics\n"
        "  --by-index         list topics in index order instead of by usage\n"
        "  --no-tree          topics only\n"
        "  --format F         text (default), csv or json: every topic of the chosen layers\n"
        "                     in index order, unused ones flagged, for other programs. csv:\n"
        "                     one row per topic and word: layer, topic, use, unused, the\n"
        "                     coherence measures, kl, rank, word, weight. json: {\"run\",\n"
        "                     \"layers\": [{\"layer\", \"topics\": [{\"topic\", \"use\",\n"
        "                     \"unused\", measures, \"kl\", \"words\": [{\"word\",\n"
        "                     \"weight\"}], \"children\": [{\"topic\", \"weight\"}]}]}]}\n"
        "  --unused-share f   re-flag with this factor (default: the one stored, %g)\n"
        "  --dup-cos c        near-duplicate threshold (default: the one stored, %g)\n"
        "  --recompute        recompute from /model/phi_<l> instead of reading /topics\n"
        "  --reference PATH   with --recompute: coherence reference (default: the run's\n"
        "                     training documents; a data set directory or a raw text source)\n"
        "  --data DIR         the same as --reference DIR\n"
        "  --measures LIST    with --recompute: e.g. npmi,cv or all (default all)\n"
        "  --coherence-top n  with --recompute: words per topic scored (default 10)\n"
        "  --window w         with --recompute: 0 = documents, w = sliding windows (needs a\n"
        "                     text reference)\n",
        DATM_UNUSED_SHARE, DATM_UNUSED_SHARE, DATM_DUP_COSINE);
}

typedef struct view {
    const datm_topic_set *ts;
    char   **vocab;
    int64_t  n_vocab;
    int      top, links, all, by_index;
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
    if (!datm_topic_live(t, k)) printf(" [unused]");
    printf(":");
    print_words(v, t, k);
    printf("\n");
    if (layer == 1 || t->link_n == 0) return;
    const int m = DATM_MIN(v->links, t->link_n);
    for (int j = 0; j < m; j++)
        print_tree(v, layer - 1, t->link_ids[k * t->link_n + j], depth + 1,
                   t->link_weights[k * t->link_n + j]);
}

/* Topic order of a layer: by usage (descending, ties by index) unless by_index or unknown. */
static const datm_topic_layer *sort_layer;
static int by_usage(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    const double ux = sort_layer->usage[x], uy = sort_layer->usage[y];
    if (ux != uy) return ux > uy ? -1 : 1;
    return (x > y) - (x < y);
}

static void print_measures(const datm_topic_set *ts, const datm_topic_layer *t, const double *v,
                           int64_t k)
{
    for (int m = 0; m < DATM_COH_COUNT_; m++) {
        if (!t->score[m]) continue;
        const double x = v ? v[m] : t->score[m][k];
        if (isnan(x)) printf(" %s n/a", datm_coh_name(m));
        else printf(" %s %+.3f", datm_coh_name(m), x);
    }
    (void)ts;
}

static void print_header(const datm_topic_set *ts, const char *run)
{
    printf("# topics of %s (%d layer(s), vocabulary %lld)\n", run, ts->n_layers,
           (long long)ts->n_vocab);
    if (ts->measures) {
        printf("# coherence:");
        for (int m = 0; m < DATM_COH_COUNT_; m++)
            if (ts->measures & (1u << m)) printf(" %s", datm_coh_name(m));
        printf(" of the top %d words, ", ts->coh_top_n);
        if (ts->coh_window > 0) printf("sliding windows of %lld positions", (long long)ts->coh_window);
        else printf("document co-occurrence");
        printf(" in %s\n", ts->coh_reference[0] ? ts->coh_reference : "the training documents");
    } else {
        printf("# coherence: n/a (no reference corpus)\n");
    }
    printf("# use: share of the training tokens; unused: use < %g / K_l; near-duplicate: "
           "cosine >= %g; kl: from the corpus word frequencies (nats); diversity: unique "
           "share of the top 25 words\n\n", ts->unused_share, ts->dup_cos);
}

static void print_layer(const view *v, int l)
{
    const datm_topic_layer *t = &v->ts->layer[l - 1];
    int64_t live = t->k - t->n_unused;
    printf("## layer %d: %lld topics, NPMI ", l, (long long)t->k);
    if (!t->score[0]) printf("n/a (no reference corpus)");
    else if (t->usage) printf("%.4f (%lld live topics: %.4f)", t->score_mean[0], (long long)live,
                              t->score_live[0]);
    else printf("%.4f", t->score_mean[0]);
    if (t->usage) printf(", %lld unused", (long long)t->n_unused);
    else printf(", usage unknown");
    printf(", diversity %.4f\n", t->diversity);
    if (t->score[0]) {
        printf("   live:");
        print_measures(v->ts, t, t->score_live, 0);
        printf(" | all:");
        print_measures(v->ts, t, t->score_mean, 0);
        printf("\n");
    }
    int64_t *order = malloc((size_t)(t->k + 1) * sizeof *order);
    if (!order) return;
    for (int64_t k = 0; k < t->k; k++) order[k] = k;
    if (t->usage && !v->by_index) {
        sort_layer = t;
        qsort(order, (size_t)t->k, sizeof *order, by_usage);
    }
    int64_t hidden = 0;
    for (int64_t i = 0; i < t->k; i++) {
        const int64_t k = order[i];
        if (!v->all && !datm_topic_live(t, k)) { hidden++; continue; }
        printf("t%-4lld", (long long)k);
        if (t->usage) printf(" use %5.2f%%", 100.0 * t->usage[k]);
        if (t->unused && t->unused[k]) printf(" UNUSED");
        print_measures(v->ts, t, NULL, k);
        if (t->corpus_kl) printf(" kl %.2f", t->corpus_kl[k]);
        printf(" | %.3f:", t->top_weights[k * t->top_n]);
        print_words(v, t, k);
        printf("\n");
        const int dup = t->nearest && t->nearest_cos && t->nearest[k] >= 0 &&
                        t->nearest_cos[k] >= v->ts->dup_cos;
        const int m = (l >= 2 && t->link_n) ? DATM_MIN(v->links, t->link_n) : 0;
        if (!dup && !m) continue;
        printf("     ");
        if (dup) printf(" near-duplicate of t%d (cosine %.3f)%s", t->nearest[k], t->nearest_cos[k],
                        m ? ";" : "");
        if (m) printf(" children:");
        for (int j = 0; j < m; j++)
            printf(" L%d.t%d %.3f%s", l - 1, t->link_ids[k * t->link_n + j],
                   t->link_weights[k * t->link_n + j], j + 1 < m ? "," : "");
        printf("\n");
    }
    if (hidden)
        printf("(%lld unused topic(s) hidden: use < %g / %lld of the tokens; --all lists them)\n",
               (long long)hidden, v->ts->unused_share, (long long)t->k);
    printf("\n");
    free(order);
}

/* ---- machine-readable output (--format csv|json) ---- */

static const char *word_of(const view *v, int32_t w, char *buf, size_t n)
{
    if (v->vocab && w >= 0 && w < v->n_vocab) return v->vocab[w];
    snprintf(buf, n, "w%d", w);
    return buf;
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') printf("\\%c", ch);
        else if (ch < 0x20) printf("\\u%04x", ch);
        else putchar(ch);
    }
    putchar('"');
}

static void json_number(double x)
{
    if (isfinite(x)) printf("%.9g", x);
    else printf("null");
}

static void print_csv(const view *v, int l0, int l1)
{
    char b[32];
    printf("layer,topic,use,unused");
    for (int m = 0; m < DATM_COH_COUNT_; m++) printf(",%s", datm_coh_name(m));
    printf(",kl,rank,word,weight\n");
    for (int l = l0; l <= l1; l++) {
        const datm_topic_layer *t = &v->ts->layer[l - 1];
        const int n = DATM_MIN(v->top, t->top_n);
        for (int64_t k = 0; k < t->k; k++)
            for (int j = 0; j < n; j++) {
                printf("%d,%lld,", l, (long long)k);
                if (t->usage) printf("%.9g", t->usage[k]);
                printf(",%d", t->unused ? t->unused[k] : 0);
                for (int m = 0; m < DATM_COH_COUNT_; m++) {
                    putchar(',');
                    if (t->score[m] && isfinite(t->score[m][k])) printf("%.9g", t->score[m][k]);
                }
                putchar(',');
                if (t->corpus_kl) printf("%.9g", t->corpus_kl[k]);
                const char *w = word_of(v, t->top_ids[k * t->top_n + j], b, sizeof b);
                printf(",%d,%s%s%s,%.9g\n", j + 1, strpbrk(w, ",\"") ? "\"" : "", w,
                       strpbrk(w, ",\"") ? "\"" : "", (double)t->top_weights[k * t->top_n + j]);
            }
    }
}

static void print_json(const view *v, const char *run, int l0, int l1)
{
    char b[32];
    printf("{\"run\": ");
    json_string(run);
    printf(", \"layers\": [");
    for (int l = l0; l <= l1; l++) {
        const datm_topic_layer *t = &v->ts->layer[l - 1];
        const int n = DATM_MIN(v->top, t->top_n);
        printf("%s\n{\"layer\": %d, \"topics\": [", l > l0 ? "," : "", l);
        for (int64_t k = 0; k < t->k; k++) {
            printf("%s\n  {\"topic\": %lld, \"use\": ", k ? "," : "", (long long)k);
            json_number(t->usage ? t->usage[k] : NAN);
            printf(", \"unused\": %s", t->unused && t->unused[k] ? "true" : "false");
            for (int m = 0; m < DATM_COH_COUNT_; m++) {
                if (!t->score[m]) continue;
                printf(", \"%s\": ", datm_coh_name(m));
                json_number(t->score[m][k]);
            }
            printf(", \"kl\": ");
            json_number(t->corpus_kl ? t->corpus_kl[k] : NAN);
            printf(", \"words\": [");
            for (int j = 0; j < n; j++) {
                printf("%s{\"word\": ", j ? ", " : "");
                json_string(word_of(v, t->top_ids[k * t->top_n + j], b, sizeof b));
                printf(", \"weight\": %.9g}", (double)t->top_weights[k * t->top_n + j]);
            }
            printf("], \"children\": [");
            const int m = (l >= 2 && t->link_n) ? DATM_MIN(v->links, t->link_n) : 0;
            for (int j = 0; j < m; j++)
                printf("%s{\"topic\": %d, \"weight\": %.9g}", j ? ", " : "",
                       t->link_ids[k * t->link_n + j], (double)t->link_weights[k * t->link_n + j]);
            printf("]}");
        }
        printf("]}");
    }
    printf("\n]}\n");
}

typedef struct topics_args {
    const char *run, *reference, *measures, *format;
    int layer, top, links, tree, recompute, all, by_index, coh_top;
    long long window;
    double unused_share, dup_cos;
} topics_args;

static int parse_args(int argc, char **argv, topics_args *a)
{
    memset(a, 0, sizeof *a);
    a->top = 10; a->links = 3; a->tree = 1; a->coh_top = -1; a->window = -1;
    a->unused_share = -1; a->dup_cos = -1;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const int more = i + 1 < argc;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) { usage(stdout); return -1; }
        else if (!strcmp(s, "--layer") && more) a->layer = atoi(argv[++i]);
        else if (!strcmp(s, "--top") && more) a->top = atoi(argv[++i]);
        else if (!strcmp(s, "--links") && more) a->links = atoi(argv[++i]);
        else if ((!strcmp(s, "--data") || !strcmp(s, "--reference")) && more) a->reference = argv[++i];
        else if (!strcmp(s, "--measures") && more) a->measures = argv[++i];
        else if (!strcmp(s, "--format") && more) a->format = argv[++i];
        else if (!strcmp(s, "--coherence-top") && more) a->coh_top = atoi(argv[++i]);
        else if (!strcmp(s, "--window") && more) a->window = atoll(argv[++i]);
        else if (!strcmp(s, "--unused-share") && more) a->unused_share = atof(argv[++i]);
        else if (!strcmp(s, "--dup-cos") && more) a->dup_cos = atof(argv[++i]);
        else if (!strcmp(s, "--no-tree")) a->tree = 0;
        else if (!strcmp(s, "--recompute")) a->recompute = 1;
        else if (!strcmp(s, "--all")) a->all = 1;
        else if (!strcmp(s, "--by-index")) a->by_index = 1;
        else if (s[0] == '-' && s[1]) {
            fprintf(stderr, "datm topics: unknown option or missing value '%s'\n", s);
            usage(stderr);
            return DATM_EXIT_USAGE;
        } else if (!a->run) a->run = s;
        else { fprintf(stderr, "datm topics: one run only\n"); return DATM_EXIT_USAGE; }
    }
    if (!a->run) { usage(stderr); return DATM_EXIT_USAGE; }
    if (a->format && strcmp(a->format, "text") && strcmp(a->format, "csv") &&
        strcmp(a->format, "json")) {
        fprintf(stderr, "datm topics: --format '%s': text, csv or json\n", a->format);
        return DATM_EXIT_USAGE;
    }
    if (a->top < 1 || a->links < 0 || a->layer < 0) {
        fprintf(stderr, "datm topics: --top must be >= 1, --links >= 0, --layer >= 1\n");
        return DATM_EXIT_USAGE;
    }
    if ((a->reference || a->measures || a->coh_top >= 0 || a->window >= 0) && !a->recompute) {
        fprintf(stderr, "datm topics: --reference, --data, --measures, --coherence-top and "
                        "--window need --recompute\n");
        return DATM_EXIT_USAGE;
    }
    return 0;
}

/* The topic set of f: read from /topics, or recomputed with the arguments' settings. */
static int load_topics(datm_h5 *f, const topics_args *a, datm_topic_set *ts, datm_error *err)
{
    if (!a->recompute && datm_h5_is_group(f, DATM_GRP_TOPICS) == 1)
        return datm_topics_read(f, ts, err);
    datm_topics_opts o;
    datm_topics_opts_default(&o);
    o.coh.measures = (1u << DATM_COH_COUNT_) - 1;
    int rc = DATM_OK;
    if (a->measures) rc = datm_coh_parse_list(a->measures, &o.coh.measures, err);
    if (rc) return rc;
    if (a->coh_top >= 0) o.coh.top_n = a->coh_top;
    if (a->window >= 0) o.coh.window = a->window;
    if (a->dup_cos >= 0) o.dup_cos = a->dup_cos;
    datm_topics_ref r;
    datm_error e2 = {0};
    const int have = datm_topics_reference_load(f, a->reference, &r, &e2) == DATM_OK;
    if (!have && a->reference) return datm_error_set(err, e2.code, "%s", e2.msg);
    if (!have) fprintf(stderr, "datm topics: warning: no coherence (%s)\n", e2.msg);
    rc = datm_topics_compute_with(f, have ? &r.ref : NULL, r.name, &o, ts, err);
    if (have) datm_topics_reference_free(&r);
    return rc;
}

int datm_cmd_topics(int argc, char **argv)
{
    topics_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc < 0) return DATM_EXIT_OK;
    if (prc) return prc;
    datm_error err = {0};
    datm_h5 *f = NULL;
    if (datm_result_open(a.run, 0, &f, &err)) {
        fprintf(stderr, "datm topics: %s\n", err.msg);
        return DATM_EXIT_FAIL;
    }
    datm_topic_set ts;
    if (load_topics(f, &a, &ts, &err)) {
        fprintf(stderr, "datm topics: %s\n", err.msg);
        datm_h5_close(&f);
        return DATM_EXIT_FAIL;
    }
    view v = {.ts = &ts, .top = a.top, .links = a.links, .all = a.all, .by_index = a.by_index};
    if (datm_result_vocab(f, &v.vocab, &v.n_vocab, &err))
        fprintf(stderr, "datm topics: warning: %s (showing word ids)\n", err.msg);
    datm_h5_close(&f);
    if (a.layer > ts.n_layers) {
        fprintf(stderr, "datm topics: --layer %d but the model has %d layer(s)\n", a.layer,
                ts.n_layers);
        datm_topic_set_free(&ts);
        datm_h5_strings_free(v.vocab, v.n_vocab);
        return DATM_EXIT_USAGE;
    }
    if (a.unused_share >= 0) {
        datm_topic_set_flag_unused(&ts, a.unused_share);
        datm_topic_set_summarise(&ts);
    }
    if (a.dup_cos >= 0) ts.dup_cos = a.dup_cos;
    if (a.top > ts.layer[0].top_n)
        fprintf(stderr, "datm topics: %d words stored per topic; showing those\n", ts.layer[0].top_n);

    if (a.format && strcmp(a.format, "text")) {
        const int l0 = a.layer ? a.layer : 1, l1 = a.layer ? a.layer : ts.n_layers;
        if (!strcmp(a.format, "csv")) print_csv(&v, l0, l1);
        else print_json(&v, a.run, l0, l1);
        datm_topic_set_free(&ts);
        datm_h5_strings_free(v.vocab, v.n_vocab);
        return ferror(stdout) ? DATM_EXIT_FAIL : DATM_EXIT_OK;
    }
    print_header(&ts, a.run);
    for (int l = 1; l <= ts.n_layers; l++)
        if (!a.layer || l == a.layer) print_layer(&v, l);
    const int root = a.layer ? a.layer : ts.n_layers;
    if (a.tree && root >= 2 && a.links > 0) {
        printf("## links from layer %d down (each child with its Phi(l) weight)\n", root);
        for (int64_t k = 0; k < ts.layer[root - 1].k; k++)
            if (a.all || datm_topic_live(&ts.layer[root - 1], k)) print_tree(&v, root, k, 0, 1.0);
    }
    datm_topic_set_free(&ts);
    datm_h5_strings_free(v.vocab, v.n_vocab);
    return DATM_EXIT_OK;
}
