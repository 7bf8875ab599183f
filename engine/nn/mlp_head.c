/* engine/nn/mlp_head.c: the sDATM feature map theta(1..L) -> s -> g_2(s) (paper section III,
 * eqs. fearure_fusion_nonlinear and eq:Wm); see mlp_head.h. The numeric body is
 * mlp_head_impl.h, instantiated in f32 and f64, on top of the dense layers of nn.h. */
#include "nn/mlp_head.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "math/math.h"

static const char *const transform_names[DATM_FEAT_COUNT_] = {"raw", "log1p", "prop"};
_Static_assert(DATM_COUNTOF(transform_names) == DATM_FEAT_COUNT_, "transform names");

int datm_feat_transform_parse(const char *s)
{
    for (int i = 0; i < DATM_FEAT_COUNT_; i++)
        if (s && !strcmp(s, transform_names[i])) return i;
    return -1;
}

const char *datm_feat_transform_name(int t)
{
    return t >= 0 && t < DATM_FEAT_COUNT_ ? transform_names[t] : "?";
}

static int add_view(datm_params *p, const char *prefix, const char *what, int idx, int64_t rows,
                    int64_t cols, int *v, int64_t *off, datm_error *err)
{
    char name[DATM_PARAM_NAME_MAX];
    snprintf(name, sizeof name, "%s.%s%d", prefix, what, idx);
    *v = datm_params_add(p, name, rows, cols, err);
    if (*v < 0) return err ? err->code : DATM_E_INVALID;
    *off = p->views[*v].offset;
    return DATM_OK;
}

static int add_const(datm_params *p, const char *prefix, const char *what, int64_t rows,
                     int64_t cols, int *v, int64_t *off, datm_error *err)
{
    char name[DATM_PARAM_NAME_MAX];
    snprintf(name, sizeof name, "%s.%s", prefix, what);
    *v = datm_params_add(p, name, rows, cols, err);
    if (*v < 0) return err ? err->code : DATM_E_INVALID;
    *off = p->views[*v].offset;
    return DATM_OK;
}

int datm_mlp_head_add_params(datm_mlp_head *h, datm_params *p, const char *prefix, int L,
                             const int64_t *k, int transform, int per_layer, int H,
                             const int64_t *a, datm_error *err)
{
    memset(h, 0, sizeof *h);
    if (L < 1 || L > DATM_MAX_LAYERS || H < 0 || H > DATM_MLP_MAX_HIDDEN)
        return datm_error_set(err, DATM_E_INVALID, "mlp head '%s': %d theta layers (1..%d), "
                              "%d hidden layers (0..%d)", prefix, L, DATM_MAX_LAYERS, H,
                              DATM_MLP_MAX_HIDDEN);
    if (transform < 0 || transform >= DATM_FEAT_COUNT_)
        return datm_error_set(err, DATM_E_INVALID, "mlp head '%s': bad transform %d", prefix,
                              transform);
    h->L = L;
    h->transform = transform;
    h->per_layer = per_layer ? 1 : 0;
    h->H = H;
    for (int l = 0; l < L; l++) {
        if (k[l] < 1)
            return datm_error_set(err, DATM_E_INVALID, "mlp head '%s': K_%d = %lld", prefix,
                                  l + 1, (long long)k[l]);
        h->k[l] = k[l];
        h->k_off[l] = h->S;
        h->S += k[l];
    }
    for (int j = 0; j < H; j++) {
        if (a[j] < 1)
            return datm_error_set(err, DATM_E_INVALID, "mlp head '%s': hidden width %d = %lld",
                                  prefix, j + 1, (long long)a[j]);
        h->a[j] = a[j];
    }
    h->out_dim = H ? a[H - 1] : h->S;
    int st;
    if (h->per_layer)
        for (int l = 0; l < L; l++) {
            if ((st = add_view(p, prefix, "g1_W", l + 1, k[l], k[l], &h->v_w1[l], &h->o_w1[l], err)) ||
                (st = add_view(p, prefix, "g1_b", l + 1, 1, k[l], &h->v_b1[l], &h->o_b1[l], err)))
                return st;
        }
    for (int j = 0; j < H; j++) {
        int64_t n_in = j ? a[j - 1] : h->S;
        if ((st = add_view(p, prefix, "g2_W", j + 1, n_in, a[j], &h->v_w[j], &h->o_w[j], err)) ||
            (st = add_view(p, prefix, "g2_b", j + 1, 1, a[j], &h->v_b[j], &h->o_b[j], err)))
            return st;
    }
    if ((st = add_const(p, prefix, "norm_shift", 1, h->S, &h->v_shift, &h->o_shift, err)) ||
        (st = add_const(p, prefix, "norm_scale", 1, h->S, &h->v_scale, &h->o_scale, err)) ||
        (st = add_const(p, prefix, "norm_set", 1, 1, &h->v_norm_set, &h->o_norm_set, err)))
        return st;
    return DATM_OK;
}

void datm_mlp_head_init_values(const datm_mlp_head *h, datm_params *p, datm_rng *rng)
{
    if (h->per_layer)
        for (int l = 0; l < h->L; l++) {
            datm_params_fill_normal(p, h->v_w1[l], 1.0 / sqrt((double)h->k[l]), rng);
            datm_params_fill_const(p, h->v_b1[l], 0.0);
        }
    for (int j = 0; j < h->H; j++) {
        int64_t n_in = j ? h->a[j - 1] : h->S;
        datm_params_fill_normal(p, h->v_w[j], 1.0 / sqrt((double)n_in), rng);
        datm_params_fill_const(p, h->v_b[j], 0.0);
    }
    datm_params_fill_const(p, h->v_shift, 0.0);
    datm_params_fill_const(p, h->v_scale, 1.0);
    datm_params_fill_const(p, h->v_norm_set, 0.0);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void datm_mlp_head_set_norm(const datm_mlp_head *h, float *block, const float *const *theta,
                            int64_t n, double sd_floor)
{
    float *shift = block + h->o_shift, *scale = block + h->o_scale;
    for (int l = 0; l < h->L; l++) {
        const int64_t K = h->k[l];
        double *sum = datm_alloc_array((size_t)(3 * K), sizeof(double), NULL);
        DATM_ASSERT(sum != NULL);
        double *sq = sum + K, *sds = sum + 2 * K;
        for (int64_t i = 0; i < n; i++) {
            const float *x = theta[l] + i * K;
            double tot = 0;
            if (h->transform == DATM_FEAT_PROP)
                for (int64_t k = 0; k < K; k++) tot += x[k];
            for (int64_t k = 0; k < K; k++) {
                double t = h->transform == DATM_FEAT_LOG1P ? log1p((double)x[k])
                         : h->transform == DATM_FEAT_PROP  ? (tot > 0 ? x[k] / tot : 0.0)
                                                           : (double)x[k];
                sum[k] += t;
                sq[k] += t * t;
            }
        }
        for (int64_t k = 0; k < K; k++) {
            const double m = n > 0 ? sum[k] / (double)n : 0.0;
            const double var = n > 0 ? sq[k] / (double)n - m * m : 1.0;
            sum[k] = m;
            sds[k] = sqrt(var > 0 ? var : 0);
        }
        double lfl = 0;   /* the layer's floor */
        if (sd_floor > 0) {
            memcpy(sq, sds, (size_t)K * sizeof(double));
            qsort(sq, (size_t)K, sizeof(double), cmp_double);
            const double med = K % 2 ? sq[K / 2] : 0.5 * (sq[K / 2 - 1] + sq[K / 2]);
            lfl = med > 0 ? sd_floor * med : 1.0;
        }
        for (int64_t k = 0; k < K; k++) {
            const double m = sum[k], sd = sds[k];
            const double fl = sd_floor > 0 ? lfl : 1e-6 * (fabs(m) > 1e-6 ? fabs(m) : 1e-6);
            shift[h->k_off[l] + k] = (float)m;
            scale[h->k_off[l] + k] = (float)(1.0 / (sd > fl ? sd : fl));
        }
        datm_free(sum);
    }
    block[h->o_norm_set] = 1.0f;
}

int64_t datm_mlp_head_cache_len(const datm_mlp_head *h, int64_t B)
{
    int64_t n = 2 * B * h->S + B * h->L + (h->per_layer ? B * h->S : 0) + B * h->S;
    for (int j = 0; j < h->H; j++) n += 2 * B * h->a[j];
    return n;
}

int64_t datm_mlp_head_work_len(const datm_mlp_head *h, int64_t B)
{
    int64_t wmax = 0;
    for (int j = 0; j < h->H; j++) wmax = DATM_MAX(wmax, h->a[j]);
    for (int l = 0; l < h->L; l++) wmax = DATM_MAX(wmax, h->k[l]);
    return B * h->S + 2 * B * wmax;
}

#define REAL float
#define SFX f32
#define SOFTPLUS datm_softplusf
#define LOG1PR log1pf
#define TINY FLT_MIN
#include "nn/mlp_head_impl.h"
#undef REAL
#undef SFX
#undef SOFTPLUS
#undef LOG1PR
#undef TINY

#define REAL double
#define SFX f64
#define SOFTPLUS datm_softplus
#define LOG1PR log1p
#define TINY DBL_MIN
#include "nn/mlp_head_impl.h"
