/* engine/par: data-parallel training over processes (ranks), the engine's side of
 * `mpirun -n R datm run SPEC` (docs/scaling.md).
 *
 * Every rank runs the same program on the same data and holds the same global state (Phi,
 * M, the encoder and Adam's moments). A mini-batch of B documents is cut into C fixed
 * chunks (train.reduce_chunks; chunk c is rows [B c / C, B (c + 1) / C)); rank r computes
 * the chunks [C r / R, C (r + 1) / R). Per step the ranks exchange
 *   - the per-chunk partial sums (encoder gradients, loss terms): datm_par_gather_slots
 *     gives every rank every chunk's slot, and each rank sums them in chunk order 0..C-1,
 *     so the floating-point sum is the same for any R (and any thread count);
 *   - integer counts (the upward augmentation's fixed-point counts): datm_par_sum_i64, an
 *     exact sum in any order;
 *   - each rank's share of Phi's columns after the TLASGR step: datm_par_gather_parts
 *     (decoder/tlasgr_ranks.c).
 * The encoder's Adam step is split by parameter ranges (datm_par_part): after the
 * reduce-scatter of the gradients (datm_par_sum_chunks_part) each rank steps its range and the
 * ranks exchange their parameters (datm_par_gather_part_f32); Adam's moments stay sliced, each
 * rank's own range current, and are gathered whole (datm_par_sharded_gather) only when rank 0
 * writes them. Only rank 0 writes files.
 *
 * Built with -DDATM_MPI=ON this is MPI (par_mpi.c); otherwise one rank (par_serial.c), where
 * the calls cost nothing and a spec with train.reduce_chunks still gives the numbers of any
 * rank count. No other part of datm names MPI. */
#ifndef DATM_PAR_H
#define DATM_PAR_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

/* Call once from main() before anything else reads argv, and datm_par_finalize() at exit. */
int  datm_par_init(int *argc, char ***argv);
void datm_par_finalize(void);
/* Ends every rank with status code (a rank that fails alone must not leave the others
 * waiting in a collective); with one rank it returns. */
void datm_par_abort(int code);
int  datm_par_rank(void);          /* 0 .. size - 1 */
int  datm_par_size(void);          /* R; 1 without MPI */
int  datm_par_is_mpi(void);        /* 1 when built with MPI */
int  datm_par_barrier(datm_error *err);

/* The chunk plan of training: C chunks per mini-batch (0: off, the ordinary reduction of the
 * one-process engine). Set by the run before the model is created; models read it. */
void    datm_par_set_chunks(int64_t C);
int64_t datm_par_chunks(void);
/* This rank's chunks [c0, c1) of C. */
void datm_par_own(int64_t C, int64_t *c0, int64_t *c1);
/* Rows [r0, r1) of chunk c of a mini-batch of B rows. */
void datm_par_chunk_rows(int64_t B, int64_t C, int64_t c, int64_t *r0, int64_t *r1);

/* Entries [i0, i1) = [n r / R, n (r + 1) / R) of an n-vector: this rank's part of a sum or
 * of a sliced update. */
void datm_par_part(int64_t n, int64_t *i0, int64_t *i1);

/* The model computes only this rank's chunks of each mini-batch (its rows [B c0 / C,
 * B c1 / C) for the chunks [c0, c1) of datm_par_own): set by the model at creation, so that
 * the run reads and copies only those rows (the other rows of the mini-batch it hands over are
 * empty), and evaluates only this rank's share of the evaluation documents, their noise keyed
 * by their row in the whole evaluation set. Reset by datm_par_set_chunks. */
void datm_par_set_own_rows(int on);
int  datm_par_own_rows(void);
/* The row of the whole evaluation set that row 0 of the documents handed to eval_begin (and
 * infer) is: with own rows, the run gives each rank rows [N r / R, N (r + 1) / R) of the
 * evaluation documents and the model keys their noise by first + row, so that each document
 * gets the numbers it gets on one rank. 0 otherwise. */
void    datm_par_set_eval_first(int64_t first);
int64_t datm_par_eval_first(void);
/* Rows [r0, r1) of a mini-batch of B rows that this rank computes (all of them with one
 * rank or without the flag above). */
void datm_par_batch_rows(int64_t B, int64_t *r0, int64_t *r1);

/* out (n) = slots[0] + slots[1] + ... + slots[C-1], added in that order, on every rank;
 * slots (C, n) holds this rank's chunks (datm_par_own; the other rows are scratch). With R
 * ranks each rank adds the C rows of its 1/R of the entries (a reduce-scatter whose order is
 * the chunks') and the ranks then exchange their parts: a rank sends (C/R + 1)(R - 1)/R x 4n
 * bytes, about what a ring allreduce of n floats sends when C = R. */
int datm_par_sum_chunks(float *slots, int64_t n, int64_t C, float *out, datm_error *err);
/* Its first half alone: out[i0, i1) (datm_par_part) = the fixed-order sum of this rank's part;
 * the other entries of out are left as they are. */
int datm_par_sum_chunks_part(float *slots, int64_t n, int64_t C, float *out, datm_error *err);
/* x (n): each rank's part (datm_par_part) sent to every rank; the other half of the above. */
int datm_par_gather_part_f32(float *x, int64_t n, datm_error *err);
/* *any = 1 on every rank when flag is nonzero on some rank (one small allreduce). */
int datm_par_any(int flag, int *any, datm_error *err);

/* State updated in slices (each rank keeps its part, datm_par_part, current: Adam's moments),
 * registered by its owner and gathered whole on every rank by datm_par_sharded_gather, which
 * the run calls on every rank before rank 0 writes a checkpoint or the result. At most 16
 * arrays; add returns nonzero when full. */
int  datm_par_sharded_add(float *x, int64_t n);
void datm_par_sharded_remove(const float *x);
int  datm_par_sharded_gather(datm_error *err);

/* The fixed-order sum itself, entries [i0, i1): out[i] = rows[0][i] + ... (rows (C, stride)). */
void datm_par_add_rows(const float *rows, int64_t C, int64_t stride, int64_t i0, int64_t i1,
                       float *out);
/* buf holds C slots of slot_bytes each; this rank has filled its own (datm_par_own); on
 * return every slot is filled on every rank (small data: loss sums, per-document values). */
int datm_par_gather_slots(void *buf, size_t slot_bytes, int64_t C, datm_error *err);
/* buf holds R parts, part r of bytes[r] bytes right after part r - 1; this rank has filled
 * its own; on return every part is filled on every rank. */
int datm_par_gather_parts(void *buf, const int64_t *bytes, datm_error *err);
/* x (n) = the element-wise sum of every rank's x (exact): the nonzeros as (index, value)
 * pairs when all ranks' pairs are fewer than n / 2, else the dense vector (MPI_Allreduce). */
int datm_par_sum_i64(int64_t *x, int64_t n, datm_error *err);
/* The same sum (the same result and bytes) when this rank's nonzeros of x are all among the
 * m distinct entries idx[0..*m): the pairs are taken from the list instead of a scan of x, so
 * a step's work is the size of its counts, not of x. On return idx lists every entry that may
 * be nonzero (the listed ones and those the other ranks' pairs made nonzero, appended; room
 * for n), or *m = -1 (unknown: the sum went dense). idx NULL or *m < 0: datm_par_sum_i64.
 * The values must be non-negative, so that an entry listed once stays nonzero. */
int datm_par_sum_i64_listed(int64_t *x, int64_t n, int64_t *idx, int64_t *m, datm_error *err);

/* Traffic of this rank since the start, for the benchmark and the run log: bytes_sent, the
 * bytes of this rank's own data that other ranks receive (its chunks' parts for the others
 * and its summed part to each other rank in datm_par_sum_chunks, its slots to each other
 * rank in datm_par_gather_slots, its counts once in datm_par_sum_i64; 0 with one rank), and
 * the collective calls, and the wall time spent in them. */
typedef enum {
    DATM_PAR_K_SUM_CHUNKS, DATM_PAR_K_SUM_CHUNKS_PART, DATM_PAR_K_GATHER_PART_F32,
    DATM_PAR_K_GATHER_SLOTS, DATM_PAR_K_GATHER_PARTS, DATM_PAR_K_SUM_I64,
    DATM_PAR_K_SUM_I64_LISTED, DATM_PAR_K_ANY, DATM_PAR_N_KINDS
} datm_par_kind;
/* The kind's name as the run log prints it: the function's name without datm_par_. */
const char *datm_par_kind_name(int kind);

typedef struct datm_par_traffic {
    int64_t bytes_sent, calls;
    double  wait_s;   /* wall time inside the collectives (waiting for the other ranks too) */
    double  wait_cpu_s;   /* process CPU time inside them (MPI polls while it waits) */
    /* wait_s and the calls by kind of collective (MPI only; zero with one process) */
    int64_t kind_calls[DATM_PAR_N_KINDS];
    double  kind_s[DATM_PAR_N_KINDS];
    /* with DATM_PAR_SKEW=1: time in a barrier before each collective, i.e. waiting for the
     * slowest rank to arrive, kept out of wait_s and kind_s (0 otherwise) */
    double  skew_s;
} datm_par_traffic;
void datm_par_traffic_get(datm_par_traffic *t);

#endif
