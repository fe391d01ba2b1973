return { name = "kg_cpu", kernels = { { op = "rmsnorm", dim = 64 } } }
