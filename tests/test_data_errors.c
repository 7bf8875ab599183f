/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_data */
/* tests/test_data_errors.c: one malformed file per error case of the data readers, written
 * to a fresh temporary directory (plain and gzip). Each case checks that reading fails with
 * a message that starts with "<file>:<line>:" for the expected line and contains a phrase
 * saying what is wrong. Cases: empty file, missing / wrong header, NNZ mismatch (too few,
 * too many), doc / word id out of range, zero / negative / non-integer count, wrong field
 * count, duplicate (doc, word) (adjacent and out of order), blank line among entries,
 * truncated gzip; labels: count mismatch (both ways), out of range, negative, non-integer,
 * empty; vocab size mismatch through datm_corpus_load; missing file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "data/data.h"

static int failures;
static char tmpdir[256];

static void write_file(const char *path, const char *text, int gzip)
{
    if (gzip) {
        gzFile g = gzopen(path, "wb");
        gzwrite(g, text, (unsigned)strlen(text));
        gzclose(g);
    } else {
        FILE *f = fopen(path, "wb");
        fputs(text, f);
        fclose(f);
    }
}

/* Checks that rc != 0 and err.msg begins with "path:line:" and contains `phrase`. */
static void expect(const char *name, int rc, const datm_error *err, const char *path, long line,
                   const char *phrase)
{
    char prefix[600];
    snprintf(prefix, sizeof prefix, "%s:%ld:", path, line);
    if (rc == 0) {
        printf("FAIL %s: accepted\n", name);
        failures++;
    } else if (strncmp(err->msg, prefix, strlen(prefix)) != 0 || !strstr(err->msg, phrase)) {
        printf("FAIL %s: message '%s' (want prefix '%s' and '%s')\n", name, err->msg, prefix, phrase);
        failures++;
    } else {
        printf("ok   %-28s %s\n", name, err->msg);
    }
}

static void docword_case(const char *name, const char *text, int gzip, long line, const char *phrase)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.docword%s", tmpdir, name, gzip ? ".gz" : "");
    write_file(path, text, gzip);
    datm_csr m;
    datm_error err = {0};
    int rc = datm_docword_read(path, &m, &err);
    expect(name, rc, &err, path, line, phrase);
    if (rc == 0) datm_csr_free(&m);
    if (m.row_ptr || m.col || m.val) { printf("FAIL %s: output not freed on error\n", name); failures++; }
}

static void labels_case(const char *name, const char *text, int64_t n_docs, int n_classes, long line,
                        const char *phrase)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.labels", tmpdir, name);
    write_file(path, text, 0);
    int32_t *lab = NULL;
    datm_error err = {0};
    int rc = datm_labels_read(path, n_docs, n_classes, &lab, &err);
    expect(name, rc, &err, path, line, phrase);
    datm_free(lab);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/datm_test_data_errors_XXXXXX");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }

    for (int gz = 0; gz < 2; gz++) {
        char nm[64];
#define CASE(name, text, line, phrase) \
        (snprintf(nm, sizeof nm, "%s%s", name, gz ? "_gz" : ""), docword_case(nm, text, gz, line, phrase))
        CASE("empty", "", 1, "empty file");
        CASE("header_missing_nnz", "3\n4\n", 3, "file ends before NNZ");
        CASE("header_no_header", "1 1 2\n1 3 1\n2 2 1\n", 1, "exceeds D x W");
        CASE("header_word", "3\nabc\n5\n1 1 1\n", 2, "W (vocabulary size) must be an integer");
        CASE("header_negative", "3\n-4\n5\n", 2, "must be an integer >= 1");
        CASE("header_two_fields", "3 4\n2\n", 1, "missing NNZ");
        CASE("header_extra", "3\n4 7\n2\n", 2, "unexpected '7'");
        CASE("nnz_too_few", "2\n3\n3\n1 1 1\n2 3 4\n", 5, "header says NNZ = 3");
        CASE("nnz_too_many", "2\n3\n1\n1 1 1\n2 3 4\n", 5, "more entries than NNZ = 1");
        CASE("doc_zero", "2\n3\n2\n1 1 1\n0 3 4\n", 5, "doc id 0 out of range 1..2");
        CASE("doc_high", "2\n3\n2\n1 1 1\n3 3 4\n", 5, "doc id 3 out of range 1..2");
        CASE("word_high", "2\n3\n2\n1 1 1\n2 4 4\n", 5, "word id 4 out of range 1..3");
        CASE("count_zero", "2\n3\n2\n1 1 1\n2 3 0\n", 5, "count 0 must be a positive integer");
        CASE("count_negative", "2\n3\n2\n1 1 -2\n2 3 1\n", 4, "count -2 must be a positive integer");
        CASE("count_real", "2\n3\n2\n1 1 1\n2 3 1.5\n", 5, "count '1.5' is not an integer");
        CASE("count_missing", "2\n3\n2\n1 1 1\n2 3\n", 5, "found 2 fields");
        CASE("extra_field", "2\n3\n2\n1 1 1 9\n2 3 1\n", 4, "unexpected '9'");
        CASE("dup_adjacent", "2\n3\n3\n1 1 1\n1 2 1\n1 2 5\n", 6, "duplicate entry (doc 1, word 2), first at line 5");
        CASE("dup_unsorted", "2\n3\n4\n2 1 1\n1 2 1\n2 3 1\n1 2 5\n", 7, "duplicate entry (doc 1, word 2), first at line 5");
        CASE("blank_line", "2\n3\n2\n1 1 1\n\n2 3 1\n", 5, "empty line among the entries");
#undef CASE
    }

    /* truncated gzip: a valid stream of many lines cut in half */
    {
        char path[512];
        snprintf(path, sizeof path, "%s/truncated.docword.gz", tmpdir);
        size_t cap = 1 << 20, len = 0;
        char *text = malloc(cap);
        len += (size_t)snprintf(text + len, cap - len, "5000\n50\n%d\n", 5000 * 10);
        for (int d = 1; d <= 5000; d++)
            for (int w = 1; w <= 10; w++)
                len += (size_t)snprintf(text + len, cap - len, "%d %d %d\n", d, w * 5, 1 + (d * w) % 7);
        write_file(path, text, 1);
        free(text);
        FILE *f = fopen(path, "rb");
        fseek(f, 0, SEEK_END);
        long sz = ftell(f);
        fclose(f);
        if (truncate(path, sz / 2) != 0) { perror("truncate"); return 1; }
        datm_csr m;
        datm_error err = {0};
        int rc = datm_docword_read(path, &m, &err);
        char prefix[600];
        snprintf(prefix, sizeof prefix, "%s:", path);
        long line = 0;
        if (rc == 0 || strncmp(err.msg, prefix, strlen(prefix)) ||
            sscanf(err.msg + strlen(prefix), "%ld:", &line) != 1 || line < 4 ||
            !strstr(err.msg, "truncated or corrupt gzip")) {
            printf("FAIL truncated gzip: rc %d, message '%s'\n", rc, err.msg);
            failures++;
        } else {
            printf("ok   %-28s %s\n", "truncated_gzip", err.msg);
        }
        if (rc == 0) datm_csr_free(&m);
    }

    /* labels */
    labels_case("labels_few", "0\n1\n", 3, 2, 2, "file ends after 2 labels, expected 3");
    labels_case("labels_many", "0\n1\n1\n0\n", 3, 2, 4, "more labels than the 3 documents");
    labels_case("labels_range", "0\n2\n1\n", 3, 2, 2, "label 2 out of range 0..1");
    labels_case("labels_negative", "0\n-1\n1\n", 3, 0, 2, "label -1 must be >= 0");
    labels_case("labels_real", "0\n1\n0.5\n", 3, 2, 3, "label '0.5' is not an integer");
    labels_case("labels_empty", "", 3, 2, 1, "empty file");
    labels_case("labels_blank", "0\n\n1\n", 3, 2, 2, "empty line");

    /* vocab size mismatch and a missing label line, through the corpus loader */
    {
        char dir[512], path[600];
        snprintf(dir, sizeof dir, "%s/set", tmpdir);
        snprintf(path, sizeof path, "mkdir -p %s", dir);
        if (system(path) != 0) return 1;
        snprintf(path, sizeof path, "%s/train.docword", dir);
        write_file(path, "2\n3\n2\n1 1 1\n2 3 1\n", 0);
        snprintf(path, sizeof path, "%s/vocab.txt", dir);
        write_file(path, "a\nb\n", 0);
        datm_corpus c;
        datm_error err = {0};
        int rc = datm_corpus_load(dir, "train", &c, &err);
        char want[600];
        snprintf(want, sizeof want, "%s/vocab.txt:2:", dir);
        if (rc == 0 || !strstr(err.msg, want) || !strstr(err.msg, "expected 3")) {
            printf("FAIL vocab mismatch: '%s'\n", err.msg);
            failures++;
        } else {
            printf("ok   %-28s %s\n", "vocab_mismatch", err.msg);
        }
        if (rc == 0) datm_corpus_free(&c);
        write_file(path, "a\nb\nc\n", 0);
        snprintf(path, sizeof path, "%s/classes.txt", dir);
        write_file(path, "x\ny\n", 0);
        snprintf(path, sizeof path, "%s/train.labels", dir);
        write_file(path, "1\n", 0);
        rc = datm_corpus_load(dir, "train", &c, &err);
        snprintf(want, sizeof want, "%s/train.labels:1:", dir);
        if (rc == 0 || strncmp(err.msg, want, strlen(want))) {
            printf("FAIL labels mismatch via corpus: '%s'\n", err.msg);
            failures++;
        } else {
            printf("ok   %-28s %s\n", "corpus_labels_mismatch", err.msg);
        }
        if (rc == 0) datm_corpus_free(&c);
        /* and the well-formed set loads */
        write_file(path, "1\n0\n", 0);
        rc = datm_corpus_load(dir, "train", &c, &err);
        if (rc || c.n_classes != 2 || c.labels[0] != 1 || c.n_vocab != 3 || strcmp(c.vocab[2], "c")) {
            printf("FAIL well-formed set: rc %d '%s'\n", rc, err.msg);
            failures++;
        }
        if (rc == 0) datm_corpus_free(&c);
    }

    /* missing file names the path */
    {
        char path[512];
        snprintf(path, sizeof path, "%s/nonexistent.docword.gz", tmpdir);
        datm_csr m;
        datm_error err = {0};
        int rc = datm_docword_read(path, &m, &err);
        if (rc != DATM_E_IO || !strstr(err.msg, path)) {
            printf("FAIL missing file: '%s'\n", err.msg);
            failures++;
        }
    }

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) printf("warning: could not remove %s\n", tmpdir);
    if (failures) { printf("%d failures\n", failures); return 1; }
    printf("ok\n");
    return 0;
}
