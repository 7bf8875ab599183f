/* engine/cli/cmd_corpus_synth.c: `datm corpus synth`, a data set directory drawn from a PGBN
 * with known topics (engine/data/synth.h): train.shards (for data.stream: true), vocab.txt,
 * truth.h5 (the topics Phi(1..L) and the options) and README.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "data/shard.h"
#include "data/synth.h"
#include "io/h5.h"

static const char *const LAWS[] = {"poisson", "fixed", "negbin"};

static void help_synth(FILE *f)
{
    datm_synth_opts d;
    datm_synth_defaults(&d);
    fprintf(f,
        "usage: datm corpus synth --out DIR [options]\n\n"
        "Draws a corpus from a Poisson gamma belief network with known topics:\n"
        "  Phi(1) columns ~ Dir(eta) over V words, Phi(l > 1) columns ~ Dir(1);\n"
        "  theta(L) ~ Gam(1, 1), theta(l) ~ Gam(Phi(l+1) theta(l+1), 1);\n"
        "  a document of n words ~ Mult(n, Phi(1) theta(1) / |theta(1)|), n from the length law\n"
        "(the PGBN's Poisson counts given the document's length). Writes DIR/train.shards (read\n"
        "by specs with data.dataset: DIR and data.stream: true), DIR/vocab.txt (w1..wV),\n"
        "DIR/truth.h5 (/phi_1 .. /phi_L, each (K_{l-1}, K_l)) and DIR/README.md. Documents are\n"
        "keyed by their number, so the corpus is the same for any --threads.\n\n"
        "  --out DIR          data set directory (created; an existing train.shards is kept\n"
        "                     unless --overwrite)\n"
        "  --docs N           documents (default %lld)\n"
        "  --vocab V          vocabulary size (default %lld)\n"
        "  --layers K1,K2,..  topic widths per layer (default %lld,%lld,%lld)\n"
        "  --eta A            Dirichlet parameter of the word topics (default %g)\n"
        "  --doc-len M        mean document length in tokens (default %g)\n"
        "  --len-law L        poisson (default), fixed (every document M tokens) or negbin\n"
        "                     (Poisson of a Gam(shape, M / shape) mean: over-dispersed)\n"
        "  --len-shape S      negbin shape (default %g; variance M + M^2 / S)\n"
        "  --seed S           seed (default %llu)\n"
        "  --shard-docs N     documents per shard (default %lld)\n"
        "  --threads N        OpenMP threads\n"
        "  --overwrite        replace DIR/train.shards\n"
        "  --quiet            only warnings and errors\n",
        (long long)d.n_docs, (long long)d.n_vocab, (long long)d.k[0], (long long)d.k[1],
        (long long)d.k[2], d.eta, d.len_mean, d.len_shape, (unsigned long long)d.seed,
        (long long)d.docs_per_shard);
}

static int num(const char *key, const char *s, double lo, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo)) {
        fprintf(stderr, "datm corpus synth: %s '%s': a number >= %g is needed\n", key, s, lo);
        return 1;
    }
    *out = v;
    return 0;
}

static int parse_layers(const char *s, datm_synth_opts *o)
{
    o->n_layers = 0;
    for (const char *p = s; *p;) {
        char *end;
        long long k = strtoll(p, &end, 10);
        if (end == p || k < 1 || o->n_layers == DATM_MAX_LAYERS || (*end && *end != ',')) {
            fprintf(stderr, "datm corpus synth: --layers '%s': 1 to %d positive widths, comma "
                    "separated\n", s, DATM_MAX_LAYERS);
            return 1;
        }
        o->k[o->n_layers++] = k;
        p = *end ? end + 1 : end;
    }
    return o->n_layers == 0;
}

static int write_vocab(const char *dir, int64_t V, datm_error *err)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    datm_afile a;
    int rc = datm_afile_open(&a, path, err);
    for (int64_t v = 0; !rc && v < V; v++) fprintf(a.f, "w%lld\n", (long long)(v + 1));
    if (!rc) rc = datm_afile_commit(&a, err);
    return rc;
}

static int write_truth(const char *dir, const datm_synth_opts *o, float *const phi[],
                       double tokens, datm_error *err)
{
    char path[1200], tmp[1300];
    snprintf(path, sizeof path, "%s/truth.h5", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    datm_h5 *f = NULL;
    int rc = datm_h5_create(tmp, &f, err);
    for (int l = 0; !rc && l < o->n_layers; l++) {
        char name[32];
        snprintf(name, sizeof name, "phi_%d", l + 1);
        int64_t dims[2] = {l ? o->k[l - 1] : o->n_vocab, o->k[l]};
        rc = datm_h5_write_f32(f, name, phi[l], 2, dims, err);
    }
    if (!rc) rc = datm_h5_write_scalar(f, "n_docs", (double)o->n_docs, err);
    if (!rc) rc = datm_h5_write_scalar(f, "tokens", tokens, err);
    if (!rc) rc = datm_h5_write_scalar(f, "eta", o->eta, err);
    if (!rc) rc = datm_h5_write_scalar(f, "seed", (double)o->seed, err);
    int rc2 = datm_h5_close_checked(&f, rc ? NULL : err);
    if (!rc) rc = rc2;
    if (!rc && rename(tmp, path) != 0)
        rc = datm_error_set(err, DATM_E_IO, "%s: cannot rename (%s)", path, strerror(errno));
    if (rc) remove(tmp);
    return rc;
}

static int write_readme(const char *dir, const datm_synth_opts *o, double tokens, datm_error *err)
{
    char path[1200], layers[256] = "";
    snprintf(path, sizeof path, "%s/README.md", dir);
    for (int l = 0; l < o->n_layers; l++)
        snprintf(layers + strlen(layers), sizeof layers - strlen(layers), "%s%lld", l ? "," : "",
                 (long long)o->k[l]);
    datm_afile a;
    int rc = datm_afile_open(&a, path, err);
    if (rc) return rc;
    fprintf(a.f, "# Synthetic PGBN corpus\n\nMade by `datm corpus synth --docs %lld --vocab %lld "
            "--layers %s --eta %.9g --doc-len %.9g --len-law %s --len-shape %.9g --seed %llu "
            "--shard-docs %lld`.\n\n%lld documents, %.0f tokens, V = %lld. The true topics are in "
            "truth.h5 (phi_1 .. phi_%d). Train with `data.dataset: <this directory>` and "
            "`data.stream: true`.\n", (long long)o->n_docs, (long long)o->n_vocab, layers, o->eta,
            o->len_mean, LAWS[o->len_law], o->len_shape, (unsigned long long)o->seed,
            (long long)o->docs_per_shard, (long long)o->n_docs, tokens, (long long)o->n_vocab,
            o->n_layers);
    return datm_afile_commit(&a, err);
}

int datm_cmd_corpus_synth(int argc, char **argv);
int datm_cmd_corpus_synth(int argc, char **argv)
{
    datm_synth_opts o;
    datm_synth_defaults(&o);
    const char *out = NULL;
    int overwrite = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        double v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { help_synth(stdout); return DATM_EXIT_OK; }
        if (!strcmp(a, "--overwrite")) { overwrite = 1; continue; }
        if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) { datm_log_set_level(DATM_LOG_WARN); continue; }
        if (a[0] != '-' || i + 1 >= argc) {
            fprintf(stderr, "datm corpus synth: unexpected '%s' (options take a value; see --help)\n", a);
            return DATM_EXIT_USAGE;
        }
        const char *s = argv[++i];
        int bad = 0;
        if (!strcmp(a, "--out")) out = s;
        else if (!strcmp(a, "--docs")) { bad = num(a, s, 1, &v); o.n_docs = (int64_t)v; }
        else if (!strcmp(a, "--vocab")) { bad = num(a, s, 2, &v); o.n_vocab = (int64_t)v; }
        else if (!strcmp(a, "--layers")) bad = parse_layers(s, &o);
        else if (!strcmp(a, "--eta")) { bad = num(a, s, 1e-6, &o.eta); }
        else if (!strcmp(a, "--doc-len")) { bad = num(a, s, 1, &o.len_mean); }
        else if (!strcmp(a, "--len-shape")) { bad = num(a, s, 1e-3, &o.len_shape); }
        else if (!strcmp(a, "--seed")) { bad = num(a, s, 0, &v); o.seed = (uint64_t)v; }
        else if (!strcmp(a, "--shard-docs")) { bad = num(a, s, 1, &v); o.docs_per_shard = (int64_t)v; }
        else if (!strcmp(a, "--threads")) { if (datm_cli_threads("corpus synth", s)) return DATM_EXIT_USAGE; }
        else if (!strcmp(a, "--len-law")) {
            int k = -1;
            for (int j = 0; j < 3; j++) if (!strcmp(s, LAWS[j])) k = j;
            if (k < 0) { fprintf(stderr, "datm corpus synth: --len-law '%s' (poisson, fixed, negbin)\n", s); return DATM_EXIT_USAGE; }
            o.len_law = (datm_synth_len)k;
        } else {
            fprintf(stderr, "datm corpus synth: unknown option '%s' (see --help)\n", a);
            return DATM_EXIT_USAGE;
        }
        if (bad) return DATM_EXIT_USAGE;
    }
    if (!out) { help_synth(stderr); return DATM_EXIT_USAGE; }
    datm_error err = {0};
    float *phi[DATM_MAX_LAYERS] = {0};
    char shards[1200];
    snprintf(shards, sizeof shards, "%s/train.shards", out);
    double tokens = 0, t0 = datm_time_now();
    int rc = DATM_OK;
    if (mkdir(out, 0777) != 0 && errno != EEXIST)
        rc = datm_error_set(&err, DATM_E_IO, "%s: cannot create (%s)", out, strerror(errno));
    if (!rc) rc = datm_synth_topics(&o, phi, &err);
    if (!rc) rc = datm_synth_write(&o, phi, shards, overwrite, &tokens, &err);
    if (!rc) rc = write_vocab(out, o.n_vocab, &err);
    if (!rc) rc = write_truth(out, &o, phi, tokens, &err);
    if (!rc) rc = write_readme(out, &o, tokens, &err);
    for (int l = 0; l < DATM_MAX_LAYERS; l++) datm_free(phi[l]);
    if (rc) {
        fprintf(stderr, "datm corpus synth: %s\n", err.msg);
        return rc == DATM_E_INVALID ? DATM_EXIT_USAGE : DATM_EXIT_FAIL;
    }
    datm_info("%s: %lld documents, %.0f tokens, V = %lld [%.2f s]", shards, (long long)o.n_docs,
              tokens, (long long)o.n_vocab, datm_time_now() - t0);
    return DATM_EXIT_OK;
}
