/* matrix.c: the ISA-matrix runner.  One cell per variant of a pack's
 * variant table: call the kernel on random and hard rows, compare every
 * output element with the float64 reference of tests/ref.c (not
 * generated), and print one JSON line per cell.
 *
 *   matrix                 every variant of the table (not the KG_ISA_AUTO
 *                          dispatchers), progress on stderr
 *   matrix --run SYMBOL    one cell (tests/matrix.sh runs one process per
 *                          cell, so a crash is a failed cell, not a lost run)
 *   matrix --list          the symbols of the table, one per line
 *   matrix --cpu           what this machine runs: "best=avx2 has=scalar avx2"
 *   --seed N               change the random data (default 1)
 *
 * Exit status: 0 when every cell that ran passed, 1 when one failed, 2 on a
 * usage error or an unknown symbol.
 *
 * Tolerances (DESIGN.md, numerics), against the float64 result of the
 * stored inputs with the variant's f32 eps:
 *   f32 rmsnorm / qk_norm       |y - ref| <= 8 ULP of f32 at ref
 *   bf16/f16, rounding single   y within 1 ULP of ref correctly rounded to T
 *   bf16/f16, rounding hf       within 2 ULP of the hf order in float64:
 *                               round_T(round_T(x * rstd) * w)
 *   layernorm, every dtype      |y - ref| <= 16 eps32 (|g| (|x| + |mu|) rstd
 *                               + |b|) + 1 ULP of T at ref
 * A row holding NaN or Inf must give an all-NaN row; padding between rows
 * and the inputs must stay untouched; rows = 0 writes nothing; y == x (in
 * place) gives the same bits as y != x.
 *
 * Build (mk/matrix.mk): cc -I PACKDIR -Itests -DKG_PACK_HEADER='"kgm.h"'
 *   -DKG_PACK_VARIANTS=kgm_variants -DKG_PACK_NUM=kgm_num_variants
 *   tests/matrix.c, tests/ref.c and every .c file of the pack, -lm.
 * With -DKG_MATRIX_NO_MAIN this file is a library: kgm_check() checks one
 * variant (tests/dispatch_proof.c includes it for the dispatching entries;
 * it links tests/ref.c too). */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kg_convert.h"
#include "kg_cpu.h"
#include "kg_variant.h"
#include "ref.h"

#if defined(__aarch64__)
#define KGM_ARCH "aarch64"
#elif defined(__x86_64__)
#define KGM_ARCH "x86_64"
#elif defined(__i386__)
#define KGM_ARCH "i386"
#else
#define KGM_ARCH "other"
#endif

/* What one cell measured. */
typedef struct kgm_result {
  int ran;          /* 1: the kernel was called; 0: skipped (reason set) */
  int pass;         /* ran, and every check held */
  double max_ulp;   /* largest error in ULP of T (INFINITY: non-finite) */
  double used;      /* largest error / allowed error: pass needs <= 1 */
  char bound[48];   /* the tolerance in words */
  char worst[320];  /* where `used` peaked, or the first broken contract */
  char reason[128]; /* why the cell was skipped */
} kgm_result;

/* ---- data ---------------------------------------------------------------- */

/* Why: splitmix64 is tiny, fast and identical on every platform, so a cell
 * sees the same inputs natively and under qemu. */
static uint64_t kgm_next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double kgm_unif(uint64_t *s) {
  return (double)(kgm_next(s) >> 11) * 0x1p-53;
}

/* Why: normal data (Box-Muller) looks like real activations; the hard rows
 * below cover what random data never hits. */
static double kgm_normal(uint64_t *s) {
  double u = kgm_unif(s), v = kgm_unif(s);
  if (u < 1e-300)
    u = 1e-300;
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Row kinds.  Every op sees each of them; the order is the row order. */
enum kgm_kind {
  KGM_RANDOM, /* N(0, 1) */
  KGM_SMALL,  /* N(0, 1) * 2^-10 */
  KGM_LARGE,  /* N(0, 1) * 2^10 (2^8 for f16) */
  KGM_HUGE,   /* near the top of T: f32 sum of squares overflows (slow path) */
  KGM_TINY,   /* subnormals and tiny normals of T: eps dominates */
  KGM_SPIKE,  /* one large element among small ones */
  KGM_ZERO,   /* +0 and -0 */
  KGM_CONST,  /* every element 0.3 in T: layernorm variance 0 */
  KGM_OFFSET, /* 1000 + small noise: x - mean cancels */
  KGM_RANGE,  /* +-2^k over a wide exponent range */
  KGM_NAN,    /* one NaN: the row must come out all NaN */
  KGM_INF,    /* one +Inf: the row must come out all NaN */
  KGM_NKINDS
};
static const char *const kgm_kind_name[KGM_NKINDS] = {
    "random", "small", "large",  "huge",  "tiny", "spike",
    "zero",   "const", "offset", "range", "nan",  "inf"};

static size_t kgm_esize(int dt) { return dt == KG_F32 ? 4 : 2; }

static const char *kgm_dtype_name(int dt) {
  return dt == KG_F32 ? "f32" : dt == KG_BF16 ? "bf16" : "f16";
}

static const char *kgm_op_name(int op) {
  return op == KG_OP_RMSNORM   ? "rmsnorm"
         : op == KG_OP_QK_NORM ? "qk_norm"
                               : "layernorm";
}

/* Element i of a buffer of dtype dt, widened exactly. */
static double kgm_get(const void *b, int dt, size_t i) {
  if (dt == KG_F32)
    return ((const float *)b)[i];
  if (dt == KG_BF16)
    return kg_bf16_to_f32(((const kg_bf16 *)b)[i]);
  return kg_f16_to_f32(((const kg_f16 *)b)[i]);
}

/* Store v as T (through f32; for making inputs, whose stored value is what
 * the reference reads back). */
static void kgm_put(void *b, int dt, size_t i, double v) {
  if (dt == KG_F32)
    ((float *)b)[i] = (float)v;
  else if (dt == KG_BF16)
    ((kg_bf16 *)b)[i] = kg_f32_to_bf16((float)v);
  else
    ((kg_f16 *)b)[i] = kg_f32_to_f16((float)v);
}

/* Raw bits of element i (for the pad / unchanged-input checks). */
static uint32_t kgm_bits(const void *b, int dt, size_t i) {
  uint32_t u;
  if (dt != KG_F32)
    return ((const uint16_t *)b)[i];
  memcpy(&u, (const float *)b + i, sizeof u);
  return u;
}

/* Why: padding holds a NaN with a recognisable payload, so a kernel that
 * writes past its row (or reads it into a sum) shows up. */
static void kgm_fill_canary(void *b, int dt, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    if (dt == KG_F32) {
      uint32_t u = 0x7fc0dea0u;
      memcpy((float *)b + i, &u, sizeof u);
    } else {
      ((uint16_t *)b)[i] = dt == KG_BF16 ? 0x7fdau : 0x7edau;
    }
  }
}

/* Fill n elements of row kind `kind` (stored as T at b[off..]). */
static void kgm_gen_row(void *b, int dt, size_t off, size_t n, int kind,
                        uint64_t *s) {
  const int f16 = dt == KG_F16;
  const int prec = dt == KG_F32 ? 24 : dt == KG_BF16 ? 8 : 11;
  size_t i, spike = n ? (size_t)(kgm_next(s) % n) : 0;
  for (i = 0; i < n; i++) {
    double v, sg = (kgm_next(s) & 1) ? -1.0 : 1.0;
    switch (kind) {
    case KGM_SMALL:
      v = kgm_normal(s) * 0x1p-10;
      break;
    case KGM_LARGE:
      v = kgm_normal(s) * (f16 ? 0x1p8 : 0x1p10);
      break;
    case KGM_HUGE: /* f32/bf16: 2^120..2^127.9; f16: 16384..65504 */
      v = f16 ? sg * (16384.0 + kgm_unif(s) * 49120.0)
              : sg * ldexp(1.0 + 0.98 * kgm_unif(s), 120 + (int)(i % 8));
      break;
    case KGM_TINY: /* f32 down to 2^-149, bf16 2^-133, f16 2^-24 */
      v = f16 ? sg * ldexp(1.0 + kgm_unif(s), -24 + (int)(i % 10))
              : sg * ldexp(1.0 + kgm_unif(s),
                           (dt == KG_F32 ? -149 : -133) + (int)(i % 40));
      break;
    case KGM_SPIKE:
      v = i == spike ? sg * (f16 ? 0x1p14 : 0x1p20) : kgm_normal(s) * 0x1p-8;
      break;
    case KGM_ZERO:
      v = (i & 1) ? -0.0 : 0.0;
      break;
    case KGM_CONST:
      v = 0.3;
      break;
    case KGM_OFFSET: /* noise of ~16 steps of T around 1000 */
      v = 1000.0 + kgm_normal(s) * ldexp(1000.0, 4 - prec);
      break;
    case KGM_RANGE: /* f32/bf16: 2^-40..2^40; f16: 2^-14..2^14 */
      v = f16 ? sg * ldexp(1.0 + 0.5 * kgm_unif(s), -14 + (int)((i * 7) % 29))
              : sg * ldexp(1.0 + 0.5 * kgm_unif(s), -40 + (int)((i * 7) % 81));
      break;
    case KGM_NAN:
      v = i == spike ? NAN : kgm_normal(s);
      break;
    case KGM_INF:
      v = i == spike ? INFINITY : kgm_normal(s);
      break;
    default:
      v = kgm_normal(s);
      break;
    }
    kgm_put(b, dt, off + i, v);
  }
}

/* Weights, gamma, beta: mostly N(0, 0.7), with exact 0, 1 and -1 in it. */
static void kgm_gen_weights(void *b, int dt, size_t n, double scale,
                            uint64_t *s) {
  size_t i;
  for (i = 0; i < n; i++) {
    double v = kgm_normal(s) * scale;
    if (i % 61 == 5)
      v = 0.0;
    else if (i % 61 == 17)
      v = 1.0;
    else if (i % 61 == 29)
      v = -1.0;
    kgm_put(b, dt, i, v);
  }
}

/* ---- numbers ------------------------------------------------------------- */

static int kgm_prec(int dt) {
  return dt == KG_F32 ? 24 : dt == KG_BF16 ? 8 : 11;
}

/* The ULP of T at |a|: 2^(exponent - precision + 1), never below the
 * subnormal spacing of T. */
static double kgm_ulp(double a, int dt) {
  const int emin = dt == KG_F16 ? -14 : -126;
  int e = emin;
  a = fabs(a);
  if (a > 0 && isfinite(a)) {
    (void)frexp(a, &e);
    e -= 1;
    if (e < emin)
      e = emin;
  }
  return ldexp(1.0, e - kgm_prec(dt) + 1);
}

/* Why: the reference must round once, from float64 straight to T (through
 * f32 would round twice).  a / ulp is exact (power of two), rint rounds
 * half to even in the default mode, and a carry to the next binade gives
 * its power of two exactly; beyond the largest finite T is Inf. */
static double kgm_round(double a, int dt) {
  const double max = dt == KG_F32    ? (double)FLT_MAX
                     : dt == KG_BF16 ? 0x1.fep127
                                     : 65504.0;
  double q, r;
  if (!isfinite(a))
    return a;
  q = kgm_ulp(a, dt);
  r = rint(a / q) * q;
  return fabs(r) > max ? copysign(INFINITY, a) : r;
}

/* Ordinal of a 16-bit float: consecutive values differ by 1, +0 == -0. */
static long kgm_ord16(uint32_t bits) {
  return (bits & 0x8000u) ? -(long)(bits & 0x7fffu) : (long)bits;
}

/* Bits of a double that is exactly representable in T (16-bit T). */
static uint32_t kgm_bits16(double v, int dt) {
  return dt == KG_BF16 ? kg_f32_to_bf16((float)v) : kg_f32_to_f16((float)v);
}

/* ---- scoring ------------------------------------------------------------- */

/* Running maximum of one cell. */
typedef struct kgm_acc {
  double max_ulp, used;
  char worst[320];
  int broken; /* a contract (not a tolerance) failed: worst says which */
  char call[96]; /* the call being checked, for worst ("" for the first) */
} kgm_acc;

/* Why: keep the element where the error used the most of its allowance,
 * with enough context to reproduce it (row kind, row, index, values). */
static void kgm_score(kgm_acc *a, double ulp, double used, int kind,
                      const char *where, size_t row, size_t i, double got,
                      double want) {
  if (ulp != ulp)
    ulp = INFINITY;
  if (used != used)
    used = INFINITY;
  if (ulp > a->max_ulp)
    a->max_ulp = ulp;
  if (used > a->used && !a->broken) {
    a->used = used;
    snprintf(a->worst, sizeof a->worst,
             "%s%s%s row %zu (%s) [%zu]: got %.9g, want %.9g (%.3g ulp)", a->call,
             a->call[0] ? ": " : "", where, row, kgm_kind_name[kind], i, got, want, ulp);
  }
}

/* Why: a broken contract outranks any tolerance: report the first one. */
static void kgm_break(kgm_acc *a, const char *fmt, ...) {
  va_list ap;
  char what[216];
  if (a->broken)
    return;
  a->broken = 1;
  a->used = INFINITY;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(a->worst, sizeof a->worst, "%s%s%s", a->call, a->call[0] ? ": " : "", what);
}

/* Why: a row holding NaN or Inf must come out all NaN (the reference
 * said so: its rstd or mean is NaN).  `where` names the tensor. */
static void kgm_check_nan_row(kgm_acc *a, const kg_variant *v, const void *y,
                              size_t yo, int kind, const char *where,
                              size_t row) {
  size_t i;
  for (i = 0; i < v->dim; i++)
    if (!isnan(kgm_get(y, v->dtype, yo + i))) {
      kgm_break(a,
                "%s row %zu (%s) [%zu]: got %.9g, want NaN (row holds "
                "NaN/Inf)",
                where, row, kgm_kind_name[kind], i,
                kgm_get(y, v->dtype, yo + i));
      return;
    }
}

/* Check one RMSNorm row (rmsnorm, or one head of qk_norm) against
 * tests/ref.c.  x and y are the stored row (offsets xo, yo), w the weight;
 * `where` names the tensor. */
static void kgm_check_rms_row(kgm_acc *a, const kg_variant *v, const void *x,
                              size_t xo, const void *w, const void *y,
                              size_t yo, int kind, const char *where,
                              size_t row) {
  const int dt = v->dtype;
  const size_t n = v->dim;
  /* f32 is scored against the unrounded product, whatever its rounding */
  const int hf = dt != KG_F32 && v->rounding == KG_ROUND_HF;
  double *yr = malloc((n ? n : 1) * sizeof *yr), rstd;
  size_t i;
  if (!yr) {
    kgm_break(a, "out of memory");
    return;
  }
  rstd = ref_rmsnorm_row(dt, hf ? REF_ROUND_HF : REF_ROUND_SINGLE, n,
                         ref_cat(dt, x, xo), w, (double)v->eps,
                         (double)v->weight_offset, yr);
  if (isnan(rstd)) {
    kgm_check_nan_row(a, v, y, yo, kind, where, row);
    free(yr);
    return;
  }
  for (i = 0; i < n; i++) {
    const double got = kgm_get(y, dt, yo + i);
    double ref, ulp;
    if (dt == KG_F32) {
      ref = yr[i];
      ulp = fabs(got - ref) / kgm_ulp(ref, dt);
      kgm_score(a, ulp, ulp / 8.0, kind, where, row, i, got, ref);
    } else {
      const double tol = v->rounding == KG_ROUND_HF ? 2.0 : 1.0;
      ref = hf ? yr[i] : kgm_round(yr[i], dt);
      ulp = isnan(got) ? INFINITY
                       : (double)labs(kgm_ord16(kgm_bits(y, dt, yo + i)) -
                                      kgm_ord16(kgm_bits16(ref, dt)));
      kgm_score(a, ulp, ulp / tol, kind, where, row, i, got, ref);
    }
  }
  free(yr);
}

/* Check one LayerNorm row against the stated bound (reference: tests/ref.c). */
static void kgm_check_ln_row(kgm_acc *a, const kg_variant *v, const void *x,
                             size_t xo, const void *g, const void *b,
                             const void *y, size_t yo, int kind, size_t row) {
  const int dt = v->dtype;
  const size_t n = v->dim;
  double *yr = malloc((n ? n : 1) * sizeof *yr), mu, rstd;
  size_t i;
  if (!yr) {
    kgm_break(a, "out of memory");
    return;
  }
  ref_layernorm_row(dt, n, ref_cat(dt, x, xo), g, b, (double)v->eps, yr, &mu,
                    &rstd);
  if (isnan(mu)) {
    kgm_check_nan_row(a, v, y, yo, kind, "y", row);
    free(yr);
    return;
  }
  for (i = 0; i < n; i++) {
    const double xi = kgm_get(x, dt, xo + i);
    const double gi = kgm_get(g, dt, i), bi = kgm_get(b, dt, i);
    const double got = kgm_get(y, dt, yo + i);
    const double ref = yr[i];
    const double allowed =
        16.0 * (double)FLT_EPSILON *
            (fabs(gi) * (fabs(xi) + fabs(mu)) * rstd + fabs(bi)) +
        kgm_ulp(ref, dt);
    const double err = fabs(got - ref);
    kgm_score(a, err / kgm_ulp(ref, dt), err / allowed, kind, "y", row, i, got,
              ref);
  }
  free(yr);
}

/* 1 if elements [from, to) of a and b have the same bits. */
static int kgm_same(const void *a, const void *b, int dt, size_t from,
                    size_t to, size_t *at) {
  size_t i;
  for (i = from; i < to; i++)
    if (kgm_bits(a, dt, i) != kgm_bits(b, dt, i)) {
      *at = i;
      return 0;
    }
  return 1;
}

/* Why: an in-place call must give what an out-of-place call gave; NaN rows
 * compare as NaN (their payload is not part of the contract). */
static int kgm_same_values(const void *a, const void *b, int dt, size_t n,
                           size_t *at) {
  size_t i;
  for (i = 0; i < n; i++) {
    double p = kgm_get(a, dt, i), q = kgm_get(b, dt, i);
    if (isnan(p) && isnan(q))
      continue;
    if (kgm_bits(a, dt, i) != kgm_bits(b, dt, i)) {
      *at = i;
      return 0;
    }
  }
  return 1;
}

/* ---- the three ops ------------------------------------------------------- */

/* Rows of an rmsnorm / layernorm cell: every kind once, then more random. */
#define KGM_ROWS (KGM_NKINDS + 3)
#define KGM_XPAD 3 /* x_stride = dim + 3 */
#define KGM_YPAD 5 /* y_stride = dim + 5 */

/* Why: hard = 0 keeps to ordinary activations (random, small, large), for
 * checks whose subject is not numerics (the dispatch proof). */
static int kgm_row_kind(size_t r, int hard) {
  if (!hard)
    return (int)(r % 3); /* KGM_RANDOM, KGM_SMALL, KGM_LARGE */
  return r < KGM_NKINDS ? (int)r : KGM_RANDOM;
}

/* Why: a case's buffer: from malloc (off < 0, padded strides) or `off`
 * bytes past a 64-byte boundary (tight); *raw is what to free. */
static void *kgm_alloc_at(size_t elems, size_t es, int off, void **raw) {
  if (off < 0)
    return *raw = malloc(elems * es);
  *raw = aligned_alloc(64, (elems * es + (size_t)off + 63) / 64 * 64);
  return *raw ? (char *)*raw + off : NULL;
}

/* Why: one routine for rmsnorm and layernorm; they differ in the extra
 * parameter vectors and the reference.  One case: x and y with padded
 * strides from malloc (xoff < 0), or tight rows xoff and yoff bytes past
 * a 64-byte boundary. */
static void kgm_rows_case(const kg_variant *v, uint64_t *s, int hard,
                          kgm_acc *a, int xoff, int yoff) {
  const int dt = v->dtype, ln = v->op == KG_OP_LAYERNORM;
  const size_t n = v->dim, es = kgm_esize(dt), rows = KGM_ROWS;
  const size_t xs = xoff < 0 ? n + KGM_XPAD : n, ys = xoff < 0 ? n + KGM_YPAD : n;
  void *xraw, *yraw;
  void *x = kgm_alloc_at(rows * xs, es, xoff, &xraw), *x0 = malloc(rows * xs * es);
  void *y = kgm_alloc_at(rows * ys, es, xoff < 0 ? -1 : yoff, &yraw), *y2 = malloc(rows * ys * es);
  void *w = malloc(n * es), *b = malloc(n * es);
  float *st1 = malloc((rows + 1) * sizeof(float));
  float *st2 = malloc((rows + 1) * sizeof(float));
  size_t r, at;
  if (xoff < 0)
    snprintf(a->call, sizeof a->call, "padded strides");
  else
    snprintf(a->call, sizeof a->call, "tight rows, x %d and y %d bytes into a line", xoff, yoff);
  if (!x || !x0 || !y || !y2 || !w || !b || !st1 || !st2) {
    kgm_break(a, "out of memory");
    goto done;
  }
  kgm_fill_canary(x, dt, rows * xs);
  for (r = 0; r < rows; r++)
    kgm_gen_row(x, dt, r * xs, n, kgm_row_kind(r, hard), s);
  kgm_gen_weights(w, dt, n, 0.7, s);
  kgm_gen_weights(b, dt, n, 0.5, s);
  memcpy(x0, x, rows * xs * es);
  kgm_fill_canary(y, dt, rows * ys);
  memcpy(y2, y, rows * ys * es);

  /* rows = 0: nothing may be written */
  if (ln)
    v->fn.layernorm(0, x, xs, w, b, y, ys, st1, st2);
  else
    v->fn.rmsnorm(0, x, xs, w, y, ys, st1);
  if (!kgm_same(y, y2, dt, 0, rows * ys, &at)) {
    kgm_break(a, "rows = 0 wrote y element %zu", at);
    goto done;
  }

  st1[rows] = st2[rows] = -1.0f;
  if (ln)
    v->fn.layernorm(rows, x, xs, w, b, y, ys, st1, st2);
  else
    v->fn.rmsnorm(rows, x, xs, w, y, ys, st1);
  if (!kgm_same(x, x0, dt, 0, rows * xs, &at)) {
    kgm_break(a, "x element %zu changed (x is const, y != x)", at);
    goto done;
  }
  if (st1[rows] != -1.0f || st2[rows] != -1.0f) {
    kgm_break(a, "wrote a statistic past row %zu", rows - 1);
    goto done;
  }
  for (r = 0; r < rows; r++) {
    if (!kgm_same(y, y2, dt, r * ys + n, (r + 1) * ys, &at)) {
      kgm_break(a, "wrote padding after y row %zu (element %zu)", r, at);
      goto done;
    }
    if (ln)
      kgm_check_ln_row(a, v, x, r * xs, w, b, y, r * ys, kgm_row_kind(r, hard),
                       r);
    else
      kgm_check_rms_row(a, v, x, r * xs, w, y, r * ys, kgm_row_kind(r, hard),
                        "y", r);
  }

  /* y == x: same values as out of place, row by row (x_stride is used) */
  if (ln)
    v->fn.layernorm(rows, x, xs, w, b, x, xs, st1, st2);
  else
    v->fn.rmsnorm(rows, x, xs, w, x, xs, st1);
  for (r = 0; r < rows; r++) {
    if (!kgm_same_values((const char *)x + r * xs * es,
                         (const char *)y + r * ys * es, dt, n, &at)) {
      kgm_break(a,
                "in place (y == x) row %zu (%s) [%zu] differs from "
                "y != x: %.9g vs %.9g",
                r, kgm_kind_name[kgm_row_kind(r, hard)], at,
                kgm_get(x, dt, r * xs + at), kgm_get(y, dt, r * ys + at));
      break;
    }
  }
done:
  free(xraw);
  free(x0);
  free(yraw);
  free(y2);
  free(w);
  free(b);
  free(st1);
  free(st2);
}

/* Why: padded rows from malloc, then tight rows 16 bytes into a line (where
 * malloc puts large buffers; AVX-512's line frame), y there too and 48
 * bytes in (y at another offset than x). */
static void kgm_run_rows(const kg_variant *v, uint64_t *s, int hard,
                         kgm_acc *a) {
  kgm_rows_case(v, s, hard, a, -1, -1);
  if (!a->broken)
    kgm_rows_case(v, s, hard, a, 16, 16);
  if (!a->broken)
    kgm_rows_case(v, s, hard, a, 16, 48);
}

#define KGM_TOKENS 3
/* Long calls: more than this many bytes of heads, past every generated
 * switch from groups to streaming (gen/pack.lua group_tokens: at most 2 MiB
 * of heads, the AVX2 f32 table's). */
#define KGM_LONG_BYTES ((size_t)2 << 20)

/* Element (t, h, 0) of a qk tensor of nh heads with stride `st`. */
static size_t kgm_qk_at(const kg_variant *v, size_t st, size_t t, size_t h) {
  return v->layout == KG_HEAD_MAJOR ? h * st + t * v->dim : t * st + h * v->dim;
}

/* Why: qk_norm is in place over two tensors; each (token, head) is a row
 * checked like RMSNorm, and every element outside the rows must keep its
 * canary.  One call of T tokens: strides padded past the heads (off < 0,
 * buffers from malloc) or tight (heads back to back, as in a model's q and
 * k), each tensor starting `off` bytes past a 64-byte boundary. */
static void kgm_qk_case(const kg_variant *v, uint64_t *s, int hard, kgm_acc *a,
                        size_t T, int off) {
  const int dt = v->dtype, hm = v->layout == KG_HEAD_MAJOR;
  const size_t n = v->dim, es = kgm_esize(dt);
  const size_t nh[2] = {v->num_heads, v->num_kv_heads};
  const char *const nm[2] = {"q", "k"};
  void *buf[2] = {NULL, NULL}, *orig[2] = {NULL, NULL}, *w[2] = {NULL, NULL};
  void *raw[2] = {NULL, NULL};
  size_t st[2], len[2], j, t, h, at, row;
  if (off < 0)
    snprintf(a->call, sizeof a->call, "%zu tokens, padded strides", T);
  else
    snprintf(a->call, sizeof a->call, "%zu token%s, q and k %d bytes into a line", T,
             T == 1 ? "" : "s", off);
  for (j = 0; j < 2; j++) {
    const size_t pad = off < 0 ? (j ? KGM_YPAD : KGM_XPAD) : 0;
    st[j] = hm ? T * n + pad : nh[j] * n + pad;
    len[j] = (hm ? nh[j] : T) * st[j];
    buf[j] = kgm_alloc_at(len[j], es, off, &raw[j]);
    orig[j] = malloc(len[j] * es);
    w[j] = malloc(n * es);
    if (!buf[j] || !orig[j] || !w[j]) {
      kgm_break(a, "out of memory");
      goto done;
    }
    kgm_fill_canary(buf[j], dt, len[j]);
    row = 0;
    for (t = 0; t < T; t++)
      for (h = 0; h < nh[j]; h++, row++)
        kgm_gen_row(buf[j], dt, kgm_qk_at(v, st[j], t, h), n,
                    kgm_row_kind((row + 5 * j) % KGM_NKINDS, hard), s);
    kgm_gen_weights(w[j], dt, n, 0.7, s);
    memcpy(orig[j], buf[j], len[j] * es);
  }

  v->fn.qk_norm(0, buf[0], st[0], buf[1], st[1], w[0], w[1]);
  for (j = 0; j < 2; j++)
    if (!kgm_same(buf[j], orig[j], dt, 0, len[j], &at)) {
      kgm_break(a, "tokens = 0 wrote %s element %zu", nm[j], at);
      goto done;
    }

  v->fn.qk_norm(T, buf[0], st[0], buf[1], st[1], w[0], w[1]);
  for (j = 0; j < 2; j++) {
    /* padding: restore each row's output over the original, then compare */
    void *tmp = malloc(len[j] * es);
    if (!tmp) {
      kgm_break(a, "out of memory");
      goto done;
    }
    memcpy(tmp, buf[j], len[j] * es);
    for (t = 0; t < T; t++)
      for (h = 0; h < nh[j]; h++)
        memcpy((char *)tmp + kgm_qk_at(v, st[j], t, h) * es,
               (const char *)orig[j] + kgm_qk_at(v, st[j], t, h) * es, n * es);
    if (!kgm_same(tmp, orig[j], dt, 0, len[j], &at)) {
      free(tmp);
      kgm_break(a, "wrote %s element %zu outside every head row", nm[j], at);
      goto done;
    }
    free(tmp);
    row = 0;
    for (t = 0; t < T; t++)
      for (h = 0; h < nh[j]; h++, row++) {
        const size_t o = kgm_qk_at(v, st[j], t, h);
        kgm_check_rms_row(a, v, orig[j], o, w[j], buf[j], o,
                          kgm_row_kind((row + 5 * j) % KGM_NKINDS, hard), nm[j],
                          row);
      }
  }
done:
  for (j = 0; j < 2; j++) {
    free(raw[j]);
    free(orig[j]);
    free(w[j]);
  }
}

/* Why: the call shapes a model's kernels meet: a few tokens with padded
 * strides; decode (1 token) with q and k on a line boundary and 16 bytes
 * into a line (where malloc puts large buffers; the AVX-512 line frame);
 * a long call (prefill, past the switch to streaming) 16 bytes in. */
static void kgm_run_qk(const kg_variant *v, uint64_t *s, int hard, kgm_acc *a) {
  const size_t token = (v->num_heads + v->num_kv_heads) * v->dim * kgm_esize(v->dtype);
  kgm_qk_case(v, s, hard, a, KGM_TOKENS, -1);
  if (!a->broken)
    kgm_qk_case(v, s, hard, a, 1, 0);
  if (!a->broken)
    kgm_qk_case(v, s, hard, a, 1, 16);
  if (!a->broken)
    kgm_qk_case(v, s, hard, a, KGM_LONG_BYTES / token + 1, 16);
}

/* ---- a cell -------------------------------------------------------------- */

/* Why: the seed depends on the kernel name and not on the ISA, so every ISA
 * of a kernel sees the same inputs. */
static uint64_t kgm_seed(const kg_variant *v, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  const char *p;
  for (p = v->kernel; *p; p++)
    h = (h ^ (unsigned char)*p) * 1099511628211ull;
  return h;
}

/* The tolerance of a variant, in words. */
static void kgm_bound_text(const kg_variant *v, char *buf, size_t len) {
  if (v->op == KG_OP_LAYERNORM)
    snprintf(buf, len, "LN: 16eps(|g|(|x|+|mu|)rstd+|b|)+1ulp");
  else if (v->dtype == KG_F32)
    snprintf(buf, len, "8 ulp");
  else if (v->rounding == KG_ROUND_HF)
    snprintf(buf, len, "2 ulp of hf order");
  else
    snprintf(buf, len, "1 ulp of RN(ref)");
}

/* Why: ULP says little for layernorm, whose bound is absolute where x - mean
 * cancels; there the share of the bound used is the measure. */
static void kgm_error_text(const kg_variant *v, const kgm_result *r, char *buf,
                           size_t len) {
  if (v->op == KG_OP_LAYERNORM)
    snprintf(buf, len, "%.3g of LN bound", r->used);
  else
    snprintf(buf, len, "%.3g ulp", r->max_ulp);
}

/* Check one CPU variant (a dispatching KG_ISA_AUTO entry too) on random
 * rows, plus the hard rows when `hard`.  Skips, with the reason, what this
 * machine cannot run.  Returns r->pass. */
int kgm_check(const kg_variant *v, uint64_t seed, int hard, kgm_result *r);
int kgm_check(const kg_variant *v, uint64_t seed, int hard, kgm_result *r) {
  kgm_acc a;
  uint64_t s = kgm_seed(v, seed);
  memset(r, 0, sizeof *r);
  kgm_bound_text(v, r->bound, sizeof r->bound);
  if (v->isa == KG_ISA_CUDA) {
    snprintf(r->reason, sizeof r->reason,
             "CUDA variant: needs the CUDA runner (tests/cuda/)");
    return 0;
  }
  if (v->isa != KG_ISA_AUTO && !kg_cpu_has(v->isa)) {
    snprintf(r->reason, sizeof r->reason, "this CPU lacks %s",
             kg_cpu_isa_name(v->isa));
    return 0;
  }
  memset(&a, 0, sizeof a);
  if (v->op == KG_OP_QK_NORM)
    kgm_run_qk(v, &s, hard, &a);
  else
    kgm_run_rows(v, &s, hard, &a);
  r->ran = 1;
  r->max_ulp = a.max_ulp;
  r->used = a.used;
  r->pass = !a.broken && a.used <= 1.0;
  snprintf(r->worst, sizeof r->worst, "%s", a.worst);
  return r->pass;
}

/* Shape in words: "dim 4096" or "hd 128, 32/8 heads, token-major". */
static void kgm_shape_text(const kg_variant *v, char *buf, size_t len) {
  if (v->op == KG_OP_QK_NORM)
    snprintf(buf, len, "hd %zu, %zu/%zu heads, %s", v->dim, v->num_heads,
             v->num_kv_heads,
             v->layout == KG_HEAD_MAJOR ? "head-major" : "token-major");
  else
    snprintf(buf, len, "dim %zu", v->dim);
}

#ifndef KG_MATRIX_NO_MAIN
#include KG_PACK_HEADER

/* JSON string body: our strings are ASCII; escape what JSON requires. */
static void kgm_json_str(const char *key, const char *s, int comma) {
  printf("\"%s\":\"", key);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  printf("\"%s", comma ? "," : "");
}

/* JSON number; null where it is not finite (a NaN or Inf result). */
static void kgm_json_num(const char *key, double x, int comma) {
  if (isfinite(x))
    printf("\"%s\":%.4g%s", key, x, comma ? "," : "");
  else
    printf("\"%s\":null%s", key, comma ? "," : "");
}

/* Why: one self-contained JSON object per line; tests/matrix.sh merges. */
static void kgm_print_cell(const kg_variant *v, const kgm_result *r) {
  char shape[96];
  kgm_shape_text(v, shape, sizeof shape);
  printf("{");
  kgm_json_str("cell", v->symbol, 1);
  kgm_json_str("kernel", v->kernel, 1);
  kgm_json_str("op", kgm_op_name(v->op), 1);
  kgm_json_str("dtype", kgm_dtype_name(v->dtype), 1);
  kgm_json_str("rounding", v->rounding == KG_ROUND_HF ? "hf" : "single", 1);
  kgm_json_str("shape", shape, 1);
  kgm_json_str("isa", kg_cpu_isa_name(v->isa), 1);
  kgm_json_str("arch", KGM_ARCH, 1);
  kgm_json_str("status", r->ran ? "ran" : "skipped", 1);
  if (r->ran) {
    char err[64];
    kgm_error_text(v, r, err, sizeof err);
    kgm_json_str("error", err, 1);
    kgm_json_num("max_ulp", r->max_ulp, 1);
    kgm_json_num("bound_used", r->used, 1);
    kgm_json_str("bound", r->bound, 1);
    printf("\"pass\":%s,", r->pass ? "true" : "false");
    kgm_json_str("worst", r->worst, 0);
  } else {
    kgm_json_str("bound", r->bound, 1);
    printf("\"pass\":null,");
    kgm_json_str("reason", r->reason, 0);
  }
  printf("}\n");
  fflush(stdout);
}

static void kgm_usage(void) {
  fprintf(stderr, "usage: matrix [--seed N] [--run SYMBOL | --list | --cpu]\n");
}

int main(int argc, char **argv) {
  const kg_variant *tab = KG_PACK_VARIANTS;
  const size_t nv = KG_PACK_NUM;
  const char *only = NULL;
  uint64_t seed = 1;
  size_t i, total = 0, k = 0;
  int a, failed = 0, found = 0;
  for (a = 1; a < argc; a++) {
    if (strcmp(argv[a], "--seed") == 0 && a + 1 < argc) {
      seed = strtoull(argv[++a], NULL, 0);
    } else if (strcmp(argv[a], "--run") == 0 && a + 1 < argc) {
      only = argv[++a];
    } else if (strcmp(argv[a], "--list") == 0) {
      for (i = 0; i < nv; i++)
        if (tab[i].isa != KG_ISA_AUTO)
          printf("%s\n", tab[i].symbol);
      return 0;
    } else if (strcmp(argv[a], "--cpu") == 0) {
      int l;
      printf("best=%s has=", kg_cpu_isa_name(kg_cpu_best()));
      for (l = 0; l < KG_ISA_CUDA; l++)
        if (kg_cpu_has(l))
          printf("%s%s", l ? " " : "", kg_cpu_isa_name(l));
      printf("\n");
      return 0;
    } else {
      kgm_usage();
      return 2;
    }
  }
  for (i = 0; i < nv; i++)
    if (tab[i].isa != KG_ISA_AUTO)
      total++;
  for (i = 0; i < nv; i++) {
    kgm_result r;
    const kg_variant *v = &tab[i];
    if (v->isa == KG_ISA_AUTO)
      continue;
    k++;
    if (only && strcmp(only, v->symbol) != 0)
      continue;
    found = 1;
    if (!only)
      fprintf(stderr, "[%zu/%zu] %s ...\n", k, total, v->symbol);
    kgm_check(v, seed, 1, &r);
    kgm_print_cell(v, &r);
    if (r.ran && !r.pass)
      failed = 1;
  }
  if (only && !found) {
    fprintf(stderr, "matrix: %s: no such variant in this build (%s)\n", only,
            KGM_ARCH);
    return 2;
  }
  return failed;
}
#endif
