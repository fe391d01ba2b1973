-- isa/avx512.lua: AVX-512 F/BW/DQ/VL primitive table (16 f32 lanes, 32 zmm).
-- Tails use masks, so no scalar remainder code is ever emitted.
local M = {
  name = "avx512",
  W = 16,
  regs = 32,
  masked = true,
  target = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c",
  guard = "defined(__x86_64__) || defined(__i386__)",
  includes = { "immintrin.h" },
  vt = "__m512",
}

local function mask(n) return string.format("(__mmask16)0x%04x", 2 ^ n - 1) end

function M.load(dtype, base, off, n)
  local p = base .. " + " .. off
  local full = (n == nil or n == M.W)
  if dtype == "f32" then
    if full then return "_mm512_loadu_ps(" .. p .. ")" end
    return "_mm512_maskz_loadu_ps(" .. mask(n) .. ", " .. p .. ")"
  end
  local h
  if full then h = "_mm256_loadu_si256((const __m256i *)(" .. p .. "))"
  else h = "_mm256_maskz_loadu_epi16(" .. mask(n) .. ", " .. p .. ")" end
  if dtype == "bf16" then return "kgi_avx512_bf16_to_ps(" .. h .. ")" end
  return "_mm512_cvtph_ps(" .. h .. ")"
end

function M.store(dtype, base, off, n, v)
  local p = base .. " + " .. off
  local full = (n == nil or n == M.W)
  if dtype == "f32" then
    if full then return "_mm512_storeu_ps(" .. p .. ", " .. v .. ");" end
    return "_mm512_mask_storeu_ps(" .. p .. ", " .. mask(n) .. ", " .. v .. ");"
  end
  local h
  if dtype == "bf16" then h = "kgi_avx512_to_bf16(" .. v .. ")"
  else h = "_mm512_cvtps_ph(" .. v .. ", _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)" end
  if full then return "_mm256_storeu_si256((__m256i *)(" .. p .. "), " .. h .. ");" end
  return "_mm256_mask_storeu_epi16(" .. p .. ", " .. mask(n) .. ", " .. h .. ");"
end

-- Why: non-temporal stores for outputs far larger than the caches; only
-- full vectors at 64-byte (f32) / 32-byte (16-bit) aligned addresses.
function M.store_nt(dtype, base, off, v)
  local p = base .. " + " .. off
  if dtype == "f32" then return "_mm512_stream_ps(" .. p .. ", " .. v .. ");" end
  local h
  if dtype == "bf16" then h = "kgi_avx512_to_bf16(" .. v .. ")"
  else h = "_mm512_cvtps_ph(" .. v .. ", _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)" end
  return "_mm256_stream_si256((__m256i *)(" .. p .. "), " .. h .. ");"
end

function M.round(dtype, v)
  if dtype == "f32" then return v end
  if dtype == "bf16" then return "kgi_avx512_round_bf16(" .. v .. ")" end
  return "_mm512_cvtph_ps(_mm512_cvtps_ph(" .. v
    .. ", _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))"
end

function M.zero() return "_mm512_setzero_ps()" end
function M.set1(s) return "_mm512_set1_ps(" .. s .. ")" end
function M.add(a, b) return "_mm512_add_ps(" .. a .. ", " .. b .. ")" end
function M.sub(a, b) return "_mm512_sub_ps(" .. a .. ", " .. b .. ")" end
function M.sub_masked(a, b, n) return "_mm512_maskz_sub_ps(" .. mask(n) .. ", " .. a .. ", " .. b .. ")" end
function M.mul(a, b) return "_mm512_mul_ps(" .. a .. ", " .. b .. ")" end
function M.fma(a, b, c) return "_mm512_fmadd_ps(" .. a .. ", " .. b .. ", " .. c .. ")" end
function M.hsum(v) return "_mm512_reduce_add_ps(" .. v .. ")" end

-- Double lanes for sums that must not round in f32 (row.reduce, wide).
M.wide_vt = "__m512d"
function M.wide_zero() return "_mm512_setzero_pd()" end
function M.wide_lo(v) return "_mm512_cvtps_pd(_mm512_castps512_ps256(" .. v .. "))" end
function M.wide_hi(v) return "_mm512_cvtps_pd(_mm512_extractf32x8_ps(" .. v .. ", 1))" end
function M.wide_add(a, b) return "_mm512_add_pd(" .. a .. ", " .. b .. ")" end
function M.wide_hsum(v) return "_mm512_reduce_add_pd(" .. v .. ")" end

-- Why: conversion helpers too long for one expression, emitted once per file.
function M.prelude(attr)
  return (([[
/* 16 bf16 -> 16 f32 by widening and shifting into the high half. */
static inline __attribute__((unused)) ATTR __m512 kgi_avx512_bf16_to_ps(__m256i h)
{
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* f32 -> bf16 bits in the low 16 of each lane: round to nearest even.
 * Only values computed from bf16 inputs reach it, so a NaN here has zero
 * low 16 payload bits (a propagated bf16 NaN, or the default NaN): adding
 * the rounding bias cannot carry into the exponent, and NaN stays NaN
 * without a compare-and-blend. */
static inline __attribute__((unused)) ATTR __m512i kgi_avx512_bf16_bits(__m512 v)
{
  __m512i u = _mm512_castps_si512(v);
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  return _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
}

/* 16 f32 -> 16 packed bf16. */
static inline __attribute__((unused)) ATTR __m256i kgi_avx512_to_bf16(__m512 v)
{
  return _mm512_cvtepi32_epi16(kgi_avx512_bf16_bits(v));
}

/* Round each lane to the nearest bf16 value, kept as f32 ("hf" mode). */
static inline __attribute__((unused)) ATTR __m512 kgi_avx512_round_bf16(__m512 v)
{
  return _mm512_castsi512_ps(_mm512_slli_epi32(kgi_avx512_bf16_bits(v), 16));
}
]]):gsub("ATTR", attr))
end

return M
