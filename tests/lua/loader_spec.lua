-- loader_spec.lua: spec.load_lua / load_json / load_file in-process: a spec
-- is data, evaluated in a sandbox that leaves the generator as it was.
local S = require("tests.lua.support")
local spec = require("spec")

local GOOD = 'return { name = "p", kernels = { { op = "rmsnorm", dim = 64 } } }'

local function lua_err(text)
  return S.user_error(spec.load_lua, text, "f.lua")
end

local function json_err(text)
  return S.user_error(spec.load_json, text, "f.json")
end

describe("Lua spec sandbox", function()
  it("evaluates plain data and computation", function()
    local raw = spec.load_lua([[
      local hidden, heads = 4096, 32
      local ks = {}
      for i = 1, 3 do ks[i] = { op = "rmsnorm", name = "n" .. i, dim = hidden / 2 ^ i } end
      ks[#ks + 1] = { op = "qk_norm", head_dim = hidden / heads, num_heads = heads }
      return { name = "p", kernels = ks }
    ]], "f.lua")
    local s = spec.validate(raw, "f.lua")
    assert.equals(2048, s.kernels[1].dim)
    assert.equals(128, s.kernels[4].dim)
  end)

  it("refuses every global, naming it and the line", function()
    for _, g in ipairs({ "os", "io", "require", "load", "loadstring", "dofile", "loadfile", "string",
        "getmetatable", "setmetatable", "rawget", "rawset", "debug", "package", "collectgarbage",
        "pcall", "error", "print", "ipairs", "pairs", "math", "table", "coroutine", "jit", "ffi",
        "_G", "tostring", "tonumber", "type", "next", "select", "unpack" }) do
      assert.equals("f.lua:2: " .. g .. " is not available in a spec (a spec is data, not a program)",
        lua_err("local x = 1\nlocal y = " .. g .. "\nreturn {}"))
    end
  end)

  it("keeps global assignments inside the spec", function()
    spec.load_lua("os = 1; string = 2; kgen_test_global = 3; return {}", "f.lua")
    assert.is_nil(rawget(_G, "kgen_test_global"))
    assert.equals("table", type(os))
    assert.equals("table", type(string))
  end)

  it("gives strings no methods, and restores the string metatable afterwards", function()
    local before = getmetatable("").__index
    assert.equals("f.lua:1: strings have no methods in a spec (a spec is data, not a program)",
      lua_err('local s = ("x"):rep(1e9) return {}'))
    assert.equals("f.lua:1: strings have no methods in a spec (a spec is data, not a program)",
      lua_err('local s = ("x").len return {}'))
    assert.equals(before, getmetatable("").__index)
    assert.equals("xx", ("x"):rep(2))
    spec.load_lua(GOOD, "f.lua")
    assert.equals(before, getmetatable("").__index)
  end)

  it("stops an endless loop and clears its hook", function()
    assert.equals("f.lua: spec did not finish within 1e6 instructions (a spec is data, not a program)",
      lua_err("while true do end"))
    assert.equals("f.lua: spec did not finish within 1e6 instructions (a spec is data, not a program)",
      lua_err("local t = {} for i = 1, 1e12 do t[(i % 4) + 1] = i end return t"))
    assert.is_nil(debug.gethook())
    -- the generator is still usable afterwards
    assert.equals("p", spec.validate(spec.load_lua(GOOD, "f.lua"), "f.lua").name)
  end)

  it("bounds memory and recursion", function()
    local msg = "f.lua: spec used more than 4 MiB of memory or recursed too deeply (a spec is data, not a program)"
    assert.equals(msg, lua_err('local s = "0123456789abcdef" for _ = 1, 40 do s = s .. s end return {}'))
    assert.equals(msg, lua_err("local t = {} for i = 1, 1e7 do t[i] = { i } end return t"))
    assert.equals(msg, lua_err("local function f(n) return f(n + 1) + 1 end return f(1)"))
    assert.equals("f.lua: spec nests too deeply for the Lua parser",
      lua_err("return " .. ("{"):rep(1000) .. ("}"):rep(1000)))
    assert.is_nil(debug.gethook())
  end)

  it("reports syntax errors with the line, the same on LuaJIT and Lua 5.4", function()
    assert.equals("f.lua:3: '}' expected (to close '{' at line 1) near 'b'",
      lua_err("return {\n  a = 1\n  b = 2\n}"))
    assert.equals("f.lua:2: unexpected symbol near <eof>", lua_err("return {\n a = "))
    assert.equals("f.lua:1: attempt to perform arithmetic on a nil value", lua_err("local x return { x + 1 }"))
    assert.equals("f.lua:2: attempt to index a nil value", lua_err("local t = {}\nreturn t.a.b"))
    assert.equals("f.lua:1: attempt to call a nil value", lua_err("local f; f()"))
  end)

  it("refuses what only one of LuaJIT and Lua 5.4 would accept", function()
    local only54 = "' is Lua 5.4 only (a spec must mean the same in LuaJIT and Lua 5.4)"
    assert.equals("f.lua:1: '//" .. only54, lua_err("return { 7 // 2 }"))
    assert.equals("f.lua:2: '&" .. only54, lua_err("\nreturn { 7 & 2 }"))
    assert.equals("f.lua:1: '|" .. only54, lua_err("return { 7 | 2 }"))
    assert.equals("f.lua:1: '~" .. only54, lua_err("return { ~7 }"))
    assert.equals("f.lua:1: '>>" .. only54, lua_err("return { 7 >> 1 }"))
    assert.equals("f.lua:1: '<const>" .. only54, lua_err("local x <const> = 1 return {}"))
    assert.equals("f.lua:1: malformed number near '7ULL'", lua_err("return { 7ULL }"))
    assert.equals("f.lua:1: malformed number near '3i'", lua_err("return { 3i }"))
    assert.equals("f.lua:1: integer 9007199254740992 is beyond 2^53 (not exact in both LuaJIT and Lua 5.4)",
      lua_err("return { 9007199254740992 }"))
    assert.equals("f.lua:1: a non-ASCII character outside a string (names are ASCII in Lua)",
      lua_err("local \195\164 = 1 return {}"))
    -- ... but not inside strings and comments, and ~= stays an operator
    local raw = spec.load_lua('-- a // b | c\n--[==[ ~ ]==]\nreturn { "// & ~ <<", [[>>]], [=[ ]] | ]=], '
      .. '1 ~= 2, 0x1p4, .5, 5., 1e-6, 0xFF, "\\"//" }', "f.lua")
    assert.same({ "// & ~ <<", ">>", " ]] | ", true, 16, 0.5, 5, 1e-6, 255, '"//' }, raw)
  end)

  it("refuses binary chunks", function()
    assert.equals("f.lua: binary chunks are not allowed", lua_err("\27LuaR\0\1\4\8"))
  end)
end)

describe("JSON specs", function()
  it("decode to the same table as Lua specs, null meaning absent", function()
    local raw = spec.load_json('{ "name": "p", "dtype": null, "kernels": [ { "op": "rmsnorm", "dim": 64, '
      .. '"eps": 1e-6 } ] }', "f.json")
    assert.same({ name = "p", kernels = { { op = "rmsnorm", dim = 64, eps = 1e-6 } } }, raw)
  end)

  it("are strict JSON, errors naming the line", function()
    local e = "f.json:%d: JSON syntax error: %s"
    assert.equals(e:format(2, "unexpected character '}'"), json_err('{ "a": 1,\n}'))
    assert.equals(e:format(1, "unexpected character '\"'"), json_err('{ "a": 1 "b": 2 }'))
    assert.equals(e:format(1, "unexpected text after the JSON value"), json_err('{} {}'))
    assert.equals(e:format(1, "unexpected character '/'"), json_err('{ // c\n}'))
    assert.equals(e:format(3, 'key "a" appears twice'), json_err('{\n"a": 1,\n"a": 2 }'))
    assert.equals(e:format(1, "invalid number"), json_err('{ "a": 01 }'))
    assert.equals(e:format(1, "invalid number"), json_err('{ "a": 1.e5 }'))
    assert.equals(e:format(1, "unexpected character 'N'"), json_err('{ "a": NaN }'))
    assert.equals(e:format(1, "unexpected character 'I'"), json_err('{ "a": Infinity }'))
    assert.equals(e:format(1, "invalid escape in a string"), json_err('{ "a": "\\x41" }'))
    assert.equals(e:format(1, "unterminated string or a control character in it"), json_err('{ "a": "x\ty" }'))
    assert.equals(e:format(1, "unexpected end of the text"), json_err('{ "a": [1, 2'))
    assert.equals(e:format(1, "unexpected end of the text"), json_err(''))
    assert.equals(e:format(1, "nests deeper than 32 levels"), json_err(("["):rep(100000)))
  end)
end)

describe("spec files", function()
  local dir
  before_each(function() dir = S.tmpdir() end)
  after_each(function() S.rmtree(dir) end)

  it("pick JSON by extension or a leading brace, else Lua", function()
    S.write(dir .. "/a.json", '{ "name": "a", "kernels": [ { "op": "layernorm", "dim": 8 } ] }')
    S.write(dir .. "/b.spec", '  { "name": "b", "kernels": [ { "op": "layernorm", "dim": 8 } ] }')
    S.write(dir .. "/c.spec", 'return { name = "c", kernels = { { op = "layernorm", dim = 8 } } }')
    assert.equals("a", spec.load_file(dir .. "/a.json").name)
    assert.equals("b", spec.load_file(dir .. "/b.spec").name)
    assert.equals("c", spec.load_file(dir .. "/c.spec").name)
  end)

  it("refuse a missing file, a folder, /dev/zero and a file over 256 KiB", function()
    assert.equals(dir .. "/nope.lua: cannot read spec: No such file or directory",
      S.user_error(spec.load_file, dir .. "/nope.lua"))
    assert.equals(dir .. ": cannot read spec: Is a directory", S.user_error(spec.load_file, dir))
    assert.equals("/dev/zero: spec is larger than 256 KiB", S.user_error(spec.load_file, "/dev/zero"))
    S.write(dir .. "/empty.lua", "")
    assert.equals(dir .. "/empty.lua: the spec must be a table (got nothing)",
      S.user_error(function() return spec.load_file(dir .. "/empty.lua") end))
    S.write(dir .. "/big.lua", "return {}\n" .. ("-- padding\n"):rep(30000))
    assert.equals(dir .. "/big.lua: spec is larger than 256 KiB", S.user_error(spec.load_file, dir .. "/big.lua"))
  end)
end)
