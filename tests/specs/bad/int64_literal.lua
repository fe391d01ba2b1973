return { name = "bad", kernels = { { op = "rmsnorm", dim = 64LL } } }
