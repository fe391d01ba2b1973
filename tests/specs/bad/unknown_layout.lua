return { name = "bad", kernels = { { op = "qk_norm", head_dim = 128, num_heads = 8, layout = "token-major" } } }
