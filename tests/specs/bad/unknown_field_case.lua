return { name = "bad", kernels = { { op = "rmsnorm", Dim = 64 } } }
