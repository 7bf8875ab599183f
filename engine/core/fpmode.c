/* engine/core/fpmode.c: denormal (subnormal) floats flushed to zero while the engine works.
 *
 * Why: on x86 an operation with a subnormal input or result takes a microcode assist of
 * ~100 cycles instead of one. They arise where nothing needs them: in MNIST sDATM-N at
 * 512-256-128-64, up to 40% of the gradient entries at a hidden layer's pre-activation (the
 * encoder's dz3 of layer 3, both phases) were subnormal, products of small upstream gradients
 * and the softplus derivative sigmoid(z) ~ e^z of units held far below zero (the activations
 * had none). The small-matrix kernel of the weight-gradient products that read them had
 * 42-47% of the supervised phase's perf samples (26% in the unsupervised phase), and with
 * them flushed that phase ran 2-3x faster.
 * Flushing changes only values below 1.2e-38 (float) and 2.2e-308 (double), which the
 * paper's maths never tells apart from 0.
 *
 * The mode is a per-thread register (MXCSR's FTZ and DAZ bits on x86-64, FPCR.FZ on
 * AArch64), so it is set in every thread of the OpenMP team; threads created later copy it
 * from the thread that creates them, and OpenBLAS's workers follow the caller's register
 * (tests/test_core_fpmode.c checks both). The same mode in every thread keeps results
 * independent of the thread count. */
#include "core/core.h"

#include <omp.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define FLUSH_BITS 0x8040u   /* FTZ (bit 15): results; DAZ (bit 6): inputs */
static unsigned get_mode(void) { return _mm_getcsr(); }
static void set_mode(unsigned v) { _mm_setcsr(v); }
#elif defined(__aarch64__)
#define FLUSH_BITS (1u << 24)   /* FPCR.FZ: inputs and results */
static unsigned get_mode(void)
{
    unsigned long v;
    __asm__ volatile("mrs %0, fpcr" : "=r"(v));
    return (unsigned)v;
}
static void set_mode(unsigned v)
{
    unsigned long w = v;
    __asm__ volatile("msr fpcr, %0" : : "r"(w));
}
#else
#define FLUSH_BITS 0u   /* no such mode known here: subnormals stay (slower, same maths) */
static unsigned get_mode(void) { return 0; }
static void set_mode(unsigned v) { (void)v; }
#endif

static void set_all(unsigned v)
{
    set_mode(v);
#pragma omp parallel
    set_mode(v);
}

void datm_fp_flush_begin(datm_fp_mode *saved)
{
    saved->reg = get_mode();
    set_all(saved->reg | FLUSH_BITS);
}

void datm_fp_flush_end(const datm_fp_mode *saved)
{
    set_all(saved->reg);
}

int datm_fp_flushing(void)
{
    return FLUSH_BITS != 0 && (get_mode() & FLUSH_BITS) == FLUSH_BITS;
}
