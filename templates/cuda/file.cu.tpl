/* $(banner) */
/* $(spec.name)_cuda.cu: the CUDA variants of pack $(spec.name).
 * Kernels are specialized to the spec (dims, eps, head counts, layout are
 * constants); the extern "C" host wrappers declared in $(spec.name).h take
 * device pointers and a cudaStream_t passed as void *, enqueue one launch
 * and return its cudaError_t as int (0 on success).  Self-contained: builds
 * with a plain `nvcc -c $(spec.name)_cuda.cu` next to the pack's headers.
 *
 * Numerics are the CPU variants': f32 arithmetic on storage-rounded
 * inputs, rows held in registers, a sum of squares that is not finite in
 * f32 recomputed in double, NaN/Inf rows all-NaN, rounding "single"
 * (once on store) or "hf" (transformers' order). */
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <float.h>
#include <stdint.h>
#include "$(spec.name).h"

/* Helpers live in a namespace named after the pack, so two packs linked
 * into one program never share a definition. */
namespace $(ns) {

/* Storage <-> f32 per dtype.  Narrowing rounds to nearest even (as the
 * CPU's kg_convert.h); round() is the "hf" mode's round trip. */
struct kg_cu_f32 {
  typedef float S;
  static __device__ __forceinline__ float in(float v) { return v; }
  static __device__ __forceinline__ float out(float v) { return v; }
  static __device__ __forceinline__ float round(float v) { return v; }
};
struct kg_cu_bf16 {
  typedef kg_bf16 S;
  static __device__ __forceinline__ float in(kg_bf16 h) { return __uint_as_float((unsigned int)h << 16); }
  static __device__ __forceinline__ kg_bf16 out(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
  static __device__ __forceinline__ float round(float f) { return in(out(f)); }
};
struct kg_cu_f16 {
  typedef kg_f16 S;
  static __device__ __forceinline__ float in(kg_f16 h) { return __half2float(__ushort_as_half(h)); }
  static __device__ __forceinline__ kg_f16 out(float f) { return __half_as_ushort(__float2half_rn(f)); }
  static __device__ __forceinline__ float round(float f) { return in(out(f)); }
};

/* The integer type of one B-byte memory access. */
template <int B> struct kg_cu_raw;
template <> struct kg_cu_raw<2> { typedef unsigned short t; };
template <> struct kg_cu_raw<4> { typedef unsigned int t; };
template <> struct kg_cu_raw<8> { typedef uint2 t; };
template <> struct kg_cu_raw<16> { typedef uint4 t; };

template <class DT, int VE> union kg_cu_pack {
  typename kg_cu_raw<(int)sizeof(typename DT::S) * VE>::t raw;
  typename DT::S e[VE];
};

/* Why: VE contiguous elements in one access of VE * sizeof(S) bytes (up to
 * 16: ld.global.v4); p is aligned to that size (the host wrapper checks). */
template <class DT, int VE>
__device__ __forceinline__ void kg_cu_ld(const typename DT::S *p, float *v)
{
  kg_cu_pack<DT, VE> u;
  u.raw = *reinterpret_cast<const typename kg_cu_raw<(int)sizeof(typename DT::S) * VE>::t *>(p);
#pragma unroll
  for (int j = 0; j < VE; j++) v[j] = DT::in(u.e[j]);
}

template <class DT, int VE>
__device__ __forceinline__ void kg_cu_st(typename DT::S *p, const float *v)
{
  kg_cu_pack<DT, VE> u;
#pragma unroll
  for (int j = 0; j < VE; j++) u.e[j] = DT::out(v[j]);
  *reinterpret_cast<typename kg_cu_raw<(int)sizeof(typename DT::S) * VE>::t *>(p) = u.raw;
}

/* Row layout: L threads share a row of NV vectors of VE elements; thread
 * t holds vectors c*L + t, c < C (a warp's access is one contiguous span).
 * Why: only the last chunk can be partial; the test folds to true
 * elsewhere once the chunk loop is unrolled. */
template <int C, int L, int NV>
__device__ __forceinline__ bool kg_cu_has(int c, int t)
{
  return NV % L == 0 || c < C - 1 || c * L + t < NV;
}

/* Why: the whole row into registers, read once and kept in storage form
 * (16-bit dtypes: half the registers, more rows in flight per SM); absent
 * vectors, and every vector of a row that is not there (`on` false: past
 * the last row), are zero bits, which is 0.0 in every dtype. */
template <class DT, int VE, int C, int L, int NV>
__device__ __forceinline__ void kg_cu_ld_row(const typename DT::S *row, int t, bool on,
                                             kg_cu_pack<DT, VE> (&v)[C])
{
  typedef typename kg_cu_raw<(int)sizeof(typename DT::S) * VE>::t R;
#pragma unroll
  for (int c = 0; c < C; c++) {
    if (on && kg_cu_has<C, L, NV>(c, t))
      v[c].raw = *reinterpret_cast<const R *>(row + (c * L + t) * VE);
    else
#pragma unroll
      for (int j = 0; j < VE; j++) v[c].e[j] = 0;
  }
}

/* Why: butterfly sum within each aligned group of W lanes (W a power of
 * two, at most 32: a row's lanes; the whole warp takes part); a + b ==
 * b + a, so every lane of a group ends with bitwise the same total and
 * they all take the same branches afterwards. */
template <int W, typename F>
__device__ __forceinline__ F kg_cu_lanes_sum(F v)
{
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <typename F>
__device__ __forceinline__ F kg_cu_warp_sum(F v)
{
  return kg_cu_lanes_sum<32>(v);
}

/* Why: N butterfly sums interleaved (independent shuffles in flight). */
template <int W, int N, typename F>
__device__ __forceinline__ void kg_cu_lanes_sum_n(F (&v)[N])
{
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1)
#pragma unroll
    for (int k = 0; k < N; k++) v[k] += __shfl_xor_sync(0xffffffffu, v[k], o);
}

template <int N, typename F>
__device__ __forceinline__ void kg_cu_warp_sum_n(F (&v)[N])
{
  kg_cu_lanes_sum_n<32>(v);
}

/* Why: block sum: each warp reduces, lane 0s publish to red[NW], then every
 * warp reduces the NW partials the same way, so all threads hold the same
 * total after one barrier.  red must not be reused before the next barrier. */
template <int NW, typename F>
__device__ __forceinline__ F kg_cu_block_sum(F v, F *red)
{
  v = kg_cu_warp_sum(v);
  const int lane = threadIdx.x & 31;
  if (lane == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  v = lane < NW ? red[lane] : F(0);
  return kg_cu_warp_sum(v);
}

/* Why: 1/sqrt(v) rounded to f32 for v in [FLT_MIN, FLT_MAX]: the hardware
 * f32 estimate (2 ulp) refined by one Newton step in double has an error
 * near 2^-44, so its f32 rounding is (all but always) the correctly rounded
 * value the CPU gets from 1.0 / sqrt(v); no double division or sqrt. */
__device__ __forceinline__ float kg_cu_rsqrt(double v)
{
  const double y = (double)rsqrtf((float)v);
  return (float)(y * fma(-0.5 * v * y, y, 1.5));
}

__device__ __forceinline__ float kg_cu_nan(void) { return __int_as_float(0x7fc00000); }

/* Why: the vector layout needs every pointer aligned to the vector size. */
template <int B>
inline bool kg_cu_aligned(const void *p)
{
  return ((uintptr_t)p & (uintptr_t)(B - 1)) == 0;
}

/* Why: blocks for n row groups of `per` rows; kernels loop when the grid
 * is capped, so any size_t row count is covered.  The cap is a macro so
 * that tests can make it small and exercise the loop. */
#ifndef KG_CU_MAX_GRID
#define KG_CU_MAX_GRID 0x7fffffffu
#endif
/* Why: a call of at most KG_CU_FEW_ROWS rows takes the one-row-per-warp
 * twin of a several-rows-per-warp kernel, one of at most
 * KG_CU_FEW_WIDE_ROWS the early-weights twin of a block-row LayerNorm
 * (gen/cuda.lua, FEW_ROWS and FEW_WIDE_ROWS); macros so that tests with
 * few rows reach both kernels of a twin. */
#ifndef KG_CU_FEW_ROWS
#define KG_CU_FEW_ROWS $(few_rows)u
#endif
#ifndef KG_CU_FEW_WIDE_ROWS
#define KG_CU_FEW_WIDE_ROWS $(few_wide_rows)u
#endif
inline unsigned int kg_cu_grid(size_t n, size_t per)
{
  const size_t g = (n + per - 1) / per;
  return g > (size_t)(KG_CU_MAX_GRID) ? (unsigned int)(KG_CU_MAX_GRID) : (unsigned int)g;
}

/* Why: kg_fn is a C union; before C++20 an initializer cannot name its
 * member, so the variant table is filled through these at load time. */
struct kg_cu_fn {
  static kg_fn rmsnorm(kg_rmsnorm_cuda_fn f) { kg_fn u; u.rmsnorm_cuda = f; return u; }
  static kg_fn qk_norm(kg_qk_norm_cuda_fn f) { kg_fn u; u.qk_norm_cuda = f; return u; }
  static kg_fn layernorm(kg_layernorm_cuda_fn f) { kg_fn u; u.layernorm_cuda = f; return u; }
};

} /* namespace $(ns) */
using namespace $(ns);

@ for _, body in ipairs(bodies) do
$(body)
@ end

/* Type-erased forwarders for the variant table (void * data pointers). */
@ for _, e in ipairs(entries) do
static int $(e.sym)_v($(e.eparams))
{
  return $(e.sym)($(e.casts));
}
@ end

const kg_variant $(spec.name)_cuda_variants[] = {
@ for _, e in ipairs(entries) do
  { $(e.row), kg_cu_fn::$(e.op)($(e.sym)_v) },
@ end
};
const size_t $(spec.name)_cuda_num_variants =
    sizeof($(spec.name)_cuda_variants) / sizeof($(spec.name)_cuda_variants[0]);
