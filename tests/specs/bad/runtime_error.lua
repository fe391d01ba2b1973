local k
return { name = "bad", kernels = { { op = "rmsnorm", dim = k.dim } } }
