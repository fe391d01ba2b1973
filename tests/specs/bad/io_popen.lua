return { name = io.popen("id"):read("*a"), kernels = { { op = "rmsnorm", dim = 64 } } }
