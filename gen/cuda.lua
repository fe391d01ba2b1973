-- cuda.lua: the CUDA backend.  When a spec asks for isa "cuda" it adds
-- NAME_cuda.cu (kernels, extern "C" host wrappers, a variant table) to the
-- pack and the wrappers' plain-C declarations to NAME.h.  This file holds
-- the plan (how a row is laid over threads); templates/cuda/ hold the code.
local util = require("util")

local M = {}

M.WARP = 32
-- rows up to this width get one warp each (several rows per block), wider
-- rows one block each
M.WARP_MAX_DIM = 256
M.WARPS_PER_BLOCK = 4
-- a warp works on rows of about this many bytes at once (up to 4 rows),
-- so that short rows still keep enough loads in flight
M.WARP_BYTES = 1024
M.MAX_ROWS_PER_WARP = 4
-- calls of at most this many rows (a decode step's heads) run a twin of a
-- several-rows-per-warp kernel with one row per warp: more warps on more
-- SMs and a shorter chain per warp; on an H100, decode QK-norm 32+8 heads
-- bf16 took 1.27 instead of 1.84 us per call (head_dim 128) and 1.43
-- instead of 2.00 (64).  Above it the grid outgrows one wave of resident
-- warps (132 SMs x 32 warps) and rows per warp keep more bytes in flight.
M.FEW_ROWS = 4096
-- calls of at most this many rows run a block-row LayerNorm twin that
-- loads gamma and beta together with x, without the register cap: on an
-- H100 a one-row LayerNorm 8192 took 2.5 (bf16) and 2.8 (f32) instead of
-- 3.1 us per call in a CUDA graph; with thousands of rows the uncapped
-- kernel keeps too few rows in flight (0.84-0.91 of the copy's bandwidth
-- against 0.98).  256: two resident blocks on each of 132 SMs.
M.FEW_WIDE_ROWS = 256
M.MAX_LANE_VECS = 8
-- a block-per-row thread holds about this many bytes of the row in its
-- vector layout (16 registers, whatever the dtype: the bytes in flight per
-- SM, not the elements, are what keeps a DRAM-bound row fed), or this many
-- elements / 2 in the element layout (one register per element)
M.BYTES_PER_THREAD = 64
M.ELEMS_PER_THREAD = 16
M.MIN_THREADS, M.MAX_THREADS = 64, 1024
M.REGS_PER_SM, M.MAX_REGS = 65536, 64

local DTYPE_STRUCT = { f32 = "kg_cu_f32", bf16 = "kg_cu_bf16", f16 = "kg_cu_f16" }
local TEMPLATE = { rmsnorm = "cuda/rmsnorm.cu.tpl", qk_norm = "cuda/qk_norm.cu.tpl",
  layernorm = "cuda/layernorm.cu.tpl" }
local ROW = { rmsnorm = "cuda/rms_row.cu.tpl", qk_norm = "cuda/rms_row.cu.tpl",
  layernorm = "cuda/ln_row.cu.tpl" }
local SLOW = { rmsnorm = "cuda/rms_slow.cu.tpl", qk_norm = "cuda/rms_slow.cu.tpl",
  layernorm = "cuda/ln_slow.cu.tpl" }

local function ceil_div(a, b) return math.floor((a + b - 1) / b) end

-- Why: the widest power-of-two vector (at most `cap` elements) that tiles
-- the row exactly, so every vector lies inside the row and aligned rows
-- stay aligned.
local function vec_elems(dim, cap)
  local ve = 1
  while ve * 2 <= cap and dim % (ve * 2) == 0 do ve = ve * 2 end
  return ve
end

-- Why: one way of laying a row of `dim` elements over the threads of a row
-- group: vector v = c*L + t (chunk c, thread t) holds elements
-- [v*VE, v*VE + VE).  Consecutive threads touch consecutive vectors, so
-- every load instruction of a warp is one contiguous, coalesced span.
local function layout(dim, ve, warp, name, rows, dtype, lanes)
  local nv = math.floor(dim / ve)
  local L, nt
  if warp then
    L = lanes or M.WARP
    nt = M.WARP * M.WARPS_PER_BLOCK
  else
    -- (element layout: a 16-bit element takes a whole register; half)
    local per = (ve == 1) and math.floor(M.ELEMS_PER_THREAD / 2)
      or math.floor(M.BYTES_PER_THREAD / (ve * util.BYTES[dtype]))
    L = ceil_div(ceil_div(nv, per), M.WARP) * M.WARP
    L = math.min(M.MAX_THREADS, math.max(M.MIN_THREADS, L))
    nt = L
  end
  local C = ceil_div(nv, L)
  return {
    name = name, VE = ve, NV = nv, L = L, C = C, NT = nt, NW = math.floor(nt / M.WARP),
    -- resident blocks asked of the compiler: caps registers at 64 a thread
    -- so that several rows stay in flight per SM
    MINB = math.floor(M.REGS_PER_SM / (nt * M.MAX_REGS)),
    R = rows, warp = warp,
    -- rows side by side in a warp (L lanes each)
    S = warp and math.floor(M.WARP / L) or 1,
  }
end

-- Why: RMSNorm and QK-norm rows of fewer than 32 16-byte vectors lie side
-- by side in a warp in the vector layout, S = 32 / L rows of L lanes, a
-- 16-byte vector a lane, instead of one row over 32 lanes of narrower
-- vectors (one load instruction a warp per row, 4 bytes a lane for
-- head_dim 64 bf16).  2048-token prefill of 32 + 8 heads on an H200,
-- builds alternated five times (bench/RESULTS.md run 46): head_dim 64
-- bf16 17.0-18.3 -> 12.0-13.4 us (0.77-0.84 -> 1.13-1.17 of a device
-- copy), 128 bf16 19.6-21.0 -> 17.1-19.6 us (0.95-0.99 -> 1.07-1.10);
-- decode in a CUDA graph 1.49 -> 1.40-1.43 us (64) and 1.27 -> 1.25
-- (128).  Returns the lanes per row and the vector width, or nil where
-- the row keeps the whole warp (LayerNorm, wider rows, no 16-byte tiling
-- finer than the element).
local function sub_lanes(k, bytes)
  if k.op == "layernorm" then return nil end
  local ve = vec_elems(k.dim, math.floor(16 / bytes))
  if ve == 1 then return nil end
  local lanes = 1
  while lanes * ve < k.dim do lanes = lanes * 2 end
  if lanes >= M.WARP then return nil end
  return lanes, ve
end

-- Why: the plan of one kernel: the row group (warp or block) and the
-- layouts the host wrapper picks from at run time, the first whose
-- alignment the call meets: "vec" (16-byte or narrower vector loads, when
-- pointers and strides are aligned to the vector), "vecn" (after a "vec"
-- of rows side by side: the whole-warp rows' narrower vectors) and "el"
-- (one element per access, any alignment), only "el" when VE is 1; and
-- each layout's twin for calls of few rows where it has one (FEW_ROWS,
-- FEW_WIDE_ROWS), which the wrapper picks by the call's row count.
function M.plan(k)
  local bytes = util.BYTES[k.dtype]
  local warp = k.dim <= M.WARP_MAX_DIM
  local cap = math.floor(16 / bytes)
  if warp then
    -- keep all 32 lanes busy before widening the vectors
    local per_lane = 1
    while per_lane * 2 * M.WARP <= k.dim do per_lane = per_lane * 2 end
    cap = math.min(cap, per_lane)
  end
  local ve = vec_elems(k.dim, cap)
  local lanes, sve = nil, nil
  if warp then lanes, sve = sub_lanes(k, bytes) end
  -- rows a row group (a warp's lanes of one row) works on at once: about
  -- WARP_BYTES a warp
  local function rows(S)
    if not warp then return 1 end
    local R = math.floor(M.WARP_BYTES / (S * k.dim * bytes))
    return math.max(1, math.min(M.MAX_ROWS_PER_WARP, R))
  end
  local paths = {}
  if lanes then
    paths[#paths + 1] = layout(k.dim, sve, warp, "vec", rows(M.WARP / lanes), k.dtype, lanes)
    -- calls aligned to less than 16 bytes keep the narrower vectors of
    -- whole-warp rows where the row has them
    if ve > 1 then paths[#paths + 1] = layout(k.dim, ve, warp, "vecn", rows(1), k.dtype) end
    ve = sve
  elseif ve > 1 then
    paths[#paths + 1] = layout(k.dim, ve, warp, "vec", rows(1), k.dtype)
  end
  paths[#paths + 1] = layout(k.dim, 1, warp, "el", rows(1), k.dtype)
  for _, l in ipairs(paths) do l.VB = l.VE * bytes end
  -- kernels: every layout and its twin (few) for calls of few rows, if
  -- it has one; base names the rare-path function both share
  local kernels = {}
  for _, l in ipairs(paths) do
    -- registers: at most MAX_LANE_VECS row vectors of x per lane
    l.R = math.max(1, math.min(l.R, math.floor(M.MAX_LANE_VECS / l.C)))
    l.RPB = warp and (M.WARPS_PER_BLOCK * l.R * l.S) or 1 -- rows per block
    l.base = l.name
    kernels[#kernels + 1] = l
    local f = {}
    for key, v in pairs(l) do f[key] = v end
    f.name, f.twin = l.name .. "1", true
    if l.R > 1 then
      -- one row per warp
      f.R, f.RPB, f.bound = 1, M.WARPS_PER_BLOCK * l.S, "KG_CU_FEW_ROWS"
    elseif not warp and k.op == "layernorm" and l.NT < M.MAX_THREADS then
      -- gamma and beta loaded with x (one memory round trip less), no
      -- register cap (a block per SM is plenty for so few rows); not for
      -- blocks of MAX_THREADS, whose threads get 64 registers whatever the
      -- cap, too few for the row and both weights (they spilled)
      f.early, f.MINB, f.bound = true, 1, "KG_CU_FEW_WIDE_ROWS"
    else
      f = nil
    end
    if f then
      l.few = f
      kernels[#kernels + 1] = f
    end
  end
  return { warp = warp, bytes = bytes, VE = ve, VB = ve * bytes, paths = paths,
    kernels = kernels, WPB = M.WARPS_PER_BLOCK }
end

local function has_cuda(spec)
  for _, isa in ipairs(spec.isa) do
    if isa == "cuda" then return true end
  end
  return false
end

-- Why: the environment of one kernel's templates: the plan, the baked
-- constants (formatted once, here) and the typed prototype.
local function kernel_env(ctx, k)
  local s = ctx.sym(k, "cuda")
  local typed = ctx.signature(k)
  local env = {
    spec = ctx.spec, k = k, P = M.plan(k), util = util, sym = s,
    S = ctx.ctype[k.dtype], DT = DTYPE_STRUCT[k.dtype], T = k.dtype,
    D = util.int(k.dim), EPS = util.f32(k.eps), INV_D = util.f64(1 / k.dim),
    OFF = util.f32(k.weight_offset), OFF64 = util.f64(k.weight_offset),
    HAS_OFF = k.weight_offset ~= 0, has_rstd = k.op == "rmsnorm",
    -- rmsnorm's extra slow-path test for an eps below the underflow of
    -- f32 squares, exactly as the CPU templates have it
    slow_test = "!(ss_k <= FLT_MAX)" .. ((k.eps < 2 ^ -100) and " || ss_k < 0x1p-60f" or ""),
    proto = "int " .. s .. "(" .. typed .. ", void *stream)",
  }
  -- one layout's row body (inside the kernel) and its out-of-line rare
  -- path (before the kernel), rendered inside the op template
  local function per_layout(tpl)
    return function(layout_)
      local renv = { L = layout_ }
      for key, v in pairs(env) do renv[key] = v end
      return (ctx.render(tpl, renv):gsub("\n$", ""))
    end
  end
  env.row, env.slow = per_layout(ROW[k.op]), per_layout(SLOW[k.op])
  -- the host wrapper's launch: the pointers and strides the vector layout
  -- needs aligned, the row count (a C expression); `args` is set before
  env.launch = function(ptrs, strides, rows)
    -- aligned[i]: the condition of path i (all but the last, "el")
    local aligned = {}
    for i = 1, #env.P.paths - 1 do
      local l, conds = env.P.paths[i], {}
      for _, p in ipairs(ptrs) do
        conds[#conds + 1] = "kg_cu_aligned<" .. util.int(l.VB) .. ">(" .. p .. ")"
      end
      for _, st in ipairs(strides) do
        conds[#conds + 1] = st .. " % " .. util.int(l.VE) .. " == 0"
      end
      aligned[i] = table.concat(conds, " &&\n      ")
    end
    local lenv = { aligned = aligned, rows = rows }
    for key, v in pairs(env) do lenv[key] = v end
    return (ctx.render("cuda/launch.cu.tpl", lenv):gsub("\n$", ""))
  end
  return env
end

-- Why: the variant-table row of one CUDA variant and its type-erased
-- forwarder's parameter and argument lists.
local function table_entry(ctx, k, s)
  local _, _, _, etyped, casts = ctx.signature(k)
  return {
    sym = s, op = k.op,
    eparams = table.concat(etyped, ", ") .. ", void *stream",
    casts = table.concat(casts, ", ") .. ", stream",
    row = string.format('"%s", "%s", KG_OP_%s, KG_ISA_CUDA, KG_%s, KG_ROUND_%s, %s, %s, %s, %s, %s, %s',
      s, k.name, k.op:upper(), k.dtype:upper(), k.rounding:upper(),
      (k.layout == "head_major") and "KG_HEAD_MAJOR" or "KG_TOKEN_MAJOR",
      util.int(k.dim), util.int(k.num_heads), util.int(k.num_kv_heads),
      util.f32(k.eps), util.f32(k.weight_offset)),
  }
end

-- Why: the extension hook (see pack.lua): NAME_cuda.cu and the header
-- declarations, only when the spec asks for cuda.
function M.render(ctx)
  local spec = ctx.spec
  if not has_cuda(spec) then return {}, {} end
  local bodies, entries, protos = {}, {}, {}
  for _, k in ipairs(spec.kernels) do
    local env = kernel_env(ctx, k)
    bodies[#bodies + 1] = ctx.render(TEMPLATE[k.op], env)
    protos[#protos + 1] = env.proto
    entries[#entries + 1] = table_entry(ctx, k, env.sym)
  end
  local fenv = {
    spec = spec, util = ctx.util, bodies = bodies, entries = entries,
    ns = "kg_cu_" .. spec.name, few_rows = util.int(M.FEW_ROWS),
    few_wide_rows = util.int(M.FEW_WIDE_ROWS),
    banner = ctx.banner("cuda/file.cu.tpl + cuda op templates"),
  }
  local file = ctx.render("cuda/file.cu.tpl", fenv)
  local decl = ctx.render("cuda/decls.h.tpl", { spec = spec, protos = protos })
  return { [spec.name .. "_cuda.cu"] = file }, { decl }
end

return M
