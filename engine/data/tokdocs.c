/* engine/data/tokdocs.c: token-sequence documents (tokdocs.h). */
#include "data/tokdocs.h"

#include <string.h>

void datm_tokdocs_free(datm_tokdocs *t)
{
    if (!t) return;
    datm_free(t->doc_ptr);
    datm_free(t->tok);
    memset(t, 0, sizeof *t);
}
