return { name = "bäd", kernels = { { op = "rmsnorm", dim = 64 } } }
