return { name = "bad", kernels = { [1] = { op = "rmsnorm", dim = 64 }, [3] = { op = "rmsnorm", name = "b", dim = 64 } } }
