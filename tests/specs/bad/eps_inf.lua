return { name = "bad", kernels = { { op = "qk_norm", head_dim = 64, num_heads = 2, eps = 1 / 0 } } }
