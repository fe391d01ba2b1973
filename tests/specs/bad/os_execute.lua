os.execute("touch /tmp/kgen_pwned")
return { name = "bad", kernels = { { op = "rmsnorm", dim = 64 } } }
