return { name = "bad", kernels = { { op = "rmsnorm", name = "Norm", dim = 64 }, { op = "rmsnorm", name = "norm", dim = 8 } } }
