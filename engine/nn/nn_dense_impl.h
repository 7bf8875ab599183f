/* engine/nn/nn_dense_impl.h: dense layers, written once for a real type.
 * Included by dense.c twice: with R = float (suffix f32) and R = double (suffix f64).
 * Expects: R, FN(name) (appends the suffix), GEMM (datm_sgemm or datm_dgemm). */

void FN(datm_dense_forward)(int64_t B, int64_t n_in, int64_t n_out, const R *X, const R *W,
                            const R *b, R *Y)
{
    if (B == 0) return;
#ifdef GEMM_BIAS
    if (b) {   /* bias rows and product in one pass (same values) */
        GEMM_BIAS(B, n_out, n_in, X, n_in, W, n_out, b, Y, n_out);
        return;
    }
#endif
    if (b) {
        for (int64_t i = 0; i < B; i++) memcpy(Y + i * n_out, b, (size_t)n_out * sizeof(R));
    }
    GEMM(0, 0, B, n_out, n_in, (R)1, X, n_in, W, n_out, b ? (R)1 : (R)0, Y, n_out);
}

void FN(datm_dense_backward)(int64_t B, int64_t n_in, int64_t n_out, const R *X, const R *W,
                             const R *dY, R *dW, R *db, R *dX, R dx_beta)
{
    if (dW) GEMM(1, 0, n_in, n_out, B, (R)1, X, n_in, dY, n_out, (R)0, dW, n_out);
    if (db) {
        for (int64_t j = 0; j < n_out; j++) db[j] = 0;
        for (int64_t i = 0; i < B; i++) {
            const R *d = dY + i * n_out;
            for (int64_t j = 0; j < n_out; j++) db[j] += d[j];
        }
    }
    if (dX) GEMM(0, 1, B, n_in, n_out, (R)1, dY, n_out, W, n_out, dx_beta, dX, n_in);
}
