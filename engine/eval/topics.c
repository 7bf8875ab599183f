/* engine/eval/topics.c: projected topics (paper eq. Phi_notation), top words per topic and
 * the strongest links between layers. Plain loops in double: these run once per evaluation
 * on matrices of at most V x K_1 x K_l, so clarity wins over speed here. */
#include "eval/topics.h"

#include <math.h>
#include <string.h>

#include "eval/topic_diag.h"

int datm_topics_project(int n_layers, const float *const *phi, const int64_t *k, int layer,
                        float *out, datm_error *err)
{
    if (layer < 1 || layer > n_layers || n_layers > DATM_MAX_LAYERS)
        return datm_error_set(err, DATM_E_INVALID, "topics: layer %d outside 1..%d", layer,
                              n_layers);
    const int64_t V = k[0];
    int64_t kmax = 0;
    for (int l = 1; l <= layer; l++) kmax = DATM_MAX(kmax, k[l]);
    /* cur (V, K_t) = Phi(1)...Phi(t); next = cur Phi(t+1) */
    double *cur = datm_alloc_array((size_t)(V * kmax), sizeof *cur, err);
    double *nxt = datm_alloc_array((size_t)(V * kmax), sizeof *nxt, err);
    if (!cur || !nxt) { datm_free(cur); datm_free(nxt); return DATM_E_NOMEM; }
    for (int64_t i = 0; i < V * k[1]; i++) cur[i] = phi[0][i];
    for (int t = 2; t <= layer; t++) {
        const int64_t kp = k[t - 1], kt = k[t];
        const float *p = phi[t - 1];   /* (kp, kt) */
        memset(nxt, 0, (size_t)(V * kt) * sizeof *nxt);
        for (int64_t v = 0; v < V; v++) {
            const double *row = cur + v * kp;
            double *o = nxt + v * kt;
            for (int64_t a = 0; a < kp; a++) {
                const double c = row[a];
                if (c == 0.0) continue;
                const float *pr = p + a * kt;
                for (int64_t b = 0; b < kt; b++) o[b] += c * pr[b];
            }
        }
        double *tmp = cur; cur = nxt; nxt = tmp;
    }
    for (int64_t i = 0; i < V * k[layer]; i++) out[i] = (float)cur[i];
    datm_free(cur);
    datm_free(nxt);
    return DATM_OK;
}

/* does (v, r) rank before (w, s): larger value first, then smaller row */
static int before(float v, int64_t r, float w, int64_t s)
{
    return v > w || (v == w && r < s);
}

int datm_topics_top(const float *m, int64_t rows, int64_t cols, int n, int32_t *ids,
                    float *w, datm_error *err)
{
    if (n < 0 || n > rows)
        return datm_error_set(err, DATM_E_INVALID, "topics: top %d of %lld rows", n,
                              (long long)rows);
    if (n == 0) return DATM_OK;
    float   tv[n];
    int64_t tr[n];
    for (int64_t c = 0; c < cols; c++) {
        /* keep the best n seen so far, sorted; insertion is O(n) but rare after warm-up */
        int have = 0;
        for (int64_t r = 0; r < rows; r++) {
            float v = m[r * cols + c];
            if (isnan(v)) v = -INFINITY;
            if (have == n && !before(v, r, tv[n - 1], tr[n - 1])) continue;
            int j = have < n ? have++ : n - 1;
            while (j > 0 && before(v, r, tv[j - 1], tr[j - 1])) {
                tv[j] = tv[j - 1];
                tr[j] = tr[j - 1];
                j--;
            }
            tv[j] = v;
            tr[j] = r;
        }
        for (int j = 0; j < n; j++) {
            ids[c * n + j] = (int32_t)tr[j];
            if (w) w[c * n + j] = tv[j];
        }
    }
    return DATM_OK;
}

void datm_topic_set_free(datm_topic_set *s)
{
    if (!s) return;
    for (int l = 0; l < DATM_MAX_LAYERS; l++) {
        datm_topic_layer *t = &s->layer[l];
        datm_free(t->top_ids);
        datm_free(t->top_weights);
        datm_free(t->link_ids);
        datm_free(t->link_weights);
        datm_free(t->projected);
        for (int m = 0; m < DATM_TOPIC_MEASURES; m++) datm_free(t->score[m]);
        datm_free(t->usage);
        datm_free(t->usage_theta);
        datm_free(t->unused);
        datm_free(t->nearest);
        datm_free(t->nearest_cos);
        datm_free(t->corpus_kl);
    }
    memset(s, 0, sizeof *s);
}

int datm_topic_set_build(int n_layers, const float *const *phi, const int64_t *k, int top_n,
                         int link_n, int keep_projected, datm_topic_set *out,
                         datm_error *err)
{
    memset(out, 0, sizeof *out);
    if (n_layers < 1 || n_layers > DATM_MAX_LAYERS)
        return datm_error_set(err, DATM_E_INVALID, "topics: %d layers (1..%d supported)",
                              n_layers, DATM_MAX_LAYERS);
    const int64_t V = k[0];
    out->n_layers = n_layers;
    out->n_vocab = V;
    out->unused_share = DATM_UNUSED_SHARE;
    out->dup_cos = DATM_DUP_COSINE;
    int rc = DATM_OK;
    for (int l = 1; l <= n_layers && !rc; l++) {
        datm_topic_layer *t = &out->layer[l - 1];
        const int64_t K = k[l];
        t->k = K;
        t->top_n = (int)DATM_MIN((int64_t)top_n, V);
        for (int m = 0; m < DATM_TOPIC_MEASURES; m++) t->score_mean[m] = t->score_live[m] = NAN;
        t->npmi_mean = NAN;
        t->diversity = NAN;
        t->nearest = datm_alloc_array((size_t)K + 1, sizeof *t->nearest, err);
        t->nearest_cos = datm_alloc_array((size_t)K + 1, sizeof *t->nearest_cos, err);
        if (!t->nearest || !t->nearest_cos) { rc = DATM_E_NOMEM; break; }
        float *proj = datm_alloc_array((size_t)(V * K), sizeof *proj, err);
        t->top_ids = datm_alloc_array((size_t)(K * t->top_n) + 1, sizeof *t->top_ids, err);
        t->top_weights = datm_alloc_array((size_t)(K * t->top_n) + 1, sizeof *t->top_weights, err);
        if (!proj || !t->top_ids || !t->top_weights) { datm_free(proj); rc = DATM_E_NOMEM; break; }
        rc = datm_topics_project(n_layers, phi, k, l, proj, err);
        if (!rc) rc = datm_topics_top(proj, V, K, t->top_n, t->top_ids, t->top_weights, err);
        if (!rc) rc = datm_topics_nearest(proj, V, K, t->nearest, t->nearest_cos, err);
        if (keep_projected && !rc) t->projected = proj;
        else datm_free(proj);
        if (l >= 2 && link_n > 0 && !rc) {
            t->link_n = (int)DATM_MIN((int64_t)link_n, k[l - 1]);
            t->link_ids = datm_alloc_array((size_t)(K * t->link_n), sizeof *t->link_ids, err);
            t->link_weights = datm_alloc_array((size_t)(K * t->link_n), sizeof *t->link_weights, err);
            if (!t->link_ids || !t->link_weights) { rc = DATM_E_NOMEM; break; }
            rc = datm_topics_top(phi[l - 1], k[l - 1], K, t->link_n, t->link_ids,
                                 t->link_weights, err);
        }
    }
    if (rc) datm_topic_set_free(out);
    return rc;
}
