-- The benchmark pack kgb: one kernel per benchmarked shape family and
-- dtype (f32, bf16, f16), rounding "single", every CPU ISA (a file per
-- ISA; each compiles to nothing off its architecture; no CUDA here).
--   rmsnorm   dim 4096 (4096 x 1 decode row, 4096 x 8192 from DRAM),
--             dim 1024 (1024 x 64, held in L2)
--   layernorm dim 768 (768 x 512), dim 4096 (4096 x 8192)
--   qk_norm   32 query + 8 KV heads, head_dim 64 / 128 / 256, token-major
--             (decode: 1 token; prefill: 2048 tokens in a fused QKV buffer)
-- bench/bench.c finds its variants by (op, dim, heads, dtype) in the
-- variant table, so the kernel names below are only labels.  (A spec runs
-- in an empty environment: no ipairs, hence the numeric loops.)
local dtypes = { "f32", "bf16", "f16" }
local head_dims = { 64, 128, 256 }
local kernels = {}
for i = 1, #dtypes do
  local dt = dtypes[i]
  kernels[#kernels + 1] = { op = "rmsnorm", name = "rms4096_" .. dt, dim = 4096,
    eps = 1e-6, dtype = dt }
  kernels[#kernels + 1] = { op = "rmsnorm", name = "rms1024_" .. dt, dim = 1024,
    eps = 1e-6, dtype = dt }
  kernels[#kernels + 1] = { op = "layernorm", name = "ln768_" .. dt, dim = 768,
    eps = 1e-5, dtype = dt }
  kernels[#kernels + 1] = { op = "layernorm", name = "ln4096_" .. dt, dim = 4096,
    eps = 1e-5, dtype = dt }
  for j = 1, #head_dims do
    local hd = head_dims[j]
    kernels[#kernels + 1] = { op = "qk_norm", name = "qk" .. hd .. "_" .. dt,
      head_dim = hd, num_heads = 32, num_kv_heads = 8, eps = 1e-6,
      layout = "token_major", dtype = dt }
  end
end

return {
  name = "kgb",
  rounding = "single",
  isa = { "scalar", "avx2", "avx512", "neon" },
  kernels = kernels,
}
