return { name = "bad", kernels = { { op = "rmsnorm", eps = 1e-6 } } }
