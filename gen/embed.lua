-- embed.lua: the files that make a pack self-contained for embedding in
-- an ahead-of-time build: Makefile (libNAME.a with the user's CC/CFLAGS,
-- the CUDA object when nvcc is there, install), README.md (the spec, the
-- generator version, the ABI) and NAME.pc (pkg-config, usable in place).
local M = {}

local OP_NOTE = {
  rmsnorm = "- rmsnorm: `y[r][i] = (w[i] + weight_offset) * x[r][i] / sqrt(mean_i x[r][i]^2 + eps)`;"
    .. " `w` is the checkpoint's weight as stored (a Gemma (1 + w) offset is added inside).",
  qk_norm = "- qk_norm: per-head RMSNorm of Q and K, in place; `q_w` (head_dim values) for every"
    .. " Q head, `k_w` for every K head. token_major: element (t, h, d) at"
    .. " `q[t*q_stride + h*head_dim + d]`, so it runs in place on a fused QKV buffer"
    .. " (`k = q + num_heads*head_dim`, both strides the QKV row length) and never touches V;"
    .. " head_major: `q[h*q_stride + t*head_dim + d]`.",
  layernorm = "- layernorm: `y = gamma * (x - mean) / sqrt(var + eps) + beta`, per row.",
}

local function has(list, v)
  for _, x in ipairs(list) do
    if x == v then return true end
  end
  return false
end

-- Why: ops/dtypes in first-use order, for the .pc description.
local function uniq(spec, field)
  local seen, out = {}, {}
  for _, k in ipairs(spec.kernels) do
    if not seen[k[field]] then
      seen[k[field]] = true
      out[#out + 1] = k[field]
    end
  end
  return out
end

function M.render(ctx)
  local spec, util = ctx.spec, ctx.util
  local N = spec.name
  local cuda = has(spec.isa, "cuda")
  local isas = {}
  for _, i in ipairs(ctx.isas) do isas[#isas + 1] = i end
  if cuda then isas[#isas + 1] = "cuda" end

  local rows, protos, cuda_protos, notes, seen_op = {}, {}, {}, {}, {}
  for _, k in ipairs(spec.kernels) do
    local shape
    if k.op == "qk_norm" then
      shape = string.format("head_dim %d, heads %d Q / %d KV, %s", k.dim, k.num_heads,
        k.num_kv_heads, k.layout)
    else
      shape = string.format("dim %d", k.dim)
    end
    rows[#rows + 1] = { name = k.name, fn = ctx.sym(k, nil), op = k.op, dtype = k.dtype,
      shape = shape, eps = require("hf").number(k.eps),
      offset = require("hf").number(k.weight_offset or 0), rounding = k.rounding }
    protos[#protos + 1] = ctx.proto(k, nil)
    if cuda then
      cuda_protos[#cuda_protos + 1] = "int " .. ctx.sym(k, "cuda") .. "(" .. ctx.signature(k)
        .. ", void *stream)"
    end
    if not seen_op[k.op] then
      seen_op[k.op] = true
      notes[#notes + 1] = OP_NOTE[k.op]
    end
  end

  local c_files = {}
  for _, i in ipairs(ctx.isas) do c_files[#c_files + 1] = "`" .. N .. "_" .. i .. ".c`" end
  c_files[#c_files + 1] = "`" .. N .. "_dispatch.c`"

  local env = {
    N = N, U = N:upper(), spec = spec, cuda = cuda, version = util.VERSION,
    ops = table.concat(uniq(spec, "op"), ", "), dtypes = table.concat(uniq(spec, "dtype"), ", "),
    isas = table.concat(isas, " "),
    cpu_isas = table.concat(ctx.isas, ", "),
    rows = rows, protos = protos, cuda_protos = cuda_protos, op_notes = notes,
    c_files = table.concat(c_files, ", "),
  }
  -- the spec as a file kgen reads back to the same hash; should a field
  -- exist that the writer does not know yet, show the canonical form
  local ok, text = pcall(require("hf").to_lua, spec, {})
  env.spec_lua = ok and text or ("-- canonical form (kgen --print-spec)\n"
    .. util.canonical(spec) .. "\n")
  local files = {}
  env.banner = ctx.banner("embed/Makefile.tpl")
  files["Makefile"] = ctx.render("embed/Makefile.tpl", env)
  env.banner = ctx.banner("embed/README.md.tpl")
  files["README.md"] = ctx.render("embed/README.md.tpl", env)
  env.banner = ctx.banner("embed/pack.pc.tpl")
  files[N .. ".pc"] = ctx.render("embed/pack.pc.tpl", env)
  return files, {}
end

return M
