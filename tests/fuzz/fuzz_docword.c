/* tests/fuzz/fuzz_docword.c: libFuzzer harness of the UCI docword reader (plain or gzip).
 * Properties: no crash or sanitizer report; a rejected input gets a message naming the file;
 * an accepted one is a valid CSR (sorted unique ids in range, positive integer counts, NNZ
 * as the header said) that survives datm_docword_write + read unchanged. */
#include "data/data.h"
#include "fuzz_util.h"

static void check_csr(const datm_csr *m)
{
    if (m->row_ptr[0] != 0 || m->row_ptr[m->n_rows] != m->nnz) abort();
    for (int64_t d = 0; d < m->n_rows; d++) {
        if (m->row_ptr[d + 1] < m->row_ptr[d]) abort();
        for (int64_t j = m->row_ptr[d]; j < m->row_ptr[d + 1]; j++) {
            if (m->col[j] < 0 || m->col[j] >= m->n_cols) abort();
            if (j > m->row_ptr[d] && m->col[j] <= m->col[j - 1]) abort();
            if (!(m->val[j] >= 1.0f) || m->val[j] != (float)(int32_t)m->val[j]) abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("in.docword", data, size);
    datm_csr m = {0};
    datm_error e = {0};
    if (datm_docword_read(path, &m, &e) != DATM_OK) {
        fuzz_expect_message(&e, path);
        return 0;
    }
    check_csr(&m);
    char out[600];
    snprintf(out, sizeof out, "%s/out.docword.gz", fuzz_dir());
    datm_error e2 = {0};
    if (datm_docword_write(out, &m, size & 1, &e2) != DATM_OK) {
        fprintf(stderr, "write of an accepted matrix failed: %s\n", e2.msg);
        abort();
    }
    datm_csr r = {0};
    if (datm_docword_read(out, &r, &e2) != DATM_OK) {
        fprintf(stderr, "reading back failed: %s\n", e2.msg);
        abort();
    }
    if (r.n_rows != m.n_rows || r.n_cols != m.n_cols || r.nnz != m.nnz ||
        memcmp(r.row_ptr, m.row_ptr, (size_t)(m.n_rows + 1) * sizeof *m.row_ptr) ||
        (m.nnz && (memcmp(r.col, m.col, (size_t)m.nnz * sizeof *m.col) ||
                   memcmp(r.val, m.val, (size_t)m.nnz * sizeof *m.val))))
        abort();
    datm_csr_free(&r);
    datm_csr_free(&m);
    return 0;
}
