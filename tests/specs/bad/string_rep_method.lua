local big = ("x"):rep(1e9)
return { name = "bad", kernels = { { op = "rmsnorm", dim = #big } } }
