/* engine/cli/cmd_export.c: `datm export RUN --to FORMAT -o PATH` — a trained model's topics
 * and document features in the formats other topic-model tools read. Built on the public
 * API alone (include/datm.h), as any program embedding libdatm could be.
 *
 *   pyldavis  JSON with what pyLDAvis.prepare() takes, per layer: topic_term_dists (K_l, V),
 *             doc_topic_dists (D, K_l; theta rows normalised), doc_lengths (D), vocab (V),
 *             term_frequency (V): {"layers": [{"layer": 1, ...}, ...]}
 *   mallet    a folder with MALLET's two text outputs per layer: topic-keys-<l>.txt
 *             ("k<TAB>weight<TAB>top words", weight = the topic's share of the documents'
 *             theta mass) and doc-topics-<l>.txt ("d<TAB>name<TAB>p_1<TAB>...<TAB>p_K")
 *   csv       a folder: topics-<l>.csv (layer, topic, rank, word, weight: the top words of
 *             every topic, projected to words) and theta-<l>.csv (doc, then theta_<l>_<k>)
 *   json      one file: {"variant", "layers": [{"layer", "topics": [{"topic", "words":
 *             [{"word", "weight"}]}], "theta": [[...], ...]}]}
 *
 * Documents: the run's training documents (its data set's train.docword.gz) unless --docs
 * gives a docword file; theta is the posterior mean. Outputs are written aside and renamed
 * when complete; an existing PATH is refused unless --overwrite. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "core/core.h"   /* datm_csv_field */
#include "datm.h"

int datm_cmd_export(int argc, char **argv);

typedef enum { FMT_PYLDAVIS, FMT_MALLET, FMT_CSV, FMT_JSON } export_fmt;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: datm export RUN --to pyldavis|mallet|csv|json -o PATH [--docs DOCWORD]\n"
        "                   [--layer l] [--top n] [--threads N] [--overwrite]\n\n"
        "Writes RUN's topics and per-document theta for other tools:\n"
        "  pyldavis  PATH.json: per layer what pyLDAvis.prepare() takes (topic_term_dists,\n"
        "            doc_topic_dists, doc_lengths, vocab, term_frequency)\n"
        "  mallet    folder PATH: topic-keys-<l>.txt and doc-topics-<l>.txt per layer, as\n"
        "            MALLET's --output-topic-keys and --output-doc-topics write them\n"
        "  csv       folder PATH: topics-<l>.csv (top words with weights) and theta-<l>.csv\n"
        "  json      PATH.json: topics with their word weights and theta, per layer\n\n"
        "  --docs F     documents for theta (default: the run's training documents)\n"
        "  --layer l    only layer l (default: every layer)\n"
        "  --top n      words per topic in topic lists (default 20)\n"
        "  --threads N  threads of the inference (default: all)\n"
        "  --overwrite  replace an existing PATH\n");
}

/* Fills err and returns 1 (vsnprintf: a long path is cut, not overrun). */
static int fail(datm_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(datm_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err->code = 1;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return 1;
}

typedef struct exp_ctx {
    datm_trained *m;
    datm_docs    *docs;
    int64_t V, D;
    int     l0, l1, top;
    float  *theta[8];          /* (D, K_l) per layer, normalised rows */
    double *doc_len;           /* (D) */
    double *term_freq;         /* (V) */
} exp_ctx;

static void normalise_rows(float *t, int64_t rows, int64_t cols)
{
    for (int64_t i = 0; i < rows; i++) {
        double s = 0;
        for (int64_t k = 0; k < cols; k++) s += t[i * cols + k];
        for (int64_t k = 0; k < cols; k++)
            t[i * cols + k] = s > 0 ? (float)(t[i * cols + k] / s) : (float)(1.0 / (double)cols);
    }
}

static const char *word(const exp_ctx *c, int64_t v, char *buf, size_t n)
{
    const char *w = datm_word(c->m, v);
    if (w) return w;
    snprintf(buf, n, "w%lld", (long long)(v + 1));
    return buf;
}

static int write_pyldavis(FILE *f, exp_ctx *c, datm_error *err)
{
    char b[32];
    fprintf(f, "{\"format\": \"pyLDAvis.prepare arguments\", \"variant\": ");
    datm_json_string(f, datm_variant(c->m));
    fprintf(f, ", \"layers\": [");
    for (int l = c->l0; l <= c->l1; l++) {
        const int64_t K = datm_topics(c->m, l);
        float *tw = malloc((size_t)(c->V * K) * sizeof *tw);
        if (!tw) return fail(err, "out of memory");
        if (datm_topic_words(c->m, l, tw, err)) { free(tw); return 1; }
        fprintf(f, "%s\n{\"layer\": %d, \"topic_term_dists\": [", l > c->l0 ? "," : "", l);
        for (int64_t k = 0; k < K; k++) {   /* (K, V): column k of the (V, K) projection */
            fprintf(f, "%s[", k ? ",\n" : "\n");
            for (int64_t v = 0; v < c->V; v++)
                fprintf(f, "%s%.9g", v ? "," : "", (double)tw[v * K + k]);
            fprintf(f, "]");
        }
        free(tw);
        fprintf(f, "],\n\"doc_topic_dists\": [");
        const float *t = c->theta[l - c->l0];
        for (int64_t d = 0; d < c->D; d++) {
            fprintf(f, "%s[", d ? ",\n" : "\n");
            for (int64_t k = 0; k < K; k++) fprintf(f, "%s%.9g", k ? "," : "", (double)t[d * K + k]);
            fprintf(f, "]");
        }
        fprintf(f, "],\n\"doc_lengths\": [");
        for (int64_t d = 0; d < c->D; d++) fprintf(f, "%s%.17g", d ? "," : "", c->doc_len[d]);
        fprintf(f, "],\n\"vocab\": [");
        for (int64_t v = 0; v < c->V; v++) {
            if (v) fputc(',', f);
            datm_json_string(f, word(c, v, b, sizeof b));
        }
        fprintf(f, "],\n\"term_frequency\": [");
        for (int64_t v = 0; v < c->V; v++) fprintf(f, "%s%.17g", v ? "," : "", c->term_freq[v]);
        fprintf(f, "]}");
    }
    fprintf(f, "\n]}\n");
    return 0;
}

/* The top words of every topic of layer l: ids/w (K, top). */
static int top_words(exp_ctx *c, int l, int32_t **ids, float **w, datm_error *err)
{
    const int64_t K = datm_topics(c->m, l);
    *ids = malloc((size_t)(K * c->top) * sizeof **ids);
    *w = malloc((size_t)(K * c->top) * sizeof **w);
    if (!*ids || !*w) {
        free(*ids), free(*w);
        return fail(err, "out of memory");
    }
    if (datm_top_words(c->m, l, c->top, *ids, *w, err)) { free(*ids), free(*w); return 1; }
    return 0;
}

static int write_json(FILE *f, exp_ctx *c, datm_error *err)
{
    char b[32];
    fprintf(f, "{\"variant\": ");
    datm_json_string(f, datm_variant(c->m));
    fprintf(f, ", \"layers\": [");
    for (int l = c->l0; l <= c->l1; l++) {
        const int64_t K = datm_topics(c->m, l);
        int32_t *ids;
        float *w;
        if (top_words(c, l, &ids, &w, err)) return 1;
        fprintf(f, "%s\n{\"layer\": %d, \"topics\": [", l > c->l0 ? "," : "", l);
        for (int64_t k = 0; k < K; k++) {
            fprintf(f, "%s\n{\"topic\": %lld, \"words\": [", k ? "," : "", (long long)(k + 1));
            for (int j = 0; j < c->top; j++) {
                fprintf(f, "%s{\"word\": ", j ? ", " : "");
                datm_json_string(f, word(c, ids[k * c->top + j], b, sizeof b));
                fprintf(f, ", \"weight\": %.9g}", (double)w[k * c->top + j]);
            }
            fprintf(f, "]}");
        }
        free(ids), free(w);
        fprintf(f, "],\n\"theta\": [");
        const float *t = c->theta[l - c->l0];
        for (int64_t d = 0; d < c->D; d++) {
            fprintf(f, "%s[", d ? ",\n" : "\n");
            for (int64_t k = 0; k < K; k++) fprintf(f, "%s%.9g", k ? "," : "", (double)t[d * K + k]);
            fprintf(f, "]");
        }
        fprintf(f, "]}");
    }
    fprintf(f, "\n]}\n");
    return 0;
}

/* One file of a folder export: DIR/NAME written through NAME.tmp. */
static FILE *open_in(const char *dir, const char *name, char *path, size_t n)
{
    snprintf(path, n, "%.1200s/%.60s.tmp", dir, name);
    return fopen(path, "w");
}

static int close_in(FILE *f, const char *tmp, datm_error *err)
{
    int bad = ferror(f) | (fclose(f) != 0);
    char final[1300];
    snprintf(final, sizeof final, "%.*s", (int)(strlen(tmp) - 4), tmp);
    if (bad || rename(tmp, final)) {
        remove(tmp);
        return fail(err, "%s: cannot write", final);
    }
    return 0;
}

static int write_folder(const char *dir, export_fmt fmt, exp_ctx *c, datm_error *err)
{
    char path[1300], name[60], b[32];
    for (int l = c->l0; l <= c->l1; l++) {
        const int64_t K = datm_topics(c->m, l);
        const float *t = c->theta[l - c->l0];
        int32_t *ids;
        float *w;
        if (top_words(c, l, &ids, &w, err)) return 1;
        snprintf(name, sizeof name, fmt == FMT_MALLET ? "topic-keys-%d.txt" : "topics-%d.csv", l);
        FILE *f = open_in(dir, name, path, sizeof path);
        if (!f) { free(ids), free(w); goto io_fail; }
        if (fmt == FMT_MALLET) {
            double total = 0, *mass = calloc((size_t)K, sizeof *mass);
            for (int64_t d = 0; d < c->D; d++)
                for (int64_t k = 0; k < K; k++) mass[k] += t[d * K + k], total += t[d * K + k];
            for (int64_t k = 0; k < K; k++) {
                fprintf(f, "%lld\t%.6g\t", (long long)k, total > 0 ? mass[k] / total : 0.0);
                for (int j = 0; j < c->top; j++)
                    fprintf(f, "%s%s", j ? " " : "", word(c, ids[k * c->top + j], b, sizeof b));
                fputc('\n', f);
            }
            free(mass);
        } else {
            fprintf(f, "layer,topic,rank,word,weight\n");
            for (int64_t k = 0; k < K; k++)
                for (int j = 0; j < c->top; j++) {
                    fprintf(f, "%d,%lld,%d,", l, (long long)(k + 1), j + 1);
                    datm_csv_field(f, word(c, ids[k * c->top + j], b, sizeof b));
                    fprintf(f, ",%.9g\n", (double)w[k * c->top + j]);
                }
        }
        free(ids), free(w);
        if (close_in(f, path, err)) return 1;
        snprintf(name, sizeof name, fmt == FMT_MALLET ? "doc-topics-%d.txt" : "theta-%d.csv", l);
        f = open_in(dir, name, path, sizeof path);
        if (!f) goto io_fail;
        if (fmt == FMT_CSV) {
            fprintf(f, "doc");
            for (int64_t k = 0; k < K; k++) fprintf(f, ",theta_%d_%lld", l, (long long)(k + 1));
            fputc('\n', f);
        }
        for (int64_t d = 0; d < c->D; d++) {
            if (fmt == FMT_MALLET) fprintf(f, "%lld\tdoc%lld", (long long)d, (long long)(d + 1));
            else fprintf(f, "%lld", (long long)(d + 1));
            for (int64_t k = 0; k < K; k++)
                fprintf(f, fmt == FMT_MALLET ? "\t%.9g" : ",%.9g", (double)t[d * K + k]);
            fputc('\n', f);
        }
        if (close_in(f, path, err)) return 1;
    }
    return 0;
io_fail:
    return fail(err, "%s: cannot write: %s", path, strerror(errno));
}

int datm_cmd_export(int argc, char **argv)
{
    const char *run = NULL, *to = NULL, *out = NULL, *docs = NULL;
    int layer = 0, top = 20, threads = 0, overwrite = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return DATM_EXIT_OK; }
        else if (!strcmp(a, "--to") && v) to = argv[++i];
        else if (!strcmp(a, "-o") && v) out = argv[++i];
        else if (!strcmp(a, "--docs") && v) docs = argv[++i];
        else if (!strcmp(a, "--layer") && v) layer = atoi(argv[++i]);
        else if (!strcmp(a, "--top") && v) top = atoi(argv[++i]);
        else if (!strcmp(a, "--threads") && v) threads = atoi(argv[++i]);
        else if (!strcmp(a, "--overwrite")) overwrite = 1;
        else if (a[0] == '-') {
            fprintf(stderr, "datm export: unknown option or missing value '%s'\n\n", a);
            usage(stderr);
            return DATM_EXIT_USAGE;
        } else if (!run) run = a;
        else { usage(stderr); return DATM_EXIT_USAGE; }
    }
    export_fmt fmt;
    if (!run || !to || !out) { usage(stderr); return DATM_EXIT_USAGE; }
    if (!strcmp(to, "pyldavis")) fmt = FMT_PYLDAVIS;
    else if (!strcmp(to, "mallet")) fmt = FMT_MALLET;
    else if (!strcmp(to, "csv")) fmt = FMT_CSV;
    else if (!strcmp(to, "json")) fmt = FMT_JSON;
    else {
        fprintf(stderr, "datm export: --to '%s': pyldavis, mallet, csv or json\n", to);
        return DATM_EXIT_USAGE;
    }
    if (top < 1 || threads < 0 || layer < 0) {
        fprintf(stderr, "datm export: --top, --threads and --layer take whole numbers >= 1\n");
        return DATM_EXIT_USAGE;
    }
    struct stat st;
    if (!overwrite && stat(out, &st) == 0) {
        fprintf(stderr, "datm export: %s exists; choose another -o, or pass --overwrite\n", out);
        return DATM_EXIT_FAIL;
    }
    exp_ctx c;
    memset(&c, 0, sizeof c);
    c.top = top;
    datm_error err = {0};
    int rc = datm_open(run, &c.m, &err);
    char docs_path[1300];
    if (!rc && !docs) {
        const char *dd = datm_data_dir(c.m);
        if (!dd) {
            rc = fail(&err, "%s: the run does not record its data set; give --docs", run);
        } else {
            snprintf(docs_path, sizeof docs_path, "%s/train.docword.gz", dd);
            docs = docs_path;
        }
    }
    if (!rc) {
        c.V = datm_vocab_size(c.m);
        c.l0 = layer ? layer : 1;
        c.l1 = layer ? layer : datm_layers(c.m);
        if (c.l1 > datm_layers(c.m) || c.l1 - c.l0 + 1 > 8)
            rc = fail(&err, "--layer %d: the model has %d layers", layer, datm_layers(c.m));
    }
    if (!rc) rc = datm_docs_read(docs, &c.docs, &err);
    float *all[8] = {0};
    if (!rc) {
        c.D = datm_docs_count(c.docs);
        for (int l = c.l0; l <= c.l1 && !rc; l++) {
            c.theta[l - c.l0] = malloc((size_t)(c.D * datm_topics(c.m, l)) * sizeof(float));
            all[l - 1] = c.theta[l - c.l0];
            if (!all[l - 1]) rc = fail(&err, "out of memory");
        }
    }
    if (!rc) rc = datm_infer(c.m, c.docs, 0, 1, threads, all, &err);
    for (int l = c.l0; l <= c.l1 && !rc; l++)
        normalise_rows(c.theta[l - c.l0], c.D, datm_topics(c.m, l));
    if (!rc && fmt == FMT_PYLDAVIS) {
        c.doc_len = calloc((size_t)c.D + 1, sizeof *c.doc_len);
        c.term_freq = calloc((size_t)c.V + 1, sizeof *c.term_freq);
        if (!c.doc_len || !c.term_freq) rc = fail(&err, "out of memory");
        else {
            /* documents over fewer words than the model leave the last words at 0 */
            double *wc = calloc((size_t)datm_docs_words(c.docs) + 1, sizeof *wc);
            if (!wc) rc = fail(&err, "out of memory");
            else {
                datm_docs_totals(c.docs, c.doc_len, wc);
                for (int64_t v = 0; v < datm_docs_words(c.docs) && v < c.V; v++)
                    c.term_freq[v] = wc[v];
                free(wc);
            }
        }
    }
    /* write aside, then rename into place */
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.part", out);
    if (!rc) {
        if (fmt == FMT_PYLDAVIS || fmt == FMT_JSON) {
            FILE *f = fopen(tmp, "w");
            if (!f) rc = fail(&err, "%s: cannot write: %s", tmp, strerror(errno));
            else {
                rc = fmt == FMT_PYLDAVIS ? write_pyldavis(f, &c, &err) : write_json(f, &c, &err);
                if ((ferror(f) | (fclose(f) != 0)) && !rc)
                    rc = fail(&err, "%s: cannot write", tmp);
            }
        } else {
            char cmd[2700];
            snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
            if (!strchr(tmp, '\'') && system(cmd) == 0 && mkdir(tmp, 0777) == 0)
                rc = write_folder(tmp, fmt, &c, &err);
            else rc = fail(&err, "%s: cannot create", tmp);
        }
    }
    if (!rc) {
        char cmd[2700];
        if (overwrite && stat(out, &st) == 0 && !strchr(out, '\'')) {
            snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
            if (system(cmd) != 0) rc = fail(&err, "%s: cannot replace", out);
        }
        if (!rc && rename(tmp, out) != 0)
            rc = fail(&err, "%s: cannot rename from %s", out, tmp);
    } else if (!strchr(tmp, '\'')) {
        char cmd[2700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0) fprintf(stderr, "datm export: could not remove %s\n", tmp);
    }
    if (rc) fprintf(stderr, "datm export: %s\n", err.msg);
    else fprintf(stderr, "export: %s, %lld documents, layers %d-%d -> %s\n", to, (long long)c.D,
                 c.l0, c.l1, out);
    for (int l = 0; l < 8; l++) free(c.theta[l]);
    free(c.doc_len), free(c.term_freq);
    datm_docs_free(c.docs);
    datm_close(c.m);
    return rc ? DATM_EXIT_FAIL : DATM_EXIT_OK;
}
