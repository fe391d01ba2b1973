/* ref.h: the hand-written float64 reference the kernel tests compare with.
 *
 * Written from the math in DESIGN.md, never from generated code or from the
 * runtime's conversions (kg_convert.h is deliberately not used): inputs of
 * storage type T (f32, bf16, f16 raw bits) are widened exactly to double,
 * sums run in long double (x^2 of a 24-bit mantissa is exact in double, and
 * each long double add loses at most 2^-64 relatively), so the reference is
 * many orders of magnitude more accurate than the f32 kernels under test.
 *
 * Also here: exact bf16/f16 <-> double conversions, ULP and bit distances,
 * and a small deterministic PRNG for test data.  dtype numbers match enum
 * kg_dtype (0 f32, 1 bf16, 2 f16); rounding matches enum kg_rounding. */
#ifndef KT_REF_H
#define KT_REF_H

#include <stddef.h>
#include <stdint.h>

#define REF_F32 0
#define REF_BF16 1
#define REF_F16 2

#define REF_ROUND_SINGLE 0 /* f32 math, one rounding at the store */
#define REF_ROUND_HF 1     /* h = round_T(x*rstd), y = round_T(w*h) */

#define REF_LAYOUT_TOKEN_MAJOR 0 /* (t,h,d) at t*stride + h*head_dim + d */
#define REF_LAYOUT_HEAD_MAJOR 1  /* (t,h,d) at h*stride + t*head_dim + d */

/* ---- storage types ------------------------------------------------------- */

size_t ref_esize(int dtype);           /* 4 or 2 bytes */
const char *ref_dtype_name(int dtype); /* "f32", "bf16", "f16" */
int ref_precision(int dtype);          /* significand bits: 24, 8, 11 */
double ref_eps_T(int dtype);           /* 2^(1-p): 2^-23, 2^-7, 2^-10 */
double ref_max_T(int dtype);           /* largest finite value */

double ref_bf16_to_double(uint16_t b); /* exact */
double ref_f16_to_double(uint16_t h);  /* exact */
uint16_t ref_double_to_bf16(double v); /* round to nearest even */
uint16_t ref_double_to_f16(double v);  /* round to nearest even */

/* Element i of a T array as double (exact), and stores of round_T(v). */
double ref_load(int dtype, const void *p, size_t i);
void ref_store(int dtype, void *p, size_t i, double v);
/* Raw bits of element i (f32: 32 bits, else 16). */
uint32_t ref_bits(int dtype, const void *p, size_t i);
void ref_set_bits(int dtype, void *p, size_t i, uint32_t bits);
/* The bits of round_T(v), and the value round_T(v) as a double. */
uint32_t ref_to_bits(int dtype, double v);
double ref_round(int dtype, double v);
/* Pointer to element i of a T array. */
void *ref_at(int dtype, void *p, size_t i);
const void *ref_cat(int dtype, const void *p, size_t i);

/* ---- distances ----------------------------------------------------------- */

/* ULP of the f32 nearest to `ref` (2^-149 floor; FLT_MAX's ULP past it). */
double ref_ulp_f32(double ref);
/* ULP of the T value nearest to `ref` (subnormal floor of T). */
double ref_ulp_T(int dtype, double ref);
/* |y - ref| / ref_ulp_f32(ref); 0 when both are NaN or the same Inf,
 * +Inf when exactly one is NaN or Inf. */
double ref_ulp_dist_f32(float y, double ref);
/* Distance in representable steps between two T bit patterns, counted
 * through zero (+0 and -0 are the same point); 0 for two NaNs, a huge
 * value (1e9) when exactly one is a NaN.  Works for f32 too. */
double ref_bits_dist(int dtype, uint32_t a, uint32_t b);
int ref_is_nan_bits(int dtype, uint32_t bits);

/* ---- reference kernels --------------------------------------------------- */

/* One RMSNorm row: y[i] = x[i] * rstd * (w[i] + weight_offset),
 * rstd = 1/sqrt(mean x^2 + eps).  SINGLE: y[] gets the unrounded product
 * (the caller rounds as needed); HF: y[] gets the exact value of
 * round_T((w+off) * round_T(x*rstd)).  A row holding NaN or Inf gives
 * all-NaN y and a NaN return.  Returns rstd. */
double ref_rmsnorm_row(int dtype, int rounding, size_t dim, const void *x,
                       const void *w, double eps, double weight_offset,
                       double *y);

/* ref_rmsnorm_row's pieces: h[i] = round_T(x[i] * rstd) (HF) or the
 * unrounded x[i] * rstd (SINGLE); y[i] = (w[i] + weight_offset) * h[i]
 * without HF's last rounding to T (SINGLE: the same y as ref_rmsnorm_row).
 * h may be NULL.  NaN/Inf rows: all-NaN y and h, NaN return. */
double ref_rmsnorm_row_parts(int dtype, int rounding, size_t dim,
                             const void *x, const void *w, double eps,
                             double weight_offset, double *h, double *y);

/* One LayerNorm row: mean, population variance (two passes), rstd =
 * 1/sqrt(var+eps), y = gamma*(x-mean)*rstd + beta, unrounded.  NaN/Inf in
 * the row: y, mean and rstd all NaN. */
void ref_layernorm_row(int dtype, size_t dim, const void *x, const void *gamma,
                       const void *beta, double eps, double *y, double *mean,
                       double *rstd);

/* QK-norm of `tokens` tokens: every head row of Q (num_heads per token)
 * normalized with q_w, every head row of K with k_w.  qy/ky are indexed
 * like q/k (same layout and stride); only head elements are written. */
void ref_qk_norm(int dtype, int rounding, int layout, size_t head_dim,
                 size_t num_heads, size_t num_kv_heads, size_t tokens,
                 const void *q, size_t q_stride, const void *k, size_t k_stride,
                 const void *q_w, const void *k_w, double eps,
                 double weight_offset, double *qy, double *ky);

/* Element offset of head h of token t in a qk_norm buffer. */
size_t ref_qk_offset(int layout, size_t head_dim, size_t stride, size_t t,
                     size_t h);

/* ---- deterministic data -------------------------------------------------- */

typedef struct ref_rng {
  uint64_t s;
} ref_rng;

void ref_rng_seed(ref_rng *r, uint64_t seed);
uint64_t ref_rng_next(ref_rng *r); /* splitmix64 */
double ref_rng_unit(ref_rng *r);   /* uniform [0, 1), 53 bits */
double ref_rng_range(ref_rng *r, double lo, double hi);
double ref_rng_normal(ref_rng *r); /* Irwin-Hall(4): mean 0, var 1 */
double ref_rng_pow10(ref_rng *r, double lo, double hi); /* 10^U(lo,hi) */
uint64_t ref_hash_str(const char *s, uint64_t seed);    /* FNV-1a 64 */

#endif
