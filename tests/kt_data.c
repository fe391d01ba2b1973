/* kt_data.c: test data and small helpers shared by the kernel test
 * files: seeds, the accuracy mix of rows, extreme rows, sibling lookup. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kgt.h"
#include "kt_suite.h"

/* Why: same data for every ISA of a kernel (so results are comparable),
 * different data per test. */
void kt_seed(ref_rng *rng, const kg_variant *v, const char *test) {
  ref_rng_seed(rng, ref_hash_str(v->kernel, ref_hash_str(test, 0)));
}

/* Why: a sibling variant of the same kernel (scalar for QKN-005, the
 * dispatcher's pick for KT-DISP-001). */
const kg_variant *kt_find(const char *kernel, int isa) {
  size_t i;
  for (i = 0; i < kgt_num_variants; i++)
    if (kgt_variants[i].isa == isa &&
        strcmp(kgt_variants[i].kernel, kernel) == 0)
      return &kgt_variants[i];
  return NULL;
}

/* Why: default geometry: tight rows, statistics requested. */
kt_shape kt_tight(size_t n) {
  kt_shape s;
  memset(&s, 0, sizeof s);
  s.n = n;
  s.want_rstd = 1;
  s.want_mean = 1;
  return s;
}

/* Why: the mix of rows accuracy is measured on, by r % 8: N(0,s), offset
 * rows, positive, sparse, per-element mixed scales, wide scales (1e-20 ..
 * 1e20; f16 1e-4 .. 1e4), layernorm's hard rows (c + N(0, sigma) with
 * c/sigma = 2^(p-4): 1e4 + N(0,1e-2) in f32) else unit scale, and wide
 * positive rows. */
void kt_random_row(const kt_case *c, size_t r, ref_rng *rng, double *vals) {
  double lo, hi, wlo, whi, s;
  kt_recipe rc = {KT_NORMAL, 1.0, 0.0, ""};
  kt_scale_range(c->dtype, 0, &lo, &hi);
  kt_scale_range(c->dtype, 1, &wlo, &whi);
  s = ref_rng_pow10(rng, lo, hi);
  switch (r % 8) {
  case 0:
    rc.scale = s;
    break;
  case 1:
    rc.scale = s;
    rc.offset = (ref_rng_next(rng) & 1 ? 10.0 : -10.0) * s;
    if (c->dtype == REF_F16 && s > 1e3)
      rc.offset /= 10;
    break;
  case 2:
    rc.kind = KT_POSITIVE;
    rc.scale = s;
    break;
  case 3:
    rc.kind = KT_SPARSE;
    rc.scale = s;
    break;
  case 4:
    rc.kind = KT_MIXED;
    rc.scale = c->dtype == REF_F16 ? s / 1e2 : s;
    break;
  case 5:
    rc.scale = ref_rng_pow10(rng, wlo, whi);
    break;
  case 6:
    if (c->op == KG_OP_LAYERNORM) {
      double sig = c->dtype == REF_F32 ? 1e-2 : 1.0;
      rc.scale = sig;
      rc.offset = ldexp(sig, ref_precision(c->dtype) - 4) *
                  (c->dtype == REF_F32 ? 0.95367431640625 : 1.0);
    }
    break;
  default:
    rc.kind = KT_POSITIVE;
    rc.scale = ref_rng_pow10(rng, wlo, whi);
    break;
  }
  kt_gen(c->dtype, c->dim, &rc, rng, vals);
}

/* Why: fill every row of a case with the accuracy mix. */
void kt_fill_random(kt_case *c, ref_rng *rng) {
  size_t r, nrows = kt_rows(c);
  double *vals = malloc(sizeof(double) * c->dim);
  for (r = 0; r < nrows; r++) {
    kt_random_row(c, r, rng, vals);
    kt_set_row(c, r, vals);
  }
  free(vals);
}

/* Why: fill rows from a list of recipes, row r gets list[r % n]. */
void kt_fill_recipes(kt_case *c, const kt_recipe *list, size_t n,
                     ref_rng *rng) {
  size_t r, nrows = kt_rows(c);
  double *vals = malloc(sizeof(double) * c->dim);
  for (r = 0; r < nrows; r++) {
    kt_gen(c->dtype, c->dim, &list[r % n], rng, vals);
    kt_set_row(c, r, vals);
  }
  free(vals);
}

/* Why: overflow and underflow rows per dtype: sum(x^2) past FLT_MAX
 * (1e20, 1e30, 3e38, FLT_MAX), huge values mixed with tiny ones, one huge
 * spike in a tiny row, tiny and subnormal rows (x^2 near and below
 * FLT_MIN, where a tiny eps no longer hides the underflow of x^2), 1e30
 * offsets (layernorm).
 * f16 cannot overflow an f32 sum, so it gets its own extremes (65504,
 * subnormals). */
size_t kt_extreme_recipes(int dtype, kt_recipe *out) {
  size_t n = 0;
  double mx = ref_max_T(dtype);
  if (dtype == REF_F16) {
    const kt_recipe f16[] = {
        {KT_NORMAL, 2e4, 0, "N(0,2e4)"},
        {KT_ALT, 65504, 0, "+-65504"},
        {KT_CONST, 0, 65504, "const 65504"},
        {KT_POSITIVE, 65504, 0, "U(0,65504)"},
        {KT_BIGSMALL, 6e4, 6e-8, "6e4 mixed with 6e-8"},
        {KT_ONEHOT, 65504, 6e-8, "one 65504 in 6e-8"},
        {KT_ONEHOT, -65504, 0, "one -65504 in zeros"},
        {KT_NORMAL, 1e-6, 0, "subnormal N(0,1e-6)"},
        {KT_NORMAL, 1e3, 3e4, "3e4 + N(0,1e3)"},
        {KT_CONST, 0, -6e-8, "const -6e-8"},
    };
    memcpy(out, f16, sizeof f16);
    return sizeof f16 / sizeof f16[0];
  }
  {
    const kt_recipe big[] = {
        {KT_NORMAL, 1e30, 0, "N(0,1e30)"},
        {KT_ALT, 1e30, 0, "+-1e30"},
        {KT_NORMAL, 1e20, 0, "N(0,1e20)"},
        {KT_NORMAL, 2e19, 0, "N(0,2e19)"},
        {KT_POSITIVE, 3.3e38, 0, "U(0,3.3e38)"},
        {KT_ALT, 3e38, 0, "+-3e38"},
        {KT_CONST, 0, 3e38, "const 3e38"},
        {KT_CONST, 0, mx, "const max"},
        {KT_ALT, mx, 0, "+-max"},
        {KT_BIGSMALL, 3e38, 1e-30, "3e38 mixed with 1e-30"},
        {KT_ONEHOT, 3e38, 1e-38, "one 3e38 in 1e-38"},
        {KT_ONEHOT, -3e38, 0, "one -3e38 in zeros"},
        {KT_BIGSMALL, 1e30, 1e-40, "1e30 mixed with 1e-40"},
        {KT_NORMAL, 1e-30, 0, "N(0,1e-30)"},
        {KT_NORMAL, 1e-19, 0, "N(0,1e-19): x^2 ~ FLT_MIN"},
        {KT_NORMAL, 3e-20, 0, "N(0,3e-20): x^2 subnormal"},
        {KT_NORMAL, 1e-38, 0, "N(0,1e-38)"},
        {KT_NORMAL, 1e-42, 0, "subnormal N(0,1e-42)"},
        {KT_NORMAL, 1e28, 1e30, "1e30 + N(0,1e28)"},
        {KT_NORMAL, 1.0, -1e30, "-1e30 + N(0,1)"},
        {KT_SPARSE, 1e36, 0, "sparse 1e36"},
    };
    for (n = 0; n < sizeof big / sizeof big[0]; n++)
      out[n] = big[n];
  }
  return n;
}

/* Why: a case with `n` rows (tokens) of the accuracy mix and random
 * weights, run once; most tests start here. */
void kt_setup_random(kt_case *c, const kg_variant *v, size_t n,
                     const char *test) {
  ref_rng rng;
  kt_shape s = kt_tight(n);
  kt_seed(&rng, v, test);
  kt_case_init(c, v, &s);
  kt_set_params(c, KT_W_RANDOM, &rng);
  kt_fill_random(c, &rng);
}
