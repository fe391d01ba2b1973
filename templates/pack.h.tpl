/* $(banner) */
/* $(spec.name).h: the public interface of kernel pack $(spec.name).
 * Storage: float, kg_bf16, kg_f16 (raw uint16_t bits); strides count
 * elements; arithmetic is f32 inside.  NAME_KERNEL() dispatches to the best
 * ISA of this CPU (capped by KGEN_ISA); NAME_KERNEL_ISA() are the variants. */
#ifndef $(guard)
#define $(guard)

#include <stddef.h>
#include <stdint.h>
#include "kg_variant.h"
#include "kg_cpu.h"
#include "kg_dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

#define $(SPEC)_KGEN_VERSION "$(util.VERSION)"
#define $(SPEC)_SPEC_HASH "$(spec.hash)"

@ for _, k in ipairs(spec.kernels) do
@   local U = (spec.name .. "_" .. k.name):upper()
/* $(k.name): op $(k.op), $(k.dtype), rounding "$(k.rounding)" */
@   if k.op == "qk_norm" then
#define $(U)_HEAD_DIM $(util.int(k.dim))
#define $(U)_NUM_HEADS $(util.int(k.num_heads))
#define $(U)_NUM_KV_HEADS $(util.int(k.num_kv_heads))
#define $(U)_LAYOUT_$(k.layout:upper()) 1
@   end
#define $(U)_DIM $(util.int(k.dim))
#define $(U)_EPS $(util.f32(k.eps))
@   if k.weight_offset ~= 0 then
#define $(U)_WEIGHT_OFFSET $(util.f32(k.weight_offset))
@   end
@   for _, isa in ipairs(k.variants) do
$(proto(k, isa));
@   end
$(proto(k, nil));
/* The ISA $(spec.name)_$(k.name)() runs with ("scalar", "avx2", ...). */
const char *$(spec.name)_$(k.name)_isa(void);

@ end
@ for _, d in ipairs(extra_decls) do
$(d)
@ end
/* Every variant of this pack compiled for this architecture, plus one
 * KG_ISA_AUTO entry per kernel for the dispatcher. */
extern const kg_variant $(spec.name)_variants[];
extern const size_t $(spec.name)_num_variants;

#ifdef __cplusplus
}
#endif
#endif
