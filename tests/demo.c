/* demo.c: run every variant of one pack on sample data and print a table:
 * variant, ISA, max error against the float64 reference (tests/ref.c), and
 * ns per call.  The timing is informative only: speed claims come from
 * `make bench`.  Built against the pack named by KG_PACK_HEADER /
 * KG_PACK_VARIANTS / KG_PACK_NUM. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include KG_PACK_HEADER
#include "ref.h"

enum { DEMO_ROWS = 16, DEMO_TOKENS = 4 };

/* One prepared problem for a variant: inputs, outputs and the reference. */
typedef struct demo_case {
  size_t n_in;     /* elements of the input/output buffer */
  void *in, *out;  /* input (kept pristine) and the buffer the kernel writes */
  void *w, *w2;    /* weights (rmsnorm: w; qk_norm: q_w, k_w; LN: gamma, beta) */
  double *ref;     /* reference value per element (NAN where not compared) */
  double mu[DEMO_ROWS], rs[DEMO_ROWS]; /* layernorm: reference mean and rstd */
  size_t rows, stride, k_off, k_stride;
} demo_case;

/* Why: seconds from a monotonic clock, for the informative ns/call column. */
static double demo_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Why: sample activations like a model's: normal values with a few larger
 * channels, in the variant's storage type. */
static void demo_fill(ref_rng *r, int dt, void *p, size_t n, double scale)
{
  for (size_t i = 0; i < n; i++) {
    double v = ref_rng_normal(r) * scale;
    if (i % 61 == 7) v *= 12.0;
    ref_store(dt, p, i, v);
  }
}

/* Why: build the inputs and the float64 answer for one variant. */
static void demo_prepare(const kg_variant *v, demo_case *c, ref_rng *r)
{
  const int dt = v->dtype;
  const size_t es = ref_esize(dt);
  memset(c, 0, sizeof *c);
  if (v->op == KG_OP_QK_NORM) {
    /* fused QKV, token-major: [t][q heads | k heads | v heads] */
    const size_t hd = v->dim, hq = v->num_heads, hk = v->num_kv_heads;
    c->rows = DEMO_TOKENS;
    c->stride = (hq + 2 * hk) * hd;
    c->k_off = hq * hd;
    c->k_stride = c->stride;
    if (v->layout == KG_HEAD_MAJOR) { /* separate Q and K tensors */
      c->stride = DEMO_TOKENS * hd;
      c->k_off = hq * c->stride;
      c->k_stride = c->stride;
    }
    c->n_in = v->layout == KG_HEAD_MAJOR ? (hq + hk) * c->stride : DEMO_TOKENS * c->stride;
  } else {
    c->rows = DEMO_ROWS;
    c->stride = v->dim;
    c->n_in = DEMO_ROWS * v->dim;
  }
  c->in = malloc(c->n_in * es);
  c->out = malloc(c->n_in * es);
  c->w = malloc(v->dim * es);
  c->w2 = malloc(v->dim * es);
  c->ref = malloc(c->n_in * sizeof(double));
  if (!c->in || !c->out || !c->w || !c->w2 || !c->ref) {
    fprintf(stderr, "demo: out of memory\n");
    exit(1);
  }
  demo_fill(r, dt, c->in, c->n_in, 1.0);
  for (size_t i = 0; i < v->dim; i++) {
    ref_store(dt, c->w, i, 1.0 + 0.25 * ref_rng_normal(r));
    ref_store(dt, c->w2, i, v->op == KG_OP_LAYERNORM ? 0.1 * ref_rng_normal(r)
                                                     : 1.0 + 0.25 * ref_rng_normal(r));
  }
  for (size_t i = 0; i < c->n_in; i++) c->ref[i] = NAN;
  if (v->op == KG_OP_RMSNORM) {
    for (size_t row = 0; row < c->rows; row++)
      ref_rmsnorm_row(dt, v->rounding, v->dim, ref_cat(dt, c->in, row * c->stride), c->w,
                      v->eps, v->weight_offset, c->ref + row * c->stride);
  } else if (v->op == KG_OP_LAYERNORM) {
    for (size_t row = 0; row < c->rows; row++)
      ref_layernorm_row(dt, v->dim, ref_cat(dt, c->in, row * c->stride), c->w, c->w2, v->eps,
                        c->ref + row * c->stride, &c->mu[row], &c->rs[row]);
  } else {
    ref_qk_norm(dt, v->rounding, v->layout, v->dim, v->num_heads, v->num_kv_heads, c->rows,
                c->in, c->stride, ref_cat(dt, c->in, c->k_off), c->k_stride, c->w, c->w2,
                v->eps, v->weight_offset, c->ref, c->ref + c->k_off);
  }
}

/* Why: one call of the variant on c->out (a fresh copy of the input). */
static void demo_call(const kg_variant *v, demo_case *c)
{
  const int dt = v->dtype;
  if (v->op == KG_OP_RMSNORM)
    v->fn.rmsnorm(c->rows, c->in, c->stride, c->w, c->out, c->stride, NULL);
  else if (v->op == KG_OP_LAYERNORM)
    v->fn.layernorm(c->rows, c->in, c->stride, c->w, c->w2, c->out, c->stride, NULL, NULL);
  else
    v->fn.qk_norm(c->rows, c->out, c->stride, ref_at(dt, c->out, c->k_off), c->k_stride, c->w,
                  c->w2);
}

/* Why: the largest error over compared elements: ULP of f32 for f32, ULP
 * of the storage type against the correctly rounded reference otherwise. */
static double demo_error(const kg_variant *v, const demo_case *c)
{
  double worst = 0.0;
  for (size_t i = 0; i < c->n_in; i++) {
    if (isnan(c->ref[i])) continue;
    double e;
    if (v->op == KG_OP_LAYERNORM) {
      /* x - mean cancels: in units of eps32 * (|g| (|x| + |mean|) rstd + |b|),
       * plus one ULP of a 16-bit storage type (the DESIGN.md bound is 16) */
      const size_t d = i % v->dim, row = i / v->dim;
      const double g = fabs(ref_load(v->dtype, c->w, d)), b = fabs(ref_load(v->dtype, c->w2, d));
      const double x = fabs(ref_load(v->dtype, c->in, i));
      const double unit = 0x1p-23 * (g * (x + fabs(c->mu[row])) * c->rs[row] + b);
      double err = fabs(ref_load(v->dtype, c->out, i) - c->ref[i]);
      if (v->dtype != KG_F32) err -= ref_ulp_T(v->dtype, c->ref[i]);
      e = err > 0 ? err / unit : 0.0;
    } else if (v->dtype == KG_F32)
      e = ref_ulp_dist_f32(((const float *)c->out)[i], c->ref[i]);
    else
      e = ref_bits_dist(v->dtype, ref_bits(v->dtype, c->out, i), ref_to_bits(v->dtype, c->ref[i]));
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

int main(void)
{
  ref_rng rng;
  ref_rng_seed(&rng, 20261121u);
  printf("%-34s %-7s %-6s %-12s %10s\n", "variant", "isa", "dtype", "max error", "ns/call");
  int failed = 0;
  for (size_t i = 0; i < KG_PACK_NUM; i++) {
    const kg_variant *v = &KG_PACK_VARIANTS[i];
    const char *isa = v->isa == KG_ISA_AUTO ? "auto" : kg_cpu_isa_name(v->isa);
    if (v->isa != KG_ISA_AUTO && !kg_cpu_has(v->isa)) {
      printf("%-34s %-7s %-6s SKIPPED: this CPU lacks %s\n", v->symbol, isa,
             ref_dtype_name(v->dtype), isa);
      continue;
    }
    demo_case c;
    demo_prepare(v, &c, &rng);
    const size_t bytes = c.n_in * ref_esize(v->dtype);
    memcpy(c.out, c.in, bytes);
    demo_call(v, &c);
    const double err = demo_error(v, &c);
    /* informative timing: best of 5 batches of repeated calls */
    double best = 1e30;
    for (int b = 0; b < 5; b++) {
      const int reps = 50;
      const double t0 = demo_now();
      for (int k = 0; k < reps; k++) demo_call(v, &c);
      const double t = (demo_now() - t0) / reps;
      if (t < best) best = t;
    }
    const double tol = v->op == KG_OP_LAYERNORM ? 16.0
                       : v->dtype == KG_F32 ? 8.0 : (v->rounding == KG_ROUND_HF ? 2.0 : 1.0);
    const int ok = err <= tol;
    failed |= !ok;
    printf("%-34s %-7s %-6s %6.2f %-5s %10.0f%s\n", v->symbol, isa, ref_dtype_name(v->dtype), err,
           v->op == KG_OP_LAYERNORM ? "ln" : v->dtype == KG_F32 ? "ulp" : "ulp16", best * 1e9,
           ok ? "" : "  (over tolerance)");
    free(c.in);
    free(c.out);
    free(c.w);
    free(c.w2);
    free(c.ref);
  }
  printf("(errors vs a float64 reference: ulp = f32 ULP, ulp16 = ULP of bf16/f16 vs the\n"
         " correctly rounded value, ln = units of eps32*(|g|(|x|+|mean|)rstd+|b|) beyond one\n"
         " storage ULP; ns/call is informative only, speed is measured by make bench)\n");
  return failed;
}
