-- main.lua: the kgen command line.  Parses arguments, loads or builds the
-- spec, renders the pack and writes it.  User errors: one line, exit 2.
local util = require("util")

local M = {}

-- Why: argparse calls os.exit on bad usage; keep its message one line and
-- its status 2 like every other user error.
local function parser()
  local argparse = require("argparse")
  local p = argparse("kgen", "Generate specialized normalization kernels (C, per ISA) from a spec.")
  p:epilog([[
Examples:
  kgen specs/qwen3-8b.lua -o out
  kgen --op qk_norm --head-dim 128 --num-heads 32 --num-kv-heads 8 --eps 1e-6 \
       --dtype f32 --isa avx512 --name my -o out
  kgen --hf path/to/config.json -o out          # a Hugging Face model's pack
  kgen --hf config.json --name qwen3_8b --emit-spec specs/qwen3_8b.lua
--hf: qwen3, qwen3_moe: rmsnorm + qk_norm; llama, mistral, mixtral, qwen2, phi3: rmsnorm;
  gemma, gemma2: rmsnorm with (1 + w); gemma3: rmsnorm + qk_norm with (1 + w); gpt2, bert,
  roberta, ...: layernorm.  dtype from torch_dtype (or dtype), f32 when absent.  NAME:
  --name, else _name_or_path, the file's or folder's name, the model_type.
Exit status: 0 ok, 2 bad spec or arguments (one line on stderr, nothing written).]])
  p:argument("spec", "Spec file (.lua table or .json)."):args("?")
  p:option("-o --out", "Output folder; the pack goes to OUT/NAME/.", "out")
  p:option("--name", "Pack name (C prefix) for a command-line kernel.")
  p:option("--kernel-name", "Kernel name for a command-line kernel (default: the op).")
  p:option("--op", "Op for a command-line kernel: rmsnorm, qk_norm, layernorm.")
  p:option("--dim", "Row length (rmsnorm, layernorm).")
  p:option("--head-dim", "Head dimension (qk_norm).")
  p:option("--num-heads", "Query heads (qk_norm).")
  p:option("--num-kv-heads", "Key/value heads (qk_norm).")
  p:option("--eps", "Epsilon inside the square root.")
  p:option("--layout", "qk_norm layout: token_major or head_major.")
  p:option("--dtype", "Storage type: f32, bf16, f16.")
  p:option("--rounding", "single (round once) or hf (transformers order).")
  p:option("--weight-offset", "Added to the weight (Gemma: 1).")
  p:option("--isa", "Comma-separated ISAs (default: all implemented).")
  p:option("--hf", "A Hugging Face config.json: the pack that model needs (see below).")
    :argname("<config.json>")
  p:option("--emit-spec", "Write the spec as a Lua spec file (- for stdout) instead of the pack.")
    :argname("<file>")
  p:flag("--print-spec", "Print the validated spec instead of writing a pack.")
  p:flag("--version", "Print the version.")
  return p
end

local function num(field, s)
  if s == nil then return nil end
  -- LuaJIT's tonumber also reads "inf" and "nan"; Lua 5.4's does not
  local v = (s:match("^%s*[-+]?%.?%d") or s:match("^%s*[-+]?0[xX]")) and tonumber(s) or nil
  if v == nil then
    util.fail("command line: " .. field .. ": must be a number, got " .. util.show(s))
  end
  return v
end

-- Why: the command-line kernel becomes a raw spec table and goes through
-- the same validation as a file.
local function spec_from_args(a)
  local k = {
    op = a.op, name = a.kernel_name, dim = num("--dim", a.dim),
    head_dim = num("--head-dim", a.head_dim), num_heads = num("--num-heads", a.num_heads),
    num_kv_heads = num("--num-kv-heads", a.num_kv_heads), eps = num("--eps", a.eps),
    layout = a.layout, weight_offset = num("--weight-offset", a.weight_offset),
  }
  local raw = { name = a.name or a.op, dtype = a.dtype, rounding = a.rounding, kernels = { k } }
  if a.isa then
    raw.isa = {}
    for n in a.isa:gmatch("[^,]+") do raw.isa[#raw.isa + 1] = n end
  end
  return require("spec").validate(raw, "command line")
end

function M.run(argv, dirs)
  local p = parser()
  local ok, a = p:pparse(argv)
  if not ok then
    util.fail("kgen: " .. tostring(a) .. " (see kgen --help)")
  end
  if a.version then
    io.write("kgen " .. util.VERSION .. "\n")
    return 0
  end
  local spec, hf_info
  if a.hf then
    spec, hf_info = require("hf").load_file(a.hf, a)
  elseif a.spec then
    if a.op then util.fail("kgen: give either a spec file or --op, not both") end
    spec = require("spec").load_file(a.spec)
  elseif a.op then
    spec = spec_from_args(a)
  else
    util.fail("kgen: no spec: give a spec file or --op ... (see kgen --help)")
  end
  if a.print_spec then
    io.write(util.canonical(spec) .. "\n")
    return 0
  end
  if a.emit_spec then
    require("hf").write_spec(spec, hf_info, a.emit_spec)
    return 0
  end
  local files = require("pack").render(spec, dirs)
  local final = require("write").write_pack(a.out, spec.name, files)
  io.write("kgen: wrote " .. final .. "/ (" .. #spec.kernels .. " kernels, isa "
    .. table.concat(spec.isa, " ") .. ")\n")
  return 0
end

-- Why: the only place that turns errors into exit statuses.
function M.main(argv, dirs)
  local status
  local ok, err = xpcall(function() status = M.run(argv, dirs) end, function(e)
    if util.is_user_error(e) then return e end
    return { internal = tostring(e) .. "\n" .. debug.traceback() }
  end)
  if ok then return status end
  if util.is_user_error(err) then
    io.stderr:write(err.msg:gsub("\n", " "), "\n")
    return 2
  end
  io.stderr:write("kgen: internal error: ", (err.internal:gsub("\n.*", "")), "\n")
  if os.getenv("KGEN_DEBUG") then io.stderr:write(err.internal, "\n") end
  return 1
end

return M
