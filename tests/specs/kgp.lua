-- kgp: the pack tests/torch_parity.py builds as build/libkgp.so and checks
-- against PyTorch (the transformers RMSNorm formula computed by torch).
-- Model-sized RMSNorm rows and QK-norm heads (GQA), bf16 and f16, rounding
-- "hf" (asserted bit-parity) and "single" (reported), every CPU ISA.
local kernels = {}
for a = 1, 2 do
  local dt = ({ "bf16", "f16" })[a]
  for b = 1, 2 do
    local rnd = ({ "hf", "single" })[b]
    local sfx = "_" .. dt .. "_" .. rnd
    kernels[#kernels + 1] = { op = "rmsnorm", name = "rms4096" .. sfx, dim = 4096,
      eps = 1e-6, dtype = dt, rounding = rnd }
    kernels[#kernels + 1] = { op = "rmsnorm", name = "rms1024" .. sfx, dim = 1024,
      eps = 1e-6, dtype = dt, rounding = rnd }
    kernels[#kernels + 1] = { op = "qk_norm", name = "qkn128" .. sfx, head_dim = 128,
      num_heads = 16, num_kv_heads = 8, eps = 1e-6, layout = "token_major",
      dtype = dt, rounding = rnd }
    kernels[#kernels + 1] = { op = "qk_norm", name = "qkn64" .. sfx, head_dim = 64,
      num_heads = 16, num_kv_heads = 2, eps = 1e-6, layout = "token_major",
      dtype = dt, rounding = rnd }
  end
end
return {
  name = "kgp",
  isa = { "scalar", "avx2", "avx512", "neon" },
  kernels = kernels,
}
