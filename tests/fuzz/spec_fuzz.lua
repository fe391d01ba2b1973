-- spec_fuzz.lua: fuzz the spec loader through gen/kgen.  Random byte
-- strings and mutations of valid and hostile specs (Lua and JSON) go to
-- kgen, alternately under LuaJIT and Lua 5.4.  Each run must exit 0 (a pack
-- was written, nothing on stderr) or 2 (exactly one line on stderr, no
-- traceback, no internal error); no run may hang (timeout) or run a
-- command (the dictionary tries to touch /tmp/kgen_pwned).
--   luajit tests/fuzz/spec_fuzz.lua [RUNS [SEED [FAILDIR]]]
-- Run from the repository root.  Failing inputs are kept in FAILDIR
-- (default build/fuzz).  Exit status 1 when any run failed.
local RUNS = tonumber(arg[1] or "") or 300
local SEED = tonumber(arg[2] or "") or 1
local FAILDIR = arg[3] or "build/fuzz"
local PWNED = "/tmp/kgen_pwned"

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

local function write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- Why: the same sequence on LuaJIT and Lua 5.4 (math.random differs):
-- a 31-bit Park-Miller generator, exact in doubles.
local state = (SEED % 2147483646) + 1
local function rand(n)
  state = (state * 48271) % 2147483647
  return state % n + 1
end

local function pick(t) return t[rand(#t)] end

local function ls(pattern)
  local p = io.popen("ls " .. pattern .. " 2>/dev/null")
  local t = {}
  for line in p:lines() do t[#t + 1] = line end
  p:close()
  table.sort(t)
  return t
end

-- valid specs and the hostile corpus, drawn half and half
local function load_seeds(patterns)
  local t = {}
  for _, pat in ipairs(patterns) do
    for _, f in ipairs(ls(pat)) do
      local s = read(f)
      if s and #s < 20000 then t[#t + 1] = { text = s, json = f:match("%.json$") ~= nil } end
    end
  end
  assert(#t > 0, "spec_fuzz: no seeds found (run from the repository root)")
  return t
end
local good = load_seeds({ "specs/*.lua", "tests/fuzz/fuzz.lua", "tests/fuzz/corpus/spec/*" })
local hostile = load_seeds({ "tests/specs/bad/*.lua", "tests/specs/bad/*.json" })
local seeds = {}
for _, s in ipairs(good) do seeds[#seeds + 1] = s end
for _, s in ipairs(hostile) do seeds[#seeds + 1] = s end

local DICT = { "{", "}", "[", "]", "=", ",", '"', "'", "nil", "true", "false", "0/0", "1/0", "-1", "0",
  "1e999", "-0.0", "4096.5", "16385", "1e-45", "9007199254740993", "0x7fffffffffffffff", "64LL",
  "os.execute('touch " .. PWNED .. "')", "io.open('" .. PWNED .. "', 'w')", "while true do end",
  "..", "--[[", "]]", "\n", "return", "local", "function", "end", '("x"):rep(1e9)', "\\", "\0", "\255",
  "\27", "//", "<const>", "~", "null", ":", "name", "kernels", "op", "dim", "eps", "head_dim",
  "num_heads", "num_kv_heads", "layout", "dtype", "isa", "rounding", "weight_offset", "rmsnorm",
  "qk_norm", "layernorm", "f32", "bf16", "f16", "avx2", "avx512", "neon", "cuda", "scalar",
  "head_major", "token_major", "hf", "single", "__x", "int", "x;y", "kg_cpu", "variants", "\"\\u0000\"",
  "{ op = \"rmsnorm\", dim = 8 }", "{\"op\": \"layernorm\", \"dim\": 3}" }
local NUMBERS = { "0", "-1", "1", "2", "3", "7", "8", "127", "128", "4096", "16384", "16385", "1e999",
  "0/0", "-0.0", "0.5", "1e-45", "1.2e-38", "1e4", "10001", "4097", "4096.5", "1e300", "-1e300" }
local STRINGS = { "", "x", "x; system(\"id\")", "rmsnorm", "qk_norm", "layernorm", "__x", "_X", "int",
  "a b", "kg_dispatch", "variants", ("n"):rep(60), "f16", "bf16", "avx512", "head_major", "hf", "\\n" }

local function mutate(s)
  local n = #s
  local m = rand(9)
  if m == 1 and n > 0 then -- random bytes
    local i = rand(n)
    return s:sub(1, i - 1) .. string.char(rand(256) - 1) .. s:sub(i + 1)
  elseif m == 2 then -- a dictionary token
    local i = rand(n + 1)
    return s:sub(1, i - 1) .. pick(DICT) .. s:sub(i)
  elseif m == 3 and n > 1 then -- delete a range
    local i = rand(n)
    return s:sub(1, i - 1) .. s:sub(i + rand(math.min(40, n - i + 1)))
  elseif m == 4 and n > 1 then -- duplicate a range
    local i = rand(n)
    local j = math.min(n, i + rand(60))
    return s:sub(1, j) .. s:sub(i, j) .. s:sub(j + 1)
  elseif m == 5 then -- replace the k-th number
    local count = 0
    for _ in s:gmatch("%d+%.?%d*") do count = count + 1 end
    if count == 0 then return s end
    local k, seen = rand(count), 0
    return (s:gsub("%d+%.?%d*", function(num)
      seen = seen + 1
      if seen == k then return pick(NUMBERS) end
      return num
    end))
  elseif m == 6 then -- replace the k-th string literal
    local count = 0
    for _ in s:gmatch('"[^"\n]*"') do count = count + 1 end
    if count == 0 then return s end
    local k, seen = rand(count), 0
    return (s:gsub('"[^"\n]*"', function(str)
      seen = seen + 1
      if seen == k then return '"' .. pick(STRINGS) .. '"' end
      return str
    end))
  elseif m == 7 then -- splice with another seed
    local o = pick(seeds).text
    local i, j = rand(n + 1), rand(#o + 1)
    return s:sub(1, i - 1) .. o:sub(j)
  elseif m == 8 and n > 0 then -- swap two lines' halves
    local i = rand(n)
    return s:sub(i) .. s:sub(1, i - 1)
  end
  return s .. pick(DICT)
end

local function random_bytes()
  local t = {}
  for i = 1, rand(200) - 1 do t[i] = string.char(rand(256) - 1) end
  return table.concat(t)
end

local tmp = os.tmpname()
os.remove(tmp)
os.execute("mkdir -p " .. tmp .. "/out")
os.execute("mkdir -p " .. FAILDIR)
os.remove(PWNED)

local failures, by_status = 0, {}
for run = 1, RUNS do
  local text, json
  if rand(10) == 1 then
    text, json = random_bytes(), rand(2) == 1
  else
    local seed = pick(rand(2) == 1 and good or hostile)
    text, json = seed.text, seed.json
    for _ = 1, (rand(2) == 1 and 1 or rand(4)) do text = mutate(text) end
  end
  local path = tmp .. "/spec" .. (json and ".json" or ".lua")
  write(path, text)
  local lua = (run % 2 == 0) and "lua5.4" or "luajit"
  local cmd = "KGEN_LUA=" .. lua .. " timeout 60 gen/kgen " .. path .. " -o " .. tmp .. "/out >"
    .. tmp .. "/stdout 2>" .. tmp .. "/stderr; echo $?"
  local p = io.popen(cmd)
  local status = tonumber(p:read("*a"):match("(%d+)%s*$"))
  p:close()
  local err = read(tmp .. "/stderr") or ""
  local why
  if status == 2 then
    if not err:match("^[^\n]+\n$") then why = "status 2 needs exactly one line on stderr"
    elseif err:find("traceback", 1, true) or err:find("internal error", 1, true) then why = "internal error" end
  elseif status == 0 then
    if err ~= "" then why = "status 0 with something on stderr" end
  else
    why = "exit status " .. tostring(status) .. (status == 124 and " (timeout)" or "")
  end
  if read(PWNED) then why = "a spec ran a command (" .. PWNED .. " exists)" end
  by_status[status or -1] = (by_status[status or -1] or 0) + 1
  if why then
    failures = failures + 1
    local keep = FAILDIR .. "/spec-fail-" .. run .. (json and ".json" or ".lua")
    write(keep, text)
    io.stderr:write("spec_fuzz: run ", run, " (", lua, "): ", why, "; input kept in ", keep, "\n")
    io.stderr:write("  stderr: ", (err:gsub("\n", "\n          ")), "\n")
    os.remove(PWNED)
  end
end
os.execute("rm -rf " .. tmp)
local summary = {}
for s, c in pairs(by_status) do summary[#summary + 1] = "status " .. s .. ": " .. c end
table.sort(summary)
print(string.format("spec_fuzz: %d runs (seed %d), %s; %d failures", RUNS, SEED,
  table.concat(summary, ", "), failures))
os.exit(failures == 0 and 0 or 1)
