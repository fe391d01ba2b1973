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
    assert.equals("vec vec1 vecn vecn1 el el1", names(p))
    for i, l in ipairs(p.kernels) do
      if l.twin then
        assert.equals(1, l.R)
        assert.equals(p.WPB * l.S, l.RPB)
        assert.equals(l.name, l.base .. "1")
        assert.equals("KG_CU_FEW_ROWS", l.bound)
      else
        assert.is_true(l.R > 1)
        assert.equals(l.few, p.kernels[i + 1])
      end
    end
  end)

  it("lays RMSNorm / QK-norm rows under 512 bytes side by side in a warp, 16 bytes a lane", function()
    -- head_dim 64 bf16: 4 rows of 8 lanes, 2 rows deep; the twin 1 deep
    local p = plan("qk_norm", "bf16", 64)
    local v, v1 = p.kernels[1], p.kernels[2]
    assert.equals("vec", v.name)
    assert.same({ 8, 8, 4, 1, 2 }, { v.VE, v.L, v.S, v.C, v.R })
    assert.equals(p.WPB * 2 * 4, v.RPB)
    assert.equals(16, p.VB)
    assert.same({ "vec1", 4, 1, p.WPB * 4 }, { v1.name, v1.S, v1.R, v1.RPB })
    -- calls aligned to less than 16 bytes: the whole-warp rows' 4-byte
    -- vectors, then the element layout, both whole warps
    assert.equals("vec vec1 vecn vecn1 el el1", names(p))
    assert.same({ "vecn", 2, 4, 32, 1 }, { p.paths[2].name, p.paths[2].VE, p.paths[2].VB, p.paths[2].L, p.paths[2].S })
    assert.same({ "el", 32, 1 }, { p.paths[3].name, p.paths[3].L, p.paths[3].S })
    -- rows that do not fill 16 lanes evenly: 96 bf16 = 12 vectors, 16 lanes
    local q = plan("qk_norm", "bf16", 96).paths[1]
    assert.same({ 8, 16, 2, 12 }, { q.VE, q.L, q.S, q.NV })
    -- 256 bytes: 2 rows of 16 lanes, bf16 and f32 alike
    for _, c in ipairs({ { "qk_norm", "bf16", 128 }, { "rmsnorm", "f32", 64 } }) do
      local l = plan(c[1], c[2], c[3]).paths[1]
      assert.same({ 16, 2, 1, 2 }, { l.L, l.S, l.C, l.R }, c[2])
    end
    -- 512 bytes and wider, LayerNorm, and rows with no 16-bit pairs keep
    -- one row across the warp
    assert.equals(1, plan("qk_norm", "f32", 128).paths[1].S)
    assert.equals(1, plan("qk_norm", "bf16", 256).paths[1].S)
    assert.equals(1, plan("qk_norm", "f32", 96).paths[1].S)
    assert.equals(1, plan("layernorm", "bf16", 64).paths[1].S)
    assert.equals(1, plan("rmsnorm", "bf16", 1).paths[1].S)
  end)

  it("has no twin where a warp already holds one row", function()
    -- f32 256 wide: 1 KiB a row, one row per warp already
    local p = plan("rmsnorm", "f32", 256)
    assert.equals(1, p.paths[1].R)
    assert.equals("vec el", names(p))
  end)
end)
