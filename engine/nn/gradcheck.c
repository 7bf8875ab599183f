/* engine/nn/gradcheck.c: analytic gradient vs 4th-order central differences, in double.
 * Used by every backward pass's test (STYLE: "central finite differences on every backward"). */
#include <math.h>
#include <string.h>

#include "nn/nn.h"

int datm_gradcheck_f64(datm_objective_f64 f, void *ctx, double *x, int64_t n,
                       const int64_t *idx, int64_t n_idx, double rel_h, double floor,
                       datm_gradcheck *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    out->worst = -1;
    double *g = datm_alloc_array((size_t)n, sizeof(double), err);
    if (!g) return err ? err->code : DATM_E_NOMEM;
    f(ctx, x, g);
    int64_t m = idx ? n_idx : n;
    for (int64_t j = 0; j < m; j++) {
        int64_t i = idx ? idx[j] : j;
        DATM_ASSERT(i >= 0 && i < n);
        double x0 = x[i];
        double h = rel_h * fmax(1.0, fabs(x0));
        x[i] = x0 - 2 * h; double fm2 = f(ctx, x, NULL);
        x[i] = x0 - h;     double fm1 = f(ctx, x, NULL);
        x[i] = x0 + h;     double fp1 = f(ctx, x, NULL);
        x[i] = x0 + 2 * h; double fp2 = f(ctx, x, NULL);
        x[i] = x0;
        double d = (fm2 - 8 * fm1 + 8 * fp1 - fp2) / (12 * h);
        double a = g[i];
        out->n_checked++;
        double scale = fmax(fmax(fabs(a), fabs(d)), floor);
        if (fabs(a) < floor && fabs(d) < floor) out->n_below_floor++;
        double rel = fabs(a - d) / scale;
        if (!(rel <= out->max_rel_err)) {   /* also catches NaN */
            out->max_rel_err = isnan(rel) ? INFINITY : rel;
            out->worst = i;
            out->worst_analytic = a;
            out->worst_numeric = d;
        }
    }
    datm_free(g);
    return DATM_OK;
}
