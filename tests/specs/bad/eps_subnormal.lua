return { name = "bad", kernels = { { op = "rmsnorm", dim = 64, eps = 1e-40 } } }
