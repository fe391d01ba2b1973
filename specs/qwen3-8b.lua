-- Qwen3-8B: hidden 4096, 32 query heads and 8 KV heads of 128, RMSNorm eps
-- 1e-6, bf16 weights and activations.  The input/post-attention norms and
-- the per-head QK-norm (Q and K normalized over head_dim before RoPE).
return {
  name = "qwen3_8b",
  dtype = "bf16",
  kernels = {
    { op = "rmsnorm", name = "input_norm", dim = 4096, eps = 1e-6 },
    { op = "qk_norm", head_dim = 128, num_heads = 32, num_kv_heads = 8,
      eps = 1e-6, layout = "token_major" },
  },
}
