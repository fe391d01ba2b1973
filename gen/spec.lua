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
M.IMPLEMENTED = { scalar = true, avx2 = true, avx512 = true, neon = true, cuda = true }

local MAX_DIM = 16384
local MAX_HEADS = 4096

local TOP_KEYS = { "name", "dtype", "isa", "rounding", "kernels" }
local KERNEL_KEYS = {
  rmsnorm = { "op", "name", "dim", "eps", "dtype", "rounding", "weight_offset" },
  layernorm = { "op", "name", "dim", "eps", "dtype", "rounding" },
  qk_norm = { "op", "name", "head_dim", "num_heads", "num_kv_heads", "eps",
              "layout", "dtype", "rounding", "weight_offset" },
}

-- Kernel names that would repeat a pack-level C name (NAME_variants,
-- NAME_num_variants, NAME_H, NAME_KGEN_VERSION, NAME_SPEC_HASH).
local RESERVED_KERNEL_NAMES = { variants = true, num_variants = true, h = true,
  kgen_version = true, spec_hash = true }

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
  if n == 0 or n ~= #v then bad(file, field, "must be a non-empty list", v) end
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
  if spec.name:lower() == "kg" or spec.name:lower():sub(1, 3) == "kg_" then
    bad(file, "name", "must not be kg or begin with kg_ (the runtime's C names and files)", spec.name)
  end
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
    bad(file, "kernels", "must be a non-empty list", raw.kernels)
  end
  if n > 4096 then bad(file, "kernels", "must hold at most 4096 kernels", n) end
  spec.kernels = {}
  -- Why: every C name of kernel K begins NAME_K_ (variants, helpers) or
  -- NAME_K_ upper-cased (macros); names that are equal up to case, or one
  -- extending another by "_", would declare the same C name twice.
  local seen, prefixes = {}, {}
  for i, k in ipairs(raw.kernels) do
    local kk = validate_kernel(file, i, k, top)
    local f, low = "kernels[" .. i .. "].name", kk.name:lower()
    if RESERVED_KERNEL_NAMES[low] then
      bad(file, f, "must not be " .. low .. " (a C name of the pack itself)", kk.name)
    end
    local j = seen[low]
    if j then
      bad(file, f, "duplicate kernel name (also kernels[" .. j .. "]"
        .. (spec.kernels[j].name ~= kk.name and ", up to case" or "") .. ")", kk.name)
    end
    j = prefixes[low]
    for p in low:gmatch("()_") do j = j or seen[low:sub(1, p - 1)] end
    if j then
      bad(file, f, "clashes with kernels[" .. j .. "] (" .. util.show(spec.kernels[j].name)
        .. "): no kernel name may be another's plus \"_...\" (their C names would collide)", kk.name)
    end
    seen[low] = i
    for p in low:gmatch("()_") do prefixes[low:sub(1, p - 1)] = prefixes[low:sub(1, p - 1)] or i end
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

-- Limits of a spec, which is data: its size, the work and memory its Lua
-- may spend, and how deeply a JSON spec may nest.
local MAX_SPEC_BYTES = 256 * 1024
local STEP_BUDGET = 1000000
local MEM_BUDGET_KB = 4096
local MAX_JSON_DEPTH = 32

-- Why: LuaJIT and Lua 5.4 word some errors differently; an error line must
-- be the same bytes on both, so keep only the words they share
-- ("attempt to index a nil value", never which variable it was).
local function lua_message(msg)
  msg = msg:gsub("\n.*", "")
  msg = msg:gsub("'<eof>'", "<eof>")
  msg = msg:gsub("(attempt to [%a ]-) %a+ '[^']*' %(a (%a+) value%)", "%1 a %2 value")
  msg = msg:gsub(" %(%a+ '[^']*'%)$", "")
  return msg
end

-- Why: one message per way a spec can run away, the same on both Luas
-- (where one runs out of stack the other may run out of memory first).
local function runaway(file, msg, parsing)
  local deep = msg:find("stack overflow", 1, true) or msg:find("too many syntax levels", 1, true)
    or msg:find("C levels", 1, true)
  if parsing and deep then
    util.fail(file .. ": spec nests too deeply for the Lua parser")
  end
  if deep or msg:find("not enough memory", 1, true) or msg:find("string length overflow", 1, true) then
    util.fail(file .. ": spec used more than " .. util.int(MEM_BUDGET_KB / 1024)
      .. " MiB of memory or recursed too deeply (a spec is data, not a program)")
  end
end

-- Why: a spec must mean the same on LuaJIT and Lua 5.4, and each parser
-- takes things the other refuses (5.4's // and bitwise operators and
-- <const>, LuaJIT's 64LL literals and non-ASCII names), while integer
-- literals beyond 2^53 are exact in one and rounded in the other.  A
-- small scan over the tokens (strings and comments skipped) refuses them
-- on both, before either parser runs.  Returns line, why or nil.
local function lines_in(s)
  local n = 0
  for _ in s:gmatch("\n") do n = n + 1 end
  return n
end

local function number_problem(tok)
  local hex = tok:match("^0[xX]")
  local body, int
  if hex then
    body = tok:match("^0[xX](%x*%.?%x*)$") or tok:match("^0[xX](%x*%.?%x*)[pP][-+]?%d+$")
    int = tok:match("^0[xX]%x+$")
  else
    body = tok:match("^(%d*%.?%d*)$") or tok:match("^(%d*%.?%d*)[eE][-+]?%d+$")
    int = tok:match("^%d+$")
  end
  if not body or not body:find("%x") then return "malformed number near '" .. tok .. "'" end
  if int then
    local v, base = 0, hex and 16 or 10
    for d in tok:sub(hex and 3 or 1):gmatch("%x") do
      v = v * base + tonumber(d, 16)
      if v >= 2 ^ 53 then
        return "integer " .. tok .. " is beyond 2^53 (not exact in both LuaJIT and Lua 5.4)"
      end
    end
  end
  return nil
end

local function lua_subset_problem(text)
  local i, n, line = 1, #text, 1
  while i <= n do
    local c = text:sub(i, i)
    local long = text:match("^%-%-%[(=*)%[", i) or (c == "[" and text:match("^%[(=*)%[", i))
    if c == "\n" then
      line, i = line + 1, i + 1
    elseif long then
      local open = text:find("[", i, true)
      local _, e = text:find("]" .. long .. "]", open + #long + 2, true)
      e = e or n
      line, i = line + lines_in(text:sub(i, e)), e + 1
    elseif text:find("^%-%-", i) then
      i = text:find("\n", i, true) or (n + 1)
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n do
        local d = text:sub(j, j)
        if d == "\\" then
          if text:sub(j + 1, j + 1) == "\n" then line = line + 1 end
          j = j + 2
        elseif d == c or d == "\n" then
          break
        else
          j = j + 1
        end
      end
      i = j + (text:sub(j, j) == c and 1 or 0)
    elseif c:find("^%d") or text:find("^%.%d", i) then
      local expo = text:find("^0[xX]", i) and "[pP]" or "[eE]"
      local j = i
      while j <= n do
        local d = text:sub(j, j)
        if d:find(expo) then
          j = j + 1
          if text:sub(j, j):find("^[-+]") then j = j + 1 end
        elseif d:find("^[%w_%.]") then
          j = j + 1
        else
          break
        end
      end
      local why = number_problem(text:sub(i, j - 1))
      if why then return line, why end
      i = j
    elseif c:find("^[%a_]") then
      i = text:find("[^%w_]", i) or (n + 1)
    elseif c:byte() >= 128 then
      return line, "a non-ASCII character outside a string (names are ASCII in Lua)"
    else
      local op = text:match("^//", i) or text:match("^<<", i) or text:match("^>>", i)
        or text:match("^[&|]", i) or (text:match("^~[^=]", i) and "~")
        or (text:match("^<%s*const%s*>", i) and "<const>") or (text:match("^<%s*close%s*>", i) and "<close>")
      if op then
        return line, "'" .. op .. "' is Lua 5.4 only (a spec must mean the same in LuaJIT and Lua 5.4)"
      end
      i = i + 1
    end
  end
  return nil
end

-- Why: a spec is data.  Load it as text only, with an empty environment
-- whose every global read is an error (no os, io, require, load, string,
-- getmetatable), no string methods (("x"):rep(1e10) is unreachable), no JIT
-- (so that the hook sees every instruction), and a budget of instructions
-- and memory checked on every instruction.
function M.load_lua(text, file)
  if text:byte(1) == 27 then util.fail(file .. ": binary chunks are not allowed") end
  local bad_line, problem = lua_subset_problem(text)
  if bad_line then util.fail(file .. ":" .. bad_line .. ": " .. problem) end
  local env = setmetatable({}, { __index = function(_, key)
    local what = (type(key) == "string" and string.match(key, "^[%a_][%w_]*$")) and key or "that name"
    error(what .. " is not available in a spec (a spec is data, not a program)", 2)
  end })
  -- pcall resets any outer message handler, so a parser error stays a string
  local lok, chunk, err
  if setfenv then
    lok, chunk, err = pcall(loadstring, text, "=spec")
    if lok and chunk then setfenv(chunk, env) end
  else
    lok, chunk, err = pcall(load, text, "=spec", "t", env)
  end
  if not lok then chunk, err = nil, chunk end
  if not chunk then
    err = lua_message(type(err) == "string" and err or "cannot parse")
    runaway(file, err, true)
    local line, why = err:match("^spec:(%d+): (.*)$")
    util.fail(file .. (line and (":" .. line .. ": " .. why) or (": " .. err)))
  end
  local jit = rawget(_G, "jit")
  if jit then jit.off(chunk, true) end
  local smt = getmetatable("")
  local saved_index = smt and smt.__index
  if smt then
    smt.__index = function()
      error("strings have no methods in a spec (a spec is data, not a program)", 2)
    end
  end
  local steps, limit = 0, collectgarbage("count") + MEM_BUDGET_KB
  local hit
  debug.sethook(function()
    steps = steps + 1
    if steps > STEP_BUDGET then
      hit = "steps"
      debug.sethook()
      error("instruction budget exceeded", 0)
    end
    if collectgarbage("count") > limit then
      collectgarbage()
      if collectgarbage("count") > limit then
        hit = "memory"
        debug.sethook()
        error("not enough memory", 0)
      end
    end
  end, "", 1)
  local ok, res = pcall(chunk)
  debug.sethook()
  if smt then smt.__index = saved_index end
  if hit == "steps" then
    util.fail(file .. ": spec did not finish within 1e6 instructions (a spec is data, not a program)")
  end
  if not ok then
    local msg = lua_message(type(res) == "string" and res or "raised a non-string error")
    runaway(file, msg, false)
    local line, why = msg:match("^spec:(%d+): (.*)$")
    util.fail(file .. (line and (":" .. line .. ": " .. why) or (": " .. msg)))
  end
  return res
end

-- Why: dkjson is lenient (it skips comments, missing or trailing commas
-- and text after the value; a repeated key silently wins) and recurses
-- once per nesting level.  A spec is checked against strict JSON first,
-- with a depth limit and no repeated keys.  Returns line, why or nil.
local function json_problem(text)
  local i, n, line = 1, #text, 1
  local stack, want = {}, "value"
  local function ends_value()
    want = (#stack == 0) and "done" or "more"
  end
  while true do
    local s, e = text:find("^[ \t\r\n]*", i)
    line, i = line + lines_in(text:sub(s, e)), e + 1
    if i > n then break end
    local c = text:sub(i, i)
    local top = stack[#stack]
    local value = want == "value" or want == "value?"
    if want == "done" then
      return line, "unexpected text after the JSON value"
    elseif (c == "{" or c == "[") and value then
      if #stack >= MAX_JSON_DEPTH then return line, "nests deeper than " .. MAX_JSON_DEPTH .. " levels" end
      stack[#stack + 1] = { c = c, keys = {} }
      want, i = (c == "{") and "key?" or "value?", i + 1
    elseif (c == "}" and top and top.c == "{" and (want == "key?" or want == "more"))
        or (c == "]" and top and top.c == "[" and (want == "value?" or want == "more")) then
      stack[#stack] = nil
      ends_value()
      i = i + 1
    elseif c == "," and want == "more" then
      want, i = (top.c == "{") and "key" or "value", i + 1
    elseif c == ":" and want == "colon" then
      want, i = "value", i + 1
    elseif c == '"' and (value or want == "key" or want == "key?") then
      local j = i + 1
      while true do
        local q = text:find('["\\%c]', j)
        local d = q and text:sub(q, q)
        if d == '"' then j = q break end
        if d ~= "\\" then return line, "unterminated string or a control character in it" end
        local esc = text:sub(q + 1, q + 1)
        if esc == "u" and text:find("^%x%x%x%x", q + 2) then
          j = q + 6
        elseif esc ~= "" and ('"\\/bfnrt'):find(esc, 1, true) then
          j = q + 2
        else
          return line, "invalid escape in a string"
        end
      end
      if value then
        ends_value()
      else
        local key = text:sub(i, j)
        if top.keys[key] then return line, "key " .. key .. " appears twice" end
        top.keys[key] = true
        want = "colon"
      end
      i = j + 1
    elseif value and (text:find("^true", i) or text:find("^null", i) or text:find("^false", i)) then
      ends_value()
      i = i + (text:find("^false", i) and 5 or 4)
    elseif value and c:find("^[-%d]") then
      local num = text:match("^-?0", i) or text:match("^-?[1-9]%d*", i)
      if not num then return line, "invalid number" end
      local j = i + #num
      local frac = text:match("^%.%d+", j)
      j = j + (frac and #frac or 0)
      local ex = text:match("^[eE][-+]?%d+", j)
      j = j + (ex and #ex or 0)
      if text:find("^[%w_%.]", j) then return line, "invalid number" end
      ends_value()
      i = j
    else
      local shown = c:find("^[%w%p]") and (" '" .. c .. "'") or ""
      return line, "unexpected character" .. shown
    end
  end
  if want ~= "done" then return line, "unexpected end of the text" end
  return nil
end

-- Why: JSON specs carry the same fields; syntax errors name the line.
function M.load_json(text, file)
  local json = require("dkjson")
  local bad_line, problem = json_problem(text)
  if bad_line then util.fail(file .. ":" .. bad_line .. ": JSON syntax error: " .. problem) end
  local dok, obj, _, err = pcall(json.decode, text, 1, json.null)
  if not dok or err then util.fail(file .. ": JSON could not be decoded") end
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

-- Why: read at most one byte past the limit, so that /dev/zero or a huge
-- file is refused without reading it all.
local function read_spec(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local text, rerr = f:read(MAX_SPEC_BYTES + 1)
  f:close()
  if text == nil and rerr == nil then text = "" end -- an empty file
  return text, rerr
end

function M.load_file(path)
  local text, err = read_spec(path)
  if not text then
    err = tostring(err)
    if err:sub(1, #path + 2) == path .. ": " then err = err:sub(#path + 3) end
    util.fail(path .. ": cannot read spec: " .. err)
  end
  if #text > MAX_SPEC_BYTES then
    util.fail(path .. ": spec is larger than " .. util.int(MAX_SPEC_BYTES / 1024) .. " KiB")
  end
  local raw
  if path:match("%.json$") or text:match("^%s*{") then
    raw = M.load_json(text, path)
  else
    raw = M.load_lua(text, path)
  end
  return M.validate(raw, path)
end

return M
