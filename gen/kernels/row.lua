-- kernels/row.lua: how one row of `dim` elements is cut into chunks for an
-- ISA, shared by every op.  A chunk is one vector (or one scalar element on
-- the tail of an ISA without masks) at a compile-time offset.
local util = require("util")

local M = {}

-- Independent accumulators: enough to hide FMA latency (4 cycles x 2 ports).
M.NACC = 4

local function floor_div(a, b) return math.floor(a / b) end

-- Why: assign round-robin accumulators so consecutive chunks feed
-- independent dependency chains; tails (scalar table) get their own.
local function assign(chunks, V, prefix, nacc_start)
  local nv, nt = 0, 0
  for _, c in ipairs(chunks) do
    if c.I == V then
      local a = (nv % M.NACC) + 1
      c.acc = prefix .. a
      c.first = (nacc_start == nil) and (nv < M.NACC)
      nv = nv + 1
    else
      nt = nt + 1
      c.acc = prefix .. "t" .. nt
      c.first = true
    end
  end
  return nv, nt
end

-- Why: a reduction expression that adds accumulators as a tree.
local function reduce(V, S, prefix, nvacc, nt)
  local terms = {}
  for a = 1, nvacc do terms[#terms + 1] = prefix .. a end
  while #terms > 1 do
    local nxt = {}
    for i = 1, #terms, 2 do
      nxt[#nxt + 1] = terms[i + 1] and V.add(terms[i], terms[i + 1]) or terms[i]
    end
    terms = nxt
  end
  local e = terms[1] and V.hsum(terms[1]) or nil
  for t = 1, nt do
    local s = prefix .. "t" .. t
    e = e and S.add(e, s) or s
  end
  return e or S.zero()
end

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
function M.plan(V, S, dim, live)
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
    local step = M.NACC * V.W
    p.step = util.int(step)
    p.loop_end = util.int(floor_div(dim, step) * step)
    p.block = {}
    for j = 0, M.NACC - 1 do
      p.block[#p.block + 1] = { I = V, off = "i + " .. util.int(j * V.W), n = V.W,
        acc = "acc" .. (j + 1) }
    end
    p.rest = span(V, S, floor_div(dim, step) * step, dim - floor_div(dim, step) * step)
    p.hoist_w = false
    p.has_vec = true
  end
  return p
end

-- Why: accumulator bookkeeping for one reduction over the plan's chunks
-- (ops run several reductions: sum, sum of squares...).
function M.accumulate(p, prefix)
  local list = p.in_regs and p.chunks or p.rest
  local copy = {}
  for i, c in ipairs(list) do
    copy[i] = { I = c.I, off = c.off, n = c.n, idx = i }
  end
  local nv, nt = assign(copy, p.V, prefix, (not p.in_regs) and 1 or nil)
  local nvacc = p.in_regs and math.min(nv, M.NACC) or M.NACC
  return { chunks = copy, nvacc = nvacc, nt = nt,
           total = reduce(p.V, p.S, prefix, nvacc, nt) }
end

return M
