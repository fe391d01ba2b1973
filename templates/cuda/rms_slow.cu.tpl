@ -- The RMSNorm rare path of one row (rmsnorm and qk_norm), a function of
@ -- its own (inlined): recomputed in double from the row re-read from
@ -- memory, pass by pass.  Holding the row instead, as the fast path does,
@ -- kept it converted through the rare path too and pushed 16-bit block
@ -- kernels into local-memory spills.  Called by the whole row group (warp
@ -- or block) before any store to this row; where rows lie side by side
@ -- in a warp (L.S > 1) by the whole warp, each row's lanes storing only
@ -- when `on` (their row takes the rare path).
@ local VE, C, LL, NV = util.int(L.VE), util.int(L.C), util.int(L.L), util.int(L.NV)
@ local HAS = "kg_cu_has<" .. C .. ", " .. LL .. ", " .. NV .. ">(c, t)"
@ local AT = "(c * " .. LL .. " + t) * " .. VE
@ local X = "xc[j]"
/* Why: a row whose f32 sum of squares is not finite (values near the f32
 * limit, or a NaN/Inf): the double recomputation the CPU's slow path does,
 * where the squares of any finite f32 cannot overflow; a NaN/Inf in the
 * row gives a NaN row. */
static __device__ __forceinline__ void $(sym)_$(L.base)_slow(const $(S) *xrow, $(S) *yrow,
    const $(S) *wrow, int t$(L.S > 1 and ", bool on" or "")$(has_rstd and ", float *rstd_out" or "")$(P.warp and "" or ", double *redd"))
{
@ local ON = L.S > 1 and "on && " or ""
  double sd = 0.0;
#pragma unroll
  for (int c = 0; c < $(C); c++) {
    if (!($(HAS))) continue;
    float xc[$(VE)];
    kg_cu_ld<$(DT), $(VE)>(xrow + $(AT), xc);
#pragma unroll
    for (int j = 0; j < $(VE); j++) {
      const double v = (double)$(X);
      sd = fma(v, v, sd);
    }
  }
@ if P.warp and L.S > 1 then
  sd = kg_cu_lanes_sum<$(LL)>(sd);
@ elseif P.warp then
  sd = kg_cu_warp_sum(sd);
@ else
  sd = kg_cu_block_sum<$(util.int(L.NW))>(sd, redd);
@ end
  if (!(sd <= 1.79e308)) {
    float o[$(VE)];
#pragma unroll
    for (int j = 0; j < $(VE); j++) o[j] = kg_cu_nan();
#pragma unroll
    for (int c = 0; c < $(C); c++)
      if ($(ON)$(HAS)) kg_cu_st<$(DT), $(VE)>(yrow + $(AT), o);
@ if has_rstd then
    if ($(ON)rstd_out && t == 0) *rstd_out = kg_cu_nan();
@ end
    return;
  }
  const double rs = 1.0 / sqrt(sd / $(D) + (double)$(EPS));
@ if has_rstd then
  if ($(ON)rstd_out && t == 0) *rstd_out = (float)rs;
@ end
@ if L.S > 1 then
  if (!on) return;
@ end
#pragma unroll
  for (int c = 0; c < $(C); c++) {
    if (!($(HAS))) continue;
    float xc[$(VE)], wc[$(VE)], o[$(VE)];
    kg_cu_ld<$(DT), $(VE)>(xrow + $(AT), xc);
    kg_cu_ld<$(DT), $(VE)>(wrow + $(AT), wc);
#pragma unroll
    for (int j = 0; j < $(VE); j++) {
@ if k.rounding == "hf" then
      const float h = $(DT)::round((float)((double)$(X) * rs));
      o[j] = h * (wc[j] + $(OFF));
@ else
      o[j] = (float)((double)$(X) * rs * ((double)wc[j] + $(OFF64)));
@ end
    }
    kg_cu_st<$(DT), $(VE)>(yrow + $(AT), o);
  }
}
