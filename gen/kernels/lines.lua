-- kernels/lines.lua: the line-frame twins <sym>_lf (AVX-512) of QK-norm
-- kernels (their grouped heads: rms_group.c.tpl and qk_norm.c.tpl with
-- env.lf) and of RMSNorm kernels with streamed rows (M.rms_rows, below),
-- for data off cache-line alignment.  pack.lua renders them.
--
-- Why: heads that start off a cache-line boundary (a malloc'd buffer
-- starts 16 bytes into a line) make every 64-byte load and store of the
-- grouped rows split two lines: on a Zen 4 core QK-norm decode 40 x 128
-- f32 0.36 -> 0.50 us, bf16 0.39 -> 0.45 us (bench/RESULTS.md run 20).
-- Here a group of G contiguous rows is read and written as the aligned
-- 64-byte lines it covers, each once: a line that two rows share is
-- scaled by a blend of their two scales, and the row's weights are read
-- once per call shifted into the same frame (so a row's element meets
-- the same weight).  The first and last line of a loop's run of groups
-- are masked; between groups the line the two share is written by the
-- later group (`carry`, the earlier group's last scale in `sprev`), so no
-- masked store is followed by a load of its line.
--
-- Same bits as the aligned code (KT-LINES): each element gets the same
-- operations.  The sums: line j of a row (d = kd 32-bit lanes into its
-- line) holds vector j's lanes from d on and vector j - 1's before d, so
-- with line j summed into accumulator j % nacc, accumulator m holds in
-- its low d lanes what the aligned code sums into m - 1.  With 1 or 2
-- accumulators the fold adds the same two values per lane (addition
-- commutes); with 4, the low lanes are first moved back (blends).  The
-- folded sum holds the aligned one's lanes turned by d, and goes to the
-- horizontal tree as it is: each level of the tree (kgi_avx512_hsum)
-- adds lane i of its n lanes to lane i + n/2, and under a turn every
-- such pair is still a pair (it moves to another lane, its two terms
-- maybe swapped: a + b = b + a), so the tree adds the same values to the
-- same bits.  (Turning back cost a permute a row: decode 40 x 128 bf16
-- at offset 16 took 3 % longer with it, RESULTS run 32.)  A line's
-- lanes outside a row are not summed into it: f32 by masked FMAs, bf16
-- loaded as zeros (line_terms: GCC miscompiles a masked vdpbf16ps).
local util = require("util")
local row = require("kernels.row")

local M = {}

-- Rows shorter than this many lines keep the split loads: per group the
-- frame adds about the same work whatever the row (the scale blends, the
-- sums' masked terms and turns): on a Zen 4 core rows of 2 lines (bf16
-- head_dim 64) measured 13-15 % slower than splitting, of 4 (f32 64,
-- bf16 128) between 5 % slower and 5 % faster, of 8 (f32 128) 8-19 %
-- faster (bench/RESULTS.md run 21).
M.MIN_LINES = 4

-- Why: whether a kernel body of table V, plan p gets the line-frame twin:
-- grouped register rows of whole 64-byte lines on a table with M.lf.
function M.applies(V, k, p, V4)
  if not (V.lf and V4 and p.in_regs) then return false end
  local es = util.BYTES[k.dtype]
  if V.W * es ~= 64 or (k.dim * es) % 64 ~= 0 or k.dim * es < 64 * M.MIN_LINES then return false end
  for _, c in ipairs(p.chunks) do
    if c.I ~= V or c.n ~= V.W then return false end
  end
  return true
end

-- Why: when a QK-norm call takes the twin (qk_norm.c.tpl `lf_call`):
-- q off line alignment by whole 32-bit lanes, k by whole lanes too, at
-- any offset (q's heads and k's each run in a frame of their own: two
-- malloc'd buffers rarely share an offset; k on a line boundary is a
-- frame with kd 0), and every head of q and of k at its tensor's offset
-- (strides of whole lines, or one token); calls the twin groups (not
-- longer ones: group_tokens).
-- Not at 32 bytes into a line for bf16 heads and f32 heads under 8
-- lines: a Zen 4 core runs a 64-byte access as two 32-byte halves,
-- neither split there, and the plain code measured faster (decode 40 x
-- 128 bf16 390 ns against the twin's 410, 40 x 64 f32 210 against 231;
-- RESULTS run 32).  f32 heads of 8 lines or more take the twin there too
-- since its sums are no longer turned back (40 x 128: 379 against 397
-- ns; in run 21, with the turn, 365 against 324).  On an Intel Xeon
-- (Emerald Rapids, run 23) the twin was faster there for f32 128 as well
-- (-5 %).
-- bf16 heads take it only where the runtime says so
-- (kg_cpu_bf16_line_frame): it gained 2-7 % on Zen 4 and cost 7-12 % on
-- that Intel core, where split bf16 loads cost little.
function M.call(k, env, names)
  local at32 = k.dtype == "f32" and k.dim * util.BYTES[k.dtype] >= 8 * 64
  local cond = "((uintptr_t)q & " .. (at32 and "63" or "31")
    .. ") != 0 && ((uintptr_t)q & 3) == 0 && ((uintptr_t)k & 3) == 0"
  local strides = "((q_stride * sizeof(*q)) & 63) == 0 && ((k_stride * sizeof(*k)) & 63) == 0"
  if k.layout == "token_major" then strides = "(tokens == 1 || (" .. strides .. "))" end
  cond = cond .. "\n      && " .. strides
  if k.dtype == "bf16" then cond = cond .. " && kg_cpu_bf16_line_frame()" end
  if env.group_tokens then cond = cond .. " && tokens <= " .. util.int(env.group_tokens) end
  return { cond = cond, call = env.sym .. "_lf(" .. names .. ");" }
end

-- Why: one place maps a weight set to the frame of its rows: q's heads
-- (weights qv) run in q's frame, k's (kv) in k's (the prologues of
-- qk_norm.c.tpl define both).
function M.frame(V, wv)
  return V.lf.at(wv == "qv" and "_q" or "_k")
end

-- Why: the weights of one set in the frame of the rows, for a row's
-- whole lines 1 .. nv - 1 and for the line it shares with its neighbours
-- (its last elements before kd, its first ones from kd on): in registers
-- <wv>1 .. <wv><nv - 1> and <wv>m where the plan hoists weights (p.hoist_w),
-- else staged once per call in the aligned stack array <wv>l (the shared
-- line first), as the aligned code stages what it does not hold (bf16
-- head_dim 128).  load_w(c, ptr): pack.lua's weight
-- load (offset included); c.m is a run-time mask.  In the frame of the
-- set's rows (M.frame).
function M.weights(V, CT, p, wv, wptr, load_w)
  local L, nv, F = V.lf, #p.chunks, M.frame(V, wv)
  local sp = wv .. "p"
  local out = { string.format("const %s *%s = (const %s *)((uintptr_t)%s - 4 * %s);", CT, sp, CT, wptr, F.kd) }
  local first = load_w({ I = V, off = "0", n = V.W, m = F.head }, sp)
  local last = load_w({ I = V, off = util.int(nv * L.line), n = V.W, m = F.tail }, sp)
  local shared = V.blend(F.tm, first, last)
  local function value(j) return load_w({ I = V, off = util.int(j * L.line), n = V.W }, sp) end
  if p.hoist_w then
    for j = 1, nv - 1 do out[#out + 1] = string.format("const %s %s%d = %s;", V.vt, wv, j, value(j)) end
    out[#out + 1] = string.format("const %s %sm = %s;", V.vt, wv, shared)
  else
    out[#out + 1] = string.format("float %sl[%d] __attribute__((aligned(64)));", wv, nv * L.line)
    out[#out + 1] = L.stage(wv .. "l", "0", shared)
    for j = 1, nv - 1 do out[#out + 1] = L.stage(wv .. "l", util.int(j * L.line), value(j)) end
  end
  return out
end

-- Why: the C value of weight line j of set wv (0: the shared line), as
-- M.weights placed it.
local function wref(V, p, wv, j)
  if p.hoist_w then return wv .. (j == 0 and "m" or tostring(j)) end
  return V.lf.staged(wv .. "l", util.int(j * V.lf.line))
end

-- Why: the sum-of-squares terms (C statements, to emit) of the line at
-- ptr + off into accumulator `all` (a whole line of one row), or into
-- `lo` (its lanes before the frame's kd: the end of a row) and `hi` (from
-- kd on: a row's start), either or both.  m: the line's load mask (a
-- run's first or last line).  f32 lines load once, each term masked.
-- bf16 lines never go to a masked vdpbf16ps: GCC (12, and up to 16
-- reported) gives _mm512_mask_dpbf16_ps and its zeroing twin an 8-bit
-- mask operand and, where it moves the mask in from a general register,
-- emits kmovb: lanes 8-15 dropped (a row's first line, RMSNorm 1024 bf16:
-- sums 1.6 % short, RESULTS run 21; a QK-norm group's, run 32).  Each
-- term loads the line's elements on its side of kd, the others as zeros:
-- their 0 * 0 adds +0, and a vdpbf16ps accumulator is never subnormal
-- (its results are flushed), so those lanes keep their bits.
local function line_terms(V, T, F, emit, ptr, off, v, m, all, lo, hi)
  local dot = V.dot
  if dot then
    if all then
      emit(string.format("const %s %s = %s;", dot.vt, v, dot.load(ptr, off, V.W, m)))
      emit(string.format("%s = %s;", all, dot.sq(all, v)))
    end
    if lo then emit(string.format("%s = %s;", lo, dot.sq(lo, dot.load(ptr, off, V.W, F.tail)))) end
    if hi then emit(string.format("%s = %s;", hi, dot.sq(hi, dot.load(ptr, off, V.W, F.head)))) end
    return
  end
  emit(string.format("const %s %s = %s;", V.vt, v, V.load(T, ptr, off, V.W, m)))
  if all then emit(string.format("%s = %s;", all, V.fma(v, v, all))) end
  if lo then emit(string.format("%s = %s;", lo, V.fmam(v, v, lo, F.tm))) end
  if hi then emit(string.format("%s = %s;", hi, V.fmam(v, v, hi, F.hm))) end
end

-- Why: one row's line-frame accumulators <pre>1 .. <pre><nacc> finished
-- as the aligned code's: with 4, the low lanes of accumulator m hold the
-- aligned code's m - 1 and are moved back first (blends into <bpre>1 ..,
-- emitted); then the fold and the pair table's halves added (lanes still
-- turned by F's kd, which the horizontal tree does not mind: see the top).
-- Returns that f32 vector (C).
function M.folded(V, F, pre, nacc, bpre, emit)
  local dot = V.dot
  if nacc == 4 then
    local avt = dot and dot.acc_vt or V.vt
    local blend = dot and dot.acc_blend or V.blend
    for m = 1, 4 do
      emit(string.format("const %s %s%d = %s;", avt, bpre, m, blend(F.tm, pre .. m, pre .. (m % 4 + 1))))
    end
    pre = bpre
  end
  local folded = row.fold(pre, nacc, dot and dot.acc_add or V.add)
  return dot and folded or V.g4.part(folded)
end

-- Why: the sums of squares of G contiguous rows from xn0 into the V4
-- partials hv0 .. hv<G-1> (rms_group.c.tpl part "sums"), line by line,
-- in the rows' own frame (xn0's offset: the next group may be q's or
-- k's, which can sit at different offsets).
function M.sums(V, T, CT, p, G)
  local L, nv, dot = V.lf, #p.chunks, V.dot
  local F = L.at("_s")
  local nacc = row.nacc(p, false, dot)
  local avt = dot and dot.acc_vt or V.vt
  local zero = dot and dot.acc_zero() or V.zero()
  local out = F.prologue("xn0", { own = true })
  out[#out + 1] = string.format("const %s *na = (const %s *)((uintptr_t)xn0 & ~(uintptr_t)63);", CT, CT)
  local function emit(s) out[#out + 1] = s end
  for g = 0, G - 1 do
    local names = {}
    for m = 1, nacc do names[#names + 1] = string.format("a%d_%d = %s", g, m, zero) end
    emit(avt .. " " .. table.concat(names, ", ") .. ";")
  end
  local function acc(g, j) return string.format("a%d_%d", g, j % nacc + 1) end
  for line = 0, G * nv do
    local g, j = math.floor(line / nv), line % nv
    local off = util.int(line * L.line)
    local m = line == 0 and F.head or line == G * nv and F.tail or nil
    if j ~= 0 then
      line_terms(V, T, F, emit, "na", off, "l" .. line, m, acc(g, j))
    else
      -- a line two rows share: the last lanes of row g - 1, the first of row g
      line_terms(V, T, F, emit, "na", off, "l" .. line, m, nil,
        g > 0 and acc(g - 1, nv) or nil, g < G and acc(g, 0) or nil)
    end
  end
  for g = 0, G - 1 do
    emit(string.format("hv%d = %s;", g, M.folded(V, F, "a" .. g .. "_", nacc, "b" .. g .. "_", emit)))
  end
  return table.concat(out, "\n")
end

-- Why: the fast second pass of a group (rms_group.c.tpl part "body", lf):
-- rows yr0 .. yr<G-1> contiguous, scales vr0 .. (f32 vectors of the
-- base table, L.get: a pair table's halves share one, L.wrap; blends and
-- the carried sprev stay single vectors, one register each),
-- weights of set wv (M.weights).  The loop's first group masks
-- its first line (carry 0); a group after a fast one writes the line it
-- shares with it, with the earlier row's scale (sprev) on its low lanes;
-- the loop's last group masks its last line (lastg).  In the frame of
-- the loop's rows (M.frame of wv).
function M.body(V, T, CT, p, G, wv, rounding)
  local L, nv, F = V.lf, #p.chunks, M.frame(V, wv)
  local out = { string.format("%s *const ya = (%s *)((uintptr_t)yr0 & ~(uintptr_t)63);", CT, CT) }
  local function emit(s) out[#out + 1] = s end
  local function line(off, s, w, m)
    return V.store(T, "ya", off, V.W, row.scaled(V, T, V.load(T, "ya", off, V.W, m), L.wrap(s), w, rounding), m)
  end
  emit(line("0", L.blend(F.tm, "vr0", "sprev"), wref(V, p, wv, 0), "(carry ? " .. L.full .. " : " .. F.head .. ")"))
  for g = 0, G - 1 do
    for j = 1, nv - 1 do
      emit(line(util.int((g * nv + j) * L.line), "vr" .. g, wref(V, p, wv, j)))
    end
    if g + 1 < G then
      emit(line(util.int((g + 1) * nv * L.line), L.blend(F.tm, "vr" .. (g + 1), "vr" .. g), wref(V, p, wv, 0)))
    end
  end
  emit("if (lastg) " .. line(util.int(G * nv * L.line), "vr" .. (G - 1), wref(V, p, wv, 0), F.tail))
  emit("sprev = vr" .. (G - 1) .. ";")
  emit("carry = 1;")
  return table.concat(out, "\n")
end

-- Why: a slow group in the line frame (its rows written by the row code)
-- first writes what the group before it left (the low lanes of its first
-- line, when carry), and leaves nothing to the next group.
function M.slow_head(V, T, CT, p, wv, rounding)
  local L, F = V.lf, M.frame(V, wv)
  local v = row.scaled(V, T, V.load(T, "ya", "0", V.W, F.tail), L.wrap("sprev"), wref(V, p, wv, 0), rounding)
  return string.format("if (carry) { %s *const ya = (%s *)((uintptr_t)yr0 & ~(uintptr_t)63); %s }", CT, CT,
    V.store(T, "ya", "0", V.W, v, F.tail))
end

-- ---- RMSNorm rows (rmsnorm.c.tpl with env.lf) ------------------------------
--
-- Why: out-of-place rows in the caches off line alignment (two malloc'd
-- buffers: both 16 bytes in) split every load and store: RMSNorm 1024 x
-- 64 bf16 4.3 -> 4.9 us on a Zen 4 core.  In y's line frame each row is
-- its nv + 1 lines, the first and last masked (a row's last line is the
-- next row's first: rows end to end write it once, whole, from the later
-- row, M.rms_rows; x is never written, so no load waits on a store); x at y's offset is
-- read as whole lines too, x elsewhere with split loads.  The code is unrolled, so rows
-- go up to ROW_MAX_BYTES.  The sums keep the aligned code's segments
-- (blocks flushed to double, row.reduce): a line that straddles two
-- segments goes to both, masked, and each segment is finished as the
-- groups' sums are (blends, fold, turn).
M.ROW_MAX_BYTES = 4096

-- Why: whether a streamed RMSNorm body of table V gets the line-frame twin.
function M.applies_rows(V, k, p)
  if not V.lf or p.in_regs then return false end
  local es = util.BYTES[k.dtype]
  return V.W * es == 64 and (k.dim * es) % 64 == 0 and k.dim * es <= M.ROW_MAX_BYTES
end

-- Why: when an RMSNorm call takes the twin: y off line alignment by whole
-- 32-bit lanes, every row of y at that offset, x off alignment too and
-- not y, and an output under the non-temporal size (those stream,
-- nt_rows.c.tpl).  The frame is y's: x at the same offset (two malloc'd
-- buffers) reads whole lines too; x elsewhere (x 16 bytes into a line, y
-- 48: 5.7 against 4.3 us aligned for 1024 x 64 bf16, RESULTS run 21)
-- still splits its loads, but no longer its stores.  bf16 y not 32 bytes
-- into a line, as for QK-norm heads (M.call): 1024 x 64 bf16 at offset
-- 32 3978 ns plain against 4102 in the twin (f32 5305 against 5092, so
-- f32 keeps it; RESULTS run 32).
function M.rows_call(k, env, names)
  local cond = "((uintptr_t)y & " .. (k.dtype == "bf16" and "31" or "63")
    .. ") != 0 && ((uintptr_t)y & 3) == 0"
    .. " && ((uintptr_t)x & 63) != 0 && (const void *)x != (const void *)y"
    .. "\n      && (rows == 1 || ((y_stride * sizeof(*y)) & 63) == 0)"
    .. " && rows * y_stride * sizeof(*y) < KG_NT_BYTES"
  return { cond = cond, call = env.sym .. "_lf(" .. names .. ");" }
end

-- Why: the aligned code's sum segments, as vector ranges { first, past }:
-- its blocks of p.B elements, then the rest (row.reduce).
local function segments(p)
  local segs, bw, nvec = {}, p.B / p.W, p.dim / p.W
  for a = 0, p.blk_end / p.W - 1, bw do segs[#segs + 1] = { a, a + bw } end
  if nvec > p.blk_end / p.W then segs[#segs + 1] = { p.blk_end / p.W, nvec } end
  return segs
end

-- Why: the sum of squares of the row at aligned pointer `na` into double
-- `var`, line by line; also(L) (C or nil) after line L.
local function row_sums(V, T, p, na, var, also)
  local L, dot, nv = V.lf, V.dot, p.dim / p.W
  local segs = segments(p)
  local function seg_of(vec)
    for i, sg in ipairs(segs) do
      if vec >= sg[1] and vec < sg[2] then return i end
    end
  end
  local avt = dot and dot.acc_vt or V.vt
  local zero = dot and dot.acc_zero() or V.zero()
  local out = { "double " .. var .. " = 0.0;", "{" }
  local function emit(s) out[#out + 1] = "  " .. s end
  local function acc(sg, line) return string.format("%s_%d_%d", var, sg, line % 4 + 1) end
  local function flush(sg)
    local pre = var .. "_" .. sg .. "_"
    emit(string.format("%s += (double)%s;", var, L.hsum(M.folded(V, L, pre, 4, pre .. "b", emit))))
  end
  for line = 0, nv do
    local hi = line < nv and seg_of(line) or nil
    local lo = line > 0 and seg_of(line - 1) or nil
    if hi and hi ~= lo then
      local names = {}
      for m = 1, 4 do names[#names + 1] = string.format("%s_%d_%d = %s", var, hi, m, zero) end
      emit(avt .. " " .. table.concat(names, ", ") .. ";")
    end
    local off = util.int(line * p.W)
    local m = line == 0 and L.head or line == nv and L.tail or nil
    local v = var .. "l" .. line
    if hi and hi == lo then
      line_terms(V, T, L, emit, na, off, v, m, acc(hi, line))
    else
      line_terms(V, T, L, emit, na, off, v, m, nil, lo and acc(lo, line) or nil, hi and acc(hi, line) or nil)
      if lo then flush(lo) end
    end
    local extra = also and also(line)
    if extra then emit(extra) end
  end
  out[#out + 1] = "}"
  return table.concat(out, "\n")
end

-- Why: the whole line-frame RMSNorm body after its prologue: weights
-- staged in the frame (wl), then the rows one (two, `ahead2`) ahead as
-- rms_row.c.tpl's fused form runs them: row r's second pass line by line
-- inside the sums of row r + 1 (r + 2), the same scale and slow path.
function M.rms_rows(e)
  local V, T, CT, p = e.V, e.T, e.CT, e.p
  local L, nv, W = V.lf, p.dim / p.W, p.W
  local A = e.ahead2 and 2 or 1
  local out = {}
  local function emit(s) out[#out + 1] = s end
  local function block(text) for ln in text:gmatch("[^\n]+") do emit(ln) end end
  emit(string.format("const %s *wlp = (const %s *)((uintptr_t)w - 4 * kd);", CT, CT))
  emit(string.format("float wl[%d] __attribute__((aligned(64)));", (nv + 1) * W))
  for line = 0, nv do
    local m = line == 0 and L.head or line == nv and L.tail or nil
    local wv = e.load_w({ I = V, off = util.int(line * W), n = V.W, m = m }, "wlp")
    -- line 0 is the line a row shares with the row before it: its low
    -- lanes hold the last weights (the earlier row's), as M.weights'
    if line == 0 then
      wv = V.blend(L.tm, wv, e.load_w({ I = V, off = util.int(nv * W), n = V.W, m = L.tail }, "wlp"))
    end
    emit(L.stage("wl", util.int(line * W), wv))
  end
  -- where line 0 of the row at ptr starts in y's frame (kd lanes before
  -- it: on a line boundary when x and y share their offset)
  local function aligned(ptr) return string.format("(const %s *)((uintptr_t)(%s) - 4 * kd)", CT, ptr) end
  -- line `off` of the row at xa -> ya, scale s (a vector of the table),
  -- mask m (nil: the whole line)
  local function out_line(xa, ya, off, s, m)
    return V.store(T, ya, off, V.W, row.scaled(V, T, V.load(T, xa, off, V.W, m), s, L.staged("wl", off), e.rounding), m)
  end
  -- second pass, line `line` of row r (xa -> ya, scale vr).  Rows end to
  -- end in x and y (wrap) share a line: the earlier row leaves its last
  -- line to the next one (carry, its scale in sprev), which writes the
  -- line whole with the two scales blended: one plain store instead of
  -- two masked ones (RMSNorm 1024 x 64 f32 at offset 16 on a Zen 5 core:
  -- within the noise, RESULTS run 47); the last row, a row before a slow
  -- one and rows apart keep the masked stores.
  local function pass2(line)
    local off = util.int(line * W)
    if line == 0 then
      return "if (carry) " .. out_line("xa", "ya", off, L.wrap(L.blend(L.tm, L.sset1("rs"), "sprev")), nil)
        .. " else " .. out_line("xa", "ya", off, "vr", L.head)
    elseif line == nv then
      return "if (wrap && r + 1 < rows) { sprev = " .. L.sset1("rs") .. "; carry = 1; } else { "
        .. out_line("xa", "ya", off, "vr", L.tail) .. " carry = 0; }"
    end
    return out_line("xa", "ya", off, "vr", nil)
  end
  -- the sum of the row at ptr into a new double `var` (and its line pointer na)
  local function sums(ptr, var, also)
    return "const " .. CT .. " *na = " .. aligned(ptr) .. ";\n" .. row_sums(V, T, p, "na", var, also)
  end
  -- into `var` declared outside: a block of its own
  local function sums_into(ptr, var)
    return "{\n  " .. sums(ptr, "sq"):gsub("\n", "\n  ") .. "\n  " .. var .. " = sq;\n}"
  end
  emit(A == 2 and "double sn, sn2 = 0.0;" or "double sn;")
  block(sums_into("x", "sn"))
  if A == 2 then
    emit("if (rows > 1) {")
    block(sums_into("x + x_stride", "sn2"))
    emit("}")
    emit("float rn = " .. row.rms_scale("sn", e.D, e.EPS) .. ";")
  end
  local function advance(summed)
    if A == 2 then return summed and "sn = sn2; sn2 = sq;" or "sn = sn2;" end
    return summed and "sn = sq;" or nil
  end
  emit(string.format("const int wrap = x_stride == %s && y_stride == %s;", util.int(p.dim), util.int(p.dim)))
  emit("int carry = 0;        /* the row before left its last line to this one... */")
  emit(L.svt .. " sprev = " .. L.szero .. "; /* ...and its scale */")
  emit("for (size_t r = 0; r < rows; r++) {")
  emit("  const " .. CT .. " *xr = x + r * x_stride;")
  emit("  " .. CT .. " *yr = y + r * y_stride;")
  emit(string.format("  const %s *xn = r + %d < rows ? xr + %sx_stride : NULL;", CT, A, A == 2 and "2 * " or ""))
  emit("  const double ss = sn;")
  -- `ahead2`: the next row's scale from its finished sum, halfway through
  -- the step (as rms_row.c.tpl puts it: row.reduce `mid`)
  local next_rn = A == 2 and ("rn = " .. row.rms_scale("sn2", e.D, e.EPS) .. ";") or nil
  if A == 2 then emit("  const float rc = rn;") end
  emit("  if (KG_UNLIKELY(" .. e.slow_test .. ")) {")
  -- the line the row before left: its low lanes, before the slow row
  -- writes its own
  emit("    if (carry) {")
  emit("      const " .. CT .. " *xa = " .. aligned("xr") .. ";")
  emit("      " .. CT .. " *ya = (" .. CT .. " *)((uintptr_t)yr & ~(uintptr_t)63);")
  emit("      " .. out_line("xa", "ya", "0", L.wrap("sprev"), L.tail))
  emit("      carry = 0;")
  emit("    }")
  if next_rn then emit("    " .. next_rn) end
  emit("    " .. e.slow .. "(xr, yr, w, " .. e.rstd_out .. ");")
  emit("    if (xn) {")
  for ln in sums("xn", "sq"):gmatch("[^\n]+") do emit("      " .. ln) end
  emit("      " .. advance(true))
  if advance(false) then
    emit("    } else {")
    emit("      " .. advance(false))
  end
  emit("    }")
  emit("    continue;")
  emit("  }")
  emit("  const float rs = " .. (A == 2 and "rc" or row.rms_scale("ss", e.D, e.EPS)) .. ";")
  if e.rstd_store then emit("  " .. e.rstd_store .. " = rs;") end
  emit("  const " .. V.vt .. " vr = " .. V.set1("rs") .. ";")
  emit("  const " .. CT .. " *xa = " .. aligned("xr") .. ";")
  emit("  " .. CT .. " *ya = (" .. CT .. " *)((uintptr_t)yr & ~(uintptr_t)63);")
  local half = math.floor(nv / 2)
  local function pass2_mid(line)
    if next_rn and line == half then return pass2(line) .. "\n  " .. next_rn end
    return pass2(line)
  end
  emit("  if (xn) {")
  for ln in sums("xn", "sq", pass2_mid):gmatch("[^\n]+") do emit("    " .. ln) end
  emit("    " .. advance(true))
  emit("    continue;")
  emit("  }")
  if next_rn then emit("  " .. next_rn) end
  for line = 0, nv do emit("  " .. pass2(line)) end
  if advance(false) then emit("  " .. advance(false)) end
  emit("}")
  return table.concat(out, "\n")
end

return M
