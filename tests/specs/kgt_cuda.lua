-- kgt_cuda: the CUDA test pack.  Every op in f32, bf16 and f16, both
-- roundings, both QK-norm layouts, GQA, the warp-per-row path (dims up to
-- 256) and the block-per-row path (wider), dims that are not a multiple of
-- the vector width (element layout only), and the benchmark shapes
-- (Qwen3-8B QK-norm and the same heads at head_dim 64, RMSNorm/LayerNorm
-- 4096 and 8192 wide).  scalar is the
-- reference every CUDA variant is checked against.
return {
  name = "kgtc",
  dtype = "bf16",
  isa = { "scalar", "cuda" },
  kernels = {
    -- QK-norm (warp per (token, head) up to head_dim 256)
    { op = "qk_norm", name = "k01_qk_bf16", head_dim = 128, num_heads = 32, num_kv_heads = 8, eps = 1e-6 },
    { op = "qk_norm", name = "k02_qk_f32", dtype = "f32", head_dim = 128, num_heads = 32, num_kv_heads = 8 },
    { op = "qk_norm", name = "k03_qk_f16_hm", dtype = "f16", head_dim = 128, num_heads = 16,
      num_kv_heads = 4, layout = "head_major" },
    { op = "qk_norm", name = "k04_qk_bf16_hf", head_dim = 128, num_heads = 8, num_kv_heads = 2,
      rounding = "hf", weight_offset = 1 },
    { op = "qk_norm", name = "k05_qk_f16_hf_hm", dtype = "f16", head_dim = 64, num_heads = 4,
      num_kv_heads = 4, rounding = "hf", layout = "head_major" },
    { op = "qk_norm", name = "k06_qk_bf16_256", head_dim = 256, num_heads = 6, num_kv_heads = 2 },
    { op = "qk_norm", name = "k07_qk_f32_96", dtype = "f32", head_dim = 96, num_heads = 6, num_kv_heads = 3 },
    { op = "qk_norm", name = "k08_qk_f32_7", dtype = "f32", head_dim = 7, num_heads = 3, num_kv_heads = 1 },
    { op = "qk_norm", name = "k09_qk_bf16_1", head_dim = 1, num_heads = 2, num_kv_heads = 1 },
    { op = "qk_norm", name = "k10_qk_f16_300", dtype = "f16", head_dim = 300, num_heads = 4,
      num_kv_heads = 2, layout = "head_major" },
    { op = "qk_norm", name = "k11_qk_bf16_576", head_dim = 576, num_heads = 4, num_kv_heads = 1 },
    -- RMSNorm
    { op = "rmsnorm", name = "k12_rms_bf16_4096", dim = 4096, eps = 1e-6 },
    { op = "rmsnorm", name = "k13_rms_bf16_8192", dim = 8192, eps = 1e-6 },
    { op = "rmsnorm", name = "k14_rms_f32_8192", dtype = "f32", dim = 8192 },
    { op = "rmsnorm", name = "k15_rms_f16_8192", dtype = "f16", dim = 8192 },
    { op = "rmsnorm", name = "k16_rms_bf16_hf", dim = 2048, rounding = "hf", weight_offset = 1 },
    { op = "rmsnorm", name = "k17_rms_f16_hf", dtype = "f16", dim = 1024, rounding = "hf" },
    { op = "rmsnorm", name = "k18_rms_f32_16384", dtype = "f32", dim = 16384 },
    { op = "rmsnorm", name = "k19_rms_bf16_16383", dim = 16383 },
    { op = "rmsnorm", name = "k20_rms_f32_1000", dtype = "f32", dim = 1000 },
    { op = "rmsnorm", name = "k21_rms_f16_257", dtype = "f16", dim = 257 },
    { op = "rmsnorm", name = "k22_rms_f32_33", dtype = "f32", dim = 33 },
    { op = "rmsnorm", name = "k23_rms_bf16_1", dim = 1 },
    { op = "rmsnorm", name = "k24_rms_f32_tiny_eps", dtype = "f32", dim = 64, eps = 1.2e-38 },
    -- LayerNorm
    { op = "layernorm", name = "k25_ln_bf16_8192", dim = 8192 },
    { op = "layernorm", name = "k26_ln_f32_8192", dtype = "f32", dim = 8192 },
    { op = "layernorm", name = "k27_ln_f16_4096", dtype = "f16", dim = 4096 },
    { op = "layernorm", name = "k28_ln_f32_16384", dtype = "f32", dim = 16384 },
    { op = "layernorm", name = "k29_ln_bf16_4097", dim = 4097 },
    { op = "layernorm", name = "k30_ln_f16_768", dtype = "f16", dim = 768 },
    { op = "layernorm", name = "k31_ln_f32_100", dtype = "f32", dim = 100 },
    { op = "layernorm", name = "k32_ln_bf16_5", dim = 5 },
    -- QK-norm at head_dim 64 (Llama-3.2-1B's shape): the benchmark's short rows
    { op = "qk_norm", name = "k33_qk_bf16_64", head_dim = 64, num_heads = 32, num_kv_heads = 8, eps = 1e-5 },
  },
}
