/* engine/cli/cmd_topics.c: `datm topics RUN`: the projected topics of each layer (paper eq.
 * Phi_notation) with their top words and per-topic diagnostics (usage, coherence, distance
 * from the corpus, nearest topic, children), listed by usage with the unused ones hidden
 * unless --all; per layer the coherence over live topics, the unused count and diversity; and
 * the strongest links between layers as an indented tree. The run's stored diagnostics, or
 * with --recompute (or a result without them) computed from its Phi against the run's
 * training documents or --reference.
 *
 * Built on the public API (include/datm.h): the diagnostics come from datm_topic_stat and
 * datm_layer_stat (datm_topics_evaluate and datm_topics_flag_unused redo them), the words
 * and children from datm_top_words and datm_top_children. This file parses arguments and
 * formats (writers in cli_write.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "datm.h"
#include "eval/topic_diag.h"   /* the defaults the help text names */

int datm_cmd_topics(int argc, char **argv);

/* Per-topic statistics fetched (datm_topic_stat), the coherence measures last, in the order
 * the API names them (eval/coherence.h). */
static const char *const stat_name[] = {"use", "unused", "kl", "nearest", "cosine",
                                        "npmi", "uci", "umass", "cv"};
enum { USE, UNUSED, KL, NEAREST, COSINE, MEASURE, N_STATS = 9, N_MEASURES = N_STATS - MEASURE };
_Static_assert(sizeof stat_name / sizeof *stat_name == N_STATS, "a name per statistic");
static const char *const *const measure = stat_name + MEASURE;

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

/* What is shown of one layer, fetched through the API: per topic (K each, NULL when the run
 * lacks it) the statistics; top (K, n_top) word ids and kids (K, n_kids) children in layer
 * l-1, each with its weight; the layer's coherence means, unused count and diversity. */
typedef struct layer_view {
    int64_t  k;
    int      n_top, n_kids;
    int32_t *top, *kids;
    float   *top_w, *kids_w;
    double  *stat[N_STATS], *use, *unused, *kl, *nearest, *cosine, **score;
    double   mean[N_MEASURES], live[N_MEASURES], n_unused, diversity;
} layer_view;

typedef struct view {
    datm_trained *m;
    const char   *run;
    int           n_layers;
    layer_view   *layer;        /* [l-1] for layer l */
    int           top, links, all, by_index;
    double        unused_share, dup_cos;
} view;

/* Fills t->stat[] and the layer's values; a statistic the run lacks stays NULL. */
static int load_stats(view *v, int l, layer_view *t, datm_error *err)
{
    int rc = DATM_OK;
    for (int i = 0; i < N_STATS && !rc; i++) {
        t->stat[i] = malloc((size_t)(t->k + 1) * sizeof *t->stat[i]);
        if (!t->stat[i]) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
        const int r = datm_topic_stat(v->m, l, stat_name[i], t->stat[i], err);
        if (r) { free(t->stat[i]); t->stat[i] = NULL; }
        if (r > 0) rc = r;
    }
    t->use = t->stat[USE]; t->unused = t->stat[UNUSED]; t->kl = t->stat[KL];
    t->nearest = t->stat[NEAREST]; t->cosine = t->stat[COSINE]; t->score = t->stat + MEASURE;
    for (int c = 0; c < N_MEASURES; c++) {
        char name[32];
        snprintf(name, sizeof name, "%s_live", measure[c]);
        t->mean[c] = t->live[c] = NAN;
        if (t->score[c] && !rc) rc = datm_layer_stat(v->m, l, measure[c], &t->mean[c], err);
        if (t->score[c] && !rc) rc = datm_layer_stat(v->m, l, name, &t->live[c], err);
    }
    t->n_unused = 0;
    if (t->use && !rc) rc = datm_layer_stat(v->m, l, "unused", &t->n_unused, err);
    if (!rc) rc = datm_layer_stat(v->m, l, "diversity", &t->diversity, err);
    return rc;
}

static int load_layer(view *v, int l, datm_error *err)
{
    layer_view *t = &v->layer[l - 1];
    const int64_t K = t->k = datm_topics(v->m, l), V = datm_vocab_size(v->m);
    int rc = load_stats(v, l, t, err);
    t->n_top = (int)(v->top < V ? v->top : V);
    t->top = malloc((size_t)(K * t->n_top + 1) * sizeof *t->top);
    t->top_w = malloc((size_t)(K * t->n_top + 1) * sizeof *t->top_w);
    if (!rc && (!t->top || !t->top_w)) rc = datm_error_set(err, DATM_E_NOMEM, "out of memory");
    if (!rc) rc = datm_top_words(v->m, l, t->n_top, t->top, t->top_w, err);
    const int64_t below = datm_topics(v->m, l - 1);
    t->n_kids = l >= 2 ? (int)(v->links < below ? v->links : below) : 0;
    if (!rc && t->n_kids) {
        t->kids = malloc((size_t)(K * t->n_kids) * sizeof *t->kids);
        t->kids_w = malloc((size_t)(K * t->n_kids) * sizeof *t->kids_w);
        if (!t->kids || !t->kids_w) rc = datm_error_set(err, DATM_E_NOMEM, "out of memory");
        if (!rc) rc = datm_top_children(v->m, l, t->n_kids, t->kids, t->kids_w, err);
    }
    return rc;
}

static void free_layer(layer_view *t)
{
    free(t->top); free(t->top_w); free(t->kids); free(t->kids_w);
    for (int i = 0; i < N_STATS; i++) free(t->stat[i]);
}

static int live(const layer_view *t, int64_t k) { return !t->unused || !t->unused[k]; }

static const char *word_of(const view *v, int32_t w, char *buf, size_t n)
{
    const char *s = datm_word(v->m, w);
    if (s) return s;
    snprintf(buf, n, "w%d", w);
    return buf;
}

static void print_words(const view *v, const layer_view *t, int64_t k)
{
    char b[32];
    for (int j = 0; j < t->n_top; j++) printf(" %s", word_of(v, t->top[k * t->n_top + j], b, sizeof b));
}

static void print_tree(const view *v, int layer, int64_t k, int depth, double weight)
{
    const layer_view *t = &v->layer[layer - 1];
    printf("%*s", 2 * depth, "");
    printf("L%d.t%lld", layer, (long long)k);
    if (depth) printf(" (%.3f)", weight);
    if (!live(t, k)) printf(" [unused]");
    printf(":");
    print_words(v, t, k);
    printf("\n");
    for (int j = 0; j < t->n_kids; j++)
        print_tree(v, layer - 1, t->kids[k * t->n_kids + j], depth + 1, t->kids_w[k * t->n_kids + j]);
}

/* Topic order of a layer: by usage (descending, ties by index) unless by_index or unknown. */
static const double *sort_use;
static int by_usage(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    const double ux = sort_use[x], uy = sort_use[y];
    if (ux != uy) return ux > uy ? -1 : 1;
    return (x > y) - (x < y);
}

/* The coherence of topic k (k >= 0) or the layer's values x (k < 0). */
static void print_measures(const layer_view *t, const double *x, int64_t k)
{
    for (int c = 0; c < N_MEASURES; c++) {
        if (!t->score[c]) continue;
        const double s = k < 0 ? x[c] : t->score[c][k];
        if (isnan(s)) printf(" %s n/a", measure[c]);
        else printf(" %s %+.3f", measure[c], s);
    }
}

static void print_header(const view *v)
{
    printf("# topics of %s (%d layer(s), vocabulary %lld)\n", v->run, v->n_layers,
           (long long)datm_vocab_size(v->m));
    double top = 0, window = 0, on;
    const char *ref = datm_topics_reference(v->m);
    datm_layer_stat(v->m, 0, "top_n", &top, NULL);
    datm_layer_stat(v->m, 0, "window", &window, NULL);
    if (ref) {
        printf("# coherence:");
        for (int c = 0; c < N_MEASURES; c++)
            if (datm_layer_stat(v->m, 0, measure[c], &on, NULL) == 0) printf(" %s", measure[c]);
        printf(" of the top %d words, ", (int)top);
        if (window > 0) printf("sliding windows of %lld positions", (long long)window);
        else printf("document co-occurrence");
        printf(" in %s\n", ref[0] ? ref : "the training documents");
    } else {
        printf("# coherence: n/a (no reference corpus)\n");
    }
    printf("# use: share of the training tokens; unused: use < %g / K_l; near-duplicate: "
           "cosine >= %g; kl: from the corpus word frequencies (nats); diversity: unique "
           "share of the top 25 words\n\n", v->unused_share, v->dup_cos);
}

static void print_topic(const view *v, int l, const layer_view *t, int64_t k)
{
    printf("t%-4lld", (long long)k);
    if (t->use) printf(" use %5.2f%%", 100.0 * t->use[k]);
    if (t->unused && t->unused[k]) printf(" UNUSED");
    print_measures(t, NULL, k);
    if (t->kl) printf(" kl %.2f", t->kl[k]);
    printf(" | %.3f:", t->top_w[k * t->n_top]);
    print_words(v, t, k);
    printf("\n");
    const int dup = t->nearest && t->cosine && t->nearest[k] >= 0 && t->cosine[k] >= v->dup_cos;
    const int m = t->n_kids;
    if (!dup && !m) return;
    printf("     ");
    if (dup) printf(" near-duplicate of t%d (cosine %.3f)%s", (int)t->nearest[k], t->cosine[k],
                    m ? ";" : "");
    if (m) printf(" children:");
    for (int j = 0; j < m; j++)
        printf(" L%d.t%d %.3f%s", l - 1, t->kids[k * m + j], (double)t->kids_w[k * m + j],
               j + 1 < m ? "," : "");
    printf("\n");
}

static void print_layer(const view *v, int l)
{
    const layer_view *t = &v->layer[l - 1];
    printf("## layer %d: %lld topics, NPMI ", l, (long long)t->k);
    if (!t->score[0]) printf("n/a (no reference corpus)");
    else if (t->use) printf("%.4f (%lld live topics: %.4f)", t->mean[0],
                            (long long)(t->k - (int64_t)t->n_unused), t->live[0]);
    else printf("%.4f", t->mean[0]);
    if (t->use) printf(", %lld unused", (long long)t->n_unused);
    else printf(", usage unknown");
    printf(", diversity %.4f\n", t->diversity);
    if (t->score[0]) {
        printf("   live:");
        print_measures(t, t->live, -1);
        printf(" | all:");
        print_measures(t, t->mean, -1);
        printf("\n");
    }
    int64_t *order = malloc((size_t)(t->k + 1) * sizeof *order);
    if (!order) return;
    for (int64_t k = 0; k < t->k; k++) order[k] = k;
    if (t->use && !v->by_index) {
        sort_use = t->use;
        qsort(order, (size_t)t->k, sizeof *order, by_usage);
    }
    int64_t hidden = 0;
    for (int64_t i = 0; i < t->k; i++) {
        if (!v->all && !live(t, order[i])) hidden++;
        else print_topic(v, l, t, order[i]);
    }
    if (hidden)
        printf("(%lld unused topic(s) hidden: use < %g / %lld of the tokens; --all lists them)\n",
               (long long)hidden, v->unused_share, (long long)t->k);
    printf("\n");
    free(order);
}

/* ---- machine-readable output (--format csv|json) ---- */

static void print_csv(const view *v, int l0, int l1)
{
    char b[32];
    printf("layer,topic,use,unused");
    for (int c = 0; c < N_MEASURES; c++) printf(",%s", measure[c]);
    printf(",kl,rank,word,weight\n");
    for (int l = l0; l <= l1; l++) {
        const layer_view *t = &v->layer[l - 1];
        for (int64_t k = 0; k < t->k; k++)
            for (int j = 0; j < t->n_top; j++) {
                printf("%d,%lld,", l, (long long)k);
                if (t->use) printf("%.9g", t->use[k]);
                printf(",%d", t->unused ? (int)t->unused[k] : 0);
                for (int c = 0; c < N_MEASURES; c++) {
                    putchar(',');
                    if (t->score[c] && isfinite(t->score[c][k])) printf("%.9g", t->score[c][k]);
                }
                putchar(',');
                if (t->kl) printf("%.9g", t->kl[k]);
                printf(",%d,", j + 1);
                datm_csv_field(stdout, word_of(v, t->top[k * t->n_top + j], b, sizeof b));
                printf(",%.9g\n", (double)t->top_w[k * t->n_top + j]);
            }
    }
}

static void print_json_topic(const view *v, const layer_view *t, int64_t k)
{
    char b[32];
    printf("%s\n  {\"topic\": %lld, \"use\": ", k ? "," : "", (long long)k);
    datm_cli_json_num(stdout, t->use ? t->use[k] : NAN, 9);
    printf(", \"unused\": %s", t->unused && t->unused[k] ? "true" : "false");
    for (int c = 0; c < N_MEASURES; c++) {
        if (!t->score[c]) continue;
        printf(", \"%s\": ", measure[c]);
        datm_cli_json_num(stdout, t->score[c][k], 9);
    }
    printf(", \"kl\": ");
    datm_cli_json_num(stdout, t->kl ? t->kl[k] : NAN, 9);
    printf(", \"words\": [");
    for (int j = 0; j < t->n_top; j++) {
        printf("%s{\"word\": ", j ? ", " : "");
        datm_json_string(stdout, word_of(v, t->top[k * t->n_top + j], b, sizeof b));
        printf(", \"weight\": %.9g}", (double)t->top_w[k * t->n_top + j]);
    }
    printf("], \"children\": [");
    for (int j = 0; j < t->n_kids; j++)
        printf("%s{\"topic\": %d, \"weight\": %.9g}", j ? ", " : "", t->kids[k * t->n_kids + j],
               (double)t->kids_w[k * t->n_kids + j]);
    printf("]}");
}

static void print_json(const view *v, int l0, int l1)
{
    printf("{\"run\": ");
    datm_json_string(stdout, v->run);
    printf(", \"layers\": [");
    for (int l = l0; l <= l1; l++) {
        printf("%s\n{\"layer\": %d, \"topics\": [", l > l0 ? "," : "", l);
        for (int64_t k = 0; k < v->layer[l - 1].k; k++) print_json_topic(v, &v->layer[l - 1], k);
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

/* The diagnostics as stored, recomputed (--recompute) and re-flagged (--unused-share). */
static int load_topics(datm_trained *m, const topics_args *a, datm_error *err)
{
    double x;
    int rc = a->recompute ? datm_topics_evaluate(m, a->reference, a->measures, a->coh_top,
                                                 a->window, err)
                          : datm_layer_stat(m, 0, "unused_share", &x, err);
    if (!rc && a->unused_share >= 0) rc = datm_topics_flag_unused(m, a->unused_share, err);
    return rc;
}

static int show(view *v, const topics_args *a)
{
    if (a->format && strcmp(a->format, "text")) {
        const int l0 = a->layer ? a->layer : 1, l1 = a->layer ? a->layer : v->n_layers;
        if (!strcmp(a->format, "csv")) print_csv(v, l0, l1);
        else print_json(v, l0, l1);
        return ferror(stdout) ? DATM_EXIT_FAIL : DATM_EXIT_OK;
    }
    print_header(v);
    for (int l = 1; l <= v->n_layers; l++)
        if (!a->layer || l == a->layer) print_layer(v, l);
    const int root = a->layer ? a->layer : v->n_layers;
    if (a->tree && root >= 2 && a->links > 0) {
        printf("## links from layer %d down (each child with its Phi(l) weight)\n", root);
        for (int64_t k = 0; k < v->layer[root - 1].k; k++)
            if (a->all || live(&v->layer[root - 1], k)) print_tree(v, root, k, 0, 1.0);
    }
    return DATM_EXIT_OK;
}

int datm_cmd_topics(int argc, char **argv)
{
    topics_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc < 0) return DATM_EXIT_OK;
    if (prc) return prc;
    datm_error err = {0};
    view v = {.run = a.run, .top = a.top, .links = a.links, .all = a.all, .by_index = a.by_index};
    if (datm_open(a.run, &v.m, &err) || load_topics(v.m, &a, &err)) {
        fprintf(stderr, "datm topics: %s\n", err.msg);
        datm_close(v.m);
        return DATM_EXIT_FAIL;
    }
    v.n_layers = datm_layers(v.m);
    if (a.layer > v.n_layers) {
        fprintf(stderr, "datm topics: --layer %d but the model has %d layer(s)\n", a.layer,
                v.n_layers);
        datm_close(v.m);
        return DATM_EXIT_USAGE;
    }
    datm_layer_stat(v.m, 0, "unused_share", &v.unused_share, NULL);
    if (a.dup_cos >= 0) v.dup_cos = a.dup_cos;
    else datm_layer_stat(v.m, 0, "dup_cos", &v.dup_cos, NULL);
    v.layer = calloc((size_t)v.n_layers + 1, sizeof *v.layer);
    int rc = v.layer ? DATM_OK : datm_error_set(&err, DATM_E_NOMEM, "out of memory");
    for (int l = 1; l <= v.n_layers && !rc; l++) rc = load_layer(&v, l, &err);
    if (rc) fprintf(stderr, "datm topics: %s\n", err.msg);
    const int code = rc ? DATM_EXIT_FAIL : show(&v, &a);
    for (int l = 1; v.layer && l <= v.n_layers; l++) free_layer(&v.layer[l - 1]);
    free(v.layer);
    datm_close(v.m);
    return code;
}
