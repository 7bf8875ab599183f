/* engine/encoder/encoder_impl.h: WUDVE forward and backward, written once for a real type.
 * Included by encoder_f32.c (R = float, public names without suffix) and encoder_f64.c
 * (R = double, names with _f64). Expects:
 *   R          the real type
 *   ENC(name)  public name of this precision (name or name##_f64)
 *   NN(name)   engine/nn kernel of this precision (name##_f32 / name##_f64)
 *   FAM(name)  posterior family member of this precision (name##_f32 / name##_f64)
 *   WS         datm_encoder_ws / datm_encoder_ws_f64
 *   GEMM       datm_sgemm / datm_dgemm
 * The maths is documented in encoder.h; equation names refer to the paper. */

/* ---- workspace ---- */

static int64_t ENC(ws_layout)(const datm_encoder *e, int64_t cap, WS *ws, char *base)
{
    /* Two passes: with base == NULL only the size is computed. */
    int64_t off = 0;
    const int L = e->L;
    const int nd = e->o.family->noise_dim;
#define CARVE(ptr, n, T)                                                                   \
    do {                                                                                   \
        if (base) (ptr) = (T *)(void *)(base + off);                                       \
        off += ((int64_t)(n) * (int64_t)sizeof(T) + 63) / 64 * 64;                         \
    } while (0)
    int64_t hmax = 0, kmax = 0;
    for (int l = 1; l <= L; l++) {
        hmax = DATM_MAX(hmax, e->H[l]);
        kmax = DATM_MAX(kmax, e->K[l]);
    }
    CARVE(ws->colsum, e->K[1], R);
    CARVE(ws->dh, cap * hmax, R);
    CARVE(ws->doc_acc, cap, double);
    CARVE(ws->rng, cap, datm_rng);
    CARVE(ws->kf, kmax, float);
    for (int l = 1; l <= L; l++) {
        int64_t n = cap * e->K[l];
        CARVE(ws->z3[l], cap * e->H[l], R);
        CARVE(ws->h[l], cap * e->H[l], R);
        CARVE(ws->z1[l], cap * e->KS[l], R);
        CARVE(ws->kt[l], cap * e->KS[l], R);
        CARVE(ws->z2[l], n, R);
        CARVE(ws->lt[l], n, R);
        CARVE(ws->k[l], n, R);
        CARVE(ws->lam[l], n, R);
        CARVE(ws->a[l], n, R);
        CARVE(ws->alpha[l], n, R);
        CARVE(ws->theta[l], n, R);
        CARVE(ws->dth_dk[l], n, R);
        CARVE(ws->dth_dlam[l], n, R);
        CARVE(ws->kl[l], n, R);
        CARVE(ws->dkl_dk[l], n, R);
        CARVE(ws->dkl_dlam[l], n, R);
        CARVE(ws->dkl_da[l], n, R);
        CARVE(ws->dtheta[l], n, R);
        CARVE(ws->dz1[l], cap * e->KS[l], R);
        CARVE(ws->dz2[l], n, R);
        CARVE(ws->da[l], n, R);
        CARVE(ws->dz3[l], cap * e->H[l], R);
        CARVE(ws->noise[l], n * nd, float);
    }
#undef CARVE
    return off;
}

int ENC(datm_encoder_ws_create)(const datm_encoder *e, int64_t cap, int64_t nnz_cap, WS **out,
                                datm_error *err)
{
    *out = NULL;
    if (cap <= 0) return datm_error_set(err, DATM_E_INVALID, "encoder: workspace capacity %lld",
                                        (long long)cap);
    WS *ws = datm_alloc(sizeof *ws, err);
    if (!ws) return err ? err->code : DATM_E_NOMEM;
    int64_t bytes = ENC(ws_layout)(e, cap, ws, NULL);
    ws->block = datm_alloc((size_t)bytes, err);
    if (!ws->block) { datm_free(ws); return err ? err->code : DATM_E_NOMEM; }
    ENC(ws_layout)(e, cap, ws, ws->block);
    ws->cap = cap;
    ws->L = e->L;
    if (nnz_cap > 0) {
        ws->x0 = datm_alloc_array((size_t)nnz_cap, sizeof(R), err);
        ws->ratio = datm_alloc_array((size_t)nnz_cap, sizeof(R), err);
        ws->row_ptr = datm_alloc_array((size_t)cap + 1, sizeof(int64_t), err);
        if (!ws->x0 || !ws->ratio || !ws->row_ptr) {
            ENC(datm_encoder_ws_destroy)(&ws);
            return err ? err->code : DATM_E_NOMEM;
        }
        ws->nnz_cap = nnz_cap;
    } else {
        ws->row_ptr = datm_alloc_array((size_t)cap + 1, sizeof(int64_t), err);
        if (!ws->row_ptr) { ENC(datm_encoder_ws_destroy)(&ws); return err ? err->code : DATM_E_NOMEM; }
    }
    *out = ws;
    return DATM_OK;
}

void ENC(datm_encoder_ws_destroy)(WS **pws)
{
    if (!pws || !*pws) return;
    WS *ws = *pws;
    datm_free(ws->block);
    datm_free(ws->x0);
    datm_free(ws->ratio);
    datm_free(ws->row_ptr);
    datm_free(ws);
    *pws = NULL;
}

static int ENC(ws_reserve_nnz)(WS *ws, int64_t nnz, datm_error *err)
{
    if (nnz <= ws->nnz_cap) return DATM_OK;
    int64_t cap = DATM_MAX(nnz, ws->nnz_cap * 3 / 2);
    R *x0 = datm_alloc_array((size_t)cap, sizeof(R), err);
    R *ratio = datm_alloc_array((size_t)cap, sizeof(R), err);
    if (!x0 || !ratio) { datm_free(x0); datm_free(ratio); return err ? err->code : DATM_E_NOMEM; }
    datm_free(ws->x0);
    datm_free(ws->ratio);
    ws->x0 = x0;
    ws->ratio = ratio;
    ws->nnz_cap = cap;
    return DATM_OK;
}

/* Makes ws->Xv a zero-based view of X (X may be a row range of a larger matrix). */
static int ENC(prepare)(const datm_encoder *e, const datm_csr *X, WS *ws, datm_error *err)
{
    const int64_t B = X->n_rows;
    if (B > ws->cap)
        return datm_error_set(err, DATM_E_INVALID, "encoder: batch of %lld docs > workspace %lld",
                              (long long)B, (long long)ws->cap);
    if (X->n_cols != e->K[0])
        return datm_error_set(err, DATM_E_INVALID, "encoder: batch has %lld words, encoder %lld",
                              (long long)X->n_cols, (long long)e->K[0]);
    int64_t base = X->row_ptr[0], nnz = X->row_ptr[B] - base;
    int rc = ENC(ws_reserve_nnz)(ws, nnz, err);
    if (rc) return rc;
    for (int64_t i = 0; i <= B; i++) ws->row_ptr[i] = X->row_ptr[i] - base;
    ws->Xv.n_rows = B;
    ws->Xv.n_cols = X->n_cols;
    ws->Xv.nnz = nnz;
    ws->Xv.row_ptr = ws->row_ptr;
    ws->Xv.col = X->col + base;
    ws->Xv.val = X->val + base;
    ws->B = B;
    return DATM_OK;
}

/* ---- forward, upward part: h(l), kt(l), lt(l) (paper eq. MLP2) ---- */
static void ENC(upward)(const datm_encoder *e, const R *params, const datm_csr *X, WS *ws)
{
    const int L = e->L;
    const int64_t B = X->n_rows, nnz = X->nnz;
    const datm_param_view *v = e->params.views;
    const R lmin = (R)e->o.lambda_min;
    for (int64_t p = 0; p < nnz; p++) ws->x0[p] = (R)log1p((double)X->val[p]);
    for (int l = 1; l <= L; l++) {
        const R *W3 = params + v[e->iW3[l]].offset, *b3 = params + v[e->ib3[l]].offset;
        const R *W1 = params + v[e->iW1[l]].offset, *b1 = params + v[e->ib1[l]].offset;
        const R *W2 = params + v[e->iW2[l]].offset, *b2 = params + v[e->ib2[l]].offset;
        if (l == 1) NN(datm_sparse_dense_forward)(X, ws->x0, e->H[1], W3, b3, ws->z3[1]);
        else NN(datm_dense_forward)(B, e->H[l - 1], e->H[l], ws->h[l - 1], W3, b3, ws->z3[l]);
        NN(datm_softplus)(B * e->H[l], ws->z3[l], ws->h[l]);
        NN(datm_dense_forward)(B, e->H[l], e->KS[l], ws->h[l], W1, b1, ws->z1[l]);
        NN(datm_softplus)(B * e->KS[l], ws->z1[l], ws->kt[l]);
        NN(datm_dense_forward)(B, e->H[l], e->K[l], ws->h[l], W2, b2, ws->z2[l]);
        int64_t n = B * e->K[l];
        R *lt = ws->lt[l];
        NN(datm_softplus)(n, ws->z2[l], lt);
        for (int64_t i = 0; i < n; i++) lt[i] = lt[i] > lmin ? lt[i] : lmin;
    }
}

/* ---- forward, top-down part (paper eq. posterior-completely) ---- */
static void ENC(topdown)(const datm_encoder *e, datm_encoder_mode mode, const R *const *phi,
                         const R *top_shape, const datm_encoder_noise *noise, int64_t B,
                         WS *ws)
{
    const int L = e->L;
    const datm_encoder_opts *o = &e->o;
    const datm_posterior_family *fam = o->family;
    const int nd = fam->noise_dim;
    const R kmin = (R)o->k_min, kmax = (R)o->k_max, amin = (R)o->alpha_min;

    if (mode != DATM_ENC_MEAN && !noise->fixed) {
        for (int64_t i = 0; i < B; i++) {
            uint64_t id = noise->doc_ids ? (uint64_t)noise->doc_ids[i]
                                         : (uint64_t)(noise->first_id + i);
            datm_rng_init2(&ws->rng[i], noise->seed, noise->purpose, noise->index, id);
        }
    }
    for (int l = L; l >= 1; l--) {
        const int64_t K = e->K[l], KS = e->KS[l], n = B * K;
        R *k = ws->k[l], *a = ws->a[l], *lam = ws->lam[l], *th = ws->theta[l];
        const R *kt = ws->kt[l], *lt = ws->lt[l];
        if (l < L) {
            /* a(l) = theta(l+1) Phi(l+1)^T: the gamma shape of theta(l) under the prior */
            GEMM(0, 1, B, K, e->K[l + 1], (R)1, ws->theta[l + 1], e->K[l + 1], phi[l + 1],
                 e->K[l + 1], (R)0, a, K);
        }
        const int down = o->downward && l < L;
        for (int64_t i = 0; i < B; i++) {
            for (int64_t j = 0; j < K; j++) {
                R s = kt[i * KS + (KS == 1 ? 0 : j)];
                if (down) s += a[i * K + j];
                k[i * K + j] = s < kmin ? kmin : (s > kmax ? kmax : s);
            }
        }
        if (o->lambda_is_mean) {
            for (int64_t i = 0; i < n; i++)
                lam[i] = (R)((double)lt[i] / exp(lgamma(1.0 + 1.0 / (double)k[i])));
        } else {
            memcpy(lam, lt, (size_t)n * sizeof(R));
        }
        if (mode == DATM_ENC_MEAN) {
            FAM(fam->mean)(n, k, lam, th);
        } else {
            float *u = ws->noise[l];
            if (noise->fixed) {
                memcpy(u, noise->fixed[l], (size_t)(n * nd) * sizeof(float));
            } else {
                for (int64_t i = 0; i < B; i++) {
                    for (int64_t j = 0; j < K; j++) ws->kf[j] = (float)k[i * K + j];
                    fam->draw_noise(o, &ws->rng[i], K, ws->kf, u + i * K * nd);
                }
            }
            int train = mode == DATM_ENC_TRAIN;
            FAM(fam->sample)(o, n, k, lam, u, th, train ? ws->dth_dk[l] : NULL,
                             train ? ws->dth_dlam[l] : NULL);
        }
        if (mode == DATM_ENC_TRAIN) {
            R *al = ws->alpha[l];
            if (l < L) {
                for (int64_t i = 0; i < n; i++) al[i] = a[i] > amin ? a[i] : amin;
            } else {
                for (int64_t i = 0; i < B; i++)
                    for (int64_t j = 0; j < K; j++)
                        al[i * K + j] = top_shape ? top_shape[j] : (R)o->top_shape;
            }
            FAM(fam->kl)(n, k, lam, al, ws->kl[l], ws->dkl_dk[l], ws->dkl_dlam[l],
                         ws->dkl_da[l]);
        }
    }
}

/* ---- Poisson log-likelihood of x under theta(1) Phi(1)^T (paper eq. ELBO-of-VADTM) ---- */
static double ENC(loglik)(const datm_encoder *e, const datm_csr *X, const R *phi1, WS *ws)
{
    const int64_t B = X->n_rows, K = e->K[1], V = e->K[0];
    const R rmin = (R)e->o.rate_min;
    R *cs = ws->colsum;
    for (int64_t j = 0; j < K; j++) cs[j] = 0;
    for (int64_t v = 0; v < V; v++)
        for (int64_t j = 0; j < K; j++) cs[j] += phi1[v * K + j];
    const R *th = ws->theta[1];
    const int64_t base = X->row_ptr[0];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < B; i++) {
        const R *t = th + i * K;
        double ll = 0;
        for (int64_t p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++) {
            const R *f = phi1 + (int64_t)X->col[p] * K;
            R rate = 0;
            for (int64_t j = 0; j < K; j++) rate += t[j] * f[j];
            double x = X->val[p];
            if (rate > rmin) {
                ws->ratio[p - base] = (R)(x / (double)rate);
            } else {
                rate = rmin;
                ws->ratio[p - base] = 0;
            }
            ll += x * log((double)rate) - lgamma(x + 1.0);
        }
        R tot = 0;
        for (int64_t j = 0; j < K; j++) tot += t[j] * cs[j];
        ws->doc_acc[i] = ll - (double)tot;
    }
    double s = 0;
    for (int64_t i = 0; i < B; i++) s += ws->doc_acc[i];
    return s;
}

int ENC(datm_encoder_forward)(const datm_encoder *e, const R *params, datm_encoder_mode mode,
                              const datm_csr *X, const R *const *phi, const R *top_shape,
                              const double *kl_weight, const datm_encoder_noise *noise,
                              WS *ws, datm_encoder_loss *loss, datm_error *err)
{
    const int L = e->L;
    const int64_t B = X->n_rows;
    if (mode != DATM_ENC_MEAN && !noise)
        return datm_error_set(err, DATM_E_INVALID, "encoder: sampling needs a noise source");
    if (mode == DATM_ENC_TRAIN && (!phi || !phi[1]))
        return datm_error_set(err, DATM_E_INVALID, "encoder: training needs Phi(1)");
    if (L >= 2 && (e->o.downward || mode == DATM_ENC_TRAIN))
        for (int l = 2; l <= L; l++)
            if (!phi || !phi[l])
                return datm_error_set(err, DATM_E_INVALID, "encoder: Phi(%d) missing", l);
    int rc = ENC(prepare)(e, X, ws, err);
    if (rc) return rc;
    ws->B = B;
    ws->mode = mode;
    ws->phi = phi;
    ws->top_shape = top_shape;
    for (int l = 1; l <= L; l++) ws->kl_weight[l] = kl_weight ? kl_weight[l] : e->o.kl_weight[l];

    ENC(upward)(e, params, &ws->Xv, ws);
    ENC(topdown)(e, mode, phi, top_shape, noise, B, ws);

    if (mode == DATM_ENC_TRAIN) {
        double ll = ENC(loglik)(e, &ws->Xv, phi[1], ws);
        double obj = -ll;
        datm_encoder_loss lo;
        memset(&lo, 0, sizeof lo);
        for (int l = 1; l <= L; l++) {
            double s = 0;
            const R *kl = ws->kl[l];
            for (int64_t i = 0, n = B * e->K[l]; i < n; i++) s += kl[i];
            lo.kl[l] = s / (double)B;
            obj += ws->kl_weight[l] * s;
        }
        lo.loglik = ll / (double)B;
        lo.loss = obj / (double)B;
        if (loss) *loss = lo;
        if (!isfinite(lo.loss))
            return datm_error_set(err, DATM_E_NUMERIC,
                                  "encoder: non-finite loss (loglik %.9g, kl(1) %.9g)",
                                  lo.loglik, lo.kl[1]);
    }
    return DATM_OK;
}

/* ---- backward ---- */
int ENC(datm_encoder_backward)(const datm_encoder *e, const R *params, WS *ws,
                               const R *const *dtheta_extra, R *grad, R *const *dphi,
                               datm_error *err)
{
    if (ws->mode != DATM_ENC_TRAIN)
        return datm_error_set(err, DATM_E_INVALID, "encoder: backward needs a TRAIN forward");
    const int L = e->L;
    const int64_t B = ws->B;
    const datm_csr *X = &ws->Xv;
    const datm_encoder_opts *o = &e->o;
    const datm_param_view *v = e->params.views;
    const R *const *phi = ws->phi;
    const R s = (R)(1.0 / (double)B);
    const R kmin = (R)o->k_min, kmax = (R)o->k_max;
    const R lmin = (R)o->lambda_min, amin = (R)o->alpha_min;

    memset(grad, 0, (size_t)e->params.size * sizeof(R));

    /* d loss / d theta(1) from the likelihood: -(1/B) (sum_v x/rate phi_v. - colsum) */
    {
        const int64_t K = e->K[1];
        const R *phi1 = phi[1];
        R *dt = ws->dtheta[1];
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < B; i++) {
            R *d = dt + i * K;
            for (int64_t j = 0; j < K; j++) d[j] = s * ws->colsum[j];
            for (int64_t p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++) {
                const R *f = phi1 + (int64_t)X->col[p] * K;
                const R c = -s * ws->ratio[p];
                for (int64_t j = 0; j < K; j++) d[j] += c * f[j];
            }
        }
        if (dphi && dphi[1]) {
            /* d loss / d phi_vk = -(1/B) (sum_n ratio_vn theta_nk - sum_n theta_nk) */
            const int64_t V = e->K[0];
            NN(datm_sparse_dense_backward)(X, ws->ratio, K, ws->theta[1], dphi[1], NULL);
            R *tsum = ws->dz2[1];   /* scratch (K) */
            for (int64_t j = 0; j < K; j++) tsum[j] = 0;
            for (int64_t i = 0; i < B; i++)
                for (int64_t j = 0; j < K; j++) tsum[j] += ws->theta[1][i * K + j];
            for (int64_t vv = 0; vv < V; vv++)
                for (int64_t j = 0; j < K; j++)
                    dphi[1][vv * K + j] = -s * (dphi[1][vv * K + j] - tsum[j]);
        }
    }
    for (int l = 1; l <= L; l++) {
        const int64_t n = B * e->K[l];
        if (l >= 2) memset(ws->dtheta[l], 0, (size_t)n * sizeof(R));
        if (dtheta_extra && dtheta_extra[l])
            for (int64_t i = 0; i < n; i++) ws->dtheta[l][i] += dtheta_extra[l][i];
    }

    /* Stochastic part, bottom-up: theta(l) -> (k, lam) -> (kt, lt, a(l)) -> theta(l+1). */
    for (int l = 1; l <= L; l++) {
        const int64_t K = e->K[l], KS = e->KS[l], n = B * K;
        const R w = (R)ws->kl_weight[l] * s;
        const int down = o->downward && l < L;
        const R *dt = ws->dtheta[l], *k = ws->k[l], *lam = ws->lam[l], *lt = ws->lt[l];
        const R *a = ws->a[l];
        R *dz1 = ws->dz1[l], *dz2 = ws->dz2[l], *da = ws->da[l];
        R *dkt = ws->dkl_dk[l];   /* reused in place: d loss / d kt per unit */
        (void)a;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            R dk = dt[i] * ws->dth_dk[l][i] + w * ws->dkl_dk[l][i];
            R dl = dt[i] * ws->dth_dlam[l][i] + w * ws->dkl_dlam[l][i];
            R dlt = dl;
            if (o->lambda_is_mean) {
                /* lam = lt / G(k), G = Gamma(1 + 1/k): dlam/dk = lam psi(1 + 1/k) / k^2 */
                double kk = (double)k[i];
                double g = (double)lt[i] / (double)lam[i];
                dlt = (R)((double)dl / g);
                dk += (R)((double)dl * (double)lam[i] * datm_digamma(1.0 + 1.0 / kk) / (kk * kk));
            }
            if (!(k[i] > kmin && k[i] < kmax)) dk = 0;   /* clamped: no gradient */
            dkt[i] = dk;
            R dai = down ? dk : 0;
            if (l < L && ws->alpha[l][i] > amin) dai += w * ws->dkl_da[l][i];
            da[i] = dai;
            dz2[i] = lt[i] > lmin ? dlt : 0;              /* floored: no gradient */
        }
        NN(datm_softplus_backward)(n, ws->z2[l], dz2, dz2);
        if (KS == 1) {
            for (int64_t i = 0; i < B; i++) {
                R acc = 0;
                for (int64_t j = 0; j < K; j++) acc += dkt[i * K + j];
                dz1[i] = acc;
            }
            NN(datm_softplus_backward)(B, ws->z1[l], dz1, dz1);
        } else {
            NN(datm_softplus_backward)(n, ws->z1[l], dkt, dz1);
        }
        if (l < L) {
            const int64_t K2 = e->K[l + 1];
            /* a(l) = theta(l+1) Phi(l+1)^T */
            GEMM(0, 0, B, K2, K, (R)1, da, K, phi[l + 1], K2, (R)1, ws->dtheta[l + 1], K2);
            if (dphi && dphi[l + 1])
                GEMM(1, 0, K, K2, B, (R)1, da, K, ws->theta[l + 1], K2, (R)0, dphi[l + 1], K2);
        }
    }

    /* Deterministic part, top-down through the hidden layers. */
    for (int l = L; l >= 1; l--) {
        R *dh = ws->dh;
        R beta = 0;
        if (l < L) {
            NN(datm_dense_backward)(B, e->H[l], e->H[l + 1], ws->h[l],
                                    params + v[e->iW3[l + 1]].offset, ws->dz3[l + 1],
                                    grad + v[e->iW3[l + 1]].offset,
                                    grad + v[e->ib3[l + 1]].offset, dh, 0);
            beta = 1;
        }
        NN(datm_dense_backward)(B, e->H[l], e->KS[l], ws->h[l], params + v[e->iW1[l]].offset,
                                ws->dz1[l], grad + v[e->iW1[l]].offset,
                                grad + v[e->ib1[l]].offset, dh, beta);
        NN(datm_dense_backward)(B, e->H[l], e->K[l], ws->h[l], params + v[e->iW2[l]].offset,
                                ws->dz2[l], grad + v[e->iW2[l]].offset,
                                grad + v[e->ib2[l]].offset, dh, 1);
        NN(datm_softplus_backward)(B * e->H[l], ws->z3[l], dh, ws->dz3[l]);
    }
    NN(datm_sparse_dense_backward)(X, ws->x0, e->H[1], ws->dz3[1],
                                   grad + v[e->iW3[1]].offset, grad + v[e->ib3[1]].offset);
    return DATM_OK;
}
