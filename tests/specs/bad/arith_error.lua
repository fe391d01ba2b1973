local x = {}
return { name = "bad", kernels = { { op = "rmsnorm", dim = x + 1 } } }
