/* CUDA variants (in $(spec.name)_cuda.cu, built with nvcc): the CPU
 * arguments as device pointers plus a cudaStream_t passed as void * (NULL:
 * the legacy default stream).  Each enqueues its kernel launch and returns
 * the launch's cudaError_t as int, 0 on success; it does not synchronize. */
@ for _, p in ipairs(protos) do
$(p);
@ end
/* The CUDA variants as a table (isa KG_ISA_CUDA, fn.rmsnorm_cuda, ...). */
extern const kg_variant $(spec.name)_cuda_variants[];
extern const size_t $(spec.name)_cuda_num_variants;
