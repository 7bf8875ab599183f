/* tests/fuzz/fuzz_corpus.c: libFuzzer harness of a data set directory: train.docword,
 * vocab.txt, train.labels and classes.txt, given as one input cut at lines "#--" (missing
 * parts: the file is absent), loaded by datm_corpus_load, which cross-checks them (W against
 * the vocabulary, labels against D and the classes). Also the vocabulary and label readers
 * alone with sizes from the input's first bytes. Properties: no crash or sanitizer report;
 * every rejection has a message naming a file of the set; an accepted set is consistent. */
#include "data/data.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *part[4];
    size_t len[4];
    int n = fuzz_split(data, size, part, len, 4);
    static const char *const names[4] = {"train.docword", "vocab.txt", "train.labels", "classes.txt"};
    char dir[600];
    snprintf(dir, sizeof dir, "%s/set", fuzz_dir());
    mkdir(dir, 0700);
    for (int i = 0; i < 4; i++) {
        char p[700];
        snprintf(p, sizeof p, "set/%s", names[i]);
        if (i < n) fuzz_file(p, part[i], len[i]);
        else {
            snprintf(p, sizeof p, "%s/%s", dir, names[i]);
            unlink(p);
        }
    }
    datm_corpus c;
    datm_error e = {0};
    if (datm_corpus_load(dir, "train", &c, &e) != DATM_OK) {
        fuzz_expect_message(&e, dir);
    } else {
        if (c.vocab && c.n_vocab != c.X.n_cols) abort();
        if (c.labels) {
            if (c.n_classes <= 0) abort();
            for (int64_t i = 0; i < c.X.n_rows; i++)
                if (c.labels[i] < 0 || c.labels[i] >= c.n_classes) abort();
        }
        datm_corpus_free(&c);
    }

    /* the line readers alone: expected sizes from the first bytes */
    if (size >= 2) {
        const char *path = fuzz_file("lines.txt", data + 2, size - 2);
        char **lines = NULL;
        int64_t nl = 0;
        datm_error e2 = {0};
        if (datm_lines_read(path, data[0] % 8, &lines, &nl, &e2) == DATM_OK) {
            if (data[0] % 8 && nl != data[0] % 8) abort();
            for (int64_t i = 0; i < nl; i++)
                if (!lines[i]) abort();
            datm_lines_free(lines, nl);
        } else {
            fuzz_expect_message(&e2, path);
        }
        int32_t *lab = NULL;
        datm_error e3 = {0};
        const int nc = (int)(data[1] % 5) - 1;
        const int64_t nd = data[0] % 6;
        if (datm_labels_read(path, nd, nc, &lab, &e3) == DATM_OK) {
            for (int64_t i = 0; i < nd; i++)
                if (lab[i] < 0 || (nc > 0 && lab[i] >= nc)) abort();
            datm_free(lab);
        } else {
            fuzz_expect_message(&e3, path);
        }
    }
    return 0;
}
