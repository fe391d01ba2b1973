return { name = "m", isa = "scalar", kernels = { { op = "rmsnorm", dim = 3 } } }
