-- util.lua: small helpers shared by the generator (errors, C names,
-- number formatting, hashing).  Common subset of LuaJIT and Lua 5.4: no
-- integer division operator, no bit operators.
local M = {}

M.VERSION = "0.1.0"

-- Bytes per stored element of each dtype.
M.BYTES = { f32 = 4, bf16 = 2, f16 = 2 }

-- A user-facing error: one line, exit status 2.  Raised as a table so that
-- the CLI can tell it from an internal bug.
function M.fail(msg)
  error({ kgen_error = true, msg = msg }, 0)
end

function M.is_user_error(e)
  return type(e) == "table" and e.kgen_error == true
end

local C_KEYWORDS = {}
for w in ([[auto break case char const continue default do double else enum
  extern float for goto if inline int long register restrict return short
  signed sizeof static struct switch typedef union unsigned void volatile
  while _Bool _Complex _Imaginary _Alignas _Alignof _Atomic _Generic
  _Noreturn _Static_assert _Thread_local asm typeof]]):gmatch("%S+") do
  C_KEYWORDS[w] = true
end

-- Why: every name that reaches C must be a plain identifier, not a keyword
-- and not a reserved name, so a spec can never inject code.
function M.c_ident_problem(s, maxlen)
  maxlen = maxlen or 48
  if type(s) ~= "string" then return "must be a string" end
  if not s:match("^[A-Za-z_][A-Za-z0-9_]*$") then
    return "must be a C identifier ([A-Za-z_][A-Za-z0-9_]*)"
  end
  if #s > maxlen then return "must be at most " .. maxlen .. " characters" end
  if C_KEYWORDS[s] then return "must not be a C keyword" end
  if s:match("^_[A-Z_]") or s:match("__") then
    return "must not be a reserved C name (leading _ + capital, or __)"
  end
  return nil
end

-- Why: integers are printed with %d so Lua 5.4 never writes "3.0".
function M.int(n)
  return string.format("%d", n)
end

-- Why: an f32 constant written so that it parses back to the same float
-- (%.9g round-trips binary32) and is always a valid C float literal.
function M.f32(x)
  local s = string.format("%.9g", x)
  if not s:find("[%.eEn]") then s = s .. ".0" end
  return s .. "f"
end

-- Why: a double constant with 17 significant digits (round-trips binary64).
function M.f64(x)
  local s = string.format("%.17g", x)
  if not s:find("[%.eEn]") then s = s .. ".0" end
  return s
end

-- Why: a readable value for error messages, never relying on tostring for
-- floats.
function M.show(v)
  local t = type(v)
  if t == "string" then return string.format("%q", v) end
  if t == "number" then
    if v ~= v then return "nan" end
    if v == math.huge then return "inf" end
    if v == -math.huge then return "-inf" end
    if v == math.floor(v) and math.abs(v) < 2^53 then
      return string.format("%d", v)
    end
    return string.format("%.17g", v)
  end
  if t == "nil" then return "nothing" end
  return "a " .. t
end

-- Why: a stable content hash without bit operators (two polynomial hashes
-- modulo primes below 2^31, all intermediate values exact in doubles).
function M.hash(s)
  local h1, h2 = 7, 11
  local p1, p2 = 2147483629, 2147483587
  for i = 1, #s do
    local b = s:byte(i)
    h1 = (h1 * 257 + b) % p1
    h2 = (h2 * 263 + b) % p2
  end
  return string.format("%08x%08x", h1, h2)
end

-- Why: deterministic serialisation of plain data (sorted keys, exact
-- numbers) for the canonical spec hash.
function M.canonical(v)
  local t = type(v)
  if t == "table" then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    local parts = {}
    for _, k in ipairs(keys) do
      parts[#parts + 1] = M.canonical(k) .. "=" .. M.canonical(v[k])
    end
    return "{" .. table.concat(parts, ",") .. "}"
  elseif t == "number" then
    return M.show(v)
  elseif t == "string" then
    return string.format("%q", v)
  end
  return tostring(v)
end

function M.read_file(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local s = f:read("*a")
  f:close()
  return s
end

return M
