return { name = "bad", kernels = { { op = "rmsnorm", dim = 4096.5 } } }
