@ -- The LayerNorm rare path of one row, a function of its own (inlined):
@ -- mean and variance recomputed in double from the row re-read from
@ -- memory, pass by pass.  Holding the row instead, as the fast path does,
@ -- kept it converted through the rare path too and pushed 16-bit block
@ -- kernels into local-memory spills.  Called by the whole row group (warp
@ -- or block) before any store to this row.
@ local VE, C, LL, NV = util.int(L.VE), util.int(L.C), util.int(L.L), util.int(L.NV)
@ local HAS = "kg_cu_has<" .. C .. ", " .. LL .. ", " .. NV .. ">(c, t)"
@ local AT = "(c * " .. LL .. " + t) * " .. VE
@ local X = "xc[j]"
/* Why: a row whose f32 squared deviations are not finite (values near the
 * f32 limit, or a NaN/Inf): the double recomputation the CPU's slow path
 * does; a non-finite input gives a NaN row.  mean_out / rstd_out: this
 * row's slots, or NULL. */
static __device__ __forceinline__ void $(sym)_$(L.base)_slow(const $(S) *xrow, $(S) *yrow,
    const $(S) *gamma, const $(S) *beta, int t, float *mean_out, float *rstd_out$(P.warp and "" or ",\n    double *redd, double *redd2"))
{
  double sdd = 0.0;
#pragma unroll
  for (int c = 0; c < $(C); c++) {
    if (!($(HAS))) continue;
    float xc[$(VE)];
    kg_cu_ld<$(DT), $(VE)>(xrow + $(AT), xc);
#pragma unroll
    for (int j = 0; j < $(VE); j++) sdd += (double)$(X);
  }
@ if P.warp then
  sdd = kg_cu_warp_sum(sdd);
@ else
  sdd = kg_cu_block_sum<$(util.int(L.NW))>(sdd, redd);
@ end
  const double mu = sdd / $(D);
  double sqd = 0.0;
#pragma unroll
  for (int c = 0; c < $(C); c++) {
    if (!($(HAS))) continue;
    float xc[$(VE)];
    kg_cu_ld<$(DT), $(VE)>(xrow + $(AT), xc);
#pragma unroll
    for (int j = 0; j < $(VE); j++) {
      const double e = (double)$(X) - mu;
      sqd = fma(e, e, sqd);
    }
  }
@ if P.warp then
  sqd = kg_cu_warp_sum(sqd);
@ else
  sqd = kg_cu_block_sum<$(util.int(L.NW))>(sqd, redd2);
@ end
  if (!(sqd <= 1.79e308)) {
    float o[$(VE)];
#pragma unroll
    for (int j = 0; j < $(VE); j++) o[j] = kg_cu_nan();
#pragma unroll
    for (int c = 0; c < $(C); c++)
      if ($(HAS)) kg_cu_st<$(DT), $(VE)>(yrow + $(AT), o);
    if (t == 0) {
      if (mean_out) *mean_out = kg_cu_nan();
      if (rstd_out) *rstd_out = kg_cu_nan();
    }
    return;
  }
  const double rs = 1.0 / sqrt(sqd / $(D) + (double)$(EPS));
  if (t == 0) {
    if (mean_out) *mean_out = (float)mu;
    if (rstd_out) *rstd_out = (float)rs;
  }
#pragma unroll
  for (int c = 0; c < $(C); c++) {
    if (!($(HAS))) continue;
    float xc[$(VE)], gc[$(VE)], bc[$(VE)], o[$(VE)];
    kg_cu_ld<$(DT), $(VE)>(xrow + $(AT), xc);
    kg_cu_ld<$(DT), $(VE)>(gamma + $(AT), gc);
    kg_cu_ld<$(DT), $(VE)>(beta + $(AT), bc);
#pragma unroll
    for (int j = 0; j < $(VE); j++)
      o[j] = (float)(((double)$(X) - mu) * rs * (double)gc[j] + (double)bc[j]);
    kg_cu_st<$(DT), $(VE)>(yrow + $(AT), o);
  }
}
