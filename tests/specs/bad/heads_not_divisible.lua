return {
  name = "bad",
  kernels = { { op = "qk_norm", head_dim = 128, num_heads = 32, num_kv_heads = 6 } },
}
