/* engine/par/par_mpi.c: the ranks of par.h over MPI (MPI_COMM_WORLD): chunk sums by a
 * reduce-scatter in chunk order (MPI_Alltoallv) and an MPI_Allgatherv of the parts, small
 * slots by MPI_Allgatherv, integer counts as sparse pairs (MPI_Allgatherv) or dense
 * (MPI_Allreduce), exact in any order. */
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "par/par.h"

static int g_rank, g_size = 1, g_inited;
static datm_par_traffic g_traffic;

int datm_par_init(int *argc, char ***argv)
{
    int provided = 0;
    /* A rank that waits in a collective yields its core instead of polling (OpenMPI polls
     * when a node is not oversubscribed by its own count, which ignores other processes): on
     * a shared machine the polling rank takes the core the rank it waits for needs, the way
     * spinning OpenMP threads do (the OMP_WAIT_POLICY=passive default, math/runtime_env.c).
     * A value set by the user is kept. */
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    /* FUNNELED: only the main thread calls MPI; OpenMP threads work between the calls */
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return DATM_E_IO;
    g_inited = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    return DATM_OK;
}

void datm_par_finalize(void)
{
    if (g_inited) MPI_Finalize();
    g_inited = 0;
}

void datm_par_abort(int code)
{
    if (g_inited && g_size > 1) MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
}

int datm_par_rank(void) { return g_rank; }
int datm_par_size(void) { return g_size; }
int datm_par_is_mpi(void) { return 1; }

static int mpi_fail(datm_error *err, int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return datm_error_set(err, DATM_E_IO, "MPI %s (rank %d of %d): %s", what, g_rank, g_size,
                          msg);
}

int datm_par_barrier(datm_error *err)
{
    if (g_size == 1) return DATM_OK;
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? DATM_OK : mpi_fail(err, rc, "barrier");
}

/* Entries [n q / R, n (q + 1) / R) are rank q's part of a sum. */
static int64_t part0(int64_t n, int q) { return n * q / g_size; }

/* Reduce-scatter in chunk order: out[my part] = the sum of every chunk's part. */
static int sum_chunks_part(float *slots, int64_t n, int64_t C, float *out, datm_error *err)
{
    g_traffic.calls++;
    if (g_size == 1) {
        datm_par_add_rows(slots, C, n, 0, n, out);
        return DATM_OK;
    }
    const int R = g_size;
    int64_t c0, c1;
    datm_par_own(C, &c0, &c1);
    const int64_t my0 = part0(n, g_rank), my1 = part0(n, g_rank + 1), m = my1 - my0;
    if ((double)C * (double)n > (double)INT_MAX)
        return datm_error_set(err, DATM_E_UNSUPPORTED, "MPI: %lld chunks of %lld floats exceed "
                              "one collective's counts; use fewer train.reduce_chunks",
                              (long long)C, (long long)n);
    /* send: for each rank q, q's part of each of this rank's chunks; receive: this rank's part
     * of every chunk, in chunk order (ranks hold ascending chunk ranges). With one chunk (C =
     * R) q's part is contiguous in the slot and goes out from there, without a packed copy. */
    const int packed = c1 - c0 != 1;
    float *sbuf = malloc((size_t)((packed ? (c1 - c0) * n : 0) + C * m + 1) * sizeof(float));
    int *cnt = malloc(4 * (size_t)R * sizeof(int));
    if (!sbuf || !cnt) {
        free(sbuf);
        free(cnt);
        return datm_error_set(err, DATM_E_NOMEM, "MPI: out of memory");
    }
    float *rbuf = sbuf + (packed ? (c1 - c0) * n : 0), *send = packed ? sbuf : slots;
    int *sdis = cnt + R, *rcnt = cnt + 2 * R, *rdis = cnt + 3 * R;
    int64_t o = 0;
    for (int q = 0; q < R; q++) {
        const int64_t a = part0(n, q), len = part0(n, q + 1) - a;
        if (packed) {
            sdis[q] = (int)o;
            for (int64_t c = c0; c < c1; c++, o += len)
                memcpy(sbuf + o, slots + c * n + a, (size_t)len * sizeof(float));
            cnt[q] = (int)(o - sdis[q]);
        } else {
            sdis[q] = (int)(c0 * n + a);
            cnt[q] = (int)len;
        }
        const int64_t qc0 = C * q / R, qc1 = C * (q + 1) / R;
        rcnt[q] = (int)((qc1 - qc0) * m);
        rdis[q] = (int)(qc0 * m);
        if (q != g_rank) g_traffic.bytes_sent += (int64_t)cnt[q] * (int64_t)sizeof(float);
    }
    int rc = MPI_Alltoallv(send, cnt, sdis, MPI_FLOAT, rbuf, rcnt, rdis, MPI_FLOAT,
                           MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS) datm_par_add_rows(rbuf, C, m, 0, m, out + my0);
    free(sbuf);
    free(cnt);
    return rc == MPI_SUCCESS ? DATM_OK : mpi_fail(err, rc, "reduce-scatter of the chunk sums");
}

/* x: every rank's part to every rank, in place. */
static int gather_part_f32(float *x, int64_t n, datm_error *err)
{
    g_traffic.calls++;
    if (g_size == 1) return DATM_OK;
    if (n > INT_MAX)
        return datm_error_set(err, DATM_E_UNSUPPORTED, "MPI: %lld floats exceed one "
                              "collective's counts", (long long)n);
    int *cnt = malloc(2 * (size_t)g_size * sizeof *cnt);
    if (!cnt) return datm_error_set(err, DATM_E_NOMEM, "MPI: out of memory");
    int *dis = cnt + g_size;
    for (int q = 0; q < g_size; q++) {
        cnt[q] = (int)(part0(n, q + 1) - part0(n, q));
        dis[q] = (int)part0(n, q);
    }
    g_traffic.bytes_sent += (g_size - 1) * (int64_t)cnt[g_rank] * (int64_t)sizeof(float);
    int rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, x, cnt, dis, MPI_FLOAT,
                            MPI_COMM_WORLD);
    free(cnt);
    return rc == MPI_SUCCESS ? DATM_OK : mpi_fail(err, rc, "allgather of the parts");
}

static int sum_chunks(float *slots, int64_t n, int64_t C, float *out, datm_error *err)
{
    int rc = sum_chunks_part(slots, n, C, out, err);
    return rc || g_size == 1 ? rc : gather_part_f32(out, n, err);
}

static int any_flag(int flag, int *any, datm_error *err)
{
    *any = flag != 0;
    if (g_size == 1) return DATM_OK;
    g_traffic.calls++;
    int v = *any;
    int rc = MPI_Allreduce(&v, any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? DATM_OK : mpi_fail(err, rc, "allreduce of a flag");
}

static int gather_slots(void *buf, size_t slot_bytes, int64_t C, datm_error *err)
{
    int64_t c0, c1;
    datm_par_own(C, &c0, &c1);
    g_traffic.calls++;
    if (g_size == 1) return DATM_OK;
    g_traffic.bytes_sent += (g_size - 1) * (c1 - c0) * (int64_t)slot_bytes;
    if ((double)C * (double)slot_bytes > (double)INT_MAX)
        return datm_error_set(err, DATM_E_UNSUPPORTED, "MPI: %lld chunks of %zu bytes exceed "
                              "one collective's 2 GB; use fewer train.reduce_chunks",
                              (long long)C, slot_bytes);
    int *counts = malloc(2 * (size_t)g_size * sizeof *counts);
    if (!counts) return datm_error_set(err, DATM_E_NOMEM, "MPI: out of memory");
    int *displs = counts + g_size;
    for (int r = 0; r < g_size; r++) {
        const int64_t a = C * r / g_size, b = C * (r + 1) / g_size;
        counts[r] = (int)((b - a) * (int64_t)slot_bytes);
        displs[r] = (int)(a * (int64_t)slot_bytes);
    }
    int rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, MPI_BYTE,
                            MPI_COMM_WORLD);
    free(counts);
    return rc == MPI_SUCCESS ? DATM_OK : mpi_fail(err, rc, "allgather of the chunk sums");
}

static int sum_i64_dense(int64_t *x, int64_t n, datm_error *err)
{
    g_traffic.bytes_sent += n * (int64_t)sizeof *x;
    for (int64_t o = 0; o < n; o += INT_MAX / 2) {   /* counts of one call fit an int */
        const int m = (int)(n - o < INT_MAX / 2 ? n - o : INT_MAX / 2);
        int rc = MPI_Allreduce(MPI_IN_PLACE, x + o, m, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "allreduce of the counts");
    }
    return DATM_OK;
}

/* The counts of a mini-batch are mostly zero (at most one nonzero per token in Phi(1)'s
 * V x K_1): each rank sends its nonzeros as (index, value) pairs to every other rank, which
 * add them (integers: exact in any order). Used when the pairs of all ranks together take
 * fewer bytes than the dense vector. The nonzeros are found by a scan of x, or, with a list
 * (idx, *m >= 0), among the listed entries, the others' entries new to x appended to it. */
static int sum_i64(int64_t *x, int64_t n, int64_t *idx, int64_t *m, datm_error *err)
{
    g_traffic.calls++;
    if (g_size == 1) return DATM_OK;
    const int list = idx && m && *m >= 0;
    if (n <= 64) {   /* a few values: one allreduce */
        if (m) *m = -1;
        return sum_i64_dense(x, n, err);
    }
    int64_t nz = 0;
    if (list)
        for (int64_t j = 0; j < *m; j++) nz += x[idx[j]] != 0;
    else
        for (int64_t i = 0; i < n; i++) nz += x[i] != 0;
    int64_t *nzs = malloc((size_t)g_size * sizeof *nzs);
    if (!nzs) return datm_error_set(err, DATM_E_NOMEM, "MPI: out of memory");
    int rc = MPI_Allgather(&nz, 1, MPI_INT64_T, nzs, 1, MPI_INT64_T, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) { free(nzs); return mpi_fail(err, rc, "allgather of count sizes"); }
    int64_t total = 0;
    for (int r = 0; r < g_size; r++) total += nzs[r];
    /* the same decision on every rank: it depends on the gathered sizes only */
    if (2 * total >= n || 2 * total > INT_MAX) {
        free(nzs);
        if (m) *m = -1;
        return sum_i64_dense(x, n, err);
    }
    int64_t *pairs = malloc((size_t)(2 * total + 2) * sizeof *pairs);
    int *cnt = malloc(2 * (size_t)g_size * sizeof *cnt);
    if (!pairs || !cnt) {
        free(nzs);
        free(pairs);
        free(cnt);
        return datm_error_set(err, DATM_E_NOMEM, "MPI: out of memory");
    }
    int *dis = cnt + g_size;
    int64_t o = 0;
    for (int r = 0; r < g_size; r++) {
        cnt[r] = (int)(2 * nzs[r]);
        dis[r] = (int)o;
        o += 2 * nzs[r];
    }
    int64_t *mine = pairs + dis[g_rank], j = 0;
    if (list) {
        for (int64_t q = 0; q < *m; q++)
            if (x[idx[q]] != 0) { mine[j++] = idx[q]; mine[j++] = x[idx[q]]; }
    } else {
        for (int64_t i = 0; i < n; i++)
            if (x[i] != 0) { mine[j++] = i; mine[j++] = x[i]; }
    }
    g_traffic.bytes_sent += (g_size - 1) * 2 * nz * (int64_t)sizeof *x;
    rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, pairs, cnt, dis, MPI_INT64_T,
                        MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS)
        for (int r = 0; r < g_size; r++) {
            if (r == g_rank) continue;
            const int64_t *p = pairs + dis[r];
            for (int64_t q = 0; q < nzs[r]; q++) {
                const int64_t i = p[2 * q];
                if (list && *m >= 0 && x[i] == 0) {   /* new to x: listed, room permitting */
                    if (*m < n) idx[(*m)++] = i;
                    else *m = -1;
                }
                x[i] += p[2 * q + 1];
            }
        }
    free(nzs);
    free(pairs);
    free(cnt);
    return rc == MPI_SUCCESS ? DATM_OK : mpi_fail(err, rc, "allgather of the counts");
}

static int gather_parts(void *buf, const int64_t *bytes, datm_error *err)
{
    g_traffic.calls++;
    if (g_size == 1) return DATM_OK;
    int *cnt = malloc(2 * (size_t)g_size * sizeof *cnt);
    if (!cnt) return datm_error_set(err, DATM_E_NOMEM, "MPI: out of memory");
    int *dis = cnt + g_size;
    int64_t o = 0;
    for (int r = 0; r < g_size; r++) {
        if (o + bytes[r] > INT_MAX) {
            free(cnt);
            return datm_error_set(err, DATM_E_UNSUPPORTED, "MPI: %lld bytes exceed one "
                                  "collective's 2 GB", (long long)(o + bytes[r]));
        }
        cnt[r] = (int)bytes[r];
        dis[r] = (int)o;
        o += bytes[r];
    }
    g_traffic.bytes_sent += (g_size - 1) * bytes[g_rank];
    int rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, cnt, dis, MPI_BYTE,
                            MPI_COMM_WORLD);
    free(cnt);
    return rc == MPI_SUCCESS ? DATM_OK : mpi_fail(err, rc, "allgather of the parts");
}

/* The collectives, timed by kind. With DATM_PAR_SKEW=1 in the environment each collective
 * is preceded by a barrier timed apart (skew_s): the time a rank waits for the others to
 * arrive (load imbalance, a slower core) is then told from the time the exchange itself
 * takes. The barrier costs a round trip per call, so it is a measuring switch, off by
 * default. */
typedef struct { double t0, c0; int kind; } timed_call;

static int skew_on(void)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("DATM_PAR_SKEW");
        on = e && e[0] == '1';
    }
    return on;
}

static timed_call timed_begin(int kind)
{
    timed_call t = {0, 0, kind};
    if (g_size > 1 && skew_on()) {
        const double b0 = datm_time_now();
        MPI_Barrier(MPI_COMM_WORLD);
        g_traffic.skew_s += datm_time_now() - b0;
    }
    t.t0 = datm_time_now();
    t.c0 = datm_time_cpu();
    return t;
}

static int timed_end(timed_call t, int rc)
{
    const double dt = datm_time_now() - t.t0;
    g_traffic.wait_s += dt;
    g_traffic.wait_cpu_s += datm_time_cpu() - t.c0;
    g_traffic.kind_calls[t.kind]++;
    g_traffic.kind_s[t.kind] += dt;
    return rc;
}

int datm_par_gather_parts(void *buf, const int64_t *bytes, datm_error *err)
{
    timed_call t = timed_begin(DATM_PAR_K_GATHER_PARTS);
    return timed_end(t, gather_parts(buf, bytes, err));
}

int datm_par_sum_chunks(float *slots, int64_t n, int64_t C, float *out, datm_error *err)
{
    timed_call t = timed_begin(DATM_PAR_K_SUM_CHUNKS);
    return timed_end(t, sum_chunks(slots, n, C, out, err));
}

int datm_par_sum_chunks_part(float *slots, int64_t n, int64_t C, float *out, datm_error *err)
{
    timed_call t = timed_begin(DATM_PAR_K_SUM_CHUNKS_PART);
    return timed_end(t, sum_chunks_part(slots, n, C, out, err));
}

int datm_par_gather_part_f32(float *x, int64_t n, datm_error *err)
{
    timed_call t = timed_begin(DATM_PAR_K_GATHER_PART_F32);
    return timed_end(t, gather_part_f32(x, n, err));
}

int datm_par_any(int flag, int *any, datm_error *err)
{
    timed_call t = timed_begin(DATM_PAR_K_ANY);
    return timed_end(t, any_flag(flag, any, err));
}

int datm_par_gather_slots(void *buf, size_t slot_bytes, int64_t C, datm_error *err)
{
    timed_call t = timed_begin(DATM_PAR_K_GATHER_SLOTS);
    return timed_end(t, gather_slots(buf, slot_bytes, C, err));
}

int datm_par_sum_i64(int64_t *x, int64_t n, datm_error *err)
{
    timed_call t = timed_begin(DATM_PAR_K_SUM_I64);
    return timed_end(t, sum_i64(x, n, NULL, NULL, err));
}

int datm_par_sum_i64_listed(int64_t *x, int64_t n, int64_t *idx, int64_t *m, datm_error *err)
{
    timed_call t = timed_begin(DATM_PAR_K_SUM_I64_LISTED);
    return timed_end(t, sum_i64(x, n, idx, m, err));
}

void datm_par_traffic_get(datm_par_traffic *t) { *t = g_traffic; }
