/* tests/emu512/immintrin.h: AVX-512 intrinsics on a CPU without AVX-512,
 * for `make test-avx512-emu` (mk/emu512.mk) only.
 *
 * The generated AVX-512 file is compiled with this directory first on the
 * include path and its target attributes rewritten to AVX2: the compiler's
 * own <immintrin.h> comes first (its AVX2, FMA and F16C intrinsics stay
 * native, and it declares the AVX-512 vector types), then SIMDe's portable
 * AVX-512 (Debian's libsimde-dev) takes over every _mm512_ / masked name
 * through its native aliases, and the few names SIMDe 0.7 lacks are
 * written out below, element by element from the Intel SDM's operation
 * text.  This checks the kernels' logic and numerics on any x86-64 CPU;
 * it says nothing about speed or about a real AVX-512 core.  A name the
 * kernels start using that neither provides fails the build ("target
 * specific option mismatch" or an implicit declaration): add it here. */
#ifndef KGE_IMMINTRIN_H
#define KGE_IMMINTRIN_H

#include_next <immintrin.h>

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KGE_INL static inline __attribute__((unused))

/* Why: the hardware faults on a misaligned non-temporal store; the
 * emulation must too, or a kernel that streams to a misaligned row would
 * pass here and crash on a real core. */
KGE_INL void kge_need_align(const void *p, size_t n, const char *what)
{
  if ((uintptr_t)p % n != 0) {
    fprintf(stderr, "avx512-emu: %s to %p, not %zu-byte aligned (a real core faults)\n", what, p, n);
    abort();
  }
}

/* Masked loads and stores touch only the elements their mask selects (the
 * hardware suppresses faults on the others), so ASan and page ends see
 * what a real core would. */
KGE_INL __m512 kge_maskz_loadu_ps(__mmask16 k, const void *p)
{
  float r[16] = {0};
  for (int i = 0; i < 16; i++)
    if ((k >> i) & 1u) memcpy(&r[i], (const char *)p + 4 * i, 4);
  __m512 v;
  memcpy(&v, r, 64);
  return v;
}

KGE_INL void kge_mask_storeu_ps(void *p, __mmask16 k, __m512 v)
{
  float a[16];
  memcpy(a, &v, 64);
  for (int i = 0; i < 16; i++)
    if ((k >> i) & 1u) memcpy((char *)p + 4 * i, &a[i], 4);
}

/* Why: 16-bit lanes, n of them (16 in a ymm, 32 in a zmm). */
KGE_INL void kge_maskz_load16(uint16_t *r, uint64_t k, const void *p, int n)
{
  for (int i = 0; i < n; i++) {
    r[i] = 0;
    if ((k >> i) & 1u) memcpy(&r[i], (const char *)p + 2 * i, 2);
  }
}

KGE_INL void kge_mask_store16(void *p, uint64_t k, const uint16_t *a, int n)
{
  for (int i = 0; i < n; i++)
    if ((k >> i) & 1u) memcpy((char *)p + 2 * i, &a[i], 2);
}

/* Why: the ymm (16 lanes) and zmm (32 lanes) forms of the 16-bit masked
 * load and store, one definition each. */
#define KGE_MASK16(ld, st, VT, MT, N)                                          \
  KGE_INL VT ld(MT k, const void *p)                                           \
  {                                                                            \
    uint16_t r[N];                                                             \
    VT v;                                                                      \
    kge_maskz_load16(r, k, p, N);                                              \
    memcpy(&v, r, sizeof v);                                                   \
    return v;                                                                  \
  }                                                                            \
  KGE_INL void st(void *p, MT k, VT v)                                         \
  {                                                                            \
    uint16_t a[N];                                                             \
    memcpy(a, &v, sizeof a);                                                   \
    kge_mask_store16(p, k, a, N);                                              \
  }
KGE_MASK16(kge_256_maskz_loadu_epi16, kge_256_mask_storeu_epi16, __m256i, __mmask16, 16)
KGE_MASK16(kge_maskz_loadu_epi16, kge_mask_storeu_epi16, __m512i, __mmask32, 32)

KGE_INL void kge_stream_ps(void *p, __m512 v)
{
  kge_need_align(p, 64, "_mm512_stream_ps");
  memcpy(p, &v, 64);
}

KGE_INL void kge_stream_si512(void *p, __m512i v)
{
  kge_need_align(p, 64, "_mm512_stream_si512");
  memcpy(p, &v, 64);
}

/* Widening and narrowing moves (vpmovzx*, vpmovdw: truncation), and f32
 * -> f64 (exact): N elements of type ST in an IT, each converted to RT,
 * into an OT. */
#define KGE_MOVE(name, IT, OT, ST, RT, N)                                      \
  KGE_INL OT name(IT a)                                                        \
  {                                                                            \
    ST s[N];                                                                   \
    RT r[N];                                                                   \
    OT v;                                                                      \
    memcpy(s, &a, sizeof s);                                                   \
    for (int i = 0; i < N; i++) r[i] = (RT)s[i];                               \
    memcpy(&v, r, sizeof r);                                                   \
    return v;                                                                  \
  }
KGE_MOVE(kge_cvtepu16_epi32, __m256i, __m512i, uint16_t, uint32_t, 16)
KGE_MOVE(kge_cvtepu8_epi16, __m256i, __m512i, uint8_t, uint16_t, 32)
KGE_MOVE(kge_cvtepu8_epi32, __m128i, __m512i, uint8_t, uint32_t, 16)
KGE_MOVE(kge_cvtepi32_epi16, __m512i, __m256i, uint32_t, uint16_t, 16)
KGE_MOVE(kge_cvtps_pd, __m256, __m512d, float, double, 8)
/* f64 -> f32 rounds: C's conversion rounds as the instruction does under
 * the default MXCSR (to nearest, ties to even; the kernels never change
 * it).  kgi_avx512_rs8 (decode in pairs) uses it. */
KGE_MOVE(kge_cvtpd_ps, __m512d, __m256, double, float, 8)

/* f16 <-> f32 through the native F16C halves (the same instruction
 * semantics per element as the 512-bit forms). */
KGE_INL __m512 kge_cvtph_ps(__m256i a)
{
  __m256 lo = _mm256_cvtph_ps(_mm256_castsi256_si128(a));
  __m256 hi = _mm256_cvtph_ps(_mm256_extracti128_si256(a, 1));
  __m512 v;
  memcpy(&v, &lo, 32);
  memcpy((char *)&v + 32, &hi, 32);
  return v;
}

#define kge_cvtps_ph(a, imm)                                                   \
  __extension__({                                                              \
    __m512 kge_a_ = (a);                                                       \
    __m256 kge_lo_, kge_hi_;                                                   \
    memcpy(&kge_lo_, &kge_a_, 32);                                             \
    memcpy(&kge_hi_, (char *)&kge_a_ + 32, 32);                                \
    _mm256_set_m128i(_mm256_cvtps_ph(kge_hi_, (imm)), _mm256_cvtps_ph(kge_lo_, (imm))); \
  })

KGE_INL __m256 kge_extractf32x8_ps(__m512 a, int hi)
{
  __m256 r;
  memcpy(&r, (char *)&a + (hi & 1) * 32, 32);
  return r;
}

/* vpermilps with an immediate: the same 4-lane pattern in each 128 bits. */
KGE_INL __m512 kge_permute_ps(__m512 a, int imm)
{
  float s[16], r[16];
  memcpy(s, &a, 64);
  for (int i = 0; i < 16; i++) r[i] = s[(i & ~3) + ((imm >> (2 * (i & 3))) & 3)];
  __m512 v;
  memcpy(&v, r, 64);
  return v;
}

/* c where k is clear, fma(a, b, c) (one rounding) where it is set. */
KGE_INL __m512 kge_mask3_fmadd_ps(__m512 a, __m512 b, __m512 c, __mmask16 k)
{
  float x[16], y[16], z[16];
  memcpy(x, &a, 64);
  memcpy(y, &b, 64);
  memcpy(z, &c, 64);
  for (int i = 0; i < 16; i++)
    if ((k >> i) & 1u) z[i] = fmaf(x[i], y[i], z[i]);
  __m512 v;
  memcpy(&v, z, 64);
  return v;
}

/* The compiler header's order (gcc avx512fintrin.h): upper 256 + lower
 * 256, then upper 128 + lower 128, then the two lanes. */
KGE_INL double kge_reduce_add_pd(__m512d a)
{
  double d[8], t[4], u[2];
  memcpy(d, &a, 64);
  for (int i = 0; i < 4; i++) t[i] = d[4 + i] + d[i];
  u[0] = t[2] + t[0];
  u[1] = t[3] + t[1];
  return u[0] + u[1];
}

/* vdpbf16ps as the SDM writes it: per f32 lane, the odd pair's product
 * added first, then the even pair's, each add rounded to nearest even;
 * inputs and results below FLT_MIN are zero (DAZ, FTZ).  SIMDe adds the
 * even product first and keeps denormals. */
KGE_INL float kge_bf16_daz(uint16_t h)
{
  uint32_t u = (uint32_t)h << 16;
  if ((u & 0x7f800000u) == 0) u &= 0x80000000u;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

KGE_INL float kge_ftz(float x)
{
  return (x != 0.0f && fabsf(x) < FLT_MIN) ? copysignf(0.0f, x) : x;
}

KGE_INL __m512 kge_dpbf16_ps(__m512 src, __mmask16 k, __m512bh a, __m512bh b)
{
  float acc[16];
  uint16_t x[32], y[32];
  memcpy(acc, &src, 64);
  memcpy(x, &a, 64);
  memcpy(y, &b, 64);
  for (int i = 0; i < 16; i++) {
    if (!((k >> i) & 1u)) continue;
    float t = kge_ftz(kge_ftz(acc[i]) + kge_bf16_daz(x[2 * i + 1]) * kge_bf16_daz(y[2 * i + 1]));
    acc[i] = kge_ftz(t + kge_bf16_daz(x[2 * i]) * kge_bf16_daz(y[2 * i]));
  }
  __m512 v;
  memcpy(&v, acc, 64);
  return v;
}

#undef _mm512_dpbf16_ps
#undef _mm512_mask_dpbf16_ps
#define _mm512_dpbf16_ps(src, a, b) kge_dpbf16_ps((src), (__mmask16)0xffff, (a), (b))
#define _mm512_mask_dpbf16_ps(src, k, a, b) kge_dpbf16_ps((src), (k), (a), (b))
#define _mm512_maskz_loadu_ps(k, p) kge_maskz_loadu_ps((k), (p))
#define _mm512_mask_storeu_ps(p, k, v) kge_mask_storeu_ps((p), (k), (v))
#define _mm256_maskz_loadu_epi16(k, p) kge_256_maskz_loadu_epi16((k), (p))
#define _mm256_mask_storeu_epi16(p, k, v) kge_256_mask_storeu_epi16((p), (k), (v))
#define _mm512_maskz_loadu_epi16(k, p) kge_maskz_loadu_epi16((k), (p))
#define _mm512_mask_storeu_epi16(p, k, v) kge_mask_storeu_epi16((p), (k), (v))
#define _mm512_stream_ps(p, v) kge_stream_ps((p), (v))
#define _mm512_stream_si512(p, v) kge_stream_si512((p), (v))
#define _mm512_cvtepu16_epi32(a) kge_cvtepu16_epi32(a)
#define _mm512_cvtepu8_epi16(a) kge_cvtepu8_epi16(a)
#define _mm512_cvtepu8_epi32(a) kge_cvtepu8_epi32(a)
#define _mm512_cvtepi32_epi16(a) kge_cvtepi32_epi16(a)
#define _mm512_cvtph_ps(a) kge_cvtph_ps(a)
#define _mm512_cvtps_ph(a, imm) kge_cvtps_ph((a), (imm))
#define _mm512_cvtps_pd(a) kge_cvtps_pd(a)
#define _mm512_cvtpd_ps(a) kge_cvtpd_ps(a)
#define _mm512_extractf32x8_ps(a, imm) kge_extractf32x8_ps((a), (imm))
#define _mm512_permute_ps(a, imm) kge_permute_ps((a), (imm))
#define _mm512_mask3_fmadd_ps(a, b, c, k) kge_mask3_fmadd_ps((a), (b), (c), (k))
#define _mm512_reduce_add_pd(a) kge_reduce_add_pd(a)
/* SIMDe has it, without its native alias */
#define _mm512_shuffle_f32x4(a, b, imm) simde_mm512_shuffle_f32x4((a), (b), (imm))

#endif
