/* test_edge.c: Check suite for size_t arithmetic in the generated kernels
 * (pack kgf, tests/fuzz/fuzz.lua), the one edge case the kernel suite
 * (tests/test_kernels.c: rows = 0, NULL statistics, padding, one-element
 * misalignment, guard pages) does not reach: strides so large that the
 * byte offset of a row is beyond 4 GiB.
 *
 * KE-001: every variant this CPU runs (and each dispatcher) is called on
 * rows (tokens, heads) that lie 2^31 + 3 elements apart, in a sparse
 * mapping: a large PROT_NONE, MAP_NORESERVE region where only the pages
 * the rows occupy are made accessible.  An offset computed in 32 bits (or
 * x's stride used for y) faults or lands on the wrong row.  The buffers
 * start one element past a page boundary, so they are aligned only to the
 * element size.  The results must equal, bit for bit, the same variant on
 * a tight copy of the rows. */
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS, MAP_NORESERVE */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kg_cpu.h"
#include "kgf.h"

#define KE_ROWS 3
#define KE_BIG ((size_t)1 << 31) /* elements between rows: > 4 GiB in bytes */

static const kg_variant *ke_run[256];
static size_t ke_nrun;

static size_t ke_esize(int dt) { return dt == KG_F32 ? 4 : 2; }

/* Why: a reproducible, finite, mixed-sign value per element index. */
static void ke_value(int dt, unsigned char *p, uint64_t seed) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  float f;
  uint32_t u;
  uint16_t h;
  z ^= z >> 29;
  z *= 0xbf58476d1ce4e5b9ull;
  z ^= z >> 32;
  f = (float)((double)(z & 0xffff) / 4096.0 - 8.0);
  if (dt == KG_F32) {
    memcpy(p, &f, 4);
    return;
  }
  if (dt == KG_BF16) {
    memcpy(&u, &f, 4);
    h = (uint16_t)(u >> 16); /* truncation: any bf16 will do */
  } else {
    /* an f16 in [-8, 8): sign, exponent 12..17 (2^-3 .. 2^2), mantissa */
    h = (uint16_t)(((z >> 20) & 1u) << 15 | (uint16_t)((12 + (z >> 21) % 6) << 10) |
                   (uint16_t)((z >> 24) & 0x3ffu));
  }
  memcpy(p, &h, 2);
}

/* A sparse region: `bytes` of PROT_NONE address space, nothing committed. */
typedef struct {
  unsigned char *base;
  size_t bytes;
} ke_region;

static void ke_reserve(ke_region *r, size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ck_assert_msg(p != MAP_FAILED, "mmap of %zu bytes of address space failed",
                bytes);
  r->base = p;
  r->bytes = bytes;
}

/* Make [off, off + len) of the region readable and writable. */
static void ke_open(ke_region *r, size_t off, size_t len) {
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  size_t a = off / pg * pg, b = (off + len + pg - 1) / pg * pg;
  ck_assert(b <= r->bytes);
  ck_assert_msg(mprotect(r->base + a, b - a, PROT_READ | PROT_WRITE) == 0,
                "mprotect failed");
}

static void ke_release(ke_region *r) { munmap(r->base, r->bytes); }

/* The element offset of segment s (row, or (token, head)) of buffer
 * `which` (0: x or q, 1: y or k) for stride st; its length is v->dim. */
static size_t ke_seg(const kg_variant *v, size_t st, size_t s, size_t nh) {
  if (v->op != KG_OP_QK_NORM)
    return s * st;
  if (v->layout == KG_HEAD_MAJOR) /* s = h * KE_ROWS + t */
    return (s / KE_ROWS) * st + (s % KE_ROWS) * v->dim;
  return (s / nh) * st + (s % nh) * v->dim; /* s = t * nh + h */
}

static size_t ke_nseg(const kg_variant *v, int which) {
  if (v->op != KG_OP_QK_NORM)
    return KE_ROWS;
  return KE_ROWS * (which == 0 ? v->num_heads : v->num_kv_heads);
}

static void ke_call(const kg_variant *v, unsigned char *a, size_t sa,
                    unsigned char *b, size_t sb, const unsigned char *w0,
                    const unsigned char *w1, float *rstd, float *mean) {
  switch (v->op) {
  case KG_OP_RMSNORM:
    v->fn.rmsnorm(KE_ROWS, a, sa, w0, b, sb, rstd);
    break;
  case KG_OP_QK_NORM:
    v->fn.qk_norm(KE_ROWS, a, sa, b, sb, w0, w1);
    break;
  default:
    v->fn.layernorm(KE_ROWS, a, sa, w0, w1, b, sb, mean, rstd);
    break;
  }
}

START_TEST(ke_far_rows) {
  const kg_variant *v = ke_run[_i];
  size_t es = ke_esize(v->dtype), d = v->dim, s, i;
  int qk = v->op == KG_OP_QK_NORM, which;
  size_t nh[2] = {qk ? v->num_heads : 1, qk ? v->num_kv_heads : 1};
  /* strides: x (q) and y (k) differ, both far beyond 4 GiB of bytes */
  size_t st[2] = {KE_BIG + 3, KE_BIG + 5};
  size_t nseg[2] = {ke_nseg(v, 0), ke_nseg(v, 1)};
  size_t tight[2], farthest = 0;
  ke_region reg[2];
  unsigned char *far[2], *near[2], w[2][64 * 4];
  float rstd[2][KE_ROWS], mean[2][KE_ROWS];
  if (qk && v->layout == KG_HEAD_MAJOR) {
    tight[0] = KE_ROWS * d;
    tight[1] = KE_ROWS * d;
  } else {
    tight[0] = nh[0] * d;
    tight[1] = nh[1] * d;
  }
  for (which = 0; which < 2; which++) {
    size_t n = 0;
    for (s = 0; s < nseg[which]; s++) {
      size_t end = ke_seg(v, st[which], s, nh[which]) + d;
      n = end > n ? end : n;
    }
    farthest = n * es > farthest ? n * es : farthest;
    ke_reserve(&reg[which], (n + 1) * es + 4096);
    /* one element past a page start: aligned only to the element size */
    far[which] = reg[which].base + es;
    near[which] = calloc(nseg[which] * d + 1, es);
    ck_assert(near[which] != NULL);
  }
  /* (a single K head of head_major has no stride to follow: q has) */
  ck_assert_msg(farthest > ((size_t)4 << 30), "%s: no row beyond 4 GiB",
                v->symbol);
  for (i = 0; i < d; i++) {
    ke_value(v->dtype, w[0] + i * es, 1000003u + i);
    ke_value(v->dtype, w[1] + i * es, 2000003u + i);
  }
  /* rows (segments): data in x / q / k; y starts as a sentinel */
  for (which = 0; which < 2; which++)
    for (s = 0; s < nseg[which]; s++) {
      size_t o = ke_seg(v, st[which], s, nh[which]);
      size_t on = ke_seg(v, tight[which], s, nh[which]);
      ke_open(&reg[which], es + o * es, d * es);
      for (i = 0; i < d; i++) {
        unsigned char *p = far[which] + (o + i) * es;
        if (which == 1 && !qk) {
          memset(p, 0x5a, es);
        } else {
          ke_value(v->dtype, p, (uint64_t)which << 40 | (uint64_t)s << 20 | i);
        }
        memcpy(near[which] + (on + i) * es, p, es);
      }
    }
  if (!qk) /* out of place: y is tight too in the near copy */
    memset(near[1], 0x5a, nseg[1] * d * es);
  memset(rstd, 0x5a, sizeof rstd);
  memset(mean, 0x5a, sizeof mean);
  ke_call(v, far[0], st[0], far[1], st[1], w[0], w[1], rstd[0], mean[0]);
  ke_call(v, near[0], tight[0], near[1], tight[1], w[0], w[1], rstd[1],
          mean[1]);
  for (which = qk ? 0 : 1; which < 2; which++)
    for (s = 0; s < nseg[which]; s++) {
      size_t o = ke_seg(v, st[which], s, nh[which]);
      size_t on = ke_seg(v, tight[which], s, nh[which]);
      ck_assert_msg(memcmp(far[which] + o * es, near[which] + on * es, d * es) == 0,
                    "%s: segment %zu of %s at element offset %zu (byte %zu) "
                    "differs from the same rows packed tightly",
                    v->symbol, s, which ? (qk ? "k" : "y") : (qk ? "q" : "x"),
                    o, o * es);
    }
  if (!qk) {
    ck_assert_msg(memcmp(rstd[0], rstd[1], sizeof rstd[0]) == 0,
                  "%s: rstd differs at far strides", v->symbol);
    if (v->op == KG_OP_LAYERNORM)
      ck_assert_msg(memcmp(mean[0], mean[1], sizeof mean[0]) == 0,
                    "%s: mean differs at far strides", v->symbol);
  }
  for (which = 0; which < 2; which++) {
    ke_release(&reg[which]);
    free(near[which]);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("kgf edge cases");
  TCase *tc = tcase_create("KE-001 byte offsets beyond 4 GiB (sparse mapping)");
  SRunner *sr;
  size_t i, nskip = 0;
  int nf;
  for (i = 0; i < kgf_num_variants && ke_nrun < 256; i++) {
    const kg_variant *v = &kgf_variants[i];
    if (v->isa == KG_ISA_AUTO || (v->isa < KG_ISA_CUDA && kg_cpu_has(v->isa)))
      ke_run[ke_nrun++] = v;
    else
      nskip++;
  }
  printf("kgf: %zu variants run here, %zu skipped (ISA not on this CPU)\n",
         ke_nrun, nskip);
  fflush(stdout);
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, ke_far_rows, 0, (int)ke_nrun);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_ENV);
  nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf == 0 ? 0 : 1;
}
