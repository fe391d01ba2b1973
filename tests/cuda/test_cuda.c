/* test_cuda.c: every CUDA variant of a pack against the CPU scalar variant
 * of the same kernel, on the same inputs (FALSIFY-QKN-006), on a GPU.
 *
 * For each CUDA variant (NAME_cuda_variants[]) and its scalar twin
 * (NAME_variants[], same kernel name): random rows of every kind (scaled
 * normals, zero, NaN, Inf, values near the dtype's limit, subnormals,
 * constant/offset rows), several row counts, padded strides, in place and
 * out of place, aligned (vector layout) and misaligned (element layout)
 * pointers, a fused QKV buffer for token-major QK-norm (V and padding must
 * stay untouched), both layouts, the default and a created stream.  Outputs
 * and rstd/mean are poisoned first, so an unwritten element is caught.
 * QK-norm also gets a per-head independence check (FALSIFY-QKN-007).
 *
 * Every result is checked against a float64 reference written here from
 * the formulas (long double sums), and against the CPU scalar result.
 * Tolerances from float64: f32 8 ULP; bf16/f16 1 ULP of the correctly
 * rounded value ("single"), 2 ULP ("hf": two roundings to T, the first may
 * flip on a last-bit difference of rstd); LayerNorm additionally
 * 8 * FLT_EPSILON * (|gamma| * ((|x| + |mean|) * rstd + 1) + |beta|)
 * (x - mean cancels; the "+ 1" is the error of the f32-summed mean itself,
 * about eps * sigma, times rstd); rstd 8 ULP (LayerNorm 16), mean 8 ULP
 * plus 8 * FLT_EPSILON * max|x|.  From the CPU: twice those (each side may
 * use its allowance).  A CPU result outside its own allowance where the
 * GPU is inside is a CPU defect: printed as a WARN cpu-scalar line, not
 * counted against the CUDA variant.  NaN must meet NaN.
 *
 * Without a usable GPU every variant is reported "SKIPPED cuda: ...: why"
 * and the exit status is 0; nothing is ever reported passed that did not
 * run.  Build: see mk/cuda.mk (KG_PACK_* macros name the pack). */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include KG_PACK_HEADER
#include "kg_convert.h"

#define NVARS(a) (sizeof(a) / sizeof((a)[0]))

/* Built against the host emulation (tests/cuda/emu): the same tests on
 * smaller sizes, every line labelled "cuda-emu", never "cuda". */
#ifdef KG_CUDA_EMULATION
#define BACKEND "cuda-emu"
#define BIG(n, emu) (emu)
#else
#define BACKEND "cuda"
#define BIG(n, emu) (n)
#endif

/* ---- per-variant bookkeeping ---------------------------------------------- */

typedef struct tstate {
  const kg_variant *cv;   /* CUDA variant under test */
  const kg_variant *sv;   /* scalar twin */
  int checks;             /* cases run */
  int failed;             /* cases failed */
  int cuda_error;         /* a CUDA call failed: stop this variant */
  double max_ref;         /* largest ULP distance from float64 seen */
  double max_cpu;         /* largest ULP distance from the CPU seen */
  char first_error[512];  /* the first failure, for the summary line */
  long cpu_bad;           /* CPU results outside their tolerance of float64 */
  double cpu_worst;       /* the worst of those, in ULP */
  char cpu_note[512];     /* ... and where */
} tstate;

/* Why: the first failure of a variant is what a reader needs; later ones
 * are counted, and printed only up to a small limit. */
static void failf(tstate *ts, const char *fmt, ...)
{
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (ts->first_error[0] == 0) snprintf(ts->first_error, sizeof ts->first_error, "%s", buf);
  if (ts->failed < 8) printf("    FAIL %s: %s\n", ts->cv->symbol, buf);
  ts->failed++;
}

/* Every CUDA call goes through this: a failure is reported with the call
 * and the variant stops (a sticky error poisons the context anyway). */
#define CK(ts, call)                                                            \
  do {                                                                          \
    cudaError_t ck_e_ = (call);                                                 \
    if (ck_e_ != cudaSuccess) {                                                 \
      failf((ts), "%s:%d: %s: %s", __FILE__, __LINE__, #call,                   \
            cudaGetErrorString(ck_e_));                                         \
      (ts)->cuda_error = 1;                                                     \
      goto cleanup;                                                             \
    }                                                                           \
  } while (0)

/* ---- storage ---------------------------------------------------------------- */

static size_t esz(int dt) { return dt == KG_F32 ? 4 : 2; }

static uint32_t getbits(int dt, const void *p, size_t i)
{
  if (dt == KG_F32) {
    uint32_t u;
    memcpy(&u, (const char *)p + 4 * i, 4);
    return u;
  }
  return ((const uint16_t *)p)[i];
}

static void setbits(int dt, void *p, size_t i, uint32_t b)
{
  if (dt == KG_F32)
    memcpy((char *)p + 4 * i, &b, 4);
  else
    ((uint16_t *)p)[i] = (uint16_t)b;
}

static float bits_to_f(int dt, uint32_t b)
{
  float f;
  if (dt == KG_BF16) return kg_bf16_to_f32((kg_bf16)b);
  if (dt == KG_F16) return kg_f16_to_f32((kg_f16)b);
  memcpy(&f, &b, 4);
  return f;
}

static uint32_t f_to_bits(int dt, float f)
{
  uint32_t u;
  if (dt == KG_BF16) return kg_f32_to_bf16(f);
  if (dt == KG_F16) return kg_f32_to_f16(f);
  memcpy(&u, &f, 4);
  return u;
}

static float getf(int dt, const void *p, size_t i) { return bits_to_f(dt, getbits(dt, p, i)); }
static void setf(int dt, void *p, size_t i, float v) { setbits(dt, p, i, f_to_bits(dt, v)); }

/* Signalling-NaN patterns no kernel produces (they quiet NaNs). */
static uint32_t poison_bits(int dt)
{
  return dt == KG_F32 ? 0x7fa5a5a5u : dt == KG_BF16 ? 0x7fa5u : 0x7d5au;
}
static const uint32_t POISON_F32 = 0x7fa5a5a5u;

static int nan_bits(int dt, uint32_t b)
{
  if (dt == KG_F32) return (b & 0x7fffffffu) > 0x7f800000u;
  if (dt == KG_BF16) return (b & 0x7fffu) > 0x7f80u;
  return (b & 0x7fffu) > 0x7c00u;
}

/* Why: distance in representable steps, counted through zero, so that
 * +0/-0 are one point and neighbours across zero are 1 apart. */
static double steps(int dt, uint32_t a, uint32_t b)
{
  const uint32_t sign = dt == KG_F32 ? 0x80000000u : 0x8000u;
  const int64_t oa = (a & sign) ? -(int64_t)(a & ~sign) : (int64_t)a;
  const int64_t ob = (b & sign) ? -(int64_t)(b & ~sign) : (int64_t)b;
  return fabs((double)(oa - ob));
}

/* The spacing of T next to the finite value with bits b. */
static double ulp_at(int dt, uint32_t b)
{
  const uint32_t sign = dt == KG_F32 ? 0x80000000u : 0x8000u;
  const uint32_t mag = b & ~sign;
  const double v = fabs((double)bits_to_f(dt, mag));
  const double up = (double)bits_to_f(dt, mag + 1);
  if (isfinite(up)) return up - v;
  return v - (double)bits_to_f(dt, mag - 1);
}

/* ---- data ------------------------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rng_next(void)
{
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double unit(void) { return (double)(rng_next() >> 11) * 0x1p-53; }
static double range(double lo, double hi) { return lo + (hi - lo) * unit(); }
static double normal(void) { return (unit() + unit() + unit() + unit() - 2.0) * sqrt(3.0); }

enum { ROW_RANDOM, ROW_ZERO, ROW_NAN, ROW_INF, ROW_HUGE, ROW_TINY, ROW_CONST, ROW_OFFSET };

/* Why: every row kind the contract names, at fixed positions so that small
 * row counts still see them: rows 1.. are special, the rest random. */
static int row_kind(size_t r)
{
  static const int kinds[] = { ROW_RANDOM, ROW_ZERO, ROW_NAN, ROW_HUGE, ROW_INF, ROW_TINY,
                               ROW_OFFSET, ROW_CONST };
  if (r < NVARS(kinds)) return kinds[r];
  return (r % 11 == 5) ? ROW_OFFSET : ROW_RANDOM;
}

static double huge_value(int dt)
{
  if (dt == KG_F16) return range(30000.0, 65504.0);
  return pow(10.0, range(36.0, 38.5)); /* f32 and bf16: squares overflow f32 */
}

static double tiny_value(int dt)
{
  if (dt == KG_F16) return pow(10.0, range(-7.4, -5.0));
  if (dt == KG_BF16) return pow(10.0, range(-40.0, -38.0));
  return pow(10.0, range(-44.0, -39.0));
}

static void fill_row(int dt, void *p, size_t n, int kind)
{
  const double scale = pow(10.0, range(-3.0, 3.0));
  const double c = (unit() < 0.5 ? -1.0 : 1.0) * pow(10.0, range(-1.0, 3.0));
  const size_t bad = (size_t)(unit() * (double)n);
  for (size_t i = 0; i < n; i++) {
    double v;
    switch (kind) {
    case ROW_ZERO: v = 0.0; break;
    case ROW_HUGE: v = (unit() < 0.5 ? -1.0 : 1.0) * huge_value(dt); break;
    case ROW_TINY: v = (unit() < 0.5 ? -1.0 : 1.0) * tiny_value(dt); break;
    case ROW_CONST: v = c; break;
    case ROW_OFFSET: v = c + 0.01 * c * normal(); break;
    default: v = scale * normal(); break;
    }
    if (kind == ROW_NAN && i == bad) v = NAN;
    if (kind == ROW_INF && i == bad) v = (unit() < 0.5) ? -INFINITY : INFINITY;
    setf(dt, p, i, (float)v);
  }
}

static void fill_weights(int dt, void *p, size_t n, double lo, double hi)
{
  for (size_t i = 0; i < n; i++) {
    double v = range(lo, hi);
    if (unit() < 0.5) v = -v;
    setf(dt, p, i, (float)v);
  }
}

static void fill_bits(int dt, void *p, size_t n, uint32_t b)
{
  for (size_t i = 0; i < n; i++) setbits(dt, p, i, b);
}

/* ---- float64 reference ------------------------------------------------------ */

/* Why: an independent judge, written from the formulas (long double sums),
 * so that a difference between the GPU and the CPU can be pinned on the
 * one that is wrong.  One row of d elements at x; w (RMSNorm weight or
 * gamma) and b (beta) are rows of d.  y[i]: the exact result ("hf": the
 * transformers order, with its two roundings to T).  NaN/Inf in the row:
 * every y[i], mean and rstd NaN. */
static void ref_row(const kg_variant *v, const void *x, const void *w, const void *b, double *y,
                    double *mean, double *rstd)
{
  const int dt = v->dtype;
  const size_t d = v->dim;
  long double s = 0.0L, q = 0.0L, mu = 0.0L, rs;
  for (size_t i = 0; i < d; i++) {
    const long double xi = getf(dt, x, i);
    if (!isfinite((double)xi)) {
      for (size_t j = 0; j < d; j++) y[j] = NAN;
      *mean = *rstd = NAN;
      return;
    }
    s += xi;
  }
  if (v->op == KG_OP_LAYERNORM) {
    mu = s / (long double)d;
    for (size_t i = 0; i < d; i++) {
      const long double e = (long double)getf(dt, x, i) - mu;
      q += e * e;
    }
  } else {
    for (size_t i = 0; i < d; i++) {
      const long double xi = getf(dt, x, i);
      q += xi * xi;
    }
  }
  rs = 1.0L / sqrtl(q / (long double)d + (long double)v->eps);
  *mean = (double)mu;
  *rstd = (double)rs;
  for (size_t i = 0; i < d; i++) {
    const long double xi = getf(dt, x, i), wi = getf(dt, w, i);
    if (v->op == KG_OP_LAYERNORM) {
      y[i] = (double)((xi - mu) * rs * wi + (long double)getf(dt, b, i));
    } else if (v->rounding == KG_ROUND_HF) {
      const float h = bits_to_f(dt, f_to_bits(dt, (float)(xi * rs)));
      y[i] = (double)bits_to_f(dt, f_to_bits(dt, (float)((long double)h * (wi + v->weight_offset))));
    } else {
      y[i] = (double)(xi * rs * (wi + (long double)v->weight_offset));
    }
  }
}

/* ---- comparison ------------------------------------------------------------- */

/* Why: a CPU scalar result outside its own tolerance of float64 where the
 * GPU is inside it is the CPU's defect: counted, its worst case kept and
 * printed as a WARN line (never silently, never as a GPU failure). */
static void note_cpu(tstate *ts, const char *what, size_t e, double cpu, double cpu_ulp,
                     double ref, double gpu, double gpu_ulp)
{
  ts->cpu_bad++;
  if (cpu_ulp > ts->cpu_worst) {
    ts->cpu_worst = cpu_ulp;
    snprintf(ts->cpu_note, sizeof ts->cpu_note,
             "%s: element %zu: cpu %.9g is %.0f ULP from float64 %.9g (gpu %.9g, %.0f ULP)", what,
             e, cpu, cpu_ulp, ref, gpu, gpu_ulp);
  }
}

/* The ULPs a result may be from the float64 reference: f32 8; bf16/f16
 * 1 from the correctly rounded value ("single"), 2 ("hf": h = round(x *
 * rstd) may flip on a last-bit difference of rstd, and is rounded again).
 * The GPU and the CPU may each use that much, so between them: twice. */
static double allowed_steps(const kg_variant *v)
{
  if (v->dtype == KG_F32) return 8.0;
  return v->rounding == KG_ROUND_HF ? 2.0 : 1.0;
}

/* Why: a result within `allow` ULP (of T at the target) plus an absolute
 * bound of the target value (a double: the reference or the CPU result). */
static int close_to(int dt, uint32_t got, double want, double allow, double atol, double *st)
{
  const uint32_t wb = f_to_bits(dt, (float)want);
  const double diff = fabs((double)bits_to_f(dt, got) - want);
  *st = steps(dt, got, wb);
  return *st <= allow || diff <= allow * ulp_at(dt, wb) + atol;
}

/* Why: one buffer, element by element.  Where `mask` is set the GPU
 * result must be within allowed_steps() of the float64 reference `ref`
 * and within twice that of the CPU scalar result (atol: LayerNorm's extra
 * absolute bound); a NaN must meet a NaN; a poison value means the element
 * was never written.  Elsewhere it must still hold its initial bits. */
static void compare(tstate *ts, const char *what, int dt, size_t n, const void *gpu,
                    const void *cpu, const void *init, const unsigned char *mask,
                    const double *ref, const double *atol)
{
  const double allow = allowed_steps(ts->cv);
  int bad = 0;
  for (size_t e = 0; e < n && bad < 3; e++) {
    const uint32_t g = getbits(dt, gpu, e), c = getbits(dt, cpu, e);
    const double at = atol ? atol[e] : 0.0;
    double sr, sc;
    if (!mask[e]) {
      if (g != getbits(dt, init, e)) {
        failf(ts, "%s: element %zu outside the rows was written (0x%x, was 0x%x)", what, e,
              (unsigned)g, (unsigned)getbits(dt, init, e));
        bad++;
      }
      continue;
    }
    if (g == poison_bits(dt)) {
      failf(ts, "%s: element %zu never written", what, e);
      bad++;
      continue;
    }
    if (isnan(ref[e]) || nan_bits(dt, g) || nan_bits(dt, c)) {
      if (!(isnan(ref[e]) && nan_bits(dt, g) && nan_bits(dt, c))) {
        failf(ts, "%s: element %zu: gpu %.9g, cpu %.9g, float64 %.9g (NaN must meet NaN)", what,
              e, (double)bits_to_f(dt, g), (double)bits_to_f(dt, c), ref[e]);
        bad++;
      }
      continue;
    }
    const int okr = close_to(dt, g, ref[e], allow, at, &sr);
    const int okc = close_to(dt, g, (double)bits_to_f(dt, c), 2.0 * allow, 2.0 * at, &sc);
    double scr;
    const int cpu_ok = close_to(dt, c, ref[e], allow, at, &scr);
    if (!okr) {
      char bound[64] = "";
      if (atol) snprintf(bound, sizeof bound, " plus the LayerNorm bound %.3g", at);
      failf(ts, "%s: element %zu: gpu %.9g is %.0f ULP from float64 %.9g (allowed %.0f%s; "
            "cpu %.9g)", what, e, (double)bits_to_f(dt, g), sr, ref[e], allow, bound,
            (double)bits_to_f(dt, c));
      bad++;
      continue;
    }
    if (!okc) {
      if (cpu_ok) {
        /* cannot happen by the triangle inequality; kept as a guard */
        failf(ts, "%s: element %zu: gpu %.9g is %.0f ULP from cpu %.9g (allowed %.0f)", what, e,
              (double)bits_to_f(dt, g), sc, (double)bits_to_f(dt, c), 2.0 * allow);
        bad++;
        continue;
      }
      /* the CPU is the one outside its tolerance: a CPU defect, reported
       * apart so that it is neither hidden nor blamed on the GPU */
      note_cpu(ts, what, e, (double)bits_to_f(dt, c), scr, ref[e], (double)bits_to_f(dt, g), sr);
    }
    if (sr > ts->max_ref && sr <= allow) ts->max_ref = sr;
    if (sc > ts->max_cpu && sc <= 2.0 * allow) ts->max_cpu = sc;
  }
}

/* rstd/mean: one float per row, against the float64 reference (allow ULP
 * plus atol) and the CPU (twice that). */
static void compare_stats(tstate *ts, const char *what, size_t rows, const float *gpu,
                          const float *cpu, const double *ref, double allow, const double *atol)
{
  for (size_t r = 0; r < rows; r++) {
    uint32_t g, c;
    double sr, sc;
    memcpy(&g, &gpu[r], 4);
    memcpy(&c, &cpu[r], 4);
    if (g == POISON_F32) {
      failf(ts, "%s[%zu] never written", what, r);
      return;
    }
    if (isnan(ref[r]) || isnan(cpu[r]) || isnan(gpu[r])) {
      if (!(isnan(ref[r]) && isnan(cpu[r]) && isnan(gpu[r]))) {
        failf(ts, "%s[%zu]: gpu %.9g, cpu %.9g, float64 %.9g (NaN must meet NaN)", what, r,
              (double)gpu[r], (double)cpu[r], ref[r]);
        return;
      }
      continue;
    }
    const double at = atol ? atol[r] : 0.0;
    double scr;
    if (!close_to(KG_F32, g, ref[r], allow, at, &sr)) {
      failf(ts, "%s[%zu]: gpu %.9g is %.0f ULP from float64 %.9g (allowed %.0f; cpu %.9g)", what,
            r, (double)gpu[r], sr, ref[r], allow, (double)cpu[r]);
      return;
    }
    if (!close_to(KG_F32, g, (double)cpu[r], 2.0 * allow, 2.0 * at, &sc)) {
      if (close_to(KG_F32, c, ref[r], allow, at, &scr)) {
        failf(ts, "%s[%zu]: gpu %.9g is %.0f ULP from cpu %.9g", what, r, (double)gpu[r], sc,
              (double)cpu[r]);
        return;
      }
      note_cpu(ts, what, r, (double)cpu[r], scr, ref[r], (double)gpu[r], sr);
    }
  }
}

/* Why: cudaMemcpy from pageable host memory may return before its DMA
 * has landed, and a kernel on a cudaStreamNonBlocking stream does not wait
 * for the legacy stream: without this wait such a kernel can read the
 * buffer's previous contents (seen on an H100 as a rare FALSIFY-QKN-007
 * failure of the created-stream case, a test defect, not a kernel one). */
#define UPLOADS_DONE(ts) CK(ts, cudaDeviceSynchronize())

/* ---- RMSNorm / LayerNorm ---------------------------------------------------- */

typedef struct rcase {
  const char *name;
  size_t rows, xpad, ypad; /* strides: dim + pad */
  size_t off;              /* elements added to every device pointer */
  int in_place, stats, own_stream;
} rcase;

/* Why: one case of a row op: the same buffers through the scalar variant on
 * the host and the CUDA variant on the device, then element-wise compare. */
static void run_rows(tstate *ts, const rcase *rc)
{
  const kg_variant *v = ts->cv;
  const int dt = v->dtype, ln = v->op == KG_OP_LAYERNORM;
  const size_t d = v->dim, es = esz(dt), rows = rc->rows;
  const size_t xs = d + rc->xpad, ys = rc->in_place ? xs : d + rc->ypad;
  const size_t nx = rows * xs + rc->off, ny = rows * ys + rc->off, nw = d + rc->off;
  char name[160];
  void *hx = calloc(nx, es), *hy0 = calloc(ny, es), *hyc = calloc(ny, es), *hyg = calloc(ny, es);
  void *hw = calloc(nw, es), *hb = calloc(nw, es);
  float *cm = calloc(rows, 4), *cr = calloc(rows, 4), *gm = calloc(rows, 4), *gr = calloc(rows, 4);
  unsigned char *mask = calloc(ny, 1);
  double *atol = ln ? calloc(ny, sizeof(double)) : NULL, *mtol = calloc(rows, sizeof(double));
  double *ref = calloc(ny, sizeof(double)), *rmean = calloc(rows, sizeof(double));
  double *rrstd = calloc(rows, sizeof(double));
  void *dx = NULL, *dy = NULL, *dw = NULL, *db = NULL;
  float *dm = NULL, *dr = NULL;
  cudaStream_t st = NULL;
  int rc_call;

  ts->checks++;
  snprintf(name, sizeof name, "%s (rows %zu, x_stride %zu, y_stride %zu, offset %zu%s)",
           rc->name, rows, xs, ys, rc->off, rc->in_place ? ", in place" : "");
  if (!hx || !hy0 || !hyc || !hyg || !hw || !hb || !cm || !cr || !gm || !gr || !mask || !mtol ||
      (ln && !atol) || !ref || !rmean || !rrstd) {
    failf(ts, "%s: out of host memory", name);
    goto cleanup;
  }
  /* inputs: padding poisoned too, so in-place runs prove it is untouched */
  fill_bits(dt, hx, nx, poison_bits(dt));
  for (size_t r = 0; r < rows; r++)
    fill_row(dt, (char *)hx + (rc->off + r * xs) * es, d, row_kind(r));
  fill_weights(dt, (char *)hw + rc->off * es, d, 0.25, 2.0);
  fill_weights(dt, (char *)hb + rc->off * es, d, 0.0, 1.0);
  if (rc->in_place)
    memcpy(hy0, hx, ny * es);
  else
    fill_bits(dt, hy0, ny, poison_bits(dt));
  memcpy(hyc, hy0, ny * es);
  for (size_t r = 0; r < rows; r++) {
    uint32_t p = POISON_F32;
    memcpy(&cm[r], &p, 4);
    memcpy(&cr[r], &p, 4);
    memcpy(&gm[r], &p, 4);
    memcpy(&gr[r], &p, 4);
  }

  /* CPU reference: the scalar twin on the same layout */
  {
    const void *x = (const char *)(rc->in_place ? hyc : hx) + rc->off * es;
    void *y = (char *)hyc + rc->off * es;
    const void *w = (const char *)hw + rc->off * es, *b = (const char *)hb + rc->off * es;
    if (ln)
      ts->sv->fn.layernorm(rows, x, xs, w, b, y, ys, rc->stats ? cm : NULL, rc->stats ? cr : NULL);
    else
      ts->sv->fn.rmsnorm(rows, x, xs, w, y, ys, rc->stats ? cr : NULL);
  }

  /* GPU */
  if (rc->own_stream) CK(ts, cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CK(ts, cudaMalloc(&dy, ny * es));
  CK(ts, cudaMalloc(&dw, nw * es));
  CK(ts, cudaMalloc(&db, nw * es));
  CK(ts, cudaMalloc((void **)&dm, rows * 4));
  CK(ts, cudaMalloc((void **)&dr, rows * 4));
  if (rc->in_place) {
    dx = dy;
  } else {
    CK(ts, cudaMalloc(&dx, nx * es));
    CK(ts, cudaMemcpy(dx, hx, nx * es, cudaMemcpyHostToDevice));
  }
  CK(ts, cudaMemcpy(dy, hy0, ny * es, cudaMemcpyHostToDevice));
  CK(ts, cudaMemcpy(dw, hw, nw * es, cudaMemcpyHostToDevice));
  CK(ts, cudaMemcpy(db, hb, nw * es, cudaMemcpyHostToDevice));
  CK(ts, cudaMemcpy(dm, gm, rows * 4, cudaMemcpyHostToDevice));
  CK(ts, cudaMemcpy(dr, gr, rows * 4, cudaMemcpyHostToDevice));
  UPLOADS_DONE(ts);
  {
    const void *x = (const char *)dx + rc->off * es;
    void *y = (char *)dy + rc->off * es;
    const void *w = (const char *)dw + rc->off * es, *b = (const char *)db + rc->off * es;
    if (ln)
      rc_call = v->fn.layernorm_cuda(rows, x, xs, w, b, y, ys, rc->stats ? dm : NULL,
                                     rc->stats ? dr : NULL, (void *)st);
    else
      rc_call = v->fn.rmsnorm_cuda(rows, x, xs, w, y, ys, rc->stats ? dr : NULL, (void *)st);
  }
  CK(ts, (cudaError_t)rc_call);
  CK(ts, st ? cudaStreamSynchronize(st) : cudaDeviceSynchronize());
  CK(ts, cudaMemcpy(hyg, dy, ny * es, cudaMemcpyDeviceToHost));
  CK(ts, cudaMemcpy(gm, dm, rows * 4, cudaMemcpyDeviceToHost));
  CK(ts, cudaMemcpy(gr, dr, rows * 4, cudaMemcpyDeviceToHost));

  for (size_t r = 0; r < rows; r++) {
    double mx = 0.0;
    const size_t xe = rc->off + r * xs, ye = rc->off + r * ys;
    ref_row(v, (const char *)hx + xe * es, (const char *)hw + rc->off * es,
            (const char *)hb + rc->off * es, ref + ye, &rmean[r], &rrstd[r]);
    for (size_t i = 0; i < d; i++) {
      const double xv = fabs((double)getf(dt, hx, xe + i));
      mask[ye + i] = 1;
      if (xv > mx && isfinite(xv)) mx = xv;
      if (ln && isfinite(rrstd[r])) {
        /* x - mean cancels: the design's bound, with float64 stats, plus
         * |gamma| for the error of the f32-summed mean itself (about
         * eps * sigma, times rstd <= 1/sigma) that it leaves out */
        const double g = fabs((double)getf(dt, hw, rc->off + i));
        const double b = fabs((double)getf(dt, hb, rc->off + i));
        atol[ye + i] = 8.0 * FLT_EPSILON * (g * ((xv + fabs(rmean[r])) * rrstd[r] + 1.0) + b);
      }
    }
    mtol[r] = 8.0 * FLT_EPSILON * mx;
  }
  compare(ts, name, dt, ny, hyg, hyc, hy0, mask, ref, atol);
  if (rc->stats) {
    char what[200];
    snprintf(what, sizeof what, "%s rstd", name);
    compare_stats(ts, what, rows, gr, cr, rrstd, ln ? 16.0 : 8.0, NULL);
    if (ln) {
      snprintf(what, sizeof what, "%s mean", name);
      compare_stats(ts, what, rows, gm, cm, rmean, 8.0, mtol);
    }
  } else {
    /* NULL rstd/mean: the device arrays must be untouched */
    for (size_t r = 0; r < rows; r++) {
      uint32_t a, b;
      memcpy(&a, &gr[r], 4);
      memcpy(&b, &gm[r], 4);
      if (a != POISON_F32 || b != POISON_F32) {
        failf(ts, "%s: rstd/mean written although NULL was passed", name);
        break;
      }
    }
  }

cleanup:
  if (st) cudaStreamDestroy(st);
  if (dx && dx != dy) cudaFree(dx);
  cudaFree(dy);
  cudaFree(dw);
  cudaFree(db);
  cudaFree(dm);
  cudaFree(dr);
  free(hx);
  free(hy0);
  free(hyc);
  free(hyg);
  free(hw);
  free(hb);
  free(cm);
  free(cr);
  free(gm);
  free(gr);
  free(mask);
  free(atol);
  free(mtol);
  free(ref);
  free(rmean);
  free(rrstd);
}

/* ---- QK-norm ---------------------------------------------------------------- */

typedef struct qcase {
  const char *name;
  size_t tokens, pad;      /* stride = natural + pad */
  size_t off;              /* elements added to q and k */
  int fused, own_stream;   /* fused: Q, K, V of a token side by side (token-major) */
} qcase;

/* Why: the buffers and strides of one QK case.  Fused token-major: one
 * buffer, token t at t*stride, Q heads then K heads then V heads.  Else Q
 * and K in separate buffers of the variant's layout. */
typedef struct qbufs {
  size_t nq, nk;        /* elements of the q and k buffers (nk 0 when fused) */
  size_t q_off, k_off;  /* where q and k begin */
  size_t q_stride, k_stride;
} qbufs;

static qbufs qk_layout(const kg_variant *v, const qcase *qc)
{
  qbufs b;
  const size_t d = v->dim, nh = v->num_heads, nkv = v->num_kv_heads, t = qc->tokens;
  if (qc->fused) {
    b.q_stride = b.k_stride = (nh + 2 * nkv) * d + qc->pad;
    b.nq = t * b.q_stride + qc->off;
    b.nk = 0;
    b.q_off = qc->off;
    b.k_off = qc->off + nh * d;
  } else if (v->layout == KG_TOKEN_MAJOR) {
    b.q_stride = nh * d + qc->pad;
    b.k_stride = nkv * d + qc->pad;
    b.nq = t * b.q_stride + qc->off;
    b.nk = t * b.k_stride + qc->off;
    b.q_off = b.k_off = qc->off;
  } else {
    b.q_stride = b.k_stride = t * d + qc->pad;
    b.nq = nh * b.q_stride + qc->off;
    b.nk = nkv * b.k_stride + qc->off;
    b.q_off = b.k_off = qc->off;
  }
  return b;
}

static size_t head_at(const kg_variant *v, size_t stride, size_t t, size_t h)
{
  if (v->layout == KG_TOKEN_MAJOR) return t * stride + h * v->dim;
  return h * stride + t * v->dim;
}

/* Why: fill every head row with the row kinds (row index = the head's
 * position in the kernel's (token, head) order) and mark them in mask. */
static void fill_heads(const kg_variant *v, void *buf, unsigned char *mask, size_t base,
                       size_t stride, size_t tokens, size_t nh, size_t first)
{
  const int dt = v->dtype;
  const size_t es = esz(dt);
  for (size_t t = 0; t < tokens; t++)
    for (size_t h = 0; h < nh; h++) {
      const size_t e = base + head_at(v, stride, t, h);
      fill_row(dt, (char *)buf + e * es, v->dim, row_kind(first + t * (v->num_heads + v->num_kv_heads) + h));
      if (mask) memset(mask + e, 1, v->dim);
    }
}

/* Why: the float64 reference of every head row of one tensor (Q or K). */
static void ref_heads(const kg_variant *v, const void *buf, double *ref, size_t base,
                      size_t stride, size_t tokens, size_t nh, const void *w)
{
  const size_t es = esz(v->dtype);
  double mean, rstd;
  for (size_t t = 0; t < tokens; t++)
    for (size_t h = 0; h < nh; h++) {
      const size_t e = base + head_at(v, stride, t, h);
      ref_row(v, (const char *)buf + e * es, w, w, ref + e, &mean, &rstd);
    }
}

static void run_qk(tstate *ts, const qcase *qc)
{
  const kg_variant *v = ts->cv;
  const int dt = v->dtype;
  const size_t es = esz(dt), d = v->dim, T = qc->tokens;
  const qbufs b = qk_layout(v, qc);
  char name[200];
  void *q0 = calloc(b.nq, es), *qc_ = calloc(b.nq, es), *qg = calloc(b.nq, es);
  void *k0 = calloc(b.nk + 1, es), *kc = calloc(b.nk + 1, es), *kg = calloc(b.nk + 1, es);
  void *hw = calloc(2 * d + qc->off, es);
  unsigned char *mq = calloc(b.nq, 1), *mk = calloc(b.nk + 1, 1);
  double *rq = calloc(b.nq, sizeof(double)), *rk = calloc(b.nk + 1, sizeof(double));
  void *dq = NULL, *dk = NULL, *dw = NULL, *q2 = NULL, *q2g = NULL;
  cudaStream_t st = NULL;
  int rc_call;

  ts->checks++;
  snprintf(name, sizeof name, "%s (tokens %zu, q_stride %zu, k_stride %zu, offset %zu%s)",
           qc->name, T, b.q_stride, b.k_stride, qc->off, qc->fused ? ", fused QKV" : "");
  if (!q0 || !qc_ || !qg || !k0 || !kc || !kg || !hw || !mq || !mk || !rq || !rk) {
    failf(ts, "%s: out of host memory", name);
    goto cleanup;
  }
  fill_bits(dt, q0, b.nq, poison_bits(dt)); /* V, padding: must survive */
  fill_bits(dt, k0, b.nk + 1, poison_bits(dt));
  {
    void *kbuf = qc->fused ? q0 : k0;
    unsigned char *kmask = qc->fused ? mq : mk;
    fill_heads(v, q0, mq, b.q_off, b.q_stride, T, v->num_heads, 0);
    fill_heads(v, kbuf, kmask, b.k_off, b.k_stride, T, v->num_kv_heads, v->num_heads);
  }
  fill_weights(dt, (char *)hw + qc->off * es, 2 * d, 0.25, 2.0);
  memcpy(qc_, q0, b.nq * es);
  memcpy(kc, k0, (b.nk + 1) * es);

  {
    void *q = (char *)qc_ + b.q_off * es;
    void *k = (char *)(qc->fused ? qc_ : kc) + b.k_off * es;
    const void *qw = (const char *)hw + qc->off * es, *kw = (const char *)hw + (qc->off + d) * es;
    ts->sv->fn.qk_norm(T, q, b.q_stride, k, b.k_stride, qw, kw);
  }

  if (qc->own_stream) CK(ts, cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CK(ts, cudaMalloc(&dq, b.nq * es));
  CK(ts, cudaMalloc(&dk, (b.nk + 1) * es));
  CK(ts, cudaMalloc(&dw, (2 * d + qc->off) * es));
  CK(ts, cudaMemcpy(dq, q0, b.nq * es, cudaMemcpyHostToDevice));
  CK(ts, cudaMemcpy(dk, k0, (b.nk + 1) * es, cudaMemcpyHostToDevice));
  CK(ts, cudaMemcpy(dw, hw, (2 * d + qc->off) * es, cudaMemcpyHostToDevice));
  UPLOADS_DONE(ts);
  {
    void *q = (char *)dq + b.q_off * es;
    void *k = (char *)(qc->fused ? dq : dk) + b.k_off * es;
    const void *qw = (const char *)dw + qc->off * es, *kw = (const char *)dw + (qc->off + d) * es;
    rc_call = v->fn.qk_norm_cuda(T, q, b.q_stride, k, b.k_stride, qw, kw, (void *)st);
  }
  CK(ts, (cudaError_t)rc_call);
  CK(ts, st ? cudaStreamSynchronize(st) : cudaDeviceSynchronize());
  CK(ts, cudaMemcpy(qg, dq, b.nq * es, cudaMemcpyDeviceToHost));
  CK(ts, cudaMemcpy(kg, dk, (b.nk + 1) * es, cudaMemcpyDeviceToHost));
  {
    char what[240];
    snprintf(what, sizeof what, "%s q%s", name, qc->fused ? "kv" : "");
    ref_heads(v, q0, rq, b.q_off, b.q_stride, T, v->num_heads, (const char *)hw + qc->off * es);
    ref_heads(v, qc->fused ? q0 : k0, qc->fused ? rq : rk, b.k_off, b.k_stride, T,
              v->num_kv_heads, (const char *)hw + (qc->off + d) * es);
    compare(ts, what, dt, b.nq, qg, qc_, q0, mq, rq, NULL);
    snprintf(what, sizeof what, "%s k", name);
    compare(ts, what, dt, b.nk + 1, kg, kc, k0, mk, rk, NULL);
  }

  /* FALSIFY-QKN-007: per-head independence.  Re-randomize every head of
   * the q buffer (and of K, when fused) but the first Q head of the first
   * token and, fused, the last K head of the last token: those must come
   * out bit-identical. */
  if (!ts->failed) {
    const size_t hq = b.q_off + head_at(v, b.q_stride, 0, 0);
    const size_t hk = b.k_off + head_at(v, b.k_stride, T - 1, v->num_kv_heads - 1);
    q2 = calloc(b.nq, es);
    q2g = calloc(b.nq, es);
    if (!q2 || !q2g) {
      failf(ts, "QKN-007: out of host memory");
    } else {
      memcpy(q2, q0, b.nq * es);
      fill_heads(v, q2, NULL, b.q_off, b.q_stride, T, v->num_heads, 8);
      memcpy((char *)q2 + hq * es, (char *)q0 + hq * es, d * es);
      if (qc->fused) {
        fill_heads(v, q2, NULL, b.k_off, b.k_stride, T, v->num_kv_heads, 8);
        memcpy((char *)q2 + hk * es, (char *)q0 + hk * es, d * es);
      }
      CK(ts, cudaMemcpy(dq, q2, b.nq * es, cudaMemcpyHostToDevice));
      UPLOADS_DONE(ts);
      rc_call = v->fn.qk_norm_cuda(T, (char *)dq + b.q_off * es, b.q_stride,
                                   (char *)(qc->fused ? dq : dk) + b.k_off * es, b.k_stride,
                                   (const char *)dw + qc->off * es,
                                   (const char *)dw + (qc->off + d) * es, (void *)st);
      CK(ts, (cudaError_t)rc_call);
      CK(ts, st ? cudaStreamSynchronize(st) : cudaDeviceSynchronize());
      CK(ts, cudaMemcpy(q2g, dq, b.nq * es, cudaMemcpyDeviceToHost));
      if (memcmp((char *)q2g + hq * es, (char *)qg + hq * es, d * es) != 0 ||
          (qc->fused && memcmp((char *)q2g + hk * es, (char *)qg + hk * es, d * es) != 0))
        failf(ts, "%s: FALSIFY-QKN-007: a head's result changed when only other heads did",
              name);
    }
  }

cleanup:
  if (st) cudaStreamDestroy(st);
  cudaFree(dq);
  cudaFree(dk);
  cudaFree(dw);
  free(q0);
  free(qc_);
  free(qg);
  free(k0);
  free(kc);
  free(kg);
  free(hw);
  free(mq);
  free(mk);
  free(q2);
  free(q2g);
  free(rq);
  free(rk);
}

/* Why: a zero-sized call is a no-op that succeeds without a launch. */
static void run_empty(tstate *ts)
{
  const kg_variant *v = ts->cv;
  const int dt = v->dtype;
  const size_t es = esz(dt), n = 64;
  void *h = calloc(n, es), *hg = calloc(n, es), *dbuf = NULL;
  int r;
  ts->checks++;
  if (!h || !hg) {
    failf(ts, "empty call: out of host memory");
    goto cleanup;
  }
  fill_bits(dt, h, n, poison_bits(dt));
  CK(ts, cudaMalloc(&dbuf, n * es));
  CK(ts, cudaMemcpy(dbuf, h, n * es, cudaMemcpyHostToDevice));
  if (v->op == KG_OP_QK_NORM)
    r = v->fn.qk_norm_cuda(0, dbuf, 0, dbuf, 0, dbuf, dbuf, NULL);
  else if (v->op == KG_OP_RMSNORM)
    r = v->fn.rmsnorm_cuda(0, dbuf, 0, dbuf, dbuf, 0, NULL, NULL);
  else
    r = v->fn.layernorm_cuda(0, dbuf, 0, dbuf, dbuf, dbuf, 0, NULL, NULL, NULL);
  if (r != 0) failf(ts, "0 rows: returned %d, want 0", r);
  CK(ts, cudaDeviceSynchronize());
  CK(ts, cudaMemcpy(hg, dbuf, n * es, cudaMemcpyDeviceToHost));
  if (memcmp(h, hg, n * es) != 0) failf(ts, "0 rows: the buffer was written");
cleanup:
  cudaFree(dbuf);
  free(h);
  free(hg);
}

/* ---- driver ----------------------------------------------------------------- */

static const char *op_name(int op)
{
  return op == KG_OP_QK_NORM ? "qk_norm" : op == KG_OP_RMSNORM ? "rmsnorm" : "layernorm";
}
static const char *dt_name(int dt) { return dt == KG_F32 ? "f32" : dt == KG_BF16 ? "bf16" : "f16"; }

static const kg_variant *scalar_twin(const kg_variant *cv)
{
  for (size_t i = 0; i < KG_PACK_NUM; i++) {
    const kg_variant *s = &KG_PACK_VARIANTS[i];
    if (s->isa == KG_ISA_SCALAR && strcmp(s->kernel, cv->kernel) == 0) return s;
  }
  return NULL;
}

/* Why: the table rows of the two backends must describe the same kernel. */
static int same_kernel(const kg_variant *a, const kg_variant *b)
{
  return a->op == b->op && a->dtype == b->dtype && a->rounding == b->rounding &&
         a->layout == b->layout && a->dim == b->dim && a->num_heads == b->num_heads &&
         a->num_kv_heads == b->num_kv_heads && a->eps == b->eps &&
         a->weight_offset == b->weight_offset;
}

static void describe(const kg_variant *v, char *buf, size_t n)
{
  if (v->op == KG_OP_QK_NORM)
    snprintf(buf, n, "qk_norm %s %zu x %zu/%zu heads %s %s", dt_name(v->dtype), v->dim,
             v->num_heads, v->num_kv_heads, v->layout == KG_HEAD_MAJOR ? "head_major" : "token_major",
             v->rounding == KG_ROUND_HF ? "hf" : "single");
  else
    snprintf(buf, n, "%s %s %zu %s", op_name(v->op), dt_name(v->dtype), v->dim,
             v->rounding == KG_ROUND_HF ? "hf" : "single");
}

static void run_variant(tstate *ts)
{
  const kg_variant *v = ts->cv;
  /* vector width of the layout: pads of 8 elements keep every stride
   * aligned for it; pad 1 and offset 1 force the element layout */
  static const rcase rcases[] = {
    { "aligned", 1, 0, 0, 0, 0, 1, 0 },
    { "aligned, padded", BIG(67, 11), 8, 16, 0, 0, 1, 0 },
    { "in place", 19, 8, 0, 0, 1, 1, 1 },
    { "misaligned, odd strides", 13, 1, 3, 1, 0, 1, 0 },
    { "misaligned, in place", 9, 3, 0, 1, 1, 1, 1 },
    { "no rstd/mean", 11, 0, 0, 0, 0, 0, 0 },
    { "many rows", BIG(1029, 13), 0, 0, 0, 0, 1, 0 },
    /* more rows than KG_CU_FEW_ROWS (4096; 64 under emulation): the
     * several-rows-per-warp kernels of short rows, both layouts */
    { "many short rows", BIG(4500, 70), 0, 0, 0, 0, 1, 0 },
    { "many short rows, misaligned", BIG(4500, 70), 1, 3, 1, 0, 1, 0 },
    /* more rows than KG_CU_FEW_WIDE_ROWS (256; 9 under emulation): the
     * element layout of block-row LayerNorm without its twin */
    { "misaligned, over the wide bound", BIG(300, 10), 1, 3, 1, 0, 1, 0 },
    /* pointers 4 or 8 bytes past 16-byte alignment (16-bit: offsets 2 and
     * 4; f32: 8 bytes at offset 2): short rows laid side by side need 16,
     * so these take the whole-warp vectors ("vecn") where a row has them,
     * both kernels of the twin */
    { "offset 2", 9, 0, 0, 2, 0, 1, 0 },
    { "offset 4", 9, 0, 0, 4, 0, 1, 0 },
    { "many short rows, offset 2", BIG(4500, 70), 0, 0, 2, 0, 1, 0 },
    { "many short rows, offset 4", BIG(4500, 70), 0, 0, 4, 0, 1, 0 },
  };
  static const qcase qcases[] = {
    { "decode, fused QKV", 1, 0, 0, 1, 0 },
    { "fused QKV, padded", BIG(37, 13), 8, 0, 1, 1 },
    { "separate Q and K", 23, 0, 0, 0, 0 },
    { "separate, misaligned", 9, 1, 1, 0, 1 },
    { "fused QKV, misaligned", 5, 3, 1, 1, 0 },
    { "prefill, fused QKV", BIG(2048, 48), 0, 0, 1, 0 },
    /* over KG_CU_FEW_ROWS rows for every head count here: the element
     * layout's several-rows-per-warp kernel */
    { "prefill, separate, misaligned", BIG(1400, 9), 1, 1, 0, 0 },
    /* q and k 4 or 8 bytes past 16-byte alignment (see the row cases) */
    { "fused QKV, offset 2", 5, 0, 2, 1, 0 },
    { "separate, offset 4", 3, 0, 4, 0, 0 },
    { "prefill, fused QKV, offset 4", BIG(130, 3), 0, 4, 1, 0 },
    { "prefill, separate, offset 2", BIG(130, 3), 0, 2, 0, 0 },
  };
  rng_state = 0x6b67656e00000000ull ^ (uint64_t)strlen(v->symbol) * 0x100000001b3ull;
  for (const char *p = v->symbol; *p; p++) rng_state = rng_state * 31 + (unsigned char)*p;
  run_empty(ts);
  if (v->op == KG_OP_QK_NORM) {
    for (size_t i = 0; i < NVARS(qcases) && !ts->cuda_error; i++) {
      if (v->layout == KG_HEAD_MAJOR && qcases[i].fused) {
        /* fused QKV is a token-major buffer: run it as separate buffers */
        qcase c = qcases[i];
        c.fused = 0;
        run_qk(ts, &c);
      } else {
        run_qk(ts, &qcases[i]);
      }
    }
  } else {
    for (size_t i = 0; i < NVARS(rcases) && !ts->cuda_error; i++) {
      /* short rows only: wide rows have no twin (one block per row) and
       * 4500 of them would cost seconds of scalar reference */
      if (!strncmp(rcases[i].name, "many short", 10) && v->dim > 1024) continue;
      run_rows(ts, &rcases[i]);
    }
  }
}

int main(void)
{
  int ndev = 0, npass = 0, nfail = 0, nskip = 0;
  char reason[512] = "";
  struct cudaDeviceProp prop;
  cudaError_t e;
  /* KGEN_CUDA_FILTER=substring: run only the variants whose symbol has it */
  const char *filter = getenv("KGEN_CUDA_FILTER");

  memset(&prop, 0, sizeof prop);
  e = cudaGetDeviceCount(&ndev);

  if (e != cudaSuccess)
    snprintf(reason, sizeof reason, "no usable CUDA device (cudaGetDeviceCount: %s%s)",
             cudaGetErrorString(e),
             (int)e == 35 ? "; i.e. no NVIDIA driver, or one older than this CUDA runtime" : "");
  else if (ndev == 0)
    snprintf(reason, sizeof reason, "no CUDA device (cudaGetDeviceCount returned 0)");
  if (!reason[0]) {
    e = cudaGetDeviceProperties(&prop, 0);
    if (e != cudaSuccess)
      snprintf(reason, sizeof reason, "cudaGetDeviceProperties: %s", cudaGetErrorString(e));
    else if (prop.major < 8)
      snprintf(reason, sizeof reason, "device 0 (%s) is sm_%d%d; the pack is built for sm_80+",
               prop.name, prop.major, prop.minor);
  }
  if (reason[0]) {
    for (size_t i = 0; i < KG_PACK_CUDA_NUM; i++, nskip++)
      printf("SKIPPED " BACKEND ": %s: %s\n", KG_PACK_CUDA_VARIANTS[i].symbol, reason);
    printf(BACKEND ": 0 passed, 0 failed, %d skipped (%s)\n", nskip, reason);
    return 0;
  }
  printf(BACKEND ": device 0: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor,
         prop.multiProcessorCount);

  for (size_t i = 0; i < KG_PACK_CUDA_NUM; i++) {
    tstate ts;
    char desc[160];
    if (filter && !strstr(KG_PACK_CUDA_VARIANTS[i].symbol, filter)) {
      printf("SKIPPED " BACKEND ": %s: not selected by KGEN_CUDA_FILTER=%s\n",
             KG_PACK_CUDA_VARIANTS[i].symbol, filter);
      nskip++;
      continue;
    }
    memset(&ts, 0, sizeof ts);
    ts.cv = &KG_PACK_CUDA_VARIANTS[i];
    describe(ts.cv, desc, sizeof desc);
    ts.sv = scalar_twin(ts.cv);
    if (ts.cv->isa != KG_ISA_CUDA) {
      failf(&ts, "variant table row has isa %d, want KG_ISA_CUDA", ts.cv->isa);
    } else if (!ts.sv) {
      failf(&ts, "no scalar variant of kernel %s in the pack", ts.cv->kernel);
    } else if (!same_kernel(ts.cv, ts.sv)) {
      failf(&ts, "the CUDA and scalar table rows of %s differ", ts.cv->kernel);
    } else {
      run_variant(&ts);
    }
    if (ts.failed) {
      printf("FAIL " BACKEND ": %s (%s): %d of %d cases failed; first: %s\n", ts.cv->symbol, desc,
             ts.failed, ts.checks, ts.first_error);
      nfail++;
    } else {
      printf("PASS " BACKEND ": %s (%s): %d cases, max %.0f ULP from float64, %.0f from scalar\n",
             ts.cv->symbol, desc, ts.checks, ts.max_ref, ts.max_cpu);
      npass++;
    }
    if (ts.cpu_bad)
      printf("WARN cpu-scalar: %s: %ld results outside the CPU's own tolerance of float64 "
             "(the CUDA results there were inside theirs); worst: %s\n",
             ts.sv ? ts.sv->symbol : "?", ts.cpu_bad, ts.cpu_note);
    if (ts.cuda_error) {
      /* a sticky error (e.g. an illegal address) ends every later test */
      if (cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess) {
        for (size_t j = i + 1; j < KG_PACK_CUDA_NUM; j++, nfail++)
          printf("FAIL " BACKEND ": %s: not run, the CUDA context is broken by an earlier error\n",
                 KG_PACK_CUDA_VARIANTS[j].symbol);
        break;
      }
    }
  }
  printf(BACKEND ": %d passed, %d failed, %d skipped\n", npass, nfail, nskip);
  return nfail ? 1 : 0;
}
