return { name = "bad", kernels = { { op = "rms_norm", dim = 64 } } }
