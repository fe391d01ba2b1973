-- corpus_spec.lua: the hostile-spec corpus tests/specs/bad/.  Each
-- NAME.lua or NAME.json is paired with NAME.expected, the exact line it must
-- produce.  For every one: exit status 2, that line alone on stderr,
-- nothing on stdout, the output folder (holding a pack of the same name,
-- "bad") byte-identical, and no command run (the corpus's attempts all
-- target the file kgen_pwned, in /tmp or the current folder).
local S = require("tests.lua.support")

local CORPUS = "tests/specs/bad"
local PWNED = { "/tmp/kgen_pwned", "kgen_pwned" }

local function corpus()
  local list, expected = {}, {}
  for _, f in ipairs(S.listdir(CORPUS)) do
    local base, ext = f:match("^(.*)%.(%w+)$")
    if ext == "lua" or ext == "json" then
      list[#list + 1] = { spec = CORPUS .. "/" .. f, expected = CORPUS .. "/" .. base .. ".expected" }
    elseif ext == "expected" then
      expected[#expected + 1] = base
    end
  end
  return list, expected
end

describe("hostile spec corpus", function()
  local list, expected = corpus()
  local dir, before

  setup(function()
    dir = S.tmpdir()
    S.write(dir .. "/bad.lua", S.good_spec("bad"))
    local status, _, err = S.kgen({ dir .. "/bad.lua", "-o", dir .. "/out" })
    assert.equals(0, status, err)
    before = S.snapshot(dir .. "/out")
    assert.is_truthy(before["bad/bad.h"])
  end)

  teardown(function() S.rmtree(dir) end)

  it("has at least 30 specs, Lua and JSON, each with its expected line", function()
    assert.is_truthy(#list >= 30)
    local lua, json = 0, 0
    for _, c in ipairs(list) do
      if c.spec:match("%.lua$") then lua = lua + 1 else json = json + 1 end
      assert.is_truthy(S.exists(c.expected), c.expected)
    end
    assert.is_truthy(lua >= 10 and json >= 10)
    assert.equals(#list, #expected)
  end)

  for _, c in ipairs(list) do
    it(c.spec, function()
      local want = S.read(c.expected)
      assert.is_not_nil(want, c.expected)
      assert.matches("^[^\n]+\n$", want)
      assert.equals(c.spec, want:sub(1, #c.spec), "the expected line names the file")
      for _, p in ipairs(PWNED) do os.remove(p) end
      local status, out, err = S.kgen({ c.spec, "-o", dir .. "/out" })
      assert.equals(want, err)
      assert.equals(2, status)
      assert.equals("", out)
      assert.same(before, S.snapshot(dir .. "/out"))
      for _, p in ipairs(PWNED) do assert.is_false(S.exists(p), p .. " was created") end
    end)
  end
end)
