return { name = "_Kgen", kernels = { { op = "rmsnorm", dim = 64 } } }
