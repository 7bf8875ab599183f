/* bench/bench_stream.c: one epoch of WHAI trained from a sharded corpus on disk (data.stream,
 * engine/data/stream.h) or from the same corpus held in memory (the in-memory iterator of
 * `datm run`), for corpora made by `datm corpus synth`. Prints documents/s of the epoch
 * (mini-batch assembly, read-ahead waits and training together), the seconds spent waiting
 * for a shard, the peak resident memory of the process (getrusage: run each mode in its own
 * process), and the machine with its load average at start and end.
 *
 * Usage: bench_stream SHARD_DIR stream|memory [layers, default 128,64,32] [B, default 200]
 *                      [max batches, default all]
 * e.g. datm corpus synth --out /data/syn1m --docs 1000000 --vocab 5000 --layers 128,64,32
 *      bench_stream /data/syn1m/train.shards stream
 * Threads: OMP_NUM_THREADS (OpenBLAS follows). */
#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "data/data.h"
#include "data/shard.h"
#include "data/stream.h"
#include "math/math.h"
#include "pipeline/config.h"
#include "pipeline/model.h"
#include "../models/whai.h"
#include "bench_machine.h"

static void die(const char *what, const datm_error *err)
{
    fprintf(stderr, "bench_stream: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[2], "stream") && strcmp(argv[2], "memory"))) {
        fprintf(stderr, "usage: bench_stream SHARD_DIR stream|memory [layers] [B] [max batches]\n");
        return 2;
    }
    datm_runtime_env(argv);   /* BLAS kernels, OpenMP wait policy (may restart) */
    datm_mem_keep_freed();
    datm_fp_mode fp_saved;
    datm_fp_flush_begin(&fp_saved);
    datm_log_set_level(DATM_LOG_WARN);
    const int stream = !strcmp(argv[2], "stream");
    const char *layers = argc > 3 ? argv[3] : "128,64,32";
    const int64_t B = argc > 4 ? atoll(argv[4]) : 200;
    int64_t max_batches = argc > 5 ? atoll(argv[5]) : 0;
    openblas_set_num_threads(omp_get_max_threads());
    datm_error err = {0};
    datm_shardset set;
    if (datm_shardset_open(argv[1], &set, &err)) die("open", &err);
    const int64_t N = set.n_docs;
    printf("bench_stream: %s, %lld documents (%.1f tokens, %.1f entries a document) in %d "
           "shards, V %lld; WHAI [%s], B %lld, one epoch %s\n", argv[1], (long long)N,
           set.tokens / (double)N, (double)set.nnz / (double)N, set.n_shards,
           (long long)set.n_cols, layers, (long long)B, stream ? "streamed from disk" : "in memory");
    bench_print_machine();

    double t_load = datm_time_now();
    datm_csr X = {0};
    if (!stream && datm_shardset_read_first(&set, 0, &X, &err)) die("read", &err);
    t_load = datm_time_now() - t_load;

    char lay[256];
    snprintf(lay, sizeof lay, "[%s]", layers);
    datm_config *cfg = NULL;
    if (datm_config_create(datm_whai_schema, "model", &cfg, &err)) die("config", &err);
    if (datm_config_set(cfg, "layers", lay, &err)) die("layers", &err);
    if (datm_config_set(cfg, "eval_globals", "fixed", &err)) die("eval_globals", &err);
    const int64_t bpe = (N + B - 1) / B;
    if (max_batches <= 0 || max_batches > bpe) max_batches = bpe;
    datm_run_info info = {.n_train = N, .n_vocab = set.n_cols, .batch_size = B, .epochs = 1,
                          .total_iters = bpe, .seed = 1, .threads = omp_get_max_threads(),
                          .train = stream ? NULL : &X, .streamed = stream};
    datm_model *m = NULL;
    if (datm_registry_find("whai")->create(cfg, &info, &m, &err)) die("create", &err);

    datm_stream st;
    datm_batch_iter it;
    datm_stream_opts so = {.batch_size = B, .seed = 1, .shuffle = 1};
    if (stream ? datm_stream_open(&st, &set, &so, &err)
               : datm_batch_iter_init(&it, N, B, 1, 1, 0, &err)) die("batches", &err);
    double t0 = datm_time_now(), t_wait = 0, t_train = 0;
    int64_t docs = 0;
    for (int64_t i = 1; i <= max_batches; i++) {
        const datm_csr *Xb;
        const int64_t *ids;
        int64_t n;
        datm_csr sel = {0};
        double ta = datm_time_now();
        if (stream) {
            if (datm_stream_next(&st, &Xb, &ids, &n, &err)) die("stream", &err);
        } else {
            n = datm_batch_iter_next(&it, &ids);
            if (datm_csr_select_rows(&X, ids, n, &sel, &err)) die("select", &err);
            Xb = &sel;
        }
        double tb = datm_time_now();
        datm_batch b = {Xb, ids, NULL};
        datm_train_ctx ctx = {i, 0, 1, (double)N / (double)B};
        datm_train_stats s;
        if (m->ops->train_batch(m, &b, &ctx, &s, &err)) die("train", &err);
        t_train += datm_time_now() - tb;
        t_wait += tb - ta;
        datm_csr_free(&sel);
        docs += n;
        if (i % 500 == 0 || i == max_batches)
            fprintf(stderr, "\r%lld/%lld batches, %.0f docs/s   ", (long long)i,
                    (long long)max_batches, (double)docs / (datm_time_now() - t0));
    }
    const double secs = datm_time_now() - t0;
    fprintf(stderr, "\n");
    printf("epoch: %lld documents in %.1f s = %.0f documents/s; batch assembly %.1f s (%s), "
           "training %.1f s%s\n", (long long)docs, secs, (double)docs / secs, t_wait,
           stream ? "copying rows, waiting for shards" : "selecting rows", t_train,
           stream ? "" : "");
    if (!stream) printf("corpus read into memory in %.1f s (not in the epoch time)\n", t_load);
    printf("peak RSS %.0f MB; load average %.2f at end\n", bench_peak_rss_mb(), bench_load1());
    if (stream) datm_stream_close(&st);
    else datm_batch_iter_free(&it);
    m->ops->destroy(m);
    datm_config_destroy(&cfg);
    datm_csr_free(&X);
    datm_shardset_close(&set);
    return 0;
}
