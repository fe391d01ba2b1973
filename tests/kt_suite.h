/* kt_suite.h: what the kernel test files share: the list of variants that
 * run here, the failure message buffer, the data helpers (kt_data.c) and
 * the shape of a test table entry.  test_kernels.c registers every entry of
 * every table once per applicable variant. */
#ifndef KT_SUITE_H
#define KT_SUITE_H

#include <check.h>
#include <stddef.h>

#include "kt_util.h"

#define KT_TIMEOUT 300 /* seconds per test case (CK_TIMEOUT_MULTIPLIER) */

extern const kg_variant **kt_runv; /* variants that run on this CPU */
extern size_t kt_nrun;
extern char kt_msg[KT_MSG];

/* Why: fail with the message the harness composed (it names the variant). */
#define KT_OK(expr)                                                            \
  do {                                                                         \
    if (!(expr))                                                               \
      ck_abort_msg("%s", kt_msg);                                              \
  } while (0)

/* Which variants a test applies to. */
enum {
  KT_RMS = 1,  /* rmsnorm */
  KT_QK = 2,   /* qk_norm */
  KT_LN = 4,   /* layernorm */
  KT_SIMD = 8, /* not the scalar variant itself (compares with it) */
  KT_HF = 16,  /* only rounding "hf" */
  KT_AUTO = 32 /* only the dispatching entry (isa == KG_ISA_AUTO) */
};

typedef struct kt_test {
  const char *id;         /* "<ID> <title>", the test case name's prefix */
  const TTest *const *fn; /* &test: START_TEST's pointers are variables */
  unsigned flags;
} kt_test;

extern const kt_test kt_qkn_tests[]; /* kt_qkn.c */
extern const size_t kt_qkn_ntests;
extern const kt_test kt_ln_tests[]; /* kt_ln.c */
extern const size_t kt_ln_ntests;

/* FALSIFY-QKN-005 / FALSIFY-LN-004 body (kt_qkn.c). */
void kt_simd_vs_scalar(int idx);

/* ---- kt_data.c ----------------------------------------------------------- */

void kt_seed(ref_rng *rng, const kg_variant *v, const char *test);
const kg_variant *kt_find(const char *kernel, int isa);
kt_shape kt_tight(size_t n);
void kt_random_row(const kt_case *c, size_t r, ref_rng *rng, double *vals);
void kt_fill_random(kt_case *c, ref_rng *rng);
void kt_fill_recipes(kt_case *c, const kt_recipe *list, size_t n, ref_rng *rng);
size_t kt_extreme_recipes(int dtype, kt_recipe *out); /* <= 32 recipes */
void kt_setup_random(kt_case *c, const kg_variant *v, size_t n,
                     const char *test);

#endif
