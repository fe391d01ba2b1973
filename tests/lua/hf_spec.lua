-- hf_spec.lua: busted tests of gen/hf.lua (config.json -> spec, names,
-- the Lua spec writer) and gen/embed.lua (Makefile, README.md, NAME.pc).
-- Run from the repository root: busted --lua=luajit tests/lua
package.path = "gen/?.lua;" .. package.path

local hf = require("hf")
local S = require("spec")

-- Why: user errors are tables; return the one-line message or nil.
local function err_of(fn, ...)
  local ok, e = pcall(fn, ...)
  if ok then return nil end
  assert.is_table(e, "not a user error: " .. tostring(e))
  assert.is_true(e.kgen_error)
  assert.is_nil(e.msg:find("\n"), "message is not one line: " .. e.msg)
  return e.msg
end

-- the JSON decoder leaves null out; in these tables false stands for "absent"
local function clean(t)
  local c = {}
  for k, v in pairs(t) do
    if v ~= false then c[k] = (type(v) == "table") and clean(v) or v end
  end
  return c
end

local function derive(cfg, opts)
  local raw, info = hf.derive(clean(cfg), "c.json", opts)
  return S.validate(raw, "c.json"), raw, info
end

local QWEN3 = { model_type = "qwen3", hidden_size = 4096, num_attention_heads = 32,
  num_key_value_heads = 8, head_dim = 128, rms_norm_eps = 1e-6, torch_dtype = "bfloat16" }

local function copy(t, over)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  for k, v in pairs(over or {}) do c[k] = v end
  return c
end

describe("hf.derive", function()
  it("maps Qwen3 to rmsnorm over hidden_size and a token-major qk_norm", function()
    local spec = derive(QWEN3, { name = "q" })
    assert.are.equal("bf16", spec.dtype)
    assert.are.equal(2, #spec.kernels)
    local r, q = spec.kernels[1], spec.kernels[2]
    assert.are.same({ "rmsnorm", "rmsnorm", 4096, 0 }, { r.op, r.name, r.dim, r.weight_offset })
    assert.are.equal(1e-6, r.eps)
    assert.are.same({ "qk_norm", "qk_norm", 128, 32, 8, "token_major", 0 },
      { q.op, q.name, q.dim, q.num_heads, q.num_kv_heads, q.layout, q.weight_offset })
    assert.are.equal(1e-6, q.eps)
  end)

  it("treats qwen3_moe like qwen3", function()
    local spec = derive(copy(QWEN3, { model_type = "qwen3_moe", hidden_size = 2048,
      num_key_value_heads = 4 }), { name = "m" })
    assert.are.equal(2048, spec.kernels[1].dim)
    assert.are.equal(4, spec.kernels[2].num_kv_heads)
  end)

  it("derives head_dim as hidden_size / num_attention_heads when absent", function()
    local spec = derive(copy(QWEN3, { head_dim = false }), { name = "q" })
    assert.are.equal(128, spec.kernels[2].dim)
  end)

  it("prefers an explicit head_dim (Qwen3-0.6B: 1024 hidden, 16 heads of 128)", function()
    local spec = derive(copy(QWEN3, { hidden_size = 1024, num_attention_heads = 16 }),
      { name = "q" })
    assert.are.equal(128, spec.kernels[2].dim)
  end)

  it("defaults num_key_value_heads to num_attention_heads, with a note", function()
    local spec, _, info = derive(copy(QWEN3, { num_key_value_heads = false }), { name = "q" })
    assert.are.equal(32, spec.kernels[2].num_kv_heads)
    assert.are.equal(1, #info.notes)
    assert.truthy(info.notes[1]:find("num_key_value_heads absent", 1, true))
  end)

  for _, mt in ipairs({ "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "phi3" }) do
    it("maps " .. mt .. " to rmsnorm only", function()
      local spec = derive({ model_type = mt, hidden_size = 4096, rms_norm_eps = 1e-5,
        num_attention_heads = 32, torch_dtype = "bfloat16" }, { name = "l" })
      assert.are.equal(1, #spec.kernels)
      assert.are.same({ "rmsnorm", 4096, 0 }, { spec.kernels[1].op, spec.kernels[1].dim,
        spec.kernels[1].weight_offset })
      assert.are.equal(1e-5, spec.kernels[1].eps)
    end)
  end

  it("gives the Gemma family weight_offset 1 (the (1 + w) scale)", function()
    for _, mt in ipairs({ "gemma", "gemma2" }) do
      local spec = derive({ model_type = mt, hidden_size = 3584, rms_norm_eps = 1e-6 },
        { name = "g" })
      assert.are.equal(1, #spec.kernels)
      assert.are.equal(1, spec.kernels[1].weight_offset)
    end
  end)

  it("gives Gemma 3 per-head q/k norms with weight_offset 1", function()
    local spec = derive({ model_type = "gemma3_text", hidden_size = 1152, head_dim = 256,
      num_attention_heads = 4, num_key_value_heads = 1, rms_norm_eps = 1e-6,
      torch_dtype = "bfloat16" }, { name = "g" })
    assert.are.equal(2, #spec.kernels)
    assert.are.same({ 1, 1 }, { spec.kernels[1].weight_offset, spec.kernels[2].weight_offset })
    assert.are.same({ 256, 4, 1 }, { spec.kernels[2].dim, spec.kernels[2].num_heads,
      spec.kernels[2].num_kv_heads })
  end)

  it("reads a multimodal Gemma 3 from text_config, with transformers' defaults", function()
    local spec, _, info = derive({ model_type = "gemma3", torch_dtype = "bfloat16",
      text_config = { model_type = "gemma3_text", hidden_size = 2560 } }, { name = "g" })
    assert.are.equal("bf16", spec.dtype)
    assert.are.equal(2560, spec.kernels[1].dim)
    assert.are.same({ 256, 8, 4 }, { spec.kernels[2].dim, spec.kernels[2].num_heads,
      spec.kernels[2].num_kv_heads })
    assert.are.equal(1e-6, spec.kernels[2].eps)
    assert.are.equal(4, #info.notes)
  end)

  it("maps GPT-2 (n_embd, layer_norm_epsilon) and BERT (hidden_size, layer_norm_eps)", function()
    local g = derive({ model_type = "gpt2", n_embd = 768, layer_norm_epsilon = 1e-5 },
      { name = "g" })
    assert.are.same({ "layernorm", "layernorm", 768, "f32" },
      { g.kernels[1].op, g.kernels[1].name, g.kernels[1].dim, g.dtype })
    local b = derive({ model_type = "bert", hidden_size = 768, layer_norm_eps = 1e-12 },
      { name = "b" })
    assert.are.same({ "layernorm", 768 }, { b.kernels[1].op, b.kernels[1].dim })
    assert.are.equal(1e-12, b.kernels[1].eps)
  end)

  it("maps torch_dtype and the newer dtype key", function()
    local cases = { { "bfloat16", "bf16" }, { "float16", "f16" }, { "float32", "f32" },
      { "torch.bfloat16", "bf16" } }
    for _, c in ipairs(cases) do
      assert.are.equal(c[2], derive(copy(QWEN3, { torch_dtype = c[1] }), { name = "q" }).dtype)
      assert.are.equal(c[2], derive(copy(QWEN3, { torch_dtype = false, dtype = c[1] }),
        { name = "q" }).dtype)
    end
    assert.are.equal("f32", derive(copy(QWEN3, { torch_dtype = false }), { name = "q" }).dtype)
    assert.are.equal("bf16", derive(copy(QWEN3, { dtype = "bfloat16" }), { name = "q" }).dtype)
  end)

  it("applies --dtype, --rounding, --isa overrides", function()
    local spec = derive(QWEN3, { name = "q", dtype = "f32", rounding = "hf", isa = "avx2" })
    assert.are.equal("f32", spec.dtype)
    assert.are.equal("hf", spec.kernels[1].rounding)
    assert.are.same({ "scalar", "avx2" }, spec.isa)
  end)
end)

describe("hf.derive errors (one line, naming the field)", function()
  local cases = {
    { { model_type = "t5", d_model = 512 }, 'model_type: "t5" is not supported; supported: bert,' },
    { { hidden_size = 1 }, "model_type: missing; supported:" },
    { copy(QWEN3, { hidden_size = false }), "hidden_size: missing (model_type qwen3 needs it)" },
    { copy(QWEN3, { rms_norm_eps = false }), "rms_norm_eps: missing" },
    { copy(QWEN3, { dtype = "float16" }), 'dtype: "float16" contradicts torch_dtype ("bfloat16")' },
    { copy(QWEN3, { num_key_value_heads = 5 }), "num_key_value_heads: must divide num_attention_heads (32), got 5" },
    { copy(QWEN3, { num_key_value_heads = 64 }), "num_key_value_heads: must divide" },
    { copy(QWEN3, { hidden_size = 1000, head_dim = false }), "head_dim: missing, and hidden_size (1000)" },
    { copy(QWEN3, { hidden_size = "4096" }), 'hidden_size: must be a positive integer, got "4096"' },
    { copy(QWEN3, { hidden_size = 40.5 }), "hidden_size: must be a positive integer" },
    { copy(QWEN3, { head_dim = 0 }), "head_dim: must be a positive integer, got 0" },
    { copy(QWEN3, { hidden_size = 65536 }), "hidden_size: 65536 is more than kgen supports" },
    { copy(QWEN3, { rms_norm_eps = -1 }), "rms_norm_eps: must be a finite number > 0, got -1" },
    { copy(QWEN3, { rms_norm_eps = 1e-50 }), "rms_norm_eps: must be in [1.18e-38, 1e4]" },
    { copy(QWEN3, { torch_dtype = "int8" }), 'torch_dtype: must be one of bfloat16, float16, float32, got "int8"' },
    { { model_type = "gpt2", n_embd = 768, hidden_size = 1024, layer_norm_epsilon = 1e-5 },
      "hidden_size: 1024 contradicts n_embd (768)" },
    { { model_type = "gemma3" }, "text_config: missing" },
    { { model_type = "gemma3", text_config = { hidden_size = 2560, num_attention_heads = 6 } },
      "text_config.num_key_value_heads: must divide text_config.num_attention_heads (6), got 4" },
    { { 1, 2 }, "must be a JSON object" },
  }
  for i, c in ipairs(cases) do
    it("case " .. i .. ": " .. c[2], function()
      local msg = err_of(derive, c[1], { name = "q" })
      assert.is_not_nil(msg, "no error")
      assert.are.equal("c.json: ", msg:sub(1, 8))
      assert.truthy(msg:find(c[2], 1, true), "got: " .. tostring(msg))
    end)
  end
end)

describe("pack names", function()
  it("sanitizes model names into C identifiers", function()
    assert.are.equal("qwen3_0_6b", hf.sanitize("Qwen3-0.6B"))
    assert.are.equal("meta_llama_3_8b", hf.sanitize("Meta-Llama-3-8B"))
    assert.are.equal("m_7b_chat", hf.sanitize("7B--chat!"))
    assert.are.equal("auto_m", hf.sanitize("auto"))
    assert.is_nil(hf.sanitize("---"))
    assert.is_true(#hf.sanitize(("x"):rep(100)) <= 40)
    assert.is_nil(require("util").c_ident_problem(hf.sanitize("A__B__c")))
  end)

  it("derives the name from _name_or_path, file, folder, HF cache, model_type", function()
    local snap = "x/models--Qwen--Qwen3-8B/snapshots/" .. ("ab"):rep(20) .. "/config.json"
    assert.are.equal("qwen3_8b", hf.derive_name({}, snap, "qwen3"))
    assert.are.equal("qwen3_0_6b", hf.derive_name({ _name_or_path = "Qwen/Qwen3-0.6B" },
      "a/b/config.json", "qwen3"))
    assert.are.equal("tiny", hf.derive_name({ _name_or_path = "/ckpt/tiny/" }, "config.json", "x"))
    assert.are.equal("my_llama", hf.derive_name({}, "dl/my-llama.json", "llama"))
    assert.are.equal("my_llama", hf.derive_name({}, "my-llama.config.json", "llama"))
    assert.are.equal("llama_3_8b", hf.derive_name({}, "models/Llama-3-8B/config.json", "llama"))
    assert.are.equal("llama", hf.derive_name({}, "config.json", "llama"))
    assert.are.equal("llama", hf.derive_name({}, "./config.json", "llama"))
  end)
end)

describe("hf.number", function()
  it("writes the shortest decimal that reads back, the same on every Lua", function()
    assert.are.equal("1e-06", hf.number(1e-6))
    assert.are.equal("1e-05", hf.number(1e-5))
    assert.are.equal("1e-12", hf.number(1e-12))
    assert.are.equal("4096", hf.number(4096))
    assert.are.equal("4096", hf.number(4096.0))
    assert.are.equal("0.1", hf.number(0.1))
    assert.are.equal(1 / 3, tonumber(hf.number(1 / 3)))
  end)
end)

describe("hf.to_lua", function()
  local function round_trip(raw)
    local spec = S.validate(raw, "t")
    local text = hf.to_lua(spec, { "a comment" })
    assert.are.equal("-- a comment\n", text:sub(1, 13))
    local again = S.validate(S.load_lua(text, "emitted"), "emitted")
    assert.are.equal(spec.hash, again.hash)
    return text
  end

  it("round-trips the shipped specs to the same hash", function()
    for _, f in ipairs({ "specs/qwen3-8b.lua", "specs/qwen3-0.6b.lua", "specs/llama-3-8b.lua",
        "specs/gpt2.lua" }) do
      local spec = S.load_file(f)
      local again = S.validate(S.load_lua(hf.to_lua(spec, {}), f), f)
      assert.are.equal(spec.hash, again.hash)
    end
  end)

  it("keeps what differs from the defaults", function()
    local text = round_trip({ name = "t", dtype = "f16", rounding = "hf", isa = { "avx2" },
      kernels = {
        { op = "qk_norm", name = "qkn", head_dim = 64, num_heads = 8, num_kv_heads = 2,
          eps = 1e-5, layout = "head_major", dtype = "bf16", weight_offset = 1 },
        { op = "layernorm", name = "ln", dim = 100, eps = 1e-5, rounding = "single" },
        { op = "rmsnorm", dim = 7, eps = 0.25 },
      } })
    assert.truthy(text:find('rounding = "hf"', 1, true))
    assert.truthy(text:find('isa = { "scalar", "avx2" }', 1, true))
    assert.truthy(text:find('layout = "head_major"', 1, true))
    assert.truthy(text:find('name = "qkn"', 1, true))
    assert.truthy(text:find('eps = 0.25', 1, true))
    for line in text:gmatch("[^\n]+") do assert.is_true(#line <= 80, line) end
  end)
end)

describe("embed files", function()
  local pack = require("pack")
  local dirs = { templates = "templates", runtime = "runtime" }

  local function render(path, isa)
    local spec = S.load_file(path)
    if isa then
      local raw = S.load_lua(require("util").read_file(path), path)
      raw.isa = isa
      spec = S.validate(raw, path)
    end
    return pack.render(spec, dirs), spec
  end

  it("writes Makefile, README.md and NAME.pc, each starting with DO NOT EDIT", function()
    local files = render("specs/qwen3-0.6b.lua")
    for _, f in ipairs({ "Makefile", "README.md", "qwen3_0_6b.pc" }) do
      assert.is_string(files[f], f)
      local first = files[f]:match("^[^\n]*")
      assert.truthy(first:find("DO NOT EDIT: generated by kgen", 1, true), f)
      assert.truthy(first:find("embed/", 1, true), f)
    end
    assert.truthy(files["Makefile"]:match("^# "))
    assert.truthy(files["README.md"]:match("^<!%-%- "))
  end)

  it("renders the same bytes twice", function()
    local a = render("specs/gpt2.lua")
    local b = render("specs/gpt2.lua")
    for _, f in ipairs({ "Makefile", "README.md", "gpt2.pc" }) do assert.are.equal(a[f], b[f]) end
  end)

  it("builds with the user's CC and CFLAGS and links only -lm", function()
    local files = render("specs/gpt2.lua", { "scalar", "avx2", "avx512" })
    local mk = files["Makefile"]
    assert.truthy(mk:find("CFLAGS ?= -O2", 1, true))
    assert.truthy(mk:find("${CC} ${CPPFLAGS} ${CFLAGS} -c $< -o $@", 1, true))
    assert.is_nil(mk:find("-m[a-z]"), "a target flag in the Makefile")
    assert.is_nil(mk:find("nvcc", 1, true), "a CPU-only pack mentions nvcc")
    assert.truthy(files["gpt2.pc"]:find("\nLibs: -L${libdir} -lgpt2 -lm\n", 1, true))
    assert.truthy(files["gpt2.pc"]:find("\nprefix=${pcfiledir}\n", 1, true))
  end)

  it("builds the CUDA object only where nvcc is found", function()
    if not S.IMPLEMENTED.cuda then pending("the CUDA backend is not implemented") return end
    local files = render("specs/gpt2.lua", { "scalar", "cuda" })
    local mk = files["Makefile"]
    assert.truthy(mk:find("HAVE_NVCC := ${shell command -v ${firstword ${NVCC}} 2>/dev/null}",
      1, true))
    assert.truthy(mk:find("${NAME}_cuda.o: ${NAME}_cuda.cu", 1, true))
    assert.truthy(files["gpt2.pc"]:find("cuda_object=", 1, true))
    -- the README's CUDA prototypes are the header's
    local n = 0
    for line in files["README.md"]:gmatch("[^\n]+") do
      if line:match("^int gpt2_.*_cuda%(") then
        n = n + 1
        assert.truthy(files["gpt2.h"]:find(line, 1, true), line)
      end
    end
    assert.are.equal(1, n)
  end)

  it("states the spec, the generator version and the ABI in README.md", function()
    local files, spec = render("specs/qwen3-0.6b.lua")
    local md = files["README.md"]
    assert.truthy(md:find("kgen " .. require("util").VERSION, 1, true))
    assert.truthy(md:find(spec.hash, 1, true))
    assert.truthy(md:find(hf.to_lua(spec, {}), 1, true))
    assert.truthy(md:find("void qwen3_0_6b_qk_norm(size_t tokens, kg_bf16 *q", 1, true))
    assert.truthy(md:find("## ABI", 1, true))
  end)
end)
