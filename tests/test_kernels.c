/* test_kernels.c: Check suite for the generated kernels of the test pack
 * (tests/specs/kgt.lua -> out/kgt/).
 *
 * Every variant in kgt_variants[] that this CPU can run (its ISA, or the
 * dispatching entry, isa == KG_ISA_AUTO) gets one test case per applicable
 * contract, named "<ID> <title>: <symbol>".  Variants this CPU cannot run
 * are listed as SKIPPED and registered nowhere, so nothing that did not run
 * is counted as passed.
 *
 * IDs: FALSIFY-QKN-* (kt_qkn.c) and FALSIFY-LN-* (kt_ln.c) are the seeds'
 * falsification tests with DESIGN.md's corrections; KT-* here are the
 * numerics policy and ABI of DESIGN.md (accuracy, overflow, NaN/Inf,
 * strides, in place, rows = 0, out-of-bounds access, dispatcher).  The
 * reference is ref.c, the harness and the tolerances kt_util.c, test data
 * kt_data.c.
 *
 * Build: compile test_kernels.c, every kt_ .c file and ref.c of tests/
 * with every .c of out/kgt/, -Iout/kgt -Iruntime -Itests, Check and -lm. */
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kgt.h"
#include "kt_suite.h"
#include "ref.h"

const kg_variant **kt_runv;
size_t kt_nrun;
char kt_msg[KT_MSG];

/* ---- KT-REF-001: the reference itself ------------------------------------ */

/* Why: the reference is trusted by every other test, so its conversions,
 * rounding and distances are checked against independent constructions:
 * every 16-bit pattern round-trips, rounding picks the nearer neighbour
 * (ties to even) by explicit comparison, the compiler's _Float16 agrees
 * where it exists, and the norms give textbook values on small rows. */
START_TEST(t_ref_self) {
  unsigned u;
  ref_rng rng;
  for (u = 0; u < 0x10000u; u++) {
    int dt;
    for (dt = REF_BF16; dt <= REF_F16; dt++) {
      double v = dt == REF_BF16 ? ref_bf16_to_double((uint16_t)u)
                                : ref_f16_to_double((uint16_t)u);
      uint32_t back = ref_to_bits(dt, v);
      if (isnan(v))
        ck_assert_msg(ref_is_nan_bits(dt, back), "%s NaN 0x%04x lost",
                      ref_dtype_name(dt), u);
      else
        ck_assert_msg(back == u, "%s 0x%04x -> %.17g -> 0x%04x",
                      ref_dtype_name(dt), u, v, back);
      if (!isnan(v) && !isinf(v) && (u & 0x7fffu) != 0x7fffu &&
          !ref_is_nan_bits(dt, u + 1) && (u & 0x7fffu) < 0x7f00u) {
        /* midpoint to the next pattern rounds to the even one */
        double nx = dt == REF_BF16 ? ref_bf16_to_double((uint16_t)(u + 1))
                                   : ref_f16_to_double((uint16_t)(u + 1));
        if (!isinf(nx)) {
          double mid = (v + nx) / 2;
          uint32_t want = (u & 1u) ? u + 1 : u;
          ck_assert_msg(ref_to_bits(dt, mid) == want,
                        "%s midpoint after 0x%04x", ref_dtype_name(dt), u);
          /* nx - v points away from v (away from zero for negatives) */
          ck_assert_msg(ref_to_bits(dt, mid + (nx - v) / 1024) == u + 1,
                        "%s past the midpoint after 0x%04x", ref_dtype_name(dt),
                        u);
          ck_assert_msg(ref_to_bits(dt, mid - (nx - v) / 1024) == u,
                        "%s short of the midpoint after 0x%04x",
                        ref_dtype_name(dt), u);
        }
      }
    }
  }
  ck_assert(ref_to_bits(REF_F16, 65519.99) == 0x7bffu);
  ck_assert(ref_to_bits(REF_F16, 65520.0) == 0x7c00u);
  ck_assert(ref_to_bits(REF_BF16, 3.4e38) == 0x7f80u ||
            ref_to_bits(REF_BF16, 3.4e38) == 0x7f7fu);
  ck_assert(ref_to_bits(REF_F16, 0x1p-25) == 0);
  ck_assert(ref_to_bits(REF_F16, 0x1.0001p-25) == 1);
#if defined(__FLT16_MANT_DIG__)
  ref_rng_seed(&rng, 1);
  for (u = 0; u < 1000000u; u++) {
    double d = ref_rng_normal(&rng) * ref_rng_pow10(&rng, -9, 5);
    _Float16 h = (_Float16)d;
    uint16_t hb;
    memcpy(&hb, &h, 2);
    ck_assert_msg(ref_to_bits(REF_F16, d) == hb, "f16 rounding of %.17g", d);
  }
#endif
  ref_rng_seed(&rng, 2);
  for (u = 0; u < 1000000u; u++) {
    double d = ref_rng_normal(&rng) * ref_rng_pow10(&rng, -40, 38);
    float f = (float)d; /* C's conversion is correctly rounded */
    uint32_t fb;
    memcpy(&fb, &f, 4);
    ck_assert_msg(ref_to_bits(REF_F32, d) == fb, "f32 rounding of %.17g", d);
  }
  ck_assert(ref_ulp_f32(1.0) == 0x1p-23);
  ck_assert(ref_ulp_f32(0.99999999) == 0x1p-23); /* rounds to 1.0 */
  ck_assert(ref_ulp_f32(1e-45) == 0x1p-149);
  ck_assert(ref_ulp_f32(0.0) == 0x1p-149);
  ck_assert(ref_ulp_T(REF_BF16, 1.0) == 0x1p-7);
  ck_assert(ref_ulp_T(REF_F16, 1.0) == 0x1p-10);
  ck_assert(ref_ulp_dist_f32(nextafterf(1.0f, 2.0f), 1.0) == 1.0);
  ck_assert(ref_bits_dist(REF_BF16, 0x0000u, 0x8000u) == 0);
  ck_assert(ref_bits_dist(REF_BF16, 0x0001u, 0x8001u) == 2);
  ck_assert(ref_bits_dist(REF_F16, 0x3c00u, 0x3c02u) == 2);
  ck_assert(ref_bits_dist(REF_F32, 0x3f800000u, 0xbf800000u) ==
            2.0 * 0x3f800000u);
  {
    float x[2] = {3.0f, 4.0f}, w[2] = {1.0f, 2.0f}, g[4] = {1, 1, 1, 1},
          b[4] = {0, 0, 0, 0}, xl[4] = {1, 2, 3, 4};
    double y[4], r, mu, rs;
    r = ref_rmsnorm_row(REF_F32, REF_ROUND_SINGLE, 2, x, w, 0.0, 0.0, y);
    ck_assert(fabs(r - 1 / sqrt(12.5)) < 1e-16);
    ck_assert(fabs(y[1] - 8 / sqrt(12.5)) < 1e-15);
    r = ref_rmsnorm_row(REF_F32, REF_ROUND_SINGLE, 2, x, w, 0.0, 1.0, y);
    ck_assert(fabs(y[1] - 12 / sqrt(12.5)) < 1e-15);
    ref_layernorm_row(REF_F32, 4, xl, g, b, 0.0, y, &mu, &rs);
    ck_assert(mu == 2.5 && fabs(rs - 1 / sqrt(1.25)) < 1e-16);
    ck_assert(fabs(y[0] + 1.5 / sqrt(1.25)) < 1e-15);
  }
}
END_TEST

/* ---- KT-ACC-001 ---------------------------------------------------------- */

/* Why: DESIGN.md's accuracy budget against the float64 reference on the
 * accuracy mix (incl. scales 1e-20..1e20 and layernorm's hard rows),
 * with 1, a few and many rows per call, random and unit weights: f32
 * within 8 ULP, bf16/f16 "single" within 1 step of the correctly rounded
 * result, "hf" within 2 steps of round_T(w * round_T(x*rstd)), layernorm
 * within its bound; rstd within 8 ULP, mean within 16 eps32. */
START_TEST(t_acc) {
  const kg_variant *v = kt_runv[_i];
  const size_t ns[] = {1, 3, 37};
  size_t k, rep;
  for (k = 0; k < 3; k++) {
    for (rep = 0; rep < 3; rep++) {
      kt_case c;
      ref_rng rng;
      char what[256];
      kt_shape s =
          kt_tight(v->op == KG_OP_QK_NORM ? (size_t[]){1, 2, 9}[k] : ns[k]);
      kt_seed(&rng, v, "acc");
      rng.s += k * 1000 + rep;
      kt_case_init(&c, v, &s);
      kt_set_params(&c, rep == 2 ? KT_W_UNIT : KT_W_RANDOM, &rng);
      kt_fill_random(&c, &rng);
      kt_run(&c, NULL);
      snprintf(what, sizeof what,
               "accuracy, %zu %s, %s weights (row kinds by r%%8: N(0,s), "
               "offset, positive, sparse, mixed, wide, hard/N(0,1), "
               "wide positive)",
               c.n, c.op == KG_OP_QK_NORM ? "tokens" : "rows",
               rep == 2 ? "unit" : "random");
      KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
      KT_OK(kt_check_acc(&c, what, NULL, kt_msg, sizeof kt_msg));
      kt_case_free(&c);
    }
  }
}
END_TEST

/* ---- KT-EDGE-001 --------------------------------------------------------- */

/* Why: "every finite input row gives a finite, accurate row", also where
 * sum(x^2) or the mean overflows f32: each extreme recipe is one row of
 * one call; all outputs must be finite and within the accuracy budget. */
START_TEST(t_extreme) {
  const kg_variant *v = kt_runv[_i];
  kt_recipe list[32];
  size_t n = kt_extreme_recipes(v->dtype, list), r, i, nrows;
  int mode;
  for (mode = 0; mode < 2; mode++) {
    kt_case c;
    ref_rng rng;
    kt_shape s = kt_tight(v->op == KG_OP_QK_NORM ? 2 : n);
    kt_seed(&rng, v, "extreme");
    kt_case_init(&c, v, &s);
    kt_set_params(&c, mode ? KT_W_UNIT : KT_W_RANDOM, &rng);
    nrows = kt_rows(&c);
    kt_fill_recipes(&c, list, n, &rng);
    kt_run(&c, NULL);
    KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
    for (r = 0; r < nrows; r++) {
      kt_row row;
      char rn[64];
      kt_row_get(&c, r, &row);
      kt_row_name(&c, r, rn, sizeof rn);
      for (i = 0; i < c.dim; i++) {
        double y = kt_get(&c, row.out, i);
        ck_assert_msg(isfinite(y),
                      "%s: extreme row '%s' (%s): y[%zu] = %g is not finite",
                      v->symbol, list[r % n].label, rn, i, y);
      }
      if (c.op != KG_OP_QK_NORM) {
        float rs, mu = 0;
        memcpy(&rs, ref_cat(REF_F32, c.rstd.p, r), 4);
        if (c.op == KG_OP_LAYERNORM)
          memcpy(&mu, ref_cat(REF_F32, c.mean.p, r), 4);
        ck_assert_msg(isfinite(rs) && rs > 0 && isfinite(mu),
                      "%s: extreme row '%s': rstd %g mean %g", v->symbol,
                      list[r % n].label, rs, mu);
      }
    }
    KT_OK(kt_check_acc(&c,
                       mode ? "extreme rows (unit weights)"
                            : "extreme rows (see kt_extreme_recipes; row r "
                              "is recipe r mod count)",
                       NULL, kt_msg, sizeof kt_msg));
    kt_case_free(&c);
  }
}
END_TEST

/* ---- KT-EDGE-002 --------------------------------------------------------- */

/* Why: a NaN or +-Inf anywhere in a row (first element, middle, the last
 * one, which sits in the SIMD tail) makes that whole row NaN and its rstd
 * NaN, and leaves every other row bit-identical to a clean run; weights
 * include exact zeros, so 0 * rstd tricks cannot hide the poison. */
START_TEST(t_nan_inf) {
  const kg_variant *v = kt_runv[_i];
  kt_case c;
  kt_saved clean;
  size_t nrows, pi, vi, ti, i;
  uint32_t pois[6], *keep = malloc(sizeof(uint32_t) * v->dim);
  int np = 0;
  kt_setup_random(&c, v, v->op == KG_OP_QK_NORM ? 3 : 5, "naninf");
  nrows = kt_rows(&c);
  if (c.dtype == REF_F32) {
    uint32_t p[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7f800000u,
                    0xff800000u};
    memcpy(pois, p, sizeof p);
    np = 5;
  } else if (c.dtype == REF_BF16) {
    uint32_t p[] = {0x7fc0u, 0xffc0u, 0x7f81u, 0x7f80u, 0xff80u};
    memcpy(pois, p, sizeof p);
    np = 5;
  } else {
    uint32_t p[] = {0x7e00u, 0xfe00u, 0x7c01u, 0x7c00u, 0xfc00u};
    memcpy(pois, p, sizeof p);
    np = 5;
  }
  kt_run(&c, NULL);
  KT_OK(kt_check_acc(&c, "clean run before poisoning", NULL, kt_msg,
                     sizeof kt_msg));
  kt_save(&c, &clean);
  for (ti = 0; ti < 2; ti++) {
    size_t target = ti == 0 ? nrows / 2 : nrows - 1;
    kt_row row;
    kt_row_get(&c, target, &row);
    for (vi = 0; vi < (size_t)np; vi++) {
      for (pi = 0; pi < 4; pi++) {
        size_t pos = pi == 0 ? 0 : pi == 1 ? c.dim / 2 : c.dim - 1;
        char what[256], rn[64];
        if (pi == 3 && vi > 0)
          break; /* the +-Inf pair does not depend on pois[vi] */
        for (i = 0; i < c.dim; i++)
          keep[i] = kt_getbits(&c, row.in, i);
        kt_row_name(&c, target, rn, sizeof rn);
        if (pi == 3) /* +Inf and -Inf in one row (Inf - Inf) */
          ref_set_bits(c.dtype, (void *)row.in, 0, pois[4]);
        ref_set_bits(c.dtype, (void *)row.in, pos,
                     pi == 3 ? pois[3] : pois[vi]);
        kt_run(&c, NULL);
        snprintf(what, sizeof what, "poison 0x%x at element %zu of %s",
                 pi == 3 ? pois[3] : pois[vi], pos, rn);
        if (pi == 3)
          snprintf(what + strlen(what), sizeof what - strlen(what),
                   " and 0x%x at element 0", pois[4]);
        KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
        for (i = 0; i < c.dim; i++) {
          uint32_t y = kt_getbits(&c, row.out, i);
          ck_assert_msg(ref_is_nan_bits(c.dtype, y),
                        "%s: %s: y[%zu] = %g, expected NaN (whole row)",
                        v->symbol, what, i, kt_get(&c, row.out, i));
        }
        if (c.op != KG_OP_QK_NORM) {
          float rs;
          memcpy(&rs, ref_cat(REF_F32, c.rstd.p, target), 4);
          ck_assert_msg(isnan(rs), "%s: %s: rstd = %g, expected NaN", v->symbol,
                        what, rs);
        }
        KT_OK(kt_compare(&c, &clean, KT_CMP_BITS, target, what, kt_msg,
                         sizeof kt_msg));
        for (i = 0; i < c.dim; i++)
          ref_set_bits(c.dtype, (void *)row.in, i, keep[i]);
      }
    }
  }
  free(keep);
  kt_saved_free(&clean);
  kt_case_free(&c);
}
END_TEST

/* ---- KT-EDGE-003 --------------------------------------------------------- */

/* Why: strides larger than the row with the gap poisoned by sentinels
 * (reading it would give NaN, writing it changes its bits), pointers one
 * element off alignment, qk_norm on a fused [Q | K | V] buffer whose V
 * part and padding must stay untouched, and head_major strides with gaps
 * between heads. */
START_TEST(t_strides) {
  const kg_variant *v = kt_runv[_i];
  static const size_t cfg[][4] = {
      /* pad_in, pad_out, misalign, fused */
      {1, 0, 1, 0},   {0, 7, 1, 0}, {16, 16, 0, 0}, {33, 3, 1, 0},
      {5, 130, 0, 0}, {0, 0, 1, 1}, {13, 0, 0, 1},  {1, 0, 1, 1},
  };
  size_t k;
  for (k = 0; k < sizeof cfg / sizeof cfg[0]; k++) {
    kt_case c;
    ref_rng rng;
    char what[256];
    kt_shape s = kt_tight(v->op == KG_OP_QK_NORM ? 3 : 5);
    if (cfg[k][3] && (v->op != KG_OP_QK_NORM || v->layout != KG_TOKEN_MAJOR))
      continue;
    s.pad_in = cfg[k][0];
    s.pad_out = cfg[k][1];
    s.misalign = cfg[k][2];
    s.fused = (int)cfg[k][3];
    kt_seed(&rng, v, "strides");
    kt_case_init(&c, v, &s);
    kt_fill_gaps(&c); /* finite padding: a fast path reading it shows */
    kt_set_params(&c, KT_W_RANDOM, &rng);
    kt_fill_random(&c, &rng);
    kt_run(&c, NULL);
    snprintf(what, sizeof what,
             "%s strides %zu/%zu (row %zu), misaligned by %zu element(s)",
             c.fused ? "fused QKV" : "padded", c.st[0], c.st[1], c.dim,
             cfg[k][2]);
    KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
    KT_OK(kt_check_acc(&c, what, NULL, kt_msg, sizeof kt_msg));
    kt_case_free(&c);
  }
}
END_TEST

/* ---- KT-EDGE-004 --------------------------------------------------------- */

/* Why: y == x is allowed by the ABI; in place must give exactly the bits
 * of an out-of-place call with the same strides (padding finite, so a fast
 * path that read it would not hide behind the slow path). */
START_TEST(t_in_place) {
  const kg_variant *v = kt_runv[_i];
  size_t pad;
  for (pad = 0; pad < 6; pad += 5) {
    kt_case a, b;
    kt_saved sa;
    ref_rng r1, r2;
    kt_shape s = kt_tight(7);
    char what[256];
    s.pad_in = s.pad_out = pad;
    kt_seed(&r1, v, "inplace");
    r2 = r1;
    kt_case_init(&a, v, &s);
    s.in_place = 1;
    kt_case_init(&b, v, &s);
    kt_fill_gaps(&a); /* finite padding, as in KT-EDGE-003 */
    kt_fill_gaps(&b);
    kt_set_params(&a, KT_W_RANDOM, &r1);
    kt_fill_random(&a, &r1);
    kt_set_params(&b, KT_W_RANDOM, &r2);
    kt_fill_random(&b, &r2);
    kt_run(&a, NULL);
    kt_save(&a, &sa);
    kt_run(&b, NULL);
    snprintf(what, sizeof what, "in place (stride %zu) vs out of place",
             b.st[0]);
    KT_OK(kt_check_frame(&b, kt_msg, sizeof kt_msg));
    KT_OK(kt_compare(&b, &sa, KT_CMP_BITS, (size_t)-1, what, kt_msg,
                     sizeof kt_msg));
    KT_OK(kt_check_acc(&b, what, NULL, kt_msg, sizeof kt_msg));
    kt_saved_free(&sa);
    kt_case_free(&a);
    kt_case_free(&b);
  }
}
END_TEST

/* ---- KT-EDGE-005 --------------------------------------------------------- */

/* Why: rows = 0 (tokens = 0) must write nothing, and NULL rstd/mean must
 * be accepted without changing y by a single bit. */
START_TEST(t_rows0_null) {
  const kg_variant *v = kt_runv[_i];
  kt_case c;
  kt_saved full;
  int m;
  kt_setup_random(&c, v, 3, "rows0");
  c.n = 0;
  kt_run(&c, NULL);
  if (!kt_check_frame(&c, kt_msg, sizeof kt_msg))
    ck_abort_msg("rows = 0: %s", kt_msg);
  c.n = 3;
  if (c.op == KG_OP_QK_NORM) {
    kt_case_free(&c);
    return;
  }
  kt_run(&c, NULL);
  kt_save(&c, &full);
  for (m = 0; m < 3; m++) {
    char what[256];
    if (c.op == KG_OP_RMSNORM && m > 0)
      break;
    c.want_rstd = m == 1;
    c.want_mean = m == 2;
    kt_run(&c, NULL);
    snprintf(what, sizeof what, "rstd %s, mean %s",
             c.want_rstd ? "given" : "NULL",
             c.op == KG_OP_RMSNORM ? "n/a"
             : c.want_mean         ? "given"
                                   : "NULL");
    KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
    KT_OK(kt_compare(&c, &full, KT_CMP_BITS, (size_t)-1, what, kt_msg,
                     sizeof kt_msg));
  }
  kt_saved_free(&full);
  kt_case_free(&c);
}
END_TEST

/* ---- KT-EDGE-006 --------------------------------------------------------- */

/* Why: no access outside the arrays: with every array flush against an
 * inaccessible page (after its end, then before its start) and tight
 * strides, an over-read of a tail (an unmasked full vector, a row of
 * `stride` instead of `dim`) faults instead of passing silently.  Then
 * the data off line alignment (1 element and 16 bytes in, on the heap:
 * AVX-512's line frame) with only the weights against the guard pages:
 * the frame's first and last weight lines are read from inside the
 * weights (kgi_avx512_ldw_*), not as masked windows reaching past them,
 * which fault-suppress silently but cost a microcode assist a call. */
START_TEST(t_guard_pages) {
  const kg_variant *v = kt_runv[_i];
  const size_t es = v->dtype == KG_F32 ? 4 : 2;
  const size_t offs[] = {0, 1, 16 / es};
  int place;
  size_t n, o;
  for (o = 0; o < sizeof offs / sizeof offs[0]; o++)
  for (place = KT_PAGE_END; place <= KT_PAGE_START; place++) {
    for (n = 1; n <= 3; n += 2) {
      kt_case c;
      ref_rng rng;
      kt_shape s = kt_tight(n);
      char what[256];
      if (offs[o] == 0) s.place = place;
      else { s.misalign = offs[o]; s.wplace = place; }
      kt_seed(&rng, v, "pages");
      kt_case_init(&c, v, &s);
      kt_set_params(&c, KT_W_RANDOM, &rng);
      kt_fill_random(&c, &rng);
      kt_run(&c, NULL);
      snprintf(what, sizeof what, "%zu row(s), %s against a guard page %s%s", n,
               offs[o] ? "the weights" : "every array",
               place == KT_PAGE_END ? "after the end" : "before the start",
               offs[o] == 1 ? ", data 1 element into a line" : offs[o] ? ", data 16 bytes into a line" : "");
      KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
      KT_OK(kt_check_acc(&c, what, NULL, kt_msg, sizeof kt_msg));
      kt_case_free(&c);
    }
  }
}
END_TEST

/* ---- KT-EDGE-007 --------------------------------------------------------- */

/* Why: "rows = 0 touches nothing" includes reads: every pointer points at
 * a PROT_NONE page, so loading weights (or anything) before checking the
 * row count faults. */
START_TEST(t_rows0_noread) {
  const kg_variant *v = kt_runv[_i];
  size_t pg = (size_t)sysconf(_SC_PAGESIZE), d = v->dim;
  void *p = mmap(NULL, 2 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert(p != MAP_FAILED);
  switch (v->op) {
  case KG_OP_RMSNORM:
    v->fn.rmsnorm(0, p, d, p, p, d, p);
    break;
  case KG_OP_LAYERNORM:
    v->fn.layernorm(0, p, d, p, p, p, d, p, p);
    break;
  default:
    v->fn.qk_norm(0, p, v->num_heads * d, p, v->num_kv_heads * d, p, p);
    break;
  }
  munmap(p, 2 * pg);
}
END_TEST

/* ---- KT-DISP-001 --------------------------------------------------------- */

/* Why: the unsuffixed entry point must run exactly the variant of the
 * level kg_dispatch_cap() allows (highest level the pack has under the
 * cap; for f16, AVX2 before AVX-512 where kg_cpu_f16_avx2() says so), so
 * its results are bit-identical to that variant's. */
START_TEST(t_dispatch) {
  const kg_variant *v = kt_runv[_i], *pick = NULL;
  static const int pref[] = {KG_ISA_AVX512, KG_ISA_AVX2, KG_ISA_NEON,
                             KG_ISA_SCALAR};
  int cap = kg_dispatch_cap(), k;
  kt_recipe list[32];
  size_t n = kt_extreme_recipes(v->dtype, list);
  for (k = 0; k < 4 && !pick; k++) {
    const kg_variant *w = kt_find(v->kernel, pref[k]);
    /* f16 skips AVX-512 where kg_cpu_f16_avx2() says so and AVX2 exists */
    if (pref[k] == KG_ISA_AVX512 && v->dtype == KG_F16 && kg_cpu_f16_avx2() &&
        kt_find(v->kernel, KG_ISA_AVX2) && kg_dispatch_allows(KG_ISA_AVX2, cap))
      continue;
    if (w && kg_dispatch_allows(pref[k], cap))
      pick = w;
  }
  ck_assert_msg(pick != NULL, "%s: no variant of %s runs under cap %s",
                v->symbol, v->kernel, kg_cpu_isa_name(cap));
  for (k = 0; k < 3; k++) {
    kt_case c;
    kt_saved ps;
    ref_rng rng;
    char what[256];
    kt_shape s = kt_tight(v->op == KG_OP_QK_NORM ? 3 : k == 1 ? n : 7);
    kt_seed(&rng, v, "dispatch");
    kt_case_init(&c, v, &s);
    kt_set_params(&c, KT_W_RANDOM, &rng);
    if (k == 1)
      kt_fill_recipes(&c, list, n, &rng);
    else
      kt_fill_random(&c, &rng);
    if (k == 2) {
      kt_row row;
      kt_row_get(&c, 1, &row);
      ref_store(c.dtype, (void *)row.in, c.dim - 1, NAN);
    }
    kt_run(&c, pick);
    kt_save(&c, &ps);
    kt_run(&c, NULL);
    snprintf(what, sizeof what, "dispatcher (cap %s) vs %s%s",
             kg_cpu_isa_name(cap), pick->symbol,
             k == 1   ? " on extreme rows"
             : k == 2 ? " with a NaN row"
                      : "");
    KT_OK(kt_check_frame(&c, kt_msg, sizeof kt_msg));
    KT_OK(kt_compare(&c, &ps, KT_CMP_BITS, (size_t)-1, what, kt_msg,
                     sizeof kt_msg));
    kt_saved_free(&ps);
    kt_case_free(&c);
  }
}
END_TEST

/* ---- registration -------------------------------------------------------- */

/* Why: the contracts of this file; kt_qkn.c and kt_ln.c hold their own. */
static const kt_test kt_gen_tests[] = {
    {"KT-ACC-001 accuracy vs float64", &t_acc, KT_RMS | KT_QK | KT_LN},
    {"KT-EDGE-001 overflow/tiny rows finite and accurate", &t_extreme,
     KT_RMS | KT_QK | KT_LN},
    {"KT-EDGE-002 NaN/Inf poisons its row only", &t_nan_inf,
     KT_RMS | KT_QK | KT_LN},
    {"KT-EDGE-003 strides, padding, fused QKV untouched", &t_strides,
     KT_RMS | KT_QK | KT_LN},
    {"KT-EDGE-004 in place equals out of place", &t_in_place, KT_RMS | KT_LN},
    {"KT-EDGE-005 rows=0 writes nothing, NULL stats", &t_rows0_null,
     KT_RMS | KT_QK | KT_LN},
    {"KT-EDGE-006 no access outside the arrays", &t_guard_pages,
     KT_RMS | KT_QK | KT_LN},
    {"KT-EDGE-007 rows=0 reads nothing", &t_rows0_noread,
     KT_RMS | KT_QK | KT_LN},
    {"KT-DISP-001 dispatcher equals the picked level", &t_dispatch,
     KT_RMS | KT_QK | KT_LN | KT_AUTO},
};

/* Why: one rule for which variants a table entry applies to. */
static int kt_applies(const kg_variant *v, unsigned f) {
  unsigned op = v->op == KG_OP_RMSNORM   ? KT_RMS
                : v->op == KG_OP_QK_NORM ? KT_QK
                                         : KT_LN;
  if (!(f & op))
    return 0;
  if ((f & KT_SIMD) && v->isa == KG_ISA_SCALAR)
    return 0;
  if ((f & KT_HF) && v->rounding != KG_ROUND_HF)
    return 0;
  if ((f & KT_AUTO) && v->isa != KG_ISA_AUTO)
    return 0;
  return 1;
}

/* Test case names: Check keeps the pointers for the life of the runner,
 * so they are freed after srunner_free (the sanitized suite checks for
 * leaks). */
static char **kt_names;
static size_t kt_nnames, kt_names_cap;

/* Why: a test case per (contract, variant) so the report names both. */
static void kt_register(Suite *s, const char *id, const TTest *fn, int idx,
                        const char *symbol) {
  size_t len = strlen(id) + (symbol ? strlen(symbol) : 0) + 4;
  char *name = malloc(len);
  TCase *tc;
  if (!name) {
    fprintf(stderr, "test_kernels: out of memory\n");
    exit(2);
  }
  if (kt_nnames == kt_names_cap) {
    size_t cap = kt_names_cap ? 2 * kt_names_cap : 1024;
    char **grown = realloc(kt_names, cap * sizeof *grown);
    if (!grown) {
      fprintf(stderr, "test_kernels: out of memory\n");
      exit(2);
    }
    kt_names = grown;
    kt_names_cap = cap;
  }
  kt_names[kt_nnames++] = name;
  snprintf(name, len, "%s%s%s", id, symbol ? ": " : "", symbol ? symbol : "");
  tc = tcase_create(name);
  tcase_set_timeout(tc, KT_TIMEOUT);
  tcase_add_loop_test(tc, fn, idx, idx + 1);
  suite_add_tcase(s, tc);
}

/* Why: KT_ISA names one CPU level to test alone; a name that is not one
 * must not pass on nothing, so it ends the run. */
static int kt_isa_only(void) {
  const char *e = getenv("KT_ISA");
  int isa;
  if (!e || !*e)
    return -1;
  isa = kg_cpu_isa_from_name(e);
  if (isa < 0 || isa >= KG_ISA_CUDA) {
    fprintf(stderr, "test_kernels: KT_ISA=%s is not a CPU level\n", e);
    exit(2);
  }
  return isa;
}

/* Why: which variants run here is decided once; the rest are listed as
 * SKIPPED with the reason and never registered. */
int main(void) {
  Suite *s = suite_create("kgt kernels");
  SRunner *sr;
  char err[256];
  const kt_test *tables[3] = {kt_gen_tests, kt_qkn_tests, kt_ln_tests};
  const size_t ntab[3] = {sizeof kt_gen_tests / sizeof kt_gen_tests[0],
                          kt_qkn_ntests, kt_ln_ntests};
  size_t i, j, k, nskip = 0, nreg = 0, nother = 0;
  const char *only;
  int cap, nf, isa_only;
  if (kg_dispatch_resolve(&cap, err, sizeof err) != 0) {
    fprintf(stderr, "test_kernels: %s\n", err);
    return 2;
  }
  kt_runv = malloc(sizeof *kt_runv * (kgt_num_variants + 1));
  /* KT_ISA=<level> runs only that level's variants and the dispatching
   * ones (make test-avx512-emu: the others run in test-kernels) */
  isa_only = kt_isa_only();
  for (i = 0; i < kgt_num_variants; i++) {
    const kg_variant *v = &kgt_variants[i];
    if (isa_only >= 0 && v->isa != KG_ISA_AUTO && v->isa != isa_only) {
      nother++;
    } else if (v->isa == KG_ISA_AUTO || (v->isa < KG_ISA_CUDA && kg_cpu_has(v->isa))) {
      kt_runv[kt_nrun++] = v;
    } else if (v->isa == KG_ISA_CUDA) {
      printf("SKIPPED %s: cuda variants need a GPU and run in the CUDA "
             "suite\n",
             v->symbol);
      nskip++;
    } else {
      printf("SKIPPED %s: this CPU lacks %s\n", v->symbol,
             kg_cpu_isa_name(v->isa));
      nskip++;
    }
  }
  /* KT_ONLY=<id prefix> registers only those tests (make test-kernels-lf) */
  only = getenv("KT_ONLY");
  if (only && !*only)
    only = NULL;
  if (!only)
    kt_register(s, "KT-REF-001 reference self-check", t_ref_self, 0, NULL);
  for (i = 0; i < kt_nrun; i++) {
    for (j = 0; j < 3; j++) {
      for (k = 0; k < ntab[j]; k++) {
        const kt_test *t = &tables[j][k];
        if (!kt_applies(kt_runv[i], t->flags))
          continue;
        if (only && strncmp(t->id, only, strlen(only)) != 0)
          continue;
        kt_register(s, t->id, *t->fn, (int)i, kt_runv[i]->symbol);
        nreg++;
      }
    }
  }
  if (isa_only >= 0)
    printf("KT_ISA=%s: %zu variants of other levels left to test-kernels\n",
           kg_cpu_isa_name(isa_only), nother);
  printf("kgt: %zu variants: %zu run on this CPU, %zu skipped; dispatch cap "
         "%s; %zu test cases\n",
         (size_t)kgt_num_variants, kt_nrun, nskip, kg_cpu_isa_name(cap),
         nreg + !only);
  if (only && nreg == 0) { /* a misspelt prefix must not pass on nothing */
    fprintf(stderr, "test_kernels: KT_ONLY=%s matches no test\n", only);
    return 1;
  }
  /* which body the avx512 bf16 RMSNorm and QK-norm variants run (make
   * test-kernels-nobf16 runs the suite again with KGEN_AVX512_BF16=0 for
   * the other one) */
  if (kg_cpu_has(KG_ISA_AVX512)) {
    printf("avx512 bf16 RMSNorm / QK-norm sums: %s\n",
           kg_cpu_avx512_bf16() ? "vdpbf16ps (AVX512_BF16 twin)"
                                : "split + FMA (plain body)");
    /* make test-kernels-lf runs KT-LINES with KGEN_BF16_LINE_FRAME 0 and 1 */
    printf("avx512 bf16 QK-norm heads off line alignment: %s\n",
           kg_cpu_bf16_line_frame() ? "line frame (twin _lf)"
                                    : "split loads (plain code)");
  }
  printf("NOT RUN FALSIFY-QKN-006 (GPU vs CPU): needs a GPU; not part of "
         "this CPU suite\n");
  fflush(stdout);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_ENV);
  nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  for (i = 0; i < kt_nnames; i++)
    free(kt_names[i]);
  free(kt_names);
  free(kt_runv);
  return nf == 0 ? 0 : 1;
}
