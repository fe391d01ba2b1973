local f = load("return 1")
return { name = "bad", kernels = { { op = "rmsnorm", dim = f() } } }
