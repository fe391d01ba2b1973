return { name = "int", kernels = { { op = "rmsnorm", dim = 64 } } }
