return { "bad", kernels = { { op = "rmsnorm", dim = 64 } } }
