/* attn_prep.c: the attention pre-processing of one Qwen3-0.6B layer, the
 * way an ahead-of-time inference engine runs it with a vendored kgen pack.
 *
 *   x (bf16 hidden states) -> input RMSNorm (pack) -> h
 *   h @ W_qkv^T -> one fused bf16 QKV buffer per token: [Q heads | K | V]
 *   qk_norm (pack) on Q and K in place, V untouched
 *
 * The projection uses random weights.  Both pack steps are checked against
 * a float64 computation written here (bf16 output within 1 ULP of the
 * correctly rounded value); qk_norm is run through the dispatcher and
 * through every variant this CPU can execute.  Exit status 0 when all pass.
 * Nothing here is kgen-specific but the header and the symbol names. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qwen3_0_6b.h"

#define HIDDEN QWEN3_0_6B_RMSNORM_DIM
#define HEAD_DIM QWEN3_0_6B_QK_NORM_HEAD_DIM
#define NQ QWEN3_0_6B_QK_NORM_NUM_HEADS
#define NKV QWEN3_0_6B_QK_NORM_NUM_KV_HEADS
#define QKV ((NQ + 2 * NKV) * HEAD_DIM) /* fused row: Q, then K, then V */
#define EPS 1e-6                        /* rms_norm_eps of the model */
#define MAX_TOKENS 37

/* ---- bf16 by hand (the check stays independent of the pack) ----------- */

static float bf16_to_float(uint16_t b)
{
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Why: round-to-nearest-even of a float to bf16 (test data only; finite). */
static uint16_t bf16_from_float(float f)
{
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

/* Why: the correctly rounded bf16 of a double (8 significant bits, ties to
 * even via rint), without a detour through float. */
static uint16_t bf16_from_double(double d)
{
  if (d == 0.0) return signbit(d) ? 0x8000u : 0;
  int e;
  double m = frexp(fabs(d), &e);             /* |d| = m * 2^e, m in [0.5, 1) */
  double q = ldexp(rint(ldexp(m, 8)), e - 8); /* exact in float */
  uint16_t b = bf16_from_float((float)q);     /* exact: q has 8 bits */
  return (uint16_t)(d < 0 ? (b | 0x8000u) : b);
}

/* Why: distance in representable bf16 steps (sign-magnitude to ordered). */
static int bf16_steps(uint16_t a, uint16_t b)
{
  int ka = (a & 0x8000u) ? -(int)(a & 0x7fffu) : (int)a;
  int kb = (b & 0x8000u) ? -(int)(b & 0x7fffu) : (int)b;
  return abs(ka - kb);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
/* Why: a fixed, portable sequence (xorshift64*), uniform in [-1, 1). */
static double uniform(void)
{
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (double)((rng * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-52 - 1.0;
}

/* ---- float64 reference ------------------------------------------------- */

/* Why: y = w * x / sqrt(mean(x^2) + eps) in double, over n bf16 values. */
static void ref_rmsnorm(const uint16_t *x, const uint16_t *w, size_t n, double *y)
{
  double ss = 0;
  for (size_t i = 0; i < n; i++) {
    double v = bf16_to_float(x[i]);
    ss += v * v;
  }
  double r = 1.0 / sqrt(ss / (double)n + EPS);
  for (size_t i = 0; i < n; i++) y[i] = (double)bf16_to_float(w[i]) * bf16_to_float(x[i]) * r;
}

/* Why: 1 if every output is within 1 bf16 step of the rounded reference. */
static int check_row(const char *what, const uint16_t *in, const uint16_t *w, const uint16_t *out,
                     size_t n, int *worst)
{
  double ref[HIDDEN > HEAD_DIM ? HIDDEN : HEAD_DIM];
  ref_rmsnorm(in, w, n, ref);
  for (size_t i = 0; i < n; i++) {
    int s = bf16_steps(out[i], bf16_from_double(ref[i]));
    if (s > *worst) *worst = s;
    if (s > 1) {
      fprintf(stderr, "%s[%zu]: got %.8g, want %.8g (%d bf16 steps)\n", what, i,
              (double)bf16_to_float(out[i]), ref[i], s);
      return 0;
    }
  }
  return 1;
}

/* ---- the layer --------------------------------------------------------- */

static uint16_t x[MAX_TOKENS * HIDDEN], h[MAX_TOKENS * HIDDEN];
static uint16_t ln_w[HIDDEN], q_w[HEAD_DIM], k_w[HEAD_DIM];
static uint16_t w_qkv[(size_t)QKV * HIDDEN];
static uint16_t qkv_proj[MAX_TOKENS * QKV], qkv[MAX_TOKENS * QKV];

/* Why: the engine's own projection (a GEMM in real life): h @ W^T, f64
 * accumulation, one rounding to bf16 per output. */
static void project(size_t tokens)
{
  for (size_t t = 0; t < tokens; t++)
    for (size_t o = 0; o < QKV; o++) {
      double acc = 0;
      const uint16_t *wr = w_qkv + o * HIDDEN, *hr = h + t * HIDDEN;
      for (size_t i = 0; i < HIDDEN; i++) acc += (double)bf16_to_float(wr[i]) * bf16_to_float(hr[i]);
      qkv_proj[t * QKV + o] = bf16_from_double(acc);
    }
}

/* Why: qk_norm output of one call, checked head by head; V bit-identical. */
static int check_qkv(const char *isa, size_t tokens)
{
  int worst = 0, ok = 1;
  char what[64];
  for (size_t t = 0; t < tokens && ok; t++) {
    const uint16_t *in = qkv_proj + t * QKV, *out = qkv + t * QKV;
    for (int hd = 0; hd < NQ + NKV && ok; hd++) {
      snprintf(what, sizeof what, "%s t%zu %c%d", isa, t, hd < NQ ? 'q' : 'k',
               hd < NQ ? hd : hd - NQ);
      ok = check_row(what, in + (size_t)hd * HEAD_DIM, hd < NQ ? q_w : k_w,
                     out + (size_t)hd * HEAD_DIM, HEAD_DIM, &worst);
    }
    if (ok && memcmp(in + (NQ + NKV) * HEAD_DIM, out + (NQ + NKV) * HEAD_DIM,
                     (size_t)NKV * HEAD_DIM * sizeof *in) != 0) {
      fprintf(stderr, "%s: token %zu: V was modified\n", isa, t);
      ok = 0;
    }
  }
  printf("  qk_norm %-11s %2zu tokens x (%d q + %d k heads) x %d: max %d bf16 step(s) %s\n", isa,
         tokens, NQ, NKV, HEAD_DIM, worst, ok ? "ok" : "FAIL");
  return ok;
}

/* Why: "auto:avx2" marks a call through the dispatcher. */
static const char *isa_label(const char *isa)
{
  static char buf[32];
  snprintf(buf, sizeof buf, "auto:%s", isa);
  return buf;
}

static int run_layer(size_t tokens)
{
  int ok = 1, worst = 0;
  printf("layer step, %zu token(s):\n", tokens);
  for (size_t i = 0; i < tokens * HIDDEN; i++) x[i] = bf16_from_float((float)(2.0 * uniform()));

  /* 1. input RMSNorm, dispatched */
  qwen3_0_6b_rmsnorm(tokens, x, HIDDEN, ln_w, h, HIDDEN, NULL);
  for (size_t t = 0; t < tokens && ok; t++)
    ok = check_row("input_norm", x + t * HIDDEN, ln_w, h + t * HIDDEN, HIDDEN, &worst);
  printf("  rmsnorm %-11s %2zu tokens x %d: max %d bf16 step(s) %s\n",
         isa_label(qwen3_0_6b_rmsnorm_isa()), tokens, HIDDEN, worst, ok ? "ok" : "FAIL");

  /* 2. the fused QKV projection (the engine's GEMM) */
  project(tokens);

  /* 3. qk_norm in place on the fused buffer: Q at column 0, K after the
   *    NQ query heads, both with the fused row length as stride */
  memcpy(qkv, qkv_proj, tokens * QKV * sizeof *qkv);
  qwen3_0_6b_qk_norm(tokens, qkv, QKV, qkv + NQ * HEAD_DIM, QKV, q_w, k_w);
  ok &= check_qkv(isa_label(qwen3_0_6b_qk_norm_isa()), tokens);

  /* every qk_norm variant of the pack this CPU can run, via the table */
  for (size_t v = 0; v < qwen3_0_6b_num_variants; v++) {
    const kg_variant *var = &qwen3_0_6b_variants[v];
    if (var->op != KG_OP_QK_NORM || var->isa == KG_ISA_AUTO) continue;
    if (!kg_cpu_has(var->isa)) {
      printf("  qk_norm %-11s skipped: this CPU lacks it\n", kg_cpu_isa_name(var->isa));
      continue;
    }
    memcpy(qkv, qkv_proj, tokens * QKV * sizeof *qkv);
    var->fn.qk_norm(tokens, qkv, QKV, qkv + NQ * HEAD_DIM, QKV, q_w, k_w);
    ok &= check_qkv(kg_cpu_isa_name(var->isa), tokens);
  }
  return ok;
}

int main(void)
{
  /* weights: RMSNorm gains near 1, projection scaled by 1/sqrt(hidden) */
  for (size_t i = 0; i < HIDDEN; i++) ln_w[i] = bf16_from_float((float)(1.0 + 0.25 * uniform()));
  for (size_t i = 0; i < HEAD_DIM; i++) {
    q_w[i] = bf16_from_float((float)(1.0 + 0.5 * uniform()));
    k_w[i] = bf16_from_float((float)(1.0 + 0.5 * uniform()));
  }
  for (size_t i = 0; i < (size_t)QKV * HIDDEN; i++)
    w_qkv[i] = bf16_from_float((float)(uniform() / 32.0));

  printf("Qwen3-0.6B attention pre-processing with pack qwen3_0_6b (kgen %s, spec %s)\n",
         QWEN3_0_6B_KGEN_VERSION, QWEN3_0_6B_SPEC_HASH);
  int ok = run_layer(1);          /* decode */
  ok &= run_layer(MAX_TOKENS);    /* a short prefill */
  printf("%s\n", ok ? "attn_prep: all checks passed" : "attn_prep: FAILED");
  return ok ? 0 : 1;
}
