-- kernels/pipe.lua: long token-major QK-norm calls of bf16 heads as one
-- pipeline of heads two ahead (qk_norm.c.tpl calls it where the runtime
-- says so, kg_cpu_qk_pipe).
--
-- Why: on an Intel core (Emerald Rapids, bench/RESULTS.md run 62) 2048-token
-- prefill of bf16 heads is bound by its 512-bit arithmetic, not by memory:
-- the grouped form (rms_group.c.tpl) loads and splits every head twice,
-- once for its sums and once to scale it.  Here each head is loaded and
-- split once and kept in registers: a step sums head j + 2 into one of three
-- register slots, starts the rs of head j + 1 and scales head j from its
-- slot, the slots rotating A -> B -> C (the loop is unrolled by three, so
-- no vector moves between them).  The call's heads are one flat sequence
-- (each token's Q heads, then its K heads), so the pipeline never drains
-- between loops or tokens.  The same sums (row.reduce, the accumulators of
-- the grouped form), the same rs (row.rms_scale) and the same product per
-- element as rms_row.c.tpl: bit-identical results (KT-QKN-LONG under
-- KGEN_QK_PIPE=1, make test-kernels-nt).
local util = require("util")
local row = require("kernels.row")

local M = {}

-- Why: whether a kernel gets the pipeline: the AVX512_BF16 twin (V.dot) of
-- a table marked qk_pipe, token-major bf16 heads held in registers as whole
-- vectors, weights staged (not hoisted: one weight set per head is read by
-- pointer), and long calls grouped (G_long > 1; group_tokens set).
function M.applies(V, k, p, env)
  if not (V.qk_pipe and V.dot and k.op == "qk_norm" and k.dtype == "bf16" and k.layout == "token_major") then
    return false
  end
  if not p.in_regs or p.hoist_w or not env.group_tokens or not env.G_long or env.G_long < 2 then return false end
  if not (env.staged and env.staged.q_w and env.staged.k_w) then return false end
  for _, c in ipairs(p.chunks) do
    if c.I ~= V or c.n ~= V.W then return false end
  end
  return true
end

-- Why: the C statements of the pipeline (a block that returns), for the
-- frame qk_norm.c.tpl; e: the kernel's env (pack.lua), pl1: whether the
-- frame has `pl1` (next-token prefetches into L1 where it is set).
function M.code(e, pl1)
  local V, T, CT, p, k = e.V, e.T, e.CT, e.p, e.k
  local nq, nk = k.num_heads, k.num_kv_heads
  local H, D = util.int(nq + nk), e.D
  local nv = #p.chunks
  -- heads of up to 256 bytes keep their split halves in the slot; wider
  -- ones (16 vectors a head, 48 for three slots) their raw loads, split
  -- when scaled
  local split_early = e.row_bytes <= 256
  local out = {}
  local function emit(ind, s) out[#out + 1] = ind .. s end
  local function slot_vars(X)
    local vs = {}
    for i = 1, nv do vs[#vs + 1] = (split_early and "x" or "u") .. X .. i end
    return vs
  end
  -- head `idx` (clamped to the last) into slot X: its pointer, its kind,
  -- the next token's same head asked for, its vectors and sums
  local function load(ind, X, idx)
    emit(ind, "{")
    local i2 = ind .. "  "
    emit(i2, "const size_t jj = " .. idx .. " < n ? " .. idx .. " : n - 1;")
    emit(i2, "const size_t tt = jj / " .. H .. ", hh = jj % " .. H .. ";")
    emit(i2, "q" .. X .. " = hh < " .. util.int(nq) .. ";")
    emit(i2, "p" .. X .. " = q" .. X .. " ? q + tt * q_stride + hh * " .. D .. " : k + tt * k_stride + (hh - "
      .. util.int(nq) .. ") * " .. D .. ";")
    -- the same head of the next token (its own lines on the last token),
    -- as the grouped form asks (qk_norm.c.tpl prefetch)
    emit(i2, "const size_t pf = tt + 1 < tokens ? (q" .. X .. " ? q_stride * sizeof(*q) : k_stride * sizeof(*k)) : 0;")
    local pfl = row.prefetch_lines(i2, "(const char *)p" .. X .. " + pf", e.row_bytes, pl1)
    for line in (pfl .. "\n"):gmatch("(.-)\n") do out[#out + 1] = line end
    -- the raw loads; the sums' own loads of the same bytes merge with them
    local vs = slot_vars(X)
    for i, c in ipairs(p.chunks) do
      local raw = V.dot.load("p" .. X, c.off, c.n)
      if split_early then
        emit(i2, vs[i] .. " = " .. V.split_raw(raw) .. ";")
      else
        emit(i2, vs[i] .. " = " .. raw .. ";")
      end
    end
    emit(i2, "{")
    for line in (row.reduce(p, row.sum_sq("tn"), row.loader(T, "p" .. X)) .. "\n"):gmatch("(.-)\n") do
      emit(i2 .. "  ", line)
    end
    emit(i2, "  s" .. X .. " = tn;")
    emit(i2, "}")
    emit(ind, "}")
  end
  -- slot X's head scaled and stored (the slow path for a sum past FLT_MAX)
  local function scale(ind, X)
    emit(ind, "if (KG_UNLIKELY(" .. e.slow_test:gsub("ss", "s" .. X) .. ")) {")
    emit(ind, "  " .. e.slow .. "(p" .. X .. ", p" .. X .. ", q" .. X .. " ? q_w : k_w, NULL);")
    emit(ind, "} else {")
    emit(ind, "  const float *w" .. X .. " = q" .. X .. " ? " .. e.staged.q_w .. " : " .. e.staged.k_w .. ";")
    emit(ind, "  const " .. V.vt .. " vr = " .. V.set1("r" .. X) .. ";")
    local vs = slot_vars(X)
    for i, c in ipairs(p.chunks) do
      local x = split_early and vs[i] or V.split_raw(vs[i])
      local w = V.load_staged("w" .. X, c.off)
      emit(ind, "  " .. V.store(T, "p" .. X, c.off, c.n, row.scaled(V, T, x, "vr", w, k.rounding)))
    end
    emit(ind, "}")
  end
  local function step(ind, X, Y, Z, j)
    load(ind, Z, "(" .. j .. " + 2)")
    emit(ind, "r" .. Y .. " = " .. row.rms_scale("s" .. Y, D, e.EPS) .. ";")
    scale(ind, X)
  end
  emit("", "{")
  emit("  ", "/* heads pipelined two ahead, each loaded once (kernels/pipe.lua) */")
  emit("  ", "const size_t n = tokens * " .. H .. ";")
  for _, X in ipairs({ "A", "B", "C" }) do
    emit("  ", CT .. " *p" .. X .. " = q;")
    emit("  ", "int q" .. X .. " = 1;")
    emit("  ", "double s" .. X .. " = 0.0;")
    emit("  ", "float r" .. X .. " = 0.0f;")
    emit("  ", (split_early and V.vt or V.dot.vt) .. " " .. table.concat(slot_vars(X), ", ") .. ";")
  end
  load("  ", "A", "0")
  load("  ", "B", "1")
  emit("  ", "rA = " .. row.rms_scale("sA", D, e.EPS) .. ";")
  emit("  ", "for (size_t j = 0;; j += 3) {")
  step("    ", "A", "B", "C", "j")
  emit("    ", "if (j + 1 >= n) break;")
  step("    ", "B", "C", "A", "(j + 1)")
  emit("    ", "if (j + 2 >= n) break;")
  step("    ", "C", "A", "B", "(j + 2)")
  emit("    ", "if (j + 3 >= n) break;")
  emit("  ", "}")
  emit("  ", "return;")
  emit("", "}")
  -- the block opens on the frame's `if` line; the rest one level in
  for i = 2, #out do out[i] = "  " .. out[i] end
  return table.concat(out, "\n")
end

return M
