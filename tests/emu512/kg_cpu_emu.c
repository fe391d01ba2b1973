/* kg_cpu_emu.c: the CPU answers of `make test-avx512-emu` (mk/emu512.mk).
 *
 * Strong definitions that replace the pack runtime's weak ones
 * (runtime/kg_cpu.c) in that one test binary: the AVX-512 level is
 * reported present because its variants run on the emulation in
 * tests/emu512/immintrin.h; scalar and AVX2 are the real CPU's (the
 * emulation itself needs AVX2, FMA and F16C).  KGEN_AVX512_BF16 and
 * KGEN_BF16_LINE_FRAME choose the AVX-512 twins as on a real core
 * (both on unless set to 0: the emulation has AVX512_BF16), and
 * KGEN_QK_PIPE the pipeline of bf16 heads (on unless set to 0). */
#include "kg_cpu.h"

#include <stdlib.h>
#include <string.h>

/* Why: an environment switch that is on unless it says "0". */
static int kge_env_on(const char *name) {
  const char *e = getenv(name);
  return !(e && strcmp(e, "0") == 0);
}

/* Why: AVX2 from the real CPU, AVX-512 always (emulated). */
int kg_cpu_has(int isa) {
  if (isa == KG_ISA_SCALAR || isa == KG_ISA_AVX512)
    return 1;
  if (isa == KG_ISA_AVX2)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return 0;
}

/* Why: the vdpbf16ps twins run unless KGEN_AVX512_BF16=0. */
int kg_cpu_avx512_bf16(void) { return kge_env_on("KGEN_AVX512_BF16"); }

/* Why: the bf16 line-frame twins run unless KGEN_BF16_LINE_FRAME=0. */
int kg_cpu_bf16_line_frame(void) { return kge_env_on("KGEN_BF16_LINE_FRAME"); }

/* Why: an environment switch that is off unless it says "1". */
static int kge_env_set(const char *name) {
  const char *e = getenv(name);
  return e && strcmp(e, "1") == 0;
}

/* Why: f16 dispatchers keep the emulated AVX-512 variant unless
 * KGEN_F16_AVX2=1 (the emulation is what this binary tests). */
int kg_cpu_f16_avx2(void) { return kge_env_set("KGEN_F16_AVX2"); }

/* Why: prefetches keep the generic choices unless KGEN_PREFETCH_ZEN5=1
 * (either way the same bits; the emulation's speed is not measured). */
int kg_cpu_prefetch_zen5(void) { return kge_env_set("KGEN_PREFETCH_ZEN5"); }

/* Why: long f32 QK-norm calls hold their heads unless
 * KGEN_STREAM_RELOAD=1 (same bits either way). */
int kg_cpu_stream_reload(void) { return kge_env_set("KGEN_STREAM_RELOAD"); }

/* Why: LayerNorm's line-frame rows go in pairs unless
 * KGEN_LN_FRAME_PAIRS=0, as on AVX-512 cores but Zen 4. */
int kg_cpu_ln_frame_pairs(void) { return kge_env_on("KGEN_LN_FRAME_PAIRS"); }

/* Why: long bf16 QK-norm calls of the AVX512_BF16 twins go through the
 * pipeline of heads (gen/kernels/pipe.lua) unless KGEN_QK_PIPE=0, so
 * the emulation checks its logic wherever no AVX-512 core is at hand
 * (same bits either way: KT-QKN-LONG). */
int kg_cpu_qk_pipe(void) { return kge_env_on("KGEN_QK_PIPE"); }

/* Why: the emulated level is the widest, as on an AVX-512 core. */
int kg_cpu_best(void) { return KG_ISA_AVX512; }
