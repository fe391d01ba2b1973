-- kernels/row.lua: how one row of `dim` elements is cut into chunks for an
-- ISA, shared by every op.  A chunk is one vector (or one scalar element on
-- the tail of an ISA without masks) at a compile-time offset.
local util = require("util")

local M = {}

-- Independent accumulators: enough to hide FMA latency (4 cycles x 2 ports).
M.NACC = 4

local function floor_div(a, b) return math.floor(a / b) end

-- Why: the chunks covering [from, from + n) with constant offsets.
local function span(V, S, from, n)
  local chunks = {}
  local nfull = floor_div(n, V.W)
  for j = 0, nfull - 1 do
    chunks[#chunks + 1] = { I = V, off = util.int(from + j * V.W), n = V.W }
  end
  local tail = n - nfull * V.W
  if tail > 0 then
    if V.masked then
      chunks[#chunks + 1] = { I = V, off = util.int(from + nfull * V.W), n = tail }
    else
      for j = 0, tail - 1 do
        chunks[#chunks + 1] = { I = S, off = util.int(from + nfull * V.W + j), n = 1 }
      end
    end
  end
  return chunks
end

-- Why: the whole-row plan.  Small rows live in registers (`in_regs`): one
-- load, no loop over the feature dimension.  Wide rows stream through a
-- loop of NACC vectors per step plus an unrolled remainder.
-- `live` is how many row-sized register sets the op keeps (x, weights...).
function M.plan(V, S, dim, live, dtype)
  local p = { dim = dim, W = V.W, V = V, S = S }
  local nvec = math.ceil(dim / V.W)
  local budget = V.regs - M.NACC - 2
  p.in_regs = nvec <= math.max(1, floor_div(budget, 1)) and dim <= 256
  if p.in_regs then
    p.chunks = span(V, S, 0, dim)
    -- weights stay in registers across rows when x and w both fit
    p.hoist_w = nvec * (live or 2) <= budget
    p.has_vec = false
    for _, c in ipairs(p.chunks) do
      if c.I == V then p.has_vec = true end
    end
  else
    M.streamed(p, dtype)
  end
  return p
end

-- Why: a wide row's plan (M.plan): a loop of NACC vectors per step over
-- blocks, plus an unrolled remainder; fills p (dim, W, V, S set).
function M.streamed(p, dtype)
  local V, S, dim = p.V, p.S, p.dim
  local step = M.NACC * V.W
  p.step = util.int(step)
  p.loop_end = floor_div(dim, step) * step
  -- blocks of about 256 elements bound the length of any f32 partial
  -- sum; 16-bit rows (results of 8 or 11 bits) take blocks of 1024: a
  -- lane's f32 sum of at most 256 terms errs by < 2^-16, far below a
  -- half step of the result, and a 1024-wide row reduces to double
  -- once instead of four times (measured 7 % on RMSNorm 1024 x 64 bf16)
  p.B = math.max(1, floor_div(dtype == "f32" and 256 or 1024, step)) * step
  p.blk_end = floor_div(p.loop_end, p.B) * p.B
  p.block = {}
  for j = 0, M.NACC - 1 do
    p.block[#p.block + 1] = { I = V, off = "i + " .. util.int(j * V.W), n = V.W }
  end
  p.rest = span(V, S, floor_div(dim, step) * step, dim - floor_div(dim, step) * step)
  p.hoist_w = false
  p.has_vec = true
  return p
end

-- Why: the plan of a short row read in groups (rms_group.c.tpl) on a
-- table whose register budget streams it (M.plan: not in_regs, e.g. AVX2
-- head_dim 128): the group code holds no row in registers (its second
-- pass loads the rows again), so it only needs the row unrolled.  The
-- sums keep the streamed form's NACC accumulators, chunk j into
-- accumulator (j - 1) % NACC + 1 as the loop does, so a head gets the
-- same bits grouped (decode) as streamed (the slow-path fallback, long
-- f32 calls).  nil where the streamed plan has blocks (dim > p.B) or the
-- row is already register-resident.
function M.plan_unrolled(p)
  if p.in_regs or p.blk_end > 0 and p.blk_end < p.dim then return nil end
  local q = {}
  for key, v in pairs(p) do q[key] = v end
  q.in_regs, q.hoist_w, q.nacc = true, false, M.NACC
  q.chunks = span(p.V, p.S, 0, p.dim)
  return q
end

-- Why: the plan of a register-resident row (M.plan: in_regs) that a long
-- call streams from DRAM on a core where holding it cost bandwidth
-- (isa/avx512.lua stream_reload, qk_norm.c.tpl): the streamed form's
-- loops, which load each vector where its sum takes it and again where
-- it is scaled.  The same bits: a row of whole steps in one block puts
-- chunk j in accumulator (j - 1) % NACC + 1 and folds them once, as the
-- register-resident row does with NACC accumulators.  nil for any other
-- row (a tail, more blocks, fewer accumulators).  V2: the table of the
-- stream's operations where not p.V (isa/avx512.lua y2: p.V's lanes in
-- other registers, the same bits).
function M.plan_reload(p, dtype, V2)
  if not p.in_regs or M.nacc(p) ~= M.NACC then return nil end
  V2 = V2 or p.V
  assert(V2.W == p.W, "plan_reload: the stream's table must have the row's lanes")
  local q = M.streamed({ dim = p.dim, W = p.W, V = V2, S = p.S }, dtype)
  if #q.rest > 0 or q.blk_end ~= q.dim or q.B ~= q.dim then return nil end
  return q
end

-- Why: accumulator operations of a table.  Vector tables accumulate in
-- their own f32 vectors (blocked and flushed to double, see M.reduce);
-- the scalar table may define acc_* to accumulate in double directly.
function M.acc(I)
  if I.acc_vt then return I end
  return {
    acc_vt = I.vt,
    acc_zero = I.zero,
    acc_fma = I.fma,                                   -- a * b + c
    acc_add = I.add,                                   -- c + a
    acc_hsum = function(v) return "(double)" .. I.hsum(v) end,
  }
end

-- Why: the sum of squares of a row, as M.reduce's `sums` (RMSNorm rows,
-- grouped heads, the fused next-row sum).  With `part` (a register-resident
-- row of a group of 4, V.g4) the row's folded accumulators go to C variable
-- `part` instead, unreduced, and no double `var` is declared.
function M.sum_sq(var, part)
  return { { var = var, part = part, sq = true, term = function(A, acc, v) return A.acc_fma(v, v, acc) end } }
end

-- Why: M.reduce's `load` for the row at C pointer `ptr` of storage type T:
-- called as load(c); it keeps `ptr` so that a table summing from raw
-- loads (V.dot, M.reduce) can read the row itself.
function M.loader(T, ptr)
  return setmetatable({ ptr = ptr }, {
    __call = function(_, c) return c.I.load(T, ptr, c.off, c.n) end,
  })
end

-- Why: the locality of every prefetch that asks for data ahead of use
-- (the next row here, the next token's head in qk_norm.c.tpl): L2 (hint
-- 2), not L1.  What is asked for ahead is 8-40 KiB, which with the data
-- being worked on overflows a 32 KiB L1: on a Zen 4 core L1 prefetches
-- made 2048-token QK-norm prefill 1.3-1.9x slower and RMSNorm/LayerNorm
-- 4096 x 8192 4-7 % slower (bench/RESULTS.md run 12); L1 had been chosen
-- on a Zen 5 core (48 KiB L1).
M.PREFETCH_HINT = "2"

-- Why: the next row's lines asked for while this row streams out (the
-- non-temporal path): the row's reads then overlap the other row's writes
-- instead of following them.  Measured on a Zen 5 core: RMSNorm 4096 x 8192
-- f32 1.46 -> 1.07 x memcpy (bench/RESULTS.md run 10).  Returns the C
-- prefetches (maybe none) for the 64-byte lines that start inside chunk c
-- of a row of storage type T, relative to C pointer `xp` (char *), into
-- L2 (M.PREFETCH_HINT).  Rows with a loop spread the request over their
-- passes instead (M.spread_prefetch); this form is for rows without one.
function M.next_row_prefetch(p, c, T, xp, wrap, hint)
  -- wrap(address, offset): the C argument from the address (xp + offset)
  wrap = wrap or function(a) return a end
  hint = hint or M.PREFETCH_HINT
  local size = util.BYTES[T]
  local base, rel
  local i_part, n_part = tostring(c.off):match("^(%a+) %+ (%d+)$")
  if i_part then
    -- block chunk at i + N: i advances by whole steps; lines start at
    -- multiples of 64 bytes from the row start when a step is whole lines
    base, rel = i_part, tonumber(n_part)
    if (tonumber(p.step) * size) % 64 ~= 0 then
      local at = "(" .. c.off .. ") * " .. size
      return "__builtin_prefetch(" .. wrap(xp .. " + " .. at, at) .. ", 0, " .. hint .. ");"
    end
  else
    base, rel = nil, tonumber(c.off)
  end
  local out = {}
  local b0, b1 = rel * size, (rel + c.n) * size
  for b = math.ceil(b0 / 64) * 64, b1 - 1, 64 do
    local at = base and (base .. " * " .. size .. " + " .. util.int(b)) or util.int(b)
    out[#out + 1] = "__builtin_prefetch(" .. wrap(xp .. " + " .. at, at) .. ", 0, " .. hint .. ");"
  end
  return table.concat(out, " ")
end

-- Distance (bytes) at which a fused non-temporal row loop asks for the row
-- it sums (M.ahead_prefetch).
M.AHEAD_BYTES = 4096
-- The same for each of two rows summed in one loop (ln_row.c.tpl's pairs):
-- LayerNorm 4096 x 8192 f32 AVX-512 on a Zen 5 core 1.01-1.03 x memcpy
-- at 1 KiB, 1.03-1.04 at 2 KiB, 1.08-1.10 at 4 KiB (one process;
-- bench/RESULTS.md run 42); again once a pair asked for the next pair
-- past its end: 1 KiB 1.08x and 4 KiB 1.13x the time of 2 KiB (run 49).
M.PAIR_AHEAD = 2048

-- Why: the fused non-temporal RMSNorm loop (rms_row.c.tpl, `fused` with
-- `nt`) reads the next row from memory while it streams this one out;
-- the hardware prefetchers alone left it at 1.07 x memcpy, and asking
-- for each line M.AHEAD_BYTES ahead of the sums took it to 0.97 (AVX-512
-- f32 4096 x 8192 on a Zen 5 core; 2, 4 and 8 KiB within 1 %, bf16 best
-- at 4 KiB: bench/RESULTS.md run 41), into L1 (hint 3: f32 0.88 the
-- time of the same requests into L2; so little ahead fits beside the
-- row).  Returns the prefetches for the lines that start in chunk c of row
-- `ptr` (C pointer of storage type T), M.AHEAD_BYTES further on; the
-- address is formed as an integer, since it may lie past the end of x.
-- `pair_stride`: the row is one of two summed at once (ln_row.c.tpl's
-- pairs), rows `pair_stride` elements apart (its C name): each asks
-- M.PAIR_AHEAD ahead, and past its end the rows summed next, two rows
-- on, instead of the line that follows (the next row's where rows lie
-- end to end; for single rows that is the row summed next).  A pair's
-- row no longer than the distance asks for the same line two rows on.
-- Why: past its end each row of a pair asked for the row after it, which
-- the pair was reading anyway, and the next pair's first lines were left
-- to the hardware prefetchers.  Those missed them or not by where the
-- binary's own pages lay in memory (the same binary copied anew, or its
-- page cache dropped, moved from fast to slow): LayerNorm 4096 x 8192
-- bf16 AVX-512 on a Zen 5 core 0.80-1.31 x memcpy over copies of one
-- clang build (without these prefetches 0.89-1.99), now 0.87-0.92 in
-- clang and 0.85-0.88 in gcc builds (bench/RESULTS.md run 49).  The same
-- for single rows with a gap between them: no gain (run 49).
function M.ahead_prefetch(p, c, T, ptr, pair_stride)
  local bytes = pair_stride and M.PAIR_AHEAD or M.AHEAD_BYTES
  local size = util.BYTES[T]
  local wrap = function(a) return "(const void *)(" .. a .. ")" end
  local from = "((uintptr_t)" .. ptr .. " + " .. util.int(bytes) .. ")"
  local rb = p.dim * size
  if pair_stride then
    local two = "(2 * " .. pair_stride .. ") * " .. size
    if rb <= bytes then
      from = "((uintptr_t)" .. ptr .. " + " .. two .. ")"
    else
      wrap = function(a, rel)
        return "(const void *)(" .. a .. " + (" .. rel .. " + " .. util.int(bytes) .. " >= " .. util.int(rb)
          .. " ? " .. two .. " - " .. util.int(rb) .. " : 0))"
      end
    end
  end
  local pf = M.next_row_prefetch(p, c, T, from, wrap, "3")
  return pf ~= "" and pf or nil
end

-- Why: the next row of a non-temporal row loop, spread over the row's
-- passes.  Its sums run on a row already in L1 or L2, during which
-- nothing was asked of memory; spreading the next row over the passes (a
-- quarter each in passes 1 and 2, the second half in pass 3, the output
-- pass; one-pass sums ask for both quarters, M.sums_prefetch) keeps reads
-- in flight throughout: LayerNorm 4096 x 8192 f32 1.46-1.52 -> 1.33-1.40 x
-- memcpy on a Zen 5 core (bench/RESULTS.md run 10), RMSNorm 4096 x 8192
-- f32 0.80-0.81 the time of asking for the whole next row in the output
-- pass on a Zen 3 core (run 40).  One statement per loop step, on the
-- step's first chunk; nil for every other chunk.  A row shorter than one
-- step has no loop: its whole next row is asked for in pass 3, chunk by
-- chunk, as M.next_row_prefetch does.
function M.spread_prefetch(p, c, T, xp, pass)
  if p.loop_end == 0 then
    if pass ~= 3 then return nil end
    local pf = M.next_row_prefetch(p, c, T, xp)
    return pf ~= "" and pf or nil
  end
  if c.off ~= "i + 0" then return nil end
  local size = util.BYTES[T]
  local rb = p.dim * size
  local hint = M.PREFETCH_HINT
  local function pf(base, div, extra)
    return "__builtin_prefetch(" .. xp .. " + " .. base .. "(i * " .. size .. ") / " .. div .. extra
      .. ", 0, " .. hint .. ");"
  end
  if pass == 1 then return pf("", 4, "") end
  if pass == 2 then return pf(util.int(math.floor(rb / 4)) .. " + ", 4, "") end
  local out = {}
  local per_step = tonumber(p.step) * size / 2
  local half = util.int(math.floor(rb / 2)) .. " + "
  for b = 0, math.max(1, math.ceil(per_step / 64)) - 1 do
    out[#out + 1] = pf(half, 2, b > 0 and (" + " .. util.int(64 * b)) or "")
  end
  return table.concat(out, " ")
end

-- Why: a row that M.reduce can read as n streams (`split`, n = 2
-- unless given): a loop of whole blocks over the whole row, a multiple of
-- n of them, so each part is whole blocks.
function M.splits(p, n)
  n = n or 2
  if p.in_regs or #p.rest > 0 or p.loop_end ~= p.dim or p.blk_end ~= p.dim then return false end
  local nblk = math.floor(p.blk_end / p.B)
  return nblk >= n and nblk % n == 0
end

-- Why: how many streams a split row is read in: parts of 4 KiB where the
-- row has 2 to 4 of them (RMSNorm 4096 f32 in quarters, 4096 bf16 in
-- halves), else halves.  On a Zen 5 VM RMSNorm 4096 x 8192 f32 streamed
-- in quarters took 0.84-0.85x memcpy against 0.94-0.95 in one stream,
-- where halves (8 KiB apart) had been slower than one stream
-- (bench/RESULTS.md run 65).  T: the storage type.
M.SPLIT_PART_BYTES = 4096
function M.split_parts(p, T)
  local n = math.floor(p.dim * util.BYTES[T] / M.SPLIT_PART_BYTES)
  if n > 4 then n = 4 end
  if n > 2 and M.splits(p, n) then return n end
  return 2
end

-- Why: whether a split row's parts of `bytes` each go by
-- kg_cpu_nt_split4k (Zen 5 too) rather than kg_cpu_nt_split (Intel
-- only): parts of 3 to 4 KiB.  On the Zen 5 VM, alternated in one
-- process, RMSNorm x 8192 rows aligned took 0.93-0.97 the time of one
-- stream in halves of 3 KiB (bf16 3072), 0.95 in thirds of 4 KiB (f32
-- 3072), but 1.00-1.09 in halves of 2 KiB (bf16 2048, f32 1024;
-- bench/RESULTS.md run 66).
function M.split4k(bytes)
  return bytes > M.SPLIT_PART_BYTES / 2 and bytes <= M.SPLIT_PART_BYTES
end

-- Why: M.ahead_prefetch for a row read as two streams or more (M.reduce
-- `split`): each part asks for its own lines M.AHEAD_BYTES ahead, and past
-- its end for the same place in the next row's part (x_stride
-- elements on), so both streams of the next row start in flight.  On an
-- Intel Xeon (Sapphire Rapids VM) RMSNorm 4096 x 8192 f32 AVX-512 took
-- 0.89 the time of one stream (1.09 -> 0.97 x memcpy; without the wrap
-- 1.01: bench/RESULTS.md run 58).  c: a chunk of the split row (half:
-- its part, 1 to parts; pos); ptr: the row summed (C pointer of storage
-- type T); stride: the C expression of the distance (elements) to the
-- row summed next (a pair's rows: two rows on).
function M.split_prefetch(p, c, T, ptr, stride)
  local size = util.BYTES[T]
  local hb = p.dim / (c.parts or 2) * size
  local shift = (c.half - 1) * hb
  local wrap = function(a, rel)
    return "(const void *)(" .. a .. " + (" .. rel .. " - " .. util.int(shift) .. " + "
      .. util.int(M.AHEAD_BYTES) .. " >= " .. util.int(hb) .. " ? " .. stride .. " * " .. size
      .. " - " .. util.int(hb) .. " : 0))"
  end
  local from = "((uintptr_t)" .. ptr .. " + " .. util.int(M.AHEAD_BYTES) .. ")"
  local pf = M.next_row_prefetch(p, c, T, from, wrap, "3")
  return pf ~= "" and pf or nil
end

-- Why: one choice for every fused row's request ahead: a chunk of a
-- split row (c.half) asks for its part's lines (M.split_prefetch; the
-- rows summed next are two rows on for a pair), any other chunk its
-- lines M.ahead_prefetch's distance on.  pair_stride: as there.
function M.part_prefetch(p, c, T, ptr, pair_stride)
  if c.half then
    return M.split_prefetch(p, c, T, ptr, pair_stride and "(2 * " .. pair_stride .. ")" or "x_stride")
  end
  return M.ahead_prefetch(p, c, T, ptr, pair_stride)
end

-- Why: the first half of the next row (M.spread_prefetch's passes 1 and
-- 2, two streams a quarter of the row apart) asked for by a row whose
-- sums take one pass: LayerNorm's line-frame rows, and the two-pass
-- non-temporal rows of tables without nt_fused (pack.lua).  Two
-- streams at a quarter of the pace measured 0.92 the time of one at half
-- the pace (RMSNorm 4096 x 8192 f32, Zen 3, run 40).
function M.sums_prefetch(p, c, T, xp)
  local a, b = M.spread_prefetch(p, c, T, xp, 1), M.spread_prefetch(p, c, T, xp, 2)
  if a and b then return a .. " " .. b end
  return a or b
end

-- The streamed line frame's edge statements (F = V.nt_frame, L = V.lf),
-- one spelling for RMSNorm's rows and LayerNorm's (rms_row, ln_row):
-- line 0 of a row at `base`, value `hd`: masked, or blended with the part
-- cv of the line that the row before left (cy: rows end to end).
function M.frame_head(F, L, base, hd)
  return "if (cy) " .. F.stream(base, F.blend("cv", L.head, hd)) .. " else "
    .. F.mstore(base, L.head, hd)
end

-- The last line of a row (`v`, at `at`): kept for the next row's head
-- where rows are end to end (yc), else stored masked.
function M.frame_tail(F, L, at, v)
  return "if (yc) cy = 1; else " .. F.mstore(at, L.tail, v)
end

-- Before a row leaves the frame (its slow path): the carried line goes out.
function M.frame_flush(F, L)
  return "if (cy) { " .. F.mstore("ya", L.tail, "cv") .. " cy = 0; }"
end

-- Why: x - m where masked-off tail lanes must stay 0 (they are summed).
function M.sub(c, a, b)
  if c.n < c.I.W and c.I.sub_masked then return c.I.sub_masked(a, b, c.n) end
  return c.I.sub(a, b)
end

-- Why: the C expression of a row's f32 RMSNorm scale 1/sqrt(ss/D + eps)
-- from its double sum of squares `ss`: one spelling for every place that
-- computes it (a row, a group, a scale started a step early), so the same
-- sum gives the same bits wherever it is scaled.
function M.rms_scale(ss, D, EPS)
  return "(float)(1.0 / sqrt(" .. ss .. " / " .. D .. " + (double)" .. EPS .. "))"
end

-- Why: one RMSNorm output vector of ISA table I, spelled once for every
-- form that writes rows (rms_row.c.tpl, rms_group.c.tpl, kernels/lines.lua,
-- kernels/pipe.lua), so that each gives the same bits: x times the row's
-- scale r, rounded to storage type T first where the spec asks "hf", times
-- the weight w (C expressions).
function M.scaled(I, T, x, r, w, rounding)
  local h = I.mul(x, r)
  if rounding == "hf" then h = I.round(T, h) end
  return I.mul(h, w)
end

-- Why: the prefetches of one head's (row's) lines ahead, from C byte
-- pointer expression `base` (row_bytes long, one request per 64-byte
-- line), as C lines indented by ind.  The base is one pointer that GCC
-- cannot see into (KG_OPAQUE): it otherwise hoists base + 64 i for every
-- line out of the loop, one register each, and spills them (f32 head_dim
-- 256: 16 offsets, 6 spilled, a reload before each request; on a Zen 5
-- core decode 32 + 8 heads of 256 took 0.83x the time in bf16, 0.94x f16,
-- 0.97x f32, head-major 2048-token prefill of f32 heads of 256 0.98x, other rows
-- within the noise; bench/RESULTS.md run 55).  Into L2 (M.PREFETCH_HINT), or,
-- where `pl1` (the frame has the C int pl1, kg_cpu_prefetch_zen5), into
-- L1 when pl1 is set.  Used by qk_norm.c.tpl and kernels/pipe.lua.
function M.prefetch_lines(ind, base, row_bytes, pl1)
  local out = {}
  local function lines(at, hint)
    out[#out + 1] = at .. "{"
    out[#out + 1] = at .. "  const char *pfb = " .. base .. ";"
    out[#out + 1] = at .. "  KG_OPAQUE(pfb);"
    for off = 0, row_bytes - 1, 64 do
      out[#out + 1] = at .. "  __builtin_prefetch(pfb + " .. util.int(off) .. ", 0, " .. hint .. ");"
    end
    out[#out + 1] = at .. "}"
  end
  if pl1 then
    out[#out + 1] = ind .. "if (pl1) {"
    lines(ind .. "  ", "3")
    out[#out + 1] = ind .. "} else {"
    lines(ind .. "  ", M.PREFETCH_HINT)
    out[#out + 1] = ind .. "}"
  else
    lines(ind, M.PREFETCH_HINT)
  end
  return table.concat(out, "\n")
end

-- Why: how many accumulators a sum over a row of plan p gets (wide: kept
-- in double lanes; dot: summed by V.dot).  NACC for streamed rows; a
-- register-resident row's plain sums chain about 4 vectors per
-- accumulator instead (fewer adds to fold them; measured 6 % on bf16
-- QK-norm decode).  Chunk j (from 1) goes to accumulator (j - 1) % nacc + 1.
function M.nacc(p, wide, dot)
  if not p.in_regs or p.nacc then return p.nacc or M.NACC end
  if wide then return M.NACC end
  local nv = 0
  for _, c in ipairs(p.chunks) do
    if c.I == p.V then nv = nv + 1 end
  end
  -- a vdpbf16ps sums a whole 32-element vector (two FMAs otherwise):
  -- twice the accumulators keep the same number of chains
  local n = math.max(1, math.min(M.NACC, floor_div(nv, dot and 2 or 4)))
  return n == 3 and 2 or n
end

-- Why: the pairwise fold of accumulators <v>1 .. <v><nacc> (1, 2, 4), by
-- `add`: one tree wherever a row's sum is finished, for the same bits.
-- v: the accumulators' name prefix, or a function of their index.
function M.fold(v, nacc, add)
  local function a(i) return type(v) == "function" and v(i) or v .. i end
  if nacc == 1 then return a(1) end
  if nacc == 2 then return add(a(1), a(2)) end
  return add(add(a(1), a(2)), add(a(3), a(4)))
end

-- Why: the C code of one or more sums over a row, blocked so that f32
-- partial sums never run long: full blocks of about 256 elements are
-- reduced to double and added up there, which keeps the error of a
-- 16384-wide sum at a few ULP even for adversarial (constant) rows.
--   sums: list of { var = "ss", term = function(I, acc, v) -> new acc expr,
--                   wide = true for a plain sum kept in double lanes (tables
--                   with wide_*: exact-ish means for LayerNorm;
--                   centred = true: takes pre's value where some sum of
--                   the list does not) }
--   load: function(c) -> expression of the chunk's f32 value
--   pre:  optional function(c, v, tag) -> C declaration lines, returns new v
--   a sum may bring its own `load` (and `pre`), shared by the sums of the
--   same `tag`: another row's sums in the same loop (ln_row.c.tpl's pairs)
-- Register-resident rows (p.in_regs) pass their chunk values in `vals`.
--   also: optional function(c, j) -> a C statement (or nil) emitted after
--         each chunk's terms (rms_row.c.tpl's fused form: the previous row's
--         second pass, chunk by chunk, inside this row's first pass; the
--         next row's prefetch in ln_row.c.tpl's non-temporal form)
--   mid:  optional C statement emitted once, about halfway through the
--         row, between two steps of its loops (the order of the sums does
--         not change).  rms_row.c.tpl's `ahead2` form computes the next
--         row's scale there: at the start of a step its sqrt -> divide
--         chain waited on the sum just finished and held up retirement
--         (RMSNorm 1024 x 64 bf16 on a Zen 4 core 4.29 -> 3.90 us,
--         bench/RESULTS.md run 31).
--   split: the number of streams the row is read as, its parts side by
--         side (M.splits says which rows can; the same bits):
--         rms_row.c.tpl's fused non-temporal rows where the runtime says
--         so (kg_cpu_nt_split, kg_cpu_nt_split4k).
--
-- A table with `dot` (the AVX512_BF16 twin of a bf16 kernel, pack.lua)
-- sums squares straight from raw loads (V.dot.load / V.dot.sq: vdpbf16ps)
-- into its own f32 accumulators; that applies to one sum of squares over a
-- row read through M.loader (`vals`, if given, is then not used: the
-- compiler merges the raw load with the row's own load of the same bytes).
function M.reduce(p, sums, load, pre, vals, also, mid, split)
  local V, S = p.V, p.S
  local AV, AS = M.acc(V), M.acc(S)
  local dot = V.dot and #sums == 1 and sums[1].sq and type(load) == "table" and not pre and V.dot
  if dot then
    AV = dot
    vals = nil
  end
  local out = {}
  local wide = false
  for _, sm in ipairs(sums) do
    if sm.wide and V.wide_vt then wide = true end
  end
  -- a table's wide_nacc: the accumulators of a sum list with a wide sum
  local nacc = (wide and V.wide_nacc) or M.nacc(p, wide, dot)
  local wn = (wide and V.wide_nacc) or M.NACC
  local function fold(v, add) return M.fold(v, nacc, add) end
  local function emit(s) out[#out + 1] = s end
  -- with `pre`, a sum marked `centred` takes pre's value, the others the
  -- loaded one (LayerNorm's fused pass: sum(x) and sum((x - c)^2))
  local raw = false
  for _, sm in ipairs(sums) do
    if pre and not sm.centred then raw = true end
  end
  -- j0: the chunks' indices start after j0 (a split row's chunks go one
  -- at a time, each to its own accumulator)
  local function body(chunks, ind, tag, fixed, j0)
    local ntail = 0
    for jj, c in ipairs(chunks) do
      local j = jj + (j0 or 0)
      local src = {} -- the values of sums with their own `load` (by `tag`)
      local v = fixed and fixed[j] or ("(" .. load(c) .. ")")
      local cen
      if dot and c.I == V then
        emit(ind .. "const " .. dot.vt .. " " .. tag .. j .. " = " .. dot.load(load.ptr, c.off, c.n) .. ";")
        v = tag .. j
      elseif pre then
        if raw and not fixed then
          emit(ind .. "const " .. c.I.vt .. " " .. tag .. j .. " = " .. v .. ";")
          v = tag .. j
        end
        local decl
        decl, cen = pre(c, v, tag .. j)
        emit(ind .. decl)
      elseif not fixed then
        emit(ind .. "const " .. c.I.vt .. " " .. tag .. j .. " = " .. v .. ";")
        v = tag .. j
      end
      for _, sm in ipairs(sums) do
        local sv = cen and (sm.centred or not raw) and cen or v
        if sm.load then
          local got = src[sm.tag]
          if not got then
            local t = tag .. sm.tag .. j
            emit(ind .. "const " .. c.I.vt .. " " .. t .. " = (" .. sm.load(c) .. ");")
            got = { v = t }
            if sm.pre then
              local d
              d, got.cen = sm.pre(c, t, sm.tag .. tag .. j)
              emit(ind .. d)
            end
            src[sm.tag] = got
          end
          sv = sm.centred and got.cen or got.v
        end
        if c.I == V and sm.wide and V.wide_vt then
          -- a plain sum kept in double lanes: f32 -> two double halves
          local a = sm.var .. ((j - 1) % wn + 1)
          emit(ind .. a .. "l = " .. V.wide_add(a .. "l", V.wide_lo(sv)) .. ";")
          emit(ind .. a .. "h = " .. V.wide_add(a .. "h", V.wide_hi(sv)) .. ";")
        elseif c.I == V and dot then
          local a = sm.var .. ((j - 1) % nacc + 1)
          emit(ind .. a .. " = " .. dot.sq(a, sv) .. ";")
        elseif c.I == V then
          local a = sm.var .. ((j - 1) % nacc + 1)
          emit(ind .. a .. " = " .. sm.term(AV, a, sv) .. ";")
        else
          ntail = ntail + 1
          local a = sm.var .. "t"
          emit(ind .. a .. " = " .. sm.term(AS, a, sv) .. ";")
        end
      end
      local extra = also and also(c, j)
      if extra then emit(ind .. extra) end
    end
    return ntail > 0
  end
  local function decl(ind, tails)
    for _, sm in ipairs(sums) do
      if sm.wide and V.wide_vt then
        local z, names = V.wide_zero(), {}
        for a = 1, wn do
          names[#names + 1] = sm.var .. a .. "l = " .. z
          names[#names + 1] = sm.var .. a .. "h = " .. z
        end
        emit(ind .. V.wide_vt .. " " .. table.concat(names, ", ") .. ";")
      else
        local z, names = AV.acc_zero(), {}
        for a = 1, nacc do names[#names + 1] = sm.var .. a .. " = " .. z end
        emit(ind .. AV.acc_vt .. " " .. table.concat(names, ", ") .. ";")
      end
      if tails then emit(ind .. AS.acc_vt .. " " .. sm.var .. "t = " .. AS.acc_zero() .. ";") end
    end
  end
  -- a block's sum of sm (its accumulators folded, as a double)
  local function total(sm, tails)
    local v = sm.var
    local function pair(a) return V.wide_add(v .. a .. "l", v .. a .. "h") end
    local e = (sm.wide and V.wide_vt) and V.wide_hsum(M.fold(pair, wn, V.wide_add)) or AV.acc_hsum(fold(v, AV.acc_add))
    if tails then e = e .. " + (double)" .. v .. "t" end
    return e
  end
  local function flush(ind, tails)
    for _, sm in ipairs(sums) do
      local v = sm.var
      if sm.part then
        assert(p.in_regs and not tails, "row.reduce: a partial sum needs a register-resident row without tail")
        local folded = fold(v, AV.acc_add)
        emit(ind .. sm.part .. " = " .. (dot and folded or V.g4.part(folded)) .. ";")
      else
        emit(ind .. v .. " += " .. total(sm, tails) .. ";")
      end
    end
  end
  local has_tail = false
  local rest = p.in_regs and p.chunks or p.rest
  for _, c in ipairs(rest) do
    if c.I ~= V then has_tail = true end
  end
  for _, sm in ipairs(sums) do
    if not sm.part then emit("double " .. sm.var .. " = 0.0;") end
  end
  if p.in_regs then
    assert(not mid, "row.reduce: mid needs a streamed row")
    emit("{")
    decl("  ", has_tail)
    body(p.chunks, "  ", "v", vals)
    flush("  ", has_tail)
    emit("}")
    return table.concat(out, "\n")
  end
  local step, nblk = tonumber(p.step), math.floor(p.blk_end / p.B)
  if split then
    local n = split
    assert(M.splits(p, n) and not mid, "row.reduce: split needs a row of a multiple of its parts' whole blocks, no mid")
    -- the row's parts as n streams: blocks b, b + H, b + 2H ... side by
    -- side, each with its own accumulators, chunk by chunk (`also` gets
    -- part q's chunks with off past (q - 1) H, pos within the part, half =
    -- q and parts = n); each block's sum kept (<var>_b) and added in the
    -- row's order after, so the bits are those of one stream
    local H = p.dim / n
    local names = { { "", "v" }, { "u", "u" }, { "h", "h" }, { "g", "g" } }
    local mine = sums
    for _, sm in ipairs(sums) do
      assert(not sm.part, "row.reduce: split takes whole-row sums")
    end
    local parts = { mine }
    for q = 2, n do
      parts[q] = {}
      for i, sm in ipairs(sums) do parts[q][i] = setmetatable({ var = sm.var .. names[q][1] }, { __index = sm }) end
    end
    for _, sm in ipairs(mine) do emit("double " .. sm.var .. "_b[" .. nblk .. "];") end
    emit("for (size_t b = 0; b < " .. util.int(H) .. "; b += " .. util.int(p.B) .. ") {")
    for q = 1, n do
      sums = parts[q]
      decl("  ", false)
    end
    sums = mine
    emit("  for (size_t i = b; i < b + " .. util.int(p.B) .. "; i += " .. p.step .. ") {")
    for j, c in ipairs(p.block) do
      local rel = assert(tonumber(c.off:match("^i %+ (%d+)$")), "row.reduce: split chunk offset not i + n")
      for q = 1, n do
        local off = q == 1 and c.off or ("i + " .. util.int((q - 1) * H + rel))
        sums = parts[q]
        body({ { I = c.I, n = c.n, off = off, pos = c.off, half = q, parts = n } }, "    ", names[q][2], nil, j - 1)
      end
      sums = mine
    end
    emit("  }")
    for q = 1, n do
      for i, sm in ipairs(mine) do
        local at = q == 1 and "" or (util.int((q - 1) * nblk / n) .. " + ")
        emit("  " .. sm.var .. "_b[" .. at .. "b / " .. util.int(p.B) .. "] = " .. total(parts[q][i], false) .. ";")
      end
    end
    emit("}")
    for _, sm in ipairs(mine) do
      emit("for (size_t q = 0; q < " .. nblk .. "; q++) " .. sm.var .. " += " .. sm.var .. "_b[q];")
    end
    return table.concat(out, "\n")
  end
  -- `mid` goes between two loop steps at about the row's middle: between
  -- whole blocks when there are two or more, else inside the loop that
  -- crosses the middle (split in two), else after the row
  local pending = mid
  local function put_mid(ind)
    emit(ind .. mid)
    pending = nil
  end
  -- for (size_t i = lo; i < hi; ...) over elements [a, b) of the row,
  -- split around mid at the middle when `may` and mid is pending;
  -- text(x): the bound expression of element x
  local function loop(a, b, text, ind, may)
    local cut = nil
    if may and pending then
      local h = math.floor(math.floor(p.dim / 2) / step) * step
      if h > a and h < b then cut = h end
    end
    local function one(x, y)
      emit(ind .. "for (size_t i = " .. text(x) .. "; i < " .. text(y) .. "; i += " .. p.step .. ") {")
      body(p.block, ind .. "  ", "v")
      emit(ind .. "}")
    end
    if cut then
      one(a, cut)
      put_mid(ind)
      one(cut, b)
    else
      one(a, b)
    end
  end
  local function blocks(b0, b1, may)
    emit("for (size_t b = " .. util.int(b0) .. "; b < " .. util.int(b1) .. "; b += " .. util.int(p.B) .. ") {")
    decl("  ", false)
    loop(0, p.B, function(x) return x == 0 and "b" or ("b + " .. util.int(x)) end, "  ", may)
    flush("  ", false)
    emit("}")
  end
  if nblk >= 2 and pending then
    local hb = math.floor(nblk / 2) * p.B
    blocks(0, hb, false)
    put_mid("")
    blocks(hb, p.blk_end, false)
  elseif nblk >= 1 then
    blocks(0, p.blk_end, nblk == 1)
  end
  if p.loop_end > p.blk_end or #p.rest > 0 then
    emit("{")
    decl("  ", has_tail)
    if p.loop_end > p.blk_end then
      loop(p.blk_end, p.loop_end, function(x) return util.int(x) end, "  ", true)
    end
    body(p.rest, "  ", "w")
    if pending then put_mid("  ") end
    flush("  ", has_tail)
    emit("}")
  end
  if pending then put_mid("") end
  return table.concat(out, "\n")
end

return M
