/* engine/api/api_internal.h (internal): what the public handles of include/datm.h hold. */
#ifndef DATM_API_INTERNAL_H
#define DATM_API_INTERNAL_H

#include <stdio.h>

#include "datm.h"
#include "data/data.h"
#include "io/h5.h"
#include "io/results.h"
#include "pipeline/pipeline.h"

struct datm_trained {
    char    dir[1200];                    /* the run directory */
    char    result[1200];                 /* its result file */
    datm_spec spec;                       /* the resolved spec (variant, sections) */
    int     spec_loaded;
    char   *spec_text;
    char    data_dir[1024];               /* /data's `dir` attribute ("" unknown) */
    int     n_layers;
    int64_t k[DATM_MAX_LAYERS + 1];       /* k[0] = V, k[l] = K_l */
    char  **vocab;                        /* (n_vocab) or NULL */
    int64_t n_vocab;
    datm_result_metrics metrics;
    datm_model *model;                    /* created and loaded at the first inference */
};

struct datm_docs {
    datm_csr x;
};

#endif
