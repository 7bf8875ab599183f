/* bench/bench_samplers.c: throughput of the engine/rand samplers (samples per second),
 * single thread and 2 OpenMP threads. Work is split in chunks, each with its own stream
 * keyed by the chunk index (the pattern the models use), so both runs draw the same
 * numbers; the checksum printed proves the work was done. Prints only; never fails.
 * Usage: bench_samplers [seconds_per_case (default 0.3)] */
#include "core/core.h"
#include "rand/rand.h"
#include "math/math.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

enum { CHUNK = 1 << 14 };

typedef enum {
    K_UNIFORM, K_UNIFORM_FILL_F, K_NORMAL, K_NORMAL_FILL, K_GAMMA, K_LOG_GAMMA, K_WEIBULL, K_POISSON,
    K_CRT, K_CATEGORICAL, K_BETA
} kind;

typedef struct {
    const char *name;
    kind k;
    double a, b;
} bench_case;

static const bench_case cases[] = {
    { "uniform (double)", K_UNIFORM, 0, 0 },
    { "uniform_fill_f (float)", K_UNIFORM_FILL_F, 0, 0 },
    { "normal", K_NORMAL, 0, 0 },
    { "normal_fill (256 at a time)", K_NORMAL_FILL, 0, 0 },
    { "gamma(0.01)", K_GAMMA, 0.01, 0 },
    { "gamma(0.5)", K_GAMMA, 0.5, 0 },
    { "gamma(1)", K_GAMMA, 1.0, 0 },
    { "gamma(3.7)", K_GAMMA, 3.7, 0 },
    { "gamma(100)", K_GAMMA, 100.0, 0 },
    { "log_gamma(0.001)", K_LOG_GAMMA, 0.001, 0 },
    { "beta(0.5, 2)", K_BETA, 0.5, 2.0 },
    { "weibull(k 0.7, lambda 1)", K_WEIBULL, 0.7, 1.0 },
    { "poisson(5)", K_POISSON, 5.0, 0 },
    { "poisson(100)", K_POISSON, 100.0, 0 },
    { "crt(m 10, r 0.5)", K_CRT, 10, 0.5 },
    { "crt(m 100, r 1)", K_CRT, 100, 1.0 },
    { "crt(m 1000, r 10)", K_CRT, 1000, 10.0 },
    { "categorical_cumsum(k 128)", K_CATEGORICAL, 128, 0 },
};

static double cumsum128[128];

/* One chunk of CHUNK draws from the stream keyed by the chunk index; returns a checksum. */
static double run_chunk(const bench_case *c, int64_t chunk)
{
    datm_rng r;
    datm_rng_init(&r, 7, DATM_STREAM_USER, (uint64_t)chunk);
    double s = 0.0;
    switch (c->k) {
    case K_UNIFORM:
        for (int i = 0; i < CHUNK; i++)
            s += datm_rng_uniform(&r);
        break;
    case K_UNIFORM_FILL_F: {
        static _Thread_local float buf[CHUNK];
        datm_rng_uniform_fill_f(&r, buf, CHUNK);
        for (int i = 0; i < CHUNK; i += 64)
            s += buf[i];
        break;
    }
    case K_NORMAL:
        for (int i = 0; i < CHUNK; i++)
            s += datm_rng_normal(&r);
        break;
    case K_NORMAL_FILL: {   /* as TLASGR draws a column's noise: runs of 256 values */
        double buf[256];
        for (int i = 0; i < CHUNK; i += 256) {
            datm_rng_normal_fill(&r, buf, 256);
            s += buf[0] + buf[255];
        }
        break;
    }
    case K_GAMMA:
        for (int i = 0; i < CHUNK; i++)
            s += datm_rng_gamma(&r, c->a);
        break;
    case K_LOG_GAMMA:
        for (int i = 0; i < CHUNK; i++)
            s += datm_rng_log_gamma(&r, c->a);
        break;
    case K_BETA:
        for (int i = 0; i < CHUNK; i++)
            s += datm_rng_beta(&r, c->a, c->b);
        break;
    case K_WEIBULL:
        for (int i = 0; i < CHUNK; i++)
            s += datm_rng_weibull(&r, c->a, c->b);
        break;
    case K_POISSON:
        for (int i = 0; i < CHUNK; i++)
            s += (double)datm_rng_poisson(&r, c->a);
        break;
    case K_CRT:
        for (int i = 0; i < CHUNK; i++)
            s += (double)datm_rng_crt(&r, (int64_t)c->a, c->b);
        break;
    case K_CATEGORICAL:
        for (int i = 0; i < CHUNK; i++)
            s += datm_rng_categorical_cumsum(&r, cumsum128, 128);
        break;
    }
    return s;
}

/* Runs chunks [0, n) on `threads` threads; returns wall seconds (process CPU seconds in
 * *cpu), checksum in *sum. */
static double run(const bench_case *c, int64_t n, int threads, double *sum, double *cpu)
{
    double *part = malloc(sizeof(double) * (size_t)n); /* (n) per-chunk sums, added in order */
    double c0 = datm_time_cpu(), t0 = datm_time_now();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t ch = 0; ch < n; ch++)
        part[ch] = run_chunk(c, ch);
    double t = datm_time_now() - t0, s = 0.0;
    if (cpu)
        *cpu = datm_time_cpu() - c0;
    for (int64_t ch = 0; ch < n; ch++)
        s += part[ch];
    free(part);
    *sum = s;
    return t;
}

int main(int argc, char **argv)
{
    datm_runtime_env(argv);   /* BLAS kernels, OpenMP wait policy (may restart) */
    datm_mem_keep_freed();   /* freed blocks reused, not faulted in afresh (core/memtune.c) */
    double target = argc > 1 ? atof(argv[1]) : 0.3;
    for (int i = 0; i < 128; i++)
        cumsum128[i] = (i ? cumsum128[i - 1] : 0.0) + 1.0 + (i % 5);
    double load[3] = { 0, 0, 0 };
    FILE *lf = fopen("/proc/loadavg", "r");
    if (lf) {
        if (fscanf(lf, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
            load[0] = -1;
        fclose(lf);
    }
    printf("# engine/rand sampler throughput (chunks of %d draws, one stream per chunk)\n", CHUNK);
    printf("# load average at start: %.2f %.2f %.2f (wall-clock rates suffer when it exceeds the cores)\n",
           load[0], load[1], load[2]);
    printf("# %-26s %14s %14s %8s  %s\n", "sampler", "1 thread/s", "2 threads/s", "speedup",
           "CPU ns/draw (1 thread)");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bench_case *c = &cases[i];
        double s1, s2, cpu1;
        /* calibrate: grow the chunk count until one run takes >= target/4 */
        int64_t n = 2;
        while (run(c, n, 1, &s1, NULL) < target / 4 && n < (1 << 20))
            n *= 2;
        n = (int64_t)(n * 4);
        double t1 = run(c, n, 1, &s1, &cpu1);
        double t2 = run(c, n, 2, &s2, NULL);
        double draws = (double)n * CHUNK;
        printf("  %-26s %14.4g %14.4g %8.2f  %.3g%s\n", c->name, draws / t1, draws / t2, t1 / t2,
               cpu1 / draws * 1e9, s1 == s2 ? "" : "  (checksum differs!)");
    }
    return 0;
}
