/* engine/api/api_internal.h (internal): what the public handles of include/datm.h hold. */
#ifndef DATM_API_INTERNAL_H
#define DATM_API_INTERNAL_H

#include <stdio.h>

#include "datm.h"
#include "data/data.h"
#include "io/h5.h"
#include "eval/topics.h"
#include "io/results.h"
#include "io/yaml_flat.h"
#include "pipeline/pipeline.h"

struct datm_trained {
    char    dir[1200];                    /* the run directory */
    char    result[1200];                 /* its result file */
    datm_spec spec;                       /* the resolved spec (variant, sections) */
    int     spec_loaded;
    datm_error spec_err;                  /* why it did not load (given by datm_load) */
    char   *spec_text;                    /* the result's `spec`, else spec.resolved.yaml */
    datm_flat params;                     /* spec_text flattened to dotted keys */
    char    status[64];
    char    variant[128];                 /* the result's `variant` ("" unknown) */
    datm_result_curves curves;
    char    data_dir[1024];               /* /data's `dir` attribute ("" unknown) */
    int     n_layers;
    int64_t k[DATM_MAX_LAYERS + 1];       /* k[0] = V, k[l] = K_l */
    char  **vocab;                        /* (n_vocab) or NULL */
    int64_t n_vocab;
    datm_result_metrics metrics;
    datm_model *model;                    /* created and loaded at the first inference */
    datm_topic_set topics;                /* diagnostics, read or computed at first use */
    int     topics_ready;
};

/* Reads the stored diagnostics, or computes them with the defaults when the run has none
 * (api_topics.c). */
int datm_api_topics_ready(datm_trained *m, datm_error *err);

struct datm_docs {
    datm_csr x;
};

#endif
