/* $(banner) */
/* $(spec.name)_$(I.name).c: the $(I.name) variants of pack $(spec.name).
 * Each function carries its own target attribute, so this file compiles
 * with a plain `cc -O2 -c` and runs only when the dispatcher (or the
 * caller) has checked the CPU. */
#include "$(spec.name).h"
@ if I.guard then
#if $(I.guard)
@ end
@ for _, inc in ipairs(I.includes) do
#include <$(inc)>
@ end
#include <float.h>
#include <stdint.h>
#include <math.h>
#include "kg_convert.h"
#include "kg_cpu.h"

#define KG_UNLIKELY(c) __builtin_expect(!!(c), 0)
#define KG_LIKELY(c) __builtin_expect(!!(c), 1)
#define KG_NOINLINE __attribute__((noinline, cold))
#define KG_ALWAYS_INLINE inline __attribute__((always_inline))
#define KG_NAN __builtin_nanf("")
/* A row's body is written once and entered again in an inner block with
 * r, xr, xn, yr and its sums bound anew (the slow path's retake, the
 * non-temporal pairs' rows one at a time: nt_rows.c.tpl): shadowing on
 * purpose, so an embedding build's -Wshadow stays quiet here. */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wshadow"
#endif
/* KG_PIN: clang (not GCC) sinks a group's sums of squares, pure arithmetic on
 * loads that must stay above the step's stores, down past those stores to
 * where the next step uses them, so every loaded vector stays live across
 * the stores and spills (AVX2 QK-norm decode f32: 835 spill moves a call,
 * 1.23x GCC's time).  An empty volatile asm that takes and gives back the
 * finished sums keeps them where the source computes them; it emits no
 * instruction and changes no bit.  (rms_group.c.tpl) */
/* KG_REG: clang folds a store of a vcvtps2ph result into the
 * instruction's memory form, which a Zen 3 core runs at half the
 * throughput of the register form and a store; an empty asm that takes
 * and gives back the converted vector keeps it in a register. */
#if defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
#define KG_PIN(v) __asm__ volatile("" : "+x"(v))
#define KG_REG(v) __asm__("" : "+x"(v))
#else
#define KG_PIN(v) ((void)0)
#define KG_REG(v) ((void)0)
#endif
/* KG_ONE_LOAD: GCC (not clang) reads a loaded vector that has two uses (the
 * shift and the and of a bf16 split) twice, folding a second load into the
 * and: twice the loads of every bf16 input vector (AVX2 bf16 QK-norm
 * prefill 1.05x the time).  An empty asm that takes and gives back the
 * loaded vector makes it one register value. */
#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
#define KG_ONE_LOAD(v) __asm__("" : "+v"(v))
#else
#define KG_ONE_LOAD(v) ((void)0)
#endif
/* KG_OPAQUE: in a head-major decode step (heads a run-time stride apart,
 * grouped across heads) GCC (not clang) loads the next step's first head
 * at the end of the step and keeps its vectors on the stack until that
 * step reads them (AVX2 bf16 head-major decode 1.05x the time).  An empty
 * asm on each row pointer hides where it points; no instruction.  Also on
 * a QK-norm row's prefetch base (qk_norm.c.tpl): GCC would hoist each
 * line's offset into a register of its own and spill them. */
#if defined(__GNUC__) && !defined(__clang__)
#define KG_OPAQUE(p) __asm__("" : "+r"(p))
#else
#define KG_OPAQUE(p) ((void)0)
#endif
/* KG_IN_MEMORY: an empty asm that may read and write the array a, so that a
 * value stored there is loaded back from it (a group's rs, broadcast from
 * memory: isa/avx2.lua g4.stash) instead of being forwarded in registers. */
#if defined(__GNUC__)
#define KG_IN_MEMORY(a) __asm__ volatile("" : "+m"(a))
#else
#define KG_IN_MEMORY(a) ((void)0)
#endif
/* Output size from which out-of-place kernels use non-temporal stores
 * (override with -DKG_NT_BYTES=...), straight to y where y is 64-byte
 * aligned with a stride of whole cache lines and is not x. */
#ifndef KG_NT_BYTES
#define KG_NT_BYTES ((size_t)16 << 20)
#endif
#define KG_USE_NT(y, ys, rows, x) \
  ((rows) * (ys) * sizeof(*(y)) >= KG_NT_BYTES && ((uintptr_t)(y) & 63) == 0 && \
   (((ys) * sizeof(*(y))) & 63) == 0 && (const void *)(y) != (const void *)(x))
/* Any other y of that size that is not x: rows realigned in registers or
 * through an aligned stack row, then streamed (nt_rows.c.tpl). */
#define KG_USE_NT_STAGED(y, ys, rows, x) \
  ((rows) * (ys) * sizeof(*(y)) >= KG_NT_BYTES && (const void *)(y) != (const void *)(x))

@ if I.walign then
/* Calls of at least this many rows copy weights that are off cache-line
 * alignment to aligned stack arrays first (override with
 * -DKG_WALIGN_ROWS=...; see pack.lua walign). */
#ifndef KG_WALIGN_ROWS
#define KG_WALIGN_ROWS 8
#endif

@ end
$(prelude)
@ for _, body in ipairs(bodies) do
$(body)
@ end
@ if I.guard then
#else
/* Not this architecture: the $(I.name) variants are not built here. */
typedef int $(spec.name)_$(I.name)_unused;
#endif
@ end
