return { name = "bad", kernels = { { op = "rmsnorm", dim = 64, eps = os.execute("touch kgen_pwned") } } }
