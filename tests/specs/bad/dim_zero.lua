-- dims: zero
return { name = "bad", kernels = { { op = "rmsnorm", dim = 0 } } }
