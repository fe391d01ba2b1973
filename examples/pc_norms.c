/* pc_norms.c: two kgen packs in one program, found through pkg-config:
 *
 *   cc pc_norms.c `pkg-config --cflags --libs qwen3_0_6b gpt2`
 *
 * Each pack was built with its own Makefile and installed (`make install
 * PREFIX=...`); each carries its own copy of the small runtime, whose
 * functions are weak, so the two link side by side.  Runs Qwen3-0.6B's
 * RMSNorm (bf16) and GPT-2's LayerNorm (f32) and checks both against a
 * float64 computation.  Exit status 0 when all pass. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpt2.h"
#include "qwen3_0_6b.h"

#define ROWS 5
#define QD QWEN3_0_6B_RMSNORM_DIM
#define GD GPT2_LAYERNORM_DIM

static uint64_t rng = 0x243f6a8885a308d3ull;
/* Why: a fixed, portable sequence (xorshift64*), uniform in [-1, 1). */
static double uniform(void)
{
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (double)((rng * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-52 - 1.0;
}

static float bf16_to_float(uint16_t b)
{
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint16_t bf16_from_float(float f)
{
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

/* Why: Qwen3 RMSNorm, bf16.  The contract: within 1 ULP of the correctly
 * rounded result, so at most 1.5 bf16 ulp from the exact value. */
static int check_rmsnorm(void)
{
  static uint16_t x[ROWS * QD], w[QD], y[ROWS * QD];
  double worst = 0;
  for (size_t i = 0; i < ROWS * QD; i++) x[i] = bf16_from_float((float)(3.0 * uniform()));
  for (size_t i = 0; i < QD; i++) w[i] = bf16_from_float((float)(1.0 + 0.5 * uniform()));
  qwen3_0_6b_rmsnorm(ROWS, x, QD, w, y, QD, NULL);
  for (size_t r = 0; r < ROWS; r++) {
    double ss = 0;
    for (size_t i = 0; i < QD; i++) ss += (double)bf16_to_float(x[r * QD + i]) * bf16_to_float(x[r * QD + i]);
    double rs = 1.0 / sqrt(ss / QD + 1e-6);
    for (size_t i = 0; i < QD; i++) {
      double ref = (double)bf16_to_float(w[i]) * bf16_to_float(x[r * QD + i]) * rs;
      double ulp = ref == 0 ? 0x1p-133 : ldexp(1.0, ilogb(ref) - 7);
      double e = fabs(bf16_to_float(y[r * QD + i]) - ref) / ulp;
      if (e > worst) worst = e;
    }
  }
  printf("qwen3_0_6b_rmsnorm (%s): %d x %d bf16, max error %.3f ulp %s\n",
         qwen3_0_6b_rmsnorm_isa(), ROWS, QD, worst, worst <= 1.5 ? "ok" : "FAIL");
  return worst <= 1.5;
}

/* Why: GPT-2 LayerNorm, f32, against the bound the kgen tests use:
 * 16 eps32 (|gamma| (|x| + |mean|) rstd + |beta|) + one f32 ulp. */
static int check_layernorm(void)
{
  static float x[ROWS * GD], g[GD], b[GD], y[ROWS * GD], mean[ROWS], rstd[ROWS];
  double worst = 0;
  for (size_t i = 0; i < ROWS * GD; i++) x[i] = (float)(0.5 + 2.0 * uniform());
  for (size_t i = 0; i < GD; i++) {
    g[i] = (float)(1.0 + 0.3 * uniform());
    b[i] = (float)(0.1 * uniform());
  }
  gpt2_layernorm(ROWS, x, GD, g, b, y, GD, mean, rstd);
  for (size_t r = 0; r < ROWS; r++) {
    double m = 0, v = 0;
    for (size_t i = 0; i < GD; i++) m += x[r * GD + i];
    m /= GD;
    for (size_t i = 0; i < GD; i++) v += (x[r * GD + i] - m) * (x[r * GD + i] - m);
    double rs = 1.0 / sqrt(v / GD + 1e-5);
    for (size_t i = 0; i < GD; i++) {
      double ref = g[i] * (x[r * GD + i] - m) * rs + b[i];
      double bound = 16 * 0x1p-23 * (fabs(g[i]) * (fabs(x[r * GD + i]) + fabs(m)) * rs + fabs(b[i]))
                     + ldexp(1.0, ilogb(ref == 0 ? 0x1p-126 : ref) - 23);
      double e = fabs(y[r * GD + i] - ref) / bound;
      if (e > worst) worst = e;
    }
    if (fabs(mean[r] - m) > 1e-5 * (1 + fabs(m)) || fabs(rstd[r] - rs) > 1e-5 * rs) worst = 2;
  }
  printf("gpt2_layernorm (%s): %d x %d f32, max error %.3f of the bound %s\n",
         gpt2_layernorm_isa(), ROWS, GD, worst, worst <= 1.0 ? "ok" : "FAIL");
  return worst <= 1.0;
}

int main(void)
{
  int ok = check_rmsnorm();
  ok &= check_layernorm();
  printf("%s\n", ok ? "pc_norms: all checks passed" : "pc_norms: FAILED");
  return ok ? 0 : 1;
}
