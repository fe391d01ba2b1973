-- isa/avx2.lua: AVX2 + FMA + F16C primitive table (8 f32 lanes, 16 ymm).
-- No masked 16-bit loads exist here, so tails are scalar (the plan uses
-- isa/scalar.lua for them).
local M = {
  name = "avx2",
  W = 8,
  regs = 16,
  masked = false,
  target = "avx2,fma,f16c",
  guard = "defined(__x86_64__) || defined(__i386__)",
  includes = { "immintrin.h" },
  vt = "__m256",
}

function M.load(dtype, base, off)
  local p = base .. " + " .. off
  if dtype == "f32" then return "_mm256_loadu_ps(" .. p .. ")" end
  if dtype == "bf16" then return "kgi_avx2_load_bf16(" .. p .. ")" end
  return "_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(" .. p .. ")))"
end

function M.store(dtype, base, off, _, v)
  local p = base .. " + " .. off
  if dtype == "f32" then return "_mm256_storeu_ps(" .. p .. ", " .. v .. ");" end
  if dtype == "bf16" then
    return "_mm_storeu_si128((__m128i *)(" .. p .. "), kgi_avx2_to_bf16(" .. v .. "));"
  end
  return "_mm_storeu_si128((__m128i *)(" .. p .. "), _mm256_cvtps_ph(" .. v
    .. ", _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));"
end

-- Why: non-temporal stores for outputs far larger than the caches; only
-- full vectors at 32-byte (f32) / 16-byte (16-bit) aligned addresses.
function M.store_nt(dtype, base, off, v)
  local p = base .. " + " .. off
  if dtype == "f32" then return "_mm256_stream_ps(" .. p .. ", " .. v .. ");" end
  if dtype == "bf16" then
    return "_mm_stream_si128((__m128i *)(" .. p .. "), kgi_avx2_to_bf16(" .. v .. "));"
  end
  return "_mm_stream_si128((__m128i *)(" .. p .. "), _mm256_cvtps_ph(" .. v
    .. ", _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));"
end

function M.round(dtype, v)
  if dtype == "f32" then return v end
  if dtype == "bf16" then return "kgi_avx2_round_bf16(" .. v .. ")" end
  return "_mm256_cvtph_ps(_mm256_cvtps_ph(" .. v
    .. ", _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))"
end

function M.zero() return "_mm256_setzero_ps()" end
function M.set1(s) return "_mm256_set1_ps(" .. s .. ")" end
function M.add(a, b) return "_mm256_add_ps(" .. a .. ", " .. b .. ")" end
function M.sub(a, b) return "_mm256_sub_ps(" .. a .. ", " .. b .. ")" end
function M.mul(a, b) return "_mm256_mul_ps(" .. a .. ", " .. b .. ")" end
function M.fma(a, b, c) return "_mm256_fmadd_ps(" .. a .. ", " .. b .. ", " .. c .. ")" end
function M.hsum(v) return "kgi_avx2_hsum(" .. v .. ")" end

-- Double lanes for sums that must not round in f32 (row.reduce, wide).
M.wide_vt = "__m256d"
function M.wide_zero() return "_mm256_setzero_pd()" end
function M.wide_lo(v) return "_mm256_cvtps_pd(_mm256_castps256_ps128(" .. v .. "))" end
function M.wide_hi(v) return "_mm256_cvtps_pd(_mm256_extractf128_ps(" .. v .. ", 1))" end
function M.wide_add(a, b) return "_mm256_add_pd(" .. a .. ", " .. b .. ")" end
function M.wide_hsum(v) return "kgi_avx2_hsum_pd(" .. v .. ")" end

-- Why: helpers that do not fit one expression, emitted once per file with
-- the file's target attribute (static, so packs never clash).
function M.prelude(attr)
  return (([[
/* Horizontal sum of 8 lanes (pairwise). */
static inline __attribute__((unused)) ATTR float kgi_avx2_hsum(__m256 v)
{
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

/* Horizontal sum of 4 double lanes. */
static inline __attribute__((unused)) ATTR double kgi_avx2_hsum_pd(__m256d v)
{
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

/* 8 bf16 -> 8 f32: bf16 is the high half of an f32, so widen and shift. */
static inline __attribute__((unused)) ATTR __m256 kgi_avx2_load_bf16(const kg_bf16 *p)
{
  __m256i u = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(u, 16));
}

/* f32 -> bf16 bits in the low 16 of each lane: round to nearest even.
 * Only values computed from bf16 inputs reach it, so a NaN here has zero
 * low 16 payload bits (a propagated bf16 NaN, or the default NaN): adding
 * the rounding bias cannot carry into the exponent, and NaN stays NaN
 * without a compare-and-blend. */
static inline __attribute__((unused)) ATTR __m256i kgi_avx2_bf16_bits(__m256 v)
{
  __m256i u = _mm256_castps_si256(v);
  __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  return _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
}

/* 8 f32 -> 8 packed bf16 (lanes 0..7 in order). */
static inline __attribute__((unused)) ATTR __m128i kgi_avx2_to_bf16(__m256 v)
{
  __m256i r = kgi_avx2_bf16_bits(v);
  __m256i p = _mm256_packus_epi32(r, r);
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(p, 0x08));
}

/* Round each lane to the nearest bf16 value, kept as f32 ("hf" mode). */
static inline __attribute__((unused)) ATTR __m256 kgi_avx2_round_bf16(__m256 v)
{
  return _mm256_castsi256_ps(_mm256_slli_epi32(kgi_avx2_bf16_bits(v), 16));
}
]]):gsub("ATTR", attr))
end

return M
