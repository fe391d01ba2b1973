return { name = "bad", kernels = { { op = "rmsnorm", name = "num_variants", dim = 64 } } }
