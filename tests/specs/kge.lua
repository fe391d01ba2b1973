-- kge: the pack tests/test_exhaustive.c runs every bf16 and f16 bit pattern
-- through.  RMSNorm, QK-norm (GQA; token- and head-major) and LayerNorm,
-- a power-of-two width (128) and an odd one (37, all tail), bf16 and f16,
-- rounding "single" and "hf" (LayerNorm has only "single"), every CPU ISA.
local kernels = {}
for a = 1, 2 do
  local dt = ({ "bf16", "f16" })[a]
  for b = 1, 2 do
    local rnd = ({ "single", "hf" })[b]
    local sfx = "_" .. dt .. "_" .. rnd
    kernels[#kernels + 1] = { op = "rmsnorm", name = "rms128" .. sfx, dim = 128,
      eps = 1e-6, dtype = dt, rounding = rnd }
    kernels[#kernels + 1] = { op = "rmsnorm", name = "rms37" .. sfx, dim = 37,
      eps = 1e-6, dtype = dt, rounding = rnd }
    kernels[#kernels + 1] = { op = "qk_norm", name = "qkn128" .. sfx, head_dim = 128,
      num_heads = 4, num_kv_heads = 2, eps = 1e-6, layout = "token_major",
      dtype = dt, rounding = rnd }
    kernels[#kernels + 1] = { op = "qk_norm", name = "qkn37" .. sfx, head_dim = 37,
      num_heads = 3, num_kv_heads = 1, eps = 1e-6, layout = "head_major",
      dtype = dt, rounding = rnd }
  end
  kernels[#kernels + 1] = { op = "layernorm", name = "ln128_" .. dt, dim = 128,
    eps = 1e-5, dtype = dt }
  kernels[#kernels + 1] = { op = "layernorm", name = "ln37_" .. dt, dim = 37,
    eps = 1e-5, dtype = dt }
end
return {
  name = "kge",
  isa = { "scalar", "avx2", "avx512", "neon" },
  kernels = kernels,
}
