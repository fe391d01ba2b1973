-- kgm: the ISA-matrix pack (make matrix).  Representative shapes of every
-- op in every dtype, so each op x dtype x shape x ISA is one matrix cell:
--   rmsnorm   4096 (Llama/Qwen hidden), 129 (odd: vector body + tail)
--   qk_norm   head_dim 128 with 32 Q / 8 KV heads, token-major (Qwen3-8B);
--             head_dim 80 with 12 Q / 4 KV heads, head-major (80 = 64 + 16:
--             not a multiple of the widest bf16 vector)
--   layernorm 768 (BERT/GPT-2), 1000 (tail on every ISA)
-- plus the "hf" rounding mode on the Qwen3 bf16 RMSNorm.
-- Kernel names are TAG_DTYPE, so cells read kgm_ln768_bf16_avx2.
--
-- To extend: add a shape to `shapes`, a dtype to `dtypes`, or an ISA to
-- `isa` ("cuda" once gen/cuda.lua is implemented: until then the generator
-- refuses it).  The matrix reads the pack's manifest; nothing else to edit.
local isa = { "scalar", "avx2", "avx512", "neon", "cuda" }
local dtypes = { "f32", "bf16", "f16" }
local shapes = {
  { tag = "rms4096", op = "rmsnorm", dim = 4096, eps = 1e-6 },
  { tag = "rms129", op = "rmsnorm", dim = 129, eps = 1e-6 },
  { tag = "qk128", op = "qk_norm", head_dim = 128, num_heads = 32,
    num_kv_heads = 8, layout = "token_major", eps = 1e-6 },
  { tag = "qk80hm", op = "qk_norm", head_dim = 80, num_heads = 12,
    num_kv_heads = 4, layout = "head_major", eps = 1e-6 },
  { tag = "ln768", op = "layernorm", dim = 768, eps = 1e-5 },
  { tag = "ln1000", op = "layernorm", dim = 1000, eps = 1e-5 },
}
local extra = {
  { name = "rms4096hf_bf16", op = "rmsnorm", dim = 4096, eps = 1e-6,
    dtype = "bf16", rounding = "hf" },
}

local kernels = {}
for d = 1, #dtypes do
  for s = 1, #shapes do
    local sh = shapes[s]
    kernels[#kernels + 1] = {
      name = sh.tag .. "_" .. dtypes[d], op = sh.op, dtype = dtypes[d],
      dim = sh.dim, head_dim = sh.head_dim, num_heads = sh.num_heads,
      num_kv_heads = sh.num_kv_heads, layout = sh.layout, eps = sh.eps,
    }
  end
end
for e = 1, #extra do kernels[#kernels + 1] = extra[e] end

return { name = "kgm", isa = isa, kernels = kernels }
