local größe = 64
return { name = "bad", kernels = { { op = "rmsnorm", dim = größe } } }
