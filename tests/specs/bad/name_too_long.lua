return { name = "a_very_long_pack_name_that_goes_on_and_on_and_on_forever", kernels = { { op = "rmsnorm", dim = 64 } } }
