return { name = "bad", kernels = { { op = "rmsnorm", dim = 1e12 } } }
