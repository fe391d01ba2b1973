/* kg_cpu.h: what ISA levels this CPU and OS can run.
 *
 * x86: CPUID feature bits plus XGETBV (OSXSAVE) so a level is reported only
 * when the OS saves its register state.  aarch64: getauxval(AT_HWCAP). */
#ifndef KG_CPU_H
#define KG_CPU_H

#include "kg_variant.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if this machine can execute code of ISA level `isa` (enum kg_isa),
 * else 0.  KG_ISA_SCALAR is always 1; KG_ISA_CUDA and KG_ISA_AUTO are 0. */
int kg_cpu_has(int isa);

/* 1 if the AVX-512 level is usable and the CPU also has AVX512_BF16
 * (vdpbf16ps), which the avx512 variants of bf16 RMSNorm then use for
 * their sums of squares; 0 otherwise, or when the environment
 * variable KGEN_AVX512_BF16 is "0" (read once, at first use). */
int kg_cpu_avx512_bf16(void);

/* 1 if the AVX-512 level is usable and its QK-norm kernels of bf16 heads
 * off cache-line alignment should take their line-frame twin: by default
 * on every x86 vendor but Intel (measured slower there, faster on AMD
 * Zen 4); the environment variable KGEN_BF16_LINE_FRAME "0" or "1"
 * overrides that (read once, at first use).  0 otherwise.  Either way the
 * kernels give the same bits. */
int kg_cpu_bf16_line_frame(void);

/* 1 if the AVX-512 level is usable but f16 kernels should run their AVX2
 * variant (dispatchers skip AVX-512 for them): by default on AMD family
 * 19h (Zen 4), where the AVX2 f16 kernels measured faster; the
 * environment variable KGEN_F16_AVX2 "0" or "1" overrides that (read
 * once, at first use).  0 otherwise.  Both variants meet the same bounds. */
int kg_cpu_f16_avx2(void);

/* 1 if the AVX2 level is usable and the QK-norm kernels (AVX2, AVX-512)
 * should take the prefetch choices measured on AMD Zen 5: token-major
 * heads ask for the next token's heads into L1 (prefetcht0) instead of L2
 * (prefetcht1), head-major rows ask 4 KiB (f32) or 16 KiB (16-bit) ahead
 * instead of the table's distance.  By default on AMD family 1Ah (Zen 5);
 * the environment variable KGEN_PREFETCH_ZEN5 "0" or "1" overrides that
 * (read once, at first use).  0 otherwise.  Either way the kernels give
 * the same bits. */
int kg_cpu_prefetch_zen5(void);

/* 1 if the AVX-512 level is usable and AVX-512 QK-norm kernels should
 * stream f32 heads of 1 KiB and more (head_dim 256) in calls of 16 MiB
 * of heads or more (KG_NT_BYTES) with each vector loaded twice instead of
 * held in registers: by default on AMD family 19h (Zen 4), where the
 * held rows measured slower from DRAM.  The environment variable
 * KGEN_STREAM_RELOAD "0" or "1" overrides that (read once, at first use).
 * 0 otherwise.  Either way the kernels give the same bits. */
int kg_cpu_stream_reload(void);

/* 1 if the AVX-512 level is usable and AVX-512 RMSNorm kernels should
 * read and write rows that stream out (non-temporal stores, KG_NT_BYTES)
 * as two streams, the halves of each row side by side: by default on
 * Intel CPUs, where one stream measured slower.  The environment
 * variable KGEN_NT_SPLIT "0" or "1" overrides that (read once, at first
 * use).  0 otherwise.  Either way the kernels give the same bits. */
int kg_cpu_nt_split(void);

/* 1 if the AVX-512 level is usable and AVX-512 RMSNorm and LayerNorm
 * kernels should read and write rows that stream out with x and y at
 * one offset into their cache lines (on line alignment, or both off it as two malloc'd
 * buffers are) as streams 3 to 4 KiB apart (parts of 4 KiB where a row
 * has 2 to 4 of them, halves of rows of 6 to 8 KiB): wherever
 * kg_cpu_nt_split() says so, and by default on AMD family 1Ah (Zen 5),
 * where those rows measured faster so while parts 8 KiB or 2 KiB apart
 * and rows realigned in registers measured slower.  KGEN_NT_SPLIT "0" or
 * "1" overrides it with kg_cpu_nt_split(); "4k" sets it and clears
 * kg_cpu_nt_split() (Zen 5's mix on any AVX-512 CPU).  0 otherwise.
 * Either way the kernels give the same bits. */
int kg_cpu_nt_split4k(void);

/* 1 if the AVX-512 level is usable and AVX-512 QK-norm kernels of bf16
 * heads should take long token-major calls (prefill) as one pipeline of
 * heads two ahead, each head loaded once: by default on Intel CPUs, where
 * such calls are bound by their 512-bit arithmetic.  The environment
 * variable KGEN_QK_PIPE "0" or "1" overrides that (read once, at first
 * use).  0 otherwise.  Either way the kernels give the same bits. */
int kg_cpu_qk_pipe(void);

/* 1 if the AVX-512 level is usable and AVX-512 LayerNorm kernels of
 * 16-bit rows should take large calls with x and y one offset into their
 * cache lines two rows at a time (their line frame's pairs): by default
 * on every AVX-512 CPU but AMD family 19h (Zen 4), where the pairs
 * measured slower than rows one at a time.  The environment variable
 * KGEN_LN_FRAME_PAIRS "0" or "1" overrides that (read once, at first
 * use).  0 otherwise.  Either way the kernels give the same bits. */
int kg_cpu_ln_frame_pairs(void);

/* The best CPU level this machine has (avx512 > avx2 > scalar; neon > scalar). */
int kg_cpu_best(void);

/* "scalar", "avx2", "avx512", "neon", "cuda", "auto"; "?" when out of range. */
const char *kg_cpu_isa_name(int isa);

/* enum kg_isa for a name above, or -1 when the name is unknown. */
int kg_cpu_isa_from_name(const char *name);

#ifdef __cplusplus
}
#endif
#endif
