return { name = "bad", rounding = "bankers", kernels = { { op = "rmsnorm", dim = 64 } } }
