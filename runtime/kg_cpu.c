/* kg_cpu.c: which ISA levels this CPU *and* its OS can run.
 *
 * Every external function here is __attribute__((weak)): each generated
 * pack embeds its own copy of the runtime, and weak definitions let two
 * packs be linked into one program without duplicate-symbol errors (the
 * linker keeps one copy; all copies are identical in behaviour).  Helpers
 * and the cache are static, so each copy has its own, which is harmless. */
#include "kg_cpu.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1ul << 1) /* arch/arm64/include/uapi/asm/hwcap.h */
#endif
#endif

#define KG_CPU_VALID 0x80000000u /* set in the cache once detection ran */
#define KG_CPU_BF16 0x40000000u  /* AVX512_BF16 usable (kg_cpu_avx512_bf16) */
#define KG_CPU_LF16 0x20000000u  /* bf16 QK-norm line frame (kg_cpu_bf16_line_frame) */
#define KG_CPU_F16N 0x10000000u  /* f16 kernels take AVX2 (kg_cpu_f16_avx2) */
#define KG_CPU_PFZ5 0x08000000u  /* QK-norm prefetches tuned for Zen 5 (kg_cpu_prefetch_zen5) */
#define KG_CPU_RLD 0x04000000u   /* long f32 QK-norm calls load rows twice (kg_cpu_stream_reload) */
#define KG_CPU_LNP 0x02000000u   /* LayerNorm's line-frame rows in pairs (kg_cpu_ln_frame_pairs) */
#define KG_CPU_NT2 0x01000000u   /* streamed RMSNorm rows as two streams (kg_cpu_nt_split) */
#define KG_CPU_QKP 0x00800000u   /* long bf16 QK-norm calls as one pipeline (kg_cpu_qk_pipe) */
#define KG_CPU_NT4K 0x00400000u  /* aligned streamed RMSNorm rows in parts 4 KiB apart (kg_cpu_nt_split4k) */

/* Cached detection result: bit (1 << isa) per level the machine has, plus
 * KG_CPU_VALID.  Two threads racing both compute the same word, so a plain
 * atomic store (no lock, no once-flag) is enough. */
static unsigned kg_cpu_cache;

static const char *const kg_cpu_names[KG_ISA_COUNT] = {
    "scalar", "avx2", "avx512", "neon", "cuda", "auto"};

#if defined(__x86_64__) || defined(__i386__)
/* Why: XCR0 says which register state the OS saves on a context switch;
 * CPUID alone would report AVX on a kernel that never enabled YMM/ZMM.
 * Raw `xgetbv` so no -mxsave is needed; only called once OSXSAVE is set
 * (otherwise the instruction faults). */
static unsigned long long kg_cpu_xgetbv0(void) {
  unsigned eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((unsigned long long)edx << 32) | eax;
}

/* Why: the two vendor-dependent choices below read CPUID leaf 0's vendor
 * string (EBX, EDX, ECX: 12 characters) one way.  Not a C string. */
static int kg_cpu_vendor_is(const char id[12]) {
  unsigned a, r[3];
  if (!__get_cpuid(0, &a, &r[0], &r[2], &r[1]))
    return 0;
  return memcmp(r, id, 12) == 0;
}

/* Why: the one AVX-512 choice that went opposite ways on two cores: the
 * bf16 QK-norm line frame gained 2-7 % on a Zen 4 core and cost 7-12 %
 * on an Intel Xeon (Emerald Rapids), where split bf16 loads are cheap and
 * the frame's blends land on the ports its conversions fill
 * (bench/RESULTS.md runs 21 and 23). */
static int kg_cpu_intel(void) { return kg_cpu_vendor_is("GenuineIntel"); }

/* Why: two choices below hold for one AMD family each.  CPUID leaf 1's
 * family: the base field, plus the extended field when the base is 0xf
 * (0x19: Zen 3 and Zen 4; 0x1a: Zen 5); 0 for other vendors. */
static unsigned kg_cpu_amd_family(void) {
  unsigned a, b, c, d, base;
  if (!kg_cpu_vendor_is("AuthenticAMD") || !__get_cpuid(1, &a, &b, &c, &d))
    return 0;
  base = (a >> 8) & 0xfu;
  return base == 0xfu ? base + ((a >> 20) & 0xffu) : base;
}

/* Why: f16 kernels run faster as AVX2 than as AVX-512 on AMD's family 19h
 * (Zen 4; its Zen 3 cores have no AVX-512): there a zmm vcvtph2ps or
 * vcvtps2ph converts hardly more elements a cycle than the ymm form, and
 * every f16 shape of make bench took 1.04-1.27x as long with AVX-512 as
 * with AVX2 (bench/RESULTS.md run 33).  And long QK-norm calls streaming
 * f32 heads of 256 from DRAM ran 2048-token prefill at 1.03x the in-place
 * pass with the heads held in registers, 0.92x loading them twice
 * (run 56); not timed on Zen 5 or Intel cores.  And LayerNorm 4096 x
 * 8192 bf16 with x and y 16 bytes into their lines took 11.2 ms in the
 * line frame's pairs of rows, 6.2 one row at a time (run 56), where the
 * pairs had gained 8 % on a Zen 5 core (run 43). */
static int kg_cpu_amd_19h(void) { return kg_cpu_amd_family() == 0x19u; }

/* Why: QK-norm's next-token prefetches (prefetcht1, into L2) were taken
 * or lost on AMD's family 1Ah (Zen 5) by where the kernel's code lay in
 * physical memory: 2048-token prefill took 1.0x or up to 2.8x as long by
 * copy of one binary (bench/RESULTS.md run 50); into L1 (prefetcht0) it
 * ran at the faster figure on every copy.  Head-major rows there gain
 * from asking farther ahead (4 KiB f32, 16 KiB 16-bit, not 1 KiB).  On a
 * Zen 4 core L1 had measured 1.7-2x slower (its 32 KiB L1; run 12) and
 * 1 KiB ahead faster (run 28), so only family 1Ah. */
static int kg_cpu_amd_1ah(void) { return kg_cpu_amd_family() == 0x1au; }

/* Why: a level counts only if every feature its code uses is present AND
 * the OS enabled the state: AVX2 level = AVX+AVX2+FMA+F16C with YMM state
 * (XCR0 & 0x6); AVX-512 level = AVX2 level + F/BW/DQ/VL with opmask, ZMM
 * hi256 and hi16-ZMM state (XCR0 & 0xE6). */
static unsigned kg_cpu_detect_x86(void) {
  unsigned a, b, c, d, b7 = 0, mask = 0;
  unsigned long long xcr0;
  int avx_ok, ymm_os, zmm_os, avx512_ok;
  if (!__get_cpuid_count(1, 0, &a, &b, &c, &d))
    return 0;
  if (!((c >> 27) & 1u)) /* OSXSAVE: without it no AVX state, no xgetbv */
    return 0;
  avx_ok = ((c >> 12) & 1u) && ((c >> 28) & 1u) && ((c >> 29) & 1u);
  xcr0 = kg_cpu_xgetbv0();
  ymm_os = (xcr0 & 0x6u) == 0x6u;
  zmm_os = (xcr0 & 0xe6u) == 0xe6u;
  if (__get_cpuid_count(7, 0, &a, &b7, &c, &d) == 0)
    b7 = 0;
  if (avx_ok && ymm_os && ((b7 >> 5) & 1u)) {
    mask |= 1u << KG_ISA_AVX2;
    if (kg_cpu_amd_1ah())
      mask |= KG_CPU_PFZ5;
    avx512_ok = ((b7 >> 16) & 1u) && ((b7 >> 17) & 1u) &&
                ((b7 >> 30) & 1u) && ((b7 >> 31) & 1u);
    if (avx512_ok && zmm_os) {
      mask |= 1u << KG_ISA_AVX512;
      /* AVX512_BF16: CPUID.(EAX=7,ECX=1):EAX bit 5 */
      if (__get_cpuid_count(7, 1, &a, &b, &c, &d) && ((a >> 5) & 1u))
        mask |= KG_CPU_BF16;
      if (!kg_cpu_intel())
        mask |= KG_CPU_LF16;
      else
        mask |= KG_CPU_NT2 | KG_CPU_QKP;
      if (kg_cpu_amd_1ah())
        mask |= KG_CPU_NT4K;
      if (kg_cpu_amd_19h())
        mask |= KG_CPU_F16N | KG_CPU_RLD;
      else
        mask |= KG_CPU_LNP;
    }
  }
  return mask;
}
#endif

/* Why: the overrides of the vendor- and family-dependent answers share
 * one rule: the variable `name` "0" clears `bit` (one bit or several) in
 * mask `m`, "1" sets it where the level `need` is usable; anything else
 * keeps the default. */
static unsigned kg_cpu_env_switch(unsigned m, const char *name, unsigned bit, int need) {
  const char *e = getenv(name);
  if (e && strcmp(e, "0") == 0)
    return m & ~bit;
  if (e && strcmp(e, "1") == 0 && (m & (1u << need)))
    return m | bit;
  return m;
}

/* Why: one place that knows every architecture; the result never changes
 * while the process runs, so it is computed once and cached. */
static unsigned kg_cpu_mask(void) {
  unsigned m = __atomic_load_n(&kg_cpu_cache, __ATOMIC_ACQUIRE);
  if (m & KG_CPU_VALID)
    return m;
  m = 1u << KG_ISA_SCALAR;
#if defined(__x86_64__) || defined(__i386__)
  m |= kg_cpu_detect_x86();
#elif defined(__aarch64__) && defined(__linux__)
  if (getauxval(AT_HWCAP) & HWCAP_ASIMD)
    m |= 1u << KG_ISA_NEON;
#elif defined(__aarch64__)
  m |= 1u << KG_ISA_NEON; /* Advanced SIMD is mandatory in the AArch64 ABI */
#endif
  /* KGEN_AVX512_BF16=0 turns the AVX512_BF16 paths off (tests run both) */
  {
    const char *e = getenv("KGEN_AVX512_BF16");
    if (e && strcmp(e, "0") == 0)
      m &= ~KG_CPU_BF16;
  }
  /* KGEN_BF16_LINE_FRAME, KGEN_F16_AVX2, KGEN_PREFETCH_ZEN5,
   * KGEN_STREAM_RELOAD, KGEN_LN_FRAME_PAIRS, KGEN_NT_SPLIT and
   * KGEN_QK_PIPE (0 or 1)
   * override the vendor's or family's default (tests run both) */
  m = kg_cpu_env_switch(m, "KGEN_BF16_LINE_FRAME", KG_CPU_LF16, KG_ISA_AVX512);
  m = kg_cpu_env_switch(m, "KGEN_F16_AVX2", KG_CPU_F16N, KG_ISA_AVX512);
  m = kg_cpu_env_switch(m, "KGEN_PREFETCH_ZEN5", KG_CPU_PFZ5, KG_ISA_AVX2);
  m = kg_cpu_env_switch(m, "KGEN_STREAM_RELOAD", KG_CPU_RLD, KG_ISA_AVX512);
  m = kg_cpu_env_switch(m, "KGEN_LN_FRAME_PAIRS", KG_CPU_LNP, KG_ISA_AVX512);
  m = kg_cpu_env_switch(m, "KGEN_NT_SPLIT", KG_CPU_NT2 | KG_CPU_NT4K, KG_ISA_AVX512);
  /* KGEN_NT_SPLIT=4k: Zen 5's mix on any AVX-512 CPU (rows in parts 3-4
   * KiB apart split, the others one stream), so tests reach it anywhere */
  {
    const char *e = getenv("KGEN_NT_SPLIT");
    if (e && strcmp(e, "4k") == 0 && (m & (1u << KG_ISA_AVX512)))
      m = (m & ~KG_CPU_NT2) | KG_CPU_NT4K;
  }
  m = kg_cpu_env_switch(m, "KGEN_QK_PIPE", KG_CPU_QKP, KG_ISA_AVX512);
  m |= KG_CPU_VALID;
  __atomic_store_n(&kg_cpu_cache, m, __ATOMIC_RELEASE);
  return m;
}

/* Why: the question every dispatcher and test asks about one level. */
__attribute__((weak)) int kg_cpu_has(int isa) {
  if (isa < 0 || isa >= KG_ISA_CUDA) /* cuda/auto are never CPU levels */
    return 0;
  return (kg_cpu_mask() >> isa) & 1u;
}

/* Why: AVX-512 kernels of bf16 rows sum their squares with vdpbf16ps
 * when this CPU has it (one instruction per 32 elements instead of a
 * split and two FMAs); asked once per call, answered from the cache. */
__attribute__((weak)) int kg_cpu_avx512_bf16(void) {
  return (kg_cpu_mask() & KG_CPU_BF16) != 0;
}

/* Why: AVX-512 QK-norm kernels of bf16 heads off cache-line alignment
 * take their line-frame twin only where it measured faster (not on Intel
 * cores: kg_cpu_intel); asked once per call such heads make, from the
 * cache. */
__attribute__((weak)) int kg_cpu_bf16_line_frame(void) {
  return (kg_cpu_mask() & KG_CPU_LF16) != 0;
}

/* Why: the dispatchers of f16 kernels skip their AVX-512 variant where
 * the AVX2 one measured faster (kg_cpu_amd_19h); asked once, when a
 * dispatcher resolves, from the cache. */
__attribute__((weak)) int kg_cpu_f16_avx2(void) {
  return (kg_cpu_mask() & KG_CPU_F16N) != 0;
}

/* Why: AVX2 and AVX-512 QK-norm kernels take the prefetch choices
 * measured on Zen 5 where they measured faster (kg_cpu_amd_1ah): the next
 * token's heads into L1, head-major rows farther ahead; asked once per
 * call, from the cache. */
__attribute__((weak)) int kg_cpu_prefetch_zen5(void) {
  return (kg_cpu_mask() & KG_CPU_PFZ5) != 0;
}

/* Why: AVX-512 QK-norm kernels stream long calls of f32 heads of 256
 * with each vector loaded twice where that measured faster from DRAM
 * (kg_cpu_amd_19h); asked once per such call, from the cache. */
__attribute__((weak)) int kg_cpu_stream_reload(void) {
  return (kg_cpu_mask() & KG_CPU_RLD) != 0;
}

/* Why: AVX-512 LayerNorm kernels take 16-bit rows in y's line frame two
 * at a time where that measured faster (not kg_cpu_amd_19h); asked once
 * per such call, from the cache. */
__attribute__((weak)) int kg_cpu_ln_frame_pairs(void) {
  return (kg_cpu_mask() & KG_CPU_LNP) != 0;
}

/* Why: AVX-512 RMSNorm kernels read and write streamed rows (non-temporal
 * stores) as two streams half a row apart where that measured faster
 * (kg_cpu_intel: memory there serves two streams faster than one); asked
 * once per such call, from the cache. */
__attribute__((weak)) int kg_cpu_nt_split(void) {
  return (kg_cpu_mask() & KG_CPU_NT2) != 0;
}

/* Why: AVX-512 RMSNorm and LayerNorm kernels read and write streamed
 * rows with x and y at one offset into their lines (on line alignment,
 * or the line frame) in parts 3 to 4 KiB apart (RMSNorm 4096 f32 in
 * quarters, bf16 in halves; LayerNorm's pairs with each row in halves)
 * wherever all split rows are (Intel), and on AMD family 1Ah,
 * where those measured faster (bench/RESULTS.md runs 65-66) while parts
 * 8 KiB or 2 KiB apart and realigned rows did not; asked once per such
 * call, from the cache. */
__attribute__((weak)) int kg_cpu_nt_split4k(void) {
  return (kg_cpu_mask() & (KG_CPU_NT2 | KG_CPU_NT4K)) != 0;
}

/* Why: AVX-512 QK-norm kernels take long calls of bf16 heads as one
 * pipeline of heads two ahead, each loaded once, where that measured
 * faster (kg_cpu_intel: there those calls are bound by their 512-bit
 * arithmetic); asked once per such call, from the cache. */
__attribute__((weak)) int kg_cpu_qk_pipe(void) {
  return (kg_cpu_mask() & KG_CPU_QKP) != 0;
}

/* Why: the default cap when KGEN_ISA is unset; wider beats narrower. */
__attribute__((weak)) int kg_cpu_best(void) {
  if (kg_cpu_has(KG_ISA_AVX512))
    return KG_ISA_AVX512;
  if (kg_cpu_has(KG_ISA_AVX2))
    return KG_ISA_AVX2;
  if (kg_cpu_has(KG_ISA_NEON))
    return KG_ISA_NEON;
  return KG_ISA_SCALAR;
}

/* Why: the one spelling of each level, shared by KGEN_ISA, reports and
 * generated symbol suffixes. */
__attribute__((weak)) const char *kg_cpu_isa_name(int isa) {
  if (isa < 0 || isa >= KG_ISA_COUNT)
    return "?";
  return kg_cpu_names[isa];
}

/* Why: the inverse of kg_cpu_isa_name, exact and case-sensitive, so one
 * name means one level everywhere. */
__attribute__((weak)) int kg_cpu_isa_from_name(const char *name) {
  int i;
  if (name == NULL)
    return -1;
  for (i = 0; i < KG_ISA_COUNT; i++)
    if (strcmp(name, kg_cpu_names[i]) == 0)
      return i;
  return -1;
}
