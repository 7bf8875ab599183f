/* engine/nn/mlp_head_impl.h: the body of the sDATM feature map (mlp_head.h), included twice
 * by mlp_head.c with REAL = float / double and SFX = f32 / f64. Not a public header.
 *
 * Cache layout for a batch of B rows (all row-major):
 *   t(l) (B, K_l) for l = 1..L | tn(l) (B, K_l) the standardised t | 1/sum_k theta(l) (B)
 *   per layer | z1(l) (B, K_l) if g_1 | s (B, S) | z_j (B, a_j), h_j (B, a_j) for j = 1..H */
#ifndef REAL
#error "define REAL, SFX, SOFTPLUS, TINY before including"
#endif

/* an elementwise loop of n entries runs on the team when it is worth a fork and the caller
 * is not already in a parallel region */
#ifndef MH_SPLIT
#define MH_SPLIT(n) ((n) >= 8192 && !omp_in_parallel())
#endif

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SFX)

typedef struct FN(mh_layout) {
    REAL *t[DATM_MAX_LAYERS], *tn[DATM_MAX_LAYERS], *inv[DATM_MAX_LAYERS];
    REAL *z1[DATM_MAX_LAYERS];
    REAL *s, *z[DATM_MLP_MAX_HIDDEN], *hh[DATM_MLP_MAX_HIDDEN];
} FN(mh_layout);

static void FN(mh_carve)(const datm_mlp_head *h, int64_t B, REAL *cache, FN(mh_layout) *c)
{
    REAL *q = cache;
    for (int l = 0; l < h->L; l++) { c->t[l] = q; q += B * h->k[l]; }
    for (int l = 0; l < h->L; l++) { c->tn[l] = q; q += B * h->k[l]; }
    for (int l = 0; l < h->L; l++) { c->inv[l] = q; q += B; }
    for (int l = 0; l < h->L; l++) {
        c->z1[l] = h->per_layer ? q : NULL;
        if (h->per_layer) q += B * h->k[l];
    }
    c->s = q; q += B * h->S;
    for (int j = 0; j < h->H; j++) {
        c->z[j] = q; q += B * h->a[j];
        c->hh[j] = q; q += B * h->a[j];
    }
}

const REAL *FN(datm_mlp_head_forward)(const datm_mlp_head *h, const REAL *block, int64_t B,
                                      const REAL *const *theta, REAL *cache)
{
    FN(mh_layout) c;
    FN(mh_carve)(h, B, cache, &c);
    for (int l = 0; l < h->L; l++) {
        const int64_t K = h->k[l];
        const REAL *th = theta[l];
        REAL *t = c.t[l];
        /* rows are independent: split over the team (the head runs outside parallel regions;
         * its scalar log1p / softplus calls had ~5% of the samples of an MNIST iteration) */
#pragma omp parallel for schedule(static) if (MH_SPLIT(B * K))
        for (int64_t n = 0; n < B; n++) {
            const REAL *x = th + n * K;
            REAL *o = t + n * K;
            REAL sum = 0;
            switch (h->transform) {
            case DATM_FEAT_LOG1P:
                for (int64_t k = 0; k < K; k++) o[k] = LOG1PR(x[k]);
                break;
            case DATM_FEAT_PROP:
                for (int64_t k = 0; k < K; k++) sum += x[k];
                sum = sum > TINY ? sum : TINY;
                c.inv[l][n] = (REAL)1 / sum;
                for (int64_t k = 0; k < K; k++) o[k] = x[k] / sum;
                break;
            default:
                for (int64_t k = 0; k < K; k++) o[k] = x[k];
            }
        }
        /* tn = (t - shift) * scale, the constants of datm_mlp_head_set_norm */
        const REAL *shift = block + h->o_shift + h->k_off[l], *scale = block + h->o_scale + h->k_off[l];
#pragma omp parallel for schedule(static) if (MH_SPLIT(B * K))
        for (int64_t n = 0; n < B; n++)
            for (int64_t k = 0; k < K; k++)
                c.tn[l][n * K + k] = (t[n * K + k] - shift[k]) * scale[k];
        t = c.tn[l];
        if (h->per_layer) {
            FN(datm_dense_forward)(B, K, K, t, block + h->o_w1[l], block + h->o_b1[l], c.z1[l]);
#pragma omp parallel for schedule(static) if (MH_SPLIT(B * K))
            for (int64_t n = 0; n < B; n++)
                for (int64_t k = 0; k < K; k++)
                    c.s[n * h->S + h->k_off[l] + k] = SOFTPLUS(c.z1[l][n * K + k]);
        } else {
            for (int64_t n = 0; n < B; n++)
                memcpy(c.s + n * h->S + h->k_off[l], t + n * K, (size_t)K * sizeof(REAL));
        }
    }
    const REAL *in = c.s;
    int64_t n_in = h->S;
    for (int j = 0; j < h->H; j++) {
        FN(datm_dense_forward)(B, n_in, h->a[j], in, block + h->o_w[j], block + h->o_b[j], c.z[j]);
        FN(datm_softplus)(B * h->a[j], c.z[j], c.hh[j]);
        in = c.hh[j];
        n_in = h->a[j];
    }
    return in;
}

void FN(datm_mlp_head_backward)(const datm_mlp_head *h, const REAL *block, REAL *gblock,
                                int64_t B, const REAL *const *theta, const REAL *cache,
                                const REAL *dout, REAL *work, REAL *const *dtheta, REAL beta)
{
    FN(mh_layout) c;
    FN(mh_carve)(h, B, (REAL *)cache, &c);
    int64_t wmax = 0;
    for (int j = 0; j < h->H; j++) wmax = h->a[j] > wmax ? h->a[j] : wmax;
    for (int l = 0; l < h->L; l++) wmax = h->k[l] > wmax ? h->k[l] : wmax;
    REAL *ds = work, *bufA = work + B * h->S, *bufB = bufA + B * wmax;
    /* the standardisation constants get no gradient */
    memset(gblock + h->o_shift, 0, (size_t)h->S * sizeof(REAL));
    memset(gblock + h->o_scale, 0, (size_t)h->S * sizeof(REAL));
    gblock[h->o_norm_set] = 0;

    /* g_2: back through the hidden layers down to ds (B, S) */
    if (h->H == 0) {
        memcpy(ds, dout, (size_t)(B * h->S) * sizeof(REAL));
    } else {
        const REAL *cur = dout;
        for (int j = h->H - 1; j >= 0; j--) {
            FN(datm_softplus_backward)(B * h->a[j], c.z[j], cur, bufA);
            const REAL *in = j ? c.hh[j - 1] : c.s;
            int64_t n_in = j ? h->a[j - 1] : h->S;
            REAL *dx = j ? bufB : ds;
            FN(datm_dense_backward)(B, n_in, h->a[j], in, block + h->o_w[j], bufA,
                                    gblock + h->o_w[j], gblock + h->o_b[j], dx, (REAL)0);
            cur = dx;
        }
    }
    /* g_1 and the transform, layer by layer */
    for (int l = 0; l < h->L; l++) {
        const int64_t K = h->k[l];
        for (int64_t n = 0; n < B; n++)
            memcpy(bufA + n * K, ds + n * h->S + h->k_off[l], (size_t)K * sizeof(REAL));
        const REAL *dt = bufA;
        if (h->per_layer) {
            FN(datm_softplus_backward)(B * K, c.z1[l], bufA, bufA);
            FN(datm_dense_backward)(B, K, K, c.tn[l], block + h->o_w1[l], bufA,
                                    gblock + h->o_w1[l], gblock + h->o_b1[l],
                                    dtheta ? bufB : NULL, (REAL)0);
            dt = bufB;
        }
        if (!dtheta) continue;
        const REAL *scale = block + h->o_scale + h->k_off[l];
        const REAL *th = theta[l];
        REAL *dth = dtheta[l];
        for (int64_t n = 0; n < B; n++) {
            const REAL *x = th + n * K, *g = dt + n * K;   /* g: d/d tn */
            REAL *o = dth + n * K;
            REAL dot = 0;
            if (h->transform == DATM_FEAT_PROP)
                for (int64_t k = 0; k < K; k++) dot += g[k] * scale[k] * c.t[l][n * K + k];
            for (int64_t k = 0; k < K; k++) {
                REAL v, gt = g[k] * scale[k];   /* d/dt */
                switch (h->transform) {
                case DATM_FEAT_LOG1P: v = gt / ((REAL)1 + x[k]); break;
                case DATM_FEAT_PROP:  v = (gt - dot) * c.inv[l][n]; break;
                default:              v = gt;
                }
                o[k] = beta == 0 ? v : v + beta * o[k];
            }
        }
    }
}

#undef FN
#undef CAT
#undef CAT_
