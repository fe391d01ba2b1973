-- GPT-2 (Hugging Face openai-community/gpt2, model_type gpt2): n_embd 768,
-- layer_norm_epsilon 1e-5; the config names no torch_dtype, so f32 (the
-- published weights are float32).  LayerNorm with gamma and beta (ln_1,
-- ln_2, ln_f).  Kernel names are the op names, as `kgen --hf` derives them.
return {
  name = "gpt2",
  dtype = "f32",
  kernels = {
    { op = "layernorm", dim = 768, eps = 1e-05 },
  },
}
