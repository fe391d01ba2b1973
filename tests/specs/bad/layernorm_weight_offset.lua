return { name = "bad", kernels = { { op = "layernorm", dim = 64, weight_offset = 1 } } }
