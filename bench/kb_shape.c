/* kb_shape.c: the standard shapes of `make bench` and the shapes derived
 * from any other kernel of the pack (kb_shape.h). */
#include "kb_shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* QK-norm heads of the standard shapes (Qwen3-8B): 32 query + 8 KV heads. */
#define KB_QH 32
#define KB_KH 8

/* Derived tensors from DRAM hold about this much f32 (the standard
 * RMSNorm 4096 x 8192 f32 is 128 MiB), at most 8192 rows / 2048 tokens. */
#define KB_DRAM_BYTES ((size_t)128 << 20)

/* The table: target ratios (f32, bf16, f16) of the standard shapes. */
static const kb_shape kb_std[] = {
  { "rmsnorm_4096x1", "RMSNorm 4096 x 1", KG_OP_RMSNORM, 4096, 1, 0, 0, 0, 0, 0, KB_L2, 0, 0, { 0 } },
  { "rmsnorm_1024x64", "RMSNorm 1024 x 64", KG_OP_RMSNORM, 1024, 64, 0, 0, 0, 0, 0, KB_L2, 0, 0, { 1.5, 2.0, 0 } },
  { "rmsnorm_4096x8192", "RMSNorm 4096 x 8192", KG_OP_RMSNORM, 4096, 8192, 0, 0, 0, 0, 0, KB_DRAM, 1, 0,
    { 1.00, 1.10, 0 } },
  { "layernorm_768x512", "LayerNorm 768 x 512", KG_OP_LAYERNORM, 768, 512, 0, 0, 0, 0, 0, KB_LLC, 0, 0, { 0 } },
  { "layernorm_4096x8192", "LayerNorm 4096 x 8192", KG_OP_LAYERNORM, 4096, 8192, 0, 0, 0, 0, 0, KB_DRAM, 1, 0,
    { 1.10, 1.20, 0 } },
  { "qk_decode_h64", "QK-norm decode 1 x 40 x 64", KG_OP_QK_NORM, 64, 1, KB_QH, KB_KH, KG_TOKEN_MAJOR, 0, 0, KB_L2,
    0, 0, { 0 } },
  { "qk_decode_h128", "QK-norm decode 1 x 40 x 128", KG_OP_QK_NORM, 128, 1, KB_QH, KB_KH, KG_TOKEN_MAJOR, 0, 0,
    KB_L2, 0, 0, { 1.2, 2.0, 0 } },
  { "qk_decode_h256", "QK-norm decode 1 x 40 x 256", KG_OP_QK_NORM, 256, 1, KB_QH, KB_KH, KG_TOKEN_MAJOR, 0, 0,
    KB_L2, 0, 0, { 0 } },
  { "qk_prefill_h64", "QK-norm prefill 2048 x 40 x 64", KG_OP_QK_NORM, 64, 2048, KB_QH, KB_KH, KG_TOKEN_MAJOR, 0,
    0, KB_DRAM, 1, 0, { 1.10, 1.20, 0 } },
  { "qk_prefill_h128", "QK-norm prefill 2048 x 40 x 128", KG_OP_QK_NORM, 128, 2048, KB_QH, KB_KH, KG_TOKEN_MAJOR,
    0, 0, KB_DRAM, 1, 0, { 1.10, 1.20, 0 } },
  { "qk_prefill_h256", "QK-norm prefill 2048 x 40 x 256", KG_OP_QK_NORM, 256, 2048, KB_QH, KB_KH, KG_TOKEN_MAJOR,
    0, 0, KB_DRAM, 1, 0, { 1.10, 1.20, 0 } },
};
#define KB_NSTD (sizeof kb_std / sizeof kb_std[0])

int kb_shape_fits(const kb_shape *sh, const kg_variant *v, int dtype)
{
  if (v->op != sh->op || v->dim != sh->dim || v->dtype != dtype) return 0;
  if (v->isa == KG_ISA_AUTO || v->isa == KG_ISA_CUDA) return 0;
  if (v->rounding != sh->rounding || v->weight_offset != sh->weight_offset) return 0;
  if (sh->op == KG_OP_QK_NORM)
    return v->num_heads == sh->qh && v->num_kv_heads == sh->kh && v->layout == sh->layout;
  return 1;
}

/* Why: rows (tokens) of a derived DRAM tensor: as many as make about
 * KB_DRAM_BYTES of f32 per set, capped like the standard shapes. */
static size_t kb_dram_rows(size_t row_elems, size_t cap)
{
  size_t r = KB_DRAM_BYTES / (row_elems * 4);
  return r < 1 ? 1 : r > cap ? cap : r;
}

/* Why: one derived shape: the numbers of v, rows and residency given; the
 * name and label say what differs from a plain kernel (layout, rounding,
 * weight offset), so shapes of two such kernels never share a name. */
static void kb_derive(kb_shape *s, const kg_variant *v, const char *kind, size_t rows, int resid, int two_t,
                      double t32, double t16)
{
  memset(s, 0, sizeof *s);
  s->op = v->op;
  s->dim = v->dim;
  s->rows = rows;
  s->rounding = v->rounding;
  s->weight_offset = v->weight_offset;
  s->resid = resid;
  s->two_t = two_t;
  s->derived = 1;
  s->target[KG_F32] = t32;
  s->target[KG_BF16] = t16;
  char tail[48] = "";
  if (v->op == KG_OP_QK_NORM && v->layout == KG_HEAD_MAJOR) strcat(tail, "_hm");
  if (v->rounding == KG_ROUND_HF) strcat(tail, "_hf");
  if (v->weight_offset != 0.0f) snprintf(tail + strlen(tail), sizeof tail - strlen(tail), "_off%g", v->weight_offset);
  if (v->op == KG_OP_QK_NORM) {
    s->qh = v->num_heads;
    s->kh = v->num_kv_heads;
    s->layout = v->layout;
    snprintf(s->name, sizeof s->name, "qk_%s_%zux%zux%zu%s", kind, s->qh, s->kh, s->dim, tail);
    snprintf(s->label, sizeof s->label, "QK-norm %s %zu x %zu+%zu x %zu%s", kind, rows, s->qh, s->kh, s->dim,
             v->layout == KG_HEAD_MAJOR ? " head-major" : "");
  } else {
    const char *op = v->op == KG_OP_RMSNORM ? "rmsnorm" : "layernorm";
    snprintf(s->name, sizeof s->name, "%s_%zux%zu%s", op, s->dim, rows, tail);
    snprintf(s->label, sizeof s->label, "%s %zu x %zu", v->op == KG_OP_RMSNORM ? "RMSNorm" : "LayerNorm", s->dim,
             rows);
  }
  if (v->rounding == KG_ROUND_HF) strncat(s->label, " hf", sizeof s->label - strlen(s->label) - 1);
  if (v->weight_offset != 0.0f)
    snprintf(s->label + strlen(s->label), sizeof s->label - strlen(s->label), " (w + %g)", v->weight_offset);
}

/* Why: the shapes a kernel's numbers call for, with the target of the
 * standard shape of the same kind (the table, applied as a guide):
 * QK-norm decode and prefill; an RMSNorm row, a block of 64 rows (in L2
 * when it fits there as the standard 1024 x 64 does) and a DRAM tensor; a
 * LayerNorm block and a DRAM tensor.  Returns how many it wrote (<= 3). */
static size_t kb_derive_all(kb_shape *s, const kg_variant *v)
{
  if (v->op == KG_OP_QK_NORM) {
    const size_t row = (v->num_heads + 2 * v->num_kv_heads) * v->dim;
    kb_derive(&s[0], v, "decode", 1, KB_L2, 0, 1.2, 2.0);
    kb_derive(&s[1], v, "prefill", kb_dram_rows(row, 2048), KB_DRAM, 1, 1.10, 1.20);
    return 2;
  }
  if (v->op == KG_OP_RMSNORM) {
    const int l2 = v->dim <= 1024;
    kb_derive(&s[0], v, "", 1, KB_L2, 0, 0, 0);
    kb_derive(&s[1], v, "", 64, l2 ? KB_L2 : KB_LLC, 0, l2 ? 1.5 : 0, l2 ? 2.0 : 0);
    kb_derive(&s[2], v, "", kb_dram_rows(v->dim, 8192), KB_DRAM, 1, 1.00, 1.10);
    return 3;
  }
  kb_derive(&s[0], v, "", 512, KB_LLC, 0, 0, 0);
  kb_derive(&s[1], v, "", kb_dram_rows(v->dim, 8192), KB_DRAM, 1, 1.10, 1.20);
  return 2;
}

kb_shape *kb_shapes_build(const kg_variant *vt, size_t nv, size_t *n)
{
  kb_shape *s = malloc((KB_NSTD + 3 * nv) * sizeof *s);
  if (!s) return NULL;
  memcpy(s, kb_std, sizeof kb_std);
  size_t ns = KB_NSTD;
  for (size_t i = 0; i < nv; i++) {
    const kg_variant *v = &vt[i];
    if (v->isa == KG_ISA_AUTO || v->isa == KG_ISA_CUDA) continue;
    int known = 0;
    for (size_t j = 0; j < ns && !known; j++) known = kb_shape_fits(&s[j], v, v->dtype);
    if (!known) ns += kb_derive_all(&s[ns], v);
  }
  *n = ns;
  return s;
}
