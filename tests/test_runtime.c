/* test_runtime.c: Check suite for the C runtime (runtime/).
 *
 * RT-CONV-*: kg_convert.h against independent references: every bf16/f16
 * pattern exhaustively, and f32 -> bf16/f16 near every rounding boundary
 * and on millions of random bit patterns.  The references never reuse the
 * bit tricks under test: values come from ldexp() in double, the nearest
 * representable value is found by comparing distances to the two
 * neighbours (ties to even), and on compilers with _Float16 the compiler's
 * own conversion is a second oracle.
 * RT-CPU-*, RT-DISP-*: ISA names, detection invariants, KGEN_ISA parsing. */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "kg_convert.h"
#include "kg_cpu.h"
#include "kg_dispatch.h"

#define NEAR_STEPS 16         /* f32 ULPs probed each side of a boundary */
#define RANDOM_INPUTS 4000000 /* random f32 bit patterns per conversion */

/* ---------------------------------------------------------------------- */
/* Independent references                                                  */

static uint32_t t_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float t_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Magnitudes of every non-negative finite pattern, by bits (monotone), and
 * one entry past the largest finite: the value the format would have with
 * an unbounded exponent (65536, 2^128), so overflow rounds as IEEE says. */
static double t_f16_mag[0x7c01];
static double t_bf16_mag[0x7f81];

static void t_tables_init(void) {
  unsigned i;
  if (t_f16_mag[1] != 0)
    return;
  for (i = 0; i <= 0x7c00; i++) {
    unsigned e = i >> 10, m = i & 0x3ff;
    t_f16_mag[i] = e ? ldexp(1024.0 + m, (int)e - 25) : ldexp(m, -24);
  }
  for (i = 0; i <= 0x7f80; i++) {
    unsigned e = i >> 7, m = i & 0x7f;
    t_bf16_mag[i] = e ? ldexp(128.0 + m, (int)e - 134) : ldexp(m, -133);
  }
}

/* Nearest entry of mag[0..top] to x >= 0 (ties to the even pattern); x at
 * or past mag[top] gives top (Inf).  All differences are exact in double. */
static unsigned t_nearest(const double *mag, unsigned top, double x) {
  unsigned lo = 0, hi = top;
  double dlo, dhi;
  if (x >= mag[top])
    return top;
  while (hi - lo > 1) { /* invariant: mag[lo] <= x < mag[hi] */
    unsigned mid = lo + (hi - lo) / 2;
    if (mag[mid] <= x)
      lo = mid;
    else
      hi = mid;
  }
  dlo = x - mag[lo];
  dhi = mag[hi] - x;
  if (dlo != dhi)
    return dlo < dhi ? lo : hi;
  return (lo & 1) ? hi : lo;
}

/* Reference f32 -> f16 / bf16 bits for non-NaN f. */
static unsigned t_ref_f16(float f) {
  unsigned sign = signbit(f) ? 0x8000u : 0;
  if (isinf(f))
    return sign | 0x7c00u;
  return sign | t_nearest(t_f16_mag, 0x7c00, fabs((double)f));
}

static unsigned t_ref_bf16(float f) {
  unsigned sign = signbit(f) ? 0x8000u : 0;
  if (isinf(f))
    return sign | 0x7f80u;
  return sign | t_nearest(t_bf16_mag, 0x7f80, fabs((double)f));
}

#if defined(__FLT16_MAX__)
/* The compiler's own conversion (libgcc soft-fp / hardware fcvt). */
__extension__ typedef _Float16 t_float16;
static unsigned t_oracle_f16(float f) {
  volatile float vf = f; /* keep it a runtime conversion */
  t_float16 h = (t_float16)vf;
  uint16_t b;
  memcpy(&b, &h, sizeof b);
  return b;
}
#endif

/* splitmix64: deterministic random bits, no libc rand() state. */
static uint64_t t_rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t t_rng(void) {
  uint64_t z = (t_rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* ---------------------------------------------------------------------- */
/* One-input checks; return 0 and fill msg on the first mismatch.          */

static int t_check_f16(float f, char *msg, size_t len) {
  uint32_t u = t_bits(f);
  unsigned got = kg_f32_to_f16(f);
  if (isnan(f)) {
    int ok = (got & 0x7c00u) == 0x7c00u && (got & 0x3ffu) != 0 &&
             (got & 0x200u) && (got & 0x8000u) == ((u >> 16) & 0x8000u);
    if (!ok)
      snprintf(msg, len, "f32 %08lx (NaN) -> f16 %04x: not a quiet NaN "
               "of the same sign", (unsigned long)u, got);
    return ok;
  }
  if (got != t_ref_f16(f)) {
    snprintf(msg, len, "f32 %08lx (%.9g) -> f16 %04x, reference %04x",
             (unsigned long)u, (double)f, got, t_ref_f16(f));
    return 0;
  }
#if defined(__FLT16_MAX__)
  if (got != t_oracle_f16(f)) {
    snprintf(msg, len, "f32 %08lx (%.9g) -> f16 %04x, _Float16 says %04x",
             (unsigned long)u, (double)f, got, t_oracle_f16(f));
    return 0;
  }
#endif
  return 1;
}

static int t_check_bf16(float f, char *msg, size_t len) {
  uint32_t u = t_bits(f);
  unsigned got = kg_f32_to_bf16(f);
  if (isnan(f)) {
    /* quiet bit set; sign and the high 9 payload bits kept */
    int ok = got == ((u >> 16) | 0x40u);
    if (!ok)
      snprintf(msg, len, "f32 %08lx (NaN) -> bf16 %04x, want %04lx",
               (unsigned long)u, got, (unsigned long)((u >> 16) | 0x40u));
    return ok;
  }
  if (got != t_ref_bf16(f)) {
    snprintf(msg, len, "f32 %08lx (%.9g) -> bf16 %04x, reference %04x",
             (unsigned long)u, (double)f, got, t_ref_bf16(f));
    return 0;
  }
  return 1;
}

typedef int (*t_check_fn)(float, char *, size_t);

/* Every f32 within NEAR_STEPS ULPs of each representable magnitude and of
 * each halfway point between neighbours (exact in f32), both signs. */
static void t_sweep_boundaries(const double *mag, unsigned top,
                               t_check_fn check) {
  char msg[160];
  unsigned i, s;
  long n = 0;
  int k;
  t_tables_init();
  for (i = 0; i < top; i++) {
    float pts[2];
    pts[0] = (float)mag[i];
    pts[1] = (float)((mag[i] + mag[i + 1]) / 2); /* exact */
    ck_assert((double)pts[1] == (mag[i] + mag[i + 1]) / 2);
    for (s = 0; s < 2; s++) {
      uint32_t base = t_bits(pts[s]);
      for (k = -NEAR_STEPS; k <= NEAR_STEPS; k++) {
        uint32_t u;
        if (k < 0 && base < (uint32_t)-k)
          continue;
        u = base + (uint32_t)k;
        if (u >= 0x7f800000u)
          continue;
        if (!check(t_float(u), msg, sizeof msg) ||
            !check(t_float(u | 0x80000000u), msg, sizeof msg))
          ck_abort_msg("%s", msg);
        n += 2;
      }
    }
  }
  ck_assert_int_gt(n, 1000000);
}

/* Random bit patterns (NaNs, Infs, subnormals and huge values included). */
static void t_sweep_random(t_check_fn check, uint64_t seed) {
  char msg[160];
  long i;
  t_tables_init();
  t_rng_state = seed;
  for (i = 0; i < RANDOM_INPUTS; i++) {
    uint32_t u = (uint32_t)(t_rng() >> 32);
    if (!check(t_float(u), msg, sizeof msg))
      ck_abort_msg("%s", msg);
  }
}

/* ---------------------------------------------------------------------- */
/* RT-CONV: conversions                                                    */

/* Every bf16 pattern widens exactly (bits << 16) and narrows back to
 * itself; NaNs stay NaNs of the same sign (signalling ones get quieted). */
START_TEST(RT_CONV_001_bf16_roundtrip_exhaustive) {
  unsigned h;
  for (h = 0; h <= 0xffff; h++) {
    float f = kg_bf16_to_f32((kg_bf16)h);
    unsigned back = kg_f32_to_bf16(f);
    int nan = (h & 0x7f80u) == 0x7f80u && (h & 0x7fu);
    ck_assert_msg(t_bits(f) == (uint32_t)h << 16, "bf16 %04x widens to %08lx",
                  h, (unsigned long)t_bits(f));
    if (nan)
      ck_assert_msg(isnan(f) && back == (h | 0x40u),
                    "bf16 NaN %04x -> %04x", h, back);
    else
      ck_assert_msg(back == h, "bf16 %04x -> %.9g -> %04x", h, (double)f,
                    back);
  }
}
END_TEST

/* Every f16 pattern widens to the value ldexp() gives (subnormals, Inf,
 * NaN included) and narrows back to itself. */
START_TEST(RT_CONV_002_f16_roundtrip_exhaustive) {
  unsigned h;
  t_tables_init();
  for (h = 0; h <= 0xffff; h++) {
    float f = kg_f16_to_f32((kg_f16)h);
    unsigned back = kg_f32_to_f16(f);
    unsigned mag = h & 0x7fffu;
    int neg = (h & 0x8000u) != 0;
    ck_assert_msg(!signbit(f) == !neg, "f16 %04x: sign lost", h);
    if (mag > 0x7c00u) {
      ck_assert_msg(isnan(f), "f16 NaN %04x widens to %.9g", h, (double)f);
      ck_assert_msg(back == (h | 0x200u), "f16 NaN %04x -> %04x", h, back);
      continue;
    }
    if (mag == 0x7c00u)
      ck_assert_msg(isinf(f), "f16 Inf %04x widens to %.9g", h, (double)f);
    else
      ck_assert_msg(fabs((double)f) == t_f16_mag[mag],
                    "f16 %04x widens to %.9g, want %.17g", h, (double)f,
                    t_f16_mag[mag]);
    ck_assert_msg(back == h, "f16 %04x -> %.9g -> %04x", h, (double)f, back);
  }
}
END_TEST

START_TEST(RT_CONV_003_f32_to_f16_boundaries) {
  t_sweep_boundaries(t_f16_mag, 0x7c00, t_check_f16);
}
END_TEST

START_TEST(RT_CONV_004_f32_to_f16_random) {
  t_sweep_random(t_check_f16, 0x1234567887654321ull);
}
END_TEST

START_TEST(RT_CONV_005_f32_to_bf16_boundaries) {
  t_sweep_boundaries(t_bf16_mag, 0x7f80, t_check_bf16);
}
END_TEST

START_TEST(RT_CONV_006_f32_to_bf16_random) {
  t_sweep_random(t_check_bf16, 0x0badc0ffee0ddf00ull);
}
END_TEST

/* Hand-picked cases, readable when something regresses. */
START_TEST(RT_CONV_007_special_values) {
  static const struct {
    uint32_t f32;
    unsigned bf16, f16;
  } cases[] = {
      {0x00000000u, 0x0000u, 0x0000u}, /* +0 */
      {0x80000000u, 0x8000u, 0x8000u}, /* -0 */
      {0x3f800000u, 0x3f80u, 0x3c00u}, /* 1 */
      {0x3f808000u, 0x3f80u, 0x3c04u}, /* 1 + 2^-8: bf16 tie -> even */
      {0x3f818000u, 0x3f82u, 0x3c0cu}, /* 1 + 3*2^-8: bf16 tie -> even up */
      {0x3f801000u, 0x3f80u, 0x3c00u}, /* 1 + 2^-11: f16 tie -> even */
      {0x3f803000u, 0x3f80u, 0x3c02u}, /* 1 + 3*2^-11: f16 tie -> up */
      {0x7f800000u, 0x7f80u, 0x7c00u}, /* +Inf */
      {0xff800000u, 0xff80u, 0xfc00u}, /* -Inf */
      {0x7f7fffffu, 0x7f80u, 0x7c00u}, /* FLT_MAX: bf16 rounds to Inf */
      {0x7f7f7fffu, 0x7f7fu, 0x7c00u}, /* just below the bf16 halfway */
      {0x477fe000u, 0x4780u, 0x7bffu}, /* 65504, f16 max */
      {0x477fefffu, 0x4780u, 0x7bffu}, /* just below 65520 */
      {0x477ff000u, 0x4780u, 0x7c00u}, /* 65520: f16 tie -> Inf */
      {0xc77ff000u, 0xc780u, 0xfc00u}, /* -65520 */
      {0x33800000u, 0x3380u, 0x0001u}, /* 2^-24: smallest f16 subnormal */
      {0x33000000u, 0x3300u, 0x0000u}, /* 2^-25: tie -> +0 */
      {0x33000001u, 0x3300u, 0x0001u}, /* just above 2^-25 */
      {0xb3000001u, 0xb300u, 0x8001u}, /* negative subnormal */
      {0x33c00000u, 0x33c0u, 0x0002u}, /* 1.5 * 2^-24: tie -> even 2 */
      {0x34200000u, 0x3420u, 0x0002u}, /* 2.5 * 2^-24: tie -> even 2 */
      {0x387fe000u, 0x3880u, 0x0400u}, /* 2^-14 - 2^-25: tie -> min normal */
      {0x387fdfffu, 0x3880u, 0x03ffu}, /* just below that */
      {0x00000001u, 0x0000u, 0x0000u}, /* f32 min subnormal */
      {0x00008000u, 0x0000u, 0x0000u}, /* bf16 tie at zero -> +0 */
      {0x00018000u, 0x0002u, 0x0000u}, /* bf16 subnormal tie -> even */
      {0x7f800001u, 0x7fc0u, 0x7e00u}, /* sNaN, payload in low bits only */
      {0xff800001u, 0xffc0u, 0xfe00u}, /* negative sNaN */
      {0x7fc00000u, 0x7fc0u, 0x7e00u}, /* default qNaN */
      {0xffc00000u, 0xffc0u, 0xfe00u}, /* x86 default NaN */
      {0x7fa12345u, 0x7fe1u, 0x7f09u}, /* sNaN with a high payload */
  };
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    float f = t_float(cases[i].f32);
    unsigned b = kg_f32_to_bf16(f), h = kg_f32_to_f16(f);
    ck_assert_msg(b == cases[i].bf16, "f32 %08lx -> bf16 %04x, want %04x",
                  (unsigned long)cases[i].f32, b, cases[i].bf16);
    ck_assert_msg(h == cases[i].f16, "f32 %08lx -> f16 %04x, want %04x",
                  (unsigned long)cases[i].f32, h, cases[i].f16);
  }
}
END_TEST

/* kg_round_* is exactly narrow-then-widen and idempotent. */
START_TEST(RT_CONV_008_round_helpers) {
  long i;
  t_rng_state = 42;
  for (i = 0; i < 200000; i++) {
    float f = t_float((uint32_t)(t_rng() >> 32));
    float rb = kg_round_bf16(f), rh = kg_round_f16(f);
    if (isnan(f)) {
      ck_assert(isnan(rb) && isnan(rh));
      continue;
    }
    ck_assert(t_bits(rb) == t_bits(kg_bf16_to_f32(kg_f32_to_bf16(f))));
    ck_assert(t_bits(rh) == t_bits(kg_f16_to_f32(kg_f32_to_f16(f))));
    ck_assert(t_bits(kg_round_bf16(rb)) == t_bits(rb));
    ck_assert(t_bits(kg_round_f16(rh)) == t_bits(rh));
  }
  ck_assert(kg_round_bf16(1.00390625f) == 1.0f); /* 1 + 2^-8: tie, even */
  ck_assert(kg_round_f16(65520.0f) == INFINITY);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* RT-CPU: names and detection                                             */

START_TEST(RT_CPU_001_names_roundtrip) {
  int i;
  for (i = 0; i < KG_ISA_COUNT; i++)
    ck_assert_int_eq(kg_cpu_isa_from_name(kg_cpu_isa_name(i)), i);
  ck_assert_str_eq(kg_cpu_isa_name(KG_ISA_SCALAR), "scalar");
  ck_assert_str_eq(kg_cpu_isa_name(KG_ISA_AVX2), "avx2");
  ck_assert_str_eq(kg_cpu_isa_name(KG_ISA_AVX512), "avx512");
  ck_assert_str_eq(kg_cpu_isa_name(KG_ISA_NEON), "neon");
  ck_assert_str_eq(kg_cpu_isa_name(KG_ISA_CUDA), "cuda");
  ck_assert_str_eq(kg_cpu_isa_name(KG_ISA_AUTO), "auto");
  ck_assert_str_eq(kg_cpu_isa_name(-1), "?");
  ck_assert_str_eq(kg_cpu_isa_name(KG_ISA_COUNT), "?");
  ck_assert_int_eq(kg_cpu_isa_from_name("AVX2"), -1);
  ck_assert_int_eq(kg_cpu_isa_from_name("avx"), -1);
  ck_assert_int_eq(kg_cpu_isa_from_name(""), -1);
  ck_assert_int_eq(kg_cpu_isa_from_name("?"), -1);
  ck_assert_int_eq(kg_cpu_isa_from_name(NULL), -1);
}
END_TEST

/* Levels nest, never cross architectures, and best is one the CPU has. */
#if defined(__x86_64__) || defined(__i386__)
/* Why: runtime answers that hold on, or off, one AMD family; the test
 * reads vendor and family from CPUID on its own (not through kg_cpu.c). */
static int t_amd_family(unsigned family) {
  unsigned a = 0, b = 0, c = 0, d = 0, fam = 0;
  int amd = __get_cpuid(0, &a, &b, &c, &d) && memcmp(&b, "Auth", 4) == 0 &&
            memcmp(&d, "enti", 4) == 0 && memcmp(&c, "cAMD", 4) == 0;
  if (__get_cpuid(1, &a, &b, &c, &d))
    fam = ((a >> 8) & 0xfu) + (((a >> 8) & 0xfu) == 0xfu ? (a >> 20) & 0xffu : 0u);
  return amd && fam == family;
}

/* Why: the environment override the runtime documents, applied to the
 * default `dflt`: "0" -> 0, "1" -> whether the level is usable (`level`). */
static int t_env_is(const char *env, const char *value) {
  const char *e = getenv(env);
  return e != NULL && strcmp(e, value) == 0;
}

static int t_env_switch(const char *env, int level, int dflt) {
  const char *e = getenv(env);
  if (e && strcmp(e, "0") == 0)
    return 0;
  if (e && strcmp(e, "1") == 0)
    return level;
  return dflt;
}

/* Why: the expected answer of a choice made on one AMD family where the
 * level `level` is usable. */
static int t_family_switch(const char *env, int level, unsigned family) {
  return t_env_switch(env, level, level && t_amd_family(family));
}
#endif

START_TEST(RT_CPU_002_detection_invariants) {
  int best = kg_cpu_best();
  ck_assert_int_eq(kg_cpu_has(KG_ISA_SCALAR), 1);
  ck_assert_int_eq(kg_cpu_has(KG_ISA_CUDA), 0);
  ck_assert_int_eq(kg_cpu_has(KG_ISA_AUTO), 0);
  ck_assert_int_eq(kg_cpu_has(-1), 0);
  ck_assert_int_eq(kg_cpu_has(KG_ISA_COUNT), 0);
  ck_assert_int_eq(kg_cpu_has(best), 1);
  ck_assert(best != KG_ISA_CUDA && best != KG_ISA_AUTO);
  if (kg_cpu_has(KG_ISA_AVX512))
    ck_assert_int_eq(kg_cpu_has(KG_ISA_AVX2), 1);
  if (kg_cpu_has(KG_ISA_AVX512))
    ck_assert_int_eq(best, KG_ISA_AVX512);
  else if (kg_cpu_has(KG_ISA_AVX2))
    ck_assert_int_eq(best, KG_ISA_AVX2);
#if defined(__x86_64__) || defined(__i386__)
  ck_assert_int_eq(kg_cpu_has(KG_ISA_NEON), 0);
  /* the compiler's CPUID view must agree with every feature we claim */
  if (kg_cpu_has(KG_ISA_AVX2))
    ck_assert(__builtin_cpu_supports("avx2") &&
              __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx"));
  if (kg_cpu_has(KG_ISA_AVX512))
    ck_assert(__builtin_cpu_supports("avx512f") &&
              __builtin_cpu_supports("avx512bw") &&
              __builtin_cpu_supports("avx512dq") &&
              __builtin_cpu_supports("avx512vl"));
  /* the AVX512_BF16 paths: exactly when the compiler sees the feature on
   * an AVX-512 machine, unless KGEN_AVX512_BF16=0 */
  {
    const char *e = getenv("KGEN_AVX512_BF16");
    const int off = e && strcmp(e, "0") == 0;
    ck_assert_int_eq(kg_cpu_avx512_bf16(),
                     kg_cpu_has(KG_ISA_AVX512) && !off &&
                         __builtin_cpu_supports("avx512bf16") != 0);
  }
  /* the bf16 QK-norm line frame: on AVX-512 machines not made by Intel,
   * unless KGEN_BF16_LINE_FRAME says 0 or 1 */
  {
    const char *e = getenv("KGEN_BF16_LINE_FRAME");
    int want = kg_cpu_has(KG_ISA_AVX512) && !__builtin_cpu_is("intel");
    if (e && strcmp(e, "0") == 0)
      want = 0;
    else if (e && strcmp(e, "1") == 0)
      want = kg_cpu_has(KG_ISA_AVX512);
    ck_assert_int_eq(kg_cpu_bf16_line_frame(), want);
  }
  /* f16 kernels on AVX2: on AVX-512 machines of AMD family 19h, unless
   * KGEN_F16_AVX2 says 0 or 1 */
  ck_assert_int_eq(kg_cpu_f16_avx2(),
                   t_family_switch("KGEN_F16_AVX2", kg_cpu_has(KG_ISA_AVX512), 0x19));
  /* QK-norm's Zen 5 prefetch choices: on AVX2 machines of AMD family 1Ah,
   * unless KGEN_PREFETCH_ZEN5 says 0 or 1 */
  ck_assert_int_eq(kg_cpu_prefetch_zen5(),
                   t_family_switch("KGEN_PREFETCH_ZEN5", kg_cpu_has(KG_ISA_AVX2), 0x1a));
  /* long f32 QK-norm calls loading rows twice: on AVX-512 machines of AMD
   * family 19h, unless KGEN_STREAM_RELOAD says 0 or 1 */
  ck_assert_int_eq(kg_cpu_stream_reload(),
                   t_family_switch("KGEN_STREAM_RELOAD", kg_cpu_has(KG_ISA_AVX512), 0x19));
  /* LayerNorm's line-frame rows two at a time: on AVX-512 machines but
   * those of AMD family 19h, unless KGEN_LN_FRAME_PAIRS says 0 or 1 */
  ck_assert_int_eq(kg_cpu_ln_frame_pairs(),
                   t_env_switch("KGEN_LN_FRAME_PAIRS", kg_cpu_has(KG_ISA_AVX512),
                                kg_cpu_has(KG_ISA_AVX512) && !t_amd_family(0x19)));
  /* streamed RMSNorm rows as two streams: on AVX-512 machines made by
   * Intel, unless KGEN_NT_SPLIT says 0 or 1 */
  const int nt4k = t_env_is("KGEN_NT_SPLIT", "4k"); /* Zen 5's mix anywhere */
  ck_assert_int_eq(kg_cpu_nt_split(),
                   !nt4k && t_env_switch("KGEN_NT_SPLIT", kg_cpu_has(KG_ISA_AVX512),
                                         kg_cpu_has(KG_ISA_AVX512) && __builtin_cpu_is("intel")));
  /* aligned streamed RMSNorm rows in parts at most 4 KiB apart: on
   * AVX-512 machines made by Intel or of AMD family 1Ah, unless
   * KGEN_NT_SPLIT says 0 or 1 */
  ck_assert_int_eq(kg_cpu_nt_split4k(),
                   nt4k ? kg_cpu_has(KG_ISA_AVX512)
                        : t_env_switch("KGEN_NT_SPLIT", kg_cpu_has(KG_ISA_AVX512),
                                       kg_cpu_has(KG_ISA_AVX512) &&
                                           (__builtin_cpu_is("intel") || t_amd_family(0x1a))));
  /* long bf16 QK-norm calls as one pipeline of heads: on AVX-512 machines
   * made by Intel, unless KGEN_QK_PIPE says 0 or 1 */
  ck_assert_int_eq(kg_cpu_qk_pipe(),
                   t_env_switch("KGEN_QK_PIPE", kg_cpu_has(KG_ISA_AVX512),
                                kg_cpu_has(KG_ISA_AVX512) && __builtin_cpu_is("intel")));
#elif defined(__aarch64__)
  ck_assert_int_eq(kg_cpu_has(KG_ISA_AVX2), 0);
  ck_assert_int_eq(kg_cpu_has(KG_ISA_AVX512), 0);
  ck_assert_int_eq(kg_cpu_has(KG_ISA_NEON), 1);
  ck_assert_int_eq(kg_cpu_avx512_bf16(), 0);
  ck_assert_int_eq(kg_cpu_bf16_line_frame(), 0);
  ck_assert_int_eq(kg_cpu_f16_avx2(), 0);
  ck_assert_int_eq(kg_cpu_prefetch_zen5(), 0);
  ck_assert_int_eq(kg_cpu_stream_reload(), 0);
  ck_assert_int_eq(kg_cpu_ln_frame_pairs(), 0);
  ck_assert_int_eq(kg_cpu_nt_split(), 0);
  ck_assert_int_eq(kg_cpu_nt_split4k(), 0);
  ck_assert_int_eq(kg_cpu_qk_pipe(), 0);
  ck_assert_int_eq(best, KG_ISA_NEON);
#else
  ck_assert_int_eq(best, KG_ISA_SCALAR);
#endif
}
END_TEST

/* KGEN_AVX512_BF16=0 turns the AVX512_BF16 paths off (the detection is
 * cached per process: this runs in its own forked child). */
START_TEST(RT_CPU_003_bf16_paths_off) {
  setenv("KGEN_AVX512_BF16", "0", 1);
  ck_assert_int_eq(kg_cpu_avx512_bf16(), 0);
  ck_assert_int_eq(kg_cpu_has(KG_ISA_SCALAR), 1);
}
END_TEST

/* The runtime's 0/1 switches, one row a test: "0" turns a choice off on
 * any CPU, "1" on wherever its level runs (KGEN_NT_SPLIT also "4k").  The detection is cached per
 * process, so each row runs in its own forked child (a loop test). */
typedef struct {
  const char *id, *env, *value, *what;
  int (*get)(void);
  int level;
} t_switch;

static const t_switch t_switches[] = {
    {"RT-CPU-004", "KGEN_BF16_LINE_FRAME", "0", "bf16 QK-norm heads off the line frame", kg_cpu_bf16_line_frame, KG_ISA_AVX512},
    {"RT-CPU-005", "KGEN_BF16_LINE_FRAME", "1", "bf16 QK-norm heads on the line frame", kg_cpu_bf16_line_frame, KG_ISA_AVX512},
    {"RT-CPU-006", "KGEN_F16_AVX2", "0", "f16 dispatchers kept on AVX-512", kg_cpu_f16_avx2, KG_ISA_AVX512},
    {"RT-CPU-007", "KGEN_F16_AVX2", "1", "f16 dispatchers sent to AVX2", kg_cpu_f16_avx2, KG_ISA_AVX512},
    {"RT-CPU-008", "KGEN_PREFETCH_ZEN5", "0", "QK-norm's generic prefetches", kg_cpu_prefetch_zen5, KG_ISA_AVX2},
    {"RT-CPU-009", "KGEN_PREFETCH_ZEN5", "1", "QK-norm's Zen 5 prefetches", kg_cpu_prefetch_zen5, KG_ISA_AVX2},
    {"RT-CPU-010", "KGEN_STREAM_RELOAD", "0", "long f32 QK-norm rows kept in registers", kg_cpu_stream_reload, KG_ISA_AVX512},
    {"RT-CPU-011", "KGEN_STREAM_RELOAD", "1", "long f32 QK-norm rows loaded twice", kg_cpu_stream_reload, KG_ISA_AVX512},
    {"RT-CPU-012", "KGEN_LN_FRAME_PAIRS", "0", "LayerNorm line-frame rows one at a time", kg_cpu_ln_frame_pairs, KG_ISA_AVX512},
    {"RT-CPU-013", "KGEN_LN_FRAME_PAIRS", "1", "LayerNorm line-frame rows in pairs", kg_cpu_ln_frame_pairs, KG_ISA_AVX512},
    {"RT-CPU-014", "KGEN_NT_SPLIT", "0", "streamed RMSNorm rows as one stream", kg_cpu_nt_split, KG_ISA_AVX512},
    {"RT-CPU-015", "KGEN_NT_SPLIT", "1", "streamed RMSNorm rows as two streams", kg_cpu_nt_split, KG_ISA_AVX512},
    {"RT-CPU-016", "KGEN_QK_PIPE", "0", "long bf16 QK-norm calls in groups", kg_cpu_qk_pipe, KG_ISA_AVX512},
    {"RT-CPU-017", "KGEN_QK_PIPE", "1", "long bf16 QK-norm calls as one pipeline of heads", kg_cpu_qk_pipe, KG_ISA_AVX512},
    {"RT-CPU-018", "KGEN_NT_SPLIT", "0", "aligned streamed RMSNorm rows as one stream", kg_cpu_nt_split4k, KG_ISA_AVX512},
    {"RT-CPU-019", "KGEN_NT_SPLIT", "1", "aligned streamed RMSNorm rows in parts 4 KiB apart", kg_cpu_nt_split4k, KG_ISA_AVX512},
    {"RT-CPU-020", "KGEN_NT_SPLIT", "4k", "Zen 5's mix: no rows split but those in parts 3-4 KiB apart", kg_cpu_nt_split, KG_ISA_AVX512},
    {"RT-CPU-021", "KGEN_NT_SPLIT", "4k", "Zen 5's mix: rows in parts 3-4 KiB apart split", kg_cpu_nt_split4k, KG_ISA_AVX512},
};

START_TEST(RT_CPU_switch) {
  const t_switch *t = &t_switches[_i];
  setenv(t->env, t->value, 1); /* before the first detection caches it */
  /* "4k" (KGEN_NT_SPLIT only) sets kg_cpu_nt_split4k alone */
  const int on = strcmp(t->value, "1") == 0 || (strcmp(t->value, "4k") == 0 && t->get == kg_cpu_nt_split4k);
  const int want = on && kg_cpu_has(t->level);
  ck_assert_msg(t->get() == want, "%s (%s): %s=%s gave %d, expected %d", t->id, t->what, t->env,
                t->value, t->get(), want);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* RT-DISP: KGEN_ISA                                                       */

/* kg_dispatch_resolve under KGEN_ISA=value (NULL: unset). */
static int t_resolve(const char *value, int *isa, char *err, size_t len) {
  if (value)
    setenv("KGEN_ISA", value, 1);
  else
    unsetenv("KGEN_ISA");
  *isa = -99;
  err[0] = '\0';
  return kg_dispatch_resolve(isa, err, len);
}

START_TEST(RT_DISP_001_scalar_ok) {
  char err[256];
  int isa;
  ck_assert_int_eq(t_resolve("scalar", &isa, err, sizeof err), 0);
  ck_assert_int_eq(isa, KG_ISA_SCALAR);
  ck_assert_str_eq(err, "");
}
END_TEST

START_TEST(RT_DISP_002_unknown_lists_allowed) {
  char err[256];
  int isa;
  ck_assert_int_eq(t_resolve("bogus", &isa, err, sizeof err), -1);
  ck_assert_int_eq(isa, -99);
  ck_assert_msg(strstr(err, "KGEN_ISA=bogus") != NULL, "%s", err);
  ck_assert_msg(strstr(err, "scalar avx2 avx512 neon") != NULL, "%s", err);
  ck_assert_msg(strchr(err, '\n') == NULL, "%s", err);
  ck_assert_int_eq(t_resolve("AVX2", &isa, err, sizeof err), -1);
  ck_assert_int_eq(t_resolve(" avx2", &isa, err, sizeof err), -1);
}
END_TEST

/* A real level accepted exactly when the CPU has it; otherwise the error
 * names what the CPU has.  Covers neon on x86 and avx2 on aarch64. */
START_TEST(RT_DISP_003_unsupported_names_cpu) {
  char err[256], want[64];
  int i, isa;
  for (i = KG_ISA_SCALAR; i < KG_ISA_CUDA; i++) {
    int rc = t_resolve(kg_cpu_isa_name(i), &isa, err, sizeof err);
    if (kg_cpu_has(i)) {
      ck_assert_int_eq(rc, 0);
      ck_assert_int_eq(isa, i);
      continue;
    }
    ck_assert_int_eq(rc, -1);
    snprintf(want, sizeof want, "lacks %s", kg_cpu_isa_name(i));
    ck_assert_msg(strstr(err, want) != NULL, "%s", err);
    snprintf(want, sizeof want, "it has: scalar");
    ck_assert_msg(strstr(err, want) != NULL, "%s", err);
    ck_assert_msg(strstr(err, kg_cpu_isa_name(kg_cpu_best())) != NULL, "%s",
                  err);
  }
#if defined(__x86_64__) || defined(__i386__)
  ck_assert_int_eq(t_resolve("neon", &isa, err, sizeof err), -1);
  ck_assert_msg(strstr(err, "lacks neon") != NULL, "%s", err);
#elif defined(__aarch64__)
  ck_assert_int_eq(t_resolve("avx2", &isa, err, sizeof err), -1);
  ck_assert_msg(strstr(err, "lacks avx2") != NULL, "%s", err);
#endif
}
END_TEST

START_TEST(RT_DISP_004_empty_or_unset_is_best) {
  char err[256];
  int isa;
  ck_assert_int_eq(t_resolve("", &isa, err, sizeof err), 0);
  ck_assert_int_eq(isa, kg_cpu_best());
  ck_assert_int_eq(t_resolve(NULL, &isa, err, sizeof err), 0);
  ck_assert_int_eq(isa, kg_cpu_best());
}
END_TEST

/* cuda and auto are names of variants, never a CPU cap. */
START_TEST(RT_DISP_005_cuda_auto_rejected) {
  char err[256];
  int isa;
  ck_assert_int_eq(t_resolve("cuda", &isa, err, sizeof err), -1);
  ck_assert_msg(strstr(err, "not a CPU ISA") != NULL, "%s", err);
  ck_assert_msg(strstr(err, "has: scalar") != NULL, "%s", err);
  ck_assert_int_eq(t_resolve("auto", &isa, err, sizeof err), -1);
  ck_assert_msg(strstr(err, "not a CPU ISA") != NULL, "%s", err);
}
END_TEST

/* No buffer, or a tiny one: still an error code, no overflow. */
START_TEST(RT_DISP_006_small_error_buffer) {
  char err[8];
  int isa = -99;
  setenv("KGEN_ISA", "bogus-and-a-very-long-name-indeed-longer-than-32", 1);
  ck_assert_int_eq(kg_dispatch_resolve(&isa, NULL, 0), -1);
  ck_assert_int_eq(kg_dispatch_resolve(&isa, err, sizeof err), -1);
  ck_assert_int_eq((int)strlen(err), 7);
  ck_assert_int_eq(isa, -99);
}
END_TEST

START_TEST(RT_DISP_007_allows_matrix) {
  int isa, cap;
  for (cap = 0; cap < KG_ISA_COUNT; cap++) {
    for (isa = 0; isa < KG_ISA_COUNT; isa++) {
      int want = 0;
      if (isa == KG_ISA_SCALAR)
        want = 1;
      else if (isa == KG_ISA_AVX2)
        want = cap == KG_ISA_AVX2 || cap == KG_ISA_AVX512;
      else if (isa == KG_ISA_AVX512 || isa == KG_ISA_NEON)
        want = cap == isa;
      want = want && kg_cpu_has(isa);
      ck_assert_msg(kg_dispatch_allows(isa, cap) == want,
                    "allows(%s, cap %s) != %d", kg_cpu_isa_name(isa),
                    kg_cpu_isa_name(cap), want);
    }
  }
  ck_assert_int_eq(kg_dispatch_allows(-1, KG_ISA_AVX512), 0);
}
END_TEST

/* The cached cap: resolved once, later changes to KGEN_ISA are ignored. */
START_TEST(RT_DISP_008_cap_cached) {
  setenv("KGEN_ISA", "scalar", 1);
  ck_assert_int_eq(kg_dispatch_cap(), KG_ISA_SCALAR);
  setenv("KGEN_ISA", "bogus", 1);
  ck_assert_int_eq(kg_dispatch_cap(), KG_ISA_SCALAR);
}
END_TEST

/* A bad KGEN_ISA makes the cached cap exit(2) (needs fork mode). */
START_TEST(RT_DISP_009_cap_bad_env_exits_2) {
  /* the "kgen: ..." line is expected; keep it out of the test log */
  if (freopen("/dev/null", "w", stderr) == NULL)
    ck_abort_msg("cannot silence stderr");
  setenv("KGEN_ISA", "bogus", 1);
  kg_dispatch_cap();
}
END_TEST

/* ---------------------------------------------------------------------- */

static void t_add(Suite *s, const char *id, const TTest *fn) {
  TCase *tc = tcase_create(id);
  tcase_set_timeout(tc, 600); /* exhaustive sweeps under qemu are slow */
  _tcase_add_test(tc, fn, 0, 0, 0, 1);
  suite_add_tcase(s, tc);
}

int main(void) {
  Suite *s = suite_create("runtime");
  SRunner *sr = srunner_create(s);
  int failed, forking = srunner_fork_status(sr) != CK_NOFORK;
  t_add(s, "RT-CONV-001", RT_CONV_001_bf16_roundtrip_exhaustive);
  t_add(s, "RT-CONV-002", RT_CONV_002_f16_roundtrip_exhaustive);
  t_add(s, "RT-CONV-003", RT_CONV_003_f32_to_f16_boundaries);
  t_add(s, "RT-CONV-004", RT_CONV_004_f32_to_f16_random);
  t_add(s, "RT-CONV-005", RT_CONV_005_f32_to_bf16_boundaries);
  t_add(s, "RT-CONV-006", RT_CONV_006_f32_to_bf16_random);
  t_add(s, "RT-CONV-007", RT_CONV_007_special_values);
  t_add(s, "RT-CONV-008", RT_CONV_008_round_helpers);
  t_add(s, "RT-CPU-001", RT_CPU_001_names_roundtrip);
  t_add(s, "RT-CPU-002", RT_CPU_002_detection_invariants);
  t_add(s, "RT-DISP-001", RT_DISP_001_scalar_ok);
  t_add(s, "RT-DISP-002", RT_DISP_002_unknown_lists_allowed);
  t_add(s, "RT-DISP-003", RT_DISP_003_unsupported_names_cpu);
  t_add(s, "RT-DISP-004", RT_DISP_004_empty_or_unset_is_best);
  t_add(s, "RT-DISP-005", RT_DISP_005_cuda_auto_rejected);
  t_add(s, "RT-DISP-006", RT_DISP_006_small_error_buffer);
  t_add(s, "RT-DISP-007", RT_DISP_007_allows_matrix);
  t_add(s, "RT-DISP-008", RT_DISP_008_cap_cached);
  if (forking) {
    t_add(s, "RT-CPU-003", RT_CPU_003_bf16_paths_off);
    for (size_t i = 0; i < sizeof t_switches / sizeof t_switches[0]; i++) {
      TCase *tc = tcase_create(t_switches[i].id);
      _tcase_add_test(tc, RT_CPU_switch, 0, 0, (int)i, (int)i + 1);
      suite_add_tcase(s, tc);
    }
  } else
    printf("RT-CPU-003..021: SKIPPED: needs CK_FORK (the detection is cached per process)\n");
  if (forking) {
    TCase *tc = tcase_create("RT-DISP-009");
    tcase_add_exit_test(tc, RT_DISP_009_cap_bad_env_exits_2, 2);
    suite_add_tcase(s, tc);
  } else {
    /* exit(2) would end this very process: the property is checked by
     * running tests/cpu_report --cap with KGEN_ISA=bogus instead. */
    printf("RT-DISP-009: SKIPPED: needs CK_FORK (exit test)\n");
  }
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
