/* tests/api_example.c: a program built against the installed libdatm with
 * `pkg-config --cflags --libs datm` (tests/test_api_install.sh): open a run, print its shape
 * and the top words of its first topic, infer theta for a docword file, print the first
 * document's layer-1 theta. */
#include <datm.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    datm_trained *m;
    datm_docs *d;
    datm_error e;
    if (argc < 3 || datm_open(argv[1], &m, &e)) { fprintf(stderr, "%s\n", argc < 3 ? "usage" : e.msg); return 1; }
    int L = datm_layers(m);
    int64_t k1 = datm_topics(m, 1);
    int32_t *ids = malloc((size_t)(k1 * 5) * sizeof *ids);   /* (K_1, 5): every topic's top 5 */
    printf("api %d variant %s layers %d vocab %lld\n", datm_api_version(), datm_variant(m), L,
           (long long)datm_vocab_size(m));
    if (datm_top_words(m, 1, 5, ids, NULL, &e) || datm_docs_read(argv[2], &d, &e)) { fprintf(stderr, "%s\n", e.msg); return 1; }
    printf("topic 1:");
    for (int j = 0; j < 5; j++) printf(" %s", datm_word(m, ids[j]));
    free(ids);
    float *theta[8] = {0};
    int64_t n = datm_docs_count(d);
    theta[0] = malloc((size_t)(n * k1) * sizeof(float));
    if (datm_infer(m, d, 0, 1, 2, theta, &e)) { fprintf(stderr, "%s\n", e.msg); return 1; }
    printf("\ndocs %lld theta_1[0]:", (long long)n);
    for (int64_t k = 0; k < k1; k++) printf(" %.9g", (double)theta[0][k]);
    printf("\n");
    free(theta[0]);
    datm_docs_free(d);
    datm_close(m);
    return 0;
}
