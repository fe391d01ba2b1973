-- cli_spec.lua: gen/kgen as a user runs it: --op kernels, usage errors,
-- exit statuses (0 ok, 2 user error) and one-line messages.
local S = require("tests.lua.support")

local function one_line_error(status, out, err)
  assert.equals(2, status)
  assert.equals("", out)
  assert.matches("^[^\n]+\n$", err)
  return (err:gsub("\n$", ""))
end

describe("kgen command line", function()
  local dir
  before_each(function() dir = S.tmpdir() end)
  after_each(function() S.rmtree(dir) end)

  it("prints its version", function()
    local status, out, err = S.kgen({ "--version" })
    assert.equals(0, status)
    assert.matches("^kgen %d+%.%d+%.%d+\n$", out)
    assert.equals("", err)
  end)

  it("builds a spec from --op and friends, validated like a file", function()
    local status, out = S.kgen({ "--op", "qk_norm", "--head-dim", "128", "--num-heads", "32",
      "--num-kv-heads", "8", "--eps", "1e-6", "--dtype", "bf16", "--isa", "avx2", "--layout", "head_major",
      "--name", "my", "--kernel-name", "qkn", "--print-spec" })
    assert.equals(0, status)
    for _, want in ipairs({ '"name"="my"', '"dim"=128', '"num_heads"=32', '"num_kv_heads"=8',
        '"dtype"="bf16"', '"layout"="head_major"', '"name"="qkn"', '"isa"={1="scalar",2="avx2"}' }) do
      assert.is_truthy(out:find(want, 1, true), want)
    end
  end)

  it("writes the pack of a command-line kernel under OUT/NAME", function()
    local status, out, err = S.kgen({ "--op", "rmsnorm", "--dim", "4096", "--isa", "scalar", "-o", dir })
    assert.equals(0, status, err)
    assert.equals("", err)
    assert.matches("wrote .*rmsnorm/", out)
    local files = S.listdir(dir .. "/rmsnorm")
    assert.is_truthy(#files >= 4)
    for _, f in ipairs({ "rmsnorm.h", "rmsnorm_scalar.c", "rmsnorm_dispatch.c", "manifest.json" }) do
      assert.is_truthy(S.exists(dir .. "/rmsnorm/" .. f), f)
    end
    assert.same({ "rmsnorm" }, S.listdir(dir))
  end)

  it("agrees with the same kernel given as a spec file", function()
    S.write(dir .. "/s.lua", 'return { name = "n", dtype = "f16", kernels = { { op = "layernorm", dim = 33, '
      .. 'eps = 1e-5 } } }')
    local _, a = S.kgen({ dir .. "/s.lua", "--print-spec" })
    local _, b = S.kgen({ "--op", "layernorm", "--name", "n", "--dtype", "f16", "--dim", "33", "--eps", "1e-5",
      "--print-spec" })
    assert.equals(a, b)
  end)

  local cases = {
    { { "--op", "qk_norm", "--num-heads", "8" },
      "command line: kernels[1].head_dim: must be an integer in [1, 16384], got nothing" },
    { { "--op", "rmsnorm", "--dim", "abc" }, 'command line: --dim: must be a number, got "abc"' },
    { { "--op", "rmsnorm", "--dim", "64", "--eps", "inf" }, 'command line: --eps: must be a number, got "inf"' },
    { { "--op", "rmsnorm", "--dim", "64", "--eps", "nan" }, 'command line: --eps: must be a number, got "nan"' },
    { { "--op", "rmsnorm", "--dim", "64", "--eps", "0" },
      "command line: kernels[1].eps: must be a finite number > 0, got 0" },
    { { "--op", "rmsnorm", "--dim", "64.5" },
      "command line: kernels[1].dim: must be an integer in [1, 16384], got 64.5" },
    { { "--op", "rmsnrm" }, 'command line: kernels[1].op: must be one of layernorm, qk_norm, rmsnorm '
      .. '(did you mean rmsnorm?), got "rmsnrm"' },
    { { "--op", "qk_norm", "--head-dim", "64", "--num-heads", "6", "--num-kv-heads", "4" },
      "command line: kernels[1].num_heads: must be a multiple of num_kv_heads (4), got 6" },
    { { "--op", "rmsnorm", "--dim", "64", "--isa", "avx2,sse" },
      'command line: isa[2]: must be one of avx2, avx512, cuda, neon, scalar, got "sse"' },
    { { "--op", "rmsnorm", "--dim", "64", "--isa", "" }, "command line: isa: must be a non-empty list, got a table" },
    { { "--op", "rmsnorm", "--dim", "64", "--name", "x;y" },
      'command line: name: must be a C identifier ([A-Za-z_][A-Za-z0-9_]*), got "x;y"' },
    { { "--op", "rmsnorm", "--dim", "64", "--kernel-name", "int" },
      'command line: kernels[1].name: must not be a C keyword, got "int"' },
    { { "--op", "rmsnorm", "--dim", "64", "--head-dim", "64" }, "command line: kernels[1].head_dim: unknown field; "
      .. "allowed: op, name, dim, eps, dtype, rounding, weight_offset" },
    { { "specs/qwen3-8b.lua", "--op", "rmsnorm" }, "kgen: give either a spec file or --op, not both" },
    { {}, "kgen: no spec: give a spec file or --op ... (see kgen --help)" },
  }
  for _, c in ipairs(cases) do
    it("refuses " .. table.concat(c[1], " "), function()
      local args = { "-o", dir }
      for _, a in ipairs(c[1]) do args[#args + 1] = a end
      assert.equals(c[2], one_line_error(S.kgen(args)))
      assert.same({}, S.listdir(dir))
    end)
  end

  it("turns argparse errors into one line and status 2", function()
    local msg = one_line_error(S.kgen({ "--bogus" }))
    assert.matches("^kgen: unknown option '%-%-bogus'.*%(see kgen %-%-help%)$", msg)
    msg = one_line_error(S.kgen({ "--dim" }))
    assert.matches("^kgen: .*%-%-dim", msg)
    msg = one_line_error(S.kgen({ "a.lua", "b.lua" }))
    assert.matches("^kgen: ", msg)
  end)

  it("refuses unreadable spec files and bad output folders", function()
    assert.equals(dir .. "/nope.lua: cannot read spec: No such file or directory",
      one_line_error(S.kgen({ dir .. "/nope.lua" })))
    assert.equals(dir .. ": cannot read spec: Is a directory", one_line_error(S.kgen({ dir })))
    assert.equals("/dev/zero: spec is larger than 256 KiB", one_line_error(S.kgen({ "/dev/zero" })))
    assert.equals("kgen: -o: the output folder must not be empty",
      one_line_error(S.kgen({ "--op", "rmsnorm", "--dim", "8", "-o", "" })))
    S.write(dir .. "/file", "x")
    assert.matches("^" .. dir .. "/file: cannot create temp folder: ",
      one_line_error(S.kgen({ "--op", "rmsnorm", "--dim", "8", "-o", dir .. "/file" })))
    assert.equals("x", S.read(dir .. "/file"))
  end)
end)
