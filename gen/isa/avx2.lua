-- isa/avx2.lua: AVX2 + FMA + F16C primitive table (8 f32 lanes, 16 ymm).
-- No masked 16-bit loads exist here, so tails are scalar (the plan uses
-- isa/scalar.lua for them).
local pair = require("isa.pair")

local M = {
  name = "avx2",
  W = 8,
  regs = 16,
  -- 16-bit RMSNorm rows up to this many bytes run two rows ahead (pack.lua
  -- `ahead2`, the next row's scale computed halfway through a step): on a
  -- Zen 4 core RMSNorm 1024 x 64 bf16 took 0.92x and f16 0.89x the time
  -- (bench/RESULTS.md run 31).  With that scale at the start of a step it
  -- had measured 5 % slower (run 15).  Not timed on Zen 3 or Intel.
  ahead2_bytes16 = 2048,
  -- out-of-place RMSNorm rows of calls that stream keep the fused two-row
  -- form (pack.lua `nt_fused`): RMSNorm 4096 x 8192 f32 0.81 the time on
  -- a Zen 5 core (bench/RESULTS.md run 41); not timed on Zen 3, whose
  -- two-pass rows were tuned there (run 40)
  nt_fused = true,
  -- LayerNorm's streamed rows run in the fused form at every size
  -- (pack.lua `ln_fused`), as on AVX-512 (bench/RESULTS.md run 41)
  ln_fused = true,
  -- and its non-temporal rows two at a time (pack.lua `ln_pair`):
  -- LayerNorm 4096 x 8192 f32 1.19 -> 1.08 x memcpy, bf16 2.26 -> 2.09 on
  -- a Zen 5 core (bench/RESULTS.md run 42)
  ln_pair = true,
  -- f32 rows realigned in registers too, as on AVX-512 (not timed here)
  ln_pair_realign = true,
  -- with two accumulators a sum (as on AVX-512): f32 1.05 -> 1.03, bf16
  -- 2.03 -> 1.99 x memcpy (bench/RESULTS.md run 42)
  wide_nacc = 2,
  masked = false,
  -- heads of up to 512 bytes go in groups (gen/pack.lua) although 16 ymm
  -- registers stream them: the group code holds no row in registers
  group_unrolled = true,
  -- QK-norm heads of the last token (all of decode) do not prefetch their
  -- own lines (qk_norm.c.tpl): with 256-bit loads the 8 prefetches of a
  -- 128-float head are a sixth of its load-port work, and on a Zen 3 core
  -- decode 40 x 128 measured 18-20 % faster (f32) and 9 % (bf16) without
  -- them (bench/RESULTS.md run 24); AVX-512 keeps them (run 13)
  own_line_prefetch = false,
  -- token-major QK-norm whose f32 heads of one token take at most this
  -- many bytes (16-bit heads twice that) asks for the next token's heads
  -- into L1 where the runtime says so (qk_norm.c.tpl `pl1`,
  -- kg_cpu_prefetch_zen5: AMD Zen 5), into L2 elsewhere (row.PREFETCH_HINT).
  -- On a Zen 5 core an L2 request was lost or not by where the kernel's
  -- code lay in physical memory: 2048-token prefill of 32 + 8 bf16 heads
  -- of 128 (10 KiB a token) 1.05-1.90 x the in-place pass by copy of one
  -- binary, 1.01-1.15 into L1; bf16 heads of 256 0.94 or 2.1-2.5 by copy,
  -- 0.92 into L1; f32 heads of 256 (40 KiB) 1.00 -> 0.83, of 128 0.84 ->
  -- 0.89 (RESULTS run 50).  Past 64 KiB not timed: L2
  prefetch_l1 = 64 * 1024,
  -- head-major QK-norm rows ask this far ahead in their head where the
  -- runtime says so (kg_cpu_prefetch_zen5: AMD Zen 5), by dtype (f32 as
  -- elsewhere): 2048-token prefill of 32 + 8 bf16 heads of 64 / 128 / 256
  -- on a Zen 5 core, one binary, ratio to the in-place pass 1.56 / 1.52 /
  -- 1.60 at 4 KiB, 1.54 / 1.46 / 1.23 at 16 KiB (bench/RESULTS.md run 50)
  hm_pf_zen5 = { f32 = 4096, half = 16 * 1024 },
  -- token-major QK-norm whose head counts are even but not both multiples
  -- of 4 (8 + 2, 6 + 2) goes in chained pairs instead of groups of 4 and
  -- one head at a time for the rest (gen/pack.lua): on a Zen 3 core
  -- 6 + 2 heads of bf16 head_dim 64 measured decode 3.3-4.0 -> 2.7 and
  -- 2048-token prefill 1.47-1.54 -> 1.33-1.38 x the ceiling (RESULTS run 25)
  pair_groups = true,
  -- QK-norm heads of up to this many bytes go in groups of 4 (gen/pack.lua;
  -- 512 elsewhere): decode 32 + 8 heads of f32 head_dim 256 (1 KiB) on a
  -- Zen 3 core, both builds in one process, 0.60x the time of head by
  -- head (1-6 tokens 0.60-0.68x; same bits; bench/RESULTS.md run 36)
  group_row_bytes = 1024,
  -- f32 QK-norm calls of up to this many bytes of heads stay in groups;
  -- longer ones stream head by head (gen/pack.lua; 256 KiB elsewhere).
  -- Zen 3, 32 + 8 heads, data in the caches, both builds in one process:
  -- groups took 0.52-0.58x the time of streaming for head_dim 64 (32-512
  -- tokens, token- and head-major), 0.86-0.89x for 128 (16-256 tokens),
  -- 0.76-0.85x for 256 (16-128 tokens); past the last-level cache
  -- streaming wins (2048-token prefill: 1.18x, 1.30x for groups).
  -- 2 MiB is within the L2 or L3 of any core this table targets.
  group_f32_bytes = 2 * 1024 * 1024,
  -- head-major QK-norm calls of fewer tokens than a group (decode) group
  -- each token's heads across heads (qk_norm.c.tpl): decode 32 + 8 heads
  -- of head_dim 128 on a Zen 3 core, paired, bf16 1.47 -> 0.80 us and f32
  -- 0.78 -> 0.53-0.59 us (bench/RESULTS.md run 25)
  head_major_groups = true,
  -- long QK-norm calls (past 256 KiB of heads) group 16-bit heads in at
  -- most this many bytes (gen/pack.lua, G_long): bf16 head_dim 128 in
  -- pairs, not fours, measured 5-8 % faster in 2048-token prefill of
  -- 32 + 8 heads on a Zen 3 core, token-major and head-major alike
  -- (bench/RESULTS.md run 26); AVX-512 too (Intel Xeon, run 27)
  long_group_bytes = 512,
  target = "avx2,fma,f16c",
  guard = "defined(__x86_64__) || defined(__i386__)",
  includes = { "immintrin.h" },
  vt = "__m256",
  -- large out-of-place calls with y off line alignment stream rows out
  -- through a stack row (kgi_nt_row, nt_rows.c.tpl) where the table
  -- cannot realign them in registers (nt_shift)
  nt_row = true,
}

function M.load(dtype, base, off)
  local p = base .. " + " .. off
  if dtype == "f32" then return "_mm256_loadu_ps(" .. p .. ")" end
  if dtype == "bf16" then return "kgi_avx2_load_bf16(" .. p .. ")" end
  return "_mm256_cvtph_ps(_mm_loadu_si128((const void *)(" .. p .. ")))"
end

function M.store(dtype, base, off, _, v)
  local p = base .. " + " .. off
  if dtype == "f32" then return "_mm256_storeu_ps(" .. p .. ", " .. v .. ");" end
  if dtype == "bf16" then
    return "_mm_storeu_si128((void *)(" .. p .. "), kgi_avx2_to_bf16(" .. v .. "));"
  end
  return "_mm_storeu_si128((void *)(" .. p .. "), kgi_avx2_to_f16(" .. v .. "));"
end

-- Why: one staging routine (P.stage, M.f16.stage): the full blocks of W
-- elements, each stored by the C function `store` (array + offset,
-- value); no lines for rows shorter than one block.
local function stage_blocks(W, store)
  return function(name, dim, value)
    local full = math.floor(dim / W) * W
    if full == 0 then return {} end
    return {
      string.format("float %s[%d] __attribute__((aligned(32)));", name, full),
      string.format("for (size_t i = 0; i < %d; i += %d) %s(%s + i, %s);", full, W, store, name, value("i", W)),
    }
  end
end

-- Staged f16 weights (pack.lua, via M.for_dtype), as on AVX-512
-- (isa/avx512.lua M.f16; here 0.90-0.93x the time of RMSNorm 1024 x 64 and
-- QK-norm f16 on a Zen 4 core, RESULTS run 33): full vectors only; the
-- scalar tail loads its own.
M.f16 = {
  stage = stage_blocks(M.W, "_mm256_store_ps"),
  load_staged = function(name, off) return "_mm256_load_ps(" .. name .. " + (" .. off .. "))" end,
}

-- Why: non-temporal stores for outputs far larger than the caches; only
-- full vectors at 32-byte (f32) / 16-byte (16-bit) aligned addresses.
function M.store_nt(dtype, base, off, v)
  local p = base .. " + " .. off
  if dtype == "f32" then return "_mm256_stream_ps(" .. p .. ", " .. v .. ");" end
  if dtype == "bf16" then
    return "_mm_stream_si128((void *)(" .. p .. "), kgi_avx2_to_bf16(" .. v .. "));"
  end
  return "_mm_stream_si128((void *)(" .. p .. "), kgi_avx2_to_f16(" .. v .. "));"
end

-- Why: f32 rows of a large out-of-place call with y off 32-byte alignment
-- stream each vector realigned in registers (kgi_ntr, nt_rows.c.tpl)
-- instead of through a stack row: on a Zen 4 core, x and y 16 bytes into
-- a line, 4096 x 8192 from DRAM against memcpy, LayerNorm 1.17 -> 0.97
-- and RMSNorm 0.99 -> 0.84 (bench/RESULTS.md run 30).  nt_value: the
-- vector the stream takes, where it is one register (f32); 16-bit rows
-- keep the stack row (P has no nt_shift).
function M.nt_value(dtype, v)
  if dtype == "f32" then return v end
  return nil
end
M.nt_shift = "kgi_ntr"

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

-- Why: groups of 4 rows (rms_group.c.tpl, env.V4) finish their sums
-- together, as on AVX-512 (isa/avx512.lua M.g4): one transposed
-- reduction into 4 doubles (kgi_avx2_hsum4, lane for lane the tree of
-- kgi_avx2_hsum, so the same bits as a row alone), the 4 rs in one
-- vector, one slow-path test.
M.g4 = {
  pvt = "__m256", svt = "__m256d", rvt = "__m256",
  part = function(v) return v end,
  sum4 = function(a, b, c, d) return "kgi_avx2_hsum4(" .. table.concat({ a, b, c, d }, ", ") .. ")" end,
  rs4 = function(s, dim, eps) return "kgi_avx2_rs4(" .. s .. ", " .. dim .. ", (double)" .. eps .. ")" end,
  -- Why: a group's four rs go to a stack copy at the step's top (stash)
  -- and each row's is broadcast from it (vbroadcastss, a load), not picked
  -- by a permute with an index vector: decode 40 x 128 bf16 0.94x the time
  -- built by GCC, 0.87x by clang, on a Zen 5 core (bench/RESULTS.md run
  -- 51).  KG_IN_MEMORY keeps the compiler from forwarding the copy.
  stash = function(r)
    return "float " .. r .. "_m[4] __attribute__((aligned(16))); _mm_store_ps(" .. r
      .. "_m, _mm256_castps256_ps128(" .. r .. ")); KG_IN_MEMORY(" .. r .. "_m);"
  end,
  get = function(r, g) return "_mm256_set1_ps(" .. r .. "_m[" .. g .. "])" end,
  -- the scalar slow test, !(ss <= FLT_MAX) [|| ss < tiny], on 4 lanes
  slow = function(s, tiny)
    local e = "_mm256_movemask_pd(_mm256_cmp_pd(" .. s .. ", _mm256_set1_pd((double)FLT_MAX), _CMP_NLE_UQ))"
    if tiny then
      e = e .. " | _mm256_movemask_pd(_mm256_cmp_pd(" .. s .. ", _mm256_set1_pd(" .. tiny .. "), _CMP_LT_OQ))"
    end
    return e
  end,
}

-- bf16 kernels use a second table (M.for_dtype), as on AVX-512
-- (isa/avx512.lua): a "vector" is 16 bf16 elements, one 32-byte load, held
-- as the f32 values of its even and odd elements (kgi_a2).  Splitting is a
-- shift and an and; packing back is a rounding add per half, a shift and a
-- word blend, where widening 8 at a time costs a widen and a shift per 8
-- and narrowing five operations, a pack and a lane permute per 8.  No
-- masks: row tails are scalar, as for the other AVX2 tables.
local P = {
  name = M.name, W = 16, regs = 8, masked = false, target = M.target,
  guard = M.guard, includes = M.includes, group_unrolled = M.group_unrolled, own_line_prefetch = M.own_line_prefetch,
  prefetch_l1 = M.prefetch_l1, hm_pf_zen5 = M.hm_pf_zen5,
  pair_groups = M.pair_groups, group_row_bytes = M.group_row_bytes,
  head_major_groups = M.head_major_groups, nt_row = M.nt_row,
  long_group_bytes = M.long_group_bytes, ahead2_bytes16 = M.ahead2_bytes16,
  nt_fused = M.nt_fused, ln_fused = M.ln_fused, ln_pair = M.ln_pair, wide_nacc = M.wide_nacc,
  -- LayerNorm's gamma and beta stay split per row here (pack.lua): staged
  -- as f32 they are twice the loads, and LayerNorm 768 x 512 bf16 took
  -- 1.12x the time on a Zen 4 core (f16 0.96x; bench/RESULTS.md run 33)
  stage_one_weight = true,
}
local need_bf16 = pair.ops(P, M, "kgi_a2", "kgi_aw2")

function P.load(dtype, base, off)
  need_bf16(dtype)
  return "kgi_a2_ld(" .. base .. " + " .. off .. ")"
end

-- Why: stores through one of two packers: kgi_a2_pack rounds to nearest
-- even ("hf"), kgi_a2_pack_ta ties away from zero ("single", one add per
-- half; the same choice as isa/avx512.lua).
local function storers(pack)
  local function store(dtype, base, off, _, v)
    need_bf16(dtype)
    return "_mm256_storeu_si256((void *)(" .. base .. " + " .. off .. "), " .. pack .. "(" .. v .. "));"
  end
  local function store_nt(dtype, base, off, v)
    need_bf16(dtype)
    return "_mm256_stream_si256((void *)(" .. base .. " + " .. off .. "), " .. pack .. "(" .. v .. "));"
  end
  return store, store_nt
end
P.store, P.store_nt = storers("kgi_a2_pack")

-- Staged weights (pack.lua), as on AVX-512: block o (a multiple of 16)
-- holds the 8 even elements at o and the 8 odd ones at o + 8; the
-- scalar tail is not staged (its chunks load their weights themselves).
-- No lines (nothing staged) for rows shorter than one vector.
P.stage = stage_blocks(P.W, "kgi_a2_stage")
-- Why: the table a kernel of this dtype and rounding is generated with
-- ("single" stores round ties away, kgi_a2_pack_ta).
M.for_dtype = pair.for_dtype(M, P, storers("kgi_a2_pack_ta"))

-- Why: the realigning stream of f32 rows (M.nt_shift), as isa/avx512.lua's
-- kgi_ntr but per 32-byte store: the previous vector's last d lanes, then
-- the current one's first 8 - d (two lane permutes by one index and a
-- blend); a row's partial first and last stores are masked stores inside
-- their 32 bytes.  16-bit rows keep the stack row: the same stream (by
-- 32-bit lanes, after the pack) measured 5 % slower than it for bf16
-- RMSNorm and LayerNorm on a Zen 4 core (bench/RESULTS.md run 30).
local NT_STREAM = [[
typedef struct { char *ya; __m256 prev; __m256i idx, lo; } kgi_ntr;

static inline __attribute__((unused)) ATTR kgi_ntr kgi_ntr_begin(void *y)
{
  const int d = (int)(((uintptr_t)y & 31) / 4);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  kgi_ntr s;
  s.ya = (char *)y - 4 * d;
  s.prev = _mm256_setzero_ps();
  s.idx = _mm256_and_si256(_mm256_sub_epi32(lane, _mm256_set1_epi32(d)), _mm256_set1_epi32(7));
  s.lo = _mm256_cmpgt_epi32(_mm256_set1_epi32(d), lane);
  return s;
}

static inline __attribute__((unused)) ATTR void kgi_ntr_put(kgi_ntr *s, size_t off, __m256 v)
{
  const __m256 line = _mm256_blendv_ps(_mm256_permutevar8x32_ps(v, s->idx),
                                       _mm256_permutevar8x32_ps(s->prev, s->idx), _mm256_castsi256_ps(s->lo));
  if (off) _mm256_stream_ps((float *)(void *)(s->ya + 4 * off), line);
  else _mm256_maskstore_ps((float *)(void *)s->ya, _mm256_xor_si256(s->lo, _mm256_set1_epi32(-1)), line);
  s->prev = v;
}

static inline __attribute__((unused)) ATTR void kgi_ntr_end(kgi_ntr *s, size_t n)
{
  _mm256_maskstore_ps((float *)(void *)(s->ya + 4 * n), s->lo, _mm256_permutevar8x32_ps(s->prev, s->idx));
}

]]

-- Why: helpers that do not fit one expression, emitted once per file with
-- the file's target attribute (static, so packs never clash).
function M.prelude(attr)
  local text = ([[
/* Horizontal sum of 8 lanes (pairwise). */
static inline __attribute__((unused)) ATTR float kgi_avx2_hsum(__m256 v)
{
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

/* Why: four rows' horizontal sums at once, as doubles (groups of 4,
 * M.g4), each lane by the tree of kgi_avx2_hsum: 128-bit halves added
 * (a|b and c|d side by side), then lanes i + (i + 2), then the pair. */
static inline __attribute__((unused)) ATTR __m256d kgi_avx2_hsum4(__m256 a, __m256 b, __m256 c, __m256 d)
{
  const __m256 ab = _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
  const __m256 cd = _mm256_add_ps(_mm256_permute2f128_ps(c, d, 0x20), _mm256_permute2f128_ps(c, d, 0x31));
  /* lanes 0-1: a's s0 + s2, s1 + s3; 2-3: c's; 4-5: b's; 6-7: d's */
  const __m256 t = _mm256_add_ps(_mm256_shuffle_ps(ab, cd, 0x44), _mm256_shuffle_ps(ab, cd, 0xEE));
  const __m256 u = _mm256_add_ps(t, _mm256_permute_ps(t, 0xB1));
  const __m256 s = _mm256_permutevar8x32_ps(u, _mm256_setr_epi32(0, 4, 2, 6, 0, 0, 0, 0));
  return _mm256_cvtps_pd(_mm256_castps256_ps128(s));
}

/* Why: the rs of four rows in lanes 0-3, by the same IEEE operations per
 * lane as the scalar (float)(1.0 / sqrt(ss / dim + eps)). */
static inline __attribute__((unused)) ATTR __m256 kgi_avx2_rs4(__m256d s, double dim, double eps)
{
  const __m256d m = _mm256_add_pd(_mm256_div_pd(s, _mm256_set1_pd(dim)), _mm256_set1_pd(eps));
  return _mm256_castps128_ps256(_mm256_cvtpd_ps(_mm256_div_pd(_mm256_set1_pd(1.0), _mm256_sqrt_pd(m))));
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
  __m256i u = _mm256_cvtepu16_epi32(_mm_loadu_si128((const void *)p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(u, 16));
}

/* f32 -> bf16 round to nearest even in the high 16 bits of each lane (the
 * low 16 are garbage): the rounding add every bf16 store and round uses.
 * Only values computed from bf16 inputs reach it, so a NaN here has zero
 * low 16 payload bits (a propagated bf16 NaN, or the default NaN): adding
 * the rounding bias cannot carry into the exponent, and NaN stays NaN
 * without a compare-and-blend. */
static inline __attribute__((unused)) ATTR __m256i kgi_avx2_rne(__m256 v)
{
  const __m256i u = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  return _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
}

/* f32 -> bf16 bits in the low 16 of each lane: round to nearest even. */
static inline __attribute__((unused)) ATTR __m256i kgi_avx2_bf16_bits(__m256 v)
{
  return _mm256_srli_epi32(kgi_avx2_rne(v), 16);
}

/* Why: 8 f32 -> 8 f16 (round to nearest even) in a register: under clang
 * KG_REG keeps the store out of vcvtps2ph (its memory form has half the
 * throughput of the register form and a store on a Zen 3 core; clang's
 * f16 QK-norm decode took 1.10x gcc's time with it, RESULTS run 38).
 * gcc gets the bare intrinsic (its code unchanged): it folds only a few,
 * in row loops where it measured no slower. */
#if defined(__clang__)
static inline __attribute__((unused)) ATTR __m128i kgi_avx2_to_f16(__m256 v)
{
  __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  KG_REG(h);
  return h;
}
#else
#define kgi_avx2_to_f16(v) _mm256_cvtps_ph((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#endif

/* 8 f32 -> 8 packed bf16 (lanes 0..7 in order). */
static inline __attribute__((unused)) ATTR __m128i kgi_avx2_to_bf16(__m256 v)
{
  __m256i r = kgi_avx2_bf16_bits(v);
  __m256i p = _mm256_packus_epi32(r, r);
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(p, 0x08));
}

/* Round each lane to the nearest bf16 value, kept as f32 ("hf" mode): the
 * rounding add of kgi_avx2_rne, then the low 16 bits cleared by an
 * and (gcc 12 keeps a shift down and up as two shifts). */
static inline __attribute__((unused)) ATTR __m256 kgi_avx2_round_bf16(__m256 v)
{
  return _mm256_castsi256_ps(_mm256_and_si256(kgi_avx2_rne(v), _mm256_set1_epi32((int)0xffff0000u)));
}

TYPES_HERE/* 16 packed bf16 -> even/odd f32: a shift and an and, no shuffle; one
 * load (KG_ONE_LOAD: GCC would read the vector again for the and). */
static inline __attribute__((unused)) ATTR kgi_a2 kgi_a2_ld(const kg_bf16 *p)
{
  __m256i u = _mm256_loadu_si256((const void *)p);
  KG_ONE_LOAD(u);
  kgi_a2 r = { _mm256_castsi256_ps(_mm256_slli_epi32(u, 16)),
               _mm256_castsi256_ps(_mm256_and_si256(u, _mm256_set1_epi32((int)0xffff0000u))) };
  return r;
}

/* Why: even/odd halves whose bf16 sits in each lane's high 16 bits -> 16
 * packed bf16: the odd lanes' high words, the even lanes' moved down. */
static inline __attribute__((unused)) ATTR __m256i kgi_a2_merge(__m256i e, __m256i o)
{
  return _mm256_blend_epi16(o, _mm256_srli_epi32(e, 16), 0x55);
}

/* even/odd f32 -> 16 packed bf16, round to nearest even ("hf"). */
static inline __attribute__((unused)) ATTR __m256i kgi_a2_pack(kgi_a2 v)
{
  return kgi_a2_merge(kgi_avx2_rne(v.e), kgi_avx2_rne(v.o));
}

/* even/odd f32 -> 16 packed bf16, round to nearest, ties away from zero:
 * half a bf16 step added to each lane's magnitude bits (no carry out of a
 * NaN's zero low half, as above). */
static inline __attribute__((unused)) ATTR __m256i kgi_a2_pack_ta(kgi_a2 v)
{
  const __m256i half = _mm256_set1_epi32(0x8000);
  return kgi_a2_merge(_mm256_add_epi32(_mm256_castps_si256(v.e), half),
                      _mm256_add_epi32(_mm256_castps_si256(v.o), half));
}

]]):gsub("TYPES_HERE", function() return pair.c_types(M, "kgi_a2", "kgi_aw2", "avx2") .. "\n" end)
  local half = "_mm256_stream_si256((void *)(d + i + OFF), _mm256_loadu_si256((const void *)(s + i + OFF)));"
  text = text .. pair.c_nt_row(half:gsub("OFF", "0") .. "\n    " .. half:gsub("OFF", "32"))
  text = text .. NT_STREAM
  text = text .. pair.c_ops(M, "kgi_a2", "kgi_aw2", 8, "_mm256_store_ps", "_mm256_load_ps")
  return (text:gsub("ATTR", attr))
end

return M
