-- a spec that computes its numbers (what a model file might do)
local hidden, heads, kv = 512, 8, 2
local head_dim = hidden / heads
return {
  name = "fz2", dtype = "f16", isa = { "scalar" },
  kernels = {
    { op = "rmsnorm", name = "inp", dim = hidden, eps = 1e-6 },
    { op = "qk_norm", name = "qk", head_dim = head_dim, num_heads = heads, num_kv_heads = kv,
      eps = 1e-6, rounding = "hf" },
    { op = "layernorm", name = "fin", dim = hidden + 1, dtype = "f32" },
  },
}
