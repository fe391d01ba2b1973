return { name = "bad", kernels = { { op = "qk_norm", head_dim = true, num_heads = 32 } } }
