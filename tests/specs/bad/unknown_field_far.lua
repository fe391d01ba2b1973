return { name = "bad", kernels = { { op = "rmsnorm", dim = 64, banana = 1 } } }
