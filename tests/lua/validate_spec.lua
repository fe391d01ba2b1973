-- validate_spec.lua: spec.validate: every field, its defaults and its
-- one-line errors ("FILE: FIELD: why, got X").
local S = require("tests.lua.support")
local spec = require("spec")
local util = require("util")

local function rms(extra)
  local k = { op = "rmsnorm", dim = 64 }
  for key, v in pairs(extra or {}) do k[key] = v end
  return k
end

local function qk(extra)
  local k = { op = "qk_norm", head_dim = 128, num_heads = 32, num_kv_heads = 8 }
  for key, v in pairs(extra or {}) do k[key] = v end
  return k
end

local function top(extra, kernels)
  local t = { name = "p", kernels = kernels or { rms() } }
  for key, v in pairs(extra or {}) do t[key] = v end
  return t
end

-- the error message of validating raw, without the "t: " file prefix
local function err(raw)
  local msg = S.user_error(spec.validate, raw, "t")
  assert.equals("t: ", msg:sub(1, 3))
  return msg:sub(4)
end

local function kerr(k)
  return err(top(nil, { k }))
end

describe("spec defaults", function()
  it("fills dtype, rounding, isa, kernel name, eps, layout, kv heads, weight offset", function()
    local s = spec.validate(top(nil, { rms(), qk(), { op = "layernorm", dim = 8 } }), "t")
    assert.equals("p", s.name)
    assert.equals("f32", s.dtype)
    assert.equals("single", s.rounding)
    local isa = {}
    for _, n in ipairs(spec.ISA_ORDER) do
      if spec.IMPLEMENTED[n] then isa[#isa + 1] = n end
    end
    assert.same(isa, s.isa)
    local r, q, l = s.kernels[1], s.kernels[2], s.kernels[3]
    assert.equals("rmsnorm", r.name)
    assert.equals("qk_norm", q.name)
    assert.equals("layernorm", l.name)
    assert.equals(1e-6, r.eps)
    assert.equals(1e-6, q.eps)
    assert.equals(1e-5, l.eps)
    assert.equals("token_major", q.layout)
    assert.equals(0, r.weight_offset)
    assert.equals(0, l.weight_offset)
    assert.equals("f32", r.dtype)
    assert.equals("single", q.rounding)
  end)

  it("defaults num_kv_heads to num_heads", function()
    local s = spec.validate(top(nil, { { op = "qk_norm", head_dim = 128, num_heads = 32 } }), "t")
    assert.equals(32, s.kernels[1].num_kv_heads)
  end)

  it("lets a kernel override dtype and rounding", function()
    local s = spec.validate(top({ dtype = "bf16", rounding = "hf" },
      { rms({ dtype = "f16" }), rms({ name = "b", rounding = "single" }) }), "t")
    assert.equals("f16", s.kernels[1].dtype)
    assert.equals("hf", s.kernels[1].rounding)
    assert.equals("bf16", s.kernels[2].dtype)
    assert.equals("single", s.kernels[2].rounding)
  end)

  it("always includes scalar and orders ISAs canonically", function()
    local s = spec.validate(top({ isa = { "avx512", "avx2" } }), "t")
    assert.same({ "scalar", "avx2", "avx512" }, s.isa)
    s = spec.validate(top({ isa = "avx2" }), "t")
    assert.same({ "scalar", "avx2" }, s.isa)
  end)

  it("accepts the bounds of every range", function()
    local s = spec.validate(top(nil, {
      rms({ name = "a", dim = 1, eps = 1.1754943508222875e-38 }),
      rms({ name = "b", dim = 16384, eps = 1e4, weight_offset = -1e4 }),
      qk({ name = "c", head_dim = 1, num_heads = 4096, num_kv_heads = 1 }),
      qk({ name = "d", head_dim = 16384, num_heads = 1, num_kv_heads = 1, layout = "head_major" }),
    }), "t")
    assert.equals(4, #s.kernels)
  end)
end)

describe("spec validation errors", function()
  it("refuses a spec that is not a table", function()
    assert.equals("the spec must be a table (got 5)", err(5))
    assert.equals("the spec must be a table (got nothing)", err(nil))
  end)

  it("checks name: present, string, C identifier, no keyword, not reserved, short", function()
    assert.equals("name: must be a string, got nothing", err({ kernels = { rms() } }))
    assert.equals("name: must be a string, got 42", err(top({ name = 42 })))
    assert.equals('name: must be a C identifier ([A-Za-z_][A-Za-z0-9_]*), got "x; system(\\"rm -rf /\\")"',
      err(top({ name = 'x; system("rm -rf /")' })))
    assert.equals('name: must be a C identifier ([A-Za-z_][A-Za-z0-9_]*), got "1abc"', err(top({ name = "1abc" })))
    assert.equals('name: must be a C identifier ([A-Za-z_][A-Za-z0-9_]*), got ""', err(top({ name = "" })))
    assert.equals('name: must not be a C keyword, got "while"', err(top({ name = "while" })))
    assert.equals('name: must not be a reserved C name (leading _ + capital, or __), got "a__b"',
      err(top({ name = "a__b" })))
    assert.equals("name: must be at most 48 characters, got \"" .. ("a"):rep(49) .. "\"",
      err(top({ name = ("a"):rep(49) })))
    assert.equals('name: must not be kg or begin with kg_ (the runtime\'s C names and files), got "KG"',
      err(top({ name = "KG" })))
  end)

  it("checks dtype, rounding, with did-you-mean", function()
    assert.equals('dtype: must be one of bf16, f16, f32 (did you mean bf16?), got "bf61"',
      err(top({ dtype = "bf61" })))
    assert.equals('dtype: must be one of bf16, f16, f32, got 16', err(top({ dtype = 16 })))
    assert.equals('rounding: must be one of hf, single (did you mean single?), got "singel"',
      err(top({ rounding = "singel" })))
    assert.equals('kernels[1].dtype: must be one of bf16, f16, f32, got "float64"',
      kerr(rms({ dtype = "float64" })))
  end)

  it("checks isa: a list of known, implemented, distinct names", function()
    assert.equals('isa[1]: must be one of avx2, avx512, cuda, neon, scalar (did you mean avx2?), got "avx3"',
      err(top({ isa = { "avx3" } })))
    assert.equals('isa[2]: is listed twice, got "scalar"', err(top({ isa = { "scalar", "scalar" } })))
    assert.equals("isa: must be a non-empty list, got a table", err(top({ isa = {} })))
    assert.equals("isa: must be a list of strings, got 3", err(top({ isa = 3 })))
    for _, n in ipairs(spec.ISA_ORDER) do
      if not spec.IMPLEMENTED[n] then
        assert.matches('^isa%[1%]: backend not implemented yet', err(top({ isa = { n } })))
      end
    end
  end)

  it("checks kernels: a non-empty list of tables, at most 4096", function()
    assert.equals("kernels: must be a list of kernel tables, got nothing", err({ name = "p" }))
    assert.equals("kernels: must be a non-empty list, got a table", err(top(nil, {})))
    assert.equals("kernels: must be a non-empty list, got a table",
      err({ name = "p", kernels = { [1] = rms(), [3] = rms() } }))
    assert.equals("kernels[1]: must be a table, got \"rmsnorm\"", err(top(nil, { "rmsnorm" })))
    local many = {}
    for i = 1, 4097 do many[i] = rms({ name = "k" .. i }) end
    assert.equals("kernels: must hold at most 4096 kernels, got 4097", err(top(nil, many)))
  end)

  it("checks op with did-you-mean", function()
    assert.equals('kernels[1].op: must be one of layernorm, qk_norm, rmsnorm (did you mean qk_norm?), got "qknorm"',
      kerr({ op = "qknorm" }))
    assert.equals('kernels[1].op: must be one of layernorm, qk_norm, rmsnorm, got nothing', kerr({ dim = 4 }))
  end)

  it("checks dims: integers in range, no NaN/Inf/fractions/strings", function()
    local msg = "kernels[1].dim: must be an integer in [1, 16384], got "
    assert.equals(msg .. "0", kerr(rms({ dim = 0 })))
    assert.equals(msg .. "-4", kerr(rms({ dim = -4 })))
    assert.equals(msg .. "16385", kerr(rms({ dim = 16385 })))
    assert.equals(msg .. "64.5", kerr(rms({ dim = 64.5 })))
    assert.equals(msg .. "nan", kerr(rms({ dim = 0 / 0 })))
    assert.equals(msg .. "inf", kerr(rms({ dim = math.huge })))
    assert.equals(msg .. "-inf", kerr(rms({ dim = -math.huge })))
    assert.equals(msg .. "1.0000000000000001e+300", kerr(rms({ dim = 1e300 })))
    assert.equals(msg .. '"64"', kerr(rms({ dim = "64" })))
    assert.equals(msg .. "nothing", kerr({ op = "layernorm" }))
    assert.equals("kernels[1].head_dim: must be an integer in [1, 16384], got 0", kerr(qk({ head_dim = 0 })))
    assert.equals("kernels[1].num_heads: must be an integer in [1, 4096], got 4097", kerr(qk({ num_heads = 4097 })))
    assert.equals("kernels[1].num_kv_heads: must be an integer in [1, 4096], got 0.5",
      kerr(qk({ num_kv_heads = 0.5 })))
  end)

  it("checks GQA: num_heads a multiple of num_kv_heads", function()
    assert.equals("kernels[1].num_heads: must be a multiple of num_kv_heads (5), got 32",
      kerr(qk({ num_kv_heads = 5 })))
    assert.equals("kernels[1].num_heads: must be a multiple of num_kv_heads (64), got 32",
      kerr(qk({ num_kv_heads = 64 })))
    assert.equals(1, #spec.validate(top(nil, { qk({ num_heads = 28, num_kv_heads = 4 }) }), "t").kernels)
  end)

  it("checks eps: finite, > 0, a normal f32, at most 1e4", function()
    local msg = "kernels[1].eps: must be a finite number > 0, got "
    assert.equals(msg .. "0", kerr(rms({ eps = 0 })))
    assert.equals(msg .. "0", kerr(rms({ eps = -0.0 })))
    assert.equals(msg .. "-9.9999999999999995e-07", kerr(rms({ eps = -1e-6 })))
    assert.equals(msg .. "nan", kerr(rms({ eps = 0 / 0 })))
    assert.equals(msg .. "inf", kerr(rms({ eps = math.huge })))
    assert.equals(msg .. '"1e-6"', kerr(rms({ eps = "1e-6" })))
    local range = "kernels[1].eps: must be in [1.18e-38, 1e4] (a positive normal f32), got "
    assert.equals(range .. "9.9999999999999998e-46", kerr(rms({ eps = 1e-45 })))
    assert.equals(range .. "10001", kerr(qk({ eps = 10001 })))
  end)

  it("checks layout, rounding of layernorm, weight_offset", function()
    assert.equals('kernels[1].layout: must be one of head_major, token_major (did you mean head_major?), '
      .. 'got "headmajor"', kerr(qk({ layout = "headmajor" })))
    assert.equals('kernels[1].rounding: layernorm supports only "single", got "hf"',
      kerr({ op = "layernorm", dim = 8, rounding = "hf" }))
    assert.equals("kernels[1].weight_offset: must be a finite number, got nan", kerr(rms({ weight_offset = 0 / 0 })))
    assert.equals("kernels[1].weight_offset: must be in [-1e4, 1e4], got 20000", kerr(rms({ weight_offset = 2e4 })))
  end)

  it("refuses unknown fields, with did-you-mean for near misses", function()
    assert.equals("kernal: unknown field (did you mean kernels?); allowed: name, dtype, isa, rounding, kernels",
      err(top({ kernal = {} })))
    assert.equals("kernels[1].head_dm: unknown field (did you mean head_dim?); allowed: op, name, head_dim, "
      .. "num_heads, num_kv_heads, eps, layout, dtype, rounding, weight_offset", kerr(qk({ head_dm = 1 })))
    assert.equals("kernels[1].EPS: unknown field (did you mean eps?); allowed: op, name, dim, eps, dtype, "
      .. "rounding, weight_offset", kerr(rms({ EPS = 1 })))
    assert.equals("kernels[1].zzzzzz: unknown field; allowed: op, name, dim, eps, dtype, rounding",
      kerr({ op = "layernorm", dim = 4, zzzzzz = 1 }))
    -- fields of another op are unknown too
    assert.equals("kernels[1].head_dim: unknown field; allowed: op, name, dim, eps, dtype, rounding, weight_offset",
      kerr(rms({ head_dim = 64 })))
    assert.equals("[1]: unexpected list entry; allowed keys: name, dtype, isa, rounding, kernels",
      err(top({ [1] = "x" })))
  end)

  it("checks kernel names: identifiers, distinct (also up to case), no prefix clashes", function()
    assert.equals('kernels[1].name: must be a C identifier ([A-Za-z_][A-Za-z0-9_]*), got "a-b"',
      kerr(rms({ name = "a-b" })))
    assert.equals('kernels[2].name: duplicate kernel name (also kernels[1]), got "rmsnorm"',
      err(top(nil, { rms(), rms() })))
    assert.equals('kernels[2].name: duplicate kernel name (also kernels[1], up to case), got "NORM"',
      err(top(nil, { rms({ name = "norm" }), rms({ name = "NORM" }) })))
    local clash = 'kernels[2].name: clashes with kernels[1] ("%s"): no kernel name may be another\'s '
      .. 'plus "_..." (their C names would collide), got "%s"'
    assert.equals(clash:format("n", "n_avx2"), err(top(nil, { rms({ name = "n" }), rms({ name = "n_avx2" }) })))
    assert.equals(clash:format("n_x_y", "N"), err(top(nil, { rms({ name = "n_x_y" }), rms({ name = "N" }) })))
    assert.equals('kernels[1].name: must not be variants (a C name of the pack itself), got "Variants"',
      kerr(rms({ name = "Variants" })))
    assert.equals('kernels[1].name: pack name + kernel name too long for C, got "' .. ("k"):rep(48) .. '"',
      err(top({ name = ("p"):rep(48) }, { rms({ name = ("k"):rep(48) }) })))
    -- names that only share a prefix without "_" are fine
    assert.equals(2, #spec.validate(top(nil, { rms({ name = "norm" }), rms({ name = "norm2" }) }), "t").kernels)
  end)

  it("reports the first problem in a fixed order", function()
    -- unknown key beats a bad name; kernels are checked in order
    assert.equals("bogus: unknown field; allowed: name, dtype, isa, rounding, kernels",
      err({ name = 1, bogus = 1, kernels = {} }))
    assert.equals("kernels[2].dim: must be an integer in [1, 16384], got 0",
      err(top(nil, { rms({ name = "a" }), rms({ name = "b", dim = 0 }), rms({ name = "c", dim = -1 }) })))
  end)
end)

describe("spec hash", function()
  it("is stable, order independent and changes with every baked number", function()
    local a = spec.validate(top(nil, { rms({ eps = 1e-6 }), qk() }), "t")
    local b = spec.validate({ kernels = { rms({ eps = 1e-6 }), qk() }, name = "p" }, "other file")
    assert.equals(a.hash, b.hash)
    assert.matches("^%x+$", a.hash)
    local c = spec.validate(top(nil, { rms({ eps = 1.0000001e-6 }), qk() }), "t")
    assert.are_not.equals(a.hash, c.hash)
    local d = spec.validate(top(nil, { rms({ eps = 1e-6 }), qk({ layout = "head_major" }) }), "t")
    assert.are_not.equals(a.hash, d.hash)
    assert.equals(a.hash, util.hash(util.canonical({ name = a.name, isa = a.isa, kernels = a.kernels })))
  end)
end)
