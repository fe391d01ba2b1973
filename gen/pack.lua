-- pack.lua: render one pack (header, one file per ISA, dispatcher, runtime
-- copies, manifest) into memory.  Writing to disk is write.lua's job.
local template = require("pl.template")
local util = require("util")
local row = require("kernels.row")
local lines = require("kernels.lines")
local pipe = require("kernels.pipe")

local M = {}

-- Modules that add files to a pack: M.render(ctx) -> { [file] = text }, { decl, ... }
M.EXTENSIONS = { "cuda", "embed" }

local CTYPE = { f32 = "float", bf16 = "kg_bf16", f16 = "kg_f16" }
local OPS = {
  rmsnorm = require("kernels.rmsnorm"),
  qk_norm = require("kernels.qk_norm"),
  layernorm = require("kernels.layernorm"),
}
local CPU_ISAS = { "scalar", "avx2", "avx512", "neon" }
local RUNTIME_FILES = { "kg_variant.h", "kg_cpu.h", "kg_cpu.c", "kg_dispatch.h",
  "kg_dispatch.c", "kg_convert.h" }

local function isa_table(name) return require("isa." .. name) end

local cache = {}
-- Why: templates are compiled once per run and rendered many times.
local function render(dirs, name, env)
  local ct = cache[name]
  if not ct then
    local src = util.read_file(dirs.templates .. "/" .. name)
    if not src then error("template not found: " .. name) end
    local err
    ct, err = template.compile(src, { escape = "@", chunk_name = name })
    if not ct then error("template " .. name .. ": " .. tostring(err)) end
    cache[name] = ct
  end
  local out, err = ct:render(env, _G)
  if not out then error("template " .. name .. ": " .. tostring(err)) end
  return out
end

-- Why: the typed parameter list, call list and erased type list of an op.
local function signature(k)
  local op = OPS[k.op]
  local typed, names, erased, casts = {}, {}, {}, {}
  for _, prm in ipairs(op.params) do
    local ty, nm = prm[1], prm[2]
    local cty = ty:gsub("T", CTYPE[k.dtype])
    typed[#typed + 1] = cty .. (cty:sub(-1) == "*" and "" or " ") .. nm
    names[#names + 1] = nm
    erased[#erased + 1] = ty:gsub("T", "void")
    if ty:find("T") then
      casts[#casts + 1] = "(" .. cty .. ")" .. nm
    else
      casts[#casts + 1] = nm
    end
  end
  local etyped = {}
  for i, e in ipairs(erased) do
    etyped[i] = e .. (e:sub(-1) == "*" and "" or " ") .. names[i]
  end
  return table.concat(typed, ", "), table.concat(names, ", "),
    table.concat(erased, ", "), etyped, casts
end

local function sym(spec, k, isa)
  return spec.name .. "_" .. k.name .. (isa and ("_" .. isa) or "")
end

local function proto(spec, k, isa)
  local typed = signature(k)
  return "void " .. sym(spec, k, isa) .. "(" .. typed .. ")"
end

-- Why: multi-line C from Lua helpers, indented to sit in a template.
local function indent(text, pad)
  return (text:gsub("\n", "\n" .. pad))
end

-- Rows per group of the grouped in-place path (rms_group.c.tpl).
local GROUP = 4
-- Longest row (bytes) that goes in such groups, unless the table says
-- (V.group_row_bytes).
local GROUP_ROW_BYTES = 512
-- QK-norm calls over this many bytes of heads stream f32 heads row by row
-- and put 16-bit ones in smaller groups (env.group_tokens, env.G_long).
local STREAM_F32_BYTES = 256 * 1024
-- Largest group of heads (bytes) in such long calls (env.G_long), unless
-- the table says (V.long_group_bytes).
local LONG_GROUP_BYTES = 1024
-- Head-major QK-norm rows prefetch this far ahead in their head
-- (env.hm_pf_bytes), unless the table says (V.hm_pf_bytes).
local HM_PF_BYTES = 4096
-- Longest row whose weights are staged per call (V.stage): 4 KiB of stack.
local STAGE_MAX = 1024
-- Most stack (bytes, all of a kernel's weights together) that the aligned
-- copy of weights off cache-line alignment may take (env.walign).
local WALIGN_MAX = 65536
-- Longest output row (bytes) that large out-of-place calls with y off
-- cache-line alignment compute into an aligned stack row and stream out
-- (nt_rows.c.tpl): bf16 rows up to dim 8192, f32 up to 4096.
local NT_STAGE_MAX = 16384
-- Most stack (bytes, all of a kernel's split f32 weights together) that the
-- weights of the streamed (non-temporal) rows may take when the rows are
-- too long to stage at kernel entry (STAGE_MAX): env.nt_stage_code.  Not
-- 32 KiB: the staged weights, this row and the next must share L1 (48 KiB
-- on Zen 5), and RMSNorm 8192 x 4096 bf16 took 1.28-1.37x the time of the
-- rows that split their own, LayerNorm 4096 x 8192 bf16 (gamma and beta)
-- 1.02-1.08x (bench/RESULTS.md run 65)
local NT_WSTAGE_MAX = 16384

-- Why: the body (slow path + function) of one kernel for one ISA.
-- Tables with dot_ops (AVX-512 bf16) give ops marked dot_twin (RMSNorm,
-- QK-norm) a second, static body <sym>_bf16dot whose sums of squares use
-- AVX512_BF16 (isa/avx512.lua P.dot_ops); the public function calls it,
-- for every call length, when the CPU has that extension
-- (kg_cpu_avx512_bf16), so a pack
-- built for "avx512" takes it where it exists and runs the plain body
-- elsewhere.  Never switched by call size: a head or row gets the same
-- bits in decode and prefill (KT-QKN-LONG).  QK-norm's twin waited until
-- prefill was grouped (it slowed streamed prefill, bench/RESULTS.md run
-- 13; run 16: decode 7 % faster, prefill no slower).  `twin_of`:
-- the public symbol, when rendering that twin.
local function kernel_body(dirs, spec, k, V, twin_of)
  if V.for_dtype then V = V.for_dtype(k.dtype, k.rounding) end
  local S = isa_table("scalar")
  local op = OPS[k.op]
  local s = sym(spec, k, V.name)
  local twin_text
  if not twin_of and V.dot_ops and op.dot_twin then
    local VD = setmetatable({ dot = V.dot_ops, target = V.dot_ops.target }, { __index = V })
    twin_text = kernel_body(dirs, spec, k, VD, s)
  end
  local p = row.plan(V, S, k.dim, op.live, k.dtype)
  local attr = V.target and ('__attribute__((target("' .. V.target .. '"))) ') or ""
  local _, names = signature(k)
  local env = {
    spec = spec, k = k, V = V, S = S, p = p, row = row, util = util, lines = lines,
    T = k.dtype, CT = CTYPE[k.dtype], D = util.int(k.dim), EPS = util.f32(k.eps),
    sym = twin_of and (twin_of .. "_bf16dot") or s, slow = (twin_of or s) .. "_slow",
    attr = attr, indent = indent, linkage = twin_of and "static " or "",
    dot_call = twin_text and string.format("if (kg_cpu_avx512_bf16()) { %s_bf16dot(%s); return; }", s, names),
    layout_doc = op.layout_doc and op.layout_doc[k.layout],
    row_bytes = k.dim * util.BYTES[k.dtype],
  }
  local tiny = k.eps < 2 ^ -100 and " || ss < 0x1p-60" or ""
  env.slow_test = "!(ss <= (double)FLT_MAX)" .. tiny
  for key, v in pairs(op.row_env) do env[key] = v end
  -- 16-bit weights the rows would split (or convert) again per row (not
  -- hoisted into registers) are split once per call into a stack array
  -- where the table can (V.stage; rows up to STAGE_MAX elements, so the
  -- frame stays small): w, QK-norm's q_w and k_w, LayerNorm's gamma and
  -- beta (op.staged_w; not on tables with stage_one_weight).  A run-time
  -- mask c.m comes only from the line frame's end weight lines
  -- (kernels/lines.lua), which the ISA table reads from inside the weights
  local function load_w(c, ptr)
    local e = c.I.load(env.T, ptr, c.off, c.n, c.m, c.m ~= nil)
    if k.weight_offset ~= 0 then e = c.I.add(e, c.I.set1(util.f32(k.weight_offset))) end
    return e
  end
  local ws_list = op.staged_w or op.rows or { { w = "w" } }
  -- each weight of ws_list staged as <prefix><w>: the names by weight, the
  -- C lines that stage them
  local function stage_all(prefix)
    local got_names, code = {}, {}
    for _, rv in ipairs(ws_list) do
      local function value(off, n) return load_w({ I = V, off = off, n = n }, rv.w) end
      local got = V.stage(prefix .. rv.w, k.dim, value)
      if #got > 0 then got_names[rv.w] = prefix .. rv.w end
      for _, line in ipairs(got) do code[#code + 1] = line end
    end
    return got_names, code
  end
  local staged, stage_lines = {}, {}
  local stage_ok = not (op.staged_w and #op.staged_w > 1 and V.stage_one_weight)
  if V.stage and stage_ok and not p.hoist_w and k.dim <= STAGE_MAX then
    staged, stage_lines = stage_all("ws_")
  end
  env.stage_code = table.concat(stage_lines, "\n  ")
  env.staged = staged
  -- weights that every row reads from memory (not hoisted into registers,
  -- not staged) and that sit off cache-line alignment, as a malloc'd
  -- tensor does, are copied once per call of KG_WALIGN_ROWS rows or more
  -- to aligned stack arrays on tables marked walign (AVX-512), for ops
  -- marked walign (RMSNorm, LayerNorm) up to WALIGN_MAX bytes of them:
  -- their split loads, one stream among x's, cost RMSNorm 4096 x 8192 f32
  -- with x 16 bytes into a line 1.18x the time, LayerNorm bf16 aligned
  -- with gamma and beta 32 bytes in 1.15x (bench/RESULTS.md run 44).
  -- The arrays live in a helper of their own (<sym>_wa, which calls the
  -- kernel again with them): in the kernel's frame they cost RMSNorm
  -- 1024 x 64 f32 6 % with aligned weights (run 44)
  local wa = {}
  if V.walign and op.walign and not p.hoist_w then
    for _, rv in ipairs(op.staged_w or { { w = "w" } }) do
      if not staged[rv.w] then wa[#wa + 1] = rv.w end
    end
  end
  if #wa > 0 and #wa * k.dim * util.BYTES[k.dtype] <= WALIGN_MAX then
    local typed, call = signature(k)
    local any, decls, copies, copied = {}, {}, {}, {}
    for _, w in ipairs(wa) do
      any[#any + 1] = "(uintptr_t)" .. w
      decls[#decls + 1] = string.format("%s wa_%s[%d] __attribute__((aligned(64)));", env.CT, w, k.dim)
      copies[#copies + 1] = string.format("memcpy(wa_%s, %s, sizeof wa_%s);", w, w, w)
      copied[w] = true
    end
    for _, line in ipairs(copies) do decls[#decls + 1] = line end
    -- the call back: the kernel's parameters in order, the copies for the
    -- weights copied
    local wargs = {}
    for _, prm in ipairs(op.params) do
      wargs[#wargs + 1] = copied[prm[2]] and "wa_" .. prm[2] or prm[2]
    end
    -- the helper's parameters, the kernel's call to it, its call back
    env.walign = {
      cond = string.format("rows >= KG_WALIGN_ROWS && ((%s) & 63)", table.concat(any, " | ")),
      body = decls, typed = typed, args = call, wargs = table.concat(wargs, ", "),
    }
  end
  -- the weights the rows being rendered read staged (`wset`): those
  -- staged at kernel entry, or, while the streamed rows are rendered,
  -- those of nt_staged below
  local wset = staged
  env.wload = function(c, ptr)
    ptr = ptr or "w"
    if wset[ptr] and c.I == V then return V.load_staged(wset[ptr], c.off) end
    return load_w(c, ptr)
  end
  -- rows too long to stage at entry (a 1-row call would pay for it) are
  -- staged at the start of the streamed (non-temporal) rows' blocks
  -- (nt_rows.c.tpl, env.nt_stage_code), which only calls of many rows
  -- take, up to NT_WSTAGE_MAX bytes of split f32 weights: each row then
  -- loads its weights rather than splitting (converting) them again.  On
  -- a Zen 5 core RMSNorm 4096 x 8192 bf16 took 0.98-1.00x the time with
  -- its two streams (kg_cpu_nt_split4k), 1.02-1.03x with one, alternated
  -- in one process (bench/RESULTS.md run 65; separate processes, run 64,
  -- read 0.976x, f16 0.867x, AVX2 bf16 0.907x; same bits, make
  -- test-kernels-nt)
  local nt_staged, nt_lines = {}, {}
  if V.stage and stage_ok and not p.hoist_w and not p.in_regs and k.dim > STAGE_MAX and op.nt_stores
    and V.store_nt and #ws_list * math.ceil(k.dim / V.W) * V.W * 4 <= NT_WSTAGE_MAX then
    nt_staged, nt_lines = stage_all("wn_")
  end
  env.nt_stage_code = nt_lines
  if #nt_lines == 0 then nt_staged = staged end
  -- one rendering of the row per weight set (qk_norm: Q and K), plus,
  -- where the op writes out of place, a non-temporal-store twin and a
  -- staged twin for y off line alignment (nt_rows.c.tpl): rows of whole
  -- vectors that the table can realign in registers (V.nt_shift, "shift")
  -- stream each vector through it; others are written with plain stores
  -- to the aligned stack row ys ("row"), streamed out after it
  env.ntstore = function(I, dtype, base, off, v, b)
    if env.stage == "shift" then
      return V.nt_shift .. "_put(&nst" .. (b or "") .. ", " .. off .. ", " .. I.nt_value(dtype, v) .. ");"
    end
    if env.stage == "row" then return I.store(dtype, base, off, nil, v) end
    return I.store_nt(dtype, base, off, v)
  end
  local stage
  if V.nt_shift and V.nt_value and V.nt_value(k.dtype, "v") and k.dim % V.W == 0 then stage = "shift"
  elseif V.nt_row and env.row_bytes <= NT_STAGE_MAX then stage = "row" end
  -- ops with a frame twin of their row (op.frame_rows, ln_row.c.tpl) on
  -- tables that stream lines in the frame (V.nt_frame): rows of whole
  -- lines, weights staged in the frame on the stack (<= NT_STAGE_MAX bytes)
  local frame = op.frame_rows and V.lf and V.nt_frame and V.nt_value and V.nt_value(k.dtype, "v") ~= nil
    and (k.dim * util.BYTES[k.dtype]) % 64 == 0 and k.dim % V.W == 0 and env.row_bytes <= NT_STAGE_MAX
  -- the stack copy of weight w in that frame, as its row and its stage name it
  env.frame_w = function(w) return "fl_" .. w end
  local yr = env.yr
  -- out-of-place ops with wide rows: row r's second pass fused with row
  -- r + 1's first pass (rms_row.c.tpl, `fused`); not for the scalar table
  -- `ahead2`: 16-bit rows of at most the table's ahead2_bytes16 sum row
  -- r + 2 instead and start row r + 1's scale a step early (their per-row
  -- loop is short enough that the sqrt -> divide chain showed)
  local fuse = op.fuse_rows and not p.in_regs and V.name ~= "scalar"
  if fuse then
    env.ahead2 = V.ahead2_bytes16 ~= nil and k.dtype ~= "f32"
      and k.dim * util.BYTES[k.dtype] <= V.ahead2_bytes16
  end
  -- tables marked nt_fused stream such rows out in that fused form too
  -- (nt_rows.c.tpl), and LayerNorm's (op.fused_sums, ln_row.c.tpl): on a
  -- Zen 5 core RMSNorm 4096 x 8192 AVX-512 f32 took 0.80 the time of the
  -- two-pass rows (sums, then output with the next row asked for), bf16
  -- 0.84, AVX2 f32 0.81 (bench/RESULTS.md run 41)
  local ln_fuse = op.fused_sums and not p.in_regs and V.name ~= "scalar"
  env.nt_fused = (fuse or ln_fuse) and V.nt_fused and op.nt_stores and V.store_nt ~= nil
  -- tables marked nt_split read and write such fused rows as two streams
  -- or more where the runtime says so (rms_row.c.tpl, kg_cpu_nt_split)
  env.nt_split = env.nt_fused and fuse and V.nt_split and not env.ahead2 and row.splits(p) or nil
  -- rows with x and y aligned are read and written in parts of 4 KiB
  -- where they have 2 to 4 of them (row.split_parts; halves else), and
  -- ask kg_cpu_nt_split4k where the parts are at most 4 KiB apart: on a
  -- Zen 5 core, alternated in one process, RMSNorm 4096 x 8192 bf16 in
  -- halves took 0.86-0.93 the time of one stream, f32 in quarters
  -- 0.84-0.85x memcpy against 0.94-0.95, while f32 in halves (8 KiB
  -- apart) took 1.13-1.26 the time of one stream where memory was fast,
  -- and bf16 at offset 16 realigned in halves 1.22-1.31 the time of the
  -- one-stream line frame (bench/RESULTS.md run 65)
  env.nt_parts = env.nt_split and row.split_parts(p, k.dtype) or nil
  env.nt_split_aligned = env.nt_split
    and (row.split4k(k.dim * util.BYTES[k.dtype] / env.nt_parts) and "kg_cpu_nt_split4k" or "kg_cpu_nt_split")
  -- f32 LayerNorm rows with x and y at one offset into their lines take
  -- the fused realigning stream rather than the two-pass line frame: on a
  -- Zen 5 core 4096 x 8192 at offsets 16 and 48 took 0.85-0.89 the time;
  -- bf16 measured 0.89-1.06, so 16-bit rows keep the frame (RESULTS run 41)
  if env.nt_fused and ln_fuse and k.dtype == "f32" then frame = false end
  -- RMSNorm's frame rows are fused (rms_row.c.tpl: row r's lines written
  -- while row r + 1 is summed from its own split loads, the same sums as
  -- the other rows), so only where those are, rows of whole steps
  -- (#p.rest == 0) and the runtime does not ask for two streams (the
  -- frame's loop is one): on the Zen 5 VM RMSNorm 4096 x 8192 f32 at
  -- offset 16 took 1.10-1.16 x memcpy realigned in registers, 1.02-1.06
  -- in the frame, about as aligned (bench/RESULTS.md run 61)
  if frame and op.fuse_rows then
    frame = env.nt_fused and fuse and #p.rest == 0 or false
    env.frame_fz = frame
    -- the frame's rows in parts 4 KiB apart where the aligned ones are
    -- and kg_cpu_nt_split4k says so: on the Zen 5 VM, alternated in one
    -- process, RMSNorm 4096 x 8192 f32 at offset 16 in quarters took
    -- 0.85-0.87 the time of one stream (bench/RESULTS.md run 66)
    env.frame_parts = frame and env.nt_split_aligned == "kg_cpu_nt_split4k" and env.nt_parts or nil
  end
  -- what ends a staged non-temporal row (nt_rows.c.tpl, and inside the
  -- fused row before its `continue`)
  if stage == "shift" then env.stage_post = V.nt_shift .. "_end(&nst, " .. env.D .. ");"
  elseif stage == "row" then env.stage_post = "kgi_nt_row((char *)yr, (const char *)ys, sizeof ys);" end
  for _, rv in ipairs(op.rows or { { key = "row_body", w = "w", wv = "wv" } }) do
    env.w, env.wv, env.nt = rv.w, rv.wv, false
    env[rv.key] = render(dirs, op.row, env)
    if op.nt_stores and V.store_nt and not p.in_regs then
      env.nt, env.fused, env.ln_fz = true, env.nt_fused and op.fuse_rows, env.nt_fused and ln_fuse
      wset = nt_staged
      env[rv.key .. "_nt"] = render(dirs, op.row, env)
      if stage then
        env.stage, env.yr = stage, stage == "row" and "ys" or yr
        env.nt_post = env.nt_fused and env.stage_post or nil
        env[rv.key .. "_stage"] = render(dirs, op.row, env)
        env.stage, env.yr, env.nt_post = nil, yr, nil
      end
      wset = staged
      env.fused, env.ln_fz = false, false
      if frame then
        env.stage, env.fused = "frame", env.frame_fz
        env[rv.key .. "_frame"] = render(dirs, op.row, env)
        env.stage, env.fused = nil, false
      end
    end
  end
  env.stage_mode = stage
  -- whether a non-temporal row asks for the next row through `xp`
  -- (declared only then: -Werror=unused-variable)
  local function uses_xp(body) return body ~= nil and body:find("%f[%w_]xp%f[^%w_]") ~= nil end
  if env.row_body_frame then
    -- the frame's weights: each of op.staged_w copied shifted by y's kd
    -- lanes into fl_<w> (its lines 0 .. nv, masked at both ends)
    local nv, lines_out = k.dim / V.W, {}
    for _, rv in ipairs(op.staged_w or { { w = "w" } }) do
      local a, src = env.frame_w(rv.w), "flp_" .. rv.w
      lines_out[#lines_out + 1] = string.format("%s %s[%d] __attribute__((aligned(64)));", env.CT, a, k.dim + V.W)
      lines_out[#lines_out + 1] = string.format("const %s *%s = (const %s *)((uintptr_t)%s - 4 * kd);",
        env.CT, src, env.CT, rv.w)
      local copy = V.nt_frame.copy
      lines_out[#lines_out + 1] = copy(a, src, "0", "head")
      if nv > 1 then
        lines_out[#lines_out + 1] = string.format("for (size_t i = %d; i < %s; i += %d) %s",
          V.W, env.D, V.W, copy(a, src, "i"))
      end
      lines_out[#lines_out + 1] = copy(a, src, env.D, "tail")
    end
    env.frame_stage = lines_out
    env.frame_xp = uses_xp(env.row_body_frame)
  end
  env.nt = false
  env.nt_xp, env.stage_xp = uses_xp(env.row_body_nt), uses_xp(env.row_body_stage)
  -- what goes before a fused loop (the first rows' sums; the row
  -- template's `head`) and the row each step sums (xn)
  if fuse or ln_fuse then
    env.head = true
    env.fused_head = render(dirs, op.row, env):gsub("%s+$", "")
    env.head = nil
    env.fused_xn = env.ahead2 and "r + 2 < rows ? xr + 2 * x_stride : NULL" or "r + 1 < rows ? xr + x_stride : NULL"
  end
  -- tables marked ln_pair take non-temporal LayerNorm rows of whole
  -- vectors two at a time (nt_rows.c.tpl, ln_row.c.tpl `pair`): aligned
  -- ones, and on tables marked ln_pair_realign those realigned in
  -- registers too
  if ln_fuse and env.nt_fused and V.ln_pair and env.row_body_nt and #p.rest == 0 then
    env.nt, env.ln_fz, env.pair = true, true, true
    wset = nt_staged
    -- aligned pairs whose rows have halves of 3-4 KiB (row.split4k) read
    -- and write them as four streams where kg_cpu_nt_split4k says so: on
    -- the Zen 5 VM, alternated in one process, LayerNorm 4096 x 8192 bf16
    -- took 0.89-0.90 the time of the pairs' two streams 8 KiB apart
    -- (0.88-0.92 in the line frame; bench/RESULTS.md run 66)
    env.ln_pair_parts = V.nt_split and row.splits(p, 2) and row.split4k(k.dim * util.BYTES[k.dtype] / 2) and 2 or nil
    env.ln_parts = env.ln_pair_parts
    env.row_body_pair = render(dirs, op.row, env)
    env.ln_parts = nil
    if env.stage_mode == "shift" and V.ln_pair_realign then
      env.stage = "shift"
      env.row_body_pair_stage = render(dirs, op.row, env)
      env.stage = nil
    end
    wset = staged
    -- and line-frame rows (x and y one offset into their lines) on tables
    -- marked ln_pair_frame
    if env.row_body_frame and V.ln_pair_frame then
      env.stage, env.ln_parts = "frame", env.ln_pair_parts
      env.row_body_pair_frame = render(dirs, op.row, env)
      env.stage, env.ln_parts = nil, nil
    end
    env.pair = nil
    env.head = "pair"
    env.pair_head = render(dirs, op.row, env):gsub("%s+$", "")
    env.head = "sums"
    env.pair_sums = render(dirs, op.row, env):gsub("%s+$", "")
    env.head, env.nt, env.ln_fz = nil, false, false
  end
  env.nt_rows = op.nt_stores and render(dirs, "nt_rows.c.tpl", env) or ""
  -- the cached rows in the fused form: RMSNorm's on every table but the
  -- scalar one, LayerNorm's (ln_row.c.tpl `ln_fz`) on tables with ln_fused
  if fuse then
    env.fused = true
    env.row_body_fused = render(dirs, op.row, env)
    env.fused = false
  elseif ln_fuse and V.ln_fused then
    env.ln_fz = true
    env.row_body_fused = render(dirs, op.row, env)
    env.ln_fz = false
  end
  -- in-place ops with short register-resident rows: G rows per step, one
  -- group ahead (rms_group.c.tpl), for calls whose rows fit in the caches
  -- (qk_norm.c.tpl picks at run time).  Not for rows over 512 bytes
  -- (measured slower: f32 head_dim 256), which hide their own chain,
  -- unless the table says so, nor for the scalar table.
  -- Tables marked group_unrolled (AVX2) group such rows even where their
  -- registers stream them (row.plan_unrolled, env.p while rendering the
  -- group code): on a Zen 4 core AVX2 decode 40 x 128 bf16 1.21 -> 0.60 us,
  -- f32 0.65 -> 0.53 us, prefill 2048 x 40 x 128 bf16 2.5 -> 1.3 ms
  -- (bench/RESULTS.md run 14).  A table's group_row_bytes raises the
  -- 512-byte limit (AVX2: 1 KiB), its group_row_bytes_tm for token-major
  -- heads only (AVX-512: 1 KiB).
  local pg, group_max = p, V.group_row_bytes or GROUP_ROW_BYTES
  if V.group_row_bytes_tm and k.layout == "token_major" then group_max = V.group_row_bytes_tm end
  if op.group and V.group_unrolled and env.row_bytes <= group_max then pg = row.plan_unrolled(p) or p end
  env.G = (op.group and pg.in_regs and V.name ~= "scalar" and env.row_bytes <= group_max) and GROUP or 1
  -- tables marked pair_groups (AVX2, AVX-512): token-major heads whose counts are
  -- even but not both multiples of G go in chained pairs (`chained`
  -- below) rather than groups of G, the rest head by head, unchained.
  -- Such kernels have no AVX-512 line-frame twin (groups of 4 only,
  -- `use_lf`): off alignment the chained pairs took 0.72-0.83 of the
  -- time of its unchained groups on an Intel Xeon (RESULTS run 27)
  if env.G > 2 and V.pair_groups and k.layout == "token_major" and k.num_heads % 2 == 0
    and k.num_kv_heads % 2 == 0 and (k.num_heads % env.G ~= 0 or k.num_kv_heads % env.G ~= 0) then
    env.G = 2
  end
  -- head-major QK-norm heads stream their rows with a prefetch this many
  -- bytes ahead (qk_norm.c.tpl; not on the scalar table): 2048-token
  -- prefill of 32 + 8 heads on a Zen 3 core (AVX2), ratio to the in-place
  -- pass, bf16 head_dim 64 1.69-1.79 -> 1.19-1.34, 128 1.60-1.66 ->
  -- 1.25-1.46, 256 1.55-1.59 -> 1.43, f32 128 1.34-1.41 -> 1.29-1.34
  -- (bench/RESULTS.md run 25; 4 KiB did as well as 2, 8 or 16 KiB)
  env.hm_pf_bytes = (k.layout == "head_major" and V.name ~= "scalar") and (V.hm_pf_bytes or HM_PF_BYTES) or nil
  -- token-major heads whose counts are multiples of G: one pipeline of
  -- groups per call (qk_norm.c.tpl, `chained`).  The second pass loads
  -- and splits its rows again: keeping the split f32 rows of the next
  -- group in a stack buffer (3 % faster on an Intel Xeon, RESULTS run 7)
  -- measured 2-12 % slower on bf16 decode on a Zen 5 core (run 11)
  env.chained = function(g)
    return g > 1 and k.layout == "token_major" and k.num_heads % g == 0 and k.num_kv_heads % g == 0
  end
  -- long calls: calls of up to group_tokens tokens (STREAM_F32_BYTES of
  -- heads) go in groups of G, longer ones in groups of G_long.  f32 heads
  -- stream (G_long 1): on a Zen 4 core streaming measured 20-28 % faster
  -- in 2048-token token-major prefill (f32 head_dim 64, 128) and 40-75 %
  -- slower in decode; 16-bit heads 35-50 % slower in both (bench/RESULTS.md
  -- run 12).  16-bit heads stay grouped, in groups of at most
  -- LONG_GROUP_BYTES (AVX2, AVX-512: 512, isa/) but at least 2: with
  -- 512-byte heads (head_dim 256) groups of 2 took 2048-token prefill
  -- from 1.2 to 0.8 x the in-place pass (bf16; f16 1.5 -> 1.15) where
  -- decode keeps groups of 4 (13 % faster there; run 14).
  -- Head-major calls the same (run 26, Zen 3, AVX2, 2048-token prefill of
  -- 32 + 8 heads: f32 head_dim 128 1.16-1.34 -> 1.05-1.09 x the in-place
  -- pass, 64 1.07-1.26 -> 0.99-1.09, bf16 256 1.31-1.57 -> 1.14-1.25).
  -- nil: groups of G at every length.  A table's group_f32_bytes moves
  -- the switch for f32 heads (AVX2: 2 MiB).
  if env.G > 1 then
    local most = V.long_group_bytes or LONG_GROUP_BYTES
    local g_long = k.dtype == "f32" and 1 or math.min(env.G, math.max(2, math.floor(most / env.row_bytes)))
    if g_long < env.G then
      env.G_long = g_long
      -- the switch in bytes of heads (group_bytes) and in tokens
      env.group_bytes = k.dtype == "f32" and V.group_f32_bytes or STREAM_F32_BYTES
      local token_bytes = (k.num_heads + k.num_kv_heads) * env.row_bytes
      env.group_tokens = math.max(1, math.floor(env.group_bytes / token_bytes))
    end
  end
  -- groups of 4 whose rows are whole vectors (no scalar tail) finish their
  -- sums and rs together where the table can (V.g4, rms_group.c.tpl)
  env.V4 = env.G == 4 and V.g4 ~= nil
  for _, c in ipairs(pg.chunks or {}) do
    if c.I ~= V then env.V4 = false end
  end
  if env.V4 then env.slow_test4 = V.g4.slow("ssv", k.eps < 2 ^ -100 and "0x1p-60" or nil) end
  -- the group code for groups of g (rms_group.c.tpl): the next group's
  -- sums (no weights in them), then the step per weight set; V4 only for
  -- the groups of 4
  local G, V4 = env.G, env.V4
  -- `ahead2_of(g)`: chained groups of 4 on a table with ahead2_group sum
  -- the group two ahead and start the next group's rs a step early
  -- (rms_group.c.tpl, qk_norm.c.tpl), as `ahead2` does for rows
  env.ahead2_of = function(g) return g == 4 and V4 and env.chained(g) and V.ahead2_group == true end
  -- `pairs_ok`: one-token calls (decode) of such token-major heads go
  -- group after group through Q's heads then K's with two groups' rs in
  -- one vector (V.g4.rs8) and sums four groups ahead (qk_norm.c.tpl),
  -- where Q's head count is a multiple of 2 * 4, so that no pair
  -- straddles Q and K (K's may end on a lone group: 4 KV heads), for
  -- 16-bit heads up to 128 wide and f32 heads of 128.  Decode 40 x 128
  -- on a Zen 5 core (bench/ab.sh, gcc / clang): f32 0.95 / 0.97x the
  -- time, bf16 0.98 / 0.95x, f16 0.99 / 0.98x; 40 x 64 bf16 0.93 /
  -- 0.85x, f16 0.95 / 0.95x, but f32 1.01 / 1.04x; 40 x 256 bf16 1.55x
  -- (four step bodies of about 500 instructions a call, twice the old
  -- code) (bench/RESULTS.md run 52); 32 + 4 x 128 bf16 0.98 / 0.92x,
  -- f32 1.00 / 0.99x (run 53)
  env.pairs_ok = env.ahead2_of(4) and V.g4.rs8 ~= nil and k.layout == "token_major"
    and k.num_heads % 8 == 0 and k.num_kv_heads % 4 == 0
    and k.dim <= 128 and (k.dtype ~= "f32" or k.dim == 128)
  local function render_groups(g)
    env.G, env.V4, env.p = g, V4 and g == 4, pg
    env.ahead2g = env.ahead2_of(g)
    env.part = "sums"
    env["group_sums" .. g] = render(dirs, op.group, env)
    env.group_sums = env["group_sums" .. g]
    env.part = "body"
    for _, rv in ipairs(op.rows) do
      env.w, env.wv, env.rowtext = rv.w, rv.wv, env[rv.key]
      env[rv.key .. "_group" .. g] = render(dirs, op.group, env)
      if env.pairs_ok and g == 4 then
        -- the same step for decode in pairs (qk_norm.c.tpl)
        env.pair_step = true
        env[rv.key .. "_pairs" .. g] = render(dirs, op.group, env)
        env.pair_step = nil
      end
      if V.head_major_groups and k.layout == "head_major" then
        -- head-major heads grouped across heads (qk_norm.c.tpl): the next
        -- group's rows are a head stride apart, not head_dim
        env.nx_stride = rv.key == "row_q" and "q_stride" or "k_stride"
        env[rv.key .. "_across_group" .. g] = render(dirs, op.group, env)
        env.nx_stride = nil
      end
    end
    env.G, env.V4, env.p, env.part, env.group_sums = G, V4, p, nil, nil
  end
  if G > 1 then render_groups(G) end
  if env.G_long and env.G_long > 1 then render_groups(env.G_long) end
  -- tables with stream_reload (AVX-512): token-major calls long enough to
  -- stream their f32 heads (G_long 1) whose register-resident heads take at
  -- least that many bytes get a second body per weight set that loads
  -- each vector twice (row.plan_reload, same bits), for qk_norm.c.tpl to
  -- take on calls of KG_NT_BYTES of heads or more where the runtime says
  -- so (kg_cpu_stream_reload)
  -- (in the table's y2 operations where it has them: isa/avx512.lua)
  if env.G_long == 1 and V.stream_reload and env.row_bytes >= V.stream_reload and k.layout == "token_major" then
    local pr = row.plan_reload(p, k.dtype, V.y2)
    if pr then
      env.p, env.V = pr, pr.V
      for _, rv in ipairs(op.rows) do
        env.w, env.wv = rv.w, rv.wv
        env[rv.key .. "_reload"] = render(dirs, op.row, env)
      end
      env.p, env.V, env.reload = p, V, true
    end
  end
  -- the twin, rendered first, defines the slow path both bodies call
  env.slow_fn = twin_text and "" or render(dirs, op.slow, env)
  env.row_of = function(key) return env[key] end
  env.group_of = function(key, g) return env[key .. "_group" .. g] end
  env.pairs_of = function(key) return env[key .. "_pairs4"] end
  env.sums_of = function(g) return env["group_sums" .. g] end
  -- long calls of bf16 heads as one pipeline (kernels/pipe.lua) where the
  -- runtime says so (kg_cpu_qk_pipe)
  if pipe.applies(V, k, p, env) then
    env.pipe_code = function(pl1) return pipe.code(env, pl1) end
  end
  -- the line-frame twin (kernels/lines.lua) of grouped QK-norm heads or of
  -- streamed RMSNorm rows, for data off cache-line alignment
  local use_lf = op.lines and G == 4 and lines.applies(V, k, pg, V4)
  local use_rows = op.lines_rows and env.row_body_fused ~= nil and lines.applies_rows(V, k, p)
  local slow_fn = env.slow_fn
  if use_lf then env.lf_call, env.slow_fn = lines.call(k, env, names), "" end
  if use_rows then env.lf_call, env.slow_fn = lines.rows_call(k, env, names), "" end
  local text = render(dirs, op.frame, env)
  if use_lf or use_rows then
    -- defined first and with the slow path: the same frame with env.lf
    env.lf, env.lf_call, env.dot_call, env.slow_fn = true, nil, nil, slow_fn
    -- decode in pairs off line alignment for f32 heads only: decode 40 x
    -- 128 at 16 bytes into a line, time B / A, gcc / clang: f32 0.98 /
    -- 0.95-0.96, but bf16 0.98 / 1.045-1.053 and f16 1.00 / 1.05
    env.pairs_ok = env.pairs_ok and k.dtype == "f32"
    env.sym, env.linkage = env.sym .. "_lf", "static __attribute__((noinline)) "
  end
  if use_rows then
    env.lf_text = lines.rms_rows({ V = V, T = env.T, CT = env.CT, p = p, D = env.D, EPS = env.EPS,
      ahead2 = env.ahead2, rounding = k.rounding, slow_test = env.slow_test, slow = env.slow,
      rstd_out = env.rstd_out, rstd_store = env.rstd_store, load_w = load_w })
    text = render(dirs, op.frame, env) .. "\n" .. text
  end
  if use_lf then
    -- its row code (slow groups, leftover rows) reads the weights from
    -- memory, the hoisted ones being in the line frame
    env.G_long, env.group_tokens = nil, nil
    env.p_lf, env.wload_lf = pg, load_w
    env.p = setmetatable({ hoist_w = false }, { __index = p })
    -- chained heads (every one in a group) reach that row code only on
    -- the rare non-finite path: it converts the weights from memory, and
    -- the call stages none but the frame's (staging both sets took 2-3 %
    -- of a 40 x 128 bf16 decode call off alignment on a Zen 4 core)
    if env.chained(G) then
      env.wload, env.stage_code = function(c, ptr) return load_w(c, ptr or "w") end, ""
    end
    for _, rv in ipairs(op.rows) do
      env.w, env.wv = rv.w, rv.wv
      env[rv.key] = render(dirs, op.row, env)
    end
    env.p = p
    render_groups(G)
    text = render(dirs, op.frame, env) .. "\n" .. text
  end
  if twin_text then text = twin_text .. "\n" .. text end
  return text
end

local function banner(spec, tpl)
  return "DO NOT EDIT: generated by kgen " .. util.VERSION .. " from template "
    .. tpl .. ", spec " .. spec.name .. " hash " .. spec.hash
end

local GUARD = {
  avx2 = "defined(__x86_64__) || defined(__i386__)",
  avx512 = "defined(__x86_64__) || defined(__i386__)",
  neon = "defined(__aarch64__)",
}

local function kernel_isas(spec)
  local list = {}
  for _, isa in ipairs(spec.isa) do
    for _, c in ipairs(CPU_ISAS) do
      if c == isa then list[#list + 1] = isa end
    end
  end
  return list
end

-- Why: the variant-table row of one variant (or of the dispatcher).
local function table_row(spec, k, isa, fname)
  local lay = (k.layout == "head_major") and "KG_HEAD_MAJOR" or "KG_TOKEN_MAJOR"
  return string.format('{ "%s", "%s", KG_OP_%s, KG_ISA_%s, KG_%s, KG_ROUND_%s, %s, %s, %s, %s, %s, %s, { .%s = %s } }',
    sym(spec, k, isa ~= "auto" and isa or nil), k.name, k.op:upper(), isa:upper(),
    k.dtype:upper(), k.rounding:upper(), lay, util.int(k.dim),
    util.int(k.num_heads), util.int(k.num_kv_heads), util.f32(k.eps),
    util.f32(k.weight_offset), k.op, fname)
end

-- Why: render every file of the pack; returns { [filename] = contents }.
function M.render(spec, dirs)
  local files = {}
  local isas = kernel_isas(spec)
  for _, k in ipairs(spec.kernels) do
    k.variants = isas
    local d = {}
    for i = #isas, 1, -1 do d[#d + 1] = isas[i] end
    k.dispatch = d
  end
  local env = {
    spec = spec, util = util, SPEC = spec.name:upper(),
    guard = spec.name:upper() .. "_H",
    proto = function(k, isa) return proto(spec, k, isa) end,
  }
  env.banner = banner(spec, "pack.h.tpl")
  -- extension modules (CUDA backend, embedding files) add files and
  -- header declarations through one interface: ext.render(ctx) -> files, decls
  local ctx = { spec = spec, dirs = dirs, util = util, render = function(name, e)
    return render(dirs, name, e) end, banner = function(tpl) return banner(spec, tpl) end,
    proto = function(k, isa) return proto(spec, k, isa) end, signature = signature,
    sym = function(k, isa) return sym(spec, k, isa) end, isas = isas, ctype = CTYPE,
    ops = OPS }
  env.extra_decls = {}
  for _, ext in ipairs(M.EXTENSIONS) do
    local extra, decls = require(ext).render(ctx)
    for f, text in pairs(extra or {}) do files[f] = text end
    for _, d in ipairs(decls or {}) do env.extra_decls[#env.extra_decls + 1] = d end
  end
  files[spec.name .. ".h"] = render(dirs, "pack.h.tpl", env)

  for _, isa in ipairs(isas) do
    local V = isa_table(isa)
    local attr = V.target and ('__attribute__((target("' .. V.target .. '")))') or ""
    local bodies = {}
    for _, k in ipairs(spec.kernels) do
      bodies[#bodies + 1] = kernel_body(dirs, spec, k, V)
    end
    local fenv = { spec = spec, I = V, bodies = bodies, prelude = V.prelude(attr),
      banner = banner(spec, "isa_file.c.tpl + op templates") }
    files[spec.name .. "_" .. isa .. ".c"] = render(dirs, "isa_file.c.tpl", fenv)
  end

  -- dispatcher and variant table
  -- one table row per variant and per dispatcher, each through a
  -- type-erased forwarder (isa nil: the dispatching entry point)
  local entries = {}
  local function entry(k, isa)
    local _, _, _, etyped, casts = signature(k)
    local s = sym(spec, k, isa)
    entries[#entries + 1] = {
      guard = isa and GUARD[isa],
      wrapper = "static void " .. s .. "_v(" .. table.concat(etyped, ", ") .. ")\n{\n  "
        .. s .. "(" .. table.concat(casts, ", ") .. ");\n}",
      row = table_row(spec, k, isa or "auto", s .. "_v"),
    }
  end
  for _, k in ipairs(spec.kernels) do
    for _, isa in ipairs(isas) do entry(k, isa) end
    entry(k, nil)
  end
  local denv = {
    spec = spec, util = util, entries = entries, guards = GUARD,
    banner = banner(spec, "dispatch.c.tpl"),
    proto = function(k, isa) return proto(spec, k, isa) end,
    sigs = function(k)
      local typed, names = signature(k)
      local types = {}
      for _, prm in ipairs(OPS[k.op].params) do
        types[#types + 1] = (prm[1]:gsub("T", CTYPE[k.dtype]))
      end
      return typed, names, table.concat(types, ", ")
    end,
  }
  files[spec.name .. "_dispatch.c"] = render(dirs, "dispatch.c.tpl", denv)

  for _, f in ipairs(RUNTIME_FILES) do
    local src = util.read_file(dirs.runtime .. "/" .. f)
    if not src then error("runtime file not found: " .. f) end
    files[f] = "/* DO NOT EDIT: copied from runtime/" .. f .. " by kgen " .. util.VERSION
      .. " */\n" .. src
  end
  files["manifest.json"] = M.manifest(spec, isas)
  return files
end

-- Why: a machine-readable list of every variant (deterministic key order).
function M.manifest(spec, isas)
  local json = require("dkjson")
  local variants = {}
  local all = {}
  for _, isa in ipairs(isas) do all[#all + 1] = isa end
  for _, isa in ipairs(spec.isa) do
    if isa == "cuda" then all[#all + 1] = isa end
  end
  isas = all
  for _, k in ipairs(spec.kernels) do
    for _, isa in ipairs(isas) do
      variants[#variants + 1] = {
        symbol = sym(spec, k, isa), kernel = k.name, op = k.op, isa = isa,
        dtype = k.dtype, rounding = k.rounding, layout = k.layout, dim = k.dim,
        num_heads = k.num_heads, num_kv_heads = k.num_kv_heads,
        eps = util.f32(k.eps), weight_offset = util.f32(k.weight_offset),
      }
    end
  end
  local doc = {
    ["do_not_edit"] = banner(spec, "manifest"),
    generator = "kgen " .. util.VERSION, name = spec.name, spec_hash = spec.hash,
    isa = isas, variants = variants,
  }
  local keyorder = { "do_not_edit", "generator", "name", "spec_hash", "isa", "variants",
    "symbol", "kernel", "op", "dtype", "rounding", "layout", "dim", "num_heads",
    "num_kv_heads", "eps", "weight_offset" }
  return json.encode(doc, { indent = true, keyorder = keyorder }) .. "\n"
end

return M
