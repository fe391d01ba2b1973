/* kg_variant.h: the descriptor of one generated kernel variant.
 *
 * Every pack exports a table of these (NAME_variants[], NAME_num_variants)
 * so that tests, the ISA matrix and the benchmarks iterate the variants a
 * pack really holds instead of keeping a second list by hand.  Function
 * pointers in the table are type-erased wrappers (void * data pointers) that
 * forward to the typed kernels; calling them is well-defined C. */
#ifndef KG_VARIANT_H
#define KG_VARIANT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef KG_STORAGE_TYPES
#define KG_STORAGE_TYPES
typedef uint16_t kg_bf16; /* raw bfloat16 bits */
typedef uint16_t kg_f16;  /* raw IEEE binary16 bits */
#endif

enum kg_op { KG_OP_RMSNORM = 0, KG_OP_QK_NORM = 1, KG_OP_LAYERNORM = 2 };
enum kg_dtype { KG_F32 = 0, KG_BF16 = 1, KG_F16 = 2 };
enum kg_layout { KG_TOKEN_MAJOR = 0, KG_HEAD_MAJOR = 1 };
enum kg_rounding { KG_ROUND_SINGLE = 0, KG_ROUND_HF = 1 };

/* ISA levels.  KG_ISA_AUTO marks the dispatching entry point. */
enum kg_isa {
  KG_ISA_SCALAR = 0,
  KG_ISA_AVX2 = 1,   /* AVX2 + FMA + F16C, YMM state enabled by the OS */
  KG_ISA_AVX512 = 2, /* AVX-512 F/BW/DQ/VL, opmask+ZMM state enabled */
  KG_ISA_NEON = 3,   /* AArch64 Advanced SIMD */
  KG_ISA_CUDA = 4,   /* device code; never dispatched on the CPU */
  KG_ISA_AUTO = 5,   /* the unsuffixed NAME_KERNEL(): dispatcher */
  KG_ISA_COUNT = 6
};

typedef void (*kg_rmsnorm_fn)(size_t rows, const void *x, size_t x_stride,
                              const void *w, void *y, size_t y_stride,
                              float *rstd);
typedef void (*kg_qk_norm_fn)(size_t tokens, void *q, size_t q_stride,
                              void *k, size_t k_stride, const void *q_w,
                              const void *k_w);
typedef void (*kg_layernorm_fn)(size_t rows, const void *x, size_t x_stride,
                                const void *gamma, const void *beta, void *y,
                                size_t y_stride, float *mean, float *rstd);
/* CUDA variants: device pointers, a trailing stream, 0 on success. */
typedef int (*kg_rmsnorm_cuda_fn)(size_t rows, const void *x, size_t x_stride,
                                  const void *w, void *y, size_t y_stride,
                                  float *rstd, void *stream);
typedef int (*kg_qk_norm_cuda_fn)(size_t tokens, void *q, size_t q_stride,
                                  void *k, size_t k_stride, const void *q_w,
                                  const void *k_w, void *stream);
typedef int (*kg_layernorm_cuda_fn)(size_t rows, const void *x,
                                    size_t x_stride, const void *gamma,
                                    const void *beta, void *y, size_t y_stride,
                                    float *mean, float *rstd, void *stream);

typedef union kg_fn {
  kg_rmsnorm_fn rmsnorm;
  kg_qk_norm_fn qk_norm;
  kg_layernorm_fn layernorm;
  kg_rmsnorm_cuda_fn rmsnorm_cuda;
  kg_qk_norm_cuda_fn qk_norm_cuda;
  kg_layernorm_cuda_fn layernorm_cuda;
} kg_fn;

typedef struct kg_variant {
  const char *symbol;  /* C symbol of the typed kernel, e.g. "p_k_avx2" */
  const char *kernel;  /* kernel name within the pack */
  int op;              /* enum kg_op */
  int isa;             /* enum kg_isa */
  int dtype;           /* enum kg_dtype */
  int rounding;        /* enum kg_rounding */
  int layout;          /* enum kg_layout (qk_norm only) */
  size_t dim;          /* rmsnorm/layernorm: dim; qk_norm: head_dim */
  size_t num_heads;    /* qk_norm only, else 0 */
  size_t num_kv_heads; /* qk_norm only, else 0 */
  float eps;
  float weight_offset; /* y = x * rstd * (w + weight_offset) (Gemma: 1) */
  kg_fn fn;
} kg_variant;

#ifdef __cplusplus
}
#endif
#endif
