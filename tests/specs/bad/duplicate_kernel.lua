return {
  name = "bad",
  kernels = { { op = "rmsnorm", name = "norm", dim = 64 }, { op = "layernorm", name = "norm", dim = 64 } },
}
