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
    CARVE(ws->colsum2, e->K[1], R);
    CARVE(ws->dh, cap * hmax, R);
    CARVE(ws->doc_acc, cap, double);
    CARVE(ws->rng, cap, datm_rng);
    CARVE(ws->kf, cap * kmax, float);
    if (base) { ws->hmax = hmax; ws->kmax = kmax; }
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
        CARVE(ws->wT1[l], e->KS[l] * e->H[l], R);
        CARVE(ws->wT2[l], e->K[l] * e->H[l], R);
        if (l >= 2) {
            CARVE(ws->phiT[l], e->K[l] * e->K[l - 1], R);
            CARVE(ws->wT3[l], e->H[l] * e->H[l - 1], R);
        }
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
        ws->lterm = datm_alloc_array((size_t)nnz_cap, sizeof(R), err);
        ws->row_ptr = datm_alloc_array((size_t)cap + 1, sizeof(int64_t), err);
        if (!ws->x0 || !ws->ratio || !ws->lterm || !ws->row_ptr) {
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
    datm_free(ws->lterm);
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
    R *lterm = datm_alloc_array((size_t)cap, sizeof(R), err);
    if (!x0 || !ratio || !lterm) {
        datm_free(x0); datm_free(ratio); datm_free(lterm);
        return err ? err->code : DATM_E_NOMEM;
    }
    datm_free(ws->x0);
    datm_free(ws->ratio);
    datm_free(ws->lterm);
    ws->x0 = x0;
    ws->ratio = ratio;
    ws->lterm = lterm;
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

/* ---- row blocks: the forward pass is independent per document, so each thread runs it on
 * a contiguous block of rows with single-threaded BLAS; a slice is the workspace seen from
 * one block (every per-row array offset, the CSR rows restricted). ---- */
static void ENC(ws_slice)(const datm_encoder *e, const WS *ws, int64_t b0, int64_t b1, WS *s)
{
    *s = *ws;
    const int nd = e->o.family->noise_dim;
    for (int l = 1; l <= e->L; l++) {
        const int64_t H = b0 * e->H[l], KS = b0 * e->KS[l], K = b0 * e->K[l];
        s->z3[l] += H; s->h[l] += H; s->dz3[l] += H;
        s->z1[l] += KS; s->kt[l] += KS; s->dz1[l] += KS;
        s->z2[l] += K; s->lt[l] += K; s->k[l] += K; s->lam[l] += K; s->a[l] += K;
        s->alpha[l] += K; s->theta[l] += K; s->dth_dk[l] += K; s->dth_dlam[l] += K;
        s->kl[l] += K; s->dkl_dk[l] += K; s->dkl_dlam[l] += K; s->dkl_da[l] += K;
        s->dtheta[l] += K; s->dz2[l] += K; s->da[l] += K;
        s->noise[l] += K * nd;
    }
    s->dh += b0 * ws->hmax;
    s->kf += b0 * ws->kmax;
    s->doc_acc += b0;
    s->rng += b0;
    /* rows b0..b1 of the zero-based batch view; nonzeros keep their absolute index p, so x0
     * and ratio (indexed by p) are not offset */
    s->Xv.n_rows = b1 - b0;
    s->Xv.row_ptr = ws->row_ptr + b0;
    s->Xv.nnz = ws->row_ptr[b1] - ws->row_ptr[b0];
    s->B = b1 - b0;
}

/* Row blocks of a batch of B documents: about 50 rows each, a function of B only. OpenBLAS
 * sgemm is not bit-identical under a different split of M or N (edge kernels), so the
 * blocks, not the threads, fix every product's shape: results are the same for any thread
 * count (threads take whole blocks). */
static int ENC(n_blocks)(int64_t B)
{
    int64_t nb = (B + 25) / 50;
    if (nb > 64) nb = 64;
    return nb < 1 ? 1 : (int)nb;
}

static int ENC(n_threads)(int nb)
{
    int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
    return nt < nb ? nt : nb;
}

/* dst (c, r) = src (r, c)^T. The products with a transposed right factor (a = theta Phi^T,
 * dh = dz W^T) run as plain products on these copies: the small-product kernel of
 * engine/math has no transposed form, and BLAS's is slower at these shapes. */
static void ENC(transpose)(int64_t r, int64_t c, const R *src, R *dst)
{
    for (int64_t i0 = 0; i0 < r; i0 += 16)
        for (int64_t j = 0; j < c; j++)
            for (int64_t i = i0; i < r && i < i0 + 16; i++) dst[j * r + i] = src[i * c + j];
}

/* Phi(l)^T of one layer l >= 2 into ws (phi changes between calls). */
static void ENC(make_phiT_layer)(const datm_encoder *e, const R *const *phi, WS *ws, int l)
{
    if (phi && phi[l]) ENC(transpose)(e->K[l - 1], e->K[l], phi[l], ws->phiT[l]);
    else memset(ws->phiT[l], 0, (size_t)(e->K[l] * e->K[l - 1]) * sizeof(R));   /* unused */
}

/* Phi(l)^T, l >= 2, into ws (every ws the top-down pass will use). */
static inline void ENC(make_phiT)(const datm_encoder *e, const R *const *phi, WS *ws)
{
    for (int l = 2; l <= e->L; l++) ENC(make_phiT_layer)(e, phi, ws, l);
}

/* ---- elementwise kernels (vectorised; VEC_ATTR adds an AVX2 clone in f32) ---- */
/* cs[j0..j1) = those column sums of Phi(1) (V, K), each over v increasing: any split of the
 * columns (over threads) gives the same sums. */
VEC_ATTR static void ENC(v_colsum)(int64_t V, int64_t K, int64_t j0, int64_t j1, const R *phi1,
                                   R *cs)
{
    for (int64_t j = j0; j < j1; j++) cs[j] = 0;
    for (int64_t vv = 0; vv < V; vv++) {
        const R *f = phi1 + vv * K;
#pragma omp simd
        for (int64_t j = j0; j < j1; j++) cs[j] += f[j];
    }
}

VEC_ATTR static void ENC(v_log1p)(int64_t n, const float *x, R *y)
{
#pragma omp simd
    for (int64_t i = 0; i < n; i++) y[i] = VLOG1P((R)x[i]);
}

VEC_ATTR static void ENC(v_floor)(int64_t n, R *x, R lo)
{
#pragma omp simd
    for (int64_t i = 0; i < n; i++) x[i] = x[i] > lo ? x[i] : lo;
}

/* k = clamp(kt + a, kmin, kmax) for one row (a NULL: no downward term; KS == 1: kt is one
 * shape for the whole row). Masks are computed arithmetically, (R)(x > y), never by a
 * select with a constant arm, and invariant branches sit outside the loops: both keep gcc's
 * vectoriser working at -O2. */
VEC_ATTR static void ENC(v_shape)(int64_t K, int64_t KS, const R *kt, const R *a, R kmin,
                                  R kmax, R *k)
{
    if (KS == 1 && a) {
        const R s0 = kt[0];
#pragma omp simd
        for (int64_t j = 0; j < K; j++) {
            R s = s0 + a[j];
            s = s > kmin ? s : kmin;
            k[j] = s < kmax ? s : kmax;
        }
    } else if (KS == 1) {
        R s = kt[0];
        s = s > kmin ? s : kmin;
        s = s < kmax ? s : kmax;
        for (int64_t j = 0; j < K; j++) k[j] = s;
    } else if (a) {
#pragma omp simd
        for (int64_t j = 0; j < K; j++) {
            R s = kt[j] + a[j];
            s = s > kmin ? s : kmin;
            k[j] = s < kmax ? s : kmax;
        }
    } else {
#pragma omp simd
        for (int64_t j = 0; j < K; j++) {
            R s = kt[j];
            s = s > kmin ? s : kmin;
            k[j] = s < kmax ? s : kmax;
        }
    }
}

/* lam = lt / Gamma(1 + 1/k) (the network output is the mean; Weibull only). */
VEC_ATTR static void ENC(v_lambda_mean)(int64_t n, const R *lt, const R *k, R *lam)
{
#pragma omp simd
    for (int64_t i = 0; i < n; i++) lam[i] = lt[i] / VEXP(VLGAMMA((R)1 + (R)1 / k[i]));
}

/* Per nonzero of the likelihood: in: rate; out: ratio = x / rate (0 where floored) and
 * term = x ln(max(rate, rmin)) - ln Gamma(x + 1). */
VEC_ATTR static void ENC(v_ll_terms)(int64_t n, const float *x, R *rate_ratio, R *term,
                                     R rmin)
{
#pragma omp simd
    for (int64_t p = 0; p < n; p++) {
        R r = rate_ratio[p], xv = (R)x[p];
        int ok = r > rmin;
        r = r > rmin ? r : rmin;
        rate_ratio[p] = KEEP(ok, xv / r);
        term[p] = xv * VLOG(r) - VLGAMMA(xv + (R)1);
    }
}

/* Rows of Phi(1) are gathered one per nonzero (Phi(1) is 1 MB at V = 2000, K = 128): the row
 * ENC_PF nonzeros ahead is prefetched while the current one is used (one nonzero's work is
 * shorter than an L3 miss; as in datm_sparse_dense_forward_f32). */
#define ENC_PF 3
#define ENC_PREFETCH_ROW(ptr, K)                                                           \
    do {                                                                                   \
        const char *nx_ = (const char *)(ptr);                                             \
        for (int64_t o_ = 0; o_ < (K) * (int64_t)sizeof(R); o_ += 64)                      \
            __builtin_prefetch(nx_ + o_, 0, 3);                                            \
    } while (0)

/* rate[p] = theta_i . Phi(1)[col p] for every nonzero p of the rows of X (absolute p). */
VEC_ATTR static void ENC(v_rates)(const datm_csr *X, const R *phi1, const R *th, int64_t K,
                                  R *rate)
{
    const int64_t B = X->n_rows, pend = X->row_ptr[B];
    for (int64_t p = X->row_ptr[0]; p < X->row_ptr[0] + ENC_PF - 1 && p < pend; p++)
        ENC_PREFETCH_ROW(phi1 + (int64_t)X->col[p] * K, K);
    for (int64_t i = 0; i < B; i++) {
        const R *t = th + i * K;
        for (int64_t p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++) {
            const R *f = phi1 + (int64_t)X->col[p] * K;
            if (p + ENC_PF - 1 < pend)
                ENC_PREFETCH_ROW(phi1 + (int64_t)X->col[p + ENC_PF - 1] * K, K);
            R r = 0;
#pragma omp simd reduction(+ : r)
            for (int64_t j = 0; j < K; j++) r += t[j] * f[j];
            rate[p] = r;
        }
    }
}

/* d loss / d theta(1) of the rows of X from the likelihood:
 * d_i = s colsum - s sum_p ratio_p Phi(1)[col p]. */
VEC_ATTR static void ENC(v_dtheta1)(const datm_csr *X, const R *phi1, const R *ratio,
                                    const R *colsum, R s, int64_t K, R *dtheta)
{
    const int64_t B = X->n_rows, pend = X->row_ptr[B];
    for (int64_t p = X->row_ptr[0]; p < X->row_ptr[0] + ENC_PF - 1 && p < pend; p++)
        ENC_PREFETCH_ROW(phi1 + (int64_t)X->col[p] * K, K);
    for (int64_t i = 0; i < B; i++) {
        R *d = dtheta + i * K;
#pragma omp simd
        for (int64_t j = 0; j < K; j++) d[j] = s * colsum[j];
        for (int64_t p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++) {
            const R *f = phi1 + (int64_t)X->col[p] * K;
            if (p + ENC_PF - 1 < pend)
                ENC_PREFETCH_ROW(phi1 + (int64_t)X->col[p + ENC_PF - 1] * K, K);
            const R c = -s * ratio[p];
#pragma omp simd
            for (int64_t j = 0; j < K; j++) d[j] += c * f[j];
        }
    }
}

/* The stochastic part of backward for n units of one layer:
 * dk = dtheta dT/dk + w dKL/dk, dlam = dtheta dT/dlam + w dKL/dlam; through the mean
 * parameterisation, the clamp of k (no gradient outside), the floor of lt; the prior shape
 * a(l) gets the downward share of dk and w dKL/dalpha (unless floored). Outputs:
 * dkt (n) d loss/d kt per unit, dz2pre (n) d loss/d lt (before softplus'), da (n). */
VEC_ATTR static void ENC(v_stoch_back)(int64_t n, const R *dt, const R *dth_dk,
                                       const R *dth_dlam, const R *dkl_dk, const R *dkl_dlam,
                                       const R *dkl_da, const R *k, const R *lam, const R *lt,
                                       const R *alpha, R w, R kmin, R kmax, R lmin, R amin,
                                       int down, int has_prior, int lam_mean, R *dkt, R *dz2pre,
                                       R *da)
{
    const int fdown = down != 0, fprior = has_prior != 0;
    if (!lam_mean) {
#pragma omp simd
        for (int64_t i = 0; i < n; i++) {
            R dk = dt[i] * dth_dk[i] + w * dkl_dk[i];
            R dl = dt[i] * dth_dlam[i] + w * dkl_dlam[i];
            dk = KEEP((k[i] > kmin) & (k[i] < kmax), dk);  /* clamped: no gradient */
            dkt[i] = dk;
            da[i] = KEEP(fdown, dk) + KEEP(fprior & (alpha[i] > amin), w * dkl_da[i]);
            dz2pre[i] = KEEP(lt[i] > lmin, dl);            /* floored: no gradient */
        }
        return;
    }
#pragma omp simd
    for (int64_t i = 0; i < n; i++) {
        R dk = dt[i] * dth_dk[i] + w * dkl_dk[i];
        R dl = dt[i] * dth_dlam[i] + w * dkl_dlam[i];
        /* lam = lt / G(k), G = Gamma(1 + 1/k): dlam/dk = lam psi(1 + 1/k) / k^2 */
        R ik = (R)1 / k[i];
        R dlt = dl * lam[i] / lt[i];
        dk += dl * lam[i] * VDIGAMMA((R)1 + ik) * ik * ik;
        dk = KEEP((k[i] > kmin) & (k[i] < kmax), dk);
        dkt[i] = dk;
        da[i] = KEEP(fdown, dk) + KEEP(fprior & (alpha[i] > amin), w * dkl_da[i]);
        dz2pre[i] = KEEP(lt[i] > lmin, dlt);
    }
}

/* ---- forward, upward part: h(l), kt(l), lt(l) (paper eq. MLP2), on the rows of ws ---- */
static void ENC(upward)(const datm_encoder *e, const R *params, WS *ws)
{
    const int L = e->L;
    const datm_csr *X = &ws->Xv;
    const int64_t B = X->n_rows, p0 = X->row_ptr[0], p1 = X->row_ptr[B];
    const datm_param_view *v = e->params.views;
    ENC(v_log1p)(p1 - p0, (ws->in_val ? ws->in_val : X->val) + p0, ws->x0 + p0);
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
        NN(datm_softplus)(B * e->K[l], ws->z2[l], ws->lt[l]);
        ENC(v_floor)(B * e->K[l], ws->lt[l], (R)e->o.lambda_min);
    }
}

/* ---- forward, top-down part (paper eq. posterior-completely), on the rows of ws; noise
 * rows are those of the slice (fixed noise and doc ids offset by the caller) ---- */
static void ENC(topdown)(const datm_encoder *e, datm_encoder_mode mode, const R *const *phi,
                         const R *top_shape, const datm_encoder_noise *noise, WS *ws)
{
    (void)phi;   /* read as ws->phiT (made by the caller from these) */
    const int L = e->L;
    const int64_t B = ws->B;
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
            GEMM(0, 0, B, K, e->K[l + 1], (R)1, ws->theta[l + 1], e->K[l + 1], ws->phiT[l + 1],
                 K, (R)0, a, K);
        }
        const int down = o->downward && l < L;
        for (int64_t i = 0; i < B; i++)
            ENC(v_shape)(K, KS, kt + i * KS, down ? a + i * K : NULL, kmin, kmax, k + i * K);
        if (o->lambda_is_mean) ENC(v_lambda_mean)(n, lt, k, lam);
        else memcpy(lam, lt, (size_t)n * sizeof(R));
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
                memcpy(al, a, (size_t)n * sizeof(R));
                ENC(v_floor)(n, al, amin);
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

/* ---- Poisson log-likelihood of the rows of ws under theta(1) Phi(1)^T (paper eq.
 * ELBO-of-VADTM); per-document values into doc_acc; needs ws->colsum ---- */
static void ENC(loglik_rows)(const datm_encoder *e, const R *phi1, WS *ws)
{
    const datm_csr *X = &ws->Xv;
    const int64_t B = X->n_rows, K = e->K[1];
    const R *th = ws->theta[1], *cs = ws->colsum;
    ENC(v_rates)(X, phi1, th, K, ws->ratio);
    const int64_t p0 = X->row_ptr[0], p1 = X->row_ptr[B];
    R *term = ws->lterm;
    ENC(v_ll_terms)(p1 - p0, X->val + p0, ws->ratio + p0, term + p0, (R)e->o.rate_min);
    for (int64_t i = 0; i < B; i++) {
        const R *t = th + i * K;
        double ll = 0;
        for (int64_t p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++) ll += (double)term[p];
        R tot = 0;
#pragma omp simd reduction(+ : tot)
        for (int64_t j = 0; j < K; j++) tot += t[j] * cs[j];
        ws->doc_acc[i] = ll - (double)tot;
    }
}

/* The noise source seen from rows b0.. of the batch. */
static datm_encoder_noise ENC(noise_slice)(const datm_encoder_noise *n, int64_t b0, const datm_encoder *e)
{
    datm_encoder_noise s = *n;
    if (n->doc_ids) s.doc_ids = n->doc_ids + b0;
    else s.first_id = n->first_id + b0;
    (void)e;
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
    ws->mode = mode;
    ws->phi = phi;
    ws->top_shape = top_shape;
    for (int l = 1; l <= L; l++) ws->kl_weight[l] = kl_weight ? kl_weight[l] : e->o.kl_weight[l];
    const int train = mode == DATM_ENC_TRAIN;
    const int nb = ENC(n_blocks)(B), nt = ENC(n_threads)(nb);
    ws->nb = nb;
    double kls[DATM_MAX_LAYERS + 1] = {0};   /* sum of KL(l) over the batch */
    /* BLAS single-threaded: parallelism is over blocks (and OpenBLAS's own threads would
     * change the split of each product, see n_blocks) */
    const int blas = openblas_get_num_threads();
    openblas_set_num_threads(1);
    /* one parallel region: the set-up the blocks share, the blocks, then the KL sums */
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        /* sum_v rate_vn = theta_n . colsum: column sums of Phi(1), one column chunk per
         * thread (whole rows at 1 thread) */
        const int64_t K0 = e->K[0], K1 = e->K[1];
        const int nc = omp_get_num_threads();
#pragma omp for schedule(static) nowait
        for (int c = 0; c < (train ? nc : 0); c++)
            ENC(v_colsum)(K0, K1, K1 * c / nc, K1 * (c + 1) / nc, phi[1], ws->colsum);
#pragma omp for schedule(static)
        for (int l = 2; l <= L; l++) ENC(make_phiT_layer)(e, phi, ws, l);
        /* (implicit barrier) */
#pragma omp for schedule(static)
        for (int b = 0; b < nb; b++) {
            const int64_t b0 = B * b / nb, b1 = B * (b + 1) / nb;
            WS s;
            ENC(ws_slice)(e, ws, b0, b1, &s);
            datm_encoder_noise ns;
            const float *fx[DATM_MAX_LAYERS + 1] = {NULL};
            if (noise) {
                ns = ENC(noise_slice)(noise, b0, e);
                if (noise->fixed) {
                    for (int l = 1; l <= L; l++)
                        fx[l] = noise->fixed[l] + b0 * e->K[l] * e->o.family->noise_dim;
                    ns.fixed = fx;
                }
            }
            ENC(upward)(e, params, &s);
            ENC(topdown)(e, mode, phi, top_shape, noise ? &ns : NULL, &s);
            if (train) ENC(loglik_rows)(e, phi[1], &s);
        }
        /* (implicit barrier) each layer's KL sum is one chain over the batch in row order
         * (latency-bound): the layers' chains run on different threads */
#pragma omp for schedule(dynamic, 1)
        for (int l = 1; l <= (train ? L : 0); l++) {
            double s = 0;
            const R *kl = ws->kl[l];
            for (int64_t i = 0, n = B * e->K[l]; i < n; i++) s += kl[i];
            kls[l] = s;
        }
    }
    openblas_set_num_threads(blas);

    if (train) {
        double ll = 0;
        for (int64_t i = 0; i < B; i++) ll += ws->doc_acc[i];
        double obj = -ll;
        datm_encoder_loss lo;
        memset(&lo, 0, sizeof lo);
        for (int l = 1; l <= L; l++) {
            const double s = kls[l];
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

/* Rows of one block: d loss / d theta(1), the stochastic part bottom-up, then the hidden
 * layers top-down down to dz3(1). Everything here is per document. */
static void ENC(backward_rows)(const datm_encoder *e, const R *params, WS *ws,
                               const R *const *dtheta_extra, int64_t row0)
{
    const int L = e->L;
    const int64_t B = ws->B;
    const datm_csr *X = &ws->Xv;
    const datm_encoder_opts *o = &e->o;
    const R *const *phi = ws->phi;
    const R s = (R)(1.0 / (double)ws->B_total);
    (void)params;   /* the weights are read as ws->wT1..3 */

    /* d loss / d theta(1) from the likelihood: -(1/B) (sum_v x/rate phi_v. - colsum) */
    ENC(v_dtheta1)(X, phi[1], ws->ratio, ws->colsum, s, e->K[1], ws->dtheta[1]);
    for (int l = 1; l <= L; l++) {
        const int64_t n = B * e->K[l];
        if (l >= 2) memset(ws->dtheta[l], 0, (size_t)n * sizeof(R));
        if (dtheta_extra && dtheta_extra[l]) {
            const R *x = dtheta_extra[l] + row0 * e->K[l];
            R *d = ws->dtheta[l];
#pragma omp simd
            for (int64_t i = 0; i < n; i++) d[i] += x[i];
        }
    }

    /* Stochastic part, bottom-up: theta(l) -> (k, lam) -> (kt, lt, a(l)) -> theta(l+1). */
    for (int l = 1; l <= L; l++) {
        const int64_t K = e->K[l], KS = e->KS[l], n = B * K;
        const R w = (R)ws->kl_weight[l] * s;
        R *dz1 = ws->dz1[l], *dz2 = ws->dz2[l], *da = ws->da[l];
        R *dkt = ws->dkl_dk[l];   /* overwritten in place: d loss / d kt per unit */
        ENC(v_stoch_back)(n, ws->dtheta[l], ws->dth_dk[l], ws->dth_dlam[l], ws->dkl_dk[l],
                          ws->dkl_dlam[l], ws->dkl_da[l], ws->k[l], ws->lam[l], ws->lt[l],
                          ws->alpha[l], w, (R)o->k_min, (R)o->k_max, (R)o->lambda_min,
                          (R)o->alpha_min, o->downward && l < L, l < L, o->lambda_is_mean,
                          dkt, dz2, da);
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
            /* a(l) = theta(l+1) Phi(l+1)^T */
            const int64_t K2 = e->K[l + 1];
            GEMM(0, 0, B, K2, K, (R)1, da, K, phi[l + 1], K2, (R)1, ws->dtheta[l + 1], K2);
        }
    }

    /* Hidden layers, top-down: dh(l) = dz3(l+1) W3(l+1)^T + dz1(l) W1(l)^T + dz2(l) W2(l)^T */
    for (int l = L; l >= 1; l--) {
        R *dh = ws->dh;
        R beta = 0;
        if (l < L) {
            GEMM(0, 0, B, e->H[l], e->H[l + 1], (R)1, ws->dz3[l + 1], e->H[l + 1],
                 ws->wT3[l + 1], e->H[l], (R)0, dh, e->H[l]);
            beta = 1;
        }
        GEMM(0, 0, B, e->H[l], e->KS[l], (R)1, ws->dz1[l], e->KS[l], ws->wT1[l], e->H[l], beta,
             dh, e->H[l]);
        GEMM(0, 0, B, e->H[l], e->K[l], (R)1, ws->dz2[l], e->K[l], ws->wT2[l], e->H[l], (R)1,
             dh, e->H[l]);
        NN(datm_softplus_backward)(B * e->H[l], ws->z3[l], dh, ws->dz3[l]);
    }
}

/* Columns c0..c1 of dW (n_in, n_out) = X^T dY over all B rows, and of db = colsum dY. */
static void ENC(wgrad_cols)(int64_t B, int64_t n_in, int64_t n_out, const R *X, const R *dY,
                            R *dW, R *db, int64_t c0, int64_t c1)
{
    if (c1 <= c0) return;
    GEMM(1, 0, n_in, c1 - c0, B, (R)1, X, n_in, dY + c0, n_out, (R)0, dW + c0, n_out);
    for (int64_t j = c0; j < c1; j++) db[j] = 0;
    for (int64_t i = 0; i < B; i++) {
        const R *d = dY + i * n_out;
#pragma omp simd
        for (int64_t j = c0; j < c1; j++) db[j] += d[j];
    }
}

/* Columns c0..c1 of dW (V, n_out) = X^T dY for sparse X with values xval (absolute p). The
 * rows of dW are scattered (one per nonzero): the one ENC_PF nonzeros ahead is fetched early. */
VEC_ATTR static void ENC(swgrad_cols)(const datm_csr *X, const R *xval, int64_t n_out,
                                      const R *dY, R *dW, R *db, int64_t c0, int64_t c1)
{
    if (c1 <= c0) return;
    for (int64_t vv = 0; vv < X->n_cols; vv++) {
        R *w = dW + vv * n_out;
#pragma omp simd
        for (int64_t j = c0; j < c1; j++) w[j] = 0;
    }
    for (int64_t j = c0; j < c1; j++) db[j] = 0;
    const int64_t pend = X->row_ptr[X->n_rows];
    for (int64_t i = 0; i < X->n_rows; i++) {
        const R *d = dY + i * n_out;
        for (int64_t p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++) {
            R *w = dW + (int64_t)X->col[p] * n_out;
            if (p + ENC_PF - 1 < pend) {
                const char *nx = (const char *)(dW + (int64_t)X->col[p + ENC_PF - 1] * n_out + c0);
                for (int64_t o = 0; o < (c1 - c0) * (int64_t)sizeof(R); o += 64)
                    __builtin_prefetch(nx + o, 1, 3);
            }
            const R x = xval[p];
#pragma omp simd
            for (int64_t j = c0; j < c1; j++) w[j] += x * d[j];
        }
#pragma omp simd
        for (int64_t j = c0; j < c1; j++) db[j] += d[j];
    }
}

/* Rows v0..v1 of dW (V, n_out) = X^T dY for sparse X with values xval (absolute p): the
 * rows are zeroed as one range, then every nonzero whose word falls in the range adds its
 * whole row (the nonzeros in the order of swgrad_cols, so each entry gets the same additions
 * in the same order: the same bits). A split of the words, not of the columns, keeps each
 * thread's zeroing contiguous and its updates whole rows. */
VEC_ATTR static void ENC(swgrad_rows)(const datm_csr *X, const R *xval, int64_t n_out,
                                      const R *dY, R *dW, int64_t v0, int64_t v1)
{
    if (v1 <= v0) return;
    memset(dW + v0 * n_out, 0, (size_t)((v1 - v0) * n_out) * sizeof(R));
    for (int64_t i = 0; i < X->n_rows; i++) {
        const R *d = dY + i * n_out;
        for (int64_t p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++) {
            const int64_t vv = X->col[p];
            if (vv < v0 || vv >= v1) continue;
            R *w = dW + vv * n_out;
            const R x = xval[p];
#pragma omp simd
            for (int64_t j = 0; j < n_out; j++) w[j] += x * d[j];
        }
    }
}

/* db (n_out) columns c0..c1 = column sums of dY over the B rows (the bias part of
 * swgrad_cols, in its order). */
static void ENC(colsum_cols)(int64_t B, int64_t n_out, const R *dY, R *db, int64_t c0, int64_t c1)
{
    for (int64_t j = c0; j < c1; j++) db[j] = 0;
    for (int64_t i = 0; i < B; i++) {
        const R *d = dY + i * n_out;
#pragma omp simd
        for (int64_t j = c0; j < c1; j++) db[j] += d[j];
    }
}

int ENC(datm_encoder_backward)(const datm_encoder *e, const R *params, WS *ws,
                               const R *const *dtheta_extra, R *grad, R *const *dphi,
                               datm_error *err)
{
    if (ws->mode != DATM_ENC_TRAIN)
        return datm_error_set(err, DATM_E_INVALID, "encoder: backward needs a TRAIN forward");
    const int L = e->L;
    const int64_t B = ws->B;
    const datm_csr *X = &ws->Xv;
    const datm_param_view *v = e->params.views;
    /* a chunk of a larger mini-batch contributes its share of that mini-batch's mean */
    const int64_t Bn = ws->B_norm > 0 ? ws->B_norm : B;
    const R s = (R)(1.0 / (double)Bn);
    ws->B_total = Bn;

    /* every view is overwritten below; the padding between views is zeroed here (Adam
     * must see finite numbers there) */
    {
        int64_t end = 0;
        for (int i = 0; i < e->params.n_views; i++) {
            const datm_param_view *pv = &e->params.views[i];
            if (pv->offset > end) memset(grad + end, 0, (size_t)(pv->offset - end) * sizeof(R));
            end = pv->offset + pv->rows * pv->cols;
        }
        if (e->params.size > end) memset(grad + end, 0, (size_t)(e->params.size - end) * sizeof(R));
    }
    const int nb = ws->nb > 0 ? ws->nb : 1, nt = ENC(n_threads)(nb);
    const int blas = openblas_get_num_threads();
    openblas_set_num_threads(1);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        /* the weights transposed once for the blocks' dh = dz W^T (one job per matrix) */
#pragma omp for schedule(dynamic, 1)
        for (int j = 3; j < 3 * (L + 1); j++) {
            const int l = j / 3;
            if (j % 3 == 0)
                ENC(transpose)(e->H[l], e->KS[l], params + v[e->iW1[l]].offset, ws->wT1[l]);
            else if (j % 3 == 1)
                ENC(transpose)(e->H[l], e->K[l], params + v[e->iW2[l]].offset, ws->wT2[l]);
            else if (l >= 2)
                ENC(transpose)(e->H[l - 1], e->H[l], params + v[e->iW3[l]].offset, ws->wT3[l]);
        }
        /* (implicit barrier) */
#pragma omp for schedule(static)
        for (int b = 0; b < nb; b++) {
            const int64_t b0 = B * b / nb, b1 = B * (b + 1) / nb;
            WS sl;
            ENC(ws_slice)(e, ws, b0, b1, &sl);
            ENC(backward_rows)(e, params, &sl, dtheta_extra, b0);
        }
        /* (implicit barrier) weight gradients reduce over documents: split them by output
         * columns instead, in nb fixed chunks */
#pragma omp for schedule(static)
        for (int t = 0; t < nb; t++) {
#define COLS(n) (n) * t / nb, (n) * (t + 1) / nb
            for (int l = 1; l <= L; l++) {
                ENC(wgrad_cols)(B, e->H[l], e->KS[l], ws->h[l], ws->dz1[l],
                                grad + v[e->iW1[l]].offset, grad + v[e->ib1[l]].offset, COLS(e->KS[l]));
                ENC(wgrad_cols)(B, e->H[l], e->K[l], ws->h[l], ws->dz2[l],
                                grad + v[e->iW2[l]].offset, grad + v[e->ib2[l]].offset, COLS(e->K[l]));
                if (l >= 2)
                    ENC(wgrad_cols)(B, e->H[l - 1], e->H[l], ws->h[l - 1], ws->dz3[l],
                                    grad + v[e->iW3[l]].offset, grad + v[e->ib3[l]].offset,
                                    COLS(e->H[l]));
            }
            ENC(swgrad_rows)(X, ws->x0, e->H[1], ws->dz3[1], grad + v[e->iW3[1]].offset,
                             COLS(e->K[0]));
            ENC(colsum_cols)(B, e->H[1], ws->dz3[1], grad + v[e->ib3[1]].offset, COLS(e->H[1]));
            if (dphi) {
                for (int l = 1; l < L; l++) {
                    if (!dphi[l + 1]) continue;
                    const int64_t K = e->K[l], K2 = e->K[l + 1];
                    const int64_t c0 = K2 * t / nb, c1 = K2 * (t + 1) / nb;
                    /* d loss / d Phi(l+1) = da(l)^T theta(l+1) */
                    if (c1 > c0)
                        GEMM(1, 0, K, c1 - c0, B, (R)1, ws->da[l], K, ws->theta[l + 1] + c0, K2,
                             (R)0, dphi[l + 1] + c0, K2);
                }
                if (dphi[1]) {
                    /* d loss / d phi_vk = -(1/B) (sum_n ratio_vn theta_nk - sum_n theta_nk) */
                    const int64_t K = e->K[1], V = e->K[0];
                    const int64_t c0 = K * t / nb, c1 = K * (t + 1) / nb;
                    R *tsum = ws->colsum2;
                    ENC(swgrad_cols)(X, ws->ratio, K, ws->theta[1], dphi[1], tsum, c0, c1);
                    for (int64_t vv = 0; vv < V; vv++)
                        for (int64_t j = c0; j < c1; j++)
                            dphi[1][vv * K + j] = -s * (dphi[1][vv * K + j] - tsum[j]);
                }
            }
#undef COLS
        }
    }
    openblas_set_num_threads(blas);
    return DATM_OK;
}
