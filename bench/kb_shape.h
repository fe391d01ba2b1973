/* kb_shape.h: the shapes `make bench` times, and which variants fit them.
 *
 * The standard shapes are the yardstick (Qwen3-8B QK-norm heads,
 * RMSNorm 4096 and 1024, LayerNorm 768 and 4096) with their targets.  Any
 * other kernel of the pack (another model's spec, `make bench-spec`) gets
 * shapes derived from its own numbers: decode and prefill for QK-norm with
 * its heads and layout, a row, a block of 64 rows and a DRAM-sized tensor
 * for RMSNorm, a block and a DRAM-sized tensor for LayerNorm. */
#ifndef KB_SHAPE_H
#define KB_SHAPE_H

#include <stddef.h>

#include "kg_variant.h"

enum { KB_L2 = 0, KB_LLC = 1, KB_DRAM = 2 };

/* A benchmarked shape: rows (tokens for qk_norm) x dim (head_dim). */
typedef struct kb_shape {
  char name[64];     /* "rmsnorm_4096x8192", "qk_decode_16x8x128" */
  char label[80];    /* "RMSNorm 4096 x 8192" */
  int op;
  size_t dim, rows;
  size_t qh, kh;     /* qk_norm: query and key heads (0 otherwise) */
  int layout;        /* qk_norm: enum kg_layout */
  int rounding;      /* enum kg_rounding of the variants that fit */
  float weight_offset;
  int resid;         /* where the rotated data lives */
  int two_t;         /* also timed split over 2 threads */
  int derived;       /* 0: a standard shape; 1: made for a kernel of the pack */
  double target[3];  /* per dtype (f32, bf16, f16): ratio to the ceiling, 0 = none */
} kb_shape;

/* The standard shapes, then shapes for every CPU variant of vt that fits
 * none of them; NULL when out of memory.  *n gets the count. */
kb_shape *kb_shapes_build(const kg_variant *vt, size_t nv, size_t *n);

/* 1 when variant v (any ISA but auto and CUDA) belongs to shape sh in dtype. */
int kb_shape_fits(const kb_shape *sh, const kg_variant *v, int dtype);

#endif
