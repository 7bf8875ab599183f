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
 * Every rank takes the same Adam step. Only rank 0 writes files.
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

/* out (n) = slots[0] + slots[1] + ... + slots[C-1], added in that order, on every rank;
 * slots (C, n) holds this rank's chunks (datm_par_own; the other rows are scratch). With R
 * ranks each rank adds the C rows of its 1/R of the entries (a reduce-scatter whose order is
 * the chunks') and the ranks then exchange their parts: a rank sends (C/R + 1)(R - 1)/R x 4n
 * bytes, about what a ring allreduce of n floats sends when C = R. */
int datm_par_sum_chunks(float *slots, int64_t n, int64_t C, float *out, datm_error *err);
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

/* Traffic of this rank since the start, for the benchmark and the run log: bytes_sent, the
 * bytes of this rank's own data that other ranks receive (its chunks' parts for the others
 * and its summed part to each other rank in datm_par_sum_chunks, its slots to each other
 * rank in datm_par_gather_slots, its counts once in datm_par_sum_i64; 0 with one rank), and
 * the collective calls, and the wall time spent in them. */
typedef struct datm_par_traffic {
    int64_t bytes_sent, calls;
    double  wait_s;   /* wall time inside the collectives (waiting for the other ranks too) */
    double  wait_cpu_s;   /* process CPU time inside them (MPI polls while it waits) */
} datm_par_traffic;
void datm_par_traffic_get(datm_par_traffic *t);

#endif
