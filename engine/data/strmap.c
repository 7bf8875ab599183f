/* engine/data/strmap.c: string -> dense id interning (see strmap.h). */
#include "data/strmap.h"

#include <string.h>

static uint64_t hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a 64 */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

int datm_strmap_init(datm_strmap *m, datm_error *err)
{
    memset(m, 0, sizeof *m);
    m->cap = 1024;
    m->slots = datm_alloc_array(m->cap, sizeof *m->slots, err);
    m->n_cap = 1024;
    m->str = datm_alloc_array((size_t)m->n_cap, sizeof *m->str, err);
    if (!m->slots || !m->str) {
        datm_strmap_free(m);
        return err ? err->code : DATM_E_NOMEM;
    }
    memset(m->slots, 0xff, m->cap * sizeof *m->slots);
    return DATM_OK;
}

void datm_strmap_free(datm_strmap *m)
{
    if (!m) return;
    if (m->str)
        for (int32_t i = 0; i < m->n; i++) datm_free(m->str[i]);
    datm_free(m->str);
    datm_free(m->slots);
    memset(m, 0, sizeof *m);
}

/* Slot holding s, or the empty slot where it would go. */
static size_t probe(const datm_strmap *m, const char *s, size_t len)
{
    size_t mask = m->cap - 1, i = (size_t)hash(s, len) & mask;
    for (;;) {
        int32_t id = m->slots[i];
        if (id < 0) return i;
        const char *t = m->str[id];
        if (strncmp(t, s, len) == 0 && t[len] == '\0') return i;
        i = (i + 1) & mask;
    }
}

int32_t datm_strmap_find(const datm_strmap *m, const char *s, size_t len)
{
    return m->slots[probe(m, s, len)];
}

static int grow(datm_strmap *m, datm_error *err)
{
    size_t cap = m->cap * 2;
    int32_t *slots = datm_alloc_array(cap, sizeof *slots, err);
    if (!slots) return err ? err->code : DATM_E_NOMEM;
    memset(slots, 0xff, cap * sizeof *slots);
    for (int32_t id = 0; id < m->n; id++) {
        size_t i = (size_t)hash(m->str[id], strlen(m->str[id])) & (cap - 1);
        while (slots[i] >= 0) i = (i + 1) & (cap - 1);
        slots[i] = id;
    }
    datm_free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return DATM_OK;
}

int32_t datm_strmap_intern(datm_strmap *m, const char *s, size_t len, datm_error *err)
{
    size_t i = probe(m, s, len);
    if (m->slots[i] >= 0) return m->slots[i];
    if (m->n == INT32_MAX) { datm_error_set(err, DATM_E_NOMEM, "too many distinct strings"); return -1; }
    if (m->n == m->n_cap) {
        char **ns = datm_alloc_array((size_t)m->n_cap * 2, sizeof *ns, err);
        if (!ns) return -1;
        memcpy(ns, m->str, (size_t)m->n * sizeof *ns);
        datm_free(m->str);
        m->str = ns;
        m->n_cap *= 2;
    }
    char *copy = datm_alloc(len + 1, err);
    if (!copy) return -1;
    memcpy(copy, s, len);
    copy[len] = '\0';
    int32_t id = m->n++;
    m->str[id] = copy;
    m->slots[i] = id;
    if ((size_t)m->n * 2 > m->cap && grow(m, err)) return -1;
    return id;
}
