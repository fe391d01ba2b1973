/* cuda_runtime.h (host emulation): the device-side vocabulary the
 * generated kernels use, mapped onto host C++ (see cuda_runtime_api.h).
 * A launch runs its blocks one after another; the threads of a block are
 * cooperative host contexts that switch at __syncthreads() and warp
 * shuffles, so barrier and shuffle semantics (and the sum orders) are the
 * GPU's. */
#ifndef KG_EMU_CUDA_RUNTIME_H
#define KG_EMU_CUDA_RUNTIME_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <utility>

#include "cuda_runtime_api.h"
#include "kg_convert.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

struct dim3 {
  unsigned int x, y, z;
  dim3(unsigned int a = 1, unsigned int b = 1, unsigned int c = 1) : x(a), y(b), z(c) {}
};
/* aligned like CUDA's, so that UBSan flags a misaligned vector access */
struct alignas(8) uint2 { unsigned int x, y; };
struct alignas(16) uint4 { unsigned int x, y, z, w; };

extern dim3 threadIdx, blockIdx, blockDim, gridDim;

/* the scheduler (kg_emu.cpp) */
void kg_emu_syncthreads(void);
void kg_emu_warp_exchange(const void *mine, void *theirs, unsigned int lane, size_t n);
typedef void (*kg_emu_body)(void *);
cudaError_t kg_emu_launch(dim3 grid, dim3 block, kg_emu_body body, void *closure);

inline void __syncthreads(void) { kg_emu_syncthreads(); }

template <typename F>
inline F __shfl_xor_sync(unsigned int mask, F v, int o)
{
  F r;
  (void)mask;
  kg_emu_warp_exchange(&v, &r, (threadIdx.x & 31u) ^ (unsigned int)o, sizeof(F));
  return r;
}

/* every lane of the warp calls it (as the kernels do): an OR butterfly */
inline int __any_sync(unsigned int mask, int p)
{
  int v = p != 0;
  for (int o = 16; o > 0; o >>= 1) v |= __shfl_xor_sync(mask, v, o);
  return v;
}

inline float __uint_as_float(unsigned int u) { float f; memcpy(&f, &u, 4); return f; }
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
/* The GPU estimate is within 2 ulp; the exact value stands in for it. */
inline float rsqrtf(float x) { return (float)(1.0 / sqrt((double)x)); }

typedef unsigned short __half;
typedef unsigned short __nv_bfloat16;
inline __half __ushort_as_half(unsigned short h) { return h; }
inline unsigned short __half_as_ushort(__half h) { return h; }
inline float __half2float(__half h) { return kg_f16_to_f32(h); }
inline __half __float2half_rn(float f) { return kg_f32_to_f16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return kg_f32_to_bf16(f); }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h; }

template <class... A, size_t... I>
inline void kg_emu_invoke(void (*f)(A...), void **args, std::index_sequence<I...>)
{
  f(*static_cast<A *>(args[I])...);
}

template <class... A>
struct kg_emu_call {
  void (*f)(A...);
  void **args;
  static void run(void *self)
  {
    kg_emu_call *c = static_cast<kg_emu_call *>(self);
    kg_emu_invoke(c->f, c->args, std::index_sequence_for<A...>());
  }
};

template <class... A>
inline cudaError_t cudaLaunchKernel(void (*f)(A...), dim3 grid, dim3 block, void **args,
                                    size_t shared = 0, cudaStream_t stream = 0)
{
  kg_emu_call<A...> c = { f, args };
  (void)shared;
  (void)stream;
  return kg_emu_launch(grid, block, &kg_emu_call<A...>::run, &c);
}

#endif
