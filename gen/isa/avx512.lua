-- isa/avx512.lua: AVX-512 F/BW/DQ/VL primitive table (16 f32 lanes, 32 zmm).
-- Tails use masks, so no scalar remainder code is ever emitted.
local pair = require("isa.pair")

local M = {
  name = "avx512",
  W = 16,
  regs = 32,
  masked = true,
  target = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c",
  guard = "defined(__x86_64__) || defined(__i386__)",
  includes = { "immintrin.h" },
  vt = "__m512",
  -- 16-bit RMSNorm rows up to this many bytes run two rows ahead
  -- (pack.lua `ahead2`): measured 8-12 % faster at 1024 bf16 on a Zen 4
  -- core (bench/RESULTS.md run 15), and with the next row's scale moved
  -- from the start of a step to its middle 8.5 % more (run 31).  f32 rows
  -- stay one row ahead: 5 % slower two ahead, even with that move (run 31)
  ahead2_bytes16 = 2048,
  -- out-of-place RMSNorm rows of calls that stream (non-temporal
  -- stores) keep the fused two-row form (pack.lua `nt_fused`): on a Zen 5
  -- core RMSNorm 4096 x 8192 f32 0.80 and bf16 0.84 the time of the
  -- two-pass rows (bench/RESULTS.md run 41)
  nt_fused = true,
  -- and where the runtime says so (kg_cpu_nt_split: Intel;
  -- kg_cpu_nt_split4k for aligned rows in parts of 4 KiB: Intel and Zen 5)
  -- read and write those rows as streams side by side (pack.lua `nt_split`)
  nt_split = true,
  -- weights off cache-line alignment that rows read from memory are
  -- copied once per call to aligned stack arrays (pack.lua walign)
  walign = true,
  -- LayerNorm's streamed rows (not only those that stream out) run in the
  -- fused form too (pack.lua `ln_fused`): on a Zen 5 core, 16 rows of
  -- 4096 in L2, f32 0.6 and bf16 0.6 the time of row by row
  -- (bench/RESULTS.md run 41)
  ln_fused = true,
  -- and its non-temporal rows two at a time, so each line of gamma and
  -- beta comes from L2 once for both (pack.lua `ln_pair`): LayerNorm 4096
  -- x 8192 on a Zen 5 core f32 1.22-1.25 -> 1.03-1.05 x memcpy, bf16 1.59
  -- -> 1.45, f16 1.94 -> 1.65 (bench/RESULTS.md run 42)
  ln_pair = true,
  -- f32 rows realigned in registers (kgi_ntr) as well: at offset 16 1.23
  -- -> 1.12-1.16; not copied to the bf16 table, whose rows realigned two
  -- at a time (kgi_ntw) took 1.85 against 1.53 one at a time (run 42)
  ln_pair_realign = true,
  -- LayerNorm's sums (a wide one with it) keep one accumulator a sum, not
  -- four (row.reduce): a pair's nearer the registers. Two: 4096 x 8192
  -- bf16 1.47 -> 1.35 x memcpy, 768 x 512 bf16 0.98 the time, f32
  -- unchanged (bench/RESULTS.md run 42); one, with a bf16 half's double
  -- lanes one vector (isa/pair.lua): its time over five gcc builds
  -- 3.11-3.77 ms against 3.11-4.40, clang -O2 1.42 -> 1.23 x memcpy, f32
  -- unchanged (run 48; the loop's speed moves with code placement)
  wide_nacc = 1,
  -- chained QK-norm groups of 4 sum two groups ahead and start the next
  -- group's rs a step early (pack.lua `ahead2_of`): decode 40 x 128 bf16
  -- 9 %, 40 x 64 bf16 and f32 20 % faster on a Zen 4 core, prefill no
  -- slower (RESULTS run 16); AVX2 measured no gain
  ahead2_group = true,
  -- head-major QK-norm calls of fewer tokens than a group (decode) group
  -- each token's heads across heads (qk_norm.c.tpl), as on AVX2: decode
  -- 32 + 8 heads on an Intel Xeon (Emerald Rapids), builds alternated, head
  -- by head took 1.36-1.55x as long for bf16 (head_dim 64-256) and
  -- 1.12-1.38x for f32 (64, 128) (bench/RESULTS.md run 27)
  head_major_groups = true,
  -- token-major QK-norm whose head counts are even but not both multiples
  -- of 4 (8 + 2, 6 + 2) goes in chained pairs, as on AVX2 (gen/pack.lua):
  -- decode 6 + 2 heads on that Xeon took 0.70-0.88x the time (bf16 and
  -- f32, head_dim 64 and 128, two sessions of runs; bf16 64 once 1.04x),
  -- 2048-token prefill 0.94-1.07x (RESULTS run 27)
  pair_groups = true,
  -- long QK-norm calls group 16-bit heads in at most 512 bytes, as on AVX2
  -- (gen/pack.lua, G_long): head_dim 128 in pairs, not fours.  2048-token
  -- prefill of 32 + 8 bf16 heads on that Xeon, ratio to the in-place pass:
  -- head-major 1.49-1.53 -> 1.16-1.30, token-major 1.36-1.39 -> 1.30-1.32
  -- (RESULTS run 27).  Pairs stay the floor: 256 bytes (head_dim 64 in
  -- pairs) took 1.15-1.33x the time there
  long_group_bytes = 512,
  -- token-major QK-norm heads of up to 1 KiB (f32 head_dim 256) go in
  -- groups of 4 too, as on AVX2 (gen/pack.lua; 512 bytes elsewhere), with
  -- their line-frame twin.  Decode 32 + 8 x 256 f32 on a Zen 5 core, time
  -- B / A (bench/ab.sh): gcc 0.86, clang 0.84; at 16 bytes into a line
  -- 0.97 / 0.93; with nothing rotated (data in L1) 0.65; 2048-token
  -- prefill unchanged (its calls stream head by head).  Not head-major:
  -- its decode took 0.75x the time there, but its 2048-token prefill
  -- (the same loop text, compiled into the larger function) 1.05x, on
  -- every copy of the binary (bench/RESULTS.md run 55)
  group_row_bytes_tm = 1024,
  -- long token-major calls that stream f32 heads of at least this many
  -- bytes held in registers (head_dim 256) also get a body that loads
  -- each vector twice (row.plan_reload, gen/pack.lua), taken for calls of
  -- KG_NT_BYTES of heads or more where the runtime says so
  -- (kg_cpu_stream_reload: AMD Zen 4).  2048-token prefill of 32 + 8 x 256
  -- f32 on a Zen 4 core, ratio to the in-place pass: held 1.03-1.08,
  -- twice loaded 0.92; with the data in L2 or L3 (8-256 tokens) held took
  -- 35 ns a head, twice loaded 39 (bench/RESULTS.md run 56).  That body
  -- runs in ymm operations (M.y2, the same bits): 0.87-0.98 -> 0.80-0.87
  -- there (run 57)
  stream_reload = 1024,
  -- long token-major calls of bf16 heads (AVX512_BF16 twin) as one
  -- pipeline of heads two ahead, each loaded once (kernels/pipe.lua),
  -- taken where the runtime says so (kg_cpu_qk_pipe)
  qk_pipe = true,
  -- head-major QK-norm rows prefetch 1 KiB ahead in their head, not 4
  -- (gen/pack.lua HM_PF_BYTES): 2048-token prefill of 32 + 8 heads on a
  -- Zen 4 core, builds alternated, head_dim 128 and 256 took 0.74-0.81x
  -- the time (f32) and 0.88-0.96x (bf16), head_dim 64 0.88-1.03x; no
  -- prefetch did as well for f32, less well for bf16 (RESULTS run 28).
  -- Not timed on an Intel core
  hm_pf_bytes = 1024,
  -- token-major QK-norm of up to 16 KiB of f32 heads a token (32 KiB of
  -- 16-bit ones) asks for the next token's heads into L1 where the
  -- runtime says so (AMD Zen 5), as on AVX2: 2048-token prefill of 32 + 8
  -- bf16 heads of 64 0.76-1.14 -> 0.67-0.89 x the in-place pass over
  -- copies of one binary on a Zen 5 core, bf16 heads of 256 (20 KiB) 0.97
  -- -> 0.93; f32 heads of 128 (20 KiB) were 0.92 -> 0.97 into L1, of 256
  -- 0.92 -> 0.95 (bench/RESULTS.md run 50); L2 elsewhere (on a Zen 4 core
  -- L1 had been 1.7-2x slower, run 12)
  prefetch_l1 = 16 * 1024,
  -- head-major QK-norm rows ask this far ahead in their head where the
  -- runtime says so (kg_cpu_prefetch_zen5: AMD Zen 5), by dtype:
  -- 2048-token prefill of 32 + 8 heads on a Zen 5 core, one binary, ratio
  -- to the in-place pass: bf16 heads of 64 / 128 / 256 1.63 / 1.52 / 1.48
  -- at 1 KiB, 1.15 / 1.06 / 1.33 at 16 KiB; f32 1.23 / 1.10 / 1.19 at
  -- 1 KiB, 1.08 / 0.98 / 1.15 at 4 KiB (8 and 16 KiB no better for f32;
  -- bench/RESULTS.md run 50)
  hm_pf_zen5 = { f32 = 4096, half = 16 * 1024 },
  -- large out-of-place calls with y off line alignment stream rows out
  -- through a stack row (kgi_nt_row, nt_rows.c.tpl) where the table
  -- cannot realign them in registers (nt_shift)
  nt_row = true,
}

local function mask(n) return string.format("(__mmask16)0x%04x", 2 ^ n - 1) end

-- `m` (load, store): a run-time mask (C expression) instead of n's; f32
-- only, for the line-frame group code (kernels/lines.lua, M.lf)
function M.load(dtype, base, off, n, m, inside)
  local p = base .. " + " .. off
  local full = (n == nil or n == M.W)
  if dtype == "f32" then
    if m and inside then return "kgi_avx512_ldw_ps(" .. m .. ", " .. p .. ")" end
    if m then return "_mm512_maskz_loadu_ps(" .. m .. ", " .. p .. ")" end
    if full then return "_mm512_loadu_ps(" .. p .. ")" end
    return "_mm512_maskz_loadu_ps(" .. mask(n) .. ", " .. p .. ")"
  end
  local h
  if full then h = "_mm256_loadu_si256((const void *)(" .. p .. "))"
  else h = "_mm256_maskz_loadu_epi16(" .. mask(n) .. ", " .. p .. ")" end
  if dtype == "bf16" then return "kgi_avx512_bf16_to_ps(" .. h .. ")" end
  return "_mm512_cvtph_ps(" .. h .. ")"
end

function M.store(dtype, base, off, n, v, m)
  local p = base .. " + " .. off
  local full = (n == nil or n == M.W)
  if dtype == "f32" then
    if m then return "_mm512_mask_storeu_ps(" .. p .. ", " .. m .. ", " .. v .. ");" end
    if full then return "_mm512_storeu_ps(" .. p .. ", " .. v .. ");" end
    return "_mm512_mask_storeu_ps(" .. p .. ", " .. mask(n) .. ", " .. v .. ");"
  end
  local h
  if dtype == "bf16" then h = "kgi_avx512_to_bf16(" .. v .. ")"
  else h = "_mm512_cvtps_ph(" .. v .. ", _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)" end
  if full then return "_mm256_storeu_si256((void *)(" .. p .. "), " .. h .. ");" end
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
  return "_mm256_stream_si256((void *)(" .. p .. "), " .. h .. ");"
end

-- Why: what store_nt writes, where it is one full register (f32); 16-bit
-- rows go through 32-byte halves and take the staged stream instead
-- (nt_rows.c.tpl).
function M.nt_value(dtype, v)
  if dtype == "f32" then return v end
  return nil
end
M.nt_shift = "kgi_ntr"
-- Why: what the line-frame stream (nt_rows.c.tpl, `frame`) does with the
-- 64 bytes nt_value gives: its type and zero, a blend of two by lane mask
-- (the frame's head mask), a masked store and a stream to a line.
-- copy(dst, src, off, end): a line of raw elements from src + off to the
-- aligned dst + off, end "head" / "tail" masked by the frame's lane masks
-- (the weights' copy in the frame).
-- (f32 moves: they copy any bits, bf16 pairs too)
-- The end lines stay masked windows (not kgi_avx512_ldw_ps as in
-- kernels/lines.lua): this copy runs once per streamed call (outputs past
-- KG_NT_BYTES, milliseconds), where an assist is lost in the noise, and it
-- sits in the kernel's own function, whose aligned rows gcc compiled
-- slower with the helper there (LayerNorm 4096 x 8192 bf16, aligned, on
-- the Zen 5 VM: 4.7-5.2 ms against 3.0-3.5; that loop's speed moves with
-- code placement alone, bench/RESULTS.md run 48)
local function nt_frame_copy(dst, src, off, e)
  local p = "(const float *)(const void *)(" .. src .. " + " .. off .. ")"
  local m = e == "head" and "kmh" or e == "tail" and "kmt" or nil
  local ld = m and ("_mm512_maskz_loadu_ps(" .. m .. ", " .. p .. ")") or ("_mm512_loadu_ps(" .. p .. ")")
  return "_mm512_store_ps((float *)(void *)(" .. dst .. " + " .. off .. "), " .. ld .. ");"
end
M.nt_frame = {
  vt = "__m512", zero = "_mm512_setzero_ps()", copy = nt_frame_copy,
  blend = function(a, m, b) return "_mm512_mask_mov_ps(" .. a .. ", " .. m .. ", " .. b .. ")" end,
  mstore = function(p, m, v) return "_mm512_mask_storeu_ps(" .. p .. ", " .. m .. ", " .. v .. ");" end,
  stream = function(p, v) return "_mm512_stream_ps(" .. p .. ", " .. v .. ");" end,
}

function M.round(dtype, v)
  if dtype == "f32" then return v end
  if dtype == "bf16" then return "kgi_avx512_round_bf16(" .. v .. ")" end
  return "_mm512_cvtph_ps(_mm512_cvtps_ph(" .. v
    .. ", _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))"
end

-- Why: one staging routine (P.stage, M.f16.stage) for blocks of W
-- elements, each stored by store(array, offset, value) (C statement); a
-- tail block is zero-filled by the masked load `value` gives for it.
local function stage_blocks(W, store)
  return function(name, dim, value)
    local full = math.floor(dim / W) * W
    local lines = { string.format("float %s[%d] __attribute__((aligned(64)));", name, math.ceil(dim / W) * W) }
    local function one(off, n) return store(name, off, value(off, n)) end
    if full > 0 then
      lines[#lines + 1] = string.format("for (size_t i = 0; i < %d; i += %d) %s", full, W, one("i", W))
    end
    if dim > full then lines[#lines + 1] = one(tostring(full), dim - full) end
    return lines
  end
end

-- Staged f16 weights (pack.lua, via M.for_dtype): converted to f32 once
-- per call into a stack array, so each row loads them as f32 instead of
-- converting them again: conversions bound f16 rows (on a Zen 4 core
-- decode 40 x 256 f16 0.83x the time, RMSNorm 1024 x 64 0.81x;
-- bench/RESULTS.md run 33).  A tail block is zero-filled (masked load).
M.f16 = {
  stage = stage_blocks(M.W, function(a, off, v)
    return "_mm512_store_ps(" .. a .. " + " .. off .. ", " .. v .. ");"
  end),
  load_staged = function(name, off) return "_mm512_load_ps(" .. name .. " + (" .. off .. "))" end,
}

-- a * b + c on the lanes of run-time mask m, c elsewhere; lanes of b where
-- m is set, of a elsewhere (kernels/lines.lua)
function M.fmam(a, b, c, m) return "_mm512_mask3_fmadd_ps(" .. a .. ", " .. b .. ", " .. c .. ", " .. m .. ")" end
function M.blend(m, a, b) return "_mm512_mask_mov_ps(" .. a .. ", " .. m .. ", " .. b .. ")" end

-- Why: the line-frame group code (kernels/lines.lua) for rows of whole
-- 64-byte lines: `line` elements per line, the run-time masks of a
-- line's elements from the row start on (head) and before it (tail),
-- a full mask, and the C that defines them from `ptr`'s offset into its
-- line (kd 32-bit lanes: 0 only for a frame of its own, `at`, where k
-- sits on a line boundary and q does not).
local function lf_table(line, head, tail, full, extra)
  -- the names of one frame: suffix sfx ("" for the kernel's one frame)
  local function frame(sfx)
    local f = {
      head = head .. sfx, tail = tail .. sfx, hm = "kmh" .. sfx, tm = "kmt" .. sfx,
    }
    -- opts.own: a frame of its own in a scope that may not use every
    -- name (marked unused)
    f.prologue = function(ptr, opts)
      opts = opts or {}
      local u = opts.own and "__attribute__((unused)) " or ""
      local out = {
        "const unsigned kd" .. sfx .. " = (unsigned)(((uintptr_t)" .. ptr .. " & 63) >> 2);",
        u .. "const __mmask16 kmh" .. sfx .. " = (__mmask16)(0xffffu << kd" .. sfx .. "), kmt" .. sfx
          .. " = (__mmask16)~kmh" .. sfx .. ";",
      }
      if extra then out[#out + 1] = u .. extra(sfx) end
      return out
    end
    f.kd = "kd" .. sfx
    return f
  end
  local t = frame("")
  t.line, t.full = line, full
  -- a frame of its own (QK-norm's q, k, and each group's rows): its
  -- names carry the suffix
  t.at = frame
  -- the horizontal sum of a folded f32 vector (kgi_avx512_hsum's tree; its
  -- lanes may be turned by the frame's kd: kernels/lines.lua)
  t.hsum = function(v) return M.hsum(v) end
  -- a group's scales as f32 vectors (lane g of rq), their blend, and the
  -- table's vector of one (wrap; set by the pair table)
  t.svt, t.szero = "__m512", "_mm512_setzero_ps()"
  t.sset1 = function(s) return "_mm512_set1_ps(" .. s .. ")" end
  t.get = function(r, g) return M.g4.get(r, g) end
  t.blend = function(m, a, b) return M.blend(m, a, b) end
  t.wrap = function(v) return v end
  return t
end
M.lf = lf_table(16, "kmh", "kmt", "(__mmask16)0xffffu")
-- a row's weights in the line frame, one aligned stack line each
M.lf.stage = function(arr, off, v) return "_mm512_store_ps(" .. arr .. " + " .. off .. ", " .. v .. ");" end
M.lf.staged = function(arr, off) return "_mm512_load_ps(" .. arr .. " + " .. off .. ")" end

function M.zero() return "_mm512_setzero_ps()" end
function M.set1(s) return "_mm512_set1_ps(" .. s .. ")" end
function M.add(a, b) return "_mm512_add_ps(" .. a .. ", " .. b .. ")" end
function M.sub(a, b) return "_mm512_sub_ps(" .. a .. ", " .. b .. ")" end
function M.sub_masked(a, b, n) return "_mm512_maskz_sub_ps(" .. mask(n) .. ", " .. a .. ", " .. b .. ")" end
function M.mul(a, b) return "_mm512_mul_ps(" .. a .. ", " .. b .. ")" end
function M.fma(a, b, c) return "_mm512_fmadd_ps(" .. a .. ", " .. b .. ", " .. c .. ")" end
-- the tree of _mm512_reduce_add_ps written out (kgi_avx512_hsum), so that
-- kgi_avx512_hsum4 reproduces it lane for lane under any compiler
function M.hsum(v) return "kgi_avx512_hsum(" .. v .. ")" end

-- Why: groups of 4 rows (rms_group.c.tpl, env.V4) finish their sums
-- together: one transposed reduction of the 4 rows' folded accumulators
-- (pvt, `part` of the fold) into 4 doubles (svt), then the 4 rs in one
-- vector (rvt; lane g by `get`) and one test for the slow path: about 5
-- instead of 17 port-0/5 operations per row after its FMAs, and the same
-- bits as a row alone (measured 5-7 % on bf16 decode, RESULTS run 9).
M.g4 = {
  pvt = "__m512", svt = "__m256d", rvt = "__m512",
  part = function(v) return v end,
  sum4 = function(a, b, c, d) return "kgi_avx512_hsum4(" .. table.concat({ a, b, c, d }, ", ") .. ")" end,
  rs4 = function(s, dim, eps) return "kgi_avx512_rs4(" .. s .. ", " .. dim .. ", (double)" .. eps .. ")" end,
  -- Why: a group's four rs (lanes 0-3 of rq) copied to every 128-bit
  -- lane once (stash, before the first get), then each row's taken by an
  -- in-lane vpermilps with an immediate: one shuffle a row and no index
  -- vector, where a vpermps by _mm512_set1_epi32(g) cost GCC a broadcast
  -- of the index as well (bench/RESULTS.md run 51).
  stash = function(r) return "const __m512 " .. r .. "_b = _mm512_shuffle_f32x4(" .. r .. ", " .. r .. ", 0);" end,
  get = function(r, g) return "_mm512_permute_ps(" .. r .. "_b, " .. (g * 0x55) .. ")" end,
  -- Why: two groups' rs in one vector (decode in pairs, qk_norm.c.tpl):
  -- this core's divider takes as long for a vsqrtpd + vdivpd of 8 lanes
  -- as of 4 (about 11.6 cycles on a Zen 5 core), so pairing halves its
  -- share of a decode call (bench/RESULTS.md run 52).  rs8: lanes 0-3
  -- group a's, 4-7 group b's, each lane the operations of rs4; pick: one
  -- group's four (odd: b's) in every 128-bit lane, as stash leaves them.
  rs8 = function(a, b, dim, eps)
    return "kgi_avx512_rs8(" .. a .. ", " .. b .. ", " .. dim .. ", (double)" .. eps .. ")"
  end,
  pick = function(p, odd)
    return "_mm512_shuffle_f32x4(" .. p .. ", " .. p .. ", " .. (odd and "0x55" or "0x00") .. ")"
  end,
  -- the scalar slow test, !(ss <= FLT_MAX) [|| ss < tiny], on 4 lanes
  slow = function(s, tiny)
    local e = "_mm256_cmp_pd_mask(" .. s .. ", _mm256_set1_pd((double)FLT_MAX), _CMP_NLE_UQ)"
    if tiny then e = e .. " | _mm256_cmp_pd_mask(" .. s .. ", _mm256_set1_pd(" .. tiny .. "), _CMP_LT_OQ)" end
    return e
  end,
}

-- Why: the f32 table of the twice-loaded stream (stream_reload,
-- row.plan_reload, gen/pack.lua): this table's 16 lanes as two 256-bit
-- halves (kgi_y2), each operation this table's lane for lane and the sum
-- kgi_avx512_hsum's tree, so a head gets the same bits as from its zmm
-- rows.  On a Zen 4 core, where the stream is taken, 2048-token prefill
-- of 32 + 8 f32 heads of 256 read the in-place pass 0.80-0.87 x against
-- 0.87-0.98 with zmm loads and stores (bench/RESULTS.md run 57).  Full
-- f32 vectors only (the plan has no tail).
M.y2 = {
  name = M.name, W = M.W, regs = M.regs, masked = true, vt = "kgi_y2",
  load = function(dtype, base, off, n, m)
    assert(dtype == "f32" and (n == nil or n == M.W) and m == nil, "y2: full f32 vectors only")
    return "kgi_y2_ld(" .. base .. " + " .. off .. ")"
  end,
  store = function(dtype, base, off, n, v)
    assert(dtype == "f32" and (n == nil or n == M.W), "y2: full f32 vectors only")
    return "kgi_y2_st(" .. base .. " + " .. off .. ", " .. v .. ");"
  end,
  round = function(_, v) return v end,
  zero = function() return "kgi_y2_set1(0.0f)" end,
  set1 = function(s) return "kgi_y2_set1(" .. s .. ")" end,
  add = function(a, b) return "kgi_y2_add(" .. a .. ", " .. b .. ")" end,
  mul = function(a, b) return "kgi_y2_mul(" .. a .. ", " .. b .. ")" end,
  fma = function(a, b, c) return "kgi_y2_fma(" .. a .. ", " .. b .. ", " .. c .. ")" end,
  hsum = function(v) return "kgi_y2_hsum(" .. v .. ")" end,
}

-- Double lanes for sums that must not round in f32 (row.reduce, wide).
M.wide_vt = "__m512d"
function M.wide_zero() return "_mm512_setzero_pd()" end
function M.wide_lo(v) return "_mm512_cvtps_pd(_mm512_castps512_ps256(" .. v .. "))" end
function M.wide_hi(v) return "_mm512_cvtps_pd(_mm512_extractf32x8_ps(" .. v .. ", 1))" end
function M.wide_add(a, b) return "_mm512_add_pd(" .. a .. ", " .. b .. ")" end
function M.wide_hsum(v) return "_mm512_reduce_add_pd(" .. v .. ")" end

-- bf16 kernels use a second table (M.for_dtype): a "vector" is 32 bf16
-- elements, one 64-byte load, held as two f32 vectors of its even and odd
-- elements (kgi_v2).  Splitting is a shift and an and (no shuffle), packing
-- back a rounding per half and one ternary-logic merge: about half the
-- port-0/5 work of widening 16 at a time (vpmovzxwd + shift) and narrowing
-- with vpmovdw, which made bf16 rows with data in L2 conversion-bound.
-- Every operand of an elementwise step comes through the same load, so the
-- even/odd order never shows; sums do not care about order.
local P = {
  name = M.name, W = 32, regs = 16, masked = true, target = M.target,
  guard = M.guard, includes = M.includes, ahead2_bytes16 = M.ahead2_bytes16, ahead2_group = M.ahead2_group,
  walign = M.walign, nt_fused = M.nt_fused, nt_split = M.nt_split, ln_fused = M.ln_fused, ln_pair = M.ln_pair,
  wide_nacc = M.wide_nacc,
  nt_row = M.nt_row, head_major_groups = M.head_major_groups, pair_groups = M.pair_groups,
  long_group_bytes = M.long_group_bytes, hm_pf_bytes = M.hm_pf_bytes, prefetch_l1 = M.prefetch_l1,
  hm_pf_zen5 = M.hm_pf_zen5, qk_pipe = M.qk_pipe,
  -- LayerNorm rows in the line frame (x and y one offset into their
  -- lines) two at a time too (pack.lua `ln_pair_frame`): 4096 x 8192 at
  -- offset 16 on a Zen 5 core 1.67-1.72 -> 1.54-1.57 x memcpy (RESULTS
  -- run 43); the frame keeps its single rows too and takes the pairs where
  -- the runtime says so (kg_cpu_ln_frame_pairs: not on AMD Zen 4, where
  -- the pairs took 11.2 ms against 6.2, run 56)
  ln_pair_frame = true,
}
local need_bf16 = pair.ops(P, M, "kgi_v2", "kgi_w2")

local function mask32(n) return string.format("(__mmask32)0x%08x", 2 ^ n - 1) end

local function loader(full, masked, inside_masked)
  return function(dtype, base, off, n, m, inside)
    need_bf16(dtype)
    local p = base .. " + " .. off
    if m and inside then return inside_masked .. "(" .. m .. ", " .. p .. ")" end
    if m then return masked .. "(" .. m .. ", " .. p .. ")" end
    if n == nil or n == P.W then return full .. "(" .. p .. ")" end
    return masked .. "(" .. mask32(n) .. ", " .. p .. ")"
  end
end
P.load = loader("kgi_v2_ld", "kgi_v2_ldm", "kgi_v2_ldw")

-- Why: stores through one of two packers.  kgi_v2_pack rounds to nearest
-- even ("hf", whose parity with PyTorch needs it); kgi_v2_pack_ta, for
-- rounding "single", rounds ties away from zero: one add per half and one
-- byte shuffle instead of three operations per half and a shift + merge.
-- The two differ only on exact f32 ties, by one bf16 step, inside the
-- 1-ULP bound of "single" (DESIGN.md); measured in bench/RESULTS.md.
local function storers(pack)
  local function store(dtype, base, off, n, v, m)
    need_bf16(dtype)
    local p = base .. " + " .. off
    if m then return "_mm512_mask_storeu_epi16(" .. p .. ", " .. m .. ", " .. pack .. "(" .. v .. "));" end
    if n == nil or n == P.W then return "_mm512_storeu_si512((void *)(" .. p .. "), " .. pack .. "(" .. v .. "));" end
    return "_mm512_mask_storeu_epi16(" .. p .. ", " .. mask32(n) .. ", " .. pack .. "(" .. v .. "));"
  end
  local function store_nt(dtype, base, off, v)
    need_bf16(dtype)
    return "_mm512_stream_si512((void *)(" .. base .. " + " .. off .. "), " .. pack .. "(" .. v .. "));"
  end
  -- the 64 bytes store_nt writes, for the realigning stream (nt_rows.c.tpl)
  local function nt_value(dtype, v)
    need_bf16(dtype)
    return pack .. "(" .. v .. ")"
  end
  return store, store_nt, nt_value
end
P.store, P.store_nt, P.nt_value = storers("kgi_v2_pack")
P.nt_frame = {
  vt = "__m512i", zero = "_mm512_setzero_si512()", copy = M.nt_frame.copy,
  blend = function(a, m, b) return "_mm512_mask_mov_epi16(" .. a .. ", " .. m .. ", " .. b .. ")" end,
  mstore = function(p, m, v) return "_mm512_mask_storeu_epi16(" .. p .. ", " .. m .. ", " .. v .. ");" end,
  stream = function(p, v) return "_mm512_stream_si512((void *)(" .. p .. "), " .. v .. ");" end,
}
-- the line-frame group code: 32 bf16 per line, element masks kmh2 / kmt2
-- (a pair's lane k holds elements 2k and 2k + 1, so the lane masks of
-- M.lf still select its halves' lanes)
P.lf = lf_table(32, "kmh2", "kmt2", "(__mmask32)0xffffffffu", function(x)
  return "const __mmask32 kmh2" .. x .. " = (__mmask32)(0xffffffffu << (2 * kd" .. x .. ")), kmt2" .. x
    .. " = (__mmask32)~kmh2" .. x .. ";"
end)
P.lf.wrap = function(v) return "kgi_v2_dup(" .. v .. ")" end
P.lf.stage = function(arr, off, v) return "kgi_v2_stage(" .. arr .. " + " .. off .. ", " .. v .. ");" end
P.lf.staged = function(arr, off) return "kgi_v2_lds(" .. arr .. " + " .. off .. ")" end
-- large out-of-place rows with y off line alignment: each 64-byte vector
-- realigned in registers (kgi_ntw_*, 16-bit words) and streamed
P.nt_shift = "kgi_ntw"

-- Staged weights (pack.lua): a weight vector split to f32 once per call
-- into a stack array, so rows load their weights instead of splitting them
-- again per row.  Block o (a multiple of 32) holds the 16 even elements at
-- o and the 16 odd ones at o + 16; a tail block is zero-filled (masked
-- load).  `value(off, n)`: the C value of the n weights at offset off, as
-- the rows would have loaded them (weight offset included).
P.stage = stage_blocks(P.W, function(a, off, v) return "kgi_v2_stage(" .. a .. " + " .. off .. ", " .. v .. ");" end)
-- element 2k is valid when 2k < n, element 2k+1 when 2k+1 < n
function P.sub_masked(a, b, n)
  return string.format("kgi_v2_subm(%s, %s, %s, %s)", mask(math.ceil(n / 2)), mask(math.floor(n / 2)), a, b)
end

-- Why: the AVX512_BF16 twin (pack.lua renders it for bf16 RMSNorm and
-- QK-norm, row.reduce uses it): sums of squares from the raw 32-bf16 load by one
-- vdpbf16ps (kgi_avx512_dot_sq) instead of a split and two FMAs; on a
-- Zen 4 core RMSNorm 1024 x 64 bf16 about 10 % faster (bench/RESULTS.md
-- run 14).  Its flushing of subnormal products (DAZ/FTZ) moves
-- a sum by less than dim x 2^-126: nothing next to eps >= 2^-100, and a
-- smaller eps sends ss < 2^-60 to the slow path anyway.  Outputs never
-- come from it (a flushed product would be a wrong y).
-- Its accumulators are the f32 table's vectors, with the f32 table's ops.
P.dot_ops = {
  vt = "__m512i", acc_vt = M.vt, target = M.target .. ",avx512bf16",
  acc_zero = M.zero, acc_add = M.add, acc_blend = M.blend,
  acc_hsum = function(v) return "(double)" .. M.hsum(v) end,
  load = function(ptr, off, n, m)
    local q = ptr .. " + " .. off
    if m then return "_mm512_maskz_loadu_epi16(" .. m .. ", " .. q .. ")" end
    if n == nil or n == P.W then return "_mm512_loadu_si512((const void *)(" .. q .. "))" end
    return "_mm512_maskz_loadu_epi16(" .. mask32(n) .. ", " .. q .. ")"
  end,
  -- never with a write mask: see line_terms in kernels/lines.lua
  sq = function(acc, v) return "kgi_avx512_dot_sq(" .. acc .. ", " .. v .. ")" end,
}

-- Why: the table a kernel of this dtype and rounding is generated with
-- ("single" stores round ties away, kgi_v2_pack_ta).
M.for_dtype = pair.for_dtype(M, P, storers("kgi_v2_pack_ta"))

-- The two realigning streams of nt_rows.c.tpl (M.nt_shift, P.nt_shift):
-- element size es, the vector type, its zero, lane permute, masked store
-- and stream, the mask type (full: all of its lanes) and the index of the
-- permute (lanes 16 - d .. or 32 - d ..).
local NT_SHIFT = {
  f32 = { pfx = "kgi_ntr", es = 4, vt = "__m512", zero = "_mm512_setzero_ps()",
    perm = "_mm512_permutex2var_ps", mstore = "_mm512_mask_storeu_ps", mask = "__mmask16",
    stream = "_mm512_stream_ps((float *)(void *)(P), L)", full = "0xffffu",
    idx = "_mm512_add_epi32(_mm512_set1_epi32(16 - (int)d), _mm512_cvtepu8_epi32(_mm_setr_epi8(\n"
      .. "      0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)))" },
  w16 = { pfx = "kgi_ntw", es = 2, vt = "__m512i", zero = "_mm512_setzero_si512()",
    perm = "_mm512_permutex2var_epi16", mstore = "_mm512_mask_storeu_epi16", mask = "__mmask32",
    stream = "_mm512_stream_si512((void *)(P), L)", full = "0xffffffffu",
    idx = "_mm512_add_epi16(_mm512_set1_epi16((short)(32 - d)), _mm512_cvtepu8_epi16(_mm256_setr_epi8(\n"
      .. "      0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,\n"
      .. "      16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31)))" },
}

-- Why: one realigning stream's C type and helpers (begin, put, end).
local function nt_shift_c(t)
  local text = [[
typedef struct { char *ya; VT prev; __m512i idx; MASK head, tail; } PFX;

static inline __attribute__((unused)) ATTR PFX PFX_begin(void *y)
{
  const unsigned d = (unsigned)(((uintptr_t)y & 63) / ES);
  PFX s;
  s.ya = (char *)y - ES * d;
  s.prev = ZERO;
  s.idx = IDX;
  s.head = (MASK)(FULL << d);
  s.tail = (MASK)((1u << d) - 1u);
  return s;
}

static inline __attribute__((unused)) ATTR void PFX_put(PFX *s, size_t off, VT v)
{
  const VT line = PERM(s->prev, s->idx, v);
  if (off) STREAM;
  else MSTORE(s->ya, s->head, line);
  s->prev = v;
}

static inline __attribute__((unused)) ATTR void PFX_end(PFX *s, size_t n)
{
  MSTORE(s->ya + ES * n, s->tail, PERM(s->prev, s->idx, ZERO));
}

]]
  local stream = t.stream:gsub("P", "s->ya + " .. t.es .. " * off"):gsub("L", "line")
  local subs = { PFX = t.pfx, VT = t.vt, MASK = t.mask, ES = tostring(t.es), ZERO = t.zero, IDX = t.idx,
    FULL = t.full, PERM = t.perm, MSTORE = t.mstore, STREAM = stream }
  return (text:gsub("%u+", function(w) return subs[w] end))
end

-- Why: conversion helpers too long for one expression, emitted once per file.
function M.prelude(attr)
  local text = ([[
/* 16 bf16 -> 16 f32 by widening and shifting into the high half. */
static inline __attribute__((unused)) ATTR __m512 kgi_avx512_bf16_to_ps(__m256i h)
{
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* f32 -> bf16 round to nearest even in the high 16 bits of each lane (the
 * low 16 are garbage): the rounding add every bf16 store and round uses.
 * Only values computed from bf16 inputs reach it, so a NaN here has zero
 * low 16 payload bits (a propagated bf16 NaN, or the default NaN): adding
 * the rounding bias cannot carry into the exponent, and NaN stays NaN
 * without a compare-and-blend. */
static inline __attribute__((unused)) ATTR __m512i kgi_avx512_rne(__m512 v)
{
  const __m512i u = _mm512_castps_si512(v);
  const __mmask16 odd = _mm512_test_epi32_mask(u, _mm512_set1_epi32(0x10000));
  const __m512i t = _mm512_add_epi32(u, _mm512_set1_epi32(0x7fff));
  return _mm512_mask_add_epi32(t, odd, t, _mm512_set1_epi32(1));
}

/* f32 -> bf16 bits in the low 16 of each lane: round to nearest even. */
static inline __attribute__((unused)) ATTR __m512i kgi_avx512_bf16_bits(__m512 v)
{
  return _mm512_srli_epi32(kgi_avx512_rne(v), 16);
}

/* 16 f32 -> 16 packed bf16. */
static inline __attribute__((unused)) ATTR __m256i kgi_avx512_to_bf16(__m512 v)
{
  return _mm512_cvtepi32_epi16(kgi_avx512_bf16_bits(v));
}

/* Round each lane to the nearest bf16 value, kept as f32 ("hf" mode): the
 * rounding add of kgi_avx512_rne, the low 16 bits cleared by an and (four
 * operations where a shift down and up took six). */
static inline __attribute__((unused)) ATTR __m512 kgi_avx512_round_bf16(__m512 v)
{
  return _mm512_castsi512_ps(_mm512_and_si512(kgi_avx512_rne(v), _mm512_set1_epi32((int)0xffff0000u)));
}

/* Why: the horizontal sum of 16 f32 as a fixed tree (halves, quarters,
 * then within 128 bits), the one kgi_avx512_hsum4 reproduces per lane. */
static inline __attribute__((unused)) ATTR float kgi_avx512_hsum(__m512 v)
{
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  const __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  const __m128 p = _mm_add_ps(q, _mm_movehl_ps(q, q));
  return _mm_cvtss_f32(_mm_add_ss(p, _mm_movehdup_ps(p)));
}

/* Why: a line-frame weight line (kernels/lines.lua) holds only some lanes
 * of a 64-byte window that starts before the weights (the shared line) or
 * ends after them (the last line).  A masked load touches the whole window,
 * and one reaching into a page that was not present cost about 170 ns a
 * call on a Zen 5 core (weights at a page start, x 16 bytes into a line:
 * RMSNorm 1024 x 64 f32, bench/RESULTS.md run 48).  This gives what
 * _mm512_maskz_loadu_ps(m, p) gives for a mask of one run of lanes (the
 * frame's head or tail mask) from one load inside the weights: the 64
 * bytes from the run's first lane on (a head run: the weights continue
 * after the window) or up to its last (a tail run: they start before it),
 * moved to their lanes by a permute. */
static inline __attribute__((unused)) ATTR __m512 kgi_avx512_ldw_ps(__mmask16 m, const void *p)
{
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const unsigned u = (unsigned)m;
  if (u == 0) return _mm512_setzero_ps();
  if (u & 1u) { /* lanes 0 .. b - 1 */
    const int b = 32 - __builtin_clz(u);
    const __m512 v = _mm512_loadu_ps((const float *)p + b - 16);
    return _mm512_maskz_permutexvar_ps(m, _mm512_add_epi32(iota, _mm512_set1_epi32(16 - b)), v);
  }
  const int a = __builtin_ctz(u); /* lanes a .. 15 */
  const __m512 v = _mm512_loadu_ps((const float *)p + a);
  return _mm512_maskz_permutexvar_ps(m, _mm512_sub_epi32(iota, _mm512_set1_epi32(a)), v);
}

/* The same for a mask of 16-bit lanes (bf16 weights, P.lf's kmh2 / kmt2). */
static inline __attribute__((unused)) ATTR __m512i kgi_avx512_ldw_epi16(__mmask32 m, const void *p)
{
  const __m512i iota = _mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16,
                                        15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  const unsigned u = (unsigned)m;
  if (u == 0) return _mm512_setzero_si512();
  if (u & 1u) {
    const int b = 32 - __builtin_clz(u);
    const __m512i v = _mm512_loadu_si512((const void *)((const uint16_t *)p + b - 32));
    return _mm512_maskz_permutexvar_epi16(m, _mm512_add_epi16(iota, _mm512_set1_epi16((short)(32 - b))), v);
  }
  const int a = __builtin_ctz(u);
  const __m512i v = _mm512_loadu_si512((const void *)((const uint16_t *)p + a));
  return _mm512_maskz_permutexvar_epi16(m, _mm512_sub_epi16(iota, _mm512_set1_epi16((short)a)), v);
}

/* Why: four rows' horizontal sums at once, as doubles, each lane for lane
 * the tree of kgi_avx512_hsum: halves of a and b side by side, then
 * quarters of all four, then within 128 bits (2 + 2 + 2 + 2 + 1 shuffles
 * and 7 adds for the four rows). */
static inline __attribute__((unused)) ATTR __m256d kgi_avx512_hsum4(__m512 a, __m512 b, __m512 c, __m512 d)
{
  const __m512 ab = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
  const __m512 cd = _mm512_add_ps(_mm512_shuffle_f32x4(c, d, 0x44), _mm512_shuffle_f32x4(c, d, 0xEE));
  const __m512 t = _mm512_add_ps(_mm512_shuffle_f32x4(ab, cd, 0x88), _mm512_shuffle_f32x4(ab, cd, 0xDD));
  const __m512 u = _mm512_add_ps(t, _mm512_permute_ps(t, 0x4E));
  const __m512 w = _mm512_add_ps(u, _mm512_permute_ps(u, 0xB1));
  const __m512 s = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), w);
  return _mm256_cvtps_pd(_mm512_castps512_ps128(s));
}

/* Why: the rs of four rows in lanes 0-3, by the same IEEE operations per
 * lane as the scalar (float)(1.0 / sqrt(ss / dim + eps)). */
static inline __attribute__((unused)) ATTR __m512 kgi_avx512_rs4(__m256d s, double dim, double eps)
{
  const __m256d m = _mm256_add_pd(_mm256_div_pd(s, _mm256_set1_pd(dim)), _mm256_set1_pd(eps));
  return _mm512_castps128_ps512(_mm256_cvtpd_ps(_mm256_div_pd(_mm256_set1_pd(1.0), _mm256_sqrt_pd(m))));
}

/* Why: the rs of two groups of four rows, group a's in lanes 0-3 and b's
 * in lanes 4-7, each lane by the operations of kgi_avx512_rs4 (the same
 * bits): one sqrt and one divide for eight rows. */
static inline __attribute__((unused)) ATTR __m512 kgi_avx512_rs8(__m256d a, __m256d b, double dim, double eps)
{
  const __m512d s = _mm512_insertf64x4(_mm512_castpd256_pd512(a), b, 1);
  const __m512d m = _mm512_add_pd(_mm512_div_pd(s, _mm512_set1_pd(dim)), _mm512_set1_pd(eps));
  return _mm512_castps256_ps512(_mm512_cvtpd_ps(_mm512_div_pd(_mm512_set1_pd(1.0), _mm512_sqrt_pd(m))));
}

/* Why: squares of 32 raw bf16 added pairwise into the 16 f32 lanes of acc
 * (vdpbf16ps, AVX512_BF16; see P.dot_ops in isa/avx512.lua). */
static inline __attribute__((unused)) __attribute__((target("DOT_TARGET")))
__m512 kgi_avx512_dot_sq(__m512 acc, __m512i u)
{
  return _mm512_dpbf16_ps(acc, (__m512bh)u, (__m512bh)u);
}

TYPES_HERE/* 32 packed bf16 -> even/odd f32: a shift and an and, no shuffle, on
 * one load of u (KG_ONE_LOAD: GCC would read it again for the and). */
static inline __attribute__((unused)) ATTR kgi_v2 kgi_v2_split(__m512i u)
{
  KG_ONE_LOAD(u);
  kgi_v2 r = { _mm512_castsi512_ps(_mm512_slli_epi32(u, 16)),
               _mm512_castsi512_ps(_mm512_and_si512(u, _mm512_set1_epi32((int)0xffff0000u))) };
  return r;
}

static inline __attribute__((unused)) ATTR kgi_v2 kgi_v2_ld(const kg_bf16 *p)
{
  return kgi_v2_split(_mm512_loadu_si512((const void *)p));
}

/* Tail load: elements past the mask read as 0 and are not touched. */
static inline __attribute__((unused)) ATTR kgi_v2 kgi_v2_ldm(__mmask32 m, const kg_bf16 *p)
{
  return kgi_v2_split(_mm512_maskz_loadu_epi16(m, p));
}

/* A line-frame weight line (kgi_avx512_ldw_epi16): lanes m from inside the weights. */
static inline __attribute__((unused)) ATTR kgi_v2 kgi_v2_ldw(__mmask32 m, const kg_bf16 *p)
{
  return kgi_v2_split(kgi_avx512_ldw_epi16(m, p));
}

/* even/odd f32 -> 32 packed bf16: odd high halves | even high halves >> 16. */
static inline __attribute__((unused)) ATTR __m512i kgi_v2_pack(kgi_v2 v)
{
  return _mm512_ternarylogic_epi32(kgi_avx512_rne(v.o), _mm512_srli_epi32(kgi_avx512_rne(v.e), 16),
                                   _mm512_set1_epi32((int)0xffff0000u), 0xEC);
}

/* even/odd f32 -> 32 packed bf16, rounding to nearest with ties away from
 * zero: half a bf16 step added to each lane's magnitude bits, then bytes 2-3
 * of each even lane shuffled into bytes 0-1 of the odd lane.  The NaN
 * argument of kgi_avx512_rne holds here too (no carry out of a zero
 * low half). */
static inline __attribute__((unused)) ATTR __m512i kgi_v2_pack_ta(kgi_v2 v)
{
  const __m512i half = _mm512_set1_epi32(0x8000);
  const __m512i e = _mm512_add_epi32(_mm512_castps_si512(v.e), half);
  const __m512i o = _mm512_add_epi32(_mm512_castps_si512(v.o), half);
  return _mm512_mask_shuffle_epi8(o, (__mmask64)0x3333333333333333ull, e,
                                  _mm512_set4_epi32(0x0f0e0f0e, 0x0b0a0b0a, 0x07060706, 0x03020302));
}

/* a - b on the lanes of a tail; the others 0 (they are summed). */
static inline __attribute__((unused)) ATTR kgi_v2 kgi_v2_subm(__mmask16 me, __mmask16 mo, kgi_v2 a, kgi_v2 b)
{
  kgi_v2 r = { _mm512_maskz_sub_ps(me, a.e, b.e), _mm512_maskz_sub_ps(mo, a.o, b.o) };
  return r;
}

]]):gsub("TYPES_HERE", function() return pair.c_types(M, "kgi_v2", "kgi_w2", "avx512") .. "\n" end)
  text = text .. pair.c_nt_row("_mm512_stream_si512((void *)(d + i), _mm512_loadu_si512((const void *)(s + i)));")
  text = text .. [[
/* Why: rows of a large out-of-place call whose y is off cache-line
 * alignment still go out by non-temporal stores, without a stack row:
 * kgi_ntr (f32) / kgi_ntw (16-bit words) keep the previous vector and
 * write each aligned line as its last d elements followed by the current
 * vector's first 16 - d (32 - d), one two-source permute per line; the
 * partial first and last lines are plain masked stores inside those
 * lines.  put() takes the row's vectors in order, off = the element
 * offset; end() writes the last line. */
]] .. nt_shift_c(NT_SHIFT.f32) .. nt_shift_c(NT_SHIFT.w16)
  text = text:gsub("DOT_TARGET", P.dot_ops.target)
  text = text .. pair.c_ops(M, "kgi_v2", "kgi_w2", 16, "_mm512_store_ps", "_mm512_load_ps")
  text = text .. [[
/* Why: 16 f32 lanes as two 256-bit halves (M.y2: the twice-loaded stream
 * of stream_reload), each operation the zmm one lane for lane, so a row
 * gets the bits of its zmm form in ymm instructions. */
typedef struct { __m256 lo, hi; } kgi_y2;

static inline __attribute__((unused)) ATTR kgi_y2 kgi_y2_ld(const float *p)
{
  kgi_y2 r = { _mm256_loadu_ps(p), _mm256_loadu_ps(p + 8) };
  return r;
}

static inline __attribute__((unused)) ATTR void kgi_y2_st(float *p, kgi_y2 v)
{
  _mm256_storeu_ps(p, v.lo);
  _mm256_storeu_ps(p + 8, v.hi);
}

static inline __attribute__((unused)) ATTR kgi_y2 kgi_y2_set1(float s)
{
  kgi_y2 r = { _mm256_set1_ps(s), _mm256_set1_ps(s) };
  return r;
}

static inline __attribute__((unused)) ATTR kgi_y2 kgi_y2_add(kgi_y2 a, kgi_y2 b)
{
  kgi_y2 r = { _mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi) };
  return r;
}

static inline __attribute__((unused)) ATTR kgi_y2 kgi_y2_mul(kgi_y2 a, kgi_y2 b)
{
  kgi_y2 r = { _mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi) };
  return r;
}

/* a * b + c */
static inline __attribute__((unused)) ATTR kgi_y2 kgi_y2_fma(kgi_y2 a, kgi_y2 b, kgi_y2 c)
{
  kgi_y2 r = { _mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi) };
  return r;
}

/* Why: kgi_avx512_hsum's tree from the two halves (the same bits). */
static inline __attribute__((unused)) ATTR float kgi_y2_hsum(kgi_y2 v)
{
  const __m256 h = _mm256_add_ps(v.lo, v.hi);
  const __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  const __m128 p = _mm_add_ps(q, _mm_movehl_ps(q, q));
  return _mm_cvtss_f32(_mm_add_ss(p, _mm_movehdup_ps(p)));
}

]]
  return (text:gsub("ATTR", attr))
end

return M
