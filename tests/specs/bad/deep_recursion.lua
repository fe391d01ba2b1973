local function f(n) return f(n + 1) + 1 end
return { name = "bad", kernels = { { op = "rmsnorm", dim = f(1) } } }
