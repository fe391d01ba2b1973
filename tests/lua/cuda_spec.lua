-- cuda_spec.lua: the CUDA backend's plan (gen/cuda.lua): how a row is laid
-- over threads, which kernels a variant gets, and the host wrapper's choice
-- between a layout's several-rows-per-warp kernel and its one-row twin.
require("tests.lua.support")
local cuda = require("cuda")

local function plan(op, dtype, dim)
  return cuda.plan({ op = op, dtype = dtype, dim = dim })
end

local function names(p)
  local out = {}
  for _, l in ipairs(p.kernels) do out[#out + 1] = l.name end
  return table.concat(out, " ")
end

describe("CUDA plan", function()
  it("gives a block-row thread 64 bytes of its row whatever the dtype", function()
    for _, c in ipairs({ { "f32", 8192, 512 }, { "bf16", 8192, 256 }, { "f16", 4096, 128 } }) do
      local v = plan("rmsnorm", c[1], c[2]).paths[1]
      assert.equals("vec", v.name)
      assert.equals(c[3], v.NT, c[1])
      assert.equals(64, v.C * v.VE * (c[1] == "f32" and 4 or 2), c[1])
    end
  end)

  it("keeps one block per row for rows wider than 256; only LayerNorm has twins there", function()
    local p = plan("rmsnorm", "bf16", 4096)
    assert.is_false(p.warp)
    assert.equals("vec el", names(p))
    p = plan("layernorm", "bf16", 4096)
    assert.equals("vec vec1 el el1", names(p))
    for _, l in ipairs(p.paths) do
      assert.is_true(l.few.early)
      assert.equals(1, l.few.MINB)
      assert.equals("KG_CU_FEW_WIDE_ROWS", l.few.bound)
      assert.is_nil(l.early)
    end
    -- blocks of 1024 threads have 64 registers a thread whatever the cap
    p = plan("layernorm", "f32", 16384)
    assert.equals(1024, p.paths[1].NT)
    assert.equals("vec el", names(p))
  end)

  it("adds a one-row-per-warp twin to every warp layout with several rows", function()
    local p = plan("qk_norm", "bf16", 128)
    assert.is_true(p.warp)
    assert.equals("vec vec1 el el1", names(p))
    for i, l in ipairs(p.kernels) do
      if l.twin then
        assert.equals(1, l.R)
        assert.equals(p.WPB, l.RPB)
        assert.equals(l.name, l.base .. "1")
        assert.equals("KG_CU_FEW_ROWS", l.bound)
      else
        assert.is_true(l.R > 1)
        assert.equals(l.few, p.kernels[i + 1])
      end
    end
  end)

  it("has no twin where a warp already holds one row", function()
    -- f32 256 wide: 1 KiB a row, one row per warp already
    local p = plan("rmsnorm", "f32", 256)
    assert.equals(1, p.paths[1].R)
    assert.equals("vec el", names(p))
  end)
end)
