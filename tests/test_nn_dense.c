/* ctest-labels: unit;grad  ctest-timeout: 60  ctest-link: datm_nn */
/* Dense and sparse-input layers + softplus: analytic backward vs central differences in
 * double (rel. err < 1e-6), the f32 path vs the f64 path, softplus at extreme inputs; the f32
 * layers at the sDATM head's sizes (rows split over the OpenMP team; BLAS for other shapes)
 * give the same bits with 1, 2 and 3 threads. */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn.h"
#include "test_check.h"


enum { B = 5, NI = 7, NO = 4, V = 12 };

/* x = [W (NI,NO) | b (NO) | X (B,NI)]; f = sum c * softplus(X W + b) */
typedef struct { double c[B * NO]; const datm_csr *S; double sval[64]; } ctx_t;

static double dense_obj(void *vc, const double *x, double *g)
{
    ctx_t *c = vc;
    const double *W = x, *b = x + NI * NO, *X = x + NI * NO + NO;
    double Z[B * NO], Y[B * NO], dZ[B * NO];
    datm_dense_forward_f64(B, NI, NO, X, W, b, Z);
    datm_softplus_f64(B * NO, Z, Y);
    double f = 0;
    for (int i = 0; i < B * NO; i++) f += c->c[i] * Y[i];
    if (g) {
        datm_softplus_backward_f64(B * NO, Z, c->c, dZ);
        datm_dense_backward_f64(B, NI, NO, X, W, dZ, g, g + NI * NO, g + NI * NO + NO, 0.0);
    }
    return f;
}

/* x = [W (V,NO) | b (NO)]; f = sum c * softplus(S W + b) with S sparse (B, V) */
static double sparse_obj(void *vc, const double *x, double *g)
{
    ctx_t *c = vc;
    const double *W = x, *b = x + V * NO;
    double Z[B * NO], Y[B * NO], dZ[B * NO];
    datm_sparse_dense_forward_f64(c->S, c->sval, NO, W, b, Z);
    datm_softplus_f64(B * NO, Z, Y);
    double f = 0;
    for (int i = 0; i < B * NO; i++) f += c->c[i] * Y[i];
    if (g) {
        datm_softplus_backward_f64(B * NO, Z, c->c, dZ);
        datm_sparse_dense_backward_f64(c->S, c->sval, NO, dZ, g, g + V * NO);
    }
    return f;
}

/* The f32 layer at a head-sized shape (rows split over the team above 2^20 multiply-adds):
 * forward, dW, db and dX with 1, 2 and 3 threads (OpenMP and OpenBLAS), bit for bit. n_out
 * 200 is a multiple of 8 (the split's kernel), n_in 104 too; nb 200 rows and 61 (odd blocks);
 * n_out 15 goes to BLAS. */
static void check_split(int64_t nb, int64_t ni, int64_t no)
{
    const size_t nx = (size_t)(nb * ni), nw = (size_t)(ni * no), ny = (size_t)(nb * no);
    float *X = malloc(nx * sizeof *X), *W = malloc(nw * sizeof *W), *b = malloc(no * sizeof *b);
    float *dY = malloc(ny * sizeof *dY);
    float *out[3][4];
    datm_rng rng;
    datm_rng_init(&rng, 7, 1, 0);
    for (size_t i = 0; i < nx; i++) X[i] = (float)datm_rng_normal(&rng);
    for (size_t i = 0; i < nw; i++) W[i] = (float)(0.1 * datm_rng_normal(&rng));
    for (int64_t i = 0; i < no; i++) b[i] = (float)datm_rng_normal(&rng);
    for (size_t i = 0; i < ny; i++) dY[i] = (float)datm_rng_normal(&rng);
    const int had = omp_get_max_threads();
    for (int t = 0; t < 3; t++) {
        omp_set_num_threads(t + 1);
        openblas_set_num_threads(t + 1);   /* as datm run --threads sets both */
        out[t][0] = malloc(ny * sizeof(float));
        out[t][1] = malloc(nw * sizeof(float));
        out[t][2] = malloc(no * sizeof(float));
        out[t][3] = malloc(nx * sizeof(float));
        datm_dense_forward_f32(nb, ni, no, X, W, b, out[t][0]);
        datm_dense_backward_f32(nb, ni, no, X, W, dY, out[t][1], out[t][2], out[t][3], 0.0f);
    }
    omp_set_num_threads(had);
    openblas_set_num_threads(had);
    const size_t len[4] = {ny, nw, (size_t)no, nx};
    static const char *const what[4] = {"forward", "dW", "db", "dX"};
    for (int t = 1; t < 3; t++)
        for (int a = 0; a < 4; a++)
            CHECK(!memcmp(out[0][a], out[t][a], len[a] * sizeof(float)),
                  "%lldx%lldx%lld: %s with %d threads differs from 1 thread", (long long)nb,
                  (long long)ni, (long long)no, what[a],
                  t + 1);
    double md = 0;   /* and the forward is the product (not, e.g., left unwritten) */
    for (int64_t i = 0; i < nb; i += 9)
        for (int64_t j = 0; j < no; j += 7) {
            double z = b[j];
            for (int64_t k = 0; k < ni; k++) z += (double)X[i * ni + k] * W[k * no + j];
            md = fmax(md, fabs(z - out[1][0][i * no + j]));
        }
    CHECK(md < 1e-4, "rows %lld: split forward vs double %.3g", (long long)nb, md);
    for (int t = 0; t < 3; t++)
        for (int a = 0; a < 4; a++) free(out[t][a]);
    free(X), free(W), free(b), free(dY);
}

int main(void)
{
    datm_rng rng;
    datm_rng_init(&rng, 7, DATM_STREAM_TEST, 1);
    ctx_t c;
    for (int i = 0; i < B * NO; i++) c.c[i] = datm_rng_normal(&rng);

    /* dense: every weight, bias and input */
    double x[NI * NO + NO + B * NI];
    int n = (int)(sizeof x / sizeof x[0]);
    for (int i = 0; i < n; i++) x[i] = datm_rng_normal(&rng);
    datm_gradcheck r;
    datm_gradcheck_f64(dense_obj, &c, x, n, NULL, 0, 1e-4, 1e-10, &r, NULL);
    printf("dense: %lld checked, max rel err %.3g (worst %lld: %.9g vs %.9g)\n",
           (long long)r.n_checked, r.max_rel_err, (long long)r.worst, r.worst_analytic,
           r.worst_numeric);
    CHECK(r.max_rel_err < 1e-6, "dense gradient rel err %.3g", r.max_rel_err);

    /* sparse input: a random (B, V) pattern */
    int64_t row_ptr[B + 1];
    int32_t col[B * V];
    float val[B * V];
    int64_t nnz = 0;
    row_ptr[0] = 0;
    for (int i = 0; i < B; i++) {
        for (int v = 0; v < V; v++)
            if (datm_rng_uniform(&rng) < 0.4) {
                col[nnz] = v;
                val[nnz] = (float)(1 + datm_rng_below(&rng, 4));
                c.sval[nnz] = log1p(val[nnz]);
                nnz++;
            }
        row_ptr[i + 1] = nnz;
    }
    datm_csr S = {B, V, nnz, row_ptr, col, val};
    c.S = &S;
    double xs[V * NO + NO];
    for (int i = 0; i < V * NO + NO; i++) xs[i] = datm_rng_normal(&rng);
    datm_gradcheck_f64(sparse_obj, &c, xs, V * NO + NO, NULL, 0, 1e-4, 1e-10, &r, NULL);
    printf("sparse: %lld checked (%lld zero), max rel err %.3g\n", (long long)r.n_checked,
           (long long)r.n_below_floor, r.max_rel_err);
    CHECK(r.max_rel_err < 1e-6, "sparse gradient rel err %.3g", r.max_rel_err);

    /* f32 vs f64, dense and sparse, forward and backward */
    {
        float Wf[V * NO], bf[NO], Xf[B * NI], Zf[B * NO], dWf[V * NO], dbf[NO], dXf[B * NI];
        float dYf[B * NO];
        double Zd[B * NO], dWd[V * NO], dbd[NO], dXd[B * NI];
        for (int i = 0; i < NI * NO; i++) Wf[i] = (float)x[i];
        for (int i = 0; i < NO; i++) bf[i] = (float)x[NI * NO + i];
        for (int i = 0; i < B * NI; i++) Xf[i] = (float)x[NI * NO + NO + i];
        for (int i = 0; i < B * NO; i++) dYf[i] = (float)c.c[i];
        double Wd[V * NO], bd[NO], Xd[B * NI];
        for (int i = 0; i < NI * NO; i++) Wd[i] = Wf[i];
        for (int i = 0; i < NO; i++) bd[i] = bf[i];
        for (int i = 0; i < B * NI; i++) Xd[i] = Xf[i];
        datm_dense_forward_f32(B, NI, NO, Xf, Wf, bf, Zf);
        datm_dense_forward_f64(B, NI, NO, Xd, Wd, bd, Zd);
        double md = 0;
        for (int i = 0; i < B * NO; i++) md = fmax(md, fabs(Zf[i] - Zd[i]));
        CHECK(md < 1e-5, "dense f32 vs f64 forward %.3g", md);
        datm_dense_backward_f32(B, NI, NO, Xf, Wf, dYf, dWf, dbf, dXf, 0.0f);
        datm_dense_backward_f64(B, NI, NO, Xd, Wd, c.c, dWd, dbd, dXd, 0.0);
        md = 0;
        for (int i = 0; i < NI * NO; i++) md = fmax(md, fabs(dWf[i] - dWd[i]));
        for (int i = 0; i < NO; i++) md = fmax(md, fabs(dbf[i] - dbd[i]));
        for (int i = 0; i < B * NI; i++) md = fmax(md, fabs(dXf[i] - dXd[i]));
        CHECK(md < 1e-5, "dense f32 vs f64 backward %.3g", md);

        float sv[64];
        for (int64_t p = 0; p < nnz; p++) sv[p] = (float)c.sval[p];
        for (int i = 0; i < V * NO; i++) { Wf[i] = (float)xs[i]; Wd[i] = Wf[i]; }
        for (int i = 0; i < NO; i++) { bf[i] = (float)xs[V * NO + i]; bd[i] = bf[i]; }
        datm_sparse_dense_forward_f32(&S, sv, NO, Wf, bf, Zf);
        datm_sparse_dense_forward_f64(&S, c.sval, NO, Wd, bd, Zd);
        md = 0;
        for (int i = 0; i < B * NO; i++) md = fmax(md, fabs(Zf[i] - Zd[i]));
        CHECK(md < 1e-5, "sparse f32 vs f64 forward %.3g", md);
        datm_sparse_dense_backward_f32(&S, sv, NO, dYf, dWf, dbf);
        datm_sparse_dense_backward_f64(&S, c.sval, NO, c.c, dWd, dbd);
        md = 0;
        for (int i = 0; i < V * NO; i++) md = fmax(md, fabs(dWf[i] - dWd[i]));
        for (int i = 0; i < NO; i++) md = fmax(md, fabs(dbf[i] - dbd[i]));
        CHECK(md < 1e-5, "sparse f32 vs f64 backward %.3g", md);
    }

    /* softplus at extreme inputs: finite, exact limits */
    {
        const double zs[] = {-1e4, -100, -30, -1e-8, 0, 1e-8, 30, 100, 1e4, 3e38};
        for (size_t i = 0; i < sizeof zs / sizeof zs[0]; i++) {
            float zf = (float)zs[i], yf, gf, one = 1.0f;
            double zd = zs[i], yd, gd, oned = 1.0;
            datm_softplus_f32(1, &zf, &yf);
            datm_softplus_backward_f32(1, &zf, &one, &gf);
            datm_softplus_f64(1, &zd, &yd);
            datm_softplus_backward_f64(1, &zd, &oned, &gd);
            CHECK(isfinite(yf) && isfinite(gf) && yf >= 0 && gf >= 0 && gf <= 1,
                  "softplus f32 at %g: %g %g", zs[i], yf, gf);
            CHECK(isfinite(yd) && isfinite(gd) && yd >= 0, "softplus f64 at %g", zs[i]);
            double ref = zd > 0 ? zd + log1p(exp(-zd)) : log1p(exp(zd));
            CHECK(fabs(yd - ref) <= 1e-15 * fmax(1, fabs(ref)), "softplus f64 value at %g", zd);
            CHECK(fabs(yf - ref) <= 2e-7 * fmax(1e-30, fabs(ref)) || fabs(yf - ref) < 1e-38,
                  "softplus f32 value at %g: %.9g vs %.17g", zd, yf, ref);
        }
    }
    check_split(200, 104, 200);
    check_split(61, 104, 200);
    /* a head's output layer with 15 classes (N % 8 != 0: BLAS, whose bits depend on its
     * thread count unless it is given one thread) */
    check_split(200, 256, 15);
    return check_result();
}
