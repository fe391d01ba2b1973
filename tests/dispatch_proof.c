/* dispatch_proof.c: the dispatchers choose the right ISA and never run an
 * instruction the CPU lacks.
 *
 *   dispatch_proof --expect LEVEL
 *
 * Runs every dispatching entry (the KG_ISA_AUTO rows of pack kgd's variant
 * table, one per op x dtype) on random rows (the hard rows are the matrix's
 * job), checks the results against the float64 reference (tests/ref.c)
 * with the same tolerances and contract checks (padding, in place, rows 0),
 * and checks that NAME_KERNEL_isa() of every kernel and the process cap
 * (KGEN_ISA, else the CPU's best) equal LEVEL; f16 kernels expect avx2
 * instead of avx512 where kg_cpu_f16_avx2() says so (their dispatchers
 * skip AVX-512 there; `make test-dispatch` runs both settings).  Built static and run
 * natively and under `qemu-x86_64 -cpu Haswell` (AVX2, no AVX-512) and
 * `-cpu Nehalem` (neither) by `make test-dispatch`; a KGEN_ISA this CPU
 * lacks must end the process with status 2 and a "kgen: ..." line on
 * stderr, never SIGILL.  Exit status: 0 proven, 1 not, 2 usage (or the
 * dispatcher's own exit 2). */
#define KG_MATRIX_NO_MAIN
#include "matrix.c"

#include "kg_dispatch.h"
#include "kgd.h"

/* The kernels of tests/specs/kgd.lua.  Checked against the variant table at
 * run time, so the two cannot drift apart silently. */
#define KGD_KERNELS(X)                                                         \
  X(rms_f32)                                                                   \
  X(qk_f32)                                                                    \
  X(ln_f32) X(rms_bf16) X(qk_bf16) X(ln_bf16) X(rms_f16) X(qk_f16) X(ln_f16)

typedef struct kgd_isa_fn {
  const char *symbol;
  const char *(*isa)(void);
} kgd_isa_fn;

#define KGD_ENTRY(k) {"kgd_" #k, kgd_##k##_isa},
static const kgd_isa_fn kgd_isa_fns[] = {KGD_KERNELS(KGD_ENTRY)};
#define KGD_NFNS (sizeof kgd_isa_fns / sizeof kgd_isa_fns[0])

/* NAME_KERNEL_isa() of the dispatching entry `symbol`, or NULL. */
static const char *(*kgd_find_isa(const char *symbol))(void) {
  size_t i;
  for (i = 0; i < KGD_NFNS; i++)
    if (strcmp(kgd_isa_fns[i].symbol, symbol) == 0)
      return kgd_isa_fns[i].isa;
  return NULL;
}

int main(int argc, char **argv) {
  const char *expect = NULL, *env = getenv("KGEN_ISA");
  size_t i, nauto = 0, nok = 0;
  int l, want, ok = 1;
  if (argc == 3 && strcmp(argv[1], "--expect") == 0)
    expect = argv[2];
  want = expect ? kg_cpu_isa_from_name(expect) : -1;
  if (want < 0 || want >= KG_ISA_CUDA) {
    fprintf(stderr, "usage: dispatch_proof --expect scalar|avx2|avx512|neon\n");
    return 2;
  }
  /* Why: print what the CPU offers before anything resolves the cap, so a
   * bad KGEN_ISA fails inside the first dispatching call, where a user
   * would meet it. */
  printf("arch %s, cpu best=%s, has:", KGM_ARCH,
         kg_cpu_isa_name(kg_cpu_best()));
  for (l = 0; l < KG_ISA_CUDA; l++)
    if (kg_cpu_has(l))
      printf(" %s", kg_cpu_isa_name(l));
  printf("; KGEN_ISA=%s; f16 on AVX2: %s; expect %s\n", env ? env : "(unset)",
         kg_cpu_f16_avx2() ? "yes" : "no", expect);
  fflush(stdout);

  for (i = 0; i < kgd_num_variants; i++) {
    const kg_variant *v = &kgd_variants[i];
    const char *(*isa_fn)(void);
    const char *got, *want_v = expect;
    kgm_result r;
    char shape[96];
    if (v->isa != KG_ISA_AUTO)
      continue;
    nauto++;
    isa_fn = kgd_find_isa(v->symbol);
    if (isa_fn == NULL) {
      printf("  %-12s FAIL: not in KGD_KERNELS of tests/dispatch_proof.c\n",
             v->symbol);
      ok = 0;
      continue;
    }
    kgm_check(v, 1, 0, &r); /* the dispatching entry runs first */
    got = isa_fn();
    if (want == KG_ISA_AVX512 && v->dtype == KG_F16 && kg_cpu_f16_avx2())
      want_v = "avx2";
    kgm_shape_text(v, shape, sizeof shape);
    printf("  %-12s %-9s %-4s %-31s -> %-6s ", v->symbol, kgm_op_name(v->op),
           kgm_dtype_name(v->dtype), shape, got);
    if (strcmp(got, want_v) != 0) {
      printf("FAIL: dispatched to %s, expected %s\n", got, want_v);
      ok = 0;
    } else if (!r.pass) {
      printf("FAIL: %s (bound %s)\n", r.worst, r.bound);
      ok = 0;
    } else {
      char err[64];
      kgm_error_text(v, &r, err, sizeof err);
      printf("ok, %s\n", err);
      nok++;
    }
  }
  if (nauto != KGD_NFNS) {
    printf("  FAIL: pack kgd has %zu dispatching entries, KGD_KERNELS lists "
           "%zu\n",
           nauto, (size_t)KGD_NFNS);
    ok = 0;
  }
  if (kg_dispatch_cap() != want) {
    printf("  FAIL: process cap is %s, expected %s\n",
           kg_cpu_isa_name(kg_dispatch_cap()), expect);
    ok = 0;
  }
  if (ok)
    printf("PASS: %zu dispatching entries chose %s%s and matched the "
           "float64 reference\n",
           nok, expect,
           want == KG_ISA_AVX512 && kg_cpu_f16_avx2() ? " (f16: avx2)" : "");
  else
    printf("FAIL: dispatch proof (expect %s)\n", expect);
  return ok ? 0 : 1;
}
