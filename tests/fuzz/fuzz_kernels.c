/* fuzz_kernels.c: libFuzzer target over the kernels of pack kgf
 * (tests/fuzz/fuzz.lua), built once per op with -DFUZZ_OP=0 (rmsnorm),
 * 1 (qk_norm) or 2 (layernorm).
 *
 * The input picks a kernel of the op and a geometry (rows, stride padding,
 * an element-sized misalignment, NULL statistics), then gives the rows as
 * raw element bits: NaN, Inf, subnormals, huge values, anything.  Weights
 * come from the input too but stay in [-4, 4) so that the output is
 * representable.  Every CPU variant this machine runs (and the dispatcher)
 * is checked for:
 *   - a row with NaN/Inf gives an all-NaN row; a finite row a finite row;
 *   - closeness to the float64 reference of tests/ref.c (bounds below);
 *   - SIMD within 8 ULP (f32) / 1 ULP (bf16, f16) of the scalar variant;
 *   - padding between rows, and the input of an out-of-place call, untouched;
 *   - in place (y == x) equal, bit for bit, to out of place;
 *   - rows = 0 touches nothing.
 * A failure prints what differs and aborts (libFuzzer keeps the input). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kg_cpu.h"
#include "kgf.h"
#include "ref.h"

#ifndef FUZZ_OP
#error "build with -DFUZZ_OP=0|1|2 (enum kg_op)"
#endif

#define FZ_MAX_DIM 64
#define FZ_MAX_ROWS 4
#define FZ_MAX_HEADS 8
#define FZ_PAD_BYTE 0x5a
#define FZ_U 0x1p-24 /* f32 unit roundoff */

/* ---- formats: an independent float64 view of f32, bf16 and f16 -------- */

static size_t fz_esize(int dt) { return dt == KG_F32 ? 4 : 2; }

/* Why: element bits -> exact double, written from the formats' definitions
 * (not with kg_convert.h, which is under test elsewhere). */
static double fz_decode(int dt, const unsigned char *p) {
  uint16_t h;
  if (dt == KG_F32) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  memcpy(&h, p, 2);
  if (dt == KG_BF16) {
    unsigned e = (h >> 7) & 0xffu, m = h & 0x7fu;
    double v = e == 0xff ? (m ? NAN : INFINITY)
               : e       ? ldexp(128.0 + m, (int)e - 134)
                         : ldexp(m, -133);
    return (h & 0x8000u) ? -v : v;
  } else {
    unsigned e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    double v = e == 0x1f ? (m ? NAN : INFINITY)
               : e       ? ldexp(1024.0 + m, (int)e - 25)
                         : ldexp(m, -24);
    return (h & 0x8000u) ? -v : v;
  }
}

static void fz_format(int dt, int *p, int *emin, double *maxv) {
  *p = dt == KG_F32 ? 24 : dt == KG_BF16 ? 8 : 11;
  *emin = dt == KG_F16 ? -14 : -126;
  *maxv = dt == KG_F32 ? 0x1.fffffep127 : dt == KG_BF16 ? 0x1.fep127 : 65504.0;
}

/* The quantum (spacing) of the format at magnitude a. */
static double fz_quantum(int dt, double a) {
  int p, emin, e;
  double maxv;
  fz_format(dt, &p, &emin, &maxv);
  if (!(a > 0) || a > maxv)
    a = a > maxv ? maxv : 0;
  frexp(a, &e);
  e = a == 0 ? emin : e - 1;
  if (e < emin)
    e = emin;
  return ldexp(1.0, e - (p - 1));
}

/* Position of a representable value on the format's number line (0 for
 * +-0, consecutive values differ by 1), so ULP distance is a difference. */
static int64_t fz_index(int dt, double v) {
  int p, emin, e;
  double maxv, a = fabs(v);
  int64_t idx;
  fz_format(dt, &p, &emin, &maxv);
  if (a == 0)
    return 0;
  if (a > maxv) {
    idx = fz_index(dt, maxv) + 1;
  } else {
    frexp(a, &e);
    e = e - 1 < emin ? emin : e - 1;
    idx = (int64_t)(e - emin) * ((int64_t)1 << (p - 1)) +
          (int64_t)ldexp(a, (p - 1) - e);
  }
  return v < 0 ? -idx : idx;
}

static int64_t fz_ulps(int dt, double a, double b) {
  int64_t d = fz_index(dt, a) - fz_index(dt, b);
  return d < 0 ? -d : d;
}

/* ---- failure report ------------------------------------------------------ */

static const kg_variant *fz_cur; /* variant under test, for messages */

static void fz_fail(const char *what, size_t row, size_t i, double got,
                    double want, double tol) {
  fprintf(stderr,
          "FUZZ FAILURE %s: %s (dim %zu eps %.9g): %s at row %zu element %zu: "
          "got %.17g want %.17g (tolerance %.3g)\n",
          fz_cur ? fz_cur->symbol : "?", fz_cur ? fz_cur->kernel : "?",
          fz_cur ? fz_cur->dim : 0, fz_cur ? (double)fz_cur->eps : 0.0, what,
          row, i, got, want, tol);
  abort();
}

/* ---- the input ----------------------------------------------------------- */

typedef struct {
  const uint8_t *d;
  size_t n, pos;
} fz_in;

static uint8_t fz_byte(fz_in *in) {
  return in->pos < in->n ? in->d[in->pos++] : 0;
}

/* Why: rows are read cyclically from what is left, so short inputs still
 * fill several rows (zeros when nothing is left). */
static void fz_fill(fz_in *in, unsigned char *dst, size_t nbytes,
                    size_t skip) {
  size_t k, left = in->n - (in->pos < in->n ? in->pos : in->n);
  for (k = 0; k < nbytes; k++)
    dst[k] = left ? in->d[in->pos + (skip + k) % left] : 0;
}

/* A weight in [-4, 4), exact in every format. */
static double fz_weight(uint8_t b) { return (double)(int8_t)b / 32.0; }

static void fz_store(int dt, unsigned char *p, double v) {
  if (dt == KG_F32) {
    float f = (float)v;
    memcpy(p, &f, 4);
  } else {
    /* v = m/32 with |m| <= 128: exact in bf16 and f16; build the bits */
    uint16_t h = 0;
    if (v != 0) {
      int e, p10 = dt == KG_BF16 ? 7 : 10, bias = dt == KG_BF16 ? 127 : 15;
      double a = fabs(v), m = frexp(a, &e); /* a = m 2^e, m in [0.5, 1) */
      uint16_t man = (uint16_t)((m * 2 - 1) * (1 << p10));
      h = (uint16_t)(((unsigned)(e - 1 + bias) << p10) | man);
      if (v < 0)
        h |= 0x8000u;
    }
    memcpy(p, &h, 2);
  }
}

/* ---- geometry of one call -------------------------------------------------- */

typedef struct {
  const kg_variant *k; /* any variant of the kernel (shape, dtype) */
  size_t rows;         /* rows, or tokens for qk_norm */
  size_t xs, ys;       /* strides in elements (qk_norm: q, k) */
  size_t off;          /* misalignment in elements */
  int stats;           /* pass rstd/mean */
  size_t nx, ny;       /* buffer lengths in elements (incl. off) */
  unsigned char w[2][FZ_MAX_DIM * 4];
  double wd[2][FZ_MAX_DIM];
} fz_case;

static size_t fz_heads(const kg_variant *v, int which) {
  return which == 0 ? v->num_heads : v->num_kv_heads;
}

/* Where element (row r, head h, i) lives: rms/ln rows, or qk layouts. */
static size_t fz_at(const fz_case *c, int which, size_t r, size_t h, size_t i) {
  const kg_variant *v = c->k;
  size_t st = which == 0 ? c->xs : c->ys;
  if (v->op != KG_OP_QK_NORM)
    return c->off + r * st + i;
  if (v->layout == KG_HEAD_MAJOR)
    return c->off + h * st + r * v->dim + i;
  return c->off + r * st + h * v->dim + i;
}

/* 1 if element index e of buffer `which` is a data element (not padding). */
static int fz_is_data(const fz_case *c, int which, size_t e) {
  const kg_variant *v = c->k;
  size_t r, h, nh = v->op == KG_OP_QK_NORM ? fz_heads(v, which) : 1;
  for (r = 0; r < c->rows; r++)
    for (h = 0; h < nh; h++) {
      size_t a = fz_at(c, which, r, h, 0);
      if (e >= a && e < a + v->dim)
        return 1;
    }
  return 0;
}

/* ---- the float64 reference of one row ------------------------------------- */

/* Why: each row's expected values and bounds: y_ref[i] and tol[i] (absolute),
 * stats for rmsnorm/layernorm; *nan = 1 when the row must come out all-NaN.
 * The values are tests/ref.c's, from the stored row xt and weights wt, bt
 * (T elements); x, w, b are the same elements as doubles, for the bounds. */
static void fz_reference(const kg_variant *v, const unsigned char *xt,
                         const unsigned char *wt, const unsigned char *bt,
                         const double *x, const double *w, const double *b,
                         double *yref, double *tol, double *rstd, double *mean,
                         int *nan) {
  size_t i, n = v->dim;
  double eps = (double)v->eps, off = (double)v->weight_offset;
  double hv[FZ_MAX_DIM], mu = 0, rs;
  if (v->op == KG_OP_LAYERNORM)
    ref_layernorm_row(v->dtype, n, xt, wt, bt, eps, yref, &mu, &rs);
  else /* hf: h = round_T(x * rs) in hv, yref = h * (w + off) unrounded */
    rs = ref_rmsnorm_row_parts(v->dtype, v->rounding, n, xt, wt, eps, off, hv,
                               yref);
  *nan = isnan(rs) != 0; /* the row holds NaN or Inf */
  if (*nan)
    return;
  *rstd = rs;
  *mean = mu;
  for (i = 0; i < n; i++) {
    double y = yref[i], t;
    if (v->op == KG_OP_LAYERNORM) {
      /* x - mean cancels: the bound grows with |x| + |mean| (DESIGN.md) */
      t = (2.0 * n + 16) * FZ_U *
              (fabs(w[i]) * ((fabs(x[i]) + fabs(mu)) * rs + 1) + fabs(b[i])) +
          0x1p-140;
    } else if (v->rounding == KG_ROUND_HF) {
      /* transformers' order: normalize, round to T, times the weight.
       * x * rs near a rounding boundary of T may round to the neighbour
       * of h, which the weight scales (in the subnormals of f16 that is
       * several ULP of y); then y rounds once more. */
      t = fabs(w[i] + off) * fz_quantum(v->dtype, fabs(hv[i])) +
          fz_quantum(v->dtype, fabs(y)) + (n + 32.0) * FZ_U * fabs(y);
    } else {
      t = (n + 32.0) * FZ_U * fabs(y) + 0x1p-140;
    }
    if (v->dtype != KG_F32 && v->rounding != KG_ROUND_HF)
      t += fz_quantum(v->dtype, fabs(y) + t);
    tol[i] = t;
  }
}

/* ---- running a variant ----------------------------------------------------- */

typedef struct {
  unsigned char *x, *y; /* rms/ln: x, y; qk: q, k (in place) */
  float stat[2][FZ_MAX_ROWS];
} fz_run;

static void fz_call(const kg_variant *v, const fz_case *c, unsigned char *x,
                    unsigned char *y, float *rstd, float *mean) {
  size_t es = fz_esize(v->dtype);
  unsigned char *xp = x + c->off * es, *yp = y + c->off * es;
  switch (v->op) {
  case KG_OP_RMSNORM:
    v->fn.rmsnorm(c->rows, xp, c->xs, c->w[0], yp, c->ys, rstd);
    break;
  case KG_OP_QK_NORM:
    v->fn.qk_norm(c->rows, xp, c->xs, yp, c->ys, c->w[0], c->w[1]);
    break;
  default:
    v->fn.layernorm(c->rows, xp, c->xs, c->w[0], c->w[1], yp, c->ys, mean,
                    rstd);
    break;
  }
}

/* Why: the buffers of one call: data from the input, padding set to a
 * sentinel; an out-of-place output starts all sentinel. */
static void fz_setup(const fz_case *c, const unsigned char *xdata,
                     const unsigned char *ydata, fz_run *r) {
  size_t es = fz_esize(c->k->dtype);
  memcpy(r->x, xdata, c->nx * es);
  if (c->k->op == KG_OP_QK_NORM)
    memcpy(r->y, ydata, c->ny * es);
  else
    memset(r->y, FZ_PAD_BYTE, c->ny * es);
  memset(r->stat, FZ_PAD_BYTE, sizeof r->stat);
}

/* Check one variant's outputs against the reference and invariants. */
static void fz_check(const fz_case *c, const kg_variant *v,
                     const unsigned char *xdata, const unsigned char *ydata,
                     const fz_run *r) {
  size_t es = fz_esize(v->dtype), e, t, h, i;
  int which, nbuf = v->op == KG_OP_QK_NORM ? 2 : 1;
  fz_cur = v;
  /* padding and an out-of-place input untouched */
  if (v->op != KG_OP_QK_NORM && memcmp(r->x, xdata, c->nx * es) != 0)
    fz_fail("the input x changed", 0, 0, 0, 0, 0);
  for (which = 0; which < 2; which++) {
    const unsigned char *buf = which == 0 ? r->x : r->y;
    const unsigned char *orig = which == 0 ? xdata : ydata;
    size_t nb = which == 0 ? c->nx : c->ny;
    if (v->op != KG_OP_QK_NORM && which == 0)
      continue;
    for (e = 0; e < nb; e++) {
      int data = (v->op == KG_OP_QK_NORM) ? fz_is_data(c, which, e)
                                          : fz_is_data(c, 1, e);
      if (data)
        continue;
      if (v->op == KG_OP_QK_NORM ? memcmp(buf + e * es, orig + e * es, es)
                                 : memcmp(buf + e * es, (unsigned char[4]){
                                     FZ_PAD_BYTE, FZ_PAD_BYTE, FZ_PAD_BYTE,
                                     FZ_PAD_BYTE}, es))
        fz_fail("padding written", e, 0, 0, 0, 0);
    }
  }
  /* every row (every head) against the reference */
  for (which = 0; which < nbuf; which++) {
    size_t nh = v->op == KG_OP_QK_NORM ? fz_heads(v, which) : 1;
    for (t = 0; t < c->rows; t++)
      for (h = 0; h < nh; h++) {
        double x[FZ_MAX_DIM], yref[FZ_MAX_DIM], tol[FZ_MAX_DIM], rs, mu;
        int nan;
        const unsigned char *src = v->op == KG_OP_QK_NORM
                                       ? (which == 0 ? xdata : ydata)
                                       : xdata;
        const unsigned char *out = v->op == KG_OP_QK_NORM
                                       ? (which == 0 ? r->x : r->y)
                                       : r->y;
        int wi = v->op == KG_OP_QK_NORM ? which : 0;
        for (i = 0; i < v->dim; i++)
          x[i] = fz_decode(v->dtype, src + fz_at(c, which, t, h, i) * es);
        fz_reference(v, src + fz_at(c, which, t, h, 0) * es, c->w[wi],
                     c->w[1], x, c->wd[wi], c->wd[1], yref, tol, &rs, &mu,
                     &nan);
        for (i = 0; i < v->dim; i++) {
          size_t at = v->op == KG_OP_QK_NORM ? fz_at(c, which, t, h, i)
                                             : fz_at(c, 1, t, 0, i);
          double y = fz_decode(v->dtype, out + at * es);
          if (nan) {
            if (!isnan(y))
              fz_fail("a row with NaN/Inf must come out all NaN", t, i, y, NAN,
                      0);
            continue;
          }
          if (!isfinite(y))
            fz_fail("a finite row must come out finite", t, i, y, yref[i], 0);
          if (!(fabs(y - yref[i]) <= tol[i]))
            fz_fail("far from the float64 reference", t, i, y, yref[i],
                    tol[i]);
        }
        if (!nan && c->stats && v->op != KG_OP_QK_NORM) {
          double got = r->stat[0][t], tr = (v->dim + 16.0) * FZ_U * rs;
          if (!(fabs(got - rs) <= tr))
            fz_fail("rstd far from the reference", t, 0, got, rs, tr);
          if (v->op == KG_OP_LAYERNORM) {
            double amax = 0, tm;
            for (i = 0; i < v->dim; i++)
              amax = fmax(amax, fabs(x[i]));
            tm = (v->dim + 16.0) * FZ_U * amax + 0x1p-140;
            got = r->stat[1][t];
            if (!(fabs(got - mu) <= tm))
              fz_fail("mean far from the reference", t, 0, got, mu, tm);
          }
        }
      }
  }
  fz_cur = NULL;
}

/* SIMD (or the dispatcher) against scalar: the same NaNs, within 8 ULP
 * (f32) or 1 ULP (bf16, f16; 2 for "hf", which rounds twice).  For
 * layernorm the two means may differ as much as its bound allows, and that
 * difference is amplified by rstd; for "hf" the intermediate rounding may
 * go either way, and the weight scales that step: there the reference
 * bound applies too (as DESIGN.md's bounds imply). */
static void fz_compare(const fz_case *c, const kg_variant *v,
                       const unsigned char *xdata, const unsigned char *ydata,
                       const fz_run *a, const fz_run *s) {
  size_t es = fz_esize(v->dtype), t, h, i;
  int64_t lim = v->dtype == KG_F32 ? 8 : v->rounding == KG_ROUND_HF ? 2 : 1;
  int which, nbuf = v->op == KG_OP_QK_NORM ? 2 : 1;
  fz_cur = v;
  for (which = 0; which < nbuf; which++) {
    size_t nh = v->op == KG_OP_QK_NORM ? fz_heads(v, which) : 1;
    int qk = v->op == KG_OP_QK_NORM, wi = qk ? which : 0;
    const unsigned char *src = qk && which == 1 ? ydata : xdata;
    const unsigned char *p = qk && which == 0 ? a->x : a->y;
    const unsigned char *q = qk && which == 0 ? s->x : s->y;
    for (t = 0; t < c->rows; t++)
      for (h = 0; h < nh; h++) {
        double x[FZ_MAX_DIM], yref[FZ_MAX_DIM], tol[FZ_MAX_DIM], rs, mu;
        int nan;
        for (i = 0; i < v->dim; i++)
          x[i] = fz_decode(v->dtype, src + fz_at(c, which, t, h, i) * es);
        fz_reference(v, src + fz_at(c, which, t, h, 0) * es, c->w[wi],
                     c->w[1], x, c->wd[wi], c->wd[1], yref, tol, &rs, &mu,
                     &nan);
        for (i = 0; i < v->dim; i++) {
          size_t at = qk ? fz_at(c, which, t, h, i) : fz_at(c, 1, t, 0, i);
          double y = fz_decode(v->dtype, p + at * es);
          double z = fz_decode(v->dtype, q + at * es);
          if (isnan(y) != isnan(z))
            fz_fail("NaN where the scalar variant has none (or back)", t, i, y,
                    z, 0);
          if (isnan(y) || fz_ulps(v->dtype, y, z) <= lim)
            continue;
          if ((v->op == KG_OP_LAYERNORM || v->rounding == KG_ROUND_HF) &&
              !nan && fabs(y - z) <= tol[i])
            continue;
          fz_fail("differs from the scalar variant", t, i, y, z, (double)lim);
        }
      }
  }
  fz_cur = NULL;
}

/* In place (y == x) equals out of place bit for bit (rmsnorm, layernorm,
 * equal strides); rows = 0 touches nothing. */
static void fz_extra(const fz_case *c, const kg_variant *v,
                     const unsigned char *xdata, const unsigned char *ydata,
                     const fz_run *done, fz_run *tmp) {
  size_t es = fz_esize(v->dtype), r, e;
  fz_case z = *c;
  fz_cur = v;
  if (v->op != KG_OP_QK_NORM && c->xs == c->ys) {
    fz_setup(c, xdata, ydata, tmp);
    fz_call(v, c, tmp->x, tmp->x, c->stats ? tmp->stat[0] : NULL,
            c->stats ? tmp->stat[1] : NULL);
    for (r = 0; r < c->rows; r++) {
      size_t a = (c->off + r * c->xs) * es;
      if (memcmp(tmp->x + a, done->y + a, v->dim * es) != 0)
        fz_fail("in place differs from out of place", r, 0, 0, 0, 0);
      if (c->stats && (memcmp(&tmp->stat[0][r], &done->stat[0][r], 4) != 0 ||
                       memcmp(&tmp->stat[1][r], &done->stat[1][r], 4) != 0))
        fz_fail("in-place statistics differ", r, 0, tmp->stat[0][r],
                done->stat[0][r], 0);
    }
  }
  z.rows = 0;
  fz_setup(c, xdata, ydata, tmp);
  fz_call(v, &z, tmp->x, tmp->y, tmp->stat[0], tmp->stat[1]);
  if (memcmp(tmp->x, xdata, c->nx * es) != 0)
    fz_fail("rows = 0 wrote x", 0, 0, 0, 0, 0);
  for (e = 0; e < c->ny * es; e++)
    if (tmp->y[e] != (v->op == KG_OP_QK_NORM ? ydata[e] : FZ_PAD_BYTE))
      fz_fail("rows = 0 wrote y", e, 0, 0, 0, 0);
  for (e = 0; e < sizeof tmp->stat; e++)
    if (((const unsigned char *)tmp->stat)[e] != FZ_PAD_BYTE)
      fz_fail("rows = 0 wrote statistics", e, 0, 0, 0, 0);
  fz_cur = NULL;
}

/* ---- the target ------------------------------------------------------------ */

static const kg_variant *fz_kernels[64];
static size_t fz_nkernels;

/* Why: the kernels of this op, each once (by name), in table order. */
static void fz_init(void) {
  size_t i, j;
  for (i = 0; i < kgf_num_variants; i++) {
    const kg_variant *v = &kgf_variants[i];
    int seen = 0;
    if (v->op != FUZZ_OP || v->isa != KG_ISA_SCALAR)
      continue;
    for (j = 0; j < fz_nkernels; j++)
      seen |= strcmp(fz_kernels[j]->kernel, v->kernel) == 0;
    if (!seen && fz_nkernels < 64)
      fz_kernels[fz_nkernels++] = v;
  }
  if (fz_nkernels == 0) {
    fprintf(stderr, "fuzz: pack kgf has no scalar kernel of op %d\n", FUZZ_OP);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static unsigned char xdata[FZ_MAX_ROWS * FZ_MAX_HEADS * FZ_MAX_DIM * 4 + 256];
  static unsigned char ydata[sizeof xdata], b0[sizeof xdata], b1[sizeof xdata],
      b2[sizeof xdata], b3[sizeof xdata], b4[sizeof xdata], b5[sizeof xdata];
  fz_in in = {data, size, 0};
  fz_case c;
  fz_run scal = {b0, b1, {{0}}}, run = {b2, b3, {{0}}}, inpl = {b4, b5, {{0}}};
  const kg_variant *k;
  size_t es, i, e, nw, nh0 = 1, nh1 = 1;
  int pass;
  uint8_t g;
  if (fz_nkernels == 0)
    fz_init();
  memset(&c, 0, sizeof c);
  k = c.k = fz_kernels[fz_byte(&in) % fz_nkernels];
  g = fz_byte(&in);
  es = fz_esize(k->dtype);
  c.rows = 1 + (g & 3);
  c.off = (g >> 6) & 1;
  c.stats = !((g >> 7) & 1);
  if (k->op == KG_OP_QK_NORM) {
    nh0 = k->num_heads;
    nh1 = k->num_kv_heads;
    if (k->layout == KG_HEAD_MAJOR) {
      c.xs = c.rows * k->dim + ((g >> 2) & 3);
      c.ys = c.rows * k->dim + ((g >> 4) & 3);
      c.nx = c.off + (nh0 - 1) * c.xs + c.rows * k->dim;
      c.ny = c.off + (nh1 - 1) * c.ys + c.rows * k->dim;
    } else {
      c.xs = nh0 * k->dim + ((g >> 2) & 3);
      c.ys = nh1 * k->dim + ((g >> 4) & 3);
      c.nx = c.off + (c.rows - 1) * c.xs + nh0 * k->dim;
      c.ny = c.off + (c.rows - 1) * c.ys + nh1 * k->dim;
    }
  } else {
    c.xs = k->dim + ((g >> 2) & 3);
    c.ys = k->dim + ((g >> 4) & 3);
    c.nx = c.off + (c.rows - 1) * c.xs + k->dim;
    c.ny = c.off + (c.rows - 1) * c.ys + k->dim;
  }
  if (k->dim > FZ_MAX_DIM || nh0 > FZ_MAX_HEADS || nh1 > FZ_MAX_HEADS)
    abort();
  /* weights (q_w and k_w, or gamma and beta) */
  nw = (k->op == KG_OP_RMSNORM) ? 1 : 2;
  for (e = 0; e < nw; e++)
    for (i = 0; i < k->dim; i++) {
      c.wd[e][i] = fz_weight(fz_byte(&in));
      fz_store(k->dtype, c.w[e] + i * es, c.wd[e][i]);
    }
  if (nw == 1)
    memset(c.wd[1], 0, sizeof c.wd[1]);
  /* rows: the rest of the input (x, or q then k); for qk_norm the padding
   * holds a sentinel (rms/ln: x's padding is input like the rest, y starts
   * all sentinel in fz_setup) */
  fz_fill(&in, xdata, c.nx * es, 0);
  fz_fill(&in, ydata, c.ny * es, c.nx * es);
  if (k->op == KG_OP_QK_NORM) {
    for (e = 0; e < c.nx; e++)
      if (!fz_is_data(&c, 0, e))
        memset(xdata + e * es, FZ_PAD_BYTE, es);
    for (e = 0; e < c.ny; e++)
      if (!fz_is_data(&c, 1, e))
        memset(ydata + e * es, FZ_PAD_BYTE, es);
  }

  /* scalar first (the baseline), then every other variant this CPU runs */
  for (pass = 0; pass < 2; pass++)
    for (i = 0; i < kgf_num_variants; i++) {
      const kg_variant *v = &kgf_variants[i];
      fz_run *r = pass == 0 ? &scal : &run;
      if (strcmp(v->kernel, k->kernel) != 0 || (v->isa == KG_ISA_SCALAR) != (pass == 0))
        continue;
      if (v->isa != KG_ISA_AUTO && !(v->isa < KG_ISA_CUDA && kg_cpu_has(v->isa)))
        continue;
      fz_setup(&c, xdata, ydata, r);
      fz_call(v, &c, r->x, r->y, c.stats ? r->stat[0] : NULL,
              c.stats ? r->stat[1] : NULL);
      fz_check(&c, v, xdata, ydata, r);
      if (pass == 1)
        fz_compare(&c, v, xdata, ydata, r, &scal);
      fz_extra(&c, v, xdata, ydata, r, &inpl);
    }
  return 0;
}
