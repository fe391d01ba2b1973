/* kg_dispatch.h: which ISA level the dispatchers may use in this process.
 *
 * The cap is the environment variable KGEN_ISA (scalar|avx2|avx512|neon) or,
 * when unset or empty, the best level the CPU has.  It is resolved once,
 * thread-safely, on first use. */
#ifndef KG_DISPATCH_H
#define KG_DISPATCH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Resolve the cap without side effects: 0 and *isa set on success; -1 and a
 * one-line message in err (e.g. "KGEN_ISA=avx512: this CPU lacks avx512
 * (it has: scalar avx2)") when KGEN_ISA is unknown or not supported here. */
int kg_dispatch_resolve(int *isa, char *err, size_t errlen);

/* The cached cap.  On a bad KGEN_ISA it prints "kgen: <message>" to stderr
 * and exits with status 2 (a clear error instead of an illegal instruction). */
int kg_dispatch_cap(void);

/* 1 if a variant of level `isa` may run under cap `cap`: same level, or a
 * lower level of the same family (scalar is below everything), and the CPU
 * has it. */
int kg_dispatch_allows(int isa, int cap);

#ifdef __cplusplus
}
#endif
#endif
