return { name = "bad", kernels = { { op = "rmsnorm", name = "n", dim = 64 }, { op = "layernorm", dim = -4 } } }
