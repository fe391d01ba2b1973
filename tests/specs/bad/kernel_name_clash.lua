-- "n_avx2" would declare bad_n_avx2, the avx2 variant of kernel "n"
return { name = "bad", kernels = { { op = "rmsnorm", name = "n", dim = 64 }, { op = "rmsnorm", name = "n_avx2", dim = 8 } } }
