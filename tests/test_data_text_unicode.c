/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_data */
/* tests/test_data_text_unicode.c: text in any language for `datm corpus build`
 * (engine/data/tokenize.h, corpus_build_readers.c), worked out by hand:
 * - tokens: French elision and accents, German sharp s under case folding, a decomposed
 *   accent put in NFC, Greek final sigma folded, Devanagari with its vowel signs, Chinese and
 *   Thai cut into dictionary words by ICU, digits and apostrophes as separators, lengths in
 *   characters; invalid UTF-8 rejected with its column and byte, no token emitted;
 * - the ASCII fast path gives what the ICU path gives, on 3,000 random ASCII lines;
 * - stop words: every built-in list sorted and unique, look-ups in fr, de, es; a stop-word
 *   file is normalised like the tokens;
 * - readers: the same three documents as lines, JSON Lines, CSV (a quoted field over two
 *   lines, doubled quotes), Matrix Market and LDA-C give byte-identical train.docword.gz and
 *   vocab.txt; labels from a JSON field and a CSV column; errors name file:line (missing
 *   field, bad JSON, wrong field count, missing column, bad counts, duplicate entries, a pair
 *   count that disagrees with M). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/corpus_build.h"
#include "data/data.h"
#include "data/tokenize.h"
#include "test_check.h"
#include "test_util.h"

typedef struct toks { char buf[4096]; int n; } toks;

static int collect(void *user, const char *tok, size_t len)
{
    toks *t = user;
    size_t o = strlen(t->buf);
    snprintf(t->buf + o, sizeof t->buf - o, "%s%.*s", t->n ? "|" : "", (int)len, tok);
    t->n++;
    return 0;
}

/* tokens of line joined by '|' (min_len, max_len as given); rc in *rc */
static const char *tokens(datm_tokenizer *tk, const char *line, int *rc)
{
    static toks t;
    memset(&t, 0, sizeof t);
    tk->on_token = collect;
    tk->user = &t;
    int blank;
    *rc = datm_tokenize_line(tk, line, strlen(line), &blank);
    return t.buf;
}

static void expect(datm_tokenizer *tk, const char *line, const char *want)
{
    int rc;
    const char *got = tokens(tk, line, &rc);
    CHECK(rc == 0 && !strcmp(got, want), "tokens of '%s': '%s' (rc %d), expected '%s'", line, got, rc, want);
}

static void test_tokens(void)
{
    datm_tokenizer tk = {.min_len = 1, .max_len = 30};
    expect(&tk, "L'\xc3\xa9t\xc3\xa9 \xc3\xa0 Paris, l'\xc3\x89" "COLE", "l|\xc3\xa9t\xc3\xa9|\xc3\xa0|paris|l|\xc3\xa9" "cole");
    expect(&tk, "Stra\xc3\x9f" "e STRASSE stra\xc3\x9f" "e", "strasse|strasse|strasse");
    expect(&tk, "e\xcc\x81te\xcc\x81", "\xc3\xa9t\xc3\xa9");                      /* e + U+0301 -> NFC */
    expect(&tk, "\xce\xa3\xce\x9f\xce\xa6\xce\x9f\xce\xa3 \xcf\x83\xce\xbf\xcf\x86\xcf\x8c\xcf\x82",
           "\xcf\x83\xce\xbf\xcf\x86\xce\xbf\xcf\x83|\xcf\x83\xce\xbf\xcf\x86\xcf\x8c\xcf\x83");   /* ΣΟΦΟΣ σοφός */
    expect(&tk, "\xe0\xa4\xb9\xe0\xa4\xbf\xe0\xa4\xa8\xe0\xa5\x8d\xe0\xa4\xa6\xe0\xa5\x80 \xe0\xa4\xad\xe0\xa4\xbe\xe0\xa4\xb7\xe0\xa4\xbe",
           "\xe0\xa4\xb9\xe0\xa4\xbf\xe0\xa4\xa8\xe0\xa5\x8d\xe0\xa4\xa6\xe0\xa5\x80|\xe0\xa4\xad\xe0\xa4\xbe\xe0\xa4\xb7\xe0\xa4\xbe");   /* हिन्दी भाषा */
    /* 我们喜欢机器学习 -> 我们 喜欢 机器 学习 */
    expect(&tk, "\xe6\x88\x91\xe4\xbb\xac\xe5\x96\x9c\xe6\xac\xa2\xe6\x9c\xba\xe5\x99\xa8\xe5\xad\xa6\xe4\xb9\xa0\xe3\x80\x82",
           "\xe6\x88\x91\xe4\xbb\xac|\xe5\x96\x9c\xe6\xac\xa2|\xe6\x9c\xba\xe5\x99\xa8|\xe5\xad\xa6\xe4\xb9\xa0");
    /* ภาษาไทย -> ภาษา ไทย */
    expect(&tk, "\xe0\xb8\xa0\xe0\xb8\xb2\xe0\xb8\xa9\xe0\xb8\xb2\xe0\xb9\x84\xe0\xb8\x97\xe0\xb8\xa2",
           "\xe0\xb8\xa0\xe0\xb8\xb2\xe0\xb8\xa9\xe0\xb8\xb2|\xe0\xb9\x84\xe0\xb8\x97\xe0\xb8\xa2");
    expect(&tk, "3rd x2 don't e-mail \xc3\xa9l\xc3\xa8ve42", "rd|x|don|t|e|mail|\xc3\xa9l\xc3\xa8ve");
    /* lengths count characters, not bytes */
    tk.min_len = 2;
    tk.max_len = 3;
    tk.long_tokens = 0;
    expect(&tk, "\xc3\xa0 \xc3\xa9t\xc3\xa9 \xc3\xa9" "cole", "\xc3\xa9t\xc3\xa9");
    CHECK(tk.long_tokens == 1, "long tokens %lld", (long long)tk.long_tokens);
    /* invalid UTF-8: error, column and byte, nothing emitted */
    int rc;
    const char *got = tokens(&tk, "ab cd\xe2\x82 ef", &rc);
    CHECK(rc == DATM_E_FORMAT && tk.bad_column == 6 && tk.bad_byte == 0xE2 && got[0] == '\0',
          "invalid UTF-8: rc %d column %lld byte %02X tokens '%s'", rc, (long long)tk.bad_column,
          tk.bad_byte, got);
    /* stop-word normalisation */
    char w[64];
    size_t n;
    CHECK(datm_token_normalize(&tk, "\xc3\x9c" "BER", 5, w, sizeof w, &n) == 0 && !strcmp(w, "\xc3\xbc" "ber") && n == 5,
          "normalise Über: '%s'", w);
    CHECK(datm_token_normalize(&tk, "x\xff", 2, w, sizeof w, &n) == DATM_E_FORMAT, "normalise bad UTF-8");
    datm_tokenizer_free(&tk);
}

static uint64_t rs = 0x853c49e6748fea9bULL;
static unsigned rnd(unsigned n)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return (unsigned)(rs % n);
}

static void test_ascii_equals_icu(void)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:'-_/\"!?()&%$#@";
    datm_tokenizer tk = {.min_len = 2, .max_len = 8};
    int bad = 0;
    for (int i = 0; i < 3000 && bad < 5; i++) {
        char line[200], both[220];
        const int len = 1 + (int)rnd(80);
        for (int j = 0; j < len; j++) line[j] = alphabet[rnd(sizeof alphabet - 1)];
        line[len] = '\0';
        /* a one-letter non-ASCII word (dropped by min_len 2) sends the line through ICU */
        snprintf(both, sizeof both, "%s \xc3\xa9", line);
        int r1, r2;
        char a[4096];
        snprintf(a, sizeof a, "%s", tokens(&tk, line, &r1));
        const char *b = tokens(&tk, both, &r2);
        if (r1 || r2 || strcmp(a, b)) {
            CHECK(0, "ASCII '%s': fast path '%s', ICU '%s'", line, a, b);
            bad++;
        }
    }
    datm_tokenizer_free(&tk);
}

static void test_stoplists(void)
{
    static const char *const langs[] = {"en", "fr", "de", "es"};
    for (size_t l = 0; l < 4; l++) {
        const int64_t n = datm_stopword_lang_count(langs[l]);
        CHECK(n > 100, "%s: %lld words", langs[l], (long long)n);
        for (int64_t i = 1; i < n; i++)
            CHECK(strcmp(datm_stopword_lang_at(langs[l], i - 1), datm_stopword_lang_at(langs[l], i)) < 0,
                  "%s list not sorted/unique at %lld", langs[l], (long long)i);
    }
    CHECK(datm_stopword_lang_is("fr", "\xc3\xa9t\xc3\xa9") && datm_stopword_lang_is("fr", "nous") &&
          !datm_stopword_lang_is("fr", "fromage"), "fr look-ups");
    CHECK(datm_stopword_lang_is("de", "dass") && datm_stopword_lang_is("de", "\xc3\xbc" "ber") &&
          !datm_stopword_lang_is("de", "haus"), "de look-ups");
    CHECK(datm_stopword_lang_is("es", "m\xc3\xa1s") && !datm_stopword_lang_is("es", "casa"), "es look-ups");
    CHECK(datm_stopword_lang_count("xx") == -1 && !datm_stopword_lang_is("xx", "a"), "unknown language");
}

/* ---- readers ---- */

static char root[256];

static const char *path_of(const char *rel)
{
    static char p[8][600];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/%s", root, rel);
    return p[k];
}

static void put(const char *rel, const char *text) { tu_write_text(path_of(rel), text); }

static int build(datm_text_format fmt, const char *input, const char *out, const char *text_field,
                 const char *label_field, const char *vocab, const char *labels, datm_error *err)
{
    datm_corpus_build_opts o;
    datm_corpus_build_defaults(&o);
    o.format = fmt;
    o.input = path_of(input);
    o.out_dir = path_of(out);
    o.text_field = text_field;
    o.label_field = label_field;
    o.vocab_path = vocab ? path_of(vocab) : NULL;
    o.labels_path = labels ? path_of(labels) : NULL;
    o.stopwords_lang = "fr";
    o.min_df = 1;
    o.max_df = 1.0;
    o.test_frac = 0;
    datm_corpus_build_stats st;
    return datm_corpus_build(&o, &st, err);
}

static void same_files(const char *a, const char *b)
{
    static const char *const files[] = {"train.docword.gz", "vocab.txt"};
    for (int i = 0; i < 2; i++) {
        char pa[700], pb[700];
        snprintf(pa, sizeof pa, "%s/%s", path_of(a), files[i]);
        snprintf(pb, sizeof pb, "%s/%s", path_of(b), files[i]);
        long na = -1, nb = -2;
        char *x = tu_slurp(pa, &na), *y = tu_slurp(pb, &nb);
        CHECK(x && y && na == nb && !memcmp(x, y, (size_t)na), "%s of %s and %s differ", files[i], a, b);
        free(x);
        free(y);
    }
}

static void test_readers(void)
{
    datm_error err = {0};
    /* three documents; "le", "et" are French stop words */
    put("docs.txt", "Le fromage et le caf\xc3\xa9\nLe train part\nCaf\xc3\xa9 caf\xc3\xa9 fromage\n");
    CHECK(build(DATM_TEXT_LINES, "docs.txt", "o_lines", NULL, NULL, NULL, NULL, &err) == 0, "lines: %s", err.msg);
    put("docs.jsonl", "{\"id\": 1, \"text\": \"Le fromage et le caf\xc3\xa9\", \"cat\": \"food\"}\n\n"
                      "{\"text\": \"Le train part\", \"cat\": \"travel\"}\n"
                      "{\"text\": \"Caf\\u00e9 caf\\u00e9 fromage\", \"cat\": 7}\n");
    CHECK(build(DATM_TEXT_JSONL, "docs.jsonl", "o_jsonl", NULL, "cat", NULL, NULL, &err) == 0, "jsonl: %s", err.msg);
    same_files("o_lines", "o_jsonl");
    long n;
    char *lab = tu_slurp(path_of("o_jsonl/classes.txt"), &n);
    CHECK(lab && !strcmp(lab, "7\nfood\ntravel\n"), "jsonl classes: %s", lab ? lab : "(none)");
    free(lab);
    put("docs.csv", "id,body,cat\n1,\"Le fromage\net le caf\xc3\xa9\",food\n2,\"Le \"\"train\"\" part\",travel\n"
                    "3,Caf\xc3\xa9 caf\xc3\xa9 fromage,food\n");
    CHECK(build(DATM_TEXT_CSV, "docs.csv", "o_csv", "body", "cat", NULL, NULL, &err) == 0, "csv: %s", err.msg);
    same_files("o_lines", "o_csv");
    /* the counts as Matrix Market and LDA-C over the vocabulary fromage caf\xc3\xa9 train part */
    put("words.txt", "fromage\ncaf\xc3\xa9\ntrain\npart\n");
    put("docs.mtx", "%%MatrixMarket matrix coordinate integer general\n% a comment\n3 4 6\n"
                    "1 1 1\n1 2 1\n2 3 1\n2 4 1\n3 2 2\n3 1 1\n");
    CHECK(build(DATM_TEXT_MM, "docs.mtx", "o_mm", NULL, NULL, "words.txt", NULL, &err) == 0, "mm: %s", err.msg);
    same_files("o_lines", "o_mm");
    put("docs.ldac", "2 0:1 1:1\n2 2:1 3:1\n2 1:2 0:1\n");
    CHECK(build(DATM_TEXT_LDAC, "docs.ldac", "o_ldac", NULL, NULL, "words.txt", NULL, &err) == 0, "ldac: %s", err.msg);
    same_files("o_lines", "o_ldac");

    /* errors name file:line */
    put("e1.jsonl", "{\"text\": \"a b\"}\n{\"body\": \"c\"}\n");
    CHECK(build(DATM_TEXT_JSONL, "e1.jsonl", "o_e", NULL, NULL, NULL, NULL, &err) == DATM_E_FORMAT &&
          strstr(err.msg, "e1.jsonl:2: field \"text\" is missing"), "jsonl missing field: %s", err.msg);
    put("e2.jsonl", "{\"text\": \"a b\"}\n{\"text\": \"c\",}\n");
    CHECK(build(DATM_TEXT_JSONL, "e2.jsonl", "o_e", NULL, NULL, NULL, NULL, &err) == DATM_E_FORMAT &&
          strstr(err.msg, "e2.jsonl:2: not a JSON object"), "jsonl bad JSON: %s", err.msg);
    put("e3.jsonl", "{\"text\": \"caf\xc3 b\"}\n");
    CHECK(build(DATM_TEXT_JSONL, "e3.jsonl", "o_e", NULL, NULL, NULL, NULL, &err) == DATM_E_FORMAT &&
          strstr(err.msg, "e3.jsonl:1:14: invalid UTF-8 (byte 0xC3)"), "jsonl bad UTF-8: %s", err.msg);
    put("e4.csv", "text,cat\n\"a b\",x\nc d\n");
    CHECK(build(DATM_TEXT_CSV, "e4.csv", "o_e", NULL, "cat", NULL, NULL, &err) == DATM_E_FORMAT &&
          strstr(err.msg, "e4.csv:3: 1 field(s) in this record, the header has 2"), "csv fields: %s", err.msg);
    CHECK(build(DATM_TEXT_CSV, "e4.csv", "o_e", "body", NULL, NULL, NULL, &err) == DATM_E_FORMAT &&
          strstr(err.msg, "e4.csv:1: no column \"body\""), "csv column: %s", err.msg);
    put("e5.mtx", "%%MatrixMarket matrix coordinate real general\n2 4 2\n1 1 2.5\n2 2 1\n");
    CHECK(build(DATM_TEXT_MM, "e5.mtx", "o_e", NULL, NULL, "words.txt", NULL, &err) == DATM_E_FORMAT &&
          strstr(err.msg, "e5.mtx:3: expected 'document word count'"), "mm real count: %s", err.msg);
    put("e6.mtx", "%%MatrixMarket matrix coordinate integer general\n2 4 2\n1 1 2\n1 1 1\n");
    CHECK(build(DATM_TEXT_MM, "e6.mtx", "o_e", NULL, NULL, "words.txt", NULL, &err) == DATM_E_FORMAT &&
          strstr(err.msg, "e6.mtx:4: document 1, word 1 given twice"), "mm duplicate: %s", err.msg);
    put("e7.ldac", "2 0:1 1:1\n3 2:1 3:1\n");
    CHECK(build(DATM_TEXT_LDAC, "e7.ldac", "o_e", NULL, NULL, "words.txt", NULL, &err) == DATM_E_FORMAT &&
          strstr(err.msg, "e7.ldac:2: 2 id:count pairs, the line starts with 3"), "ldac M: %s", err.msg);
    put("e8.ldac", "1 4:1\n");
    CHECK(build(DATM_TEXT_LDAC, "e8.ldac", "o_e", NULL, NULL, "words.txt", NULL, &err) == DATM_E_FORMAT &&
          strstr(err.msg, "e8.ldac:1: pair 1: expected 'id:count' with id in 0..3"), "ldac id: %s", err.msg);
    struct stat sb;
    CHECK(stat(path_of("o_e"), &sb) != 0, "no output after errors");
    /* a stop-word file in another language, normalised like the tokens */
    put("stop.txt", "LE\nCAF\xc3\x89\n");
    datm_corpus_build_opts o;
    datm_corpus_build_defaults(&o);
    o.format = DATM_TEXT_LINES;
    o.input = path_of("docs.txt");
    o.out_dir = path_of("o_stop");
    o.stopwords_path = path_of("stop.txt");
    o.min_df = 1;
    o.max_df = 1.0;
    o.test_frac = 0;
    datm_corpus_build_stats st;
    CHECK(datm_corpus_build(&o, &st, &err) == 0 && st.n_stop_tokens == 6, "stop file: %s, %lld stop tokens",
          err.msg, (long long)st.n_stop_tokens);
}

int main(void)
{
    test_tokens();
    test_ascii_equals_icu();
    test_stoplists();
    snprintf(root, sizeof root, "/tmp/datm_test_unicode_XXXXXX");
    if (!mkdtemp(root)) { perror("mkdtemp"); return 1; }
    test_readers();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
    return check_result();
}
