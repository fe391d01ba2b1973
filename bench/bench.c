/* bench.c: `make bench` and `make bench-spec`, the speed of every kernel
 * variant of one pack (the bench pack, bench/specs/bench.lua, unless
 * KB_PACK_HEADER names another) against bandwidth ceilings measured in the
 * same process, interleaved with the kernels.
 *
 * For every shape x dtype: every variant of the pack's variant table that
 * matches (op, dim, heads, dtype) and that this CPU runs, plus the ceilings
 * (memcpy, non-temporal copy, in-place read-modify-write) over the same
 * bytes of the same buffers.  Each round times one batch (>= 20 us) of every
 * item, in an order that rotates per round; an item's figure is the median
 * over rounds, and a kernel's ratio is the median of its per-round ratios to
 * the ceiling timed in the same round.  Input sets are rotated call by call
 * so the data sits where the shape says (L2, LLC or DRAM).
 *
 * Row ranges: the kernels are single-threaded; a caller splits rows over
 * threads by calling the kernel on sub-ranges (see kb_job_run and
 * bench/README.md).  The large shapes are also timed that way on 2 threads.
 *
 * Usage: bench [--quick] [--filter A,B] [--md F] [--json F] [--dat F]
 *              [--rounds N] [--dram-mib N] [--offset N] [--w-offset N] [--no-2t] [--commit S] [--date S]
 * Speed is reported, never asserted: the exit status is 0 whatever the
 * numbers (2 on bad arguments or a --filter that matches nothing, 1 when
 * memory or an output file cannot be had). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef KB_PACK_HEADER
#define KB_PACK_HEADER "kgb.h"
#define KB_PACK_VARIANTS kgb_variants
#define KB_PACK_NUM kgb_num_variants
#endif
#include KB_PACK_HEADER
#include "kg_convert.h"

#include "kb_ceil.h"
#include "kb_pool.h"
#include "kb_report.h"
#include "kb_shape.h"
#include "kb_sys.h"

static const char *const kb_resid_name[] = { "L2", "LLC", "DRAM" };

static const char *const kb_dtype_name[] = { "f32", "bf16", "f16" };

/* Run-wide settings from the command line and the machine. */
typedef struct kb_opts {
  int quick, no2t, rounds_small, rounds_large;
  int no_rotate;            /* --no-rotate: cached shapes call on one set */
  size_t offset;            /* bytes past a 64-byte boundary where x and y sets start */
  size_t kshift;            /* QK-norm: K heads this many bytes further into their lines than Q */
  size_t woff;              /* bytes past a 64-byte boundary where the weights start */
  double min_batch_ns;
  size_t l2_target, llc_target, dram_target;
  const char *filter, *md, *json, *dat, *commit, *date;
} kb_opts;

/* The buffers of one shape x dtype: nsets rotated sets. */
typedef struct kb_case {
  const kb_shape *sh;
  int dtype;
  size_t es;                /* element size */
  size_t nsets, next;       /* rotation */
  int fixed;                /* --no-rotate on a cached shape: every call on set 0 */
  unsigned char *a, *b;     /* rms/ln: x sets, y sets; qk: fused QKV sets */
  unsigned char *n;         /* the non-temporal copy's own destination (L2, LLC shapes) */
  unsigned char *a_map, *b_map, *n_map; /* the mappings (a, b, n start --offset bytes in) */
  size_t a_set, b_set;      /* bytes between sets */
  size_t a_len, b_len, n_len; /* mapped bytes */
  unsigned char *w1, *w2;   /* w | gamma, beta | q_w, k_w (--w-offset bytes into w1_map, w2_map) */
  unsigned char *w1_map, *w2_map;
  size_t stride;            /* elements between rows (tokens) */
  size_t tstep;             /* elements from a row (token) to the next: stride, or head_dim head-major */
  size_t ko;                /* QK-norm: bytes from the Q heads to the K heads */
  size_t a_bytes;           /* bytes of one set of a that kernels touch or read */
  size_t rg_bytes, rg_stride; /* ceiling region: row bytes, stride bytes */
  uint64_t mask;            /* sign bits of the dtype, for the RMW pass */
  double kbytes, cbytes;    /* bytes per call: kernel, ceiling */
} kb_case;

enum { KB_KERNEL = 0, KB_MEMCPY = 1, KB_NT = 2, KB_RMW = 3 };
static const char *const kb_kind_name[] = { "", "memcpy", "nt-copy", "rmw" };

/* One timed thing of a case. */
typedef struct kb_item {
  int kind, threads;
  const kg_variant *v;
  size_t reps;
  double *ns;               /* per round: ns per call */
  int retried, disturbed;   /* batches re-timed; rounds timed by on-CPU time */
  int check;                /* kb_check: 0 agrees with scalar, 1 not, -1 unchecked */
  double check_err;
} kb_item;

/* One call's worth of work: rows [r0, r1) of set `set`. */
typedef struct kb_job {
  const kb_case *c;
  const kb_item *it;
  size_t set, r0, r1;
} kb_job;

static kb_pool kb_the_pool;
static int kb_have_pool;

/* The untimed read between a DRAM shape's batches (kb_settle). */
static unsigned char *kb_settle_buf;
static size_t kb_settle_bytes;

/* Why: this is the row-range pattern a caller uses to split a call over
 * threads: the same kernel on rows [r0, r1), every pointer advanced by r0
 * rows of its own stride (rstd/mean, when used, by r0 floats).  Ceilings
 * split the same way so 2-thread ratios compare like with like. */
static void kb_job_run(void *arg)
{
  const kb_job *j = arg;
  const kb_case *c = j->c;
  const size_t n = j->r1 - j->r0;
  unsigned char *a = c->a + j->set * c->a_set;
  switch (j->it->kind) {
  case KB_KERNEL: {
    const kg_variant *v = j->it->v;
    const size_t off = j->r0 * c->tstep * c->es;
    if (v->op == KG_OP_RMSNORM) {
      v->fn.rmsnorm(n, a + off, c->stride, c->w1, c->b + j->set * c->b_set + off, c->stride, NULL);
    } else if (v->op == KG_OP_LAYERNORM) {
      v->fn.layernorm(n, a + off, c->stride, c->w1, c->w2, c->b + j->set * c->b_set + off, c->stride,
                      NULL, NULL);
    } else {
      unsigned char *q = a + off;
      v->fn.qk_norm(n, q, c->stride, q + c->ko, c->stride, c->w1, c->w2);
    }
    break;
  }
  case KB_MEMCPY:
  case KB_NT: {
    /* out-of-place: x -> y of the set; in-place qk: q|k heads of this set
     * into the set half a rotation away (same layout, so the data stays
     * valid).  Not the next set: the next call would then read what this
     * one just wrote, from L1, while the kernel reads its set from where
     * the rotation leaves it (L2 for decode).  The non-temporal copy of
     * a cached shape writes its own buffer: its stores take their lines
     * out of every cache, and on the sets they would leave the next items
     * to fetch from DRAM what the shape says is in L2 or the LLC. */
    unsigned char *dst = c->b ? c->b + j->set * c->b_set
                              : c->a + ((j->set + c->nsets / 2) % c->nsets) * c->a_set;
    if (j->it->kind == KB_MEMCPY) kb_ceil_memcpy(dst, a, j->r0, j->r1, c->rg_bytes, c->rg_stride);
    else kb_ceil_ntcopy(c->n ? c->n : dst, a, j->r0, j->r1, c->rg_bytes, c->rg_stride);
    break;
  }
  default:
    kb_ceil_rmw(a, j->r0, j->r1, c->rg_bytes, c->rg_stride, c->mask);
    break;
  }
}

/* Why: one timed batch: `reps` calls, each on the next set of the
 * rotation; returns wall ns per call (CLOCK_MONOTONIC) and the ns per call
 * its threads were on a CPU (least and most of the two threads of a
 * 2-thread batch): less than the wall time when a thread was preempted. */
static double kb_batch(kb_case *c, const kb_item *it, size_t reps, double *on_min, double *on_max)
{
  const size_t rows = c->sh->rows, mid = rows / 2;
  const int two = it->threads == 2;
  const double m0 = kb_sys_cpu_ns(CLOCK_THREAD_CPUTIME_ID);
  const double w0 = two ? kb_sys_cpu_ns(kb_the_pool.clock) : 0.0;
  const double t0 = kb_sys_now_ns();
  for (size_t i = 0; i < reps; i++) {
    const size_t s = c->fixed ? 0 : c->next++ % c->nsets;
    if (!two) {
      kb_job j = { c, it, s, 0, rows };
      kb_job_run(&j);
    } else {
      kb_job j0 = { c, it, s, 0, mid }, j1 = { c, it, s, mid, rows };
      kb_pool_run2(&kb_the_pool, kb_job_run, &j0, &j1);
    }
  }
  const double t1 = kb_sys_now_ns();
  const double m = kb_sys_cpu_ns(CLOCK_THREAD_CPUTIME_ID) - m0;
  const double w = two ? kb_sys_cpu_ns(kb_the_pool.clock) - w0 : m;
  if (on_min) *on_min = (m < w ? m : w) / (double)reps;
  if (on_max) *on_max = (m > w ? m : w) / (double)reps;
  return (t1 - t0) / (double)reps;
}

/* Why: a DRAM shape's in-place items (the read-modify-write ceiling,
 * QK-norm prefill) end with up to the LLC's worth of dirty lines, written
 * back while the next item runs, and the order of a round only rotates
 * (items (k + r) % n), so one item always followed the in-place pass and
 * paid for its write-backs: the first kernel of a one-variant pack, 1.12
 * against 1.03-1.07 x memcpy (bench/RESULTS.md run 65).  An untimed read
 * of twice the LLC (64-128 MiB) after every DRAM batch writes them back
 * and leaves every item the same clean caches. */
static void kb_settle(void)
{
  volatile unsigned char sink = 0;
  unsigned char acc = 0;
  for (size_t i = 0; i < kb_settle_bytes; i += 64) acc ^= kb_settle_buf[i];
  sink = acc;
  (void)sink;
}

/* Why: other processes share this machine.  A batch whose threads were
 * off their CPU for more than 1% (+2 us per call) of it is timed again, up
 * to 3 times while batches are short (< 2 ms: a quiet slot is likely);
 * failing that, the batch counts its on-CPU time (the longer thread's, for
 * 2 threads) and the round is marked.  On-CPU time is a fair stand-in for
 * one thread; for two it cannot tell whether the halves really overlapped,
 * so the report flags 2-thread figures built mostly from it. */
static double kb_batch_robust(kb_case *c, kb_item *it)
{
  for (int tries = 0;; tries++) {
    double lo, hi;
    const double wall = kb_batch(c, it, it->reps, &lo, &hi);
    if (wall - lo <= 0.01 * wall + 2000.0 / (double)it->reps) return wall;
    it->retried++;
    if (tries >= 2 || wall * (double)it->reps > 2e6) {
      it->disturbed++;
      return hi;
    }
  }
}

/* Why: a fast deterministic generator; the inputs only need to be
 * typical, finite and not all equal. */
static uint64_t kb_rng = 0x9E3779B97F4A7C15ull;
static float kb_uniform(float lo, float hi)
{
  kb_rng ^= kb_rng << 13;
  kb_rng ^= kb_rng >> 7;
  kb_rng ^= kb_rng << 17;
  return lo + (hi - lo) * (float)(kb_rng >> 40) * (1.0f / 16777216.0f);
}

/* Why: store one f32 as the case's dtype, rounding like the kernels do. */
static void kb_put(unsigned char *p, size_t i, int dtype, float v)
{
  if (dtype == KG_F32) {
    memcpy(p + 4 * i, &v, 4);
  } else {
    const uint16_t h = dtype == KG_BF16 ? kg_f32_to_bf16(v) : kg_f32_to_f16(v);
    memcpy(p + 2 * i, &h, 2);
  }
}

/* Why: weights of magnitude exactly 1 (random signs; w + offset is, for a
 * kernel that adds an offset) keep in-place qk_norm stable over thousands
 * of repeated calls: the rows keep RMS 1 and never drift into subnormals
 * (which would time microcode assists). */
static unsigned char *kb_weights(size_t n, int dtype, int is_beta, float offset, size_t at, unsigned char **map)
{
  *map = aligned_alloc(64, (n * 4 + at + 63) / 64 * 64);
  if (!*map) return NULL;
  unsigned char *w = *map + at;
  for (size_t i = 0; i < n; i++)
    kb_put(w, i, dtype, is_beta ? kb_uniform(-0.1f, 0.1f) : (kb_uniform(0.0f, 1.0f) < 0.5f ? -1.0f : 1.0f) - offset);
  return w;
}

/* Why: sets as big as the residency allows (L2, LLC) or as many as it
 * takes to spill the caches (DRAM); in-place qk needs 2 for its copy.
 * --no-rotate: one set for cached shapes (in-place qk: its copy's second),
 * as a harness that calls the kernel on one buffer over and over sees it. */
static size_t kb_nsets(const kb_opts *o, int resid, double per_set, int need2)
{
  double n;
  if (o->no_rotate && resid != KB_DRAM) return need2 ? 2 : 1;
  if (resid == KB_L2) n = floor((double)o->l2_target / per_set);
  else if (resid == KB_LLC) n = floor((double)o->llc_target / per_set);
  else n = ceil((double)o->dram_target / per_set);
  if (n < 1) n = 1;
  if (n > 256) n = 256;
  if (need2 && n < 2) n = 2;
  return (size_t)n;
}

/* Why: page-granular sets for big tensors (huge pages stay whole), cache
 * lines for small ones (so many small sets pack into L2). */
static size_t kb_round_set(size_t bytes)
{
  const size_t g = bytes >= ((size_t)2 << 20) ? ((size_t)2 << 20) : 64;
  return (bytes + g - 1) / g * g;
}

/* Why: DRAM cases map hundreds of MiB; give them back before the next. */
static void kb_case_free(kb_case *c)
{
  kb_sys_free(c->a_map, c->a_len);
  kb_sys_free(c->b_map, c->b_len);
  kb_sys_free(c->n_map, c->n_len);
  free(c->w1_map);
  free(c->w2_map);
  memset(c, 0, sizeof *c);
}

/* Why: allocate and fill the rotated sets once per case; set 0 gets random
 * data and the others copies of it (fast, and every page is touched before
 * any timing starts). */
static int kb_case_init(kb_case *c, const kb_opts *o, const kb_shape *sh, int dtype)
{
  memset(c, 0, sizeof *c);
  c->sh = sh;
  c->dtype = dtype;
  c->es = dtype == KG_F32 ? 4 : 2;
  c->mask = dtype == KG_F32 ? 0x8000000080000000ull : 0x8000800080008000ull;
  const size_t d = sh->dim, es = c->es;
  size_t a_bytes, b_bytes = 0, wn = d;
  if (sh->op == KG_OP_QK_NORM) {
    /* --k-shift: K heads start that much later (separately allocated q
     * and k sit at different offsets); the room is the V heads' in a
     * fused token-major buffer, 64 bytes after the K heads otherwise */
    const size_t kroom = sh->kh * d * es >= 64 ? 0 : 64 / es;
    if (sh->layout == KG_TOKEN_MAJOR) {
      /* [t][qh q | kh k | kh v] heads of d */
      c->stride = c->tstep = (sh->qh + 2 * sh->kh) * d + kroom;
      c->ko = sh->qh * d * es + o->kshift / es * es;
      a_bytes = sh->rows * c->stride * es;
      c->rg_bytes = (sh->qh + sh->kh) * d * es;
      c->rg_stride = c->stride * es;
    } else {
      /* [h][t] heads of d: qh q heads, then kh k heads (no V) */
      c->stride = sh->rows * d;
      c->tstep = d;
      c->ko = sh->qh * c->stride * es + o->kshift / es * es;
      a_bytes = (sh->qh + sh->kh) * c->stride * es + 64;
      /* the ceilings see the q|k block as rows of (qh + kh) heads of d */
      c->rg_bytes = c->rg_stride = (sh->qh + sh->kh) * d * es;
    }
    c->cbytes = 2.0 * (double)(sh->rows * c->rg_bytes);
    c->kbytes = c->cbytes + 2.0 * (double)(d * es);
  } else {
    c->stride = c->tstep = d;
    a_bytes = b_bytes = sh->rows * d * es;
    /* the ceilings' region: rows of the tensor, contiguous (one memcpy) */
    c->rg_bytes = c->rg_stride = d * es;
    c->cbytes = 2.0 * (double)a_bytes;
    c->kbytes = c->cbytes + (double)((sh->op == KG_OP_LAYERNORM ? 2 : 1) * d * es);
  }
  c->a_bytes = a_bytes;
  c->a_set = kb_round_set(a_bytes);
  c->b_set = b_bytes ? kb_round_set(b_bytes) : 0;
  c->nsets = kb_nsets(o, sh->resid, (double)(a_bytes + b_bytes), sh->op == KG_OP_QK_NORM);
  c->fixed = o->no_rotate && sh->resid != KB_DRAM;
  /* --offset: every set starts that many bytes (whole elements) past a
   * line boundary, as a malloc'd buffer does (16); the sets keep their
   * size, so all of them do */
  const size_t off = o->offset / es * es;
  c->a_len = c->nsets * c->a_set + (off ? 64 : 0);
  c->b_len = c->b_set ? c->nsets * c->b_set + (off ? 64 : 0) : 0;
  c->a_map = kb_sys_alloc(c->a_len);
  c->b_map = c->b_len ? kb_sys_alloc(c->b_len) : NULL;
  c->a = c->a_map ? c->a_map + off : NULL;
  c->b = c->b_map ? c->b_map + off : NULL;
  /* (DRAM shapes: their sets are out of the caches anyway; no more memory) */
  c->n_len = sh->resid == KB_DRAM ? 0 : (c->b_set ? c->b_set : c->a_set) + (off ? 64 : 0);
  c->n_map = c->n_len ? kb_sys_alloc(c->n_len) : NULL;
  c->n = c->n_map ? c->n_map + off : NULL;
  /* --w-offset: the weights that many bytes (whole elements) past a line
   * boundary, as a malloc'd weight tensor is (16) */
  const size_t woff = o->woff / es * es;
  c->w1 = kb_weights(wn, dtype, 0, sh->weight_offset, woff, &c->w1_map);
  c->w2 = sh->op == KG_OP_RMSNORM ? NULL
                                  : kb_weights(wn, dtype, sh->op == KG_OP_LAYERNORM, sh->weight_offset, woff, &c->w2_map);
  if (!c->a || (c->b_len && !c->b) || (c->n_len && !c->n) || !c->w1 || (sh->op != KG_OP_RMSNORM && !c->w2)) {
    kb_case_free(c);
    return -1;
  }
  /* 1 MiB of random values, repeated: the values only need to be typical */
  const size_t rnd = a_bytes < ((size_t)1 << 20) ? a_bytes : ((size_t)1 << 20);
  for (size_t i = 0; i < rnd / es; i++) kb_put(c->a, i, dtype, kb_uniform(-2.0f, 2.0f));
  for (size_t off = rnd; off < a_bytes; off += rnd)
    memcpy(c->a + off, c->a, a_bytes - off < rnd ? a_bytes - off : rnd);
  for (size_t s = 1; s < c->nsets; s++) memcpy(c->a + s * c->a_set, c->a, a_bytes);
  if (c->b)
    for (size_t s = 0; s < c->nsets; s++) memset(c->b + s * c->b_set, 0, b_bytes);
  return 0;
}

/* Why: a float view of element i of a buffer of the case's dtype. */
static float kb_get(const unsigned char *p, size_t i, int dtype)
{
  if (dtype == KG_F32) {
    float v;
    memcpy(&v, p + 4 * i, 4);
    return v;
  }
  uint16_t h;
  memcpy(&h, p + 2 * i, 2);
  return dtype == KG_BF16 ? kg_bf16_to_f32(h) : kg_f16_to_f32(h);
}

/* Why: a benchmark of a mis-called kernel measures nothing.  Before timing,
 * run each variant on the first rows of the case's data and compare with
 * the scalar variant of the table (same shape, same dtype): a wiring check
 * of pointers and strides, not a numerics test (tests/ does that).  The
 * tolerance is a few units in the last place at |y| <= 4.  Returns the
 * largest difference in *err; 0 agree, 1 disagree, -1 no scalar to compare. */
static int kb_check(const kb_case *c, const kg_variant *v, const kg_variant *ref, double *err)
{
  const kb_shape *sh = c->sh;
  const size_t rows = sh->rows < 16 ? sh->rows : 16;
  /* head-major QK-norm: the first rows of every head, all over the set */
  const size_t bytes = sh->op == KG_OP_QK_NORM && sh->layout == KG_HEAD_MAJOR ? c->a_bytes : rows * c->stride * c->es;
  const size_t n = bytes / c->es;
  *err = NAN;
  if (!ref) return -1;
  unsigned char *y0 = malloc(bytes), *y1 = malloc(bytes);
  if (!y0 || !y1) {
    free(y0);
    free(y1);
    return -1;
  }
  if (sh->op == KG_OP_QK_NORM) {
    memcpy(y0, c->a, bytes);
    memcpy(y1, c->a, bytes);
    ref->fn.qk_norm(rows, y0, c->stride, y0 + c->ko, c->stride, c->w1, c->w2);
    v->fn.qk_norm(rows, y1, c->stride, y1 + c->ko, c->stride, c->w1, c->w2);
  } else if (sh->op == KG_OP_RMSNORM) {
    ref->fn.rmsnorm(rows, c->a, c->stride, c->w1, y0, c->stride, NULL);
    v->fn.rmsnorm(rows, c->a, c->stride, c->w1, y1, c->stride, NULL);
  } else {
    ref->fn.layernorm(rows, c->a, c->stride, c->w1, c->w2, y0, c->stride, NULL, NULL);
    v->fn.layernorm(rows, c->a, c->stride, c->w1, c->w2, y1, c->stride, NULL, NULL);
  }
  const double tol = c->dtype == KG_F32 ? 4e-5 : c->dtype == KG_BF16 ? 0.032 : 0.004;
  double worst = 0.0;
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    const double d = fabs((double)kb_get(y0, i, c->dtype) - (double)kb_get(y1, i, c->dtype));
    if (!(d <= tol)) bad = 1; /* NaN counts as a mismatch */
    if (d > worst || d != d) worst = d;
  }
  free(y0);
  free(y1);
  *err = worst;
  return bad;
}

/* Why: ascending order of doubles for qsort. */
static int kb_cmp(const void *x, const void *y)
{
  const double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* Why: the median (the figure) and quartiles (its spread) of a round
 * series, from a sorted copy; rounds stay in time order for pairing. */
static void kb_quartiles(const double *v, int n, double *p25, double *med, double *p75)
{
  double *s = malloc((size_t)n * sizeof *s);
  if (!s || n <= 0) {
    *p25 = *med = *p75 = NAN;
    free(s);
    return;
  }
  memcpy(s, v, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, kb_cmp);
  *med = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  *p25 = s[(n - 1) / 4];
  *p75 = s[(3 * (n - 1) + 3) / 4];
  free(s);
}

/* The core a case's 1-thread items run on, as its probes read before it. */
typedef struct kb_core {
  int cpu;
  double ghz, apc;          /* kb_sys_core_ghz; independent adds a cycle */
  double share;             /* kb_sys_cpu_share: its on-CPU share of wall time */
  int other_cpu;            /* the other allowed CPU (the 2-thread worker's), -1: none */
  double other_apc, other_share;
} kb_core;

/* Why: a VM's vCPUs may sit on cores another tenant's thread shares (SMT),
 * one vCPU at a time and for minutes: run 47 found QK-norm decode 1.9x
 * slower on CPU 0 than on CPU 1 (its independent adds 1.4x fewer) while
 * memcpy from L2 ran alike, and the bench always ran on the first CPU.
 * Before each case every allowed CPU (at most two) is probed and the
 * 1-thread items run on the core that issues the most adds a ns times
 * the share of time the CPU gives this thread (another busy process on
 * it halves that, which the short width probe cannot see); the first CPU
 * is kept unless the other is clearly (5 %) ahead, and the 2-thread
 * worker takes the other.  The report prints both readings. */
static kb_core kb_pick_core(const int *cpus, int ncpu, int pinned)
{
  kb_core k = { -1, 0.0, 0.0, NAN, -1, NAN, NAN };
  double g[2] = { 0.0, 0.0 }, w[2] = { 0.0, 0.0 }, s[2] = { NAN, NAN };
  const int n = pinned ? (ncpu < 2 ? ncpu : 2) : 1;
  for (int i = 0; i < n; i++) {
    if (pinned) (void)kb_sys_pin(cpus[i]);
    g[i] = kb_sys_core_ghz();
    w[i] = kb_sys_core_width();
    s[i] = kb_sys_cpu_share(12.0);
  }
  const double e0 = w[0] * (s[0] >= 0.0 ? s[0] : 1.0), e1 = w[1] * (s[1] >= 0.0 ? s[1] : 1.0);
  const int b = n == 2 && e1 > 1.05 * e0;
  if (n == 2) {
    (void)kb_sys_pin(cpus[b]);
    if (kb_have_pool) (void)kb_pool_move(&kb_the_pool, cpus[1 - b]);
    k.other_cpu = cpus[1 - b];
    k.other_apc = g[1 - b] > 0.0 ? w[1 - b] / g[1 - b] : NAN;
    k.other_share = s[1 - b];
  }
  if (pinned) k.cpu = cpus[b];
  k.ghz = g[b];
  k.apc = g[b] > 0.0 ? w[b] / g[b] : NAN;
  k.share = s[b];
  return k;
}

/* Why: --filter takes comma-separated substrings of "shape/dtype/isa". */
static int kb_match(const char *filter, const char *id)
{
  if (!filter || !*filter) return 1;
  const char *p = filter;
  while (*p) {
    const char *e = strchr(p, ',');
    const size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n > 0) {
      char tok[128];
      snprintf(tok, sizeof tok, "%.*s", (int)(n < sizeof tok - 1 ? n : sizeof tok - 1), p);
      if (strstr(id, tok)) return 1;
    }
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

/* Why: the ceiling a kernel's ratio is taken against: the in-place pass
 * for in-place prefill, memcpy otherwise (decode included). */
static int kb_ref_kind(const kb_shape *sh)
{
  return sh->op == KG_OP_QK_NORM && sh->rows > 1 ? KB_RMW : KB_MEMCPY;
}

/* Why: the median (and quartiles) over rounds of kernel time per byte /
 * ceiling time per byte, each round's pair timed moments apart, so load
 * from other processes mostly cancels; NaN when that ceiling is absent. */
static double kb_paired(const kb_case *c, const kb_item *items, int nitems, const kb_item *it, int kind,
                        int rounds, double *p25, double *p75)
{
  const kb_item *ci = NULL;
  double med = NAN, q1, q3;
  for (int m = 0; m < nitems; m++)
    if (items[m].kind == kind && items[m].threads == it->threads) ci = &items[m];
  double *rr = ci ? malloc((size_t)rounds * sizeof *rr) : NULL;
  if (rr) {
    for (int r = 0; r < rounds; r++) rr[r] = (it->ns[r] / c->kbytes) / (ci->ns[r] / c->cbytes);
    kb_quartiles(rr, rounds, &q1, &med, &q3);
    if (p25) *p25 = q1;
    if (p75) *p75 = q3;
    free(rr);
  }
  return med;
}

/* Why: measure one case: warm up, size batches, then the interleaved
 * rounds; append one report row per item. */
static size_t kb_run_case(kb_case *c, const kb_opts *o, kb_item *items, int nitems, kb_row *out)
{
  const kb_shape *sh = c->sh;
  const int rounds = sh->resid == KB_DRAM ? o->rounds_large : o->rounds_small;
  /* warm-up: every item over the whole rotation (DRAM shapes: 2 calls,
   * their pages are touched at init and no cache state is wanted); the
   * fastest warm call sizes the batch to >= min_batch */
  for (int k = 0; k < nitems; k++) {
    size_t calls = sh->resid == KB_DRAM ? 2 : c->nsets < 3 ? 3 : c->nsets;
    double t = INFINITY;
    const double t0 = kb_sys_now_ns();
    for (size_t i = 0; i < calls && (i < 2 || kb_sys_now_ns() - t0 < 3e8); i++) {
      const double x = kb_batch(c, &items[k], 1, NULL, NULL);
      if (x < t) t = x;
    }
    double reps = ceil(o->min_batch_ns / (t > 1.0 ? t : 1.0));
    if (reps > 1e6) reps = 1e6;
    items[k].reps = reps < 1 ? 1 : (size_t)reps;
    items[k].ns = calloc((size_t)rounds, sizeof(double));
    if (!items[k].ns) {
      fprintf(stderr, "bench: out of memory\n");
      exit(1);
    }
  }
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < nitems; k++) {
      kb_item *it = &items[(k + r) % nitems];
      it->ns[r] = kb_batch_robust(c, it);
      if (sh->resid == KB_DRAM && kb_settle_buf) kb_settle();
    }

  /* rows */
  const int ref = kb_ref_kind(sh);
  size_t n = 0;
  for (int k = 0; k < nitems; k++) {
    kb_item *it = &items[k];
    kb_row *row = &out[n++];
    memset(row, 0, sizeof *row);
    snprintf(row->shape, sizeof row->shape, "%s", sh->name);
    snprintf(row->label, sizeof row->label, "%s", sh->label);
    row->resid = c->fixed ? "1 set" : kb_resid_name[sh->resid];
    row->dtype = kb_dtype_name[c->dtype];
    row->ceiling = it->kind != KB_KERNEL;
    snprintf(row->what, sizeof row->what, "%s",
             row->ceiling ? kb_kind_name[it->kind] : kg_cpu_isa_name(it->v->isa));
    row->symbol = row->ceiling ? NULL : it->v->symbol;
    row->threads = it->threads;
    row->bytes = row->ceiling ? c->cbytes : c->kbytes;
    kb_quartiles(it->ns, rounds, &row->ns_p25, &row->ns_med, &row->ns_p75);
    row->gbps = row->bytes / row->ns_med;
    row->ratio = row->ratio_p25 = row->ratio_p75 = row->ratio_nt = NAN;
    row->met = -1;
    row->scaling = NAN;
    row->nsets = c->nsets;
    row->footprint = (double)(c->nsets * (c->a_set + c->b_set));
    row->rounds = rounds;
    row->reps = it->reps;
    row->retried = it->retried;
    row->disturbed = it->disturbed;
    row->check = row->ceiling ? -1 : it->check;
    row->check_err = row->ceiling ? NAN : it->check_err;
    if (!row->ceiling) {
      row->ratio_nt = kb_paired(c, items, nitems, it, KB_NT, rounds, NULL, NULL);
      row->ratio = kb_paired(c, items, nitems, it, ref, rounds, &row->ratio_p25, &row->ratio_p75);
      if (!isnan(row->ratio)) row->ceil_ref = kb_kind_name[ref];
      const double tgt = sh->target[c->dtype];
      if (tgt > 0 && (it->v->isa == KG_ISA_AVX512 || it->v->isa == KG_ISA_AVX2) && it->threads == 1) {
        row->target = tgt;
        row->met = row->ratio <= tgt;
      }
    }
  }
  /* 2-thread speed-up against the same item on 1 thread */
  for (size_t i = 0; i < n; i++) {
    if (out[i].threads != 2) continue;
    for (size_t j = 0; j < n; j++)
      if (out[j].threads == 1 && strcmp(out[j].what, out[i].what) == 0) out[i].scaling = out[j].ns_med / out[i].ns_med;
  }
  for (int k = 0; k < nitems; k++) {
    free(items[k].ns);
    items[k].ns = NULL;
  }
  return n;
}

/* Why: --help, and the reminder printed after a bad option. */
static void kb_usage(FILE *f)
{
  fprintf(f,
          "usage: bench [options]\n"
          "  --quick         few rounds, small DRAM rotation: proves the harness runs\n"
          "  --filter A,B    only variants whose \"shape/dtype/isa\" contains A or B\n"
          "                  (e.g. rmsnorm_4096x1/f32, qk_prefill, avx512)\n"
          "  --md FILE       write the Markdown report (also printed on stdout)\n"
          "  --json FILE     write the JSON report\n"
          "  --dat FILE      write the gnuplot data (bench/plot.gp)\n"
          "  --rounds N      rounds per shape (default 101, DRAM shapes 31)\n"
          "  --dram-mib N    rotate DRAM shapes over at least N MiB (default 512)\n"
          "  --l2-kib N      rotate L2 shapes over at most N KiB (default half the L2;\n"
          "                  256 sets at most): where a harness's rotation leaves them\n"
          "  --offset N      x and y start N bytes past a 64-byte boundary (default 0;\n"
          "                  a malloc'd buffer: 16), rounded down to whole elements\n"
          "  --k-shift N     QK-norm: k starts N more bytes into its line than q (default 0;\n"
          "                  q and k from two mallocs), rounded down to whole elements\n"
          "  --w-offset N    the weights start N bytes past a 64-byte boundary (default 0;\n"
          "                  malloc'd weights: 16), rounded down to whole elements\n"
          "  --no-2t         skip the 2-thread runs\n"
          "  --no-rotate     call every kernel and ceiling of an L2 or LLC shape on one\n"
          "                  set of buffers (the data stays in L1/L2, as a harness that\n"
          "                  does not rotate sees it); DRAM shapes still rotate\n"
          "  --commit S      commit recorded in the report\n"
          "  --date S        date recorded in the report (default: today, UTC)\n"
          "  --list          print the shapes and the variants that fit them\n");
}

/* Why: one open-write-close with a clear error per output file. */
static int kb_write(const char *path, void (*fn)(FILE *, const kb_meta *, const kb_row *, size_t),
                    const kb_meta *m, const kb_row *rows, size_t n)
{
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return -1;
  }
  fn(f, m, rows, n);
  return fclose(f) == 0 ? 0 : -1;
}

/* Why: kb_write takes one writer signature; the data file has no header. */
static void kb_dat_adapter(FILE *f, const kb_meta *m, const kb_row *rows, size_t n)
{
  (void)m;
  kb_report_dat(f, rows, n);
}

/* Why: a numeric option is a whole decimal number in [lo, hi] or a clear
 * error (atol would take "16x" as 16 and "x" as 0). */
static int kb_arg_long(const char *opt, const char *s, long lo, long hi, long *out)
{
  char *end;
  errno = 0;
  const long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) {
    fprintf(stderr, "bench: %s: must be a whole number in [%ld, %ld], got %s\n", opt, lo, hi, s);
    return -1;
  }
  *out = v;
  return 0;
}

/* Why: options, machine description and pinning, then every shape x
 * dtype that has a variant here: allocate, check, time, free; reports last. */
int main(int argc, char **argv)
{
  kb_opts o;
  memset(&o, 0, sizeof o);
  int list = 0, rounds = 0;
  long dram_mib = 512;
  long l2_kib = 0;           /* --l2-kib: 0 = half the L2 */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const int more = i + 1 < argc;
    if (!strcmp(a, "--quick")) o.quick = 1;
    else if (!strcmp(a, "--no-2t")) o.no2t = 1;
    else if (!strcmp(a, "--no-rotate")) o.no_rotate = 1;
    else if (!strcmp(a, "--list")) list = 1;
    else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      kb_usage(stdout);
      return 0;
    } else if (more && !strcmp(a, "--filter")) o.filter = argv[++i];
    else if (more && !strcmp(a, "--md")) o.md = argv[++i];
    else if (more && !strcmp(a, "--json")) o.json = argv[++i];
    else if (more && !strcmp(a, "--dat")) o.dat = argv[++i];
    else if (more && !strcmp(a, "--commit")) o.commit = argv[++i];
    else if (more && !strcmp(a, "--date")) o.date = argv[++i];
    else if (more && !strcmp(a, "--rounds")) {
      long v;
      if (kb_arg_long("--rounds", argv[++i], 3, 100000, &v)) return 2;
      rounds = (int)v;
    } else if (more && !strcmp(a, "--offset")) {
      long v;
      if (kb_arg_long("--offset", argv[++i], 0, 63, &v)) return 2;
      o.offset = (size_t)v;
    } else if (more && !strcmp(a, "--k-shift")) {
      long v;
      if (kb_arg_long("--k-shift", argv[++i], 0, 63, &v)) return 2;
      o.kshift = (size_t)v;
    } else if (more && !strcmp(a, "--w-offset")) {
      long v;
      if (kb_arg_long("--w-offset", argv[++i], 0, 63, &v)) return 2;
      o.woff = (size_t)v;
    } else if (more && !strcmp(a, "--dram-mib")) {
      if (kb_arg_long("--dram-mib", argv[++i], 1, 65536, &dram_mib)) return 2;
    } else if (more && !strcmp(a, "--l2-kib")) {
      if (kb_arg_long("--l2-kib", argv[++i], 1, 1 << 20, &l2_kib)) return 2;
    } else {
      fprintf(stderr, "bench: unknown or incomplete option: %s\n", a);
      kb_usage(stderr);
      return 2;
    }
  }

  kb_meta meta;
  memset(&meta, 0, sizeof meta);
  kb_ceil_init();
  meta.l1d = kb_sys_cache_l1d();
  meta.l2 = kb_sys_cache_l2();
  meta.l3 = kb_sys_cache_l3();
  o.l2_target = l2_kib ? (size_t)l2_kib << 10 : meta.l2 ? meta.l2 / 2 : ((size_t)512 << 10);
  o.llc_target = (size_t)16 << 20;
  if (meta.l3 && meta.l3 / 2 < o.llc_target) o.llc_target = meta.l3 / 2;
  /* DRAM shapes: 512 MiB of other data between two uses of a set (raise
   * it with --dram-mib on a machine whose LLC really holds that much) */
  o.dram_target = (size_t)(o.quick ? 64 : dram_mib) << 20;
  o.rounds_small = rounds ? rounds : o.quick ? 7 : 101;
  o.rounds_large = rounds ? rounds : o.quick ? 5 : 31;
  o.min_batch_ns = o.quick ? 5e3 : 2e4;

  const kg_variant *vt = KB_PACK_VARIANTS;
  const size_t nv = KB_PACK_NUM;
  size_t nshapes = 0;
  kb_shape *shapes = kb_shapes_build(vt, nv, &nshapes);
  if (!shapes) {
    fprintf(stderr, "bench: out of memory\n");
    return 1;
  }
  if (list) {
    for (size_t s = 0; s < nshapes; s++)
      for (int d = 0; d < 3; d++)
        for (size_t i = 0; i < nv; i++)
          if (kb_shape_fits(&shapes[s], &vt[i], d))
            printf("%s/%s/%s %s%s\n", shapes[s].name, kb_dtype_name[d], kg_cpu_isa_name(vt[i].isa),
                   vt[i].symbol, kg_cpu_has(vt[i].isa) ? "" : " (not on this CPU)");
    return 0;
  }

  /* machine description and pinning */
  kb_sys_cpu_model(meta.cpu, sizeof meta.cpu);
  kb_sys_thp(meta.thp, sizeof meta.thp);
  snprintf(meta.libc, sizeof meta.libc, "%s", kb_sys_libc());
#if defined(__clang__)
  snprintf(meta.compiler, sizeof meta.compiler, "clang %s", __clang_version__);
#elif defined(__GNUC__)
  snprintf(meta.compiler, sizeof meta.compiler, "gcc %s", __VERSION__);
#else
  snprintf(meta.compiler, sizeof meta.compiler, "cc");
#endif
  /* the flags, as the build passed them (mk/bench.mk, bench/build.sh): a
   * report must not claim -O2 for an -O3 -march=native build */
#ifdef KB_CFLAGS
  snprintf(meta.cflags, sizeof meta.cflags, "%s", KB_CFLAGS);
#else
  snprintf(meta.cflags, sizeof meta.cflags, "flags not recorded (built without -DKB_CFLAGS)");
#endif
  for (int isa = 0; isa < KG_ISA_CUDA; isa++)
    if (kg_cpu_has(isa)) {
      strncat(meta.isas, meta.isas[0] ? " " : "", sizeof meta.isas - strlen(meta.isas) - 1);
      strncat(meta.isas, kg_cpu_isa_name(isa), sizeof meta.isas - strlen(meta.isas) - 1);
    }
  snprintf(meta.ceil_flavor, sizeof meta.ceil_flavor, "%s", kb_ceil_flavor());
  snprintf(meta.commit, sizeof meta.commit, "%s", o.commit ? o.commit : "unknown");
  if (o.date) snprintf(meta.date, sizeof meta.date, "%s", o.date);
  else {
    const time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(meta.date, sizeof meta.date, "%Y-%m-%d", &tm);
  }
  int cpus[2];
  const int ncpu = kb_sys_cpus(cpus, 2);
  const int pinned = ncpu > 0 && kb_sys_pin(cpus[0]) == 0;
  int two_t = !o.no2t && ncpu >= 2;
  if (two_t && kb_pool_start(&kb_the_pool, cpus[1]) == 0) kb_have_pool = 1;
  else two_t = 0;
  /* twice the LLC, 64 to 128 MiB (kb_settle; VMs report L3s of hundreds
   * of MiB that memcpy does not see); pages touched now */
  kb_settle_bytes = (size_t)64 << 20;
  if (meta.l3 && 2 * (size_t)meta.l3 > kb_settle_bytes) kb_settle_bytes = 2 * (size_t)meta.l3;
  if (kb_settle_bytes > ((size_t)128 << 20)) kb_settle_bytes = (size_t)128 << 20;
  kb_settle_buf = kb_sys_alloc(kb_settle_bytes);
  if (kb_settle_buf) memset(kb_settle_buf, 1, kb_settle_bytes);
  else kb_settle_bytes = 0;
  if (pinned)
    snprintf(meta.pin, sizeof meta.pin, "%s; 2-thread runs: %s",
             ncpu >= 2 ? "main thread pinned, before each case, to the CPU whose core issues the most adds "
                         "in its share of time (per shape in the ceilings table)" : "main thread pinned",
             two_t ? "second thread on the other CPU" : o.no2t ? "skipped (--no-2t)" : "skipped (one CPU)");
  else
    snprintf(meta.pin, sizeof meta.pin, "not pinned (sched_setaffinity refused); 2-thread runs: %s",
             two_t ? "yes" : "skipped");
  if (two_t) {
    char tail[64];
    snprintf(tail, sizeof tail, " (CPUs %d and %d)", cpus[0], cpus[1]);
    strncat(meta.pin, tail, sizeof meta.pin - strlen(meta.pin) - 1);
  }
  meta.l2_target = o.l2_target;
  meta.llc_target = o.llc_target;
  meta.dram_target = o.dram_target;
  meta.offset = o.offset;
  meta.kshift = o.kshift;
  meta.woff = o.woff;
  meta.rounds_small = o.rounds_small;
  meta.rounds_large = o.rounds_large;
  meta.min_batch_ns = o.min_batch_ns;
  meta.quick = o.quick;
  meta.no_rotate = o.no_rotate;

  /* rows: at most (variants + 3 ceilings) x 2 thread counts per case */
  const size_t max_rows = nshapes * 3 * (nv + 3) * 2 + 16;
  kb_row *rows = calloc(max_rows, sizeof *rows);
  kb_item *items = calloc(2 * (nv + 3), sizeof *items);
  if (!rows || !items) {
    fprintf(stderr, "bench: out of memory\n");
    return 1;
  }
  size_t nrows = 0;
  const double t_start = kb_sys_now_ns();
  int ncases = 0, done = 0;
  for (size_t s = 0; s < nshapes; s++)
    for (int d = 0; d < 3; d++)
      for (size_t i = 0; i < nv; i++) {
        char id[128];
        snprintf(id, sizeof id, "%s/%s/%s", shapes[s].name, kb_dtype_name[d], kg_cpu_isa_name(vt[i].isa));
        if (kb_shape_fits(&shapes[s], &vt[i], d) && kg_cpu_has(vt[i].isa) && kb_match(o.filter, id)) {
          ncases++;
          break;
        }
      }
  if (ncases == 0) {
    fprintf(stderr, "bench: no variant of this CPU matches%s%s (see --list)\n", o.filter ? " --filter " : "",
            o.filter ? o.filter : "");
    return 2;
  }

  for (size_t s = 0; s < nshapes; s++) {
    const kb_shape *sh = &shapes[s];
    for (int d = 0; d < 3; d++) {
      int nitems = 0, nk = 0;
      const int t2 = two_t && sh->two_t;
      for (int th = 1; th <= (t2 ? 2 : 1); th++)
        for (size_t i = 0; i < nv; i++) {
          char id[128];
          snprintf(id, sizeof id, "%s/%s/%s", sh->name, kb_dtype_name[d], kg_cpu_isa_name(vt[i].isa));
          if (!kb_shape_fits(sh, &vt[i], d) || !kb_match(o.filter, id)) continue;
          int dup = 0; /* two kernels of the pack with the same numbers: time the first */
          for (int k = 0; k < nitems && !dup; k++) dup = items[k].threads == th && items[k].v->isa == vt[i].isa;
          if (dup) continue;
          if (th == 2 && vt[i].isa != kg_cpu_best()) continue; /* 2T: the best ISA only */
          if (!kg_cpu_has(vt[i].isa)) {
            if (th == 1) fprintf(stderr, "bench: %s: skipped, this CPU lacks %s\n", id, kg_cpu_isa_name(vt[i].isa));
            continue;
          }
          items[nitems++] = (kb_item){ KB_KERNEL, th, &vt[i], 1, NULL, 0, 0, -1, NAN };
          nk++;
        }
      if (nk == 0) continue;
      items[nitems++] = (kb_item){ KB_MEMCPY, 1, NULL, 1, NULL, 0, 0, -1, NAN };
      items[nitems++] = (kb_item){ KB_NT, 1, NULL, 1, NULL, 0, 0, -1, NAN };
      items[nitems++] = (kb_item){ KB_RMW, 1, NULL, 1, NULL, 0, 0, -1, NAN };
      if (t2) {
        items[nitems++] = (kb_item){ KB_MEMCPY, 2, NULL, 1, NULL, 0, 0, -1, NAN };
        if (kb_ref_kind(sh) == KB_RMW) items[nitems++] = (kb_item){ KB_RMW, 2, NULL, 1, NULL, 0, 0, -1, NAN };
      }
      kb_case c;
      if (kb_case_init(&c, &o, sh, d) != 0) {
        fprintf(stderr, "bench: %s/%s: cannot allocate the buffers\n", sh->name, kb_dtype_name[d]);
        return 1;
      }
      const kg_variant *scalar = NULL;
      for (size_t i = 0; i < nv; i++)
        if (kb_shape_fits(sh, &vt[i], d) && vt[i].isa == KG_ISA_SCALAR && !scalar) scalar = &vt[i];
      for (int k = 0; k < nitems; k++)
        if (items[k].kind == KB_KERNEL) {
          items[k].check = kb_check(&c, items[k].v, scalar, &items[k].check_err);
          if (items[k].check == 1 && items[k].threads == 1)
            fprintf(stderr, "bench: %s/%s/%s: output differs from the scalar variant by %g\n", sh->name,
                    kb_dtype_name[d], kg_cpu_isa_name(items[k].v->isa), items[k].check_err);
        }
      const kb_core core = kb_pick_core(cpus, ncpu, pinned);
      if (done == 0) meta.ghz_start = core.ghz;
      const double t0 = kb_sys_now_ns();
      fprintf(stderr, "bench: [%d/%d] %s/%s: %zu sets x %.2f MiB, %d items ...", ++done, ncases, sh->name,
              kb_dtype_name[d], c.nsets, (double)(c.a_set + c.b_set) / 1048576.0, nitems);
      fflush(stderr);
      const size_t first = nrows;
      nrows += kb_run_case(&c, &o, items, nitems, rows + nrows);
      for (size_t k = first; k < nrows; k++) {
        rows[k].core_ghz = core.ghz;
        rows[k].core_cpu = core.cpu;
        rows[k].core_apc = core.apc;
        rows[k].core_share = core.share;
        rows[k].other_cpu = core.other_cpu;
        rows[k].other_apc = core.other_apc;
        rows[k].other_share = core.other_share;
      }
      fprintf(stderr, " %.1f s\n", (kb_sys_now_ns() - t0) / 1e9);
      kb_case_free(&c);
    }
  }
  meta.wall_s = (kb_sys_now_ns() - t_start) / 1e9;
  meta.ghz_end = kb_sys_core_ghz();
  if (kb_have_pool) kb_pool_stop(&kb_the_pool);
  if (kb_settle_buf) kb_sys_free(kb_settle_buf, kb_settle_bytes);

  kb_report_md(stdout, &meta, rows, nrows);
  int rc = 0;
  if (o.md && kb_write(o.md, kb_report_md, &meta, rows, nrows) != 0) rc = 1;
  if (o.json && kb_write(o.json, kb_report_json, &meta, rows, nrows) != 0) rc = 1;
  if (o.dat && kb_write(o.dat, kb_dat_adapter, &meta, rows, nrows) != 0) rc = 1;
  free(rows);
  free(items);
  free(shapes);
  return rc;
}
