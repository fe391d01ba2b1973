-- Qwen3-0.6B (Hugging Face Qwen/Qwen3-0.6B, model_type qwen3): hidden_size
-- 1024, 16 query heads and 8 KV heads of head_dim 128 (head_dim is given:
-- it is not hidden_size / heads), rms_norm_eps 1e-6, torch_dtype bfloat16.
-- The RMSNorm over the hidden size (input, post-attention and final norms)
-- and the per-head QK-norm (Q and K normalized over head_dim before RoPE).
-- Kernel names are the op names, as `kgen --hf` derives them.
return {
  name = "qwen3_0_6b",
  dtype = "bf16",
  kernels = {
    { op = "rmsnorm", dim = 1024, eps = 1e-06 },
    { op = "qk_norm", head_dim = 128, num_heads = 16, num_kv_heads = 8,
      eps = 1e-06, layout = "token_major" },
  },
}
