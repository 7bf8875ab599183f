/* models/sdatm_ens.c: the ring of model states behind the trajectory ensemble; see
 * sdatm_ens.h. */
#include "sdatm_ens.h"

#include <string.h>

#include "io/h5.h"

#define ENS_GROUP "trajectory_ensemble"

int sdatm_ens_init(sdatm_ens *e, int cap, int64_t len_enc, int64_t len_head, int L,
                   const int64_t *rows, const int64_t *cols, datm_error *err)
{
    memset(e, 0, sizeof *e);
    e->cap = cap;
    e->L = L;
    e->len_enc = len_enc;
    e->len_head = len_head;
    e->slot_len = len_enc + len_head;
    for (int l = 2; l <= L; l++) {
        e->len_phi[l] = rows[l] * cols[l];
        e->slot_len += e->len_phi[l];
    }
    if (cap <= 0) return DATM_OK;
    e->block = datm_alloc_array((size_t)cap * (size_t)e->slot_len, sizeof(float), err);
    e->epoch = datm_alloc_array((size_t)cap, sizeof(int64_t), err);
    if (!e->block || !e->epoch) {
        sdatm_ens_free(e);
        return DATM_E_NOMEM;
    }
    return DATM_OK;
}

void sdatm_ens_take(sdatm_ens *e, int64_t epoch, const float *enc, const float *head,
                    const float *const *phi)
{
    if (e->cap <= 0) return;
    const size_t slot = (size_t)e->slot_len;
    if (e->n == e->cap) {
        /* drop the oldest; the block stays in order, so a save needs no unrolling */
        memmove(e->block, e->block + slot, (size_t)(e->cap - 1) * slot * sizeof(float));
        memmove(e->epoch, e->epoch + 1, (size_t)(e->cap - 1) * sizeof(int64_t));
        e->n--;
    }
    float *dst = e->block + (size_t)e->n * slot;
    memcpy(dst, enc, (size_t)e->len_enc * sizeof(float));
    dst += e->len_enc;
    memcpy(dst, head, (size_t)e->len_head * sizeof(float));
    dst += e->len_head;
    for (int l = 2; l <= e->L; l++) {
        memcpy(dst, phi[l], (size_t)e->len_phi[l] * sizeof(float));
        dst += e->len_phi[l];
    }
    e->epoch[e->n++] = epoch;
}

sdatm_ens_state sdatm_ens_get(const sdatm_ens *e, int j)
{
    sdatm_ens_state s;
    memset(&s, 0, sizeof s);
    const float *p = e->block + (size_t)j * (size_t)e->slot_len;
    s.enc = p;
    p += e->len_enc;
    s.head = p;
    p += e->len_head;
    for (int l = 2; l <= e->L; l++) {
        s.phi[l] = p;
        p += e->len_phi[l];
    }
    return s;
}

int sdatm_ens_save(const sdatm_ens *e, struct datm_h5 *g, datm_error *err)
{
    if (e->n == 0) return DATM_OK;
    datm_h5 *ge = NULL;
    const int64_t dims[2] = {e->n, e->slot_len}, ne[1] = {e->n};
    int rc = datm_h5_group(g, ENS_GROUP, 1, &ge, err);
    if (!rc) rc = datm_h5_write_f32(ge, "states", e->block, 2, dims, err);
    if (!rc) rc = datm_h5_write_i64(ge, "epoch", e->epoch, 1, ne, err);
    if (!rc) rc = datm_h5_attr_i64(ge, "cap", e->cap, err);
    datm_h5_close(&ge);
    return rc;
}

int sdatm_ens_load(sdatm_ens *e, struct datm_h5 *g, datm_error *err)
{
    e->n = 0;
    if (!datm_h5_exists(g, ENS_GROUP)) return DATM_OK;
    datm_h5 *ge = NULL;
    int64_t dims[8] = {0};
    int rc = datm_h5_group(g, ENS_GROUP, 0, &ge, err);
    if (!rc) {
        const int rank = datm_h5_shape(ge, "states", dims);
        if (rank != 2 || dims[1] != e->slot_len || dims[0] < 1 || dims[0] > e->cap)
            rc = datm_error_set(err, DATM_E_FORMAT, "%s/states: shape (%lld, %lld) does not fit "
                                "model.predict_snapshots %d of %lld floats each", ENS_GROUP,
                                (long long)dims[0], (long long)dims[1], e->cap,
                                (long long)e->slot_len);
    }
    const int64_t ne[1] = {dims[0]};
    if (!rc) rc = datm_h5_read_f32(ge, "states", e->block, 2, dims, err);
    if (!rc) rc = datm_h5_read_i64(ge, "epoch", e->epoch, 1, ne, err);
    if (!rc) e->n = (int)dims[0];
    datm_h5_close(&ge);
    return rc;
}

void sdatm_ens_free(sdatm_ens *e)
{
    datm_free(e->block);
    datm_free(e->epoch);
    e->block = NULL;
    e->epoch = NULL;
    e->n = 0;
}
