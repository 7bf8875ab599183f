/* models/variant_schema.c: WHAI's schema edited and extended for its variants (see the
 * header). */
#include <string.h>

#include "variant_schema.h"

void variant_schema_build(datm_param_schema *dst, int cap, const datm_param_schema *base,
                          const variant_schema_edit *edits, int n_edits,
                          const datm_param_schema *extra)
{
    int n = 0;
    for (int i = 0; base[i].key; i++) {
        DATM_ASSERT(n < cap - 1);
        dst[n++] = base[i];
    }
    for (int e = 0; e < n_edits; e++) {
        int found = 0;
        for (int i = 0; i < n; i++) {
            if (strcmp(dst[i].key, edits[e].key) != 0) continue;
            if (edits[e].def) dst[i].def = edits[e].def;
            if (edits[e].doc) dst[i].doc = edits[e].doc;
            found = 1;
        }
        DATM_ASSERT(found);
    }
    for (int i = 0; extra && extra[i].key; i++) {
        DATM_ASSERT(n < cap - 1);
        dst[n++] = extra[i];
    }
    memset(&dst[n], 0, sizeof dst[n]);
}
