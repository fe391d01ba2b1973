local spec = { name = "bad", kernels = { { op = "rmsnorm", dim = 64 } } }
