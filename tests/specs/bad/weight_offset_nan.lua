return { name = "bad", kernels = { { op = "rmsnorm", dim = 64, weight_offset = 0 / 0 } } }
