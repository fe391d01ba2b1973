/* kg_convert.h: scalar bf16/f16 <-> f32 conversions, header-only.
 *
 * Portable C99: bits move through memcpy, no intrinsics, no _Float16, no
 * dependence on the FPU rounding mode or on FTZ/DAZ (all rounding is done
 * on integers).  Narrowing rounds to nearest, ties to even; Inf stays Inf;
 * overflow rounds to Inf; a NaN stays a NaN of the same sign, quieted, with
 * the high bits of its payload kept.  Scalar kernels, tails of SIMD kernels
 * and the tests all use these, so every variant rounds the same way. */
#ifndef KG_CONVERT_H
#define KG_CONVERT_H

#include <string.h>

#include "kg_variant.h"

/* Why: bf16 is the high half of an f32, so widening is a shift (exact). */
static inline float kg_bf16_to_f32(kg_bf16 h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Why: narrowing drops 16 bits; adding 0x7fff plus the kept LSB rounds to
 * nearest-even, and a carry out of the mantissa bumps the exponent, which
 * turns values >= the bf16 overflow threshold into Inf for free.  NaNs are
 * handled first: truncating a NaN whose payload sits only in the low bits
 * would give Inf, so set the quiet bit (0x0040) instead. */
static inline kg_bf16 kg_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (kg_bf16)((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (kg_bf16)(u >> 16);
}

/* Why: rebias the exponent (15 -> 127) and widen the mantissa; f16
 * subnormals become f32 normals after normalizing; Inf/NaN keep their
 * payload bits exactly (a signalling NaN is not quieted: the result is
 * bit-exact, nothing is computed on it). */
static inline float kg_f16_to_f32(kg_f16 h) {
  uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
  uint32_t exp = ((uint32_t)h >> 10) & 0x1fu;
  uint32_t man = (uint32_t)h & 0x3ffu;
  uint32_t u;
  float f;
  if (exp == 0x1fu) {
    u = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) {
    u = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) {
    u = sign;
  } else {
    /* subnormal m * 2^-24: shift until the implicit bit (0x400) appears */
    uint32_t e = 113u; /* f32 biased exponent of 2^-14, the f16 min normal */
    while (!(man & 0x400u)) {
      man <<= 1;
      e--;
    }
    u = sign | (e << 23) | ((man & 0x3ffu) << 13);
  }
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Why: one integer rounding straight from the f32 bits (no intermediate
 * float step, so no double rounding), in three ranges: results that are
 * f16 normals round like bf16 above (carry into the exponent is correct,
 * up to Inf); results that are f16 subnormals are a right shift of the full
 * 24-bit significand with an explicit round-half-even on the remainder;
 * anything at or below 2^-25 (half the smallest subnormal, a tie to the
 * even zero) is a signed zero. */
static inline kg_f16 kg_f32_to_f16(float f) {
  uint32_t u, a, sign;
  memcpy(&u, &f, sizeof u);
  sign = (u >> 16) & 0x8000u;
  a = u & 0x7fffffffu;
  if (a > 0x7f800000u) /* NaN: quiet bit 0x200, high payload, sign */
    return (kg_f16)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) /* >= 65520 (halfway 65504..65536), or Inf */
    return (kg_f16)(sign | 0x7c00u);
  if (a >= 0x38800000u) { /* >= 2^-14: an f16 normal */
    uint32_t r = a - 0x38000000u; /* exponent bias 127 -> 15 */
    r += 0x0fffu + ((r >> 13) & 1u);
    return (kg_f16)(sign | (r >> 13));
  }
  if (a <= 0x33000000u) /* <= 2^-25: rounds to zero */
    return (kg_f16)sign;
  {
    /* value = m * 2^(e-150); in units of 2^-24 that is m >> (126 - e),
     * with 102 <= e <= 112 here, so the shift is 14..24. */
    uint32_t e = a >> 23;
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e;
    uint32_t q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u)))
      q++; /* may carry to 0x400: the smallest normal, encoded correctly */
    return (kg_f16)(sign | q);
  }
}

/* Why: the "hf" rounding mode rounds intermediates to the storage type
 * the way PyTorch does (x.to(bf16)) and keeps computing in f32. */
static inline float kg_round_bf16(float f) {
  return kg_bf16_to_f32(kg_f32_to_bf16(f));
}

/* Why: as kg_round_bf16, for f16 storage. */
static inline float kg_round_f16(float f) {
  return kg_f16_to_f32(kg_f32_to_f16(f));
}

#endif
