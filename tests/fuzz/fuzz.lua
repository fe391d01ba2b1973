-- fuzz.lua: the small pack the libFuzzer targets and tests/test_edge.c run
-- (pack kgf): every op in f32, bf16 and f16, an odd dim below one vector,
-- a dim with a tail past several vectors, both QK layouts, the "hf"
-- rounding, a weight offset and the smallest eps.  Every CPU ISA the generator has.
local ks = {}
local types = { "f32", "bf16", "f16" }
for i = 1, #types do
  local t = types[i]
  ks[#ks + 1] = { op = "rmsnorm", name = "r7_" .. t, dim = 7, dtype = t }
  ks[#ks + 1] = { op = "rmsnorm", name = "r40_" .. t, dim = 40, eps = 1e-5, dtype = t }
  ks[#ks + 1] = { op = "qk_norm", name = "qt24_" .. t, head_dim = 24, num_heads = 4, num_kv_heads = 2,
    dtype = t }
  ks[#ks + 1] = { op = "qk_norm", name = "qh9_" .. t, head_dim = 9, num_heads = 2, num_kv_heads = 1,
    layout = "head_major", dtype = t }
  ks[#ks + 1] = { op = "layernorm", name = "l7_" .. t, dim = 7, dtype = t }
  ks[#ks + 1] = { op = "layernorm", name = "l33_" .. t, dim = 33, eps = 1e-3, dtype = t }
end
-- eps at the bottom of the f32 normals: squares of tiny rows underflow
ks[#ks + 1] = { op = "rmsnorm", name = "rtiny5_f32", dim = 5, eps = 1.2e-38 }
ks[#ks + 1] = { op = "rmsnorm", name = "rtiny5_bf16", dim = 5, eps = 1.2e-38, dtype = "bf16" }
ks[#ks + 1] = { op = "layernorm", name = "ltiny5_f32", dim = 5, eps = 1.2e-38 }
ks[#ks + 1] = { op = "rmsnorm", name = "rhf17_bf16", dim = 17, dtype = "bf16", rounding = "hf" }
ks[#ks + 1] = { op = "rmsnorm", name = "rhf17_f16", dim = 17, dtype = "f16", rounding = "hf" }
ks[#ks + 1] = { op = "rmsnorm", name = "rwo12_bf16", dim = 12, dtype = "bf16", weight_offset = 1 }
ks[#ks + 1] = { op = "qk_norm", name = "qwo8_f32", head_dim = 8, num_heads = 2, num_kv_heads = 2,
  weight_offset = 1 }
return { name = "kgf", isa = { "scalar", "avx2", "avx512", "neon" }, kernels = ks }
