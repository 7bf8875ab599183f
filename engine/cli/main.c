/* engine/cli/main.c: entry point of the `datm` command; dispatches to subcommands. */
#include <cblas.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/core.h"
#include "math/math.h"
#include "par/par.h"

/* int datm_cmd_xxx(int argc, char **argv); -- one line per subcommand, in table order */
int datm_cmd_run(int argc, char **argv);
int datm_cmd_resume(int argc, char **argv);
int datm_cmd_fork(int argc, char **argv);
int datm_cmd_sweep(int argc, char **argv);
int datm_cmd_pipeline(int argc, char **argv);
int datm_cmd_check(int argc, char **argv);
int datm_cmd_models(int argc, char **argv);
int datm_cmd_describe(int argc, char **argv);
int datm_cmd_compare(int argc, char **argv);
int datm_cmd_check_metrics(int argc, char **argv);
int datm_cmd_topics(int argc, char **argv);
int datm_cmd_report(int argc, char **argv);
int datm_cmd_figures(int argc, char **argv);
int datm_cmd_infer(int argc, char **argv);
int datm_cmd_export(int argc, char **argv);
int datm_cmd_ensemble(int argc, char **argv);

int datm_cmd_corpus(int argc, char **argv);
static const datm_cli_command commands[] = {
    {"run", "run a spec: train, evaluate, write result.h5, figures, report", datm_cmd_run},
    {"resume", "continue an interrupted run from its last checkpoint", datm_cmd_resume},
    {"fork", "a new run from a run's checkpoint with some settings changed", datm_cmd_fork},
    {"sweep", "cartesian product of runs over override values, with a manifest", datm_cmd_sweep},
    {"pipeline", "run a pipeline file's runs (cached), its status, or its report", datm_cmd_pipeline},
    {"check", "validate a spec and print it resolved with its hash", datm_cmd_check},
    {"models", "list the registered model variants", datm_cmd_models},
    {"describe", "keys, types, defaults and bounds of a variant or spec section", datm_cmd_describe},
    {"compare", "changed parameters and metrics of runs, deltas against the first", datm_cmd_compare},
    {"check-metrics", "check a run's metrics against a baseline (exit 0/1/77)", datm_cmd_check_metrics},
    {"topics", "topics per layer with usage, coherence and diagnostics; the layer tree", datm_cmd_topics},
    {"report", "one self-contained HTML page: topic hierarchy, curves, metrics", datm_cmd_report},
    {"figures", "make a run's figures (gnuplot .dat/.gp/.png/.svg)", datm_cmd_figures},
    {"infer", "per-layer document features (theta) of new documents from a trained run", datm_cmd_infer},
    {"export", "a run's topics and theta for pyLDAvis, MALLET, CSV or JSON", datm_cmd_export},
    {"ensemble", "average the class prediction of finished supervised runs (e.g. seeds)", datm_cmd_ensemble},
    {"corpus", "build a data set from raw text; summarise a data set", datm_cmd_corpus},
    {NULL, NULL, NULL} /* end */
};

static void usage(FILE *f)
{
    fprintf(f, "usage: datm COMMAND [ARGS...]\n\n"
               "datm trains, evaluates and compares deep autoencoding topic models.\n\n"
               "commands:\n");
    for (const datm_cli_command *c = commands; c->name; c++)
        fprintf(f, "  %-14s %s\n", c->name, c->summary);
    fprintf(f, "\nRun 'datm COMMAND --help' for the options of a command.\n"
               "datm %s (%s)\n", datm_version_string(), datm_git_commit());
}

static int dispatch(int argc, char **argv);

int main(int argc, char **argv)
{
    datm_runtime_env(argv);   /* BLAS kernels, OpenMP wait policy (may restart) */
    /* under mpirun: this process is one rank of a data-parallel run (engine/par/par.h) */
    if (datm_par_init(&argc, &argv)) {
        fprintf(stderr, "datm: MPI initialisation failed\n");
        return DATM_EXIT_USAGE;
    }
    int rc = dispatch(argc, argv);
    /* a rank that fails alone would leave the others waiting in a collective */
    if (rc) datm_par_abort(rc);
    datm_par_finalize();
    return rc;
}

static int dispatch(int argc, char **argv)
{
    datm_mem_keep_freed();   /* freed blocks reused, not faulted in afresh (core/memtune.c) */
    setlocale(LC_ALL, "C");   /* numbers in text files always use '.' */
    datm_fp_mode fp_saved;   /* subnormals flushed for every command (core/fpmode.c) */
    datm_fp_flush_begin(&fp_saved);
    if (argc < 2) { usage(stderr); return DATM_EXIT_USAGE; }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return DATM_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("datm %s (%s)\n", datm_version_string(), datm_git_commit());
        printf("BLAS: %s\n", openblas_get_config());   /* the kernel family is its last word but one */
        printf("OpenMP wait policy: %s\n", datm_omp_wait_policy());
        printf("MPI: %s\n", datm_par_is_mpi() ? "yes (mpirun -n R datm run SPEC)" : "no");
        return DATM_EXIT_OK;
    }
    for (const datm_cli_command *c = commands; c->name; c++)
        if (!strcmp(argv[1], c->name)) {
            /* on several MPI ranks only training is data-parallel; any other command would
             * run once per rank, each writing the same files */
            if (datm_par_size() > 1 && strcmp(c->name, "run") && strcmp(c->name, "resume")) {
                if (datm_par_rank() == 0)
                    fprintf(stderr, "datm %s: not a data-parallel command; of the commands "
                            "only run and resume work on several MPI ranks (run it without "
                            "mpirun)\n", c->name);
                return DATM_EXIT_USAGE;
            }
            int rc = datm_cli_plugins(&argc, argv);   /* --plugin, DATM_PLUGIN_PATH */
            return rc ? rc : c->run(argc - 1, argv + 1);
        }
    fprintf(stderr, "datm: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return DATM_EXIT_USAGE;
}
