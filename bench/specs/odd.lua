-- bench-smoke's second pack: kernels that fit none of the standard shapes,
-- so the harness times them on shapes made from their own numbers
-- (bench/kb_shape.c): head-major and odd head counts, a head_dim of 16
-- whose K heads are narrower than a cache line, "hf" rounding, a weight
-- offset (Gemma), row lengths that are no multiple of the vector width.
return {
  name = "kbodd",
  isa = { "scalar", "avx2", "avx512", "neon" },
  kernels = {
    { op = "qk_norm", name = "qk96hm", head_dim = 96, num_heads = 12, num_kv_heads = 2,
      layout = "head_major", eps = 1e-6, dtype = "f32" },
    { op = "qk_norm", name = "qk16", head_dim = 16, num_heads = 2, num_kv_heads = 1,
      eps = 1e-6, dtype = "f16" },
    { op = "qk_norm", name = "qk64hf", head_dim = 64, num_heads = 4, num_kv_heads = 1,
      eps = 1e-6, dtype = "bf16", rounding = "hf" },
    { op = "rmsnorm", name = "rms100", dim = 100, eps = 1e-6, dtype = "f32", weight_offset = 1 },
    { op = "layernorm", name = "ln200", dim = 200, eps = 1e-5, dtype = "bf16" },
  },
}
