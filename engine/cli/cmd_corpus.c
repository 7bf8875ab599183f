/* engine/cli/cmd_corpus.c: `datm corpus build` (raw text -> a data set directory, see
 * engine/data/corpus_build.h), `datm corpus convert` (docword files -> shard sets for
 * data.stream, engine/data/shard.h), `datm corpus synth` (cmd_corpus_synth.c) and `datm corpus
 * info` (sizes, tokens, classes, top words of a data set directory or name). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "pipeline/pipeline.h"
#include "data/corpus_build.h"
#include "data/data.h"
#include "data/shard.h"

int datm_cmd_corpus_synth(int argc, char **argv);   /* cmd_corpus_synth.c */

static void help_main(FILE *f)
{
    fprintf(f, "usage: datm corpus build --input PATH --out DIR [options]\n"
               "       datm corpus convert DOCWORD_DIR [--out DIR] [--shard-docs N]\n"
               "       datm corpus synth --out DIR --docs N [options]\n"

               "       datm corpus info DIR|NAME [--top N]\n\n"
               "build  turns raw text into a data set (UCI docword + vocab + labels); see\n"
               "       'datm corpus build --help'.\n"
               "convert writes each SPLIT.docword[.gz] of a data set as SPLIT.shards, the binary\n"
               "       sharded form that specs read with data.stream: true; see --help.\n"
               "synth  draws a corpus from a gamma belief network with known topics and writes\n"
               "       it as shards; see 'datm corpus synth --help'.\n"

               "info   prints sizes, token totals, classes and the most frequent words of a\n"
               "       data set; see 'datm corpus info --help'.\n");
}

static void help_build(FILE *f)
{
    datm_corpus_build_opts d;
    datm_corpus_build_defaults(&d);
    fprintf(f,
        "usage: datm corpus build --input PATH --out DIR [options]\n\n"
        "Turns raw text into a data set directory: train/test.docword.gz, vocab.txt,\n"
        "classes.txt and train/test.labels (when categories are given), train/test.docs\n"
        "(source of each document) and README.md (options and statistics). The output\n"
        "depends only on the input and the options (byte-identical on re-runs).\n\n"
        "input:\n"
        "  --format F             dir: every regular file under PATH (sorted; hidden entries\n"
        "                         skipped), or the files named by --cats;\n"
        "                         lines: one document per line of the file PATH (plain/gzip);\n"
        "                         brown: the Brown corpus (PATH/cats.txt lists 'text genre';\n"
        "                         items are word/TAG, tags dropped);\n"
        "                         jsonl: JSON Lines, one object per line, the text in field\n"
        "                         --text-field (default text), the category in --label-field;\n"
        "                         csv: CSV (RFC 4180, quoted fields may span lines) with a\n"
        "                         header row, the text in column --text-field, the category in\n"
        "                         --label-field;\n"
        "                         mm: Matrix Market coordinate counts, documents x words,\n"
        "                         words named by --vocab-file (default w1, w2, ...);\n"
        "                         ldac: LDA-C ('M id:count ...' per document, ids from 0),\n"
        "                         words named by --vocab-file. Default dir.\n"
        "  --input PATH           directory or file\n"
        "  --out DIR              output directory (created; an existing non-empty one is\n"
        "                         refused unless --overwrite, which replaces it only when\n"
        "                         the new data set is complete; never the input)\n"
        "  --cats FILE            'NAME CATEGORY' per line, NAME relative to PATH (dir, brown)\n"
        "  --labels FILE          lines, mm, ldac: one category name per line (document)\n"
        "  --label-subdir         dir format: the category is the first directory of a file\n"
        "  --text-field NAME      jsonl / csv: the field or column holding the text\n"
        "  --label-field NAME     jsonl / csv: the field or column holding the category\n"
        "  --vocab-file FILE      mm / ldac: one word per line, in id order\n"
        "documents:\n"
        "  --unit text|paragraph|chunk   one document per text, per paragraph (blank-line\n"
        "                         separated) or per chunk of N tokens. Default %s.\n"
        "  --chunk N              tokens per chunk, counted before stop-word removal; a tail\n"
        "                         under N/2 joins the previous chunk. Default %lld.\n"
        "  --min-doc-tokens N     drop documents with fewer vocabulary tokens (default %lld)\n"
        "tokens and vocabulary:\n"
        "  --min-len N, --max-len N   token length limits in characters (default %d, %d).\n"
        "                         Text is UTF-8 in any language: Unicode NFC, word breaks\n"
        "                         of ICU (Chinese, Japanese and Thai get dictionary words),\n"
        "                         a token is a run of letters (with their combining marks),\n"
        "                         case folded; digits and punctuation separate tokens.\n"
        "                         Invalid UTF-8 is an error naming file:line:column.\n"
        "  --stopwords FILE       one stop word per line (any language), instead of the\n"
        "                         built-in English list\n"
        "  --stopwords-lang L     a built-in list: en (default), fr, de, es\n"
        "  --no-stopwords         keep stop words\n"
        "  --min-df N             keep words in >= N training documents (default %lld)\n"
        "  --max-df F             ... and in <= F of them, 0 < F <= 1 (default %.9g)\n"
        "  --vocab V              keep the V most frequent such words, 0 = all (default %lld)\n"
        "split:\n"
        "  --test-frac F          fraction of texts (per category) held out (default %.9g)\n"
        "  --seed S               seed of the split (default %llu)\n"
        "  --no-gzip              write plain .docword files\n"
        "  --shards               also write each split as SPLIT.shards (datm corpus\n"
        "                         convert: the form data.stream reads)\n"
        "  --quiet                only warnings and errors\n\n"
        "Texts without tokens and documents left empty are counted and reported (stderr\n"
        "and README.md), never dropped silently.\n",
        datm_doc_unit_name(d.unit), (long long)d.chunk_tokens, (long long)d.min_doc_tokens,
        d.min_token_len, d.max_token_len, (long long)d.min_df, d.max_df, (long long)d.max_vocab,
        d.test_frac, (unsigned long long)d.seed);
}

static void help_info(FILE *f)
{
    fprintf(f, "usage: datm corpus info DIR|NAME [--top N]\n\n"
               "Prints, for each split present (train, test, test_obs, test_heldout): documents D,\n"
               "vocabulary W, non-zeros, tokens, mean/max document length, max count, empty\n"
               "documents and class counts; then the N most frequent training words (default 20).\n"
               "NAME is resolved like a spec's data set: a path, $DATM_DATA/NAME, .cache/data/NAME.\n");
}

/* Value of option argv[*i] ("--key value" or "--key=value"); NULL (message printed) if missing. */
static const char *opt_value(int argc, char **argv, int *i, const char *key)
{
    const char *a = argv[*i];
    size_t n = strlen(key);
    if (a[n] == '=') return a + n + 1;
    if (*i + 1 >= argc) {
        fprintf(stderr, "datm corpus: %s needs a value\n", key);
        return NULL;
    }
    return argv[++*i];
}

static int is_opt(const char *a, const char *key)
{
    size_t n = strlen(key);
    return !strncmp(a, key, n) && (a[n] == '\0' || a[n] == '=');
}

static int parse_i64(const char *key, const char *s, int64_t lo, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo) {
        fprintf(stderr, "datm corpus: %s: '%s' is not an integer >= %lld\n", key, s, (long long)lo);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_f64(const char *key, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end) {
        fprintf(stderr, "datm corpus: %s: '%s' is not a number\n", key, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* ---- convert ---- */

static const char *const SPLITS[] = {"train", "test", "test_obs", "test_heldout"};

/* Each SPLIT.docword[.gz] of in_dir as out_dir/SPLIT.shards; 0 splits found is an error. */
static int convert_dir(const char *in_dir, const char *out_dir, int64_t docs, int overwrite,
                       datm_error *err)
{
    int done = 0;
    for (size_t k = 0; k < DATM_COUNTOF(SPLITS); k++) {
        char in[1200], out[1200];
        struct stat st;
        snprintf(in, sizeof in, "%s/%s.docword.gz", in_dir, SPLITS[k]);
        if (stat(in, &st) != 0) snprintf(in, sizeof in, "%s/%s.docword", in_dir, SPLITS[k]);
        if (stat(in, &st) != 0) continue;
        snprintf(out, sizeof out, "%s/%s.shards", out_dir, SPLITS[k]);
        int rc = datm_shards_from_docword(in, out, docs, overwrite, err);
        if (rc) return rc;
        datm_shardset set;
        rc = datm_shardset_open(out, &set, err);
        if (rc) return rc;
        char h[17];
        datm_shardset_hash_hex(&set, h);
        datm_info("%s: %lld documents, V = %lld, %lld entries, %.0f tokens in %d shards "
                  "(content hash %s)", out, (long long)set.n_docs, (long long)set.n_cols,
                  (long long)set.nnz, set.tokens, set.n_shards, h);
        datm_shardset_close(&set);
        done++;
    }
    if (!done)
        return datm_error_set(err, DATM_E_IO, "%s: no train/test/test_obs/test_heldout .docword[.gz] "
                              "file", in_dir);
    return DATM_OK;
}

/* Copies in/name to out/name when it exists (vocab.txt, classes.txt). */
static int copy_file(const char *in_dir, const char *out_dir, const char *name, datm_error *err)
{
    char in[1200], out[1200];
    snprintf(in, sizeof in, "%s/%s", in_dir, name);
    snprintf(out, sizeof out, "%s/%s", out_dir, name);
    FILE *f = fopen(in, "rb");
    if (!f) return DATM_OK;
    datm_afile a;
    int rc = datm_afile_open(&a, out, err);
    char buf[65536];
    size_t n;
    while (!rc && (n = fread(buf, 1, sizeof buf, f)) > 0)
        if (fwrite(buf, 1, n, a.f) != n) rc = datm_error_set(err, DATM_E_IO, "%s: write failed", out);
    if (!rc && ferror(f)) rc = datm_error_set(err, DATM_E_IO, "%s: read failed", in);
    fclose(f);
    if (!rc) rc = datm_afile_commit(&a, err);
    else datm_afile_abort(&a);
    return rc;
}

static void help_convert(FILE *f)
{
    fprintf(f,
        "usage: datm corpus convert DOCWORD_DIR [--out DIR] [--shard-docs N] [--overwrite]\n\n"
        "Writes each SPLIT.docword[.gz] (train, test, test_obs, test_heldout) of a data set\n"
        "directory as SPLIT.shards: binary CSR shards of N documents with an index (V,\n"
        "documents, entries, tokens, a crc32 per shard and a content hash). A spec with\n"
        "data.stream: true then trains from disk, holding two shards at a time. The docword\n"
        "file is read in one pass, one shard in memory (a file whose entries are not ordered\n"
        "by document is read whole). Each shard set is written aside and renamed into place\n"
        "when complete.\n\n"
        "  --out DIR         where the shards go (default DOCWORD_DIR itself); vocab.txt and\n"
        "                    classes.txt are copied there\n"
        "  --shard-docs N    documents per shard (default %d)\n"
        "  --overwrite       replace existing SPLIT.shards\n"
        "  --quiet           only warnings and errors\n", DATM_SHARD_DEFAULT_DOCS);
}

static int cmd_convert(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    int64_t docs = DATM_SHARD_DEFAULT_DOCS;
    int overwrite = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { help_convert(stdout); return DATM_EXIT_OK; }
        if (is_opt(a, "--out")) {
            if (!(out = opt_value(argc, argv, &i, "--out"))) return DATM_EXIT_USAGE;
        } else if (is_opt(a, "--shard-docs")) {
            if (!(v = opt_value(argc, argv, &i, "--shard-docs")) || parse_i64(a, v, 1, &docs))
                return DATM_EXIT_USAGE;
        } else if (!strcmp(a, "--overwrite")) overwrite = 1;
        else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) datm_log_set_level(DATM_LOG_WARN);
        else if (a[0] == '-' || in) {
            fprintf(stderr, "datm corpus convert: unexpected argument '%s' (see --help)\n", a);
            return DATM_EXIT_USAGE;
        } else in = a;
    }
    if (!in) { help_convert(stderr); return DATM_EXIT_USAGE; }
    datm_error err = {0};
    int rc = DATM_OK;
    if (out && strcmp(out, in)) {
        if (mkdir(out, 0777) != 0 && errno != EEXIST)
            rc = datm_error_set(&err, DATM_E_IO, "%s: cannot create (%s)", out, strerror(errno));
        if (!rc) rc = copy_file(in, out, "vocab.txt", &err);
        if (!rc) rc = copy_file(in, out, "classes.txt", &err);
    }
    if (!rc) rc = convert_dir(in, out ? out : in, docs, overwrite, &err);
    if (rc) {
        fprintf(stderr, "datm corpus convert: %s\n", err.msg);
        return DATM_EXIT_FAIL;
    }
    return DATM_EXIT_OK;
}

static int cmd_build(int argc, char **argv)
{
    datm_corpus_build_opts o;
    datm_corpus_build_defaults(&o);
    int quiet = 0, overwrite = 0, shards = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int64_t iv;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { help_build(stdout); return DATM_EXIT_OK; }
#define VAL(key) (is_opt(a, key) && (v = opt_value(argc, argv, &i, key)) != NULL)
        if (VAL("--format")) {
            int f = datm_text_format_parse(v);
            if (f < 0) { fprintf(stderr, "datm corpus build: unknown --format '%s' (dir, lines, brown, jsonl, csv, mm, ldac)\n", v); return DATM_EXIT_USAGE; }
            o.format = (datm_text_format)f;
        } else if (VAL("--input")) o.input = v;
        else if (VAL("--out")) o.out_dir = v;
        else if (VAL("--cats")) o.cats_path = v;
        else if (VAL("--labels")) o.labels_path = v;
        else if (VAL("--stopwords")) o.stopwords_path = v;
        else if (VAL("--stopwords-lang")) o.stopwords_lang = v;
        else if (VAL("--text-field")) o.text_field = v;
        else if (VAL("--label-field")) o.label_field = v;
        else if (VAL("--vocab-file")) o.vocab_path = v;
        else if (VAL("--unit")) {
            int u = datm_doc_unit_parse(v);
            if (u < 0) { fprintf(stderr, "datm corpus build: unknown --unit '%s' (text, paragraph, chunk)\n", v); return DATM_EXIT_USAGE; }
            o.unit = (datm_doc_unit)u;
        } else if (VAL("--chunk")) { if (parse_i64(a, v, 2, &o.chunk_tokens)) return DATM_EXIT_USAGE; }
        else if (VAL("--min-doc-tokens")) { if (parse_i64(a, v, 1, &o.min_doc_tokens)) return DATM_EXIT_USAGE; }
        else if (VAL("--min-len")) { if (parse_i64(a, v, 1, &iv) || iv > 60) return DATM_EXIT_USAGE; o.min_token_len = (int)iv; }
        else if (VAL("--max-len")) { if (parse_i64(a, v, 1, &iv) || iv > 60) return DATM_EXIT_USAGE; o.max_token_len = (int)iv; }
        else if (VAL("--min-df")) { if (parse_i64(a, v, 1, &o.min_df)) return DATM_EXIT_USAGE; }
        else if (VAL("--max-df")) { if (parse_f64(a, v, &o.max_df)) return DATM_EXIT_USAGE; }
        else if (VAL("--vocab")) { if (parse_i64(a, v, 0, &o.max_vocab)) return DATM_EXIT_USAGE; }
        else if (VAL("--test-frac")) { if (parse_f64(a, v, &o.test_frac)) return DATM_EXIT_USAGE; }
        else if (VAL("--seed")) { if (parse_i64(a, v, 0, &iv)) return DATM_EXIT_USAGE; o.seed = (uint64_t)iv; }
        else if (!strcmp(a, "--label-subdir")) o.label_subdir = 1;
        else if (!strcmp(a, "--no-stopwords")) o.no_stopwords = 1;
        else if (!strcmp(a, "--no-gzip")) o.gzip = 0;
        else if (!strcmp(a, "--overwrite")) overwrite = 1;
        else if (!strcmp(a, "--shards")) shards = 1;
        else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) quiet = 1;
        else {
            static const char *const keys[] = {"--format", "--input", "--out", "--cats", "--labels", "--stopwords",
                                               "--stopwords-lang", "--text-field", "--label-field", "--vocab-file",
                                               "--unit", "--chunk", "--min-doc-tokens", "--min-len", "--max-len",
                                               "--min-df", "--max-df", "--vocab", "--test-frac", "--seed"};
            for (size_t k = 0; k < DATM_COUNTOF(keys); k++)
                if (is_opt(a, keys[k])) return DATM_EXIT_USAGE;   /* value missing: reported */
            fprintf(stderr, "datm corpus build: unknown argument '%s' (see --help)\n", a);
            return DATM_EXIT_USAGE;
        }
#undef VAL
    }
    if (!o.input || !o.out_dir) {
        fprintf(stderr, "datm corpus build: --input and --out are required\n\n");
        help_build(stderr);
        return DATM_EXIT_USAGE;
    }
    /* never into its input, never over a data set without --overwrite; with it, the new set
     * is built aside and replaces the old one only when complete */
    const char *inputs[] = {o.input, o.cats_path, o.labels_path, o.stopwords_path};
    int replace = 0;
    int orc = datm_cli_output_dir("corpus build", o.out_dir, inputs, 4, overwrite, &replace);
    if (orc) return orc;
    const char *final_dir = o.out_dir;
    datm_cli_stage sg;
    if (replace) {
        if (datm_cli_stage_begin("corpus build", final_dir, &sg)) return DATM_EXIT_FAIL;
        o.out_dir = sg.stage;
        o.out_name = final_dir;   /* the README records the --out given */
    }
    if (quiet) datm_log_set_level(DATM_LOG_WARN);
    datm_corpus_build_stats st;
    datm_error err = {0};
    double t0 = datm_time_now();
    int rc = datm_corpus_build(&o, &st, &err);
    if (!rc && shards) rc = convert_dir(o.out_dir, o.out_dir, DATM_SHARD_DEFAULT_DOCS, 0, &err);
    if (replace) {
        int rc2 = datm_cli_stage_end(&sg, !rc, &err);
        if (!rc) rc = rc2;
    }
    o.out_dir = final_dir;
    if (rc) {
        fprintf(stderr, "datm corpus build: %s%s\n", err.msg,
                replace ? " (the existing data set is untouched)" : "");
        return rc == DATM_E_INVALID ? DATM_EXIT_USAGE : DATM_EXIT_FAIL;
    }
    if (!quiet)
        printf("%s: train %lld docs (%lld tokens), test %lld docs (%lld tokens), V = %lld, %d classes "
               "[%.2f s]\n", o.out_dir, (long long)st.n_docs_train, (long long)st.tokens_train,
               (long long)st.n_docs_test, (long long)st.tokens_test, (long long)st.n_vocab, st.n_classes,
               datm_time_now() - t0);
    return DATM_EXIT_OK;
}

/* ---- info ---- */

static void print_split(const datm_corpus *c)
{
    const datm_csr *X = &c->X;
    double tokens = datm_csr_total(X), max_len = 0;
    float max_count = 0;
    int64_t empty = 0;
    for (int64_t d = 0; d < X->n_rows; d++) {
        double t = datm_csr_row_total(X, d);
        if (t > max_len) max_len = t;
        if (t == 0) empty++;
    }
    for (int64_t j = 0; j < X->nnz; j++) if (X->val[j] > max_count) max_count = X->val[j];
    printf("%-13s %8lld %7lld %10lld %12.17g %9.1f %8.17g %9.9g %6lld\n", c->split, (long long)X->n_rows,
           (long long)X->n_cols, (long long)X->nnz, tokens, X->n_rows ? tokens / (double)X->n_rows : 0.0,
           max_len, (double)max_count, (long long)empty);
}

static void print_classes(const datm_corpus *c)
{
    if (!c->labels || c->n_classes <= 0) return;
    int64_t *cnt = calloc((size_t)c->n_classes, sizeof *cnt);
    if (!cnt) return;
    for (int64_t d = 0; d < c->X.n_rows; d++) cnt[c->labels[d]]++;
    printf("  %s classes:", c->split);
    for (int k = 0; k < c->n_classes; k++)
        printf(" %s=%lld", c->class_names ? c->class_names[k] : "", (long long)cnt[k]);
    printf("\n");
    free(cnt);
}

static const double *g_freq;
static int cmp_freq(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    if (g_freq[x] != g_freq[y]) return g_freq[x] > g_freq[y] ? -1 : 1;
    return (x > y) - (x < y);
}

static int cmd_info(int argc, char **argv)
{
    const char *name = NULL;
    int64_t top = 20;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { help_info(stdout); return DATM_EXIT_OK; }
        if (is_opt(a, "--top")) {
            if (!(v = opt_value(argc, argv, &i, "--top")) || parse_i64("--top", v, 0, &top)) return DATM_EXIT_USAGE;
        } else if (a[0] == '-' || name) {
            fprintf(stderr, "datm corpus info: unexpected argument '%s'\n\n", a);
            help_info(stderr);
            return DATM_EXIT_USAGE;
        } else {
            name = a;
        }
    }
    if (!name) { help_info(stderr); return DATM_EXIT_USAGE; }
    char dir[1024];
    datm_error err = {0};
    if (datm_dataset_resolve(name, dir, sizeof dir, &err)) {
        fprintf(stderr, "datm corpus info: %s\n", err.msg);
        return DATM_EXIT_FAIL;
    }
    static const char *const splits[] = {"train", "test", "test_obs", "test_heldout"};
    printf("data set %s\n", dir);
    printf("%-13s %8s %7s %10s %12s %9s %8s %9s %6s\n", "split", "D", "W", "NNZ", "tokens", "mean len",
           "max len", "max count", "empty");
    datm_corpus train = {0};
    int found = 0;
    for (size_t s = 0; s < DATM_COUNTOF(splits); s++) {
        char p1[1100], p2[1100];
        struct stat st;
        snprintf(p1, sizeof p1, "%s/%s.docword.gz", dir, splits[s]);
        snprintf(p2, sizeof p2, "%s/%s.docword", dir, splits[s]);
        if (stat(p1, &st) != 0 && stat(p2, &st) != 0) continue;
        datm_corpus c;
        if (datm_corpus_load(dir, splits[s], &c, &err)) {
            fprintf(stderr, "datm corpus info: %s\n", err.msg);
            datm_corpus_free(&train);
            return DATM_EXIT_FAIL;
        }
        found++;
        print_split(&c);
        print_classes(&c);
        if (s == 0) train = c;
        else datm_corpus_free(&c);
    }
    if (!found) {
        fprintf(stderr, "datm corpus info: %s holds no train/test docword file\n", dir);
        return DATM_EXIT_FAIL;
    }
    if (train.vocab && top > 0) {
        int64_t V = train.X.n_cols;
        double *freq = calloc((size_t)V, sizeof *freq);
        int64_t *idx = malloc((size_t)V * sizeof *idx);
        if (freq && idx) {
            for (int64_t j = 0; j < train.X.nnz; j++) freq[train.X.col[j]] += train.X.val[j];
            for (int64_t v = 0; v < V; v++) idx[v] = v;
            g_freq = freq;
            qsort(idx, (size_t)V, sizeof *idx, cmp_freq);
            printf("top %lld training words (count):", (long long)DATM_MIN(top, V));
            for (int64_t k = 0; k < top && k < V; k++)
                printf("%s %s (%.17g)", k ? "," : "", train.vocab[idx[k]], freq[idx[k]]);
            printf("\n");
        }
        free(freq);
        free(idx);
    }
    datm_corpus_free(&train);
    return DATM_EXIT_OK;
}

int datm_cmd_corpus(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        help_main(argc < 2 ? stderr : stdout);
        return argc < 2 ? DATM_EXIT_USAGE : DATM_EXIT_OK;
    }
    if (!strcmp(argv[1], "build")) return cmd_build(argc - 1, argv + 1);
    if (!strcmp(argv[1], "info")) return cmd_info(argc - 1, argv + 1);
    if (!strcmp(argv[1], "convert")) return cmd_convert(argc - 1, argv + 1);
    if (!strcmp(argv[1], "synth")) return datm_cmd_corpus_synth(argc - 1, argv + 1);
    fprintf(stderr, "datm corpus: unknown subcommand '%s' (build, convert, synth, info)\n\n", argv[1]);
    help_main(stderr);
    return DATM_EXIT_USAGE;
}
