/* kt_qkn.c: the RMSNorm / QK-norm contract (qk-norm-v1) as Check tests:
 * FALSIFY-QKN-001..005 and 007 with DESIGN.md's corrections, plus the
 * RMSNorm properties DESIGN.md adds: KT-HF-001 (the "hf" rounding order,
 * bit for bit) and KT-RMS-001 (scale invariance).  QKN-006 (GPU vs CPU)
 * belongs to the CUDA suite.  Each test applies to rmsnorm variants too:
 * qk_norm is per-head RMSNorm and the obligations are RMSNorm's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgt.h"
#include "kt_suite.h"

/* ---- FALSIFY-QKN-001 ----------------------------------------------------- */

/* Why: corrected QKN-001: with unit weight RMS(y) = sqrt(ms/(ms+eps))
 * exactly in real arithmetic (not 1: rows with ms ~ eps are included, where
 * the seed's "RMS ~ 1" is false).  Tolerance: the rms of the per-element
 * accuracy budget, since |rms(y) - rms(ref)| <= rms(y - ref). */
START_TEST(t_qkn001) {
  const kg_variant *v = kt_runv[_i];
  const double sc[] = {1e-4, 1e-3, 3e-3, 1e-2, 1, 1e3, 1e20, 1e-20};
  kt_case c;
  ref_rng rng;
  size_t nsc = v->dtype == REF_F16 ? 6 : 8, r, i, nrows;
  kt_shape s = kt_tight(v->op == KG_OP_QK_NORM ? 2 : 2 * nsc);
  double *y = malloc(sizeof(double) * v->dim);
  kt_seed(&rng, v, "qkn001");
  kt_case_init(&c, v, &s);
  kt_set_params(&c, KT_W_UNIT, &rng);
  nrows = kt_rows(&c);
  for (r = 0; r < nrows; r++) {
    kt_recipe rc = {(r / nsc) % 2 ? KT_POSITIVE : KT_NORMAL, sc[r % nsc], 0,
                    ""};
    kt_gen(c.dtype, c.dim, &rc, &rng, y);
    kt_set_row(&c, r, y);
  }
  kt_run(&c, NULL);
  KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
  for (r = 0; r < nrows; r++) {
    kt_row row;
    long double ss = 0, sy = 0, se = 0, ms, expect, got;
    char rn[64];
    kt_row_get(&c, r, &row);
    kt_row_ref(&c, r, y, NULL, NULL);
    for (i = 0; i < c.dim; i++) {
      long double x = kt_get(&c, row.in, i), o = kt_get(&c, row.out, i);
      long double e = kt_bound_elem(&c, y[i], 0, 1, 0, 0, 0, 0);
      ss += x * x;
      sy += o * o;
      se += e * e;
    }
    ms = ss / c.dim;
    expect = sqrtl(ms / (ms + (long double)c.eps));
    got = sqrtl(sy / c.dim);
    kt_row_name(&c, r, rn, sizeof rn);
    ck_assert_msg(fabsl(got - expect) <= sqrtl(se / c.dim) + 1e-12L * expect,
                  "%s: %s (scale %g): RMS(y) = %.9Lg, expected sqrt(ms/(ms+"
                  "eps)) = %.9Lg (ms = %.6Lg, eps = %g), tolerance %.3Lg",
                  v->symbol, rn, sc[r % nsc], got, expect, ms, c.eps,
                  sqrtl(se / c.dim));
  }
  free(y);
  kt_case_free(&c);
}
END_TEST

/* ---- FALSIFY-QKN-002 ----------------------------------------------------- */

/* Why: corrected QKN-002: |y_i| <= |w_i| sqrt(d) for any eps (mean x^2 >=
 * x_i^2 / d); one-hot rows reach the bound.  Slack: the result's rounding
 * budget (8 ULP f32, 1 step 16-bit, 2 for "hf") plus 2 ULP of 2B for the
 * rounding of the bound itself. */
START_TEST(t_qkn002) {
  const kg_variant *v = kt_runv[_i];
  const kt_recipe f[] = {
      {KT_ONEHOT, 1.0, 0, "one-hot 1"},
      {KT_ONEHOT, 1e10, 0, "one-hot 1e10"},
      {KT_ONEHOT, 1e-2, 0, "one-hot 1e-2"},
      {KT_ONEHOT, 3e3, 1e-3, "one-hot 3e3 in 1e-3"},
      {KT_NORMAL, 1.0, 0, "N(0,1)"},
      {KT_SPARSE, 100.0, 0, "sparse"},
      {KT_ONEHOT, -5e4, 0, "one-hot -5e4"},
  };
  kt_case c;
  ref_rng rng;
  size_t r, i, nrows, nf = sizeof f / sizeof f[0];
  kt_shape s = kt_tight(v->op == KG_OP_QK_NORM ? 2 : nf);
  double units = v->dtype == REF_F32 ? 8 : v->rounding == KG_ROUND_HF ? 2 : 1;
  kt_seed(&rng, v, "qkn002");
  kt_case_init(&c, v, &s);
  kt_set_params(&c, KT_W_RANDOM, &rng);
  kt_fill_recipes(&c, f, v->dtype == REF_F16 ? nf : nf - 1, &rng);
  kt_run(&c, NULL);
  KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
  nrows = kt_rows(&c);
  for (r = 0; r < nrows; r++) {
    kt_row row;
    char rn[64];
    kt_row_get(&c, r, &row);
    kt_row_name(&c, r, rn, sizeof rn);
    for (i = 0; i < c.dim; i++) {
      double w = kt_get(&c, row.w, i) + c.off, y = kt_get(&c, row.out, i);
      double B = fabs(w) * sqrt((double)c.dim);
      double u2 =
          c.dtype == REF_F32 ? ref_ulp_f32(2 * B) : ref_ulp_T(c.dtype, 2 * B);
      double lim = B + (units + 2) * u2;
      ck_assert_msg(fabs(y) <= lim,
                    "%s: %s: |y[%zu]| = %.9g > |w| sqrt(d) = %.9g (+ slack "
                    "%.3g); w = %.9g, x = %.9g",
                    v->symbol, rn, i, fabs(y), B, lim - B, w,
                    kt_get(&c, row.in, i));
    }
  }
  kt_case_free(&c);
}
END_TEST

/* ---- FALSIFY-QKN-003 ----------------------------------------------------- */

/* Why: RMSNorm(RMSNorm(x, 1), 1) ~ RMSNorm(x, 1) up to what eps leaves:
 * in reals y2 = y1 * c with c = 1/sqrt(ms(y1) + eps), and ms(y1) =
 * ms/(ms+eps), so c - 1 ~ (eps/2) (1/(ms+eps) - 1): a few eps for ordinary
 * rows, large only where ms ~ eps (such rows are included).  Hence
 * |y2 - y1| <= |y1| |c - 1| + the second call's rounding budget, with c
 * computed exactly from the y1 the kernel returned. */
START_TEST(t_qkn003) {
  const kg_variant *v = kt_runv[_i];
  kt_case c;
  kt_saved y1;
  ref_rng rng;
  size_t r, i, nrows;
  kt_shape s = kt_tight(v->op == KG_OP_QK_NORM ? 3 : 9);
  double *vals = malloc(sizeof(double) * v->dim);
  kt_seed(&rng, v, "qkn003");
  kt_case_init(&c, v, &s);
  kt_set_params(&c, KT_W_UNIT, &rng);
  nrows = kt_rows(&c);
  for (r = 0; r < nrows; r++) {
    kt_recipe rc = {KT_NORMAL, r % 3 == 0 ? 1e-3 : ref_rng_pow10(&rng, -2, 3),
                    0, ""};
    kt_gen(c.dtype, c.dim, &rc, &rng, vals);
    kt_set_row(&c, r, vals);
  }
  kt_run(&c, NULL);
  KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
  kt_save(&c, &y1);
  /* the first call's output becomes the second call's input */
  kt_buf_copy(&c.in[0], &y1.out[0]);
  if (y1.out[1].raw)
    kt_buf_copy(&c.in[1], &y1.out[1]);
  kt_run(&c, NULL);
  KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
  for (r = 0; r < nrows; r++) {
    kt_row row;
    long double ss = 0, cf;
    char rn[64];
    kt_row_get(&c, r, &row);
    kt_row_name(&c, r, rn, sizeof rn);
    for (i = 0; i < c.dim; i++) {
      long double a = kt_get(&c, row.in, i);
      ss += a * a;
    }
    cf = 1.0L / sqrtl(ss / c.dim + (long double)c.eps);
    for (i = 0; i < c.dim; i++) {
      double a = kt_get(&c, row.in, i), b = kt_get(&c, row.out, i);
      double ref2 = (double)(a * cf);
      double tol = fabs(a) * (double)fabsl(cf - 1) +
                   kt_bound_elem(&c, ref2, 0, 1, 0, 0, 0, 0);
      ck_assert_msg(fabs(b - a) <= tol,
                    "%s: %s: twice-normalized y2[%zu] = %.9g vs y1 = %.9g: "
                    "|diff| %.3g > |y1| |c-1| + rounding = %.3g (c = %.12Lg)",
                    v->symbol, rn, i, b, a, fabs(b - a), tol, cf);
    }
  }
  kt_saved_free(&y1);
  free(vals);
  kt_case_free(&c);
}
END_TEST

/* ---- FALSIFY-QKN-004 ----------------------------------------------------- */

/* Why: RMSNorm(0) = 0 exactly (eps keeps the denominator positive): +0,
 * -0 and mixed-sign zero rows between ordinary rows give exact zeros and
 * rstd = 1/sqrt(eps). */
START_TEST(t_qkn004) {
  const kg_variant *v = kt_runv[_i];
  kt_case c;
  ref_rng rng;
  size_t r, i, nrows;
  kt_shape s = kt_tight(v->op == KG_OP_QK_NORM ? 3 : 6);
  double *vals = malloc(sizeof(double) * v->dim);
  kt_seed(&rng, v, "qkn004");
  kt_case_init(&c, v, &s);
  kt_set_params(&c, KT_W_RANDOM, &rng);
  nrows = kt_rows(&c);
  for (r = 0; r < nrows; r++) {
    kt_recipe rc = {KT_NORMAL, 1.0, 0, ""};
    if (r % 2 == 0) {
      rc.kind = KT_ZERO;
      rc.offset = (r / 2) % 2 ? -1.0 : 1.0;
    }
    kt_gen(c.dtype, c.dim, &rc, &rng, vals);
    if (r % 6 == 4)
      for (i = 0; i < c.dim; i += 2)
        vals[i] = -0.0;
    kt_set_row(&c, r, vals);
  }
  kt_run(&c, NULL);
  KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
  for (r = 0; r < nrows; r += 2) {
    kt_row row;
    char rn[64];
    kt_row_get(&c, r, &row);
    kt_row_name(&c, r, rn, sizeof rn);
    for (i = 0; i < c.dim; i++) {
      double y = kt_get(&c, row.out, i);
      ck_assert_msg(y == 0.0, "%s: zero %s: y[%zu] = %g, expected exactly 0",
                    v->symbol, rn, i, y);
    }
  }
  KT_OK(kt_check_acc(&c,
                     "zero rows between N(0,1) rows (rstd of a zero row "
                     "= 1/sqrt(eps))",
                     NULL, kt_msg, sizeof kt_msg));
  free(vals);
  kt_case_free(&c);
}
END_TEST

/* ---- KT-HF-001 ----------------------------------------------------------- */

/* Why: the HF row (x * rstd, an f32 product) rounded to T, times the weight,
 * rounded to T again, for one candidate f32 rstd; returns the first
 * element that differs from the kernel's output, or dim. */
static size_t kt_hf_mismatch(const kt_case *c, const kt_row *row, float rc,
                             uint32_t *want) {
  size_t i;
  for (i = 0; i < c->dim; i++) {
    float p = (float)kt_get(c, row->in, i) * rc; /* f32 multiply */
    double h = ref_round(c->dtype, p);
    float we = (float)(kt_get(c, row->w, i) + c->off);
    float q = (float)((double)we * h); /* f32 multiply (exact in double) */
    *want = ref_to_bits(c->dtype, q);
    if (kt_getbits(c, row->out, i) != *want)
      return i;
  }
  return c->dim;
}

/* Why: "hf" exists for bit-parity with a PyTorch run, which differs from
 * any kernel only in the few-ULP rstd its own reduction produces.  So each
 * row must be exactly round_T(w * round_T(x * r)) for some f32 r within 8
 * ULP of the true rstd; a single rounding of x*rstd*w (off by a step in a
 * fraction of the elements, within the 2-step accuracy budget) fails. */
START_TEST(t_hf) {
  const kg_variant *v = kt_runv[_i];
  kt_case c;
  size_t r, nrows;
  kt_setup_random(&c, v, v->op == KG_OP_QK_NORM ? 3 : 16, "hf");
  kt_run(&c, NULL);
  KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
  nrows = kt_rows(&c);
  for (r = 0; r < nrows; r++) {
    kt_row row;
    double rs;
    double *y = malloc(sizeof(double) * c.dim);
    float r0, lo, hi;
    int k, found = 0;
    uint32_t want = 0;
    size_t bad;
    char rn[64];
    kt_row_get(&c, r, &row);
    kt_row_ref(&c, r, y, &rs, NULL);
    free(y);
    r0 = (float)rs;
    if (c.op == KG_OP_RMSNORM) { /* the kernel's own rstd first */
      float own;
      memcpy(&own, ref_cat(REF_F32, c.rstd.p, r), 4);
      if (ref_ulp_dist_f32(own, rs) <= 8 &&
          kt_hf_mismatch(&c, &row, own, &want) == c.dim)
        continue;
    }
    lo = hi = r0;
    found = kt_hf_mismatch(&c, &row, r0, &want) == c.dim;
    for (k = 1; k <= 8 && !found; k++) {
      lo = nextafterf(lo, 0.0f);
      hi = nextafterf(hi, INFINITY);
      found = kt_hf_mismatch(&c, &row, lo, &want) == c.dim ||
              kt_hf_mismatch(&c, &row, hi, &want) == c.dim;
    }
    if (found)
      continue;
    bad = kt_hf_mismatch(&c, &row, r0, &want);
    kt_row_name(&c, r, rn, sizeof rn);
    ck_abort_msg("%s: %s: no f32 rstd within 8 ULP of %.9g gives this row "
                 "as round_T(w * round_T(x * rstd)); with rstd = %.9g, "
                 "element %zu: y = 0x%x (%.9g), HF order gives 0x%x",
                 v->symbol, rn, rs, r0, bad, kt_getbits(&c, row.out, bad),
                 kt_get(&c, row.out, bad), want);
  }
  kt_case_free(&c);
}
END_TEST

/* ---- FALSIFY-QKN-005 / FALSIFY-LN-004 ------------------------------------ */

/* Why: a SIMD variant and the scalar variant of the same kernel agree
 * within 8 ULP (f32) / 1 step (16-bit; 2 for "hf", which rounds twice) on
 * the accuracy mix and on extreme rows; for layernorm the difference of
 * the two means, amplified by rstd, is allowed as in the layernorm bound
 * (LN-004 as DESIGN.md's bound implies). */
void kt_simd_vs_scalar(int idx) {
  const kg_variant *v = kt_runv[idx];
  const kg_variant *sv = kt_find(v->kernel, KG_ISA_SCALAR);
  kt_recipe list[32];
  size_t n = kt_extreme_recipes(v->dtype, list);
  int rep;
  ck_assert_msg(sv != NULL, "%s: the pack has no scalar variant of %s",
                v->symbol, v->kernel);
  for (rep = 0; rep < 4; rep++) {
    kt_case c;
    kt_saved ss;
    ref_rng rng;
    kt_shape s = kt_tight(v->op == KG_OP_QK_NORM ? 3 : rep == 3 ? n : 11);
    kt_seed(&rng, v, "simd");
    rng.s += (uint64_t)rep;
    kt_case_init(&c, v, &s);
    kt_set_params(&c, KT_W_RANDOM, &rng);
    if (rep == 3)
      kt_fill_recipes(&c, list, n, &rng);
    else
      kt_fill_random(&c, &rng);
    kt_run(&c, sv);
    kt_save(&c, &ss);
    kt_run(&c, NULL);
    KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
    KT_OK(kt_compare(&c, &ss, KT_CMP_TOL, (size_t)-1,
                     rep == 3 ? "vs scalar on extreme rows"
                              : "vs scalar on the accuracy mix",
                     kt_msg, sizeof kt_msg));
    kt_saved_free(&ss);
    kt_case_free(&c);
  }
}

/* Why: FALSIFY-QKN-005 runs the shared body above. */
START_TEST(t_qkn005) { kt_simd_vs_scalar(_i); }
END_TEST

/* Why: the row number (kt_row_get order: Q rows token-major, then K rows)
 * of stream head j of token t, j < num_heads a Q head, else a K head. */
static size_t kt_qk_row(const kt_case *c, size_t t, size_t j) {
  const size_t nh = c->v->num_heads, nkv = c->v->num_kv_heads;
  return j < nh ? t * nh + j : c->n * nh + t * nkv + (j - nh);
}

/* ---- FALSIFY-QKN-007 ----------------------------------------------------- */

/* Why: per-head independence: every head of a call equals the per-head
 * RMSNorm reference (normalizing each head alone), and changing one
 * head's data (new values, zeros, huge, NaN) changes no other head's
 * output bits, in either layout and for Q and K heads. */
START_TEST(t_qkn007) {
  const kg_variant *v = kt_runv[_i];
  kt_case c;
  kt_saved base;
  size_t nh = v->num_heads, nkv = v->num_kv_heads, T = 4, ti, pk;
  size_t targets[4][3] = {{0, 0, 0}, {1, 0, 0}, {3, 1, 0}, {2, 1, 0}};
  double *vals = malloc(sizeof(double) * v->dim);
  ref_rng rng;
  targets[1][2] = nh - 1;
  targets[3][2] = nkv - 1;
  kt_setup_random(&c, v, T, "qkn007");
  kt_seed(&rng, v, "qkn007-perturb");
  kt_run(&c, NULL);
  KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
  KT_OK(kt_check_acc(&c, "each head vs the per-head reference", NULL, kt_msg,
                     sizeof kt_msg));
  kt_save(&c, &base);
  for (ti = 0; ti < 4; ti++) {
    size_t t = targets[ti][0], which = targets[ti][1], h = targets[ti][2];
    size_t r = kt_qk_row(&c, t, which ? nh + h : h);
    kt_row row;
    double *keep = malloc(sizeof(double) * v->dim);
    size_t i;
    kt_row_get(&c, r, &row);
    for (i = 0; i < c.dim; i++)
      keep[i] = kt_get(&c, row.in, i);
    for (pk = 0; pk < 4; pk++) {
      char what[256], rn[64];
      kt_recipe rc = {KT_NORMAL,
                      pk == 0   ? 1e3
                      : pk == 2 ? (c.dtype == REF_F16 ? 6e4 : 1e30)
                                : 1.0,
                      0, ""};
      if (pk == 1)
        rc.kind = KT_ZERO;
      kt_gen(c.dtype, c.dim, &rc, &rng, vals);
      if (pk == 3)
        vals[c.dim - 1] = NAN;
      kt_set_row(&c, r, vals);
      kt_run(&c, NULL);
      kt_row_name(&c, r, rn, sizeof rn);
      snprintf(what, sizeof what, "after changing only %s to %s", rn,
               pk == 0   ? "N(0,1e3)"
               : pk == 1 ? "zeros"
               : pk == 2 ? "huge values"
                         : "a NaN in its last element");
      KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
      KT_OK(kt_compare(&c, &base, KT_CMP_BITS, r, what, kt_msg, sizeof kt_msg));
      KT_OK(kt_check_acc(&c, what, NULL, kt_msg, sizeof kt_msg));
    }
    kt_set_row(&c, r, keep);
    free(keep);
  }
  kt_saved_free(&base);
  free(vals);
  kt_case_free(&c);
}
END_TEST

/* ---- KT-RMS-001 ---------------------------------------------------------- */

/* Why: RMSNorm is invariant to x -> x * 2^k as long as eps is negligible
 * and nothing over- or underflows.  Where eps is below half an ULP of
 * mean(x^2) even in double or long double (ms 4^k >= eps 2^66: a kernel
 * may compute rstd in double, where eps would still count), every step
 * scales exactly, so y must be bit-identical and rstd must scale by
 * exactly 2^-k.  Where eps is merely negligible (ms 4^k >= eps 2^30),
 * and past the f32 overflow of sum(x^2) (the rescaling path), y must
 * agree within the SIMD-vs-scalar tolerance and rstd within 8 ULP. */
START_TEST(t_scale_inv) {
  const kg_variant *v = kt_runv[_i];
  kt_case c;
  kt_saved base;
  ref_rng rng;
  size_t r, i, nrows, d = v->dim, kk;
  double *vals, msmin = INFINITY, xmax = 0, maxT = ref_max_T(v->dtype);
  int ka, ke, kmax, klim, ks[12], nk = 0, kb, exact_ok;
  kt_shape s = kt_tight(v->op == KG_OP_QK_NORM ? 2 : 5);
  kt_seed(&rng, v, "scale");
  kt_case_init(&c, v, &s);
  kt_set_params(&c, KT_W_RANDOM, &rng);
  nrows = kt_rows(&c);
  vals = malloc(sizeof(double) * nrows * d);
  for (r = 0; r < nrows; r++) {
    double ss = 0;
    for (i = 0; i < d; i++) {
      double x = ref_round(c.dtype, ref_rng_range(&rng, 0.25, 2.25));
      vals[r * d + i] = (ref_rng_next(&rng) & 1) ? -x : x;
      ss += x * x;
      xmax = fmax(xmax, x);
    }
    msmin = fmin(msmin, ss / d);
  }
  /* lower ends: eps negligible (2^30) / below half an ULP in double and
   * long double (2^66); x 2^k stays normal (|x| >= 1/4, k >= -10).
   * upper ends: sum of squares <= 2^100 (no f32 overflow), x 2^k <=
   * max_T / 4 (klim: still finite in T, used for the overflow path). */
  ka = (int)ceil(log2(c.eps * 0x1p30 / msmin) / 2);
  ke = (int)ceil(log2(c.eps * 0x1p66 / msmin) / 2);
  ka = ka < -10 ? -10 : ka;
  ke = ke < -10 ? -10 : ke;
  klim = (int)floor(log2(maxT / 4 / xmax));
  kmax = (int)floor(fmin((100 - log2((double)d * xmax * xmax)) / 2, klim));
  ck_assert_msg(ka <= kmax,
                "%s: no scaling range for eps %g in %s (k from %d to %d): "
                "this test cannot run for this kernel",
                v->symbol, c.eps, ref_dtype_name(c.dtype), ka, kmax);
  exact_ok = ke <= kmax;
  kb = exact_ok ? ke : ka;
  ks[nk++] = kb;
  if (exact_ok) {
    ks[nk++] = ke + 1 <= kmax ? ke + 1 : kmax;
    ks[nk++] = (ke + kmax) / 2;
    ks[nk++] = kmax;
  }
  ks[nk++] = ka;
  ks[nk++] = (ka + kmax) / 2;
  ks[nk++] = kmax;
  if (c.dtype != REF_F16) {
    /* past the f32 overflow of sum(x^2) = 2^130, up to the end of T */
    int kover = (int)ceil((130 - log2((double)d * msmin)) / 2);
    if (kover <= klim) {
      ks[nk++] = kover;
      ks[nk++] = klim;
    }
  }
  for (kk = 0; kk < (size_t)nk; kk++) {
    int k = ks[kk], exact = exact_ok && k >= ke && k <= kmax;
    char what[256];
    double *row = malloc(sizeof(double) * d);
    for (r = 0; r < nrows; r++) {
      for (i = 0; i < d; i++)
        row[i] = ldexp(vals[r * d + i], k);
      kt_set_row(&c, r, row);
    }
    free(row);
    kt_run(&c, NULL);
    KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
    if (kk == 0) {
      kt_save(&c, &base);
      continue;
    }
    snprintf(what, sizeof what, "x*2^%d vs x*2^%d (%s)", k, kb,
             exact      ? "eps below an ULP: bit-identical"
             : k > kmax ? "overflow path: within tolerance"
                        : "eps negligible: within tolerance");
    KT_OK(kt_compare(&c, &base,
                     (exact ? KT_CMP_BITS : KT_CMP_TOL) | KT_CMP_ROWS_ONLY,
                     (size_t)-1, what, kt_msg, sizeof kt_msg));
    if (c.op == KG_OP_RMSNORM) {
      for (r = 0; r < nrows; r++) {
        float a, b;
        memcpy(&a, ref_cat(REF_F32, c.rstd.p, r), 4);
        memcpy(&b, ref_cat(REF_F32, base.rstd.p, r), 4);
        if (exact)
          ck_assert_msg(ldexp((double)a, k - kb) == (double)b,
                        "%s: %s: rstd %.9g * 2^%d != %.9g", v->symbol, what, a,
                        k - kb, b);
        else
          ck_assert_msg(ref_ulp_dist_f32(a, ldexp((double)b, kb - k)) <= 8,
                        "%s: %s: rstd %.9g vs %.9g * 2^%d", v->symbol, what, a,
                        b, kb - k);
      }
    }
  }
  kt_saved_free(&base);
  free(vals);
  kt_case_free(&c);
}
END_TEST

/* ---- KT-QKN-LONG --------------------------------------------------------- */

/* Why: long calls run what a 1-token call does not: 16-bit heads of up to
 * 512 bytes go in groups chained across tokens, f32 heads past 256 KiB of
 * heads (AVX2: 2 MiB) and all wider heads stream head by head, each with
 * prefetch of the next token; AVX-512 bf16 heads go through one pipeline
 * of heads two ahead where kg_cpu_qk_pipe says so (KGEN_QK_PIPE=1 forces
 * it: make test-kernels-nt).  A call over 4 MiB of heads, past every
 * switch, must meet the accuracy budget and give every head the same bits
 * as calling the kernel on its token alone, heads whose sum of squares
 * passes FLT_MAX (the slow path; f32 and bf16) included: the call's first
 * head, a K head and the call's last head. */
START_TEST(t_qkn_long) {
  const kg_variant *v = kt_runv[_i];
  const size_t es = v->dtype == KG_F32 ? 4 : 2;
  const size_t nh = v->num_heads, nkv = v->num_kv_heads;
  const size_t T = (4u << 20) / ((nh + nkv) * v->dim * es) + 1;
  kt_case a, b;
  size_t t, j;
  kt_setup_random(&a, v, T, "qkn-long");
  if (v->dtype != KG_F16) { /* f16's largest value squared stays finite */
    double *big = malloc(v->dim * sizeof *big);
    ck_assert_ptr_nonnull(big);
    for (j = 0; j < v->dim; j++) /* 2^70 x (1, 1.25, 1.5, 1.75), signs mixed */
      big[j] = ldexp(1.0 + (double)(j % 4) / 4, 70) * (j % 3 ? 1 : -1);
    kt_set_row(&a, kt_qk_row(&a, 0, 0), big);
    kt_set_row(&a, kt_qk_row(&a, 7, nh), big);
    kt_set_row(&a, kt_qk_row(&a, T - 1, nh + nkv - 1), big);
    free(big);
  }
  kt_run(&a, NULL);
  KT_OK(kt_check_frame(&a, kt_msg, sizeof kt_msg));
  KT_OK(kt_check_acc(&a, "one call over 4 MiB of heads", NULL, kt_msg,
                     sizeof kt_msg));
  kt_setup_random(&b, v, 1, "qkn-long-one");
  kt_buf_copy(&b.par[0], &a.par[0]); /* the same q_w and k_w */
  kt_buf_copy(&b.par[1], &a.par[1]);
  /* every 7th token and the last: enough to meet every head position */
  for (t = 0;; t = t + 7 < T - 1 ? t + 7 : T - 1) {
    for (j = 0; j < nh + nkv; j++)
      kt_copy_row(&b, j, &a, kt_qk_row(&a, t, j));
    kt_run(&b, NULL);
    for (j = 0; j < nh + nkv; j++) {
      const size_t ra = kt_qk_row(&a, t, j);
      kt_row ya, yb;
      char rn[64];
      kt_row_get(&a, ra, &ya);
      kt_row_get(&b, j, &yb);
      kt_row_name(&a, ra, rn, sizeof rn);
      ck_assert_msg(memcmp(ya.out, yb.out, v->dim * es) == 0,
                    "%s: %s of a %zu-token call differs from the same "
                    "head in a 1-token call",
                    v->symbol, rn, T);
    }
    if (t == T - 1)
      break;
  }
  kt_case_free(&a);
  kt_case_free(&b);
}
END_TEST

/* ---- KT-LINES ------------------------------------------------------------ */

/* Why: data that starts off a cache-line boundary takes other code on
 * AVX-512 (the line frame, gen/kernels/lines.lua): whole lines read and
 * written once; QK-norm's line two heads share scaled by a blend of their
 * two scales, a group on the slow path finishing the line the group
 * before it left; RMSNorm's rows masked at both ends, their sums split
 * where a line straddles two of the aligned code's blocks; every sum's
 * lanes left in the frame's order for the horizontal tree.  At every element offset into a line (x, y and the
 * weights alike; QK-norm token-major on a fused QKV buffer, and q and k
 * in buffers of their own, k at another offset than q or on a line
 * boundary, as two mallocs leave them; head-major heads one after the
 * other and a line apart, so a decode call's heads are not one block;
 * RMSNorm and LayerNorm rows one after the other and a line apart, and y
 * at another offset than x), for 1 and 5 tokens or rows and 9 rows, with
 * and without rows on the slow path, each row (and rstd, mean) must get the bits of
 * the aligned call, and nothing outside the rows may change.  Built with
 * KG_NT_BYTES=1 (test-kernels-nt) every out-of-place call takes the
 * streaming stores, so y off alignment goes through the realigning streams
 * (kgi_ntr / kgi_ntw) or the stack row, and x and y at one offset through
 * y's streamed line frame (RMSNorm and LayerNorm bf16: each row's lines,
 * the line two rows share written by the later row). */
START_TEST(t_lines) {
  const kg_variant *v = kt_runv[_i];
  const size_t es = v->dtype == KG_F32 ? 4 : 2;
  const int qk = v->op == KG_OP_QK_NORM;
  /* 9 rows: LayerNorm's streamed pairs (rows r and r + 1 inside the sums
     of r + 2 and r + 3) take several pairs, each pair's first line
     carrying the last pair's tail (5 rows take one pair) */
  static const size_t counts[] = {1, 5, 9};
  const size_t ncounts = qk ? 2 : 3;
  double *vals = malloc(sizeof(double) * v->dim);
  size_t ci, slow, pad, shift, m, r, i;
  ck_assert_ptr_nonnull(vals);
  /* RMSNorm and head-major QK-norm: rows one after the other, a line
     apart (pad; QK-norm: q's heads and k's); RMSNorm: y at
     another offset than x (shift 1: y misaligned by 64 bytes - x's).
     QK-norm: shift 1 puts k there, shift 2 on a line boundary (64 bytes
     in), both in buffers of their own (not fused) */
  for (shift = 0; shift <= (qk ? 2 : 1); shift++)
  for (pad = 0; pad <= (qk && v->layout == KG_TOKEN_MAJOR ? 0 : 64 / es); pad += 64 / es)
  for (ci = 0; ci < ncounts; ci++)
    for (slow = 0; slow < 2; slow++) {
      kt_case a;
      kt_saved base;
      ref_rng rng;
      kt_shape s = kt_tight(counts[ci]);
      s.fused = qk && v->layout == KG_TOKEN_MAJOR && shift == 0;
      s.pad_in = s.pad_out = pad;
      kt_seed(&rng, v, "lines");
      kt_case_init(&a, v, &s);
      kt_fill_gaps(&a);
      kt_set_params(&a, KT_W_RANDOM, &rng);
      kt_fill_random(&a, &rng);
      if (slow) { /* a square past FLT_MAX sends the row to the slow path:
                     a Q head in the second group, the last K head; rows 1
                     and the last */
        size_t hot[2];
        if (qk) {
          hot[0] = v->num_heads > 4 ? 5 : 0;
          hot[1] = v->num_heads + v->num_kv_heads - 1;
        } else {
          hot[0] = counts[ci] > 1 ? 1 : 0;
          hot[1] = counts[ci] - 1;
        }
        for (r = 0; r < 2; r++) {
          kt_row row;
          kt_row_get(&a, hot[r], &row);
          for (i = 0; i < v->dim; i++)
            vals[i] = kt_get(&a, row.in, i);
          vals[v->dim / 2] = 1e30;
          kt_set_row(&a, hot[r], vals);
        }
      }
      kt_run(&a, NULL);
      KT_OK(kt_check_frame(&a, kt_msg, sizeof kt_msg));
      kt_save(&a, &base);
      for (m = 1; m < 64 / es; m++) {
        kt_case b;
        char what[128];
        kt_shape sb = s;
        sb.misalign = m;
        sb.misalign_out = shift == 2 ? 64 / es : shift ? 64 / es - m : 0;
        /* y's (k's) bytes into its line, as the message names it */
        const size_t yoff = (sb.misalign_out ? sb.misalign_out : m) * es % 64;
        kt_case_init(&b, v, &sb);
        kt_fill_gaps(&b);
        if (qk && shift) /* the geometry the message claims: k on its own */
          ck_assert_uint_eq((uintptr_t)b.out[1].p & 63, yoff);
        memcpy(b.par[0].p, a.par[0].p, v->dim * es);
        if (qk || v->op == KG_OP_LAYERNORM) /* k_w, beta */
          memcpy(b.par[1].p, a.par[1].p, v->dim * es);
        for (r = 0; r < kt_rows(&a); r++)
          kt_copy_row(&b, r, &a, r);
        kt_run(&b, NULL);
        snprintf(what, sizeof what,
                 "%zu %s%s%s, %s %zu and %s %zu bytes into a line against "
                 "aligned",
                 counts[ci], qk ? "token(s)" : "row(s)",
                 pad ? " a line apart" : "", slow ? " with slow rows" : "",
                 qk ? "q" : "x", m * es, qk ? "k" : "y", yoff);
        KT_OK(kt_check_frame(&b, kt_msg, sizeof kt_msg));
        KT_OK(kt_compare(&b, &base, KT_CMP_BITS, (size_t)-1, what, kt_msg,
                         sizeof kt_msg));
        kt_case_free(&b);
      }
      kt_saved_free(&base);
      kt_case_free(&a);
    }
  free(vals);
}
END_TEST

/* ---- KT-RMS-ROWS --------------------------------------------------------- */

/* Why: the rows of an RMSNorm call run fused: each row's sums come from
 * the step before, its output pass inside the next row's sums, and rows
 * that stream out (non-temporal stores) read and write each row as two
 * streams or more, its parts side by side, where kg_cpu_nt_split (rows
 * on line alignment in parts at most 4 KiB apart: kg_cpu_nt_split4k)
 * says so; the first row's sums and the last row's output run alone.
 * Every row of a 33-row call must get the bits of the same row called
 * alone (a sum off by an ULP moves few rows' scales: with 5 rows a
 * changed order of the parts' sums went unseen).  Built with
 * KG_NT_BYTES=1 (test-kernels-nt) every call streams; that target runs
 * this with KGEN_NT_SPLIT 1 and 0, and unset (the CPU's own choice).
 * KT-LN-ROWS: the same for LayerNorm, whose streamed rows go in pairs
 * (rows r and r + 1 written inside the sums of r + 2 and r + 3), each
 * pair's rows in halves where kg_cpu_nt_split4k says so. */
START_TEST(t_rms_rows) {
  const kg_variant *v = kt_runv[_i];
  const size_t es = v->dtype == KG_F32 ? 4 : 2;
  const size_t R = 33;
  kt_case a, b;
  size_t r;
  kt_setup_random(&a, v, R, "rms-rows");
  kt_run(&a, NULL);
  KT_OK(kt_check_frame(&a, kt_msg, sizeof kt_msg));
  kt_setup_random(&b, v, 1, "rms-rows-one");
  kt_buf_copy(&b.par[0], &a.par[0]); /* the same w (gamma) */
  if (v->op == KG_OP_LAYERNORM)
    kt_buf_copy(&b.par[1], &a.par[1]); /* and beta */
  for (r = 0; r < R; r++) {
    kt_row ra, rb;
    kt_row_get(&a, r, &ra);
    kt_copy_row(&b, 0, &a, r);
    kt_run(&b, NULL);
    kt_row_get(&b, 0, &rb);
    ck_assert_msg(memcmp(ra.out, rb.out, v->dim * es) == 0,
                  "%s: row %zu of a %zu-row call differs from the same row "
                  "called alone",
                  v->symbol, r, R);
  }
  kt_case_free(&a);
  kt_case_free(&b);
}
END_TEST

/* ---- table --------------------------------------------------------------- */

const kt_test kt_qkn_tests[] = {
    {"FALSIFY-QKN-001 unit RMS = sqrt(ms/(ms+eps))", &t_qkn001, KT_RMS | KT_QK},
    {"FALSIFY-QKN-002 |y_i| <= |w_i| sqrt(d)", &t_qkn002, KT_RMS | KT_QK},
    {"FALSIFY-QKN-003 idempotent up to eps", &t_qkn003, KT_RMS | KT_QK},
    {"FALSIFY-QKN-004 zero row gives zeros", &t_qkn004, KT_RMS | KT_QK},
    {"FALSIFY-QKN-005 SIMD matches scalar", &t_qkn005,
     KT_RMS | KT_QK | KT_SIMD},
    {"FALSIFY-QKN-007 per-head independence", &t_qkn007, KT_QK},
    {"KT-QKN-LONG long calls match 1-token calls bit for bit", &t_qkn_long,
     KT_QK},
    {"KT-LINES rows at any offset into a cache line match aligned bit for bit",
     &t_lines, KT_RMS | KT_QK | KT_LN},
    {"KT-HF-001 hf rounding is the HF order bit for bit", &t_hf,
     KT_RMS | KT_QK | KT_HF},
    {"KT-RMS-001 scale invariance x*2^k", &t_scale_inv, KT_RMS | KT_QK},
    {"KT-LN-ROWS rows of a call match rows called alone bit for bit", &t_rms_rows, KT_LN},
    {"KT-RMS-ROWS rows of a call match rows called alone bit for bit",
     &t_rms_rows, KT_RMS},
};
const size_t kt_qkn_ntests = sizeof kt_qkn_tests / sizeof kt_qkn_tests[0];
