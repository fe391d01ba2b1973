-- hf.lua: derive a kernel spec from a Hugging Face config.json (kgen --hf),
-- and write a validated spec back out as a Lua spec file (--emit-spec, the
-- pack README).  Errors are one line naming the config field, exit 2.
local util = require("util")

local M = {}

local MAX_DIM = 16384
local MAX_HEADS = 4096

-- What each supported model_type needs.  norm: the op over the hidden size;
-- qk: per-head q/k RMSNorm too; offset: the weight offset of the RMSNorms
-- ((1 + w) in the Gemma family); dim/eps: the config fields (first name is
-- the one published configs use, later ones are aliases); nested: the
-- language model's fields live in text_config; defaults: fields that
-- published configs leave out, filled with the transformers class defaults.
local RMS = { norm = "rmsnorm", dim = { "hidden_size" }, eps = { "rms_norm_eps" }, offset = 0 }
local QWEN3 = { norm = "rmsnorm", qk = true, dim = { "hidden_size" }, eps = { "rms_norm_eps" },
  offset = 0 }
local GEMMA = { norm = "rmsnorm", dim = { "hidden_size" }, eps = { "rms_norm_eps" }, offset = 1 }
local GEMMA3_DEFAULTS = { num_attention_heads = 8, num_key_value_heads = 4, head_dim = 256,
  rms_norm_eps = 1e-6 }
local GEMMA3 = { norm = "rmsnorm", qk = true, dim = { "hidden_size" }, eps = { "rms_norm_eps" },
  offset = 1, defaults = GEMMA3_DEFAULTS, class = "Gemma3TextConfig" }
local GEMMA3_MM = { norm = "rmsnorm", qk = true, dim = { "hidden_size" }, eps = { "rms_norm_eps" },
  offset = 1, defaults = GEMMA3_DEFAULTS, class = "Gemma3TextConfig", nested = "text_config" }
local GPT2 = { norm = "layernorm", dim = { "n_embd", "hidden_size" },
  eps = { "layer_norm_epsilon" } }
local BERT = { norm = "layernorm", dim = { "hidden_size" }, eps = { "layer_norm_eps" } }

M.FAMILIES = {
  qwen3 = QWEN3, qwen3_moe = QWEN3,
  llama = RMS, mistral = RMS, mixtral = RMS, qwen2 = RMS, qwen2_moe = RMS, phi3 = RMS,
  gemma = GEMMA, gemma2 = GEMMA, gemma3_text = GEMMA3, gemma3 = GEMMA3_MM,
  gpt2 = GPT2, gptj = GPT2,
  bert = BERT, roberta = BERT, ["xlm-roberta"] = BERT, camembert = BERT, mpnet = BERT,
  ernie = BERT, ["megatron-bert"] = BERT, ["data2vec-text"] = BERT, gpt_neox = BERT,
}

local function supported()
  local t = {}
  for k in pairs(M.FAMILIES) do t[#t + 1] = k end
  table.sort(t)
  return table.concat(t, ", ")
end

local DTYPE = { bfloat16 = "bf16", float16 = "f16", float32 = "f32" }


local function is_int(v)
  return type(v) == "number" and v == v and v == math.floor(v)
    and v > -math.huge and v < math.huge
end

-- Why: one lookup that knows the field's aliases, the nested text_config,
-- the documented defaults, and reports contradictions between aliases.
local function getter(file, cfg, fam, mt, note)
  local src = cfg
  local prefix = ""
  if fam.nested then
    src = cfg[fam.nested]
    prefix = fam.nested .. "."
    if type(src) ~= "table" then
      util.fail(file .. ": " .. fam.nested .. ": missing (model_type " .. mt
        .. " keeps the language model's fields there)")
    end
  end
  local function get(names, required)
    local found, fname
    for _, n in ipairs(names) do
      local v = src[n]
      if v ~= nil then
        if found ~= nil and v ~= found then
          util.fail(file .. ": " .. prefix .. n .. ": " .. util.show(v) .. " contradicts "
            .. prefix .. fname .. " (" .. util.show(found) .. ")")
        end
        if found == nil then found, fname = v, n end
      end
    end
    if found ~= nil then return found, prefix .. fname end
    local d = fam.defaults and fam.defaults[names[1]]
    if d ~= nil then
      note(file .. ": " .. prefix .. names[1] .. " absent: using the transformers "
        .. fam.class .. " default " .. M.number(d))
      return d, prefix .. names[1]
    end
    if required then
      util.fail(file .. ": " .. prefix .. names[1] .. ": missing (model_type " .. mt
        .. " needs it)")
    end
    return nil, prefix .. names[1]
  end
  return get, prefix
end

local function int_field(file, field, v, hi)
  if not is_int(v) or v < 1 then
    util.fail(file .. ": " .. field .. ": must be a positive integer, got " .. util.show(v))
  end
  if v > hi then
    util.fail(file .. ": " .. field .. ": " .. util.show(v) .. " is more than kgen supports ("
      .. hi .. ")")
  end
  -- an integer subtype on Lua 5.4 (JSON "4096.0", or hidden / heads), so
  -- every later format is the same on LuaJIT and Lua 5.4
  return math.floor(v)
end

local function eps_field(file, field, v)
  if type(v) ~= "number" or v ~= v or v <= 0 or v == math.huge then
    util.fail(file .. ": " .. field .. ": must be a finite number > 0, got " .. util.show(v))
  end
  if v < 1.1754943508222875e-38 or v > 1e4 then
    util.fail(file .. ": " .. field .. ": must be in [1.18e-38, 1e4] (a positive normal f32), got "
      .. util.show(v))
  end
  return v
end

-- Why: torch_dtype (older configs) and dtype (transformers >= 4.56) mean
-- the same; absent means float32, as in transformers.
local function dtype_field(file, cfg, fam)
  local where = { cfg }
  if fam.nested and type(cfg[fam.nested]) == "table" then
    table.insert(where, 1, cfg[fam.nested])
  end
  for _, src in ipairs(where) do
    local a, b = src.torch_dtype, src.dtype
    local prefix = (src == cfg) and "" or (fam.nested .. ".")
    if a ~= nil and b ~= nil and a ~= b then
      util.fail(file .. ": " .. prefix .. "dtype: " .. util.show(b) .. " contradicts " .. prefix
        .. "torch_dtype (" .. util.show(a) .. ")")
    end
    local v, field = a, prefix .. "torch_dtype"
    if v == nil then v, field = b, prefix .. "dtype" end
    if v ~= nil then
      if type(v) == "string" then v = v:gsub("^torch%.", "") end
      if not DTYPE[v] then
        util.fail(file .. ": " .. field .. ": must be one of bfloat16, float16, float32, got "
          .. util.show(v))
      end
      return DTYPE[v], field
    end
  end
  return "f32", nil
end

-- Why: pack names are C identifiers; model names are not ("Qwen3-0.6B").
function M.sanitize(s)
  if type(s) ~= "string" then return nil end
  s = s:lower():gsub("[^a-z0-9]+", "_"):gsub("^_+", ""):gsub("_+$", "")
  if s == "" then return nil end
  if s:match("^%d") then s = "m_" .. s end
  if #s > 40 then s = s:sub(1, 40):gsub("_+$", "") end
  if util.c_ident_problem(s) then s = s .. "_m" end
  if util.c_ident_problem(s) then return nil end
  return s
end

-- Why: a useful default name without asking: _name_or_path, else the file
-- name ("qwen3-8b.json"), else its folder ("Qwen3-8B/config.json", also the
-- Hugging Face cache layout models--ORG--NAME/snapshots/HASH/config.json),
-- else the model_type.
function M.derive_name(cfg, path, mt)
  local cands = {}
  local function add(v, why)
    local s = M.sanitize(v)
    if s then cands[#cands + 1] = { s, why } end
  end
  if type(cfg._name_or_path) == "string" then
    add(cfg._name_or_path:gsub("[/\\]+$", ""):match("([^/\\]*)$"), "_name_or_path")
  end
  local parts = {}
  for p in path:gmatch("[^/\\]+") do parts[#parts + 1] = p end
  local base = table.remove(parts) or ""
  local stem = base:gsub("%.json$", ""):gsub("[._-]config$", "")
  if stem ~= "config" then add(stem, "the file name") end
  local n = #parts
  if n >= 3 and parts[n]:match("^%x+$") and #parts[n] >= 7 and parts[n - 1] == "snapshots"
      and parts[n - 2]:match("^models%-%-") then
    add(parts[n - 2]:gsub("^models%-%-[^-]+%-%-", ""):gsub("^models%-%-", ""),
      "the Hugging Face cache folder")
  elseif n >= 1 and parts[n] ~= "." and parts[n] ~= ".." then
    add(parts[n], "the folder name")
  end
  add(mt, "model_type")
  if cands[1] then return cands[1][1], cands[1][2] end
  return "model", "nothing usable"
end

-- Options that describe a command-line kernel and make no sense with --hf.
local NOT_WITH_HF = { { "op", "--op" }, { "kernel_name", "--kernel-name" }, { "dim", "--dim" },
  { "head_dim", "--head-dim" }, { "num_heads", "--num-heads" },
  { "num_kv_heads", "--num-kv-heads" }, { "eps", "--eps" }, { "layout", "--layout" },
  { "weight_offset", "--weight-offset" } }

-- Why: the model's needs as a raw spec table (then validated like a file).
-- cfg: the decoded config.json; opts: name, isa (comma list), dtype,
-- rounding overrides.  Returns the raw spec and a summary for comments.
function M.derive(cfg, file, opts)
  opts = opts or {}
  if type(cfg) ~= "table" or cfg[1] ~= nil then
    util.fail(file .. ": must be a JSON object (a model's config.json)")
  end
  local mt = cfg.model_type
  if mt == nil then
    util.fail(file .. ": model_type: missing; supported: " .. supported())
  end
  local fam = type(mt) == "string" and M.FAMILIES[mt]
  if not fam then
    util.fail(file .. ": model_type: " .. util.show(mt) .. " is not supported; supported: "
      .. supported())
  end
  local notes = {}
  local function note(msg) notes[#notes + 1] = msg end
  local get, prefix = getter(file, cfg, fam, mt, note)
  local used = {}
  local function record(field, v) used[#used + 1] = { field, v } end

  local dim, dim_field = get(fam.dim, true)
  dim = int_field(file, dim_field, dim, MAX_DIM)
  record(dim_field, dim)
  local eps, eps_name = get(fam.eps, true)
  eps_field(file, eps_name, eps)
  record(eps_name, eps)
  local dtype, dtype_name = dtype_field(file, cfg, fam)
  if dtype_name then
    record(dtype_name, (dtype == "bf16") and "bfloat16" or (dtype == "f16") and "float16"
      or "float32")
  end

  local kernels = {}
  local k1 = { op = fam.norm, dim = dim, eps = eps }
  if fam.offset and fam.offset ~= 0 then k1.weight_offset = fam.offset end
  kernels[1] = k1
  if fam.qk then
    local heads, heads_field = get({ "num_attention_heads" }, true)
    heads = int_field(file, heads_field, heads, MAX_HEADS)
    local kv, kv_field = get({ "num_key_value_heads" }, false)
    if kv == nil then
      note(file .. ": " .. kv_field .. " absent: using num_attention_heads (" .. util.int(heads)
        .. "), as transformers does")
      kv = heads
    end
    kv = int_field(file, kv_field, kv, MAX_HEADS)
    if heads % kv ~= 0 then
      util.fail(file .. ": " .. kv_field .. ": must divide " .. heads_field .. " ("
        .. util.int(heads) .. "), got " .. util.show(kv))
    end
    local hd, hd_field = get({ "head_dim" }, false)
    if hd == nil then
      if dim % heads ~= 0 then
        util.fail(file .. ": " .. hd_field .. ": missing, and " .. dim_field .. " ("
          .. util.int(dim) .. ") is not a multiple of " .. heads_field .. " ("
          .. util.int(heads) .. ")")
      end
      hd = dim / heads
      hd_field = dim_field .. " / " .. heads_field
    end
    hd = int_field(file, hd_field, hd, MAX_DIM)
    record(heads_field, heads)
    record(kv_field, kv)
    record(hd_field, hd)
    local k2 = { op = "qk_norm", head_dim = hd, num_heads = heads, num_kv_heads = kv,
      eps = eps, layout = "token_major" }
    if fam.offset and fam.offset ~= 0 then k2.weight_offset = fam.offset end
    kernels[2] = k2
  end

  local name = opts.name
  if name == nil then name = M.derive_name(cfg, file, mt) end
  local raw = { name = name, dtype = dtype, kernels = kernels }
  if opts.dtype ~= nil then raw.dtype = opts.dtype end
  if opts.rounding ~= nil then raw.rounding = opts.rounding end
  if opts.isa ~= nil then
    raw.isa = {}
    for n in opts.isa:gmatch("[^,%s]+") do raw.isa[#raw.isa + 1] = n end
  end
  local arch = cfg.architectures
  local info = { model_type = mt, used = used, prefix = prefix, notes = notes,
    architecture = type(arch) == "table" and type(arch[1]) == "string" and arch[1] or nil }
  return raw, info
end

-- Why: the --hf entry point: read, decode, derive, validate.  a: the
-- parsed command line.  Returns the validated spec and the derivation
-- summary (for the emitted spec's comment).
function M.load_file(path, a)
  a = a or {}
  if a.spec then util.fail("kgen: give either a spec file or --hf, not both") end
  for _, o in ipairs(NOT_WITH_HF) do
    if a[o[1]] ~= nil then
      util.fail("kgen: " .. o[2] .. " does not apply with --hf (the config gives the shapes;"
        .. " write the spec with --emit-spec and edit it)")
    end
  end
  local S = require("spec")
  -- the overrides are checked as the command line's, before the config
  if a.name ~= nil then
    local problem = util.c_ident_problem(a.name)
    if problem then util.fail("command line: --name: " .. problem .. ", got " .. util.show(a.name)) end
  end
  local isa
  if a.isa ~= nil then
    isa = {}
    for n in a.isa:gmatch("[^,%s]+") do isa[#isa + 1] = n end
  end
  S.validate({ name = "x", dtype = a.dtype, rounding = a.rounding, isa = isa,
    kernels = { { op = "rmsnorm", dim = 1 } } }, "command line")
  local text, err = util.read_file(path)
  if not text then util.fail(path .. ": cannot read config: " .. tostring(err)) end
  local cfg = S.load_json(text, path)
  local raw, info = M.derive(cfg, path, { name = a.name, isa = a.isa, dtype = a.dtype,
    rounding = a.rounding })
  local spec = S.validate(raw, path .. " (derived spec)")
  -- only now, when the spec stands: what was filled in for the config
  for _, n in ipairs(info.notes) do io.stderr:write("kgen: note: ", n, "\n") end
  return spec, info
end

-- Why: the shortest decimal that reads back as the same double (%.15g,
-- else more digits); integers without a fraction.  printf-based, so LuaJIT
-- and Lua 5.4 write the same text.
function M.number(x)
  if x == math.floor(x) and math.abs(x) < 2 ^ 53 then return string.format("%d", x) end
  for p = 15, 17 do
    local s = string.format("%." .. p .. "g", x)
    if tonumber(s) == x then return s end
  end
  return string.format("%.17g", x)
end

local function default_isas()
  local S = require("spec")
  local t = {}
  for _, n in ipairs(S.ISA_ORDER) do
    if S.IMPLEMENTED[n] then t[#t + 1] = n end
  end
  return table.concat(t, ",")
end

-- Why: lines of "key = value" items wrapped at 78 columns.
local function wrap(indent, open, items, close, out)
  local line = indent .. open
  local first = true
  for i, it in ipairs(items) do
    local piece = it .. ((i < #items) and "," or "")
    local cand = line .. (first and " " or " ") .. piece
    if not first and #cand + #close > 78 then
      out[#out + 1] = line
      line = indent .. "  " .. piece
    else
      line = cand
    end
    first = false
  end
  out[#out + 1] = line .. " " .. close
end

-- Why: a validated spec written back as a Lua spec file that kgen reads to
-- the same hash (so the same pack).  Defaults are left out; comment: a list
-- of lines to put on top.
function M.to_lua(spec, comment)
  local out = {}
  for _, c in ipairs(comment or {}) do
    out[#out + 1] = (c == "") and "--" or ("-- " .. c)
  end
  out[#out + 1] = "return {"
  out[#out + 1] = string.format("  name = %q,", spec.name)
  out[#out + 1] = string.format("  dtype = %q,", spec.dtype)
  if spec.rounding ~= "single" then
    out[#out + 1] = string.format("  rounding = %q,", spec.rounding)
  end
  if table.concat(spec.isa, ",") ~= default_isas() then
    local q = {}
    for _, n in ipairs(spec.isa) do q[#q + 1] = string.format("%q", n) end
    out[#out + 1] = "  isa = { " .. table.concat(q, ", ") .. " },"
  end
  out[#out + 1] = "  kernels = {"
  for _, k in ipairs(spec.kernels) do
    local it = { string.format("op = %q", k.op) }
    if k.name ~= k.op then it[#it + 1] = string.format("name = %q", k.name) end
    if k.op == "qk_norm" then
      it[#it + 1] = "head_dim = " .. M.number(k.dim)
      it[#it + 1] = "num_heads = " .. M.number(k.num_heads)
      it[#it + 1] = "num_kv_heads = " .. M.number(k.num_kv_heads)
    else
      it[#it + 1] = "dim = " .. M.number(k.dim)
    end
    it[#it + 1] = "eps = " .. M.number(k.eps)
    if k.weight_offset and k.weight_offset ~= 0 then
      it[#it + 1] = "weight_offset = " .. M.number(k.weight_offset)
    end
    if k.op == "qk_norm" then it[#it + 1] = string.format("layout = %q", k.layout) end
    if k.dtype ~= spec.dtype then it[#it + 1] = string.format("dtype = %q", k.dtype) end
    if k.rounding ~= spec.rounding then
      it[#it + 1] = string.format("rounding = %q", k.rounding)
    end
    wrap("    ", "{", it, "},", out)
  end
  out[#out + 1] = "  },"
  out[#out + 1] = "}"
  local text = table.concat(out, "\n") .. "\n"
  -- the promise: reading it back gives the same spec (same hash, same pack)
  local S = require("spec")
  local again = S.validate(S.load_lua(text, "emitted spec"), "emitted spec")
  if again.hash ~= spec.hash then
    error("emitted spec does not read back to the same hash (" .. again.hash .. " vs "
      .. spec.hash .. ")")
  end
  return text
end

-- Why: atoms (words, or "field value" pairs that must not be split) wrapped
-- into comment lines of at most 76 columns; indent starts every line.
local function wrap_atoms(atoms, indent, out)
  local line = ""
  for _, w in ipairs(atoms) do
    if line ~= "" and #line + 1 + #w > 76 - 3 then
      out[#out + 1] = line
      line = indent .. w
    else
      line = (line == "") and (indent .. w) or (line .. " " .. w)
    end
  end
  if line ~= "" then out[#out + 1] = line end
end

-- Why: the comment on top of a spec derived from a config.json: where each
-- number came from, so a reader can check it against the model card.
function M.comment(spec, info)
  local c = {}
  local head = {}
  for w in (spec.name .. ": the kernels of a Hugging Face model, derived by kgen --hf from"
      .. " its config.json (model_type " .. info.model_type
      .. (info.architecture and (", " .. info.architecture) or "") .. "):"):gmatch("%S+") do
    head[#head + 1] = w
  end
  wrap_atoms(head, "", c)
  local parts = {}
  for i, u in ipairs(info.used) do
    local v = u[2]
    parts[#parts + 1] = u[1] .. " " .. (type(v) == "number" and M.number(v) or v)
      .. ((i < #info.used) and "," or ".")
  end
  wrap_atoms(parts, "  ", c)
  c[#c + 1] = "Edit freely; generate with: kgen THIS_FILE -o out"
  return c
end

-- Why: --emit-spec FILE ('-' = stdout); written through a temp file and a
-- rename so a failure leaves an existing FILE untouched.
function M.write_spec(spec, info, path)
  local comment = info and M.comment(spec, info)
    or { spec.name .. ": a kgen spec (written by kgen --emit-spec).",
         "Edit freely; generate with: kgen THIS_FILE -o out" }
  local text = M.to_lua(spec, comment)
  if path == "-" then
    io.write(text)
    return
  end
  local tmp = path .. ".tmp"
  local h, err = io.open(tmp, "wb")
  if not h then
    util.fail(path .. ": cannot write spec: " .. tostring(err):gsub("^.*: ", ""))
  end
  local ok, werr = h:write(text)
  local cok = h:close()
  if not ok or not cok then
    os.remove(tmp)
    util.fail(path .. ": cannot write spec: " .. tostring(werr))
  end
  local rok, rerr = os.rename(tmp, path)
  if not rok then
    os.remove(tmp)
    util.fail(path .. ": cannot write spec: " .. tostring(rerr))
  end
end

return M
