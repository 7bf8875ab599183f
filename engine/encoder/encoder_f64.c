/* engine/encoder/encoder_f64.c: the double-precision instance of encoder_impl.h (gradient
 * checks; see encoder.h). */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "encoder/encoder.h"
#include "math/math.h"
#include "nn/vmath.h"

#define R double
#define ENC(name) name##_f64
#define NN(name) name##_f64
#define FAM(member) member##_f64
#define WS datm_encoder_ws_f64
#define GEMM datm_dgemm
#define VEC_ATTR 
#define VLOG log
#define VLOG1P log1p
#define VEXP exp
#define VLGAMMA lgamma
#define VDIGAMMA datm_digamma
#define KEEP datm_vkeep
#include "encoder/encoder_impl.h"
