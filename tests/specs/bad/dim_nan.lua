return { name = "bad", kernels = { { op = "layernorm", dim = 0 / 0 } } }
