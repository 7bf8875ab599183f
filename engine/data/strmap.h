/* engine/data/strmap.h (internal to engine/data): interning of strings to dense ids
 * 0, 1, 2, ... in first-seen order (open addressing, FNV-1a). Used to build vocabularies
 * and category lists; ids depend only on the order of insertion, so output is deterministic. */
#ifndef DATM_DATA_STRMAP_H
#define DATM_DATA_STRMAP_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

typedef struct datm_strmap {
    int32_t *slots;     /* (cap) id or -1 */
    size_t   cap;       /* power of two */
    char   **str;       /* (n) interned copies, owned */
    int32_t  n, n_cap;
} datm_strmap;

int  datm_strmap_init(datm_strmap *m, datm_error *err);
void datm_strmap_free(datm_strmap *m);
/* Id of s[0..len), or -1. */
int32_t datm_strmap_find(const datm_strmap *m, const char *s, size_t len);
/* Id of s[0..len), inserting it if new; -1 on allocation failure (err set). */
int32_t datm_strmap_intern(datm_strmap *m, const char *s, size_t len, datm_error *err);

#endif
