/* engine/pipeline/provenance.c: what a result records about how it was made (ECOSYSTEM row
 * 13): datm version and git commit, compiler, BLAS/HDF5/libyaml versions, host, argv, start
 * time, the resolved spec and its hash, seed, threads; and /data: dataset, directory,
 * protocol, sizes, vocabulary and the SHA-256 of every data file read. */
#include <cblas.h>
#include <hdf5.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include "io/results_layout.h"
#include "pipeline/run_internal.h"

void datm_utc_now(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int datm_provenance_write(datm_h5 *root, const datm_spec *spec, const datm_run_opts *opts,
                          int threads, datm_error *err)
{
    char now[64], host[256] = "unknown", argv[4096] = "", flags[256], hv[64], blas[512];
    datm_utc_now(now, sizeof now);
    gethostname(host, sizeof host - 1);
    size_t o = 0;
    for (int i = 0; opts && i < opts->argc && o + 2 < sizeof argv; i++)
        o += (size_t)snprintf(argv + o, sizeof argv - o, "%s%s", i ? " " : "", opts->argv[i]);
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    snprintf(hv, sizeof hv, "%u.%u.%u", maj, min, rel);
    snprintf(flags, sizeof flags, "C%ld%s openmp=%d%s", (long)__STDC_VERSION__,
#ifdef __OPTIMIZE__
             " optimized",
#else
             " -O0",
#endif
             (int)_OPENMP,
#if defined(__SANITIZE_ADDRESS__)
             " asan"
#else
             ""
#endif
    );
    snprintf(blas, sizeof blas, "%s", openblas_get_config());

    const datm_run_params *rp = &spec->p.run;
    int rc = datm_h5_attr_str(root, DATM_ATTR_VERSION, datm_version_string(), err);
    if (!rc) rc = datm_h5_attr_str(root, DATM_ATTR_GIT_COMMIT, datm_git_commit(), err);
    if (!rc) rc = datm_h5_attr_str(root, DATM_ATTR_GIT_DIRTY,
                                               datm_git_dirty() < 0 ? "unknown"
                                               : datm_git_dirty() ? "dirty" : "clean", err);
    if (!rc) rc = datm_h5_attr_str(root, DATM_ATTR_CREATED, now, err);
    if (!rc) rc = datm_h5_attr_str(root, DATM_ATTR_HEARTBEAT, now, err);
    if (!rc) rc = datm_h5_attr_str(root, DATM_ATTR_STATUS, DATM_STATUS_RUNNING, err);
    if (!rc) rc = datm_h5_attr_str(root, DATM_ATTR_SPEC, spec->resolved, err);
    if (!rc) rc = datm_h5_attr_str(root, DATM_ATTR_SPEC_HASH, spec->hash, err);
    if (!rc) rc = datm_h5_attr_i64(root, DATM_ATTR_SEED, rp->seed, err);
    if (!rc) rc = datm_h5_attr_i64(root, DATM_ATTR_THREADS, threads, err);
    if (!rc) rc = datm_h5_attr_str(root, DATM_ATTR_COMPILER, "gcc " __VERSION__, err);
    if (!rc) rc = datm_h5_attr_str(root, DATM_ATTR_CFLAGS, flags, err);
    if (!rc) rc = datm_h5_attr_str(root, DATM_ATTR_BLAS, blas, err);
    if (!rc) rc = datm_h5_attr_str(root, DATM_ATTR_HDF5_VERSION, hv, err);
    if (!rc) rc = datm_h5_attr_str(root, DATM_ATTR_YAML_VERSION, yaml_get_version_string(), err);
    if (!rc) rc = datm_h5_attr_str(root, DATM_ATTR_HOST, host, err);
    if (!rc) rc = datm_h5_attr_str(root, DATM_ATTR_ARGV, argv, err);
    if (!rc) rc = datm_h5_attr_str(root, "variant", spec->variant, err);
    if (!rc && spec->plugin[0]) rc = datm_h5_attr_str(root, "plugin", spec->plugin, err);
    if (!rc && spec->plugin[0])
        rc = datm_h5_attr_str(root, "plugin_sha256", spec->plugin_sha256, err);
    if (!rc) rc = datm_h5_attr_str(root, "name", rp->name, err);
    /* the command-line overrides and the defaults that were applied */
    char buf[8192];
    o = 0;
    buf[0] = '\0';
    for (int i = 0; i < spec->n_overrides && o < sizeof buf; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s\n", spec->overrides[i]);
    if (!rc) rc = datm_h5_attr_str(root, "overrides", buf, err);
    datm_spec_defaults_applied(spec, buf, sizeof buf);
    if (!rc) rc = datm_h5_attr_str(root, "defaults_applied", buf, err);
    return rc;
}

int datm_data_info_write(datm_h5 *root, const datm_spec *spec, const datm_run_data *d,
                         datm_error *err)
{
    datm_h5 *g = NULL;
    const datm_data_params *dc = &spec->p.data;
    int rc = datm_h5_group(root, DATM_GRP_DATA, 1, &g, err);
    if (!rc) rc = datm_h5_attr_str(g, DATM_DATA_ATTR_NAME, dc->dataset, err);
    if (!rc) rc = datm_h5_attr_str(g, DATM_DATA_ATTR_DIR, d->dir, err);
    if (!rc) rc = datm_h5_attr_str(g, "protocol", d->protocol, err);
    if (!rc) rc = datm_h5_attr_f64(g, "obs_fraction", dc->obs_fraction, err);
    for (int i = 0; i < d->n_files && !rc; i++) {
        char name[96];
        snprintf(name, sizeof name, "sha256:%s", d->file_name[i]);
        rc = datm_h5_attr_str(g, name, d->file_hash[i], err);
    }
    if (!rc) rc = datm_h5_write_scalar(g, "n_train", (double)d->n_train, err);
    if (!rc) rc = datm_h5_write_scalar(g, "n_test", (double)d->eval_obs.n_rows, err);
    if (!rc) rc = datm_h5_write_scalar(g, "n_vocab", (double)d->n_vocab, err);
    /* streamed: the corpus's tokens (under token-split the model sees the observed share) */
    if (!rc) rc = datm_h5_write_scalar(g, "train_tokens", d->stream ? d->shards.tokens
                                       : datm_csr_total(&d->train_X), err);
    if (!rc) rc = datm_h5_write_scalar(g, "test_obs_tokens", datm_csr_total(&d->eval_obs), err);
    if (!rc) rc = datm_h5_write_scalar(g, "test_heldout_tokens", datm_csr_total(&d->eval_held), err);
    if (!rc && d->train.vocab)
        rc = datm_h5_write_strings(g, DATM_DATA_VOCAB, (const char *const *)d->train.vocab,
                                   d->train.n_vocab, err);
    datm_h5_close(&g);
    return rc;
}
