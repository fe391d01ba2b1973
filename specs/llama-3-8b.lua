-- Llama 3 8B (Hugging Face meta-llama/Meta-Llama-3-8B, model_type llama):
-- hidden_size 4096, rms_norm_eps 1e-5, torch_dtype bfloat16.  Llama has no
-- QK-norm: the RMSNorm over the hidden size is all it needs.
-- Kernel names are the op names, as `kgen --hf` derives them.
return {
  name = "llama_3_8b",
  dtype = "bf16",
  kernels = {
    { op = "rmsnorm", dim = 4096, eps = 1e-05 },
  },
}
