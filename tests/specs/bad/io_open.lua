local f = io.open("/tmp/kgen_pwned", "w")
f:write("pwned")
return { name = "bad", kernels = { { op = "rmsnorm", dim = 64 } } }
