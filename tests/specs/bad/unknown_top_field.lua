return { name = "bad", kernel = { { op = "rmsnorm", dim = 64 } } }
