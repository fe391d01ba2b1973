-- isa/neon.lua: AArch64 Advanced SIMD primitive table (4 f32 lanes, 32 v
-- registers).  Advanced SIMD is mandatory in the AArch64 ABI, so no target
-- attribute is needed.  No masked loads exist, so tails are scalar (the
-- plan uses isa/scalar.lua for them).  f16 converts with the base ARMv8
-- FCVTL/FCVTN (vcvt_f32_f16 / vcvt_f16_f32, round to nearest even under the
-- default FPCR); bf16 is integer work only, so no BF16 extension is needed.
local M = {
  name = "neon",
  W = 4,
  regs = 32,
  masked = false,
  target = nil,          -- baseline on AArch64
  guard = "defined(__aarch64__)",
  includes = { "arm_neon.h" },
  vt = "float32x4_t",
}

function M.load(dtype, base, off)
  local p = base .. " + " .. off
  if dtype == "f32" then return "vld1q_f32(" .. p .. ")" end
  if dtype == "bf16" then return "kgi_neon_load_bf16(" .. p .. ")" end
  return "kgi_neon_load_f16(" .. p .. ")"
end

function M.store(dtype, base, off, _, v)
  local p = base .. " + " .. off
  if dtype == "f32" then return "vst1q_f32(" .. p .. ", " .. v .. ");" end
  if dtype == "bf16" then return "vst1_u16(" .. p .. ", kgi_neon_to_bf16(" .. v .. "));" end
  return "vst1_u16(" .. p .. ", kgi_neon_to_f16(" .. v .. "));"
end

function M.round(dtype, v)
  if dtype == "f32" then return v end
  if dtype == "bf16" then return "kgi_neon_round_bf16(" .. v .. ")" end
  return "vcvt_f32_f16(vcvt_f16_f32(" .. v .. "))"
end

function M.zero() return "vdupq_n_f32(0.0f)" end
function M.set1(s) return "vdupq_n_f32(" .. s .. ")" end
function M.add(a, b) return "vaddq_f32(" .. a .. ", " .. b .. ")" end
function M.sub(a, b) return "vsubq_f32(" .. a .. ", " .. b .. ")" end
function M.mul(a, b) return "vmulq_f32(" .. a .. ", " .. b .. ")" end
-- vfmaq_f32(acc, x, y) is acc + x * y, fused.
function M.fma(a, b, c) return "vfmaq_f32(" .. c .. ", " .. a .. ", " .. b .. ")" end
function M.hsum(v) return "vaddvq_f32(" .. v .. ")" end

-- Double lanes for sums that must not round in f32 (row.reduce, wide).
M.wide_vt = "float64x2_t"
function M.wide_zero() return "vdupq_n_f64(0.0)" end
function M.wide_lo(v) return "vcvt_f64_f32(vget_low_f32(" .. v .. "))" end
function M.wide_hi(v) return "vcvt_high_f64_f32(" .. v .. ")" end
function M.wide_add(a, b) return "vaddq_f64(" .. a .. ", " .. b .. ")" end
function M.wide_hsum(v) return "vaddvq_f64(" .. v .. ")" end

-- Why: helpers that do not fit one expression, emitted once per file
-- (static, so packs never clash).  No target attribute: `attr` is unused.
-- Marked unused because a pack without f16 (or without "hf") leaves some
-- of them uncalled, and clang -Wall warns about unused static inlines.
function M.prelude(_)
  return [[
/* 4 f16 -> 4 f32: the halves travel as raw bits (kg_f16 is uint16_t).
 * Bit-identical to kg_f16_to_f32 except that FCVTL quiets a signalling NaN. */
static inline __attribute__((unused)) float32x4_t kgi_neon_load_f16(const kg_f16 *p)
{
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}

/* 4 f32 -> 4 f16 bits, round to nearest even (the default FPCR mode, which
 * kgen never changes); a NaN stays a quiet NaN.  Bit-identical to
 * kg_f32_to_f16 on every f32 input. */
static inline __attribute__((unused)) uint16x4_t kgi_neon_to_f16(float32x4_t v)
{
  return vreinterpret_u16_f16(vcvt_f16_f32(v));
}

/* 4 bf16 -> 4 f32: bf16 is the high half of an f32, so widen and shift. */
static inline __attribute__((unused)) float32x4_t kgi_neon_load_bf16(const kg_bf16 *p)
{
  return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16));
}

/* f32 -> bf16 bits in the low 16 of each lane: round to nearest even; a NaN
 * stays a (quiet) NaN instead of rounding into Inf. */
static inline __attribute__((unused)) uint32x4_t kgi_neon_bf16_bits(float32x4_t v)
{
  uint32x4_t u = vreinterpretq_u32_f32(v);
  uint32x4_t lsb = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
  uint32x4_t r = vshrq_n_u32(vaddq_u32(u, vaddq_u32(lsb, vdupq_n_u32(0x7fff))), 16);
  uint32x4_t qnan = vorrq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(0x40));
  return vbslq_u32(vceqq_f32(v, v), r, qnan);
}

/* 4 f32 -> 4 packed bf16 (lanes 0..3 in order). */
static inline __attribute__((unused)) uint16x4_t kgi_neon_to_bf16(float32x4_t v)
{
  return vmovn_u32(kgi_neon_bf16_bits(v));
}

/* Round each lane to the nearest bf16 value, kept as f32 ("hf" mode). */
static inline __attribute__((unused)) float32x4_t kgi_neon_round_bf16(float32x4_t v)
{
  return vreinterpretq_f32_u32(vshlq_n_u32(kgi_neon_bf16_bits(v), 16));
}
]]
end

return M
