/* engine/eval/coherence_suite.c: the coherence measures NPMI, UCI, UMass and C_V per topic
 * (formulas in coherence.h) and the driver that scores every layer of a topic set against a
 * reference corpus with the settings it records. Letters: K topics, n words per topic, m of
 * them scored (found in the reference). */
#include "eval/coherence.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eval/topic_diag.h"

static const char *const coh_names[] = {"npmi", "uci", "umass", "cv"};
_Static_assert(DATM_COUNTOF(coh_names) == DATM_COH_COUNT_, "one name per measure");

/* other spellings users bring from gensim and the literature */
static const struct { const char *alias; datm_coh_measure m; } coh_alias[] = {
    {"c_npmi", DATM_COH_NPMI}, {"c_uci", DATM_COH_UCI}, {"pmi", DATM_COH_UCI},
    {"u_mass", DATM_COH_UMASS}, {"c_v", DATM_COH_CV},
};

const char *datm_coh_name(datm_coh_measure m)
{
    return (m >= 0 && m < DATM_COH_COUNT_) ? coh_names[m] : "?";
}

static int coh_lookup(const char *w, size_t n)
{
    for (int m = 0; m < DATM_COH_COUNT_; m++)
        if (strlen(coh_names[m]) == n && !strncmp(w, coh_names[m], n)) return m;
    for (size_t i = 0; i < DATM_COUNTOF(coh_alias); i++)
        if (strlen(coh_alias[i].alias) == n && !strncmp(w, coh_alias[i].alias, n))
            return coh_alias[i].m;
    return -1;
}

int datm_coh_parse_list(const char *text, unsigned *mask, datm_error *err)
{
    *mask = 0;
    const char *p = text;
    while (*p) {
        while (*p && (isspace((unsigned char)*p) || *p == ',' || *p == '[' || *p == ']')) p++;
        if (!*p) break;
        const char *q = p;
        while (*q && !isspace((unsigned char)*q) && *q != ',' && *q != '[' && *q != ']') q++;
        const size_t n = (size_t)(q - p);
        if (n == 3 && !strncmp(p, "all", 3)) {
            *mask |= (1u << DATM_COH_COUNT_) - 1;
        } else {
            const int m = coh_lookup(p, n);
            if (m < 0)
                return datm_error_set(err, DATM_E_INVALID, "coherence: unknown measure '%.*s' "
                                      "(known: npmi, uci, umass, cv, all)", (int)n, p);
            *mask |= 1u << m;
        }
        p = q;
    }
    if (!*mask)
        return datm_error_set(err, DATM_E_INVALID, "coherence: no measure in '%s'", text);
    return DATM_OK;
}

double datm_mean_finite(const double *x, const uint8_t *keep, int64_t K)
{
    double s = 0;
    int64_t n = 0;
    for (int64_t k = 0; k < K; k++)
        if ((!keep || keep[k]) && isfinite(x[k])) { s += x[k]; n++; }
    return n ? s / (double)n : NAN;
}

/* The scored words of one topic: those of its first n that occur in the reference. */
static int scored_words(const datm_doc_index *ix, const int32_t *w, int n, int32_t *out,
                        int64_t *df, int64_t k, datm_error *err)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        const int64_t d = datm_doc_index_df(ix, w[i]);
        if (d < 0)
            return -datm_error_set(err, DATM_E_INVALID, "coherence: topic %lld: word %d not "
                                   "indexed", (long long)k, w[i]);
        if (d == 0) continue;
        out[m] = w[i];
        df[m++] = d;
    }
    return m;
}

static double cosine(const double *a, const double *b, int m)
{
    double ab = 0, aa = 0, bb = 0;
    for (int i = 0; i < m; i++) { ab += a[i] * b[i]; aa += a[i] * a[i]; bb += b[i] * b[i]; }
    return (aa > 0 && bb > 0) ? ab / sqrt(aa * bb) : NAN;
}

/* C_V of the m scored words: S_ij = NPMI(w_i, w_j) (diagonal included), the set's context
 * vector u = sum_i S_i, the score = mean_i cos(S_i, u). */
static double cv_score(const datm_doc_index *ix, const int32_t *w, const int64_t *df, int m,
                       double *S, double *u)
{
    for (int i = 0; i < m; i++)
        for (int j = i; j < m; j++) {
            const int64_t co = i == j ? df[i] : datm_doc_index_co(ix, w[i], w[j]);
            S[i * m + j] = S[j * m + i] = datm_npmi_pair(co, df[i], df[j], ix->n_docs,
                                                         DATM_NPMI_EPS);
        }
    for (int j = 0; j < m; j++) {
        u[j] = 0;
        for (int i = 0; i < m; i++) u[j] += S[i * m + j];
    }
    double s = 0;
    int cnt = 0;
    for (int i = 0; i < m; i++) {
        const double c = cosine(S + i * m, u, m);
        if (isnan(c)) continue;
        s += c;
        cnt++;
    }
    return cnt ? s / cnt : NAN;
}

/* NPMI, UCI (pairs i < j) or UMass (each word given every better-ranked one). */
static double pair_score(const datm_doc_index *ix, datm_coh_measure meas, const int32_t *w,
                         const int64_t *df, int m)
{
    double s = 0;
    int64_t cnt = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < i; j++) {
            const int64_t co = datm_doc_index_co(ix, w[i], w[j]);
            double v;
            if (meas == DATM_COH_NPMI) v = datm_npmi_pair(co, df[j], df[i], ix->n_docs, DATM_NPMI_EPS);
            else if (meas == DATM_COH_UCI) v = datm_pmi_pair(co, df[j], df[i], ix->n_docs, DATM_NPMI_EPS);
            else v = datm_umass_pair(co, df[j], ix->n_docs, DATM_NPMI_EPS);
            if (isnan(v)) continue;
            s += v;
            cnt++;
        }
    return cnt ? s / (double)cnt : NAN;
}

int datm_coherence_topics(const datm_doc_index *ix, datm_coh_measure meas,
                          const int32_t *top_ids, int64_t K, int stride, int n, double *score,
                          datm_error *err)
{
    if (meas < 0 || meas >= DATM_COH_COUNT_)
        return datm_error_set(err, DATM_E_INVALID, "coherence: measure %d", (int)meas);
    if (n > stride || n < 2)
        return datm_error_set(err, DATM_E_INVALID, "coherence: %d words per topic (need 2..%d)",
                              n, stride);
    int32_t w[n];
    int64_t df[n];
    double *S = datm_alloc_array((size_t)(n * n) + (size_t)n, sizeof *S, err);
    if (!S) return DATM_E_NOMEM;
    int rc = DATM_OK;
    for (int64_t k = 0; k < K && !rc; k++) {
        const int m = scored_words(ix, top_ids + k * stride, n, w, df, k, err);
        if (m < 0) { rc = -m; break; }
        if (m < 2) { score[k] = NAN; continue; }
        score[k] = meas == DATM_COH_CV ? cv_score(ix, w, df, m, S, S + n * n)
                                       : pair_score(ix, meas, w, df, m);
    }
    datm_free(S);
    return rc;
}

void datm_coh_opts_default(datm_coh_opts *o)
{
    o->measures = 1u << DATM_COH_NPMI;
    o->top_n = DATM_NPMI_TOP_N;
    o->window = 0;
}

/* Means over all topics and over live ones, for every measure present. */
void datm_topic_set_summarise(datm_topic_set *s)
{
    for (int l = 0; l < s->n_layers; l++) {
        datm_topic_layer *t = &s->layer[l];
        uint8_t *live = NULL;
        if (t->unused) {
            datm_error e;
            live = datm_alloc_array((size_t)t->k + 1, sizeof *live, &e);
            for (int64_t k = 0; live && k < t->k; k++) live[k] = !t->unused[k];
        }
        for (int m = 0; m < DATM_TOPIC_MEASURES; m++) {
            t->score_mean[m] = t->score[m] ? datm_mean_finite(t->score[m], NULL, t->k) : NAN;
            t->score_live[m] = t->score[m] ? datm_mean_finite(t->score[m], live, t->k) : NAN;
        }
        t->npmi = t->score[0];
        t->npmi_mean = t->score_mean[0];
        datm_free(live);
    }
}

/* The union of the first n words of every topic of every layer, for one index. */
static int32_t *all_words(const datm_topic_set *s, int n, int64_t *count, datm_error *err)
{
    int64_t total = 0;
    for (int l = 0; l < s->n_layers; l++) total += s->layer[l].k * DATM_MIN(n, s->layer[l].top_n);
    int32_t *words = datm_alloc_array((size_t)total + 1, sizeof *words, err);
    if (!words) return NULL;
    int64_t m = 0;
    for (int l = 0; l < s->n_layers; l++) {
        const datm_topic_layer *t = &s->layer[l];
        const int nn = DATM_MIN(n, t->top_n);
        for (int64_t k = 0; k < t->k; k++)
            for (int j = 0; j < nn; j++) words[m++] = t->top_ids[k * t->top_n + j];
    }
    *count = m;
    return words;
}

static int build_index(const datm_topic_set *s, const datm_coh_ref *ref, const datm_coh_opts *o,
                       datm_doc_index *ix, datm_error *err)
{
    const int64_t V = ref->T ? ref->T->n_vocab : ref->X ? ref->X->n_cols : -1;
    if (V < 0) return datm_error_set(err, DATM_E_INVALID, "coherence: no reference corpus");
    if (V != s->n_vocab)
        return datm_error_set(err, DATM_E_INVALID,
                              "coherence: reference corpus has %lld words, topics have %lld",
                              (long long)V, (long long)s->n_vocab);
    if (o->window > 0 && !ref->T)
        return datm_error_set(err, DATM_E_INVALID, "coherence: a sliding window (%lld) needs "
                              "the reference's token order; the training documents are counts "
                              "only: give evaluate.coherence.reference a text source, or "
                              "window 0", (long long)o->window);
    int64_t m = 0;
    int32_t *words = all_words(s, o->top_n, &m, err);
    if (!words) return DATM_E_NOMEM;
    int rc;
    if (ref->T)   /* window 0 over token sequences: each document is one window */
        rc = datm_doc_index_build_windows(ref->T, o->window > 0 ? o->window : INT64_MAX, words,
                                          m, ix, err);
    else
        rc = datm_doc_index_build(ref->X, words, m, ix, err);
    datm_free(words);
    return rc;
}

int datm_topic_set_coherence_ref(datm_topic_set *s, const datm_coh_ref *ref,
                                 const datm_coh_opts *o, int n_div, datm_error *err)
{
    if (o->top_n < 2)
        return datm_error_set(err, DATM_E_INVALID, "coherence: top_n %d (need >= 2)", o->top_n);
    if (o->window < 0)
        return datm_error_set(err, DATM_E_INVALID, "coherence: window %lld (need >= 0)",
                              (long long)o->window);
    datm_doc_index ix;
    int rc = build_index(s, ref, o, &ix, err);
    if (rc) return rc;
    const unsigned measures = o->measures | (1u << DATM_COH_NPMI);
    for (int l = 0; l < s->n_layers && !rc; l++) {
        datm_topic_layer *t = &s->layer[l];
        const int nn = DATM_MIN(o->top_n, t->top_n);
        for (int m = 0; m < DATM_COH_COUNT_ && !rc; m++) {
            datm_free(t->score[m]);
            t->score[m] = NULL;
            if (!(measures & (1u << m))) continue;
            t->score[m] = datm_alloc_array((size_t)t->k + 1, sizeof *t->score[m], err);
            if (!t->score[m]) { rc = DATM_E_NOMEM; break; }
            if (nn >= 2)
                rc = datm_coherence_topics(&ix, (datm_coh_measure)m, t->top_ids, t->k, t->top_n,
                                           nn, t->score[m], err);
            else
                for (int64_t k = 0; k < t->k; k++) t->score[m][k] = NAN;
        }
        t->diversity = datm_topic_diversity(t->top_ids, t->k, t->top_n, DATM_MIN(n_div, t->top_n));
    }
    datm_doc_index_free(&ix);
    if (rc) return rc;
    s->measures = measures;
    s->coh_top_n = o->top_n;
    s->coh_window = o->window;
    datm_topic_set_summarise(s);
    return DATM_OK;
}

int datm_topic_set_coherence(datm_topic_set *s, const datm_csr *X, int n_npmi, int n_div,
                             datm_error *err)
{
    datm_coh_opts o;
    datm_coh_opts_default(&o);
    o.top_n = n_npmi;
    datm_coh_ref ref = {X, NULL};
    snprintf(s->coh_reference, sizeof s->coh_reference, "training documents");
    return datm_topic_set_coherence_ref(s, &ref, &o, n_div, err);
}
