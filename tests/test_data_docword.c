/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_data */
/* tests/test_data_docword.c: well-formed inputs the docword reader must accept, and the
 * writer. Checks: entries in any order are sorted into CSR with the right values; the
 * one-line header "D W NNZ"; CRLF line ends; trailing blank lines; documents with no entry;
 * write -> read round trip (plain and gzip) gives an identical CSR; writing twice gives
 * byte-identical gzip files (deterministic output); the writer rejects non-integer counts;
 * datm_csr_select_rows / copy / totals; datm_lines_read and the test_obs -> test labels
 * fallback of datm_corpus_load; datm_dataset_resolve order (path, $DATM_DATA, .cache). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/data.h"
#include "test_check.h"
#include "test_util.h"


static int csr_equal(const datm_csr *a, const datm_csr *b)
{
    return a->n_rows == b->n_rows && a->n_cols == b->n_cols && a->nnz == b->nnz &&
           !memcmp(a->row_ptr, b->row_ptr, (size_t)(a->n_rows + 1) * sizeof *a->row_ptr) &&
           !memcmp(a->col, b->col, (size_t)a->nnz * sizeof *a->col) &&
           !memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val);
}

int main(void)
{
    char dir[] = "/tmp/datm_test_docword_XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    char p1[512], p2[512], p3[512];
    datm_error err = {0};
    datm_csr a, b, c;

    /* unsorted entries, CRLF, trailing blank lines, doc 3 empty */
    snprintf(p1, sizeof p1, "%s/unsorted.docword", dir);
    tu_write_text(p1, "4\r\n5\r\n5\r\n4 5 2\r\n1 3 1\r\n2 2 7\r\n1 1 4\r\n4 1 1\r\n\r\n\n");
    CHECK(datm_docword_read(p1, &a, &err) == 0, "unsorted: %s", err.msg);
    const int64_t rp[] = {0, 2, 3, 3, 5};
    const int32_t col[] = {0, 2, 1, 0, 4};
    const float val[] = {4, 1, 7, 1, 2};
    CHECK(a.n_rows == 4 && a.n_cols == 5 && a.nnz == 5 && !memcmp(a.row_ptr, rp, sizeof rp) &&
          !memcmp(a.col, col, sizeof col) && !memcmp(a.val, val, sizeof val), "unsorted: wrong CSR");
    CHECK(datm_csr_total(&a) == 15 && datm_csr_row_total(&a, 0) == 5 && datm_csr_row_total(&a, 2) == 0,
          "totals");

    /* one-line header, same content sorted */
    snprintf(p2, sizeof p2, "%s/oneline.docword", dir);
    tu_write_text(p2, "4 5 5\n1 1 4\n1 3 1\n2 2 7\n4 1 1\n4 5 2");
    CHECK(datm_docword_read(p2, &b, &err) == 0, "one-line header: %s", err.msg);
    CHECK(csr_equal(&a, &b), "one-line header: differs");
    datm_csr_free(&b);

    /* round trips */
    for (int gz = 0; gz < 2; gz++) {
        snprintf(p2, sizeof p2, "%s/rt.docword%s", dir, gz ? ".gz" : "");
        CHECK(datm_docword_write(p2, &a, gz, &err) == 0, "write: %s", err.msg);
        CHECK(datm_docword_read(p2, &b, &err) == 0, "read back: %s", err.msg);
        CHECK(csr_equal(&a, &b), "round trip (gzip %d) differs", gz);
        datm_csr_free(&b);
    }
    long n1, n2;
    char *f1 = tu_slurp(p2, &n1);
    snprintf(p3, sizeof p3, "%s/rt2.docword.gz", dir);
    datm_docword_write(p3, &a, 1, &err);
    char *f2 = tu_slurp(p3, &n2);
    CHECK(f1 && f2 && n1 == n2 && n1 > 10 && !memcmp(f1, f2, (size_t)n1), "gzip output not byte-identical");
    CHECK(f1 && (unsigned char)f1[0] == 0x1f && (unsigned char)f1[1] == 0x8b && !f1[4] && !f1[5] && !f1[6] && !f1[7],
          "gzip header must have mtime 0");
    free(f1);
    free(f2);

    /* writer rejects non-counts */
    CHECK(datm_csr_copy(&a, &c, &err) == 0, "copy");
    CHECK(csr_equal(&a, &c), "copy differs");
    c.val[1] = 1.5f;
    CHECK(datm_docword_write(p3, &c, 1, &err) == DATM_E_INVALID, "writer accepted 1.5");
    datm_csr_free(&c);

    /* select rows */
    const int64_t rows[] = {3, 0, 2};
    CHECK(datm_csr_select_rows(&a, rows, 3, &c, &err) == 0, "select");
    const int64_t rp2[] = {0, 2, 4, 4};
    const int32_t col2[] = {0, 4, 0, 2};
    CHECK(c.n_rows == 3 && c.nnz == 4 && !memcmp(c.row_ptr, rp2, sizeof rp2) && !memcmp(c.col, col2, sizeof col2),
          "select rows wrong");
    datm_csr_free(&c);

    /* lines */
    snprintf(p3, sizeof p3, "%s/vocab.txt", dir);
    tu_write_text(p3, "alpha\r\nbeta  \ngamma\n\n");
    char **lines;
    int64_t nl;
    CHECK(datm_lines_read(p3, 3, &lines, &nl, &err) == 0, "lines: %s", err.msg);
    CHECK(nl == 3 && !strcmp(lines[1], "beta") && !strcmp(lines[2], "gamma"), "lines content");
    datm_lines_free(lines, nl);

    /* corpus: test_obs uses test.labels; dataset resolution */
    char set[200];
    snprintf(set, sizeof set, "%s/myset", dir);
    mkdir(set, 0755);
    snprintf(p3, sizeof p3, "%s/test_obs.docword.gz", set);
    datm_docword_write(p3, &a, 1, &err);
    snprintf(p3, sizeof p3, "%s/test.labels", set);
    tu_write_text(p3, "0\n1\n1\n0\n");
    datm_corpus cp;
    CHECK(datm_corpus_load(set, "test_obs", &cp, &err) == 0, "corpus: %s", err.msg);
    CHECK(cp.labels && cp.labels[1] == 1 && cp.n_classes == 2 && !cp.vocab, "corpus test_obs labels");
    datm_corpus_free(&cp);

    char out[512];
    setenv("DATM_DATA", dir, 1);
    CHECK(datm_dataset_resolve("myset", out, sizeof out, &err) == 0 && !strcmp(out, set),
          "resolve via DATM_DATA: %s", err.msg);
    CHECK(datm_dataset_resolve(set, out, sizeof out, &err) == 0 && !strcmp(out, set), "resolve path");
    CHECK(datm_dataset_resolve("no_such_set_xyz", out, sizeof out, &err) == DATM_E_IO &&
          strstr(err.msg, "no_such_set_xyz"), "resolve missing: %s", err.msg);
    /* .cache/data/NAME relative to the working directory */
    char cache[400];
    snprintf(cache, sizeof cache, "%s/.cache/data/cached_set", dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", cache);
    CHECK(system(cmd) == 0, "mkdir");
    char cwd[512];
    CHECK(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
    CHECK(chdir(dir) == 0, "chdir");
    unsetenv("DATM_SOURCE_DIR");
    CHECK(datm_dataset_resolve("cached_set", out, sizeof out, &err) == 0 &&
          !strcmp(out, ".cache/data/cached_set"), "resolve .cache: %s", err.msg);
    CHECK(chdir(cwd) == 0, "chdir back");

    datm_csr_free(&a);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) printf("warning: could not remove %s\n", dir);
    return check_result();
}
