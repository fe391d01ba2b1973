/* kt_util.c: buffers, calls, data and tolerance checks for the kernel
 * tests (see kt_util.h).  Every tolerance used by more than one test lives
 * here, with the reasoning behind it. */
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS */
#include "kt_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define KT_GUARD 64      /* sentinel elements on each side of a heap buffer */
#define KT_EPS32 0x1p-23 /* f32 machine epsilon */
#define KT_LN_K 16.0     /* LayerNorm bound: 16 eps32 (DESIGN.md) */
#define KT_F32_ULP 8.0   /* f32 accuracy, SIMD vs scalar: 8 ULP */

/* ---- guarded buffers ----------------------------------------------------- */

/* Why: signalling NaNs: arithmetic on them yields a quiet NaN, so a value
 * that went through the kernel's math never keeps the sentinel's bits. */
uint32_t kt_sentinel(int dtype) {
  return dtype == REF_F32 ? 0x7fa5a5a5u : dtype == REF_BF16 ? 0x7fa5u : 0x7da5u;
}

/* Why: outputs start as sentinels, so a skipped element is visible. */
void kt_buf_fill_sentinel(kt_buf *b) {
  size_t i;
  uint32_t s = kt_sentinel(b->dtype);
  for (i = 0; i < b->total; i++)
    ref_set_bits(b->dtype, b->raw, i, s);
}

/* Why: heap buffers carry sentinel zones to catch writes just outside the
 * data; page buffers sit against a PROT_NONE page so that any access one
 * element past the end (or before the start) faults. */
void kt_buf_init(kt_buf *b, int dtype, size_t n, size_t misalign, int place) {
  size_t es = ref_esize(dtype);
  memset(b, 0, sizeof *b);
  b->dtype = dtype;
  b->n = n;
  if (place == KT_HEAP) {
    b->lead = KT_GUARD + misalign;
    b->total = b->lead + n + KT_GUARD;
    b->raw = aligned_alloc(64, (b->total * es + 63) / 64 * 64);
    if (b->raw == NULL) {
      fprintf(stderr, "kt_buf_init: out of memory\n");
      abort();
    }
    b->p = b->raw + b->lead * es;
  } else {
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t data = (n * es + pg - 1) / pg * pg;
    unsigned char *m;
    b->maplen = data + 2 * pg;
    m = mmap(NULL, b->maplen, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      perror("kt_buf_init: mmap");
      abort();
    }
    if (mprotect(m, pg, PROT_NONE) != 0 ||
        mprotect(m + pg + data, pg, PROT_NONE) != 0) {
      perror("kt_buf_init: mprotect");
      abort();
    }
    b->map = m;
    b->p = place == KT_PAGE_END ? m + pg + data - n * es : m + pg;
    b->raw = b->p;
    b->lead = 0;
    b->total = n;
  }
  kt_buf_fill_sentinel(b);
}

/* Why: one release path for heap and page buffers. */
void kt_buf_free(kt_buf *b) {
  if (b->map)
    munmap(b->map, b->maplen);
  else
    free(b->raw);
  memset(b, 0, sizeof *b);
}

/* Why: copies guards too, so a copied buffer checks the same way. */
void kt_buf_copy(kt_buf *dst, const kt_buf *src) {
  if (src->total)
    memcpy(dst->raw, src->raw, src->total * ref_esize(src->dtype));
}

/* Why: snapshots (kt_save, pre-call copies) on the heap, same layout. */
void kt_buf_clone(kt_buf *dst, const kt_buf *src) {
  size_t es = ref_esize(src->dtype);
  *dst = *src;
  dst->map = NULL;
  dst->maplen = 0;
  dst->raw = malloc(src->total * es + 1);
  if (dst->raw == NULL)
    abort();
  dst->p = dst->raw + src->lead * es;
  kt_buf_copy(dst, src);
}

/* Why: a write just outside the array shows as a changed sentinel. */
int kt_buf_guards_ok(const kt_buf *b, long *where) {
  size_t i;
  uint32_t s = kt_sentinel(b->dtype);
  for (i = 0; i < b->total; i++) {
    if (i >= b->lead && i < b->lead + b->n)
      continue;
    if (ref_bits(b->dtype, b->raw, i) != s) {
      *where = (long)i - (long)b->lead;
      return 0;
    }
  }
  return 1;
}

/* Why: read-only arrays must come back unchanged, bit for bit. */
uint64_t kt_buf_hash(const kt_buf *b) {
  const unsigned char *p = b->raw;
  size_t i, len = b->total * ref_esize(b->dtype);
  uint64_t h = 0xcbf29ce484222325ull;
  for (i = 0; i < len; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

/* ---- cases --------------------------------------------------------------- */

/* Why: one description of a call's memory for all three ops, so the frame
 * checks (padding, V, guards) and the row walk are written once. */
void kt_case_init(kt_case *c, const kg_variant *v, const kt_shape *s) {
  size_t n = s->n, d = v->dim, i;
  int dt = v->dtype;
  const int wp = s->wplace != KT_HEAP ? s->wplace : s->place;
  memset(c, 0, sizeof *c);
  c->v = v;
  c->op = v->op;
  c->dtype = dt;
  c->dim = d;
  c->n = n;
  c->eps = (double)v->eps;
  c->off = (double)v->weight_offset;
  c->in_place = s->in_place;
  c->fused = s->fused;
  c->want_rstd = s->want_rstd;
  c->want_mean = s->want_mean;
  if (c->op != KG_OP_QK_NORM) {
    c->st[0] = d + s->pad_in;
    c->st[1] = s->in_place ? c->st[0] : d + s->pad_out;
    kt_buf_init(&c->in[0], dt, n ? (n - 1) * c->st[0] + d : 0, s->misalign,
                s->place);
    kt_buf_init(&c->out[0], dt, n ? (n - 1) * c->st[1] + d : 0,
                s->misalign_out ? s->misalign_out : s->misalign, s->place);
    kt_buf_init(&c->par[0], dt, d, s->misalign, wp);
    if (c->op == KG_OP_LAYERNORM)
      kt_buf_init(&c->par[1], dt, d, s->misalign, wp);
    kt_buf_init(&c->rstd, REF_F32, n, 0, s->place);
    if (c->op == KG_OP_LAYERNORM)
      kt_buf_init(&c->mean, REF_F32, n, 0, s->place);
  } else {
    size_t nh = v->num_heads, nkv = v->num_kv_heads, nq, nk = 0;
    if (v->layout == KG_HEAD_MAJOR) {
      c->fused = 0;
      c->st[0] = n * d + s->pad_in;
      c->st[1] = n * d + s->pad_out;
      nq = n ? (nh - 1) * c->st[0] + n * d : 0;
      nk = n ? (nkv - 1) * c->st[1] + n * d : 0;
    } else if (c->fused) {
      c->st[0] = c->st[1] = (nh + 2 * nkv) * d + s->pad_in;
      nq = n ? (n - 1) * c->st[0] + (nh + 2 * nkv) * d : 0;
      c->k_off = nh * d;
    } else {
      c->st[0] = nh * d + s->pad_in;
      c->st[1] = nkv * d + s->pad_out;
      nq = n ? (n - 1) * c->st[0] + nh * d : 0;
      nk = n ? (n - 1) * c->st[1] + nkv * d : 0;
    }
    /* K's buffers and weights at their own offset, when given */
    const size_t mk = s->misalign_out && !c->fused ? s->misalign_out : s->misalign;
    kt_buf_init(&c->in[0], dt, nq, s->misalign, s->place);
    kt_buf_init(&c->out[0], dt, nq, s->misalign, s->place);
    if (!c->fused) {
      kt_buf_init(&c->in[1], dt, nk, mk, s->place);
      kt_buf_init(&c->out[1], dt, nk, mk, s->place);
    }
    kt_buf_init(&c->par[0], dt, d, s->misalign, wp);
    kt_buf_init(&c->par[1], dt, d, mk, wp);
  }
  for (i = 0; i < 2; i++)
    if (c->out[i].raw)
      kt_buf_clone(&c->snap[i], &c->out[i]);
}

/* Why: every buffer of a case, including snapshots. */
void kt_case_free(kt_case *c) {
  int i;
  for (i = 0; i < 2; i++) {
    kt_buf_free(&c->in[i]);
    kt_buf_free(&c->out[i]);
    kt_buf_free(&c->par[i]);
    kt_buf_free(&c->snap[i]);
  }
  kt_buf_free(&c->rstd);
  kt_buf_free(&c->mean);
}

/* Why: checks walk rows; qk_norm has (num_heads + num_kv_heads) per token. */
size_t kt_rows(const kt_case *c) {
  if (c->op == KG_OP_QK_NORM)
    return c->n * (c->v->num_heads + c->v->num_kv_heads);
  return c->n;
}

/* Why: rows of Q come first (token-major order), then rows of K. */
void kt_row_get(const kt_case *c, size_t r, kt_row *row) {
  int dt = c->dtype;
  memset(row, 0, sizeof *row);
  if (c->op != KG_OP_QK_NORM) {
    row->in = ref_cat(dt, c->in[0].p, r * c->st[0]);
    row->out = ref_at(dt, c->out[0].p, r * c->st[1]);
    row->w = c->par[0].p;
    row->b = c->par[1].p;
    row->t = r;
  } else {
    size_t nh = c->v->num_heads, nkv = c->v->num_kv_heads, o;
    int lay = c->v->layout;
    if (r < c->n * nh) {
      row->t = r / nh;
      row->h = r % nh;
      o = ref_qk_offset(lay, c->dim, c->st[0], row->t, row->h);
      row->in = ref_cat(dt, c->in[0].p, o);
      row->out = ref_at(dt, c->out[0].p, o);
      row->w = c->par[0].p;
    } else {
      r -= c->n * nh;
      row->which = 1;
      row->t = r / nkv;
      row->h = r % nkv;
      o = ref_qk_offset(lay, c->dim, c->st[1], row->t, row->h);
      if (c->fused) {
        row->in = ref_cat(dt, c->in[0].p, c->k_off + o);
        row->out = ref_at(dt, c->out[0].p, c->k_off + o);
      } else {
        row->in = ref_cat(dt, c->in[1].p, o);
        row->out = ref_at(dt, c->out[1].p, o);
      }
      row->w = c->par[1].p;
    }
  }
}

/* Why: failure messages name the row the way a user would find it. */
void kt_row_name(const kt_case *c, size_t r, char *buf, size_t len) {
  kt_row row;
  kt_row_get(c, r, &row);
  if (c->op == KG_OP_QK_NORM)
    snprintf(buf, len, "token %zu %s head %zu", row.t, row.which ? "K" : "Q",
             row.h);
  else
    snprintf(buf, len, "row %zu", r);
}

/* Why: data goes in as doubles and is stored rounded to T. */
void kt_set_row(kt_case *c, size_t r, const double *vals) {
  kt_row row;
  size_t i;
  kt_row_get(c, r, &row);
  for (i = 0; i < c->dim; i++)
    ref_store(c->dtype, (void *)row.in, i, vals[i]);
}

/* Why: tests that compare one call with another (KT-QKN-LONG, KT-LINES,
 * KT-RMS-ROWS) give the second the very input bits of the first's rows. */
void kt_copy_row(kt_case *dst, size_t rd, const kt_case *src, size_t rs) {
  kt_row a, b;
  kt_row_get(src, rs, &a);
  kt_row_get(dst, rd, &b);
  memcpy((void *)b.in, a.in, src->dim * ref_esize(src->dtype));
}

/* Why: exact value of a T element, for references and bounds. */
double kt_get(const kt_case *c, const void *row, size_t i) {
  return ref_load(c->dtype, row, i);
}

/* Why: raw bits, for bit-identity and NaN checks. */
uint32_t kt_getbits(const kt_case *c, const void *row, size_t i) {
  return ref_bits(c->dtype, row, i);
}

/* Why: gaps between rows (padded strides) start as the NaN sentinel, and
 * a NaN sum sends a row or group to the slow path, which reads each row
 * right whatever the fast code did; finite gaps make a fast path that
 * reads a gap as row data give wrong results.  Call before the rows are
 * set: this fills every usable input element. */
void kt_fill_gaps(kt_case *c) {
  size_t b, i;
  for (b = 0; b < 2; b++)
    for (i = 0; c->in[b].raw && i < c->in[b].n; i++)
      ref_store(c->dtype, c->in[b].p, i, 0.75);
}

/* Why: every call goes through here, so each one starts from the same
 * pristine inputs and sentinel outputs whichever variant runs. */
void kt_run(kt_case *c, const kg_variant *v) {
  int i;
  void *x, *k;
  if (v == NULL)
    v = c->v;
  if (c->op == KG_OP_QK_NORM || c->in_place) {
    for (i = 0; i < 2; i++)
      if (c->out[i].raw)
        kt_buf_copy(&c->out[i], &c->in[i]);
  } else {
    kt_buf_fill_sentinel(&c->out[0]);
  }
  if (c->rstd.raw)
    kt_buf_fill_sentinel(&c->rstd);
  if (c->mean.raw)
    kt_buf_fill_sentinel(&c->mean);
  for (i = 0; i < 2; i++) {
    if (c->out[i].raw)
      kt_buf_copy(&c->snap[i], &c->out[i]);
    c->in_hash[i] = c->in[i].raw ? kt_buf_hash(&c->in[i]) : 0;
    c->in_hash[2 + i] = c->par[i].raw ? kt_buf_hash(&c->par[i]) : 0;
  }
  switch (c->op) {
  case KG_OP_RMSNORM:
    x = c->in_place ? c->out[0].p : c->in[0].p;
    v->fn.rmsnorm(c->n, x, c->st[0], c->par[0].p, c->out[0].p, c->st[1],
                  c->want_rstd ? (float *)c->rstd.p : NULL);
    break;
  case KG_OP_LAYERNORM:
    x = c->in_place ? c->out[0].p : c->in[0].p;
    v->fn.layernorm(c->n, x, c->st[0], c->par[0].p, c->par[1].p, c->out[0].p,
                    c->st[1], c->want_mean ? (float *)c->mean.p : NULL,
                    c->want_rstd ? (float *)c->rstd.p : NULL);
    break;
  default:
    k = c->fused ? ref_at(c->dtype, c->out[0].p, c->k_off) : c->out[1].p;
    v->fn.qk_norm(c->n, c->out[0].p, c->st[0], k, c->st[1], c->par[0].p,
                  c->par[1].p);
    break;
  }
}

/* Why: the statistics arrays must get exactly n entries, and none when
 * NULL was passed. */
static int kt_stats_untouched(const kt_case *c, const kt_buf *b, int wanted,
                              const char *name, char *msg, size_t len) {
  size_t i;
  long where;
  uint32_t s = kt_sentinel(REF_F32);
  if (!b->raw)
    return 1;
  if (!kt_buf_guards_ok(b, &where)) {
    snprintf(msg, len, "%s: %s[%ld] written (outside the %zu rows)",
             c->v->symbol, name, where, c->n);
    return 0;
  }
  for (i = 0; i < b->n; i++) {
    if ((!wanted || i >= c->n) && ref_bits(REF_F32, b->p, i) != s) {
      snprintf(msg, len, "%s: %s[%zu] written although %s", c->v->symbol, name,
               i, wanted ? "beyond the rows" : "NULL was passed");
      return 0;
    }
  }
  return 1;
}

/* Why: what a kernel must not touch, checked after every call: guard
 * zones, read-only inputs, padding / V between rows, unused stats. */
int kt_check_frame(const kt_case *c, char *msg, size_t len) {
  const char *names[4] = {"input x/Q", "input K", "weight/gamma", "beta/k_w"};
  const kt_buf *all[8];
  size_t nrows = kt_rows(c), r, i;
  int b, na = 0;
  long where;
  unsigned char *mask[2] = {NULL, NULL};
  int ok = 1;
  for (b = 0; b < 2; b++) {
    all[na++] = &c->in[b];
    all[na++] = &c->out[b];
    all[na++] = &c->par[b];
  }
  for (b = 0; b < na; b++) {
    if (all[b]->raw && !kt_buf_guards_ok(all[b], &where)) {
      snprintf(msg, len,
               "%s: write outside an array: element %ld of a %zu-element "
               "buffer (%s)",
               c->v->symbol, where, all[b]->n,
               all[b] == &c->out[0]   ? "y/Q"
               : all[b] == &c->out[1] ? "K"
                                      : "input");
      return 0;
    }
  }
  /* read-only arrays: the kernel must not write x, w, gamma, beta */
  for (b = 0; b < 4; b++) {
    const kt_buf *p = b < 2 ? &c->in[b] : &c->par[b - 2];
    if (p->raw && kt_buf_hash(p) != c->in_hash[b]) {
      snprintf(msg, len, "%s: the kernel wrote its read-only %s array",
               c->v->symbol, names[b]);
      return 0;
    }
  }
  /* every element of y / Q / K outside the rows must be unchanged */
  for (b = 0; b < 2; b++)
    if (c->out[b].raw)
      mask[b] = calloc(c->out[b].n + 1, 1);
  for (r = 0; r < nrows; r++) {
    kt_row row;
    int w;
    size_t o;
    kt_row_get(c, r, &row);
    w = c->fused ? 0 : row.which;
    o = (size_t)((const unsigned char *)row.out -
                 (const unsigned char *)c->out[w].p) /
        ref_esize(c->dtype);
    memset(mask[w] + o, 1, c->dim);
  }
  for (b = 0; b < 2 && ok; b++) {
    if (!mask[b])
      continue;
    for (i = 0; i < c->out[b].n; i++) {
      uint32_t now = ref_bits(c->dtype, c->out[b].p, i);
      uint32_t was = ref_bits(c->dtype, c->snap[b].p, i);
      if (!mask[b][i] && now != was) {
        snprintf(msg, len,
                 "%s: element %zu of %s is outside every row (padding%s) "
                 "but changed: 0x%x -> 0x%x",
                 c->v->symbol, i,
                 b ? "K" : (c->op == KG_OP_QK_NORM ? "Q" : "y"),
                 c->fused ? ", K tail or V" : "", was, now);
        ok = 0;
        break;
      }
    }
  }
  free(mask[0]);
  free(mask[1]);
  if (!ok)
    return 0;
  return kt_stats_untouched(c, &c->rstd, c->want_rstd, "rstd", msg, len) &&
         kt_stats_untouched(c, &c->mean, c->want_mean, "mean", msg, len);
}

/* Why: the reference for one row of any op, from the pristine input. */
void kt_row_ref(const kt_case *c, size_t r, double *y, double *rstd,
                double *mean) {
  kt_row row;
  double rs, mu = 0;
  kt_row_get(c, r, &row);
  if (c->op == KG_OP_LAYERNORM)
    ref_layernorm_row(c->dtype, c->dim, row.in, row.w, row.b, c->eps, y, &mu,
                      &rs);
  else
    rs = ref_rmsnorm_row(c->dtype, c->v->rounding, c->dim, row.in, row.w,
                         c->eps, c->off, y);
  if (rstd)
    *rstd = rs;
  if (mean)
    *mean = mu;
}

/* ---- data ---------------------------------------------------------------- */

void kt_scale_range(int dtype, int wide, double *lo, double *hi) {
  if (!wide) {
    *lo = -3;
    *hi = 3;
  } else if (dtype == REF_F16) {
    *lo = -4; /* f16 holds 6e-8 .. 65504: 1e4 * 3.5 still fits */
    *hi = 4;
  } else {
    *lo = -20;
    *hi = 20;
  }
}

/* Why: one generator for every row recipe the tests name. */
void kt_gen(int dtype, size_t dim, const kt_recipe *rc, ref_rng *rng,
            double *v) {
  size_t i, k;
  double mx = ref_max_T(dtype), s = rc->scale, o = rc->offset;
  for (i = 0; i < dim; i++) {
    double x = 0;
    switch (rc->kind) {
    case KT_NORMAL:
      x = o + ref_rng_normal(rng) * s;
      break;
    case KT_POSITIVE:
      x = ref_rng_unit(rng) * s;
      break;
    case KT_SPARSE:
      x = 0;
      break;
    case KT_MIXED:
      x = ref_rng_normal(rng) * s * ref_rng_pow10(rng, -3, 3);
      break;
    case KT_CONST:
      x = o;
      break;
    case KT_ALT:
      x = (i & 1) ? -s : s;
      break;
    case KT_ZERO:
      x = o < 0 ? -0.0 : 0.0;
      break;
    case KT_ONEHOT:
      x = o;
      break;
    case KT_BIGSMALL:
      x = (ref_rng_next(rng) & 1 ? s : o) * ref_rng_range(rng, 0.5, 1.0);
      if (ref_rng_next(rng) & 1)
        x = -x;
      break;
    case KT_GRID:
      x = floor(ref_rng_range(rng, -s, s + 1)) * o;
      break;
    }
    v[i] = x;
  }
  if (rc->kind == KT_SPARSE)
    for (k = 0; k < 1 + dim / 16; k++)
      v[ref_rng_next(rng) % dim] = ref_rng_normal(rng) * s;
  if (rc->kind == KT_ONEHOT)
    v[ref_rng_next(rng) % dim] = s;
  for (i = 0; i < dim; i++)
    if (fabs(v[i]) > mx)
      v[i] = copysign(mx, v[i]);
}

/* Why: random weights include exact zeros and +-1 (products that must be
 * exact) besides the generic values. */
static double kt_rand_weight(ref_rng *rng) {
  uint64_t u = ref_rng_next(rng) % 32;
  if (u == 0)
    return 0.0;
  if (u == 1)
    return (ref_rng_next(rng) & 1) ? 1.0 : -1.0;
  return ref_rng_range(rng, -2.0, 2.0);
}

/* Why: unit weights for the contract tests, random ones elsewhere. */
void kt_set_params(kt_case *c, int mode, ref_rng *rng) {
  size_t i;
  int b;
  for (i = 0; i < c->dim; i++) {
    if (c->op == KG_OP_LAYERNORM) {
      double g = mode == KT_W_RANDOM ? kt_rand_weight(rng) : 1.0;
      double be = mode == KT_W_UNIT ? 0.0 : ref_rng_normal(rng) * 0.5;
      ref_store(c->dtype, c->par[0].p, i, g);
      ref_store(c->dtype, c->par[1].p, i, be);
    } else {
      for (b = 0; b < (c->op == KG_OP_QK_NORM ? 2 : 1); b++) {
        double w = mode == KT_W_RANDOM ? kt_rand_weight(rng) : 1.0 - c->off;
        ref_store(c->dtype, c->par[b].p, i, w);
      }
    }
  }
}

/* ---- tolerances ---------------------------------------------------------- */

/* Why: rmsnorm/qk_norm have no cancellation, so every element is held to
 * the DESIGN.md ULP budget.  Layernorm's x - mean cancels, so its error is
 * bounded relative to the terms that enter, not to the result:
 * 16 eps32 (|g| (|x| + |mu|) rstd + |b|) as DESIGN.md states.  The
 * kernels sum the mean in double lanes, so cancelling and sparse rows
 * (|mu| << mean|x|) are held to it too.  One term no f32 result can avoid
 * is added:
 *  - 2^-148 (|g| rstd + 2): below 2^-126 f32 has an absolute grid of
 *    2^-149, so a tiny mean carries that error times rstd, and a tiny
 *    result its own rounding.
 * 16-bit storage adds 1 ULP of T for the final rounding. */
double kt_bound_elem(const kt_case *c, double ref, double x, double g, double b,
                     double mu, double rstd, double mabs) {
  (void)mabs; /* mean|x|: used by the mean check, not by this bound */
  if (c->op == KG_OP_LAYERNORM) {
    double e = KT_LN_K * KT_EPS32 *
                   (fabs(g) * (fabs(x) + fabs(mu)) * rstd + fabs(b)) +
               0x1p-148 * (fabs(g) * rstd + 2);
    return e + (c->dtype == REF_F32 ? 0.0 : ref_ulp_T(c->dtype, ref));
  }
  if (c->dtype == REF_F32)
    return KT_F32_ULP * ref_ulp_f32(ref);
  /* within `units` steps of round_T(ref), which is itself 1/2 ULP away */
  return ((c->v->rounding == KG_ROUND_HF ? 2.0 : 1.0) + 0.5) *
         ref_ulp_T(c->dtype, ref);
}

/* Why: one pass/fail number per element (<= 1 passes), so the worst
 * element of a call can be reported whatever the op and dtype. */
double kt_ratio_elem(const kt_case *c, uint32_t y, double ref, double x,
                     double g, double b, double mu, double rstd, double mabs) {
  int ynan = ref_is_nan_bits(c->dtype, y);
  double yv, err, bound;
  if (isnan(ref))
    return ynan ? 0.0 : INFINITY;
  if (ynan)
    return INFINITY;
  if (c->op != KG_OP_LAYERNORM) {
    if (c->dtype == REF_F32) {
      float f;
      memcpy(&f, &y, 4);
      return ref_ulp_dist_f32(f, ref) / KT_F32_ULP;
    }
    return ref_bits_dist(c->dtype, y, ref_to_bits(c->dtype, ref)) /
           (c->v->rounding == KG_ROUND_HF ? 2.0 : 1.0);
  }
  {
    uint32_t t32 = y;
    uint16_t t16 = (uint16_t)y;
    yv = c->dtype == REF_F32 ? ref_load(REF_F32, &t32, 0)
                             : ref_load(c->dtype, &t16, 0);
  }
  if (isinf(yv))
    return INFINITY;
  err = fabs(yv - ref);
  bound = kt_bound_elem(c, ref, x, g, b, mu, rstd, mabs);
  if (bound == 0)
    return err == 0 ? 0.0 : INFINITY;
  return err / bound;
}

/* Why: layernorm's rstd inherits the error of the mean: var_k = var +
 * dmu^2 (two-pass), |dmu| <= 16 eps32 M with M = mean|x| + |mu|, so the
 * relative rstd error grows by (16 eps32 M rstd)^2 / 2 on top of the 8 ULP
 * of a well-conditioned row. */
static double kt_ln_rstd_tol(double rstd, double M) {
  double t = KT_LN_K * KT_EPS32 * M * rstd;
  return KT_F32_ULP * ref_ulp_f32(rstd) + rstd * 0.5 * t * t;
}

/* Why: the mean is a sum of terms of both signs; its error is bounded by
 * the same 16 eps32 as the layernorm bound, relative to mean|x| + |mu|,
 * plus the subnormal grid. */
static double kt_ln_mean_tol(double mu, double M) {
  (void)mu;
  return KT_LN_K * KT_EPS32 * M + 0x1p-148;
}

/* Why: the scale of the mean's rounding error (see kt_bound_elem). */
double kt_mean_abs(const kt_case *c, const void *row) {
  long double s = 0;
  size_t i;
  for (i = 0; i < c->dim; i++)
    s += fabsl((long double)kt_get(c, row, i));
  return (double)(s / (long double)c->dim);
}

/* Why: rstd / mean entries as floats. */
static float kt_statf(const kt_buf *b, size_t i) {
  float f;
  memcpy(&f, ref_cat(REF_F32, b->p, i), 4);
  return f;
}

/* Why: one wording of "how far off" for messages, per op and dtype. */
static void kt_err_text(const kt_case *c, double ratio, char *buf, size_t len) {
  if (c->op == KG_OP_LAYERNORM)
    snprintf(buf, len,
             "%.3g x the bound 16 eps32 (|g|(|x|+|mu|+mean|x|)rstd+|b|) + "
             "2^-148 (|g|rstd+2)%s",
             ratio, c->dtype == REF_F32 ? "" : " + 1 ULP(T)");
  else if (c->dtype == REF_F32)
    snprintf(buf, len, "%.2f ULP (max 8)", ratio * KT_F32_ULP);
  else
    snprintf(buf, len, "%.0f steps of %s from round(ref) (max %d)",
             ratio * (c->v->rounding == KG_ROUND_HF ? 2.0 : 1.0),
             ref_dtype_name(c->dtype), c->v->rounding == KG_ROUND_HF ? 2 : 1);
}

/* Why: the accuracy check every test shares; it reports the single
 * worst element (or statistic) with its inputs and the tolerance. */
int kt_check_acc(const kt_case *c, const char *what, double *worst_out,
                 char *msg, size_t len) {
  size_t nrows = kt_rows(c), r, i, wr = 0, wi = 0;
  double *y = malloc(sizeof(double) * (c->dim + 1));
  double worst = 0, wref = 0, wx = 0, wy = 0;
  const char *wkind = "y";
  int ok;
  for (r = 0; r < nrows; r++) {
    kt_row row;
    double rs, mu, M = 0, mabs = 0;
    kt_row_get(c, r, &row);
    kt_row_ref(c, r, y, &rs, &mu);
    if (c->op == KG_OP_LAYERNORM) {
      mabs = kt_mean_abs(c, row.in);
      M = mabs + fabs(mu);
    }
    for (i = 0; i < c->dim; i++) {
      double g = 1, b = 0, x = kt_get(c, row.in, i), q;
      if (c->op == KG_OP_LAYERNORM) {
        g = kt_get(c, row.w, i);
        b = kt_get(c, row.b, i);
      }
      q = kt_ratio_elem(c, kt_getbits(c, row.out, i), y[i], x, g, b, mu, rs,
                        mabs);
      if (!(q <= worst)) {
        worst = q;
        wr = r;
        wi = i;
        wref = y[i];
        wx = x;
        wy = kt_get(c, row.out, i);
        wkind = "y";
      }
    }
    if (c->want_rstd && c->op != KG_OP_QK_NORM) {
      float f = kt_statf(&c->rstd, r);
      double q;
      if (isnan(rs))
        q = isnan(f) ? 0 : INFINITY;
      else if (c->op == KG_OP_RMSNORM)
        q = ref_ulp_dist_f32(f, rs) / KT_F32_ULP;
      else
        q = isnan(f) ? INFINITY : fabs((double)f - rs) / kt_ln_rstd_tol(rs, M);
      if (!(q <= worst)) {
        worst = q;
        wr = r;
        wi = 0;
        wref = rs;
        wy = f;
        wx = NAN;
        wkind = "rstd";
      }
    }
    if (c->want_mean && c->op == KG_OP_LAYERNORM && !isnan(mu)) {
      float f = kt_statf(&c->mean, r);
      double q =
          isnan(f) ? INFINITY : fabs((double)f - mu) / kt_ln_mean_tol(mu, M);
      if (!(q <= worst)) {
        worst = q;
        wr = r;
        wi = 0;
        wref = mu;
        wy = f;
        wx = NAN;
        wkind = "mean";
      }
    }
  }
  free(y);
  if (worst_out)
    *worst_out = worst;
  ok = worst <= 1.0;
  if (!ok) {
    char rn[64], et[128];
    kt_row_name(c, wr, rn, sizeof rn);
    if (strcmp(wkind, "y") == 0) {
      kt_err_text(c, worst, et, sizeof et);
      snprintf(msg, len,
               "%s: %s: %s of %zu, element %zu: x=%.9g y=%.9g ref=%.17g: %s",
               c->v->symbol, what, rn, kt_rows(c), wi, wx, wy, wref, et);
    } else {
      snprintf(
          msg, len,
          "%s: %s: %s of %zu: %s=%.9g ref=%.17g: %.3g x its tolerance "
          "(%s)",
          c->v->symbol, what, rn, kt_rows(c), wkind, wy, wref, worst,
          strcmp(wkind, "rstd") == 0
              ? (c->op == KG_OP_RMSNORM ? "8 ULP" : "8 ULP + mean-error term")
              : "16 eps32 (mean|x| + |mu|)");
    }
  }
  return ok;
}

/* Why: keep one run's results to compare with another run. */
void kt_save(const kt_case *c, kt_saved *s) {
  int b;
  memset(s, 0, sizeof *s);
  for (b = 0; b < 2; b++)
    if (c->out[b].raw)
      kt_buf_clone(&s->out[b], &c->out[b]);
  if (c->rstd.raw)
    kt_buf_clone(&s->rstd, &c->rstd);
  if (c->mean.raw)
    kt_buf_clone(&s->mean, &c->mean);
}

/* Why: release a kt_save. */
void kt_saved_free(kt_saved *s) {
  kt_buf_free(&s->out[0]);
  kt_buf_free(&s->out[1]);
  kt_buf_free(&s->rstd);
  kt_buf_free(&s->mean);
}

/* Why: the saved run's row r, located through the same geometry. */
static const void *kt_saved_row(const kt_case *c, const kt_saved *s,
                                const kt_row *row) {
  int w = c->fused ? 0 : row->which;
  size_t o = (size_t)((const unsigned char *)row->out -
                      (const unsigned char *)c->out[w].p);
  return (const unsigned char *)s->out[w].p + o;
}

/* Why: SIMD and scalar may sum in different orders, each within its own
 * error budget of the exact result; for rmsnorm/qk_norm the DESIGN.md
 * budget between them is 8 ULP (f32) / 1 step (16-bit; 2 for "hf", which
 * rounds twice).  For layernorm the difference of the means is amplified
 * by rstd, so the layernorm bound's cancellation term is added. */
static double kt_pair_ratio(const kt_case *c, uint32_t a, uint32_t b, double x,
                            double g, double mu, double rs, double mabs) {
  int an = ref_is_nan_bits(c->dtype, a), bn = ref_is_nan_bits(c->dtype, b);
  double av, bv, tol;
  if (an || bn)
    return (an && bn) ? 0.0 : INFINITY;
  if (c->op != KG_OP_LAYERNORM && c->dtype != REF_F32)
    return ref_bits_dist(c->dtype, a, b) /
           (c->v->rounding == KG_ROUND_HF ? 2.0 : 1.0);
  {
    uint32_t ta = a, tb = b;
    uint16_t ha = (uint16_t)a, hb = (uint16_t)b;
    av = c->dtype == REF_F32 ? ref_load(REF_F32, &ta, 0)
                             : ref_load(c->dtype, &ha, 0);
    bv = c->dtype == REF_F32 ? ref_load(REF_F32, &tb, 0)
                             : ref_load(c->dtype, &hb, 0);
  }
  if (isinf(av) || isinf(bv))
    return av == bv ? 0.0 : INFINITY;
  tol = KT_F32_ULP * ref_ulp_f32(bv);
  if (c->op == KG_OP_LAYERNORM) {
    tol += KT_LN_K * KT_EPS32 * fabs(g) * (fabs(x) + fabs(mu) + mabs) * rs +
           0x1p-148 * (fabs(g) * rs + 2);
    if (c->dtype != REF_F32)
      tol = tol + ref_ulp_T(c->dtype, bv);
  }
  return fabs(av - bv) / tol;
}

/* Why: bit-identity (in place, NULL stats, dispatcher, untouched rows)
 * and SIMD-vs-scalar agreement, row by row, with a precise message. */
int kt_compare(const kt_case *c, const kt_saved *s, int mode, size_t skip_row,
               const char *what, char *msg, size_t len) {
  size_t nrows = kt_rows(c), r, i;
  double *y = malloc(sizeof(double) * (c->dim + 1));
  for (r = 0; r < nrows; r++) {
    kt_row row;
    const void *old;
    double rs = 0, mu = 0, M = 0, mabs = 0;
    char rn[64];
    if (r == skip_row)
      continue;
    kt_row_get(c, r, &row);
    old = kt_saved_row(c, s, &row);
    kt_row_name(c, r, rn, sizeof rn);
    if (mode & KT_CMP_TOL) {
      kt_row_ref(c, r, y, &rs, &mu);
      if (c->op == KG_OP_LAYERNORM) {
        mabs = kt_mean_abs(c, row.in);
        M = mabs + fabs(mu);
      }
    }
    for (i = 0; i < c->dim; i++) {
      uint32_t a = kt_getbits(c, row.out, i), b = kt_getbits(c, old, i);
      double q;
      if (!(mode & KT_CMP_TOL)) {
        if (a != b) {
          snprintf(msg, len,
                   "%s: %s: %s element %zu differs: 0x%x vs 0x%x (%.9g vs "
                   "%.9g), expected bit-identical",
                   c->v->symbol, what, rn, i, a, b, kt_get(c, row.out, i),
                   kt_get(c, old, i));
          free(y);
          return 0;
        }
        continue;
      }
      q = kt_pair_ratio(c, a, b, kt_get(c, row.in, i),
                        c->op == KG_OP_LAYERNORM ? kt_get(c, row.w, i) : 1.0,
                        mu, rs, mabs);
      if (q > 1.0) {
        snprintf(msg, len,
                 "%s: %s: %s element %zu: %.9g vs %.9g: %.3g x the tolerance",
                 c->v->symbol, what, rn, i, kt_get(c, row.out, i),
                 kt_get(c, old, i), q);
        free(y);
        return 0;
      }
    }
    if (c->op == KG_OP_QK_NORM || (mode & KT_CMP_ROWS_ONLY))
      continue;
    if (c->want_rstd || c->want_mean) {
      int k;
      for (k = 0; k < 2; k++) {
        const kt_buf *now = k ? &c->mean : &c->rstd,
                     *was = k ? &s->mean : &s->rstd;
        float fa, fb;
        double q;
        if (!(k ? c->want_mean : c->want_rstd) || !now->raw)
          continue;
        fa = kt_statf(now, r);
        fb = kt_statf(was, r);
        if (!(mode & KT_CMP_TOL)) {
          q = memcmp(ref_cat(REF_F32, now->p, r), ref_cat(REF_F32, was->p, r),
                     4) == 0
                  ? 0
                  : INFINITY;
        } else if (isnan(fa) || isnan(fb)) {
          q = (isnan(fa) && isnan(fb)) ? 0 : INFINITY;
        } else if (k == 0) {
          q = fabs((double)fa - fb) / (c->op == KG_OP_LAYERNORM
                                           ? kt_ln_rstd_tol(rs, M)
                                           : KT_F32_ULP * ref_ulp_f32(fb));
        } else {
          q = fabs((double)fa - fb) / kt_ln_mean_tol(mu, M);
        }
        if (q > 1.0) {
          snprintf(msg, len, "%s: %s: %s: %s %.9g vs %.9g%s", c->v->symbol,
                   what, rn, k ? "mean" : "rstd", fa, fb,
                   !(mode & KT_CMP_TOL) ? ", expected bit-identical"
                                        : ": beyond the tolerance");
          free(y);
          return 0;
        }
      }
    }
  }
  free(y);
  return 1;
}
