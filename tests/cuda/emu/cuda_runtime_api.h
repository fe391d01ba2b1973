/* cuda_runtime_api.h (host emulation): the subset of the CUDA runtime API
 * that the kgen CUDA tests call, implemented on the host by kg_emu.cpp.
 *
 * Only for `make test-cuda-emu`: it lets the generated kernels and
 * tests/cuda/test_cuda.c run on a machine without a GPU, to check the
 * kernels' logic (indexing, layouts, reductions, slow paths, numerics
 * against the CPU).  It proves nothing about a real GPU; the test labels
 * every result "cuda-emu". */
#ifndef KG_EMU_CUDA_RUNTIME_API_H
#define KG_EMU_CUDA_RUNTIME_API_H

#include <stddef.h>

#define KG_CUDA_EMULATION 1

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorLaunchFailure = 719
} cudaError_t;

typedef enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
} cudaMemcpyKind;

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;

#define cudaStreamNonBlocking 0x01

struct cudaDeviceProp {
  char name[256];
  int major, minor;
  int multiProcessorCount;
};

cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int dev);
const char *cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetLastError(void);
cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaFree(void *p);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
