-- write_spec.lua: packs are written atomically: a failing run (bad spec,
-- failed write, internal error) leaves an existing OUT/NAME/ byte-identical
-- and no temp folder behind.
local S = require("tests.lua.support")
local write = require("write")

describe("atomic pack writes", function()
  local dir
  before_each(function() dir = S.tmpdir() end)
  after_each(function() S.rmtree(dir) end)

  local function old_pack()
    write.write_pack(dir, "p", { ["p.h"] = "old header\n", ["p_scalar.c"] = "old c\n" })
    return S.snapshot(dir)
  end

  it("writes a new pack and replaces an old one whole", function()
    local final = write.write_pack(dir .. "/new/deeper", "p", { ["a.txt"] = "A", ["b.txt"] = "B" })
    assert.equals(dir .. "/new/deeper/p", final)
    assert.same({ ["p/"] = "<dir>", ["p/a.txt"] = "A", ["p/b.txt"] = "B" }, S.snapshot(dir .. "/new/deeper"))
    old_pack()
    write.write_pack(dir, "p", { ["p.h"] = "new header\n" })
    -- files of the old pack that the new one lacks are gone too; no temp folders remain
    local snap = S.snapshot(dir)
    snap["new/"], snap["new/deeper/"], snap["new/deeper/p/"] = nil, nil, nil
    snap["new/deeper/p/a.txt"], snap["new/deeper/p/b.txt"] = nil, nil
    assert.same({ ["p/"] = "<dir>", ["p/p.h"] = "new header\n" }, snap)
  end)

  it("leaves the old pack untouched when a file cannot be written", function()
    local before = old_pack()
    local msg = S.user_error(write.write_pack, dir, "p", { ["p.h"] = "new", ["sub/dir/x.c"] = "new" })
    assert.matches("^" .. dir .. "/p/sub/dir/x%.c: ", msg)
    assert.same(before, S.snapshot(dir))
  end)

  it("leaves the old pack untouched on an internal error while writing", function()
    local before = old_pack()
    local ok, e = pcall(write.write_pack, dir, "p", { ["p.h"] = "new", ["q.h"] = { "not text" } })
    assert.is_false(ok)
    assert.is_not_nil(e)
    assert.same(before, S.snapshot(dir))
  end)

  it("refuses an empty output folder and one that is a file", function()
    assert.equals("kgen: -o: the output folder must not be empty",
      S.user_error(write.write_pack, "", "p", { ["a"] = "a" }))
    S.write(dir .. "/f", "x")
    assert.matches("^" .. dir .. "/f: cannot create temp folder: ",
      S.user_error(write.write_pack, dir .. "/f", "p", { ["a"] = "a" }))
    assert.same({ f = "x" }, S.snapshot(dir))
  end)

  it("leaves an existing pack byte-identical when kgen fails on a bad spec", function()
    S.write(dir .. "/good.lua", S.good_spec("same"))
    local status, _, err = S.kgen({ dir .. "/good.lua", "-o", dir .. "/out" })
    assert.equals(0, status, err)
    local before = S.snapshot(dir .. "/out")
    assert.is_truthy(before["same/same.h"])
    S.write(dir .. "/bad.lua", S.good_spec("same"):gsub("dim = 72", "dim = 0"))
    status, _, err = S.kgen({ dir .. "/bad.lua", "-o", dir .. "/out" })
    assert.equals(2, status)
    assert.equals(dir .. "/bad.lua: kernels[1].dim: must be an integer in [1, 16384], got 0\n", err)
    assert.same(before, S.snapshot(dir .. "/out"))
    -- and a good run replaces it in place
    S.write(dir .. "/good2.lua", S.good_spec("same"):gsub("dim = 72", "dim = 80"))
    status = S.kgen({ dir .. "/good2.lua", "-o", dir .. "/out" })
    assert.equals(0, status)
    assert.same({ "same" }, S.listdir(dir .. "/out"))
    assert.is_truthy(S.read(dir .. "/out/same/same.h"):find("SAME_NORM_DIM 80", 1, true))
  end)
end)
