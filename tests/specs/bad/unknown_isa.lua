return { name = "bad", isa = { "scalar", "sse4" }, kernels = { { op = "rmsnorm", dim = 64 } } }
