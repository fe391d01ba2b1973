/* ref.c: float64 reference for the kernel tests (see ref.h).
 *
 * Nothing here is shared with the generator or the runtime: conversions are
 * written from the IEEE formats' definitions (value = significand * 2^exp,
 * built with ldexp), rounding to a narrow format is rint() on a scaled copy
 * (exact power-of-two scaling, then one round-to-nearest-even), and the
 * norms are the textbook formulas in long double. */
#include "ref.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* Format parameters: significand bits p (with the hidden bit), smallest
 * normal exponent emin, largest exponent emax. */
typedef struct ref_fmt {
  int p, emin, emax, ebits;
} ref_fmt;

static const ref_fmt ref_fmts[3] = {
    {24, -126, 127, 8}, /* f32  */
    {8, -126, 127, 8},  /* bf16 */
    {11, -14, 15, 5},   /* f16  */
};

/* Why: one place that maps a dtype number to its size. */
size_t ref_esize(int dtype) { return dtype == REF_F32 ? 4 : 2; }

/* Why: failure messages name the dtype in words. */
const char *ref_dtype_name(int dtype) {
  return dtype == REF_F32 ? "f32" : dtype == REF_BF16 ? "bf16" : "f16";
}

/* Why: tolerances and exact-shift grids depend on the significand size. */
int ref_precision(int dtype) { return ref_fmts[dtype].p; }

/* Why: the relative spacing of T at 1.0, the unit of its error bounds. */
double ref_eps_T(int dtype) { return ldexp(1.0, 1 - ref_fmts[dtype].p); }

/* Why: data generators keep values finite in T. */
double ref_max_T(int dtype) {
  const ref_fmt *f = &ref_fmts[dtype];
  return ldexp(2.0 - ldexp(1.0, 1 - f->p), f->emax);
}

/* Why: bf16 = 1 sign, 8 exponent, 7 fraction bits; value from definition. */
double ref_bf16_to_double(uint16_t b) {
  unsigned e = (b >> 7) & 0xffu, m = b & 0x7fu;
  double v;
  if (e == 0xffu)
    v = m ? NAN : INFINITY;
  else if (e == 0)
    v = ldexp((double)m, -133);
  else
    v = ldexp(128.0 + m, (int)e - 134);
  return (b & 0x8000u) ? -v : v;
}

/* Why: f16 = 1 sign, 5 exponent, 10 fraction bits; value from definition. */
double ref_f16_to_double(uint16_t h) {
  unsigned e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  double v;
  if (e == 0x1fu)
    v = m ? NAN : INFINITY;
  else if (e == 0)
    v = ldexp((double)m, -24);
  else
    v = ldexp(1024.0 + m, (int)e - 25);
  return (h & 0x8000u) ? -v : v;
}

/* Why: correct rounding of a double to a format, ties to even, overflow to
 * Inf.  |v| / quantum is an exact power-of-two scaling, so the only
 * rounding is rint() (round-to-nearest-even in the default FP mode). */
static double ref_round_fmt(double v, const ref_fmt *f) {
  double a, q, r;
  int e;
  if (isnan(v) || isinf(v) || v == 0)
    return v;
  a = fabs(v);
  frexp(a, &e);
  e -= 1; /* a in [2^e, 2^(e+1)) */
  if (e < f->emin)
    e = f->emin;
  q = ldexp(1.0, e - (f->p - 1));
  r = rint(a / q) * q;
  if (r >= ldexp(1.0, f->emax + 1))
    r = INFINITY;
  return copysign(r, v);
}

/* Why: bits of a value already representable in a 16-bit format. */
static uint16_t ref_encode16(double r, const ref_fmt *f) {
  unsigned sign = signbit(r) ? 0x8000u : 0u, fb = (unsigned)f->p - 1;
  double a = fabs(r);
  int e;
  if (isnan(r))
    return (uint16_t)(0x7fffu & ~((1u << (fb - 1)) - 1u)); /* quiet NaN */
  if (isinf(r))
    return (uint16_t)(sign | (((1u << f->ebits) - 1u) << fb));
  if (a < ldexp(1.0, f->emin))
    return (uint16_t)(sign | (unsigned)(a / ldexp(1.0, f->emin - (int)fb)));
  frexp(a, &e);
  e -= 1;
  return (uint16_t)(sign | ((unsigned)(e - f->emin + 1) << fb) |
                    ((unsigned)(a / ldexp(1.0, e - (int)fb)) - (1u << fb)));
}

/* Why: the correctly rounded bf16 a "single" kernel is compared with. */
uint16_t ref_double_to_bf16(double v) {
  return ref_encode16(ref_round_fmt(v, &ref_fmts[REF_BF16]),
                      &ref_fmts[REF_BF16]);
}

/* Why: the correctly rounded f16 a "single" kernel is compared with. */
uint16_t ref_double_to_f16(double v) {
  return ref_encode16(ref_round_fmt(v, &ref_fmts[REF_F16]), &ref_fmts[REF_F16]);
}

/* Why: T arrays are handled as bytes plus a dtype; this is the index. */
void *ref_at(int dtype, void *p, size_t i) {
  return (unsigned char *)p + i * ref_esize(dtype);
}

/* Why: the const twin of ref_at, for inputs. */
const void *ref_cat(int dtype, const void *p, size_t i) {
  return (const unsigned char *)p + i * ref_esize(dtype);
}

/* Why: bit-identity checks compare raw patterns (NaN payloads, -0). */
uint32_t ref_bits(int dtype, const void *p, size_t i) {
  if (dtype == REF_F32) {
    uint32_t u;
    memcpy(&u, ref_cat(dtype, p, i), 4);
    return u;
  } else {
    uint16_t h;
    memcpy(&h, ref_cat(dtype, p, i), 2);
    return h;
  }
}

/* Why: tests plant exact patterns (NaNs, Infs, sentinels). */
void ref_set_bits(int dtype, void *p, size_t i, uint32_t bits) {
  if (dtype == REF_F32) {
    memcpy(ref_at(dtype, p, i), &bits, 4);
  } else {
    uint16_t h = (uint16_t)bits;
    memcpy(ref_at(dtype, p, i), &h, 2);
  }
}

/* Why: f32 widening is exact in C; 16-bit formats go through the
 * definitions above. */
double ref_load(int dtype, const void *p, size_t i) {
  uint32_t u = ref_bits(dtype, p, i);
  if (dtype == REF_F32) {
    float f;
    memcpy(&f, &u, 4);
    return (double)f;
  }
  return dtype == REF_BF16 ? ref_bf16_to_double((uint16_t)u)
                           : ref_f16_to_double((uint16_t)u);
}

/* Why: the pattern of round_T(v), what a correctly rounding store gives. */
uint32_t ref_to_bits(int dtype, double v) {
  if (dtype == REF_F32) {
    /* the f32 rounding is done here too, not by the C conversion */
    double r = ref_round_fmt(v, &ref_fmts[REF_F32]);
    float f = (float)r; /* exact: r is representable */
    uint32_t u;
    if (isnan(v))
      return 0x7fc00000u;
    memcpy(&u, &f, 4);
    return u;
  }
  return dtype == REF_BF16 ? ref_double_to_bf16(v) : ref_double_to_f16(v);
}

/* Why: test data is generated in double and stored rounded to T. */
void ref_store(int dtype, void *p, size_t i, double v) {
  ref_set_bits(dtype, p, i, ref_to_bits(dtype, v));
}

/* Why: round_T as a value, for the "hf" reference and exact-shift data. */
double ref_round(int dtype, double v) {
  return ref_round_fmt(v, &ref_fmts[dtype]);
}

/* Why: one ULP of the format at the representable value nearest `ref`;
 * the spacing is constant below the smallest normal. */
static double ref_ulp_fmt(double ref, const ref_fmt *f) {
  double a = fabs(ref_round_fmt(ref, f));
  int e;
  if (isnan(a))
    return NAN;
  if (isinf(a))
    a = ldexp(1.0, f->emax);
  if (a < ldexp(1.0, f->emin))
    return ldexp(1.0, f->emin - (f->p - 1));
  frexp(a, &e);
  return ldexp(1.0, e - 1 - (f->p - 1));
}

/* Why: the unit of the f32 tolerances. */
double ref_ulp_f32(double ref) { return ref_ulp_fmt(ref, &ref_fmts[REF_F32]); }

double ref_ulp_T(int dtype, double ref) {
  return ref_ulp_fmt(ref, &ref_fmts[dtype]);
}

/* Why: f32 accuracy is stated in ULP of the exact result. */
double ref_ulp_dist_f32(float y, double ref) {
  int yn = isnan(y), rn = isnan(ref);
  if (yn || rn)
    return (yn && rn) ? 0.0 : INFINITY;
  if (isinf(y) || isinf(ref))
    return ((double)y == ref) ? 0.0 : INFINITY;
  return fabs((double)y - ref) / ref_ulp_f32(ref);
}

/* Why: NaN rows are checked on bits; any NaN pattern counts. */
int ref_is_nan_bits(int dtype, uint32_t bits) {
  if (dtype == REF_F32)
    return (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu) != 0;
  if (dtype == REF_BF16)
    return (bits & 0x7f80u) == 0x7f80u && (bits & 0x7fu) != 0;
  return (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0;
}

/* Why: sign-magnitude patterns are ordered like their values once the
 * negative half is mirrored, so the ordinal difference counts the
 * representable values between two results. */
double ref_bits_dist(int dtype, uint32_t a, uint32_t b) {
  uint32_t sbit = dtype == REF_F32 ? 0x80000000u : 0x8000u;
  double oa, ob;
  int an = ref_is_nan_bits(dtype, a), bn = ref_is_nan_bits(dtype, b);
  if (an || bn)
    return (an && bn) ? 0.0 : 1e9;
  oa = (a & sbit) ? -(double)(a & ~sbit) : (double)a;
  ob = (b & sbit) ? -(double)(b & ~sbit) : (double)b;
  return fabs(oa - ob);
}

/* Why: the policy: a row holding NaN or Inf is poisoned as a whole. */
static int ref_row_bad(int dtype, size_t dim, const void *x) {
  size_t i;
  for (i = 0; i < dim; i++)
    if (!isfinite(ref_load(dtype, x, i)))
      return 1;
  return 0;
}

/* Why: RMSNorm as DESIGN.md defines it, in long double (see ref.h), once
 * for both entry points below.  last = 0 leaves the HF order's final
 * rounding to the caller; h (may be NULL) gets the normalized values. */
static double ref_rms_core(int dtype, int rounding, int last, size_t dim,
                           const void *x, const void *w, double eps,
                           double weight_offset, double *h, double *y) {
  long double ss = 0, rstd;
  size_t i;
  if (ref_row_bad(dtype, dim, x)) {
    for (i = 0; i < dim; i++) {
      y[i] = NAN;
      if (h)
        h[i] = NAN;
    }
    return NAN;
  }
  for (i = 0; i < dim; i++) {
    long double xi = ref_load(dtype, x, i);
    ss += xi * xi;
  }
  rstd = 1.0L / sqrtl(ss / (long double)dim + (long double)eps);
  for (i = 0; i < dim; i++) {
    long double xi = ref_load(dtype, x, i);
    long double wi = (long double)ref_load(dtype, w, i) + weight_offset;
    if (rounding == REF_ROUND_HF) {
      double hi = ref_round(dtype, (double)(xi * rstd));
      double yi = (double)(wi * (long double)hi);
      if (h)
        h[i] = hi;
      y[i] = last ? ref_round(dtype, yi) : yi;
    } else {
      if (h)
        h[i] = (double)(xi * rstd);
      y[i] = (double)(xi * rstd * wi);
    }
  }
  return (double)rstd;
}

double ref_rmsnorm_row(int dtype, int rounding, size_t dim, const void *x,
                       const void *w, double eps, double weight_offset,
                       double *y) {
  return ref_rms_core(dtype, rounding, 1, dim, x, w, eps, weight_offset, NULL,
                      y);
}

/* Why: bounds that follow the HF order need its pieces (the fuzz target). */
double ref_rmsnorm_row_parts(int dtype, int rounding, size_t dim,
                             const void *x, const void *w, double eps,
                             double weight_offset, double *h, double *y) {
  return ref_rms_core(dtype, rounding, 0, dim, x, w, eps, weight_offset, h, y);
}

/* Why: LayerNorm with a two-pass variance, in long double: the mean is
 * exact to 2^-64 relative, so x - mean carries no cancellation error. */
void ref_layernorm_row(int dtype, size_t dim, const void *x, const void *gamma,
                       const void *beta, double eps, double *y, double *mean,
                       double *rstd) {
  long double s = 0, mu, v = 0, r;
  size_t i;
  if (ref_row_bad(dtype, dim, x)) {
    for (i = 0; i < dim; i++)
      y[i] = NAN;
    *mean = NAN;
    *rstd = NAN;
    return;
  }
  for (i = 0; i < dim; i++)
    s += (long double)ref_load(dtype, x, i);
  mu = s / (long double)dim;
  for (i = 0; i < dim; i++) {
    long double d = (long double)ref_load(dtype, x, i) - mu;
    v += d * d;
  }
  r = 1.0L / sqrtl(v / (long double)dim + (long double)eps);
  for (i = 0; i < dim; i++) {
    long double d = (long double)ref_load(dtype, x, i) - mu;
    y[i] = (double)((long double)ref_load(dtype, gamma, i) * d * r +
                    (long double)ref_load(dtype, beta, i));
  }
  *mean = (double)mu;
  *rstd = (double)r;
}

/* Why: the two qk_norm layouts of the ABI, written once. */
size_t ref_qk_offset(int layout, size_t head_dim, size_t stride, size_t t,
                     size_t h) {
  return layout == REF_LAYOUT_HEAD_MAJOR ? h * stride + t * head_dim
                                         : t * stride + h * head_dim;
}

/* Why: qk_norm is per-head RMSNorm; the reference says so literally. */
void ref_qk_norm(int dtype, int rounding, int layout, size_t head_dim,
                 size_t num_heads, size_t num_kv_heads, size_t tokens,
                 const void *q, size_t q_stride, const void *k, size_t k_stride,
                 const void *q_w, const void *k_w, double eps,
                 double weight_offset, double *qy, double *ky) {
  size_t t, h;
  for (t = 0; t < tokens; t++) {
    for (h = 0; h < num_heads; h++) {
      size_t o = ref_qk_offset(layout, head_dim, q_stride, t, h);
      ref_rmsnorm_row(dtype, rounding, head_dim, ref_cat(dtype, q, o), q_w, eps,
                      weight_offset, qy + o);
    }
    for (h = 0; h < num_kv_heads; h++) {
      size_t o = ref_qk_offset(layout, head_dim, k_stride, t, h);
      ref_rmsnorm_row(dtype, rounding, head_dim, ref_cat(dtype, k, o), k_w, eps,
                      weight_offset, ky + o);
    }
  }
}

/* ---- PRNG ---------------------------------------------------------------- */

void ref_rng_seed(ref_rng *r, uint64_t seed) { r->s = seed; }

/* Why: splitmix64 is tiny, fast, and the same on every platform. */
uint64_t ref_rng_next(ref_rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Why: 53 random bits, so every double in [0, 1) step 2^-53 can occur. */
double ref_rng_unit(ref_rng *r) {
  return (double)(ref_rng_next(r) >> 11) * 0x1p-53;
}

/* Why: uniform values for weights and offsets. */
double ref_rng_range(ref_rng *r, double lo, double hi) {
  return lo + (hi - lo) * ref_rng_unit(r);
}

/* Why: sum of four uniforms, centred and scaled to variance 1: bell-shaped,
 * bounded (|v| <= 2*sqrt(3)), and free of libm so data is bit-identical on
 * every platform. */
double ref_rng_normal(ref_rng *r) {
  double s =
      ref_rng_unit(r) + ref_rng_unit(r) + ref_rng_unit(r) + ref_rng_unit(r);
  return (s - 2.0) * 1.7320508075688772;
}

/* Why: log-uniform scales cover many binades evenly. */
double ref_rng_pow10(ref_rng *r, double lo, double hi) {
  return pow(10.0, ref_rng_range(r, lo, hi));
}

/* Why: per-kernel seeds derived from names keep data stable when the pack
 * gains or loses other kernels. */
uint64_t ref_hash_str(const char *s, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ull ^ seed;
  while (*s) {
    h ^= (unsigned char)*s++;
    h *= 0x100000001b3ull;
  }
  return h;
}
