return { name = "bad", kernels = { { op = "layernorm", dim = 64, rounding = "hf" } } }
