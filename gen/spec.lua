-- spec.lua: load a kernel spec (Lua table file or JSON), validate every
-- field, fill defaults.  Errors are one line: "FILE: FIELD: why, got X".
local util = require("util")

local M = {}

M.OPS = { rmsnorm = true, qk_norm = true, layernorm = true }
M.DTYPES = { f32 = true, bf16 = true, f16 = true }
M.ROUNDINGS = { single = true, hf = true }
M.LAYOUTS = { token_major = true, head_major = true }
-- ISAs this generator can emit, in the order files are written.
M.ISA_ORDER = { "scalar", "avx2", "avx512", "neon", "cuda" }
M.ISAS = {}
for _, n in ipairs(M.ISA_ORDER) do M.ISAS[n] = true end
-- What is implemented; others are refused with a clear message.
M.IMPLEMENTED = { scalar = true, avx2 = true, avx512 = true }

local MAX_DIM = 16384
local MAX_HEADS = 4096

local TOP_KEYS = { "name", "dtype", "isa", "rounding", "kernels" }
local KERNEL_KEYS = {
  rmsnorm = { "op", "name", "dim", "eps", "dtype", "rounding", "weight_offset" },
  layernorm = { "op", "name", "dim", "eps", "dtype", "rounding" },
  qk_norm = { "op", "name", "head_dim", "num_heads", "num_kv_heads", "eps",
              "layout", "dtype", "rounding", "weight_offset" },
}

local function sorted_keys(set)
  local t = {}
  for k in pairs(set) do t[#t + 1] = k end
  table.sort(t)
  return t
end

-- Why: a "did you mean" for typos (edit distance <= 2).
local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = (a:sub(i, i) == b:sub(j, j)) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

local function suggest(word, candidates)
  if type(word) ~= "string" then return "" end
  local best, bd = nil, 3
  for _, c in ipairs(candidates) do
    local d = distance(word:lower(), c)
    if d < bd then best, bd = c, d end
  end
  return best and (" (did you mean " .. best .. "?)") or ""
end

-- Why: one place builds the compiler-style message.
local function bad(file, field, why, got)
  local msg = file .. ": " .. field .. ": " .. why
  if got ~= nil or why:find("must") then msg = msg .. ", got " .. util.show(got) end
  util.fail(msg)
end

local function check_keys(file, prefix, t, allowed)
  local set = {}
  for _, k in ipairs(allowed) do set[k] = true end
  local unknown = {}
  for k in pairs(t) do
    if not set[k] then unknown[#unknown + 1] = k end
  end
  table.sort(unknown, function(a, b) return tostring(a) < tostring(b) end)
  local k = unknown[1]
  if k ~= nil then
    if type(k) ~= "string" then
      bad(file, prefix .. "[" .. util.show(k) .. "]",
          "unexpected list entry; allowed keys: " .. table.concat(allowed, ", "))
    end
    util.fail(file .. ": " .. prefix .. (prefix ~= "" and "." or "") .. k ..
      ": unknown field" .. suggest(k, allowed) ..
      "; allowed: " .. table.concat(allowed, ", "))
  end
end

local function is_int(v)
  return type(v) == "number" and v == v and v == math.floor(v)
    and v > -math.huge and v < math.huge
end

local function int_in(file, field, v, lo, hi)
  if not is_int(v) or v < lo or v > hi then
    bad(file, field, "must be an integer in [" .. lo .. ", " .. hi .. "]", v)
  end
  return v
end

local function one_of(file, field, v, set)
  if type(v) ~= "string" or not set[v] then
    bad(file, field, "must be one of " .. table.concat(sorted_keys(set), ", ")
      .. suggest(v, sorted_keys(set)), v)
  end
  return v
end

local function finite_number(file, field, v, positive)
  if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge
      or (positive and v <= 0) then
    bad(file, field, positive and "must be a finite number > 0"
      or "must be a finite number", v)
  end
  return v
end

local function ident(file, field, v)
  local why = util.c_ident_problem(v)
  if why then bad(file, field, why, v) end
  return v
end

-- Why: f32 eps must stay a positive normal-ish number after rounding.
local function check_eps(file, field, v)
  finite_number(file, field, v, true)
  if v < 1.1754943508222875e-38 or v > 1e4 then
    bad(file, field, "must be in [1.18e-38, 1e4] (a positive normal f32)", v)
  end
  return v
end

local function validate_kernel(file, i, k, top)
  local p = "kernels[" .. i .. "]"
  if type(k) ~= "table" then bad(file, p, "must be a table", k) end
  local op = one_of(file, p .. ".op", k.op, M.OPS)
  check_keys(file, p, k, KERNEL_KEYS[op])
  local out = { op = op }
  out.name = ident(file, p .. ".name", k.name == nil and op or k.name)
  out.dtype = one_of(file, p .. ".dtype", k.dtype == nil and top.dtype or k.dtype, M.DTYPES)
  out.rounding = one_of(file, p .. ".rounding",
    k.rounding == nil and top.rounding or k.rounding, M.ROUNDINGS)
  if op == "layernorm" and out.rounding ~= "single" then
    bad(file, p .. ".rounding", "layernorm supports only \"single\"", out.rounding)
  end
  local default_eps = (op == "layernorm") and 1e-5 or 1e-6
  out.eps = check_eps(file, p .. ".eps", k.eps == nil and default_eps or k.eps)
  if op == "qk_norm" then
    out.dim = int_in(file, p .. ".head_dim", k.head_dim, 1, MAX_DIM)
    out.num_heads = int_in(file, p .. ".num_heads", k.num_heads, 1, MAX_HEADS)
    out.num_kv_heads = int_in(file, p .. ".num_kv_heads",
      k.num_kv_heads == nil and out.num_heads or k.num_kv_heads, 1, MAX_HEADS)
    if out.num_heads % out.num_kv_heads ~= 0 then
      bad(file, p .. ".num_heads", "must be a multiple of num_kv_heads ("
        .. out.num_kv_heads .. ")", out.num_heads)
    end
    out.layout = one_of(file, p .. ".layout",
      k.layout == nil and "token_major" or k.layout, M.LAYOUTS)
  else
    out.dim = int_in(file, p .. ".dim", k.dim, 1, MAX_DIM)
    out.num_heads, out.num_kv_heads, out.layout = 0, 0, "token_major"
  end
  if op ~= "layernorm" then
    out.weight_offset = finite_number(file, p .. ".weight_offset",
      k.weight_offset == nil and 0 or k.weight_offset)
    if math.abs(out.weight_offset) > 1e4 then
      bad(file, p .. ".weight_offset", "must be in [-1e4, 1e4]", out.weight_offset)
    end
  else
    out.weight_offset = 0
  end
  return out
end

local function string_list(file, field, v)
  if type(v) == "string" then v = { v } end
  if type(v) ~= "table" then bad(file, field, "must be a list of strings", v) end
  local n = 0
  for _ in pairs(v) do n = n + 1 end
  if n == 0 or n ~= #v then bad(file, field, "must be a non-empty list", nil) end
  return v
end

-- Why: the single entry point that turns raw data (from Lua, JSON or the
-- command line) into a validated, defaults-filled spec.
function M.validate(raw, file)
  if type(raw) ~= "table" then
    util.fail(file .. ": the spec must be a table (got " .. util.show(raw) .. ")")
  end
  check_keys(file, "", raw, TOP_KEYS)
  local spec = {}
  spec.name = ident(file, "name", raw.name)
  local top = {
    dtype = one_of(file, "dtype", raw.dtype == nil and "f32" or raw.dtype, M.DTYPES),
    rounding = one_of(file, "rounding", raw.rounding == nil and "single" or raw.rounding,
      M.ROUNDINGS),
  }
  spec.dtype, spec.rounding = top.dtype, top.rounding
  local isas = raw.isa
  if isas == nil then
    isas = {}
    for _, n in ipairs(M.ISA_ORDER) do
      if M.IMPLEMENTED[n] then isas[#isas + 1] = n end
    end
  end
  isas = string_list(file, "isa", isas)
  local want = {}
  for j, n in ipairs(isas) do
    local f = "isa[" .. j .. "]"
    one_of(file, f, n, M.ISAS)
    if not M.IMPLEMENTED[n] then
      bad(file, f, "backend not implemented yet; available: "
        .. table.concat(sorted_keys(M.IMPLEMENTED), ", "), n)
    end
    if want[n] then bad(file, f, "is listed twice", n) end
    want[n] = true
  end
  -- scalar is the dispatcher's floor on every CPU: always present
  want.scalar = true
  spec.isa = {}
  for _, n in ipairs(M.ISA_ORDER) do
    if want[n] then spec.isa[#spec.isa + 1] = n end
  end
  if type(raw.kernels) ~= "table" then bad(file, "kernels", "must be a list of kernel tables", raw.kernels) end
  local n = 0
  for _ in pairs(raw.kernels) do n = n + 1 end
  if n == 0 or n ~= #raw.kernels then
    bad(file, "kernels", "must be a non-empty list", nil)
  end
  if n > 4096 then bad(file, "kernels", "must hold at most 4096 kernels", n) end
  spec.kernels = {}
  local seen = {}
  for i, k in ipairs(raw.kernels) do
    local kk = validate_kernel(file, i, k, top)
    if seen[kk.name] then
      bad(file, "kernels[" .. i .. "].name", "duplicate kernel name (also kernels["
        .. seen[kk.name] .. "])", kk.name)
    end
    seen[kk.name] = i
    local sym = spec.name .. "_" .. kk.name
    if #sym + 8 > 96 then
      bad(file, "kernels[" .. i .. "].name", "pack name + kernel name too long for C", kk.name)
    end
    spec.kernels[#spec.kernels + 1] = kk
  end
  spec.hash = util.hash(util.canonical({ name = spec.name, isa = spec.isa,
    kernels = spec.kernels }))
  return spec
end

-- Why: a spec is data.  Load it with an empty environment (no os, io,
-- require, load), text mode only, an instruction budget, and the string
-- metatable detached so ("x"):rep(1e10) cannot be reached.
function M.load_lua(text, file)
  local chunk, err
  local env = {}
  if setfenv then
    if text:byte(1) == 27 then util.fail(file .. ": binary chunks are not allowed") end
    chunk, err = loadstring(text, "=" .. file)
    if chunk then setfenv(chunk, env) end
  else
    chunk, err = load(text, "=" .. file, "t", env)
  end
  if not chunk then
    err = tostring(err):gsub("^%[?string[^:]*:", "")
    util.fail(file .. ":" .. (err:match("^(%d+:.*)$") or (" " .. err)):gsub("\n.*", ""))
  end
  local smt = getmetatable("")
  local saved_index = smt and smt.__index
  if smt then smt.__index = nil end
  local budget_hit = false
  debug.sethook(function()
    budget_hit = true
    error("instruction budget exceeded", 0)
  end, "", 1000000)
  local ok, res = pcall(chunk)
  debug.sethook()
  if smt then smt.__index = saved_index end
  if budget_hit then
    util.fail(file .. ": spec did not finish within 1e6 instructions (a spec is data, not a program)")
  end
  if not ok then
    local msg = tostring(res):gsub("\n.*", "")
    if type(res) ~= "string" then msg = "raised a non-string error" end
    util.fail(file .. ":" .. (msg:match("^[^:]*:(%d+:.*)$") or (" " .. msg)))
  end
  return res
end

-- Why: JSON specs carry the same fields; syntax errors name the line.
function M.load_json(text, file)
  local json = require("dkjson")
  local obj, pos, err = json.decode(text, 1, json.null)
  if err then
    local line = 1
    for _ in text:sub(1, (pos or 1) - 1):gmatch("\n") do line = line + 1 end
    util.fail(file .. ":" .. line .. ": JSON syntax error: " .. tostring(err))
  end
  local function strip(v)
    if v == json.null then return nil end
    if type(v) == "table" then
      local t = {}
      for k, x in pairs(v) do t[k] = strip(x) end
      return t
    end
    return v
  end
  return strip(obj)
end

function M.load_file(path)
  local text, err = util.read_file(path)
  if not text then util.fail(path .. ": cannot read spec: " .. tostring(err)) end
  local raw
  if path:match("%.json$") or text:match("^%s*{") then
    raw = M.load_json(text, path)
  else
    raw = M.load_lua(text, path)
  end
  return M.validate(raw, path)
end

return M
