/* test_exhaustive.c: exhaustive small-domain tests of every kernel variant.
 *
 * The C stand-in for the contracts' Kani harnesses (no CBMC here): instead
 * of proving the obligations for all inputs up to a bound, every one of the
 * 65 536 bf16 and f16 bit patterns is fed as an input element, packed into
 * rows of the kernel's width, under several row arrangements (sequential,
 * shuffled, strided, so each pattern meets different neighbours) and several
 * weight vectors (ones; random of both signs; random with tiny, subnormal
 * and zero weights).  The pack is tests/specs/kge.lua; the variants come from
 * its table (kge_variants), so every ISA and the dispatcher run.
 *
 * KANI-QKN-001 (rmsnorm, qk_norm), on every row:
 *   - a row holding a NaN or an Inf gives an all-NaN row;
 *   - a finite row gives a finite row;
 *   - |y_i| <= |w_i| * sqrt(d), plus what the f32 arithmetic and the
 *     rounding to the storage type may add (mean x^2 >= x_i^2 / d for any
 *     eps, so |x_i| / sqrt(mean x^2 + eps) <= sqrt(d));
 *   - y_i is zero or has the sign of x_i * w_i, and is zero when x_i or w_i
 *     is zero;
 *   - with unit weights, RMS(y) = sqrt(ms / (ms + eps)) within the rounding
 *     of y to the storage type (QKN-INV-001, corrected as DESIGN.md says);
 *   - rmsnorm's rstd output is 1/sqrt(ms + eps) within the f32 sum error;
 *   - nothing outside the rows is written (guards between rows, V of a
 *     fused QKV buffer, padding between heads).
 * KANI-QKN-002 (QKN-INV-004, zero stability): rows of +0, -0 and mixed
 *   signed zeros give zero rows for every weight vector.
 * KANI-LN-003 (layernorm, LN-BND-001 denominator safety): NaN/Inf rows are
 *   all-NaN; finite rows give finite rows, a mean and rstd within the f32
 *   error of the exact ones (the kernel phases' statistics), and |y_i - beta_i| <=
 *   |gamma_i| * sqrt(d - 1) (Samuelson: |x_i - mu| <= sigma * sqrt(d - 1),
 *   tighter than the contract's sqrt(d)) plus the f32 error of
 *   x - mean (a few f32 ULPs of |mean| * rstd, cancellation) and rounding.
 *
 * The bounds are computed in double from the inputs by the formulas above;
 * nothing here reuses the generated code's arithmetic.  Variants the CPU
 * cannot run are reported as SKIPPED on stdout and not registered. */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kg_convert.h"
#include "kge.h"

#define EX_NPAT 65536u     /* every 16-bit pattern */
#define EX_GUARD 0x5a5au   /* sentinel in memory a kernel must not write */
#define EX_GAP 3u          /* guard elements after each row / head block */
#define EX_MAX_MSGS 6      /* failure lines kept per test */
#define EX_U32 (1.0 / 16777216.0) /* f32 unit roundoff, 2^-24 */

enum { EX_ARR_SEQUENTIAL, EX_ARR_SHUFFLED, EX_ARR_STRIDED, EX_NARR };
enum { EX_W_ONES, EX_W_RANDOM, EX_W_TINY, EX_NW };
static const char *const ex_arr_name[EX_NARR] = {"sequential", "shuffled",
                                                 "strided"};
static const char *const ex_w_name[EX_NW] = {"ones", "random",
                                             "random+tiny+zero"};

/* ---------------------------------------------------------------------- */
/* Storage types                                                           */

static double ex_val(int dtype, uint16_t b) {
  return dtype == KG_BF16 ? (double)kg_bf16_to_f32(b) : (double)kg_f16_to_f32(b);
}

static uint16_t ex_from_double(int dtype, double v) {
  return dtype == KG_BF16 ? kg_f32_to_bf16((float)v) : kg_f32_to_f16((float)v);
}

static uint16_t ex_exp_mask(int dtype) {
  return dtype == KG_BF16 ? 0x7f80u : 0x7c00u;
}

static int ex_finite(int dtype, uint16_t b) {
  return (b & ex_exp_mask(dtype)) != ex_exp_mask(dtype);
}

static int ex_is_nan(int dtype, uint16_t b) {
  return !ex_finite(dtype, b) && (b & (uint16_t)~ex_exp_mask(dtype) & 0x7fffu);
}

/* Unit roundoff and half the smallest subnormal of the storage type: the
 * relative and absolute error of one rounding to it. */
static double ex_unit(int dtype) {
  return dtype == KG_BF16 ? ldexp(1.0, -8) : ldexp(1.0, -11);
}

static double ex_eta(int dtype) {
  return dtype == KG_BF16 ? ldexp(1.0, -134) : ldexp(1.0, -25);
}

static const char *ex_dtype_name(int dtype) {
  return dtype == KG_BF16 ? "bf16" : dtype == KG_F16 ? "f16" : "f32";
}

/* ---------------------------------------------------------------------- */
/* Fixed pseudo-random numbers (splitmix64): same data on every run.      */

static uint64_t ex_next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double ex_uniform(uint64_t *s) { /* [0, 1) */
  return (double)(ex_next(s) >> 11) * ldexp(1.0, -53);
}

/* ---------------------------------------------------------------------- */
/* Arrangements: rows of d patterns in which every pattern appears.       */

typedef struct ex_rows {
  size_t rows; /* rows of d elements */
  uint16_t *x; /* rows * d patterns */
} ex_rows;

static size_t ex_gcd(size_t a, size_t b) {
  while (b) {
    size_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Why: sequential keeps runs of neighbouring patterns (whole rows of
 * subnormals, of huge values, of NaNs); the other two spread the finite
 * patterns over rows of mixed magnitude, and give each NaN/Inf pattern a
 * row of its own among finite values (mixed into the shuffle they would
 * poison most rows and hide the finite patterns).  Rows are padded with
 * finite patterns to a multiple of `multiple` (heads per token). */
static void ex_build(ex_rows *a, int arr, int dtype, size_t d, size_t multiple) {
  uint16_t *fin = malloc(EX_NPAT * sizeof *fin);
  uint16_t *bad = malloc(EX_NPAT * sizeof *bad);
  size_t nf = 0, nb = 0, n = 0, cap, i, j;
  uint64_t seed = 0x6b67656e00000000ull + (uint64_t)d * 131u + (uint64_t)dtype;
  ck_assert(fin != NULL && bad != NULL);
  for (i = 0; i < EX_NPAT; i++) {
    if (ex_finite(dtype, (uint16_t)i))
      fin[nf++] = (uint16_t)i;
    else
      bad[nb++] = (uint16_t)i;
  }
  if (arr == EX_ARR_SHUFFLED) {
    for (i = nf - 1; i > 0; i--) { /* Fisher-Yates */
      size_t k = (size_t)(ex_next(&seed) % (i + 1));
      uint16_t t = fin[i];
      fin[i] = fin[k];
      fin[k] = t;
    }
  } else if (arr == EX_ARR_STRIDED) {
    uint16_t *t = malloc(nf * sizeof *t);
    size_t step = 40503;
    ck_assert(t != NULL);
    while (ex_gcd(step, nf) != 1)
      step++;
    for (i = 0; i < nf; i++)
      t[i] = fin[(i * step) % nf];
    memcpy(fin, t, nf * sizeof *t);
    free(t);
  }
  cap = (EX_NPAT / d + nb + 2 + multiple) * d + EX_NPAT;
  a->x = malloc(cap * sizeof *a->x);
  ck_assert(a->x != NULL);
  if (arr == EX_ARR_SEQUENTIAL) {
    for (i = 0; i < EX_NPAT; i++)
      a->x[n++] = (uint16_t)i;
  } else {
    for (i = 0; i < nf; i++)
      a->x[n++] = fin[i];
    for (; n % d; n++)
      a->x[n] = fin[n % nf];
    for (j = 0; j < nb; j++) { /* one NaN/Inf per row, at varying places */
      size_t at = (j * 7) % d;
      for (i = 0; i < d; i++)
        a->x[n + i] = fin[(j * d + i * 97) % nf];
      a->x[n + at] = bad[j];
      n += d;
    }
  }
  for (; n % d || (n / d) % multiple; n++)
    a->x[n] = fin[(n * 31) % nf];
  a->rows = n / d;
  /* the point of the exercise: every pattern is an input somewhere */
  memset(fin, 0, EX_NPAT * sizeof *fin);
  for (i = 0; i < n; i++)
    fin[a->x[i]] = 1;
  for (i = 0; i < EX_NPAT; i++)
    ck_assert_msg(fin[i], "arrangement %s misses pattern 0x%04zx", ex_arr_name[arr], i);
  free(fin);
  free(bad);
}

/* Weight (gamma) vectors: ones; random magnitudes in [1/8, 4] of both
 * signs; the same with tiny (subnormal in the storage type, and a normal
 * near its bottom), +0 and -0 weights mixed in. */
static void ex_weights(uint16_t *w, int kind, int dtype, size_t d, uint64_t seed) {
  size_t i;
  for (i = 0; i < d; i++) {
    double v = exp2(-3.0 + 5.0 * ex_uniform(&seed));
    if (ex_next(&seed) & 1)
      v = -v;
    if (kind == EX_W_ONES)
      v = 1.0;
    w[i] = ex_from_double(dtype, v);
    if (kind == EX_W_TINY) {
      if (i % 7 == 3) /* smallest subnormal * 3, then the smallest normal */
        w[i] = (uint16_t)((i % 2 ? 0x8000u : 0u) | 3u);
      else if (i % 7 == 5)
        w[i] = (uint16_t)((i % 2 ? 0x8000u : 0u) |
                          (dtype == KG_BF16 ? 0x0080u : 0x0400u));
      else if (i % 11 == 1)
        w[i] = (uint16_t)(i % 2 ? 0x8000u : 0u);
    }
  }
}

/* Beta vectors for layernorm, paired with the weight kinds: zeros; random
 * in [-2, 2]; random with tiny values. */
static void ex_betas(uint16_t *b, int kind, int dtype, size_t d, uint64_t seed) {
  size_t i;
  for (i = 0; i < d; i++) {
    double v = 4.0 * ex_uniform(&seed) - 2.0;
    if (kind == EX_W_ONES)
      v = 0.0;
    if (kind == EX_W_TINY && i % 5 == 2)
      v = ldexp(v, -20);
    b[i] = ex_from_double(dtype, v);
  }
}

/* ---------------------------------------------------------------------- */
/* Failure log: the first few failures of a test, with inputs and values.  */

typedef struct ex_log {
  const kg_variant *v;
  const char *arr, *wname;
  size_t nfail;
  char msg[EX_MAX_MSGS * 320];
  size_t len;
} ex_log;

static void ex_fail(ex_log *lg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void ex_fail(ex_log *lg, const char *fmt, ...) {
  va_list ap;
  lg->nfail++;
  if (lg->nfail > EX_MAX_MSGS || lg->len + 2 >= sizeof lg->msg)
    return;
  lg->len += (size_t)snprintf(lg->msg + lg->len, sizeof lg->msg - lg->len,
                              "\n  %s [%s, weights %s] ", lg->v->symbol,
                              lg->arr, lg->wname);
  if (lg->len >= sizeof lg->msg) {
    lg->len = sizeof lg->msg - 1;
    return;
  }
  va_start(ap, fmt);
  lg->len += (size_t)vsnprintf(lg->msg + lg->len, sizeof lg->msg - lg->len, fmt, ap);
  va_end(ap);
  if (lg->len >= sizeof lg->msg)
    lg->len = sizeof lg->msg - 1;
}

static void ex_finish(ex_log *lg, size_t rows_checked) {
  if (lg->nfail)
    ck_abort_msg("%s: %zu failure(s) in %zu rows; first ones:%s", lg->v->symbol,
                 lg->nfail, rows_checked, lg->msg);
}

/* ---------------------------------------------------------------------- */
/* Running the kernels on rows (layouts, strides, guards)                  */

static uint16_t *ex_alloc(size_t n) {
  uint16_t *p = malloc((n ? n : 1) * sizeof *p);
  size_t i;
  ck_assert(p != NULL);
  for (i = 0; i < n; i++)
    p[i] = EX_GUARD;
  return p;
}

static void ex_guards(ex_log *lg, const uint16_t *buf, size_t n,
                      const unsigned char *is_data, const char *what) {
  size_t i;
  for (i = 0; i < n; i++)
    if (!is_data[i] && buf[i] != EX_GUARD) {
      ex_fail(lg, "wrote outside the rows (%s) at element %zu: 0x%04x", what, i,
              buf[i]);
      return;
    }
}

/* rmsnorm/layernorm: x with row stride d+EX_GAP, y with d+EX_GAP+1; the gaps
 * of y must keep their guards.  Writes the rows of y to out (rows * d). */
static void ex_run_rows(ex_log *lg, const kg_variant *v, const ex_rows *a,
                        const uint16_t *w, const uint16_t *beta, uint16_t *out,
                        float *stat1, float *stat2) {
  const size_t d = v->dim, xs = d + EX_GAP, ys = d + EX_GAP + 1;
  uint16_t *x = ex_alloc(a->rows * xs), *y = ex_alloc(a->rows * ys);
  unsigned char *is_data = calloc(a->rows * ys, 1);
  size_t r;
  ck_assert(is_data != NULL);
  for (r = 0; r < a->rows; r++) {
    memcpy(x + r * xs, a->x + r * d, d * sizeof *x);
    memset(is_data + r * ys, 1, d);
  }
  if (v->op == KG_OP_RMSNORM)
    v->fn.rmsnorm(a->rows, x, xs, w, y, ys, stat1);
  else
    v->fn.layernorm(a->rows, x, xs, w, beta, y, ys, stat1, stat2);
  ex_guards(lg, y, a->rows * ys, is_data, "y row gap");
  for (r = 0; r < a->rows; r++)
    memcpy(out + r * d, y + r * ys, d * sizeof *out);
  free(x);
  free(y);
  free(is_data);
}

/* qk_norm, in place.  token_major: a fused [token][q | k | v] buffer; V
 * must keep its guards.  head_major: Q as [head][token][d] and K likewise,
 * each head block followed by EX_GAP guards (q_stride = tokens*d + gap).
 * Row r of `a` is token r / (H+KV), head r % (H+KV) (Q heads, then K). */
static void ex_run_qk(ex_log *lg, const kg_variant *v, const ex_rows *a,
                      const uint16_t *qw, const uint16_t *kw, uint16_t *out) {
  const size_t d = v->dim, nh = v->num_heads, nkv = v->num_kv_heads;
  const size_t per = nh + nkv, tokens = a->rows / per;
  size_t n, qs, ks, koff, r;
  uint16_t *buf;
  unsigned char *is_data;
  if (v->layout == KG_TOKEN_MAJOR) {
    qs = ks = (nh + 2 * nkv) * d;
    koff = nh * d;
    n = tokens * qs;
  } else {
    qs = ks = tokens * d + EX_GAP;
    koff = nh * qs;
    n = (nh + nkv) * qs;
  }
  buf = ex_alloc(n);
  is_data = calloc(n, 1);
  ck_assert(is_data != NULL);
  for (r = 0; r < a->rows; r++) {
    size_t t = r / per, h = r % per, at;
    if (v->layout == KG_TOKEN_MAJOR)
      at = h < nh ? t * qs + h * d : koff + t * ks + (h - nh) * d;
    else
      at = h < nh ? h * qs + t * d : koff + (h - nh) * ks + t * d;
    memcpy(buf + at, a->x + r * d, d * sizeof *buf);
    memset(is_data + at, 1, d);
  }
  v->fn.qk_norm(tokens, buf, qs, buf + koff, ks, qw, kw);
  ex_guards(lg, buf, n, is_data,
            v->layout == KG_TOKEN_MAJOR ? "V of the fused QKV buffer" : "head gap");
  for (r = 0; r < a->rows; r++) {
    size_t t = r / per, h = r % per, at;
    if (v->layout == KG_TOKEN_MAJOR)
      at = h < nh ? t * qs + h * d : koff + t * ks + (h - nh) * d;
    else
      at = h < nh ? h * qs + t * d : koff + (h - nh) * ks + t * d;
    memcpy(out + r * d, buf + at, d * sizeof *out);
  }
  free(buf);
  free(is_data);
}

/* ---------------------------------------------------------------------- */
/* The invariants of one row                                               */

static int ex_row_nonfinite(int dtype, const uint16_t *x, size_t d) {
  size_t i;
  for (i = 0; i < d; i++)
    if (!ex_finite(dtype, x[i]))
      return 1;
  return 0;
}

/* A NaN/Inf row must come out all-NaN; returns 1 if the row was one. */
static int ex_check_nan_row(ex_log *lg, int dtype, size_t row, const uint16_t *x,
                            const uint16_t *y, size_t d) {
  size_t i, j;
  if (!ex_row_nonfinite(dtype, x, d))
    return 0;
  for (i = 0; i < d; i++)
    if (!ex_is_nan(dtype, y[i])) {
      for (j = 0; j < d && ex_finite(dtype, x[j]); j++)
        ;
      ex_fail(lg, "row %zu holds x[%zu]=0x%04x (NaN/Inf) but y[%zu]=0x%04x "
                  "(x[%zu]=0x%04x) is not NaN", row, j, x[j], i, y[i], i, x[i]);
      return 1;
    }
  return 1;
}

/* KANI-QKN-001 on one rmsnorm/qk_norm row (w is the row's weight vector). */
static void ex_check_rms_row(ex_log *lg, const kg_variant *v, size_t row,
                             const uint16_t *x, const uint16_t *w,
                             const uint16_t *y, const float *rstd, int unit_w) {
  const int dt = v->dtype;
  const size_t d = v->dim;
  const double u = ex_unit(dt), eta = ex_eta(dt), sd = sqrt((double)d);
  const double eps = (double)v->eps;
  /* relative error of rs: the f32 sum of d squares (each exact or below
   * the f32 range, where eps dominates), halved by the sqrt, plus a few
   * roundings; the products x*rs*w add two more */
  const double delta = ((double)d + 8.0) * EX_U32;
  double ss = 0.0, ms, r, yy = 0.0;
  size_t i;
  if (ex_check_nan_row(lg, dt, row, x, y, d))
    return;
  for (i = 0; i < d; i++) {
    const double xi = ex_val(dt, x[i]);
    ss += xi * xi;
  }
  ms = ss / (double)d;
  r = 1.0 / sqrt(ms + eps);
  if (rstd != NULL && !(fabs((double)*rstd - r) <= delta * r)) {
    ex_fail(lg, "row %zu: rstd %.9g, expected 1/sqrt(ms + eps) = %.9g "
                "(ms %.6g, bound %.3g relative)", row, (double)*rstd, r, ms, delta);
    return;
  }
  for (i = 0; i < d; i++) {
    const double xi = ex_val(dt, x[i]), wi = ex_val(dt, w[i]);
    const double yi = ex_val(dt, y[i]);
    const double bound = fabs(wi) * sd * (1.0 + delta) * (1.0 + u) * (1.0 + u) *
                             (1.0 + 2.0 * EX_U32) + eta * (2.0 + fabs(wi));
    if (!ex_finite(dt, y[i])) {
      ex_fail(lg, "row %zu is finite but y[%zu]=0x%04x (x 0x%04x, w 0x%04x)", row, i,
              y[i], x[i], w[i]);
      return;
    }
    if ((xi == 0.0 || wi == 0.0) && yi != 0.0) {
      ex_fail(lg, "row %zu: x[%zu]=0x%04x, w=0x%04x: y=0x%04x (%.9g), expected 0",
              row, i, x[i], w[i], y[i], yi);
      return;
    }
    if (yi != 0.0 && (signbit(yi) != 0) != ((signbit(xi) != 0) != (signbit(wi) != 0))) {
      ex_fail(lg, "row %zu: sign of x[%zu]=0x%04x (%.9g) * w=0x%04x (%.9g) lost: "
                  "y=0x%04x (%.9g)", row, i, x[i], xi, w[i], wi, y[i], yi);
      return;
    }
    if (!(fabs(yi) <= bound)) {
      ex_fail(lg, "row %zu: |y[%zu]| = %.9g (0x%04x) > |w|*sqrt(d) bound %.9g "
                  "(x 0x%04x = %.9g, w 0x%04x = %.9g, ms %.6g)", row, i, fabs(yi),
              y[i], bound, x[i], xi, w[i], wi, ms);
      return;
    }
    yy += yi * yi;
  }
  if (unit_w) { /* RMS(y) = sqrt(ms / (ms + eps)), exactly in real numbers */
    const double want = sqrt(ms / (ms + eps)), got = sqrt(yy / (double)d);
    const double tol = (delta + 2.0 * EX_U32 + u * (1.0 + delta)) * want + eta +
                       1e-12 * want;
    if (!(fabs(got - want) <= tol))
      ex_fail(lg, "row %zu: RMS(y) = %.9g, expected sqrt(ms/(ms+eps)) = %.9g "
                  "(ms %.6g, tolerance %.3g)", row, got, want, ms, tol);
  }
}

/* KANI-LN-003 on one layernorm row. */
static void ex_check_ln_row(ex_log *lg, const kg_variant *v, size_t row,
                            const uint16_t *x, const uint16_t *g, const uint16_t *b,
                            const uint16_t *y, const float *mean, const float *rstd) {
  const int dt = v->dtype;
  const size_t d = v->dim;
  const double u = ex_unit(dt), eta = ex_eta(dt), sd = sqrt((double)d - 1.0);
  const double eps = (double)v->eps, delta = ((double)d + 8.0) * EX_U32;
  double s = 0.0, q = 0.0, mu, var, r, reach;
  size_t i;
  if (ex_check_nan_row(lg, dt, row, x, y, d))
    return;
  for (i = 0; i < d; i++)
    s += ex_val(dt, x[i]);
  mu = s / (double)d;
  for (i = 0; i < d; i++) {
    const double e = ex_val(dt, x[i]) - mu;
    q += e * e;
  }
  var = q / (double)d;
  r = 1.0 / sqrt(var + eps);
  if (!isfinite(*mean) || !(*rstd > 0.0f) || !isfinite(*rstd)) {
    ex_fail(lg, "row %zu is finite but mean %.9g, rstd %.9g", row, (double)*mean,
            (double)*rstd);
    return;
  }
  {
    /* The statistics a backward pass reads, against the exact ones.  An f32
     * mean m1 (sum error c) corrected by the f32 sum of d deviations:
     * mean off by an f32 rounding of mu plus d ULPs of the spread (sigma + c);
     * var off by (d+3) ULPs of sigma^2 + c^2 and the error of corr^2.  Where
     * that error is not small against var + eps, rstd is not checked. */
    double ax = 0.0, c, ec, e_var, tol;
    const double sg = sqrt(var);
    for (i = 0; i < d; i++)
      ax += fabs(ex_val(dt, x[i]));
    ax /= (double)d;
    c = ((double)d + 1.0) * EX_U32 * ax + EX_U32 * fabs(mu);
    ec = ((double)d + 1.0) * EX_U32 * (sg + c);
    tol = 2.0 * EX_U32 * fabs(mu) + 2.0 * ec + ldexp(1.0, -148); /* + f32 subnormal step */
    if (!(fabs((double)*mean - mu) <= tol)) {
      ex_fail(lg, "row %zu: mean %.9g, exact %.9g (tolerance %.3g; var %.6g, "
                  "x[0] 0x%04x = %.9g)", row, (double)*mean, mu, tol, var, x[0],
              ex_val(dt, x[0]));
      return;
    }
    e_var = ((double)d + 3.0) * EX_U32 * (var + c * c) + 2.0 * c * ec + ec * ec;
    if (e_var <= 0.5 * (var + eps)) {
      tol = r * (e_var / (var + eps) + 4.0 * EX_U32);
      if (!(fabs((double)*rstd - r) <= tol)) {
        ex_fail(lg, "row %zu: rstd %.9g, exact 1/sqrt(var + eps) = %.9g "
                    "(tolerance %.3g; mean %.9g, var %.6g)", row, (double)*rstd, r,
                tol, mu, var);
        return;
      }
    }
  }
  /* |x_i - mu| * r <= sqrt(d - 1); x - mean in f32 is off by a few f32 ULPs of
   * the mean and of the summed deviations (relative to the spread: d) */
  reach = (sd + 4.0 * EX_U32 * (fabs(mu) * r + (double)d + 1.0)) * (1.0 + delta);
  for (i = 0; i < d; i++) {
    const double gi = ex_val(dt, g[i]), bi = ex_val(dt, b[i]);
    const double yi = ex_val(dt, y[i]);
    const double bound = fabs(gi) * reach * (1.0 + u) * (1.0 + 3.0 * EX_U32) +
                         (u + EX_U32) * fabs(bi) + eta;
    if (!ex_finite(dt, y[i])) {
      ex_fail(lg, "row %zu is finite but y[%zu]=0x%04x (x 0x%04x, gamma 0x%04x, "
                  "beta 0x%04x)", row, i, y[i], x[i], g[i], b[i]);
      return;
    }
    if (!(fabs(yi - bi) <= bound)) {
      ex_fail(lg, "row %zu: |y[%zu] - beta| = %.9g (y 0x%04x, beta 0x%04x) > "
                  "|gamma|*sqrt(d-1) bound %.9g (x 0x%04x = %.9g, gamma 0x%04x, mean "
                  "%.9g, var %.6g)", row, i, fabs(yi - bi), y[i], b[i], bound, x[i],
              ex_val(dt, x[i]), g[i], mu, var);
      return;
    }
  }
}

/* ---------------------------------------------------------------------- */
/* The tests                                                               */

typedef struct ex_case {
  const kg_variant *v;
  int kind; /* 1: KANI-QKN-001, 2: KANI-QKN-002, 3: KANI-LN-003 */
  char name[200];
} ex_case;

static ex_case *ex_cases;
static size_t ex_ncases;

/* Weights of one row: qk_norm rows r % (H+KV) >= H are K heads (k_w). */
static const uint16_t *ex_row_w(const kg_variant *v, size_t r, const uint16_t *qw,
                                const uint16_t *kw) {
  if (v->op != KG_OP_QK_NORM)
    return qw;
  return r % (v->num_heads + v->num_kv_heads) < v->num_heads ? qw : kw;
}

/* Why one function: every arrangement x weight vector is the same loop. */
static void ex_exhaustive(const kg_variant *v) {
  const size_t d = v->dim;
  const size_t per = v->op == KG_OP_QK_NORM ? v->num_heads + v->num_kv_heads : 1;
  ex_log lg;
  size_t checked = 0;
  int arr, wk;
  memset(&lg, 0, sizeof lg);
  lg.v = v;
  for (arr = 0; arr < EX_NARR; arr++) {
    ex_rows a;
    uint16_t *y, *w1 = malloc(d * sizeof *w1), *w2 = malloc(d * sizeof *w2);
    float *st1, *st2;
    ck_assert(w1 != NULL && w2 != NULL);
    ex_build(&a, arr, v->dtype, d, per);
    y = malloc(a.rows * d * sizeof *y);
    st1 = malloc(a.rows * sizeof *st1);
    st2 = malloc(a.rows * sizeof *st2);
    ck_assert(y != NULL && st1 != NULL && st2 != NULL);
    lg.arr = ex_arr_name[arr];
    for (wk = 0; wk < EX_NW; wk++) {
      size_t r;
      const uint64_t seed = 0x77656967ull * (uint64_t)(wk + 1) + d;
      lg.wname = ex_w_name[wk];
      ex_weights(w1, wk, v->dtype, d, seed);
      if (v->op == KG_OP_LAYERNORM)
        ex_betas(w2, wk, v->dtype, d, seed + 1);
      else
        ex_weights(w2, wk, v->dtype, d, seed + 2);
      if (v->op == KG_OP_QK_NORM)
        ex_run_qk(&lg, v, &a, w1, w2, y);
      else
        ex_run_rows(&lg, v, &a, w1, w2, y, st1, st2);
      for (r = 0; r < a.rows; r++) {
        const uint16_t *xr = a.x + r * d, *yr = y + r * d;
        if (v->op == KG_OP_LAYERNORM)
          ex_check_ln_row(&lg, v, r, xr, w1, w2, yr, st1 + r, st2 + r);
        else
          ex_check_rms_row(&lg, v, r, xr, ex_row_w(v, r, w1, w2), yr,
                           v->op == KG_OP_RMSNORM ? st1 + r : NULL, wk == EX_W_ONES);
      }
      checked += a.rows;
    }
    free(a.x);
    free(y);
    free(st1);
    free(st2);
    free(w1);
    free(w2);
  }
  ex_finish(&lg, checked);
}

/* KANI-QKN-002: zero rows (+0, -0, alternating, and -0 with one +0) give
 * zero rows, under every weight vector; rmsnorm's rstd is 1/sqrt(eps). */
static void ex_zero_rows(const kg_variant *v) {
  const size_t d = v->dim;
  const size_t per = v->op == KG_OP_QK_NORM ? v->num_heads + v->num_kv_heads : 1;
  ex_rows a;
  ex_log lg;
  uint16_t *y, *w1 = malloc(d * sizeof *w1), *w2 = malloc(d * sizeof *w2);
  float *st;
  size_t r, i, kinds = 4;
  int wk;
  memset(&lg, 0, sizeof lg);
  lg.v = v;
  lg.arr = "zero rows";
  a.rows = ((kinds + per - 1) / per) * per;
  a.x = malloc(a.rows * d * sizeof *a.x);
  y = malloc(a.rows * d * sizeof *y);
  st = malloc(a.rows * sizeof *st);
  ck_assert(a.x != NULL && y != NULL && st != NULL && w1 != NULL && w2 != NULL);
  for (r = 0; r < a.rows; r++)
    for (i = 0; i < d; i++) {
      const size_t k = r % kinds;
      a.x[r * d + i] = (uint16_t)(k == 0   ? 0u
                                  : k == 1 ? 0x8000u
                                  : k == 2 ? (i % 2 ? 0x8000u : 0u)
                                           : (i == d / 2 ? 0u : 0x8000u));
    }
  for (wk = 0; wk < EX_NW; wk++) {
    lg.wname = ex_w_name[wk];
    ex_weights(w1, wk, v->dtype, d, 0x7a65726full + (uint64_t)wk);
    ex_weights(w2, wk, v->dtype, d, 0x7a65726full + 17u + (uint64_t)wk);
    if (v->op == KG_OP_QK_NORM)
      ex_run_qk(&lg, v, &a, w1, w2, y);
    else
      ex_run_rows(&lg, v, &a, w1, w2, y, st, st);
    for (r = 0; r < a.rows; r++) {
      const double r0 = 1.0 / sqrt((double)v->eps);
      for (i = 0; i < d; i++)
        if ((y[r * d + i] & 0x7fffu) != 0) {
          ex_fail(&lg, "zero row %zu (x[%zu]=0x%04x): y[%zu]=0x%04x, expected 0", r,
                  i, a.x[r * d + i], i, y[r * d + i]);
          break;
        }
      if (v->op == KG_OP_RMSNORM && !(fabs((double)st[r] - r0) <= 4.0 * EX_U32 * r0))
        ex_fail(&lg, "zero row %zu: rstd %.9g, expected 1/sqrt(eps) = %.9g", r,
                (double)st[r], r0);
    }
  }
  free(a.x);
  free(y);
  free(st);
  free(w1);
  free(w2);
  ex_finish(&lg, a.rows * EX_NW);
}

START_TEST(ex_test) {
  const ex_case *c = &ex_cases[_i];
  if (c->kind == 2)
    ex_zero_rows(c->v);
  else
    ex_exhaustive(c->v);
}
END_TEST

static void ex_add(Suite *s, const kg_variant *v, int kind, const char *id) {
  ex_case *c = &ex_cases[ex_ncases];
  TCase *tc;
  c->v = v;
  c->kind = kind;
  snprintf(c->name, sizeof c->name, "%s %s %s %s %s", id,
           kind == 2 ? "zero rows" : "exhaustive", ex_dtype_name(v->dtype), v->symbol,
           kg_cpu_isa_name(v->isa));
  tc = tcase_create(c->name);
  tcase_set_timeout(tc, 600); /* slow under qemu */
  _tcase_add_test(tc, ex_test, 0, 0, (int)ex_ncases, (int)ex_ncases + 1);
  suite_add_tcase(s, tc);
  ex_ncases++;
}

int main(void) {
  Suite *s = suite_create("exhaustive");
  SRunner *sr;
  size_t i, skipped = 0;
  int failed;
  ex_cases = calloc(2 * kge_num_variants + 1, sizeof *ex_cases);
  if (ex_cases == NULL)
    return EXIT_FAILURE;
  for (i = 0; i < kge_num_variants; i++) {
    const kg_variant *v = &kge_variants[i];
    if (v->isa == KG_ISA_CUDA) {
      printf("SKIPPED %s: device code (cuda); this suite runs CPU kernels\n", v->symbol);
      skipped++;
      continue;
    }
    if (v->isa != KG_ISA_AUTO && !kg_cpu_has(v->isa)) {
      printf("SKIPPED %s: this CPU lacks %s\n", v->symbol, kg_cpu_isa_name(v->isa));
      skipped++;
      continue;
    }
    if (v->dtype != KG_BF16 && v->dtype != KG_F16) {
      printf("SKIPPED %s: %s has 2^32 patterns; exhaustive covers bf16/f16\n",
             v->symbol, ex_dtype_name(v->dtype));
      skipped++;
      continue;
    }
    if (v->op == KG_OP_LAYERNORM) {
      ex_add(s, v, 3, "KANI-LN-003");
    } else {
      ex_add(s, v, 1, "KANI-QKN-001");
      ex_add(s, v, 2, "KANI-QKN-002");
    }
  }
  printf("test_exhaustive: %zu tests over %zu variants, %zu variants skipped\n",
         ex_ncases, (size_t)kge_num_variants - skipped, skipped);
  fflush(stdout);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
