/* engine/data/tokdocs.h: documents as token sequences over a vocabulary, the order kept (the
 * bag-of-words corpus drops it). Sliding-window coherence (eval/coherence.h) counts word
 * co-occurrences in windows of consecutive positions, so a position whose token is outside the
 * vocabulary (or a stop word) is kept as -1: it still takes up its place in a window.
 * Letters: N documents, T token positions in all. */
#ifndef DATM_DATA_TOKDOCS_H
#define DATM_DATA_TOKDOCS_H

#include <stdint.h>

#include "core/core.h"

typedef struct datm_tokdocs {
    int64_t  n_docs;    /* N */
    int64_t  n_vocab;   /* V: ids are in [0, V) or -1 */
    int64_t *doc_ptr;   /* (N + 1) document d is tok[doc_ptr[d] .. doc_ptr[d+1]) */
    int32_t *tok;       /* (T) word id per position, -1 = no vocabulary word there */
} datm_tokdocs;

void datm_tokdocs_free(datm_tokdocs *t);   /* frees the arrays, zeroes the struct */

#endif
