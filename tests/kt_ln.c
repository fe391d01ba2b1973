/* kt_ln.c: the LayerNorm contract (layernorm-kernel-v1) as Check tests:
 * FALSIFY-LN-001..007 with DESIGN.md's corrections (LN-002: var(y) =
 * s2/(s2+eps); LN-006: the tolerance grows with |c| rstd; LN-004 allows the
 * rstd-amplified difference of the two means, as the layernorm bound). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgt.h"
#include "kt_suite.h"

/* ---- FALSIFY-LN-001 / 002 ------------------------------------------------ */

/* Why: shared by LN-001 and LN-002: the per-row sums over the kernel's y,
 * its reference and the per-element bound b_i. */
typedef struct kt_ln_stats {
  long double my, vy, mref, mb, mrb, mb2, mbeta;
  double mu, rstd, var_x;
} kt_ln_stats;

/* Why: per-row sums over y, its reference and the bound b_i. */
static void kt_ln_row_stats(const kt_case *c, size_t r, double *ref,
                            kt_ln_stats *st) {
  kt_row row;
  size_t i, d = c->dim;
  long double sy = 0, sy2 = 0;
  double mabs;
  memset(st, 0, sizeof *st);
  kt_row_get(c, r, &row);
  kt_row_ref(c, r, ref, &st->rstd, &st->mu);
  st->var_x = 1.0 / (st->rstd * st->rstd) - c->eps;
  mabs = kt_mean_abs(c, row.in);
  for (i = 0; i < d; i++) {
    long double y = kt_get(c, row.out, i);
    double x = kt_get(c, row.in, i), g = kt_get(c, row.w, i),
           be = kt_get(c, row.b, i);
    double b = kt_bound_elem(c, ref[i], x, g, be, st->mu, st->rstd, mabs);
    sy += y;
    sy2 += y * y;
    st->mref += ref[i];
    st->mb += b;
    st->mrb += fabs(ref[i]) * b;
    st->mb2 += (long double)b * b;
    st->mbeta += be;
  }
  st->my = sy / d;
  st->vy = sy2 / d - st->my * st->my;
  st->mref /= d;
  st->mb /= d;
  st->mrb /= d;
  st->mb2 /= d;
  st->mbeta /= d;
}

/* Why: LN-001 centering: with gamma = 1, mean(y) = mean(beta) exactly in
 * reals; each y_i is within its bound b_i, so the mean within mean(b). */
START_TEST(t_ln001) {
  const kg_variant *v = kt_runv[_i];
  int mode;
  for (mode = 0; mode < 2; mode++) {
    kt_case c;
    ref_rng rng;
    size_t r;
    kt_shape s = kt_tight(16);
    double *ref = malloc(sizeof(double) * v->dim);
    kt_seed(&rng, v, "ln001");
    kt_case_init(&c, v, &s);
    kt_set_params(&c, mode ? KT_W_UNIT : KT_W_UNIT_BETA, &rng);
    kt_fill_random(&c, &rng);
    kt_run(&c, NULL);
    KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
    for (r = 0; r < c.n; r++) {
      kt_ln_stats st;
      kt_ln_row_stats(&c, r, ref, &st);
      ck_assert_msg(fabsl(st.my - st.mbeta) <= st.mb,
                    "%s: row %zu (kind %zu of the accuracy mix), gamma = 1, "
                    "beta %s: mean(y) = %.9Lg, mean(beta) = %.9Lg, |diff| "
                    "%.3Lg > mean bound %.3Lg",
                    v->symbol, r, r % 8, mode ? "0" : "random", st.my, st.mbeta,
                    fabsl(st.my - st.mbeta), st.mb);
    }
    free(ref);
    kt_case_free(&c);
  }
}
END_TEST

/* Why: corrected LN-002: with gamma = 1, beta = 0, var(y) = s2/(s2 + eps)
 * (not 1; rows with s2 ~ eps and << eps are included).  With y = ref + e,
 * |e_i| <= b_i: |var(y) - var(ref)| <= 2 mean(|ref| b) + mean(b^2). */
START_TEST(t_ln002) {
  const kg_variant *v = kt_runv[_i];
  kt_case c;
  ref_rng rng;
  size_t r;
  kt_shape s = kt_tight(16);
  double *vals = malloc(sizeof(double) * v->dim);
  double sq = sqrt((double)v->eps);
  kt_seed(&rng, v, "ln002");
  kt_case_init(&c, v, &s);
  kt_set_params(&c, KT_W_UNIT, &rng);
  for (r = 0; r < c.n; r++) {
    kt_recipe rc = {KT_NORMAL, 1.0, 0, ""};
    if (r % 4 == 0)
      rc.scale = sq; /* s2 ~ eps: var(y) ~ 1/2 */
    else if (r % 4 == 1)
      rc.scale = sq / 10; /* s2 << eps */
    else if (r % 4 == 2)
      rc.scale = ref_rng_pow10(&rng, -2, 3);
    else
      rc.scale = 1, rc.offset = 100;
    kt_gen(c.dtype, c.dim, &rc, &rng, vals);
    kt_set_row(&c, r, vals);
  }
  kt_run(&c, NULL);
  KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
  for (r = 0; r < c.n; r++) {
    kt_ln_stats st;
    long double expect, tol;
    kt_ln_row_stats(&c, r, vals, &st);
    expect = (long double)st.var_x / (st.var_x + c.eps);
    tol = 2 * st.mrb + st.mb2 + 1e-12L;
    ck_assert_msg(fabsl(st.vy - expect) <= tol,
                  "%s: row %zu: var(y) = %.9Lg, expected s2/(s2+eps) = "
                  "%.9Lg (s2 = %.6g, eps = %g), tolerance %.3Lg",
                  v->symbol, r, st.vy, expect, st.var_x, c.eps, tol);
  }
  free(vals);
  kt_case_free(&c);
}
END_TEST

/* ---- FALSIFY-LN-003 ------------------------------------------------------ */

/* Why: no NaN/Inf for any finite input: the extreme rows (1e30 values,
 * 1e30 offsets, 3e38 and FLT_MAX, whose sum and variance overflow f32),
 * constant rows (variance 0), with random gamma/beta; mean and rstd
 * finite, rstd > 0. */
START_TEST(t_ln003) {
  const kg_variant *v = kt_runv[_i];
  kt_recipe list[32];
  size_t n = kt_extreme_recipes(v->dtype, list), r, i;
  kt_case c;
  ref_rng rng;
  kt_shape s = kt_tight(n + 2);
  list[n++] = (kt_recipe){KT_CONST, 0, 1e4, "const 1e4"};
  list[n++] = (kt_recipe){KT_CONST, 0, 0.1, "const 0.1"};
  kt_seed(&rng, v, "ln003");
  kt_case_init(&c, v, &s);
  kt_set_params(&c, KT_W_RANDOM, &rng);
  kt_fill_recipes(&c, list, n, &rng);
  kt_run(&c, NULL);
  KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
  for (r = 0; r < c.n; r++) {
    kt_row row;
    float m, rs;
    kt_row_get(&c, r, &row);
    for (i = 0; i < c.dim; i++)
      ck_assert_msg(isfinite(kt_get(&c, row.out, i)),
                    "%s: row %zu '%s': y[%zu] = %g", v->symbol, r,
                    list[r].label, i, kt_get(&c, row.out, i));
    memcpy(&m, ref_cat(REF_F32, c.mean.p, r), 4);
    memcpy(&rs, ref_cat(REF_F32, c.rstd.p, r), 4);
    ck_assert_msg(isfinite(m) && isfinite(rs) && rs > 0,
                  "%s: row %zu '%s': mean %g rstd %g", v->symbol, r,
                  list[r].label, m, rs);
  }
  KT_OK(kt_check_acc(&c, "extreme rows", NULL, kt_msg, sizeof kt_msg));
  kt_case_free(&c);
}
END_TEST

/* ---- FALSIFY-LN-004 ------------------------------------------------------ */

/* Why: the SIMD-vs-scalar body is shared with FALSIFY-QKN-005 (kt_qkn.c);
 * kt_pair_ratio in kt_util.c adds layernorm's cancellation term. */
START_TEST(t_ln004) { kt_simd_vs_scalar(_i); }
END_TEST

/* ---- FALSIFY-LN-005 ------------------------------------------------------ */

/* Why: LN(LN(x)) ~ LN(x) with gamma = 1, beta = 0.  In reals, for y1 with
 * mean m1 and variance v1, LN(y1) = (y1 - m1) c, c = 1/sqrt(v1 + eps), so
 * |y2 - y1| <= |y1| |c - 1| + |m1| c + the second call's bound; c - 1 is
 * set by eps (v1 = s2/(s2+eps) ~ 1). */
START_TEST(t_ln005) {
  const kg_variant *v = kt_runv[_i];
  kt_case c;
  kt_saved y1;
  ref_rng rng;
  size_t r, i;
  double *ref = malloc(sizeof(double) * v->dim);
  kt_shape s = kt_tight(16);
  kt_seed(&rng, v, "ln005");
  kt_case_init(&c, v, &s);
  kt_set_params(&c, KT_W_UNIT, &rng);
  kt_fill_random(&c, &rng);
  kt_run(&c, NULL);
  kt_save(&c, &y1);
  kt_buf_copy(&c.in[0], &y1.out[0]);
  kt_run(&c, NULL);
  KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
  for (r = 0; r < c.n; r++) {
    kt_row row;
    double m1, cf, mabs;
    kt_row_get(&c, r, &row);
    kt_row_ref(&c, r, ref, &cf, &m1);
    mabs = kt_mean_abs(&c, row.in);
    for (i = 0; i < c.dim; i++) {
      double a = kt_get(&c, row.in, i), b = kt_get(&c, row.out, i);
      double tol = fabs(a) * fabs(cf - 1) + fabs(m1) * cf +
                   kt_bound_elem(&c, ref[i], a, 1, 0, m1, cf, mabs);
      ck_assert_msg(fabs(b - a) <= tol,
                    "%s: row %zu (kind %zu): LN(LN(x))[%zu] = %.9g vs "
                    "LN(x) = %.9g: |diff| %.3g > %.3g (c = %.12g, mean %.3g)",
                    v->symbol, r, r % 8, i, b, a, fabs(b - a), tol, cf, m1);
    }
  }
  kt_saved_free(&y1);
  free(ref);
  kt_case_free(&c);
}
END_TEST

/* ---- FALSIFY-LN-006 ------------------------------------------------------ */

/* Why: corrected LN-006: LN(x + c) = LN(x) in reals, but x + c is rounded
 * to T and the kernel's x - mean cancels |c|, so the tolerance grows with
 * |c| rstd: |y(x+c) - y(x)| <= |ref(x+c) - ref(x)| + b_i(x) + b_i(x+c),
 * where the layernorm bound b_i(x+c) contains (|x+c| + |mu+c|) rstd.
 * Grid data makes x + c exact for some c, so there the only allowance is
 * the kernel's own bound. */
START_TEST(t_ln006) {
  const kg_variant *v = kt_runv[_i];
  const int p = ref_precision(v->dtype);
  /* grid: x = k 2^-g, |k| <= G; exact shifts |c| < 2^m */
  const int g = p == 24 ? 10 : p == 11 ? 6 : 3;
  const double G = ldexp(1.0, g);
  const int m = p - 1 - g;
  int rep;
  for (rep = 0; rep < 8; rep++) {
    kt_case a, b;
    ref_rng rng;
    kt_shape s = kt_tight(6);
    size_t r, i;
    int exact = rep < 4;
    double sh, *ya = malloc(sizeof(double) * v->dim),
               *yb = malloc(sizeof(double) * v->dim);
    kt_seed(&rng, v, "ln006");
    rng.s += (uint64_t)rep;
    kt_case_init(&a, v, &s);
    kt_case_init(&b, v, &s);
    kt_set_params(&a, KT_W_RANDOM, &rng);
    kt_buf_copy(&b.par[0], &a.par[0]);
    kt_buf_copy(&b.par[1], &a.par[1]);
    if (exact)
      sh = ldexp(floor(ref_rng_range(&rng, -1, 1) * ldexp(1.0, m - 1 + g)), -g);
    else
      sh = ref_round(v->dtype, (ref_rng_next(&rng) & 1 ? 1 : -1) *
                                   ref_rng_pow10(&rng, 0, p == 24 ? 4 : 1));
    for (r = 0; r < a.n; r++) {
      kt_recipe rc = {KT_GRID, G, ldexp(1.0, -g), ""};
      if (!exact)
        rc = (kt_recipe){KT_NORMAL, ref_rng_pow10(&rng, -1, 1), 0, ""};
      kt_gen(v->dtype, v->dim, &rc, &rng, ya);
      for (i = 0; i < v->dim; i++) {
        ya[i] = ref_round(v->dtype, ya[i]);
        yb[i] = ya[i] + sh;
        if (exact)
          ck_assert_msg(ref_round(v->dtype, yb[i]) == yb[i],
                        "test setup: %g + %g not exact in %s", ya[i], sh,
                        ref_dtype_name(v->dtype));
      }
      kt_set_row(&a, r, ya);
      kt_set_row(&b, r, yb);
    }
    kt_run(&a, NULL);
    kt_run(&b, NULL);
    KT_OK(kt_check_frame(&b, kt_msg, sizeof kt_msg));
    for (r = 0; r < a.n; r++) {
      kt_row ra, rb;
      double mua, rsa, mub, rsb, ma, mb;
      kt_row_get(&a, r, &ra);
      kt_row_get(&b, r, &rb);
      kt_row_ref(&a, r, ya, &rsa, &mua);
      kt_row_ref(&b, r, yb, &rsb, &mub);
      ma = kt_mean_abs(&a, ra.in);
      mb = kt_mean_abs(&b, rb.in);
      for (i = 0; i < v->dim; i++) {
        double g_ = kt_get(&a, ra.w, i), be = kt_get(&a, ra.b, i);
        double o1 = kt_get(&a, ra.out, i), o2 = kt_get(&b, rb.out, i);
        double tol = fabs(yb[i] - ya[i]) +
                     kt_bound_elem(&a, ya[i], kt_get(&a, ra.in, i), g_, be, mua,
                                   rsa, ma) +
                     kt_bound_elem(&b, yb[i], kt_get(&b, rb.in, i), g_, be, mub,
                                   rsb, mb);
        ck_assert_msg(fabs(o2 - o1) <= tol,
                      "%s: row %zu, shift c = %.9g (%s): LN(x+c)[%zu] = "
                      "%.9g vs LN(x) = %.9g: |diff| %.3g > %.3g",
                      v->symbol, r, sh, exact ? "x+c exact" : "x+c rounded", i,
                      o2, o1, fabs(o2 - o1), tol);
      }
    }
    free(ya);
    free(yb);
    kt_case_free(&a);
    kt_case_free(&b);
  }
}
END_TEST

/* ---- FALSIFY-LN-007 ------------------------------------------------------ */

/* Why: a constant row has mean c and variance 0, so y = beta in reals.
 * The kernel's mean may miss c by rounding, and then y - beta is that
 * miss times gamma / sqrt(eps): within the layernorm bound.  Where the
 * reported mean is exactly c, x - mean is exactly 0 and y must be beta
 * exactly, with rstd = 1/sqrt(eps) within 8 ULP. */
START_TEST(t_ln007) {
  const kg_variant *v = kt_runv[_i];
  const double cs[] = {0,     1,     -3.5, 0.1,  1e4,    6e4,
                       -6e-8, 1e-20, 1e30, 3e38, -7e-20, 1.5};
  size_t nc = sizeof cs / sizeof cs[0], r, i;
  kt_case c;
  ref_rng rng;
  kt_shape s = kt_tight(nc);
  double *vals = malloc(sizeof(double) * v->dim);
  kt_seed(&rng, v, "ln007");
  kt_case_init(&c, v, &s);
  kt_set_params(&c, KT_W_RANDOM, &rng);
  for (r = 0; r < nc; r++) {
    kt_recipe rc = {KT_CONST, 0,
                    fabs(cs[r]) > ref_max_T(c.dtype) ? 1.25 : cs[r], ""};
    kt_gen(c.dtype, c.dim, &rc, &rng, vals);
    kt_set_row(&c, r, vals);
  }
  kt_run(&c, NULL);
  KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
  KT_OK(kt_check_acc(&c, "constant rows (y = beta within the bound)", NULL,
                     kt_msg, sizeof kt_msg));
  for (r = 0; r < nc; r++) {
    kt_row row;
    float m, rs;
    double cv;
    kt_row_get(&c, r, &row);
    cv = kt_get(&c, row.in, 0);
    memcpy(&m, ref_cat(REF_F32, c.mean.p, r), 4);
    memcpy(&rs, ref_cat(REF_F32, c.rstd.p, r), 4);
    if ((double)m != cv)
      continue;
    for (i = 0; i < c.dim; i++) {
      double y = kt_get(&c, row.out, i), be = kt_get(&c, row.b, i);
      ck_assert_msg(y == be,
                    "%s: constant row %.9g (mean reported exactly): y[%zu] = "
                    "%.9g, expected beta = %.9g exactly",
                    v->symbol, cv, i, y, be);
    }
    ck_assert_msg(ref_ulp_dist_f32(rs, 1 / sqrt(c.eps)) <= 8,
                  "%s: constant row %.9g: rstd %.9g, expected 1/sqrt(eps) = "
                  "%.9g",
                  v->symbol, cv, rs, 1 / sqrt(c.eps));
  }
  free(vals);
  kt_case_free(&c);
}
END_TEST

/* ---- table --------------------------------------------------------------- */

const kt_test kt_ln_tests[] = {
    {"FALSIFY-LN-001 centering", &t_ln001, KT_LN},
    {"FALSIFY-LN-002 var(y) = s2/(s2+eps)", &t_ln002, KT_LN},
    {"FALSIFY-LN-003 finite output for finite input", &t_ln003, KT_LN},
    {"FALSIFY-LN-004 SIMD matches scalar", &t_ln004, KT_LN | KT_SIMD},
    {"FALSIFY-LN-005 idempotent", &t_ln005, KT_LN},
    {"FALSIFY-LN-006 shift invariance", &t_ln006, KT_LN},
    {"FALSIFY-LN-007 constant row gives beta", &t_ln007, KT_LN},
};
const size_t kt_ln_ntests = sizeof kt_ln_tests / sizeof kt_ln_tests[0];
