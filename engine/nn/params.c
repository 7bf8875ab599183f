/* engine/nn/params.c: the parameter block of a model -- one contiguous float array (values)
 * and a twin (gradients), carved into named, 64-byte aligned views. */
#include <math.h>
#include <string.h>

#include "nn/nn.h"

#define DATM_PARAM_ALIGN 16   /* floats = 64 bytes */

int datm_params_add(datm_params *p, const char *name, int64_t rows, int64_t cols,
                    datm_error *err)
{
    DATM_ASSERT(p->value == NULL);
    if (rows <= 0 || cols <= 0) {
        datm_error_set(err, DATM_E_INVALID, "params: view '%s' has bad shape (%lld, %lld)",
                       name, (long long)rows, (long long)cols);
        return -1;
    }
    if (strlen(name) >= DATM_PARAM_NAME_MAX) {
        datm_error_set(err, DATM_E_INVALID, "params: view name '%s' longer than %d", name,
                       DATM_PARAM_NAME_MAX - 1);
        return -1;
    }
    if (datm_params_find(p, name) >= 0) {
        datm_error_set(err, DATM_E_INVALID, "params: duplicate view '%s'", name);
        return -1;
    }
    if (p->n_views == p->cap_views) {
        int cap = p->cap_views ? 2 * p->cap_views : 16;
        datm_param_view *v = datm_alloc_array((size_t)cap, sizeof *v, err);
        if (!v) return -1;
        if (p->views) memcpy(v, p->views, (size_t)p->n_views * sizeof *v);
        datm_free(p->views);
        p->views = v;
        p->cap_views = cap;
    }
    datm_param_view *v = &p->views[p->n_views];
    memset(v, 0, sizeof *v);
    strcpy(v->name, name);
    v->rows = rows;
    v->cols = cols;
    v->offset = p->size;
    int64_t len = rows * cols;
    p->size += (len + DATM_PARAM_ALIGN - 1) / DATM_PARAM_ALIGN * DATM_PARAM_ALIGN;
    return p->n_views++;
}

int datm_params_alloc(datm_params *p, datm_error *err)
{
    DATM_ASSERT(p->value == NULL && p->size > 0);
    p->value = datm_alloc_array((size_t)p->size, sizeof(float), err);
    if (!p->value) return err ? err->code : DATM_E_NOMEM;
    p->grad = datm_alloc_array((size_t)p->size, sizeof(float), err);
    if (!p->grad) {
        datm_free(p->value);
        p->value = NULL;
        return err ? err->code : DATM_E_NOMEM;
    }
    return DATM_OK;
}

void datm_params_free(datm_params *p)
{
    if (!p) return;
    datm_free(p->views);
    datm_free(p->value);
    datm_free(p->grad);
    memset(p, 0, sizeof *p);
}

int datm_params_find(const datm_params *p, const char *name)
{
    for (int i = 0; i < p->n_views; i++)
        if (!strcmp(p->views[i].name, name)) return i;
    return -1;
}

int64_t datm_params_count(const datm_params *p)
{
    int64_t n = 0;
    for (int i = 0; i < p->n_views; i++) n += datm_params_len(p, i);
    return n;
}

void datm_params_fill_normal(datm_params *p, int i, double sd, datm_rng *rng)
{
    float *x = datm_params_value(p, i);
    for (int64_t j = 0, n = datm_params_len(p, i); j < n; j++)
        x[j] = (float)(sd * datm_rng_normal(rng));
}

void datm_params_fill_uniform(datm_params *p, int i, double lo, double hi, datm_rng *rng)
{
    float *x = datm_params_value(p, i);
    for (int64_t j = 0, n = datm_params_len(p, i); j < n; j++)
        x[j] = (float)(lo + (hi - lo) * datm_rng_uniform(rng));
}

void datm_params_fill_const(datm_params *p, int i, double v)
{
    float *x = datm_params_value(p, i);
    for (int64_t j = 0, n = datm_params_len(p, i); j < n; j++) x[j] = (float)v;
}

void datm_params_zero_grad(datm_params *p)
{
    if (p->grad) memset(p->grad, 0, (size_t)p->size * sizeof(float));
}
