/* kt_util.h: the harness under test_kernels.c: guarded buffers, one call of
 * a variant described as a list of rows, test data, and the tolerance
 * checks every test shares.
 *
 * A "row" is what the numerics policy talks about: one row of rmsnorm or
 * layernorm, one head of one token (of Q or of K) for qk_norm.  Every
 * check walks rows, so the same code covers all three ops. */
#ifndef KT_UTIL_H
#define KT_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "kg_variant.h"
#include "ref.h"

#define KT_MSG 1024 /* failure message buffer size */

/* ---- guarded buffers ----------------------------------------------------- */

/* T elements with sentinel guard zones on both sides (or, in page mode,
 * flush against an inaccessible page).  Every element that is not data is
 * a signalling-NaN sentinel, so a kernel that reads it into its math gets a
 * NaN and one that writes it changes the bits. */
typedef struct kt_buf {
  int dtype;
  size_t n;           /* usable elements, starting at p */
  void *p;            /* first usable element */
  unsigned char *raw; /* start of the checked region (guards included) */
  size_t lead, total; /* elements before p; elements in the region */
  void *map;          /* page mode: the mapping, else NULL */
  size_t maplen;
} kt_buf;

/* Placement of buffers: guard zones in malloc'd memory, or the data flush
 * against a PROT_NONE page after it (KT_PAGE_END) or before it. */
enum { KT_HEAP = 0, KT_PAGE_END = 1, KT_PAGE_START = 2 };

uint32_t kt_sentinel(int dtype);
void kt_buf_init(kt_buf *b, int dtype, size_t n, size_t misalign, int place);
void kt_buf_free(kt_buf *b);
void kt_buf_fill_sentinel(kt_buf *b);
void kt_buf_copy(kt_buf *dst, const kt_buf *src); /* same shape */
void kt_buf_clone(kt_buf *dst, const kt_buf *src);
/* 1 if the guard zones still hold the sentinel; else 0 and *where. */
int kt_buf_guards_ok(const kt_buf *b, long *where);
uint64_t kt_buf_hash(const kt_buf *b);

/* ---- one call of a variant ----------------------------------------------- */

typedef struct kt_case {
  const kg_variant *v;
  int op, dtype;
  size_t dim;   /* row length (qk_norm: head_dim) */
  size_t n;     /* rows (rmsnorm/layernorm) or tokens (qk_norm) */
  size_t st[2]; /* x_stride, y_stride | q_stride, k_stride */
  int in_place; /* rmsnorm/layernorm: y == x */
  int fused;    /* qk_norm token_major: Q, K (and V) in one buffer */
  int want_rstd, want_mean;
  double eps, off; /* the variant's eps (as f32) and weight_offset */
  kt_buf in[2];    /* pristine inputs: x | Q, K  (fused: in[0] only) */
  kt_buf out[2];   /* results: y | Q, K working copies (fused: out[0]) */
  kt_buf par[2];   /* rmsnorm: w | layernorm: gamma, beta | qk: q_w, k_w */
  kt_buf rstd, mean;
  kt_buf snap[2];      /* out[] just before the call */
  uint64_t in_hash[4]; /* in[0], in[1], par[0], par[1] before the call */
  size_t k_off;        /* fused: element offset of K's first head */
} kt_case;

/* Geometry of a case: extra elements per row after the data (pad_in for
 * x / Q, pad_out for y / K), an element misalignment of every data
 * pointer, fused QKV (qk_norm token_major only), in-place. */
typedef struct kt_shape {
  size_t n, pad_in, pad_out, misalign;
  size_t misalign_out; /* when not 0 (else misalign): rmsnorm/layernorm y's;
                          qk_norm K's and k_w (not fused); 64 bytes' worth:
                          on a line boundary */
  int in_place, fused, place;
  int wplace; /* when not KT_HEAP (else place): the weights' placement */
  int want_rstd, want_mean;
} kt_shape;

void kt_case_init(kt_case *c, const kg_variant *v, const kt_shape *s);
void kt_case_free(kt_case *c);

typedef struct kt_row {
  const void *in; /* pristine input row */
  void *out;      /* result row */
  const void *w;  /* weight | gamma */
  const void *b;  /* beta (layernorm) */
  int which;      /* 0: rows of x / Q; 1: rows of K */
  size_t t, h;    /* token and head (qk_norm); t = row otherwise */
} kt_row;

size_t kt_rows(const kt_case *c);
void kt_row_get(const kt_case *c, size_t r, kt_row *row);
/* Describe row r for messages: "row 3" or "token 2 K head 1". */
void kt_row_name(const kt_case *c, size_t r, char *buf, size_t len);
/* Store round_T(vals[i]) into pristine row r. */
void kt_set_row(kt_case *c, size_t r, const double *vals);
/* Copy the input of row rs of src into pristine row rd of dst (the same
 * dtype and dim). */
void kt_copy_row(kt_case *dst, size_t rd, const kt_case *src, size_t rs);
/* Fill every usable input element (row gaps too) with a finite value;
 * call before the rows are set. */
void kt_fill_gaps(kt_case *c);

/* Runs the variant `v` (NULL: the case's own) on the pristine inputs:
 * resets outputs to sentinels (copies inputs for qk_norm / in place),
 * snapshots, calls.  Then kt_check_frame verifies that nothing outside
 * the rows changed: guards, padding, V, inputs, unused rstd/mean. */
void kt_run(kt_case *c, const kg_variant *v);
int kt_check_frame(const kt_case *c, char *msg, size_t len);

/* Reference for row r (y[dim]); rstd/mean may be NULL. */
void kt_row_ref(const kt_case *c, size_t r, double *y, double *rstd,
                double *mean);

/* ---- data ---------------------------------------------------------------- */

typedef enum kt_kind {
  KT_NORMAL,   /* offset + N(0,1)*scale */
  KT_POSITIVE, /* U(0,1)*scale */
  KT_SPARSE,   /* zeros and a few N(0,1)*scale spikes */
  KT_MIXED,    /* N(0,1)*scale*10^U(-3,3) per element */
  KT_CONST,    /* every element = offset */
  KT_ALT,      /* +scale, -scale, ... */
  KT_ZERO,     /* +0 (offset < 0: -0) */
  KT_ONEHOT,   /* one element = scale, others = offset */
  KT_BIGSMALL, /* random half +-scale*U(.5,1), the rest +-offset */
  KT_GRID      /* integers in [-scale, scale] times offset (exact) */
} kt_kind;

typedef struct kt_recipe {
  kt_kind kind;
  double scale, offset;
  const char *label; /* shown in messages */
} kt_recipe;

/* Values of one row (unrounded; kt_set_row rounds to T). Values beyond
 * T's range are clamped to +-max_T. */
void kt_gen(int dtype, size_t dim, const kt_recipe *rc, ref_rng *rng,
            double *v);
/* Exponent range of "normal" and "wide" scales for a dtype. */
void kt_scale_range(int dtype, int wide, double *lo, double *hi);

enum { KT_W_UNIT, KT_W_RANDOM, KT_W_UNIT_BETA };
/* Weights: UNIT: effective weight 1 (w = 1 - offset), layernorm gamma 1
 * beta 0; RANDOM: U(-2,2) with some exact 0 and +-1, beta N(0,.5);
 * UNIT_BETA: gamma 1, random beta. */
void kt_set_params(kt_case *c, int mode, ref_rng *rng);

/* ---- tolerances ---------------------------------------------------------- */

/* Error of result bits `y` (T) against the reference value `ref` in units
 * of the allowed error, so <= 1 passes.  rmsnorm/qk_norm: f32 8 ULP;
 * 16-bit single: 1 step from round_T(ref); hf: 2 steps.  layernorm:
 * 16 eps32 (|g| (|x| + |mu| + mean|x|) rstd + |b|) + the f32 subnormal
 * floor 2^-148 (|g| rstd + 2), plus 1 ULP of T for 16-bit (see
 * kt_bound_elem for why mean|x| and the floor are there).
 * NaN ref requires a NaN result. */
double kt_ratio_elem(const kt_case *c, uint32_t y, double ref, double x,
                     double g, double b, double mu, double rstd, double mabs);
/* Absolute error bound behind kt_ratio_elem at ref (for derived checks).
 * mabs: mean |x| of the row (layernorm only). */
double kt_bound_elem(const kt_case *c, double ref, double x, double g, double b,
                     double mu, double rstd, double mabs);
/* mean |x| over one row (the scale of the mean's rounding error). */
double kt_mean_abs(const kt_case *c, const void *row);

/* Whole-call accuracy: every row against the reference; rstd (8 ULP, for
 * layernorm plus the cancellation term) and mean.  Returns 1 on success;
 * otherwise 0 and a message naming the variant, `what`, the worst row and
 * element.  *worst gets the largest ratio seen (may be NULL). */
int kt_check_acc(const kt_case *c, const char *what, double *worst, char *msg,
                 size_t len);

/* Saved results of one run, to compare two variants or two runs. */
typedef struct kt_saved {
  kt_buf out[2], rstd, mean;
} kt_saved;
void kt_save(const kt_case *c, kt_saved *s);
void kt_saved_free(kt_saved *s);
/* Compare the case's current results with `s`: KT_CMP_BITS bit-identical
 * (every element of every row, rstd, mean); KT_CMP_TOL the SIMD-vs-scalar
 * tolerance (f32 8 ULP, 16-bit 1 step, hf 2 steps, layernorm also the
 * cancellation term); | KT_CMP_ROWS_ONLY leaves rstd/mean out.
 * `skip_row` (or (size_t)-1) is excluded. */
enum { KT_CMP_BITS = 0, KT_CMP_TOL = 1, KT_CMP_ROWS_ONLY = 2 };
int kt_compare(const kt_case *c, const kt_saved *s, int mode, size_t skip_row,
               const char *what, char *msg, size_t len);

/* Element i of a row as double / as bits. */
double kt_get(const kt_case *c, const void *row, size_t i);
uint32_t kt_getbits(const kt_case *c, const void *row, size_t i);

#endif
