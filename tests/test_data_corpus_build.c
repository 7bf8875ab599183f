/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_data */
/* tests/test_data_corpus_build.c: `datm corpus build` on small hand-made inputs whose
 * output is worked out by hand in the comments below:
 *  - dir format with categories from sub-directories: tokens (case-folded letter runs,
 *    >= 2 letters; a non-ASCII letter is a letter and is counted), our stop words removed,
 *    a text without tokens counted, vocabulary order (count, then document frequency, then
 *    byte order), per-document counts, labels, classes; invalid UTF-8 is an error naming
 *    file:line:column;
 *  - paragraph units; chunk units including the merge of a short tail;
 *  - Brown tagged items (tags stripped, untagged items counted);
 *  - stratified seeded split of the texts (exact per-class test counts; the vocabulary
 *    comes from the training texts only; another seed gives another split);
 *  - byte-identical output when re-run; errors for bad options and inputs;
 *  - datm_utf8_check on valid and invalid sequences; the stop list is sorted and unique. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/corpus_build.h"
#include "data/data.h"
#include "data/tokenize.h"
#include "test_check.h"
#include "test_util.h"

static char tmp[64];

static void put(const char *rel, const char *text)
{
    char path[512], cmd[600];
    snprintf(path, sizeof path, "%s/%s", tmp, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    snprintf(cmd, sizeof cmd, "mkdir -p %s", path);
    if (system(cmd) != 0) exit(1);
    *slash = '/';
    tu_write_text(path, text);
}

/* tmp/rel in a buffer that lives until free_paths() (options keep pointers to them). */
static char *paths[256];
static int n_paths;
static char *path_of(const char *rel)
{
    if (n_paths == 256) exit(1);
    char *b = malloc(512);
    snprintf(b, 512, "%s/%s", tmp, rel);
    return paths[n_paths++] = b;
}
static void free_paths(void)
{
    while (n_paths > 0) free(paths[--n_paths]);
}

/* Count of `word` in document d of a loaded corpus (0 if absent or not in the vocab). */
static float count_of(const datm_corpus *c, int64_t d, const char *word)
{
    for (int64_t j = c->X.row_ptr[d]; j < c->X.row_ptr[d + 1]; j++)
        if (!strcmp(c->vocab[c->X.col[j]], word)) return c->X.val[j];
    return 0;
}

static int has_word(const datm_corpus *c, const char *w)
{
    for (int64_t v = 0; v < c->n_vocab; v++) if (!strcmp(c->vocab[v], w)) return 1;
    return 0;
}

static void test_dir(void)
{
    put("news/sport/a.txt", "The team won the game.\n\n  The game was long; the team played well.\n");
    put("news/sport/b.txt", "Game game GAME team score.\n");
    put("news/politics/c.txt", "The election vote count, the vote.\n");
    put("news/politics/d.txt", "Election caf\xc3\xa9 vote\n");
    put("news/politics/empty.txt", "  123 !!\n");
    put("news/.hidden", "hidden hidden hidden\n");
    datm_corpus_build_opts o;
    datm_corpus_build_defaults(&o);
    o.input = path_of("news");
    o.out_dir = path_of("out_dir");
    o.label_subdir = 1;
    o.min_df = 1;
    o.max_df = 1.0;
    o.test_frac = 0;
    datm_corpus_build_stats st;
    datm_error err = {0};
    CHECK(datm_corpus_build(&o, &st, &err) == 0, "dir build: %s", err.msg);
    /* tokens by hand (files in byte order: politics/c, politics/d, politics/empty, sport/a, sport/b):
     *   c: election vote count vote  (+2 x "the")       d: election café vote
     *   a: team won game game long team played (+ the x4, was, well)   b: game x3 team score */
    CHECK(st.n_texts == 5 && st.n_texts_empty == 1, "texts %lld empty %lld", (long long)st.n_texts, (long long)st.n_texts_empty);
    CHECK(st.n_utf8_error_bytes == 0 && st.n_texts_utf8_errors == 0, "utf8 errors %lld",
          (long long)st.n_utf8_error_bytes);
    CHECK(st.n_non_ascii_chars == 1, "non-ASCII %lld", (long long)st.n_non_ascii_chars);
    CHECK(st.n_stop_tokens == 8, "stop tokens %lld", (long long)st.n_stop_tokens);
    CHECK(st.n_docs_train == 4 && st.n_docs_test == 0 && st.n_vocab == 10 && st.n_classes == 2,
          "docs %lld/%lld V %lld classes %d", (long long)st.n_docs_train, (long long)st.n_docs_test,
          (long long)st.n_vocab, st.n_classes);
    datm_corpus c;
    CHECK(datm_corpus_load(o.out_dir, "train", &c, &err) == 0, "load: %s", err.msg);
    if (fails) return;
    static const char *const vocab[] = {"game", "team", "vote", "election", "caf\xc3\xa9", "count", "long", "played", "score", "won"};
    for (int v = 0; v < 10; v++) CHECK(!strcmp(c.vocab[v], vocab[v]), "vocab[%d] = %s, want %s", v, c.vocab[v], vocab[v]);
    CHECK(count_of(&c, 0, "vote") == 2 && count_of(&c, 0, "election") == 1 && count_of(&c, 0, "count") == 1 &&
          c.X.row_ptr[1] == 3, "doc 0 (c.txt)");
    CHECK(count_of(&c, 1, "caf\xc3\xa9") == 1 && c.X.row_ptr[2] - c.X.row_ptr[1] == 3, "doc 1 (d.txt)");
    CHECK(count_of(&c, 2, "team") == 2 && count_of(&c, 2, "game") == 2 && count_of(&c, 2, "won") == 1 &&
          datm_csr_row_total(&c.X, 2) == 7, "doc 2 (a.txt)");
    CHECK(count_of(&c, 3, "game") == 3 && count_of(&c, 3, "score") == 1 && datm_csr_row_total(&c.X, 3) == 5, "doc 3 (b.txt)");
    CHECK(c.n_classes == 2 && !strcmp(c.class_names[0], "politics") && c.labels[0] == 0 && c.labels[1] == 0 &&
          c.labels[2] == 1 && c.labels[3] == 1, "labels/classes");
    datm_corpus_free(&c);
    struct stat sb;
    CHECK(stat(path_of("out_dir/test.docword.gz"), &sb) != 0, "test split written with test_frac 0");
    long n;
    char *docs = tu_slurp(path_of("out_dir/train.docs"), &n);
    CHECK(docs && !strcmp(docs, "politics/c.txt\npolitics/d.txt\nsport/a.txt\nsport/b.txt\n"), "train.docs: %s", docs);
    free(docs);

    /* re-run: byte-identical files */
    static const char *const files[] = {"train.docword.gz", "vocab.txt", "train.labels", "classes.txt", "README.md", "train.docs"};
    char *before[6];
    long nb[6];
    for (int i = 0; i < 6; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "out_dir/%s", files[i]);
        before[i] = tu_slurp(path_of(rel), &nb[i]);
    }
    CHECK(datm_corpus_build(&o, &st, &err) == 0, "re-run: %s", err.msg);
    for (int i = 0; i < 6; i++) {
        char rel[64];
        long na;
        snprintf(rel, sizeof rel, "out_dir/%s", files[i]);
        char *after = tu_slurp(path_of(rel), &na);
        CHECK(before[i] && after && na == nb[i] && !memcmp(before[i], after, (size_t)na), "%s differs on re-run", files[i]);
        free(before[i]);
        free(after);
    }

    /* paragraphs: a.txt has two */
    o.unit = DATM_UNIT_PARAGRAPH;
    o.out_dir = path_of("out_para");
    CHECK(datm_corpus_build(&o, &st, &err) == 0, "para build: %s", err.msg);
    CHECK(st.n_docs_train == 5, "paragraph docs %lld", (long long)st.n_docs_train);
    docs = tu_slurp(path_of("out_para/train.docs"), &n);
    CHECK(docs && strstr(docs, "sport/a.txt#1\nsport/a.txt#2\n"), "paragraph provenance: %s", docs);
    free(docs);

    /* invalid UTF-8 is an error naming file:line:column; nothing is written */
    put("news/sport/b.txt", "Game game\nGAME team\xffscore.\n");
    o.out_dir = path_of("out_bad_utf8");
    CHECK(datm_corpus_build(&o, &st, &err) == DATM_E_FORMAT &&
          strstr(err.msg, "sport/b.txt:2:10: invalid UTF-8 (byte 0xFF)"), "invalid UTF-8: %s", err.msg);
    CHECK(stat(path_of("out_bad_utf8"), &sb) != 0, "nothing written after invalid UTF-8");
}

static void test_chunks_lines(void)
{
    /* line 1: 9 tokens -> chunks of 4: 4, 4, 1 -> the 1-token tail (< 2) joins: 4, 5
     * line 2: 11 tokens -> 4, 4, 3 (3 >= 2 stays) */
    put("lines.txt", "aa bb cc dd ee ff gg hh ii\naa bb cc dd ee ff gg hh ii jj kk\n");
    put("lines.labels", "x\ny\n");
    datm_corpus_build_opts o;
    datm_corpus_build_defaults(&o);
    o.format = DATM_TEXT_LINES;
    o.input = path_of("lines.txt");
    o.labels_path = path_of("lines.labels");
    o.out_dir = path_of("out_chunks");
    o.unit = DATM_UNIT_CHUNK;
    o.chunk_tokens = 4;
    o.no_stopwords = 1;
    o.min_df = 1;
    o.max_df = 1.0;
    o.test_frac = 0;
    datm_corpus_build_stats st;
    datm_error err = {0};
    CHECK(datm_corpus_build(&o, &st, &err) == 0, "chunk build: %s", err.msg);
    datm_corpus c;
    CHECK(datm_corpus_load(o.out_dir, "train", &c, &err) == 0, "load: %s", err.msg);
    if (c.X.n_rows != 5) { printf("FAIL chunk docs %lld\n", (long long)c.X.n_rows); fails++; datm_corpus_free(&c); return; }
    const double len[5] = {4, 5, 4, 4, 3};
    for (int d = 0; d < 5; d++) CHECK(datm_csr_row_total(&c.X, d) == len[d], "chunk %d has %g tokens", d, datm_csr_row_total(&c.X, d));
    CHECK(count_of(&c, 1, "ii") == 1 && count_of(&c, 4, "kk") == 1, "chunk contents");
    CHECK(c.labels[1] == 0 && c.labels[2] == 1, "chunk labels");
    datm_corpus_free(&c);

    /* errors */
    o.unit = DATM_UNIT_PARAGRAPH;
    CHECK(datm_corpus_build(&o, &st, &err) == DATM_E_INVALID, "paragraphs of lines accepted");
    o.unit = DATM_UNIT_TEXT;
    put("lines3.labels", "x\ny\nz\n");
    o.labels_path = path_of("lines3.labels");
    CHECK(datm_corpus_build(&o, &st, &err) == DATM_E_FORMAT && strstr(err.msg, "lines3.labels:3:"),
          "label count mismatch: %s", err.msg);
    o.labels_path = NULL;
    o.input = path_of("no_such_file.txt");
    CHECK(datm_corpus_build(&o, &st, &err) == DATM_E_IO && strstr(err.msg, "no_such_file.txt"), "missing input: %s", err.msg);
    o.input = path_of("lines.txt");
    o.min_df = 3;
    CHECK(datm_corpus_build(&o, &st, &err) == DATM_E_INVALID && strstr(err.msg, "empty vocabulary"), "empty vocab: %s", err.msg);
}

static void test_brown(void)
{
    put("brown/cats.txt", "ca01 news\ncb01 editorial\n");
    put("brown/ca01", "\n\n\tThe/at jury/nn said/vbd Friday/nr ./.\n\n\n\tAtlanta's/np$ election/nn ``/`` ./.\n");
    put("brown/cb01", "\tTerm-end/nn presentments/nns 1/2/cd notag\n");
    datm_corpus_build_opts o;
    datm_corpus_build_defaults(&o);
    o.format = DATM_TEXT_BROWN;
    o.input = path_of("brown");
    o.out_dir = path_of("out_brown");
    o.min_df = 1;
    o.max_df = 1.0;
    o.test_frac = 0;
    datm_corpus_build_stats st;
    datm_error err = {0};
    CHECK(datm_corpus_build(&o, &st, &err) == 0, "brown build: %s", err.msg);
    CHECK(st.n_untagged_tokens == 1, "untagged %lld", (long long)st.n_untagged_tokens);
    datm_corpus c;
    CHECK(datm_corpus_load(o.out_dir, "train", &c, &err) == 0, "load: %s", err.msg);
    if (fails) return;
    /* ca01: jury friday atlanta election (the, said: stop words; "s" too short; tags gone)
     * cb01: term end presentments notag ("1/2" has no letters) */
    CHECK(c.X.n_rows == 2 && c.n_vocab == 8, "brown D %lld V %lld", (long long)c.X.n_rows, (long long)c.n_vocab);
    static const char *const want[] = {"jury", "friday", "atlanta", "election", "term", "end", "presentments", "notag"};
    for (int i = 0; i < 8; i++) CHECK(has_word(&c, want[i]), "brown vocab lacks %s", want[i]);
    CHECK(!has_word(&c, "nn") && !has_word(&c, "at") && !has_word(&c, "np"), "brown tags leaked into the vocabulary");
    CHECK(c.labels[0] == 1 && c.labels[1] == 0 && !strcmp(c.class_names[0], "editorial"), "brown labels");
    datm_corpus_free(&c);
    put("brown_bad/cats.txt", "ca01 news\nca02\n");
    o.input = path_of("brown_bad");
    CHECK(datm_corpus_build(&o, &st, &err) == DATM_E_FORMAT && strstr(err.msg, "cats.txt:2:"), "bad cats.txt: %s", err.msg);
}

static void test_split(void)
{
    /* 200 texts, 2 classes of 100; text i = "shared uniqueI..." so a word of a test text
     * never reaches the vocabulary */
    char *text = malloc(200 * 64), *labs = malloc(200 * 8);
    size_t p = 0, q = 0;
    for (int i = 0; i < 200; i++) {
        char w[16];
        int k = 0;
        for (int x = i + 1; x > 0; x /= 26) w[k++] = (char)('a' + x % 26);
        w[k] = '\0';
        p += (size_t)sprintf(text + p, "shared zz%s\n", w);
        q += (size_t)sprintf(labs + q, "%s\n", i % 2 ? "odd" : "even");
    }
    put("split.txt", text);
    put("split.labels", labs);
    free(text);
    free(labs);
    datm_corpus_build_opts o;
    datm_corpus_build_defaults(&o);
    o.format = DATM_TEXT_LINES;
    o.input = path_of("split.txt");
    o.labels_path = path_of("split.labels");
    o.out_dir = path_of("out_split");
    o.min_df = 1;
    o.max_df = 1.0;
    o.test_frac = 0.25;
    o.seed = 11;
    datm_corpus_build_stats st;
    datm_error err = {0};
    CHECK(datm_corpus_build(&o, &st, &err) == 0, "split build: %s", err.msg);
    CHECK(st.n_docs_train == 150 && st.n_docs_test == 50 && st.n_vocab == 151 && st.oov_tokens_test == 50,
          "split: train %lld test %lld V %lld oov %lld", (long long)st.n_docs_train, (long long)st.n_docs_test,
          (long long)st.n_vocab, (long long)st.oov_tokens_test);
    datm_corpus te;
    CHECK(datm_corpus_load(o.out_dir, "test", &te, &err) == 0, "load test: %s", err.msg);
    if (fails) return;
    int per[2] = {0, 0};
    for (int64_t d = 0; d < te.X.n_rows; d++) per[te.labels[d]]++;
    CHECK(per[0] == 25 && per[1] == 25, "stratified: test classes %d %d", per[0], per[1]);
    long n1, n2;
    char *d1 = tu_slurp(path_of("out_split/test.docs"), &n1);
    o.seed = 12;
    o.out_dir = path_of("out_split2");
    CHECK(datm_corpus_build(&o, &st, &err) == 0, "split build 2: %s", err.msg);
    char *d2 = tu_slurp(path_of("out_split2/test.docs"), &n2);
    CHECK(d1 && d2 && (n1 != n2 || memcmp(d1, d2, (size_t)n1)), "seeds 11 and 12 gave the same test texts");
    free(d1);
    free(d2);
    datm_corpus_free(&te);
}

static void test_utf8_and_stoplist(void)
{
    struct { const char *s; int64_t bad, wide; } cases[] = {
        {"plain ascii", 0, 0},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0, 3},   /* e-acute, euro sign, emoji */
        {"\xc0\x80", 2, 0},                                   /* overlong NUL: C0 invalid, 80 stray */
        {"\xed\xa0\x80", 3, 0},                               /* surrogate U+D800 */
        {"\xf5\x80\x80\x80", 4, 0},                           /* beyond U+10FFFF */
        {"ab\xe2\x82", 2, 0},                                 /* truncated at the end */
        {"\x80x", 1, 0},                                      /* stray continuation byte */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t wide = -1, bad = datm_utf8_check((const unsigned char *)cases[i].s, strlen(cases[i].s), &wide);
        CHECK(bad == cases[i].bad && wide == cases[i].wide, "utf8 case %zu: bad %lld wide %lld", i, (long long)bad,
              (long long)wide);
    }
    size_t n = datm_stopword_count();
    CHECK(n > 200, "stop list too short");
    for (size_t i = 1; i < n; i++)
        CHECK(strcmp(datm_stopword_at(i - 1), datm_stopword_at(i)) < 0, "stop list not sorted at %s", datm_stopword_at(i));
    CHECK(datm_stopword_is("the") && datm_stopword_is("wouldn") && !datm_stopword_is("election"), "stop lookups");
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/datm_test_corpus_build_XXXXXX");
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 1; }
    datm_log_set_level(DATM_LOG_ERROR);
    test_dir();
    test_chunks_lines();
    test_brown();
    test_split();
    test_utf8_and_stoplist();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (system(cmd) != 0) printf("warning: could not remove %s\n", tmp);
    free_paths();
    return check_result();
}
