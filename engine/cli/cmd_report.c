/* engine/cli/cmd_report.c: `datm report RUN [-o FILE.html]`: the run's interactive report, one
 * self-contained HTML file (engine/io/report_html.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "io/report_html.h"
#include "io/results.h"

int datm_cmd_report(int argc, char **argv);

/* Creates the directories leading to file path (mkdir -p of its dirname). */
static int make_parents(const char *path)
{
    char d[1200];
    snprintf(d, sizeof d, "%s", path);
    char *slash = strrchr(d, '/');
    if (!slash || slash == d) return 0;
    *slash = '\0';
    for (char *p = d + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(d, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return (mkdir(d, 0777) != 0 && errno != EEXIST) ? -1 : 0;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: datm report RUN [-o FILE.html]\n\n"
        "Writes one self-contained HTML file (no network: data, style, script and SVG are all\n"
        "inline) that explores RUN (a run directory or its result.h5):\n"
        "  - the topic hierarchy across layers: a circle per topic, its area the topic's usage\n"
        "    (share of the training tokens) and its colour its NPMI, dashed when unused; lines\n"
        "    to its children in the layer below, thicker for a larger Phi(l) weight; a click\n"
        "    shows the topic's top words, coherence, usage, KL from the corpus, nearest\n"
        "    topic, children and parents;\n"
        "  - the training curves (loss, perplexity, KL and step per layer, the final\n"
        "    perplexity as draws accumulate) and the metrics; the resolved spec.\n"
        "The topics are those of `datm topics RUN`.\n\n"
        "  -o FILE.html   output file, its directory created if missing (default\n"
        "                 RUN/report.html)\n");
}

int datm_cmd_report(int argc, char **argv)
{
    const char *run = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { usage(stdout); return DATM_EXIT_OK; }
        else if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--out")) && i + 1 < argc) out = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "datm report: unknown option or missing value '%s'\n", argv[i]);
            usage(stderr);
            return DATM_EXIT_USAGE;
        } else if (!run) run = argv[i];
        else { fprintf(stderr, "datm report: one run only\n"); return DATM_EXIT_USAGE; }
    }
    if (!run) { usage(stderr); return DATM_EXIT_USAGE; }
    datm_error err = {0};
    char path[1200], def[1200];
    if (datm_result_path(run, path, sizeof path, &err)) {
        fprintf(stderr, "datm report: %s\n", err.msg);
        return DATM_EXIT_FAIL;
    }
    if (!out) {
        /* next to result.h5 */
        snprintf(def, sizeof def, "%s", path);
        char *slash = strrchr(def, '/');
        if (slash) snprintf(slash + 1, sizeof def - (size_t)(slash + 1 - def), "report.html");
        else snprintf(def, sizeof def, "report.html");
        out = def;
    }
    if (make_parents(out) != 0) {
        fprintf(stderr, "datm report: %s: cannot create its directory: %s\n", out, strerror(errno));
        return DATM_EXIT_FAIL;
    }
    if (datm_report_html_write(run, out, &err)) {
        fprintf(stderr, "datm report: %s\n", err.msg);
        return DATM_EXIT_FAIL;
    }
    printf("report: %s\n", out);
    return DATM_EXIT_OK;
}
