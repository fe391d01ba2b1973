return { name = "bad", isa = { "avx2", "avx2" }, kernels = { { op = "rmsnorm", dim = 64 } } }
