/* tests/pipeline_testutil.h: run a spec given as YAML text in-process (the registry's models)
 * into a run directory, and read one scalar of its result's /metrics. Header-only, for the
 * pipeline tests that drive datm_run directly. */
#ifndef DATM_TEST_PIPELINE_TESTUTIL_H
#define DATM_TEST_PIPELINE_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/h5.h"
#include "io/results_layout.h"
#include "pipeline/pipeline.h"

/* Runs the spec `text` (named `name` in messages) with the overrides ov[0..nov) and
 * output.dir = dir; returns datm_run's status (1 when the spec does not load). */
static int pt_run_spec(const char *text, const char *name, const char *const *ov, int nov,
                       const char *dir)
{
    datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    datm_spec s;
    datm_error err = {0};
    const char *all[17];
    char o[600];
    if (nov > 16) return 1;
    int n = 0;
    for (int i = 0; i < nov; i++) all[n++] = ov[i];
    snprintf(o, sizeof o, "output.dir=%s", dir);
    all[n++] = o;
    if (datm_spec_load_text(text, name, all, n, &cat, &s, &err)) {
        fprintf(stderr, "spec: %s\n", err.msg);
        return 1;
    }
    datm_run_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.run_dir = dir;
    opts.overwrite = 1;   /* a test run again replaces its own earlier output */
    int rc = datm_run(&s, &opts, &err);
    if (rc) fprintf(stderr, "run: %s\n", err.msg);
    datm_spec_free(&s);
    return rc;
}

/* /metrics/<name> of dir/result.h5, NAN (with a message) when it cannot be read. */
static double pt_read_metric(const char *dir, const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/result.h5", dir);
    datm_h5 *f = NULL, *g = NULL;
    datm_error err = {0};
    double v = NAN;
    if (datm_h5_open(path, 0, &f, &err) || datm_h5_group(f, DATM_GRP_METRICS, 0, &g, &err) ||
        datm_h5_read_scalar(g, name, &v, &err))
        fprintf(stderr, "%s\n", err.msg);
    datm_h5_close(&g);
    datm_h5_close(&f);
    return v;
}

#endif
