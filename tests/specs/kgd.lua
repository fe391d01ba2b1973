-- kgd: the dispatch-proof pack (make test-dispatch).  One kernel per
-- op x dtype; tests/dispatch_proof.c runs every dispatching entry under
-- qemu CPU models and checks which ISA each one chose.  Adding a kernel
-- here means adding its name to KGD_KERNELS in tests/dispatch_proof.c (the
-- proof fails loudly until both agree).
local kernels = {}
local dtypes = { "f32", "bf16", "f16" }
for d = 1, #dtypes do
  local t = dtypes[d]
  kernels[#kernels + 1] = { op = "rmsnorm", name = "rms_" .. t, dim = 4096,
    eps = 1e-6, dtype = t }
  kernels[#kernels + 1] = { op = "qk_norm", name = "qk_" .. t, head_dim = 128,
    num_heads = 32, num_kv_heads = 8, eps = 1e-6, dtype = t }
  kernels[#kernels + 1] = { op = "layernorm", name = "ln_" .. t, dim = 1000,
    eps = 1e-5, dtype = t }
end

return { name = "kgd", isa = { "scalar", "avx2", "avx512", "neon" },
  kernels = kernels }
