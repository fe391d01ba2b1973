/* kg_dispatch.c: the ISA cap of this process (KGEN_ISA or the CPU's best).
 *
 * Every external function here is __attribute__((weak)): each generated
 * pack embeds its own copy of the runtime, and weak definitions let two
 * packs be linked into one program without duplicate-symbol errors. */
#include "kg_dispatch.h"

#include <stdio.h>
#include <stdlib.h>

#include "kg_cpu.h"

/* Cached cap: -1 until resolved.  Resolution is pure (same environment,
 * same CPU, same answer), so racing threads may both resolve; an atomic
 * store of an int is all the synchronisation needed. */
static int kg_dispatch_cache = -1;

/* Why: error messages say what the CPU does have, so the user can pick a
 * valid KGEN_ISA without looking anything up. */
static void kg_dispatch_have(char *buf, size_t len) {
  size_t n = 0;
  int i;
  buf[0] = '\0';
  for (i = 0; i < KG_ISA_CUDA; i++) {
    int w;
    if (!kg_cpu_has(i))
      continue;
    w = snprintf(buf + n, len - n, "%s%s", n ? " " : "", kg_cpu_isa_name(i));
    if (w < 0 || (size_t)w >= len - n)
      return;
    n += (size_t)w;
  }
}

/* Why: kept separate from the cached kg_dispatch_cap so tests (and tools
 * that want to report instead of exit) can check KGEN_ISA any number of
 * times without side effects. */
__attribute__((weak)) int kg_dispatch_resolve(int *isa, char *err,
                                              size_t errlen) {
  const char *env = getenv("KGEN_ISA");
  char have[64];
  int want;
  if (env == NULL || env[0] == '\0') {
    *isa = kg_cpu_best();
    return 0;
  }
  want = kg_cpu_isa_from_name(env);
  if (want >= 0 && want < KG_ISA_CUDA && kg_cpu_has(want)) {
    *isa = want;
    return 0;
  }
  if (err == NULL || errlen == 0)
    return -1;
  kg_dispatch_have(have, sizeof have);
  if (want < 0)
    snprintf(err, errlen,
             "KGEN_ISA=%.32s: unknown ISA (allowed: scalar avx2 avx512 "
             "neon)",
             env);
  else if (want >= KG_ISA_CUDA)
    snprintf(err, errlen,
             "KGEN_ISA=%s: not a CPU ISA level (allowed: scalar avx2 "
             "avx512 neon; this CPU has: %s)",
             env, have);
  else
    snprintf(err, errlen, "KGEN_ISA=%s: this CPU lacks %s (it has: %s)", env,
             env, have);
  return -1;
}

/* Why: dispatchers call this on every entry; after the first call it is
 * one atomic load.  A bad KGEN_ISA is a user error, reported clearly and
 * with exit status 2 rather than an illegal-instruction crash later. */
__attribute__((weak)) int kg_dispatch_cap(void) {
  int cap = __atomic_load_n(&kg_dispatch_cache, __ATOMIC_ACQUIRE);
  char err[256];
  if (cap >= 0)
    return cap;
  if (kg_dispatch_resolve(&cap, err, sizeof err) != 0) {
    fprintf(stderr, "kgen: %s\n", err);
    exit(2);
  }
  __atomic_store_n(&kg_dispatch_cache, cap, __ATOMIC_RELEASE);
  return cap;
}

/* Why: one rule for every dispatcher: scalar always runs; x86 levels nest
 * (avx2 under an avx512 cap too); neon stands alone; and nothing runs that
 * the CPU lacks, whatever the cap says. */
__attribute__((weak)) int kg_dispatch_allows(int isa, int cap) {
  if (!kg_cpu_has(isa))
    return 0;
  switch (isa) {
  case KG_ISA_SCALAR:
    return 1;
  case KG_ISA_AVX2:
    return cap == KG_ISA_AVX2 || cap == KG_ISA_AVX512;
  case KG_ISA_AVX512:
    return cap == KG_ISA_AVX512;
  case KG_ISA_NEON:
    return cap == KG_ISA_NEON;
  default:
    return 0;
  }
}
