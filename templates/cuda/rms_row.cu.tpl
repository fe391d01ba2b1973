@ -- The RMSNorm body (rmsnorm and qk_norm) of R rows at once (R > 1 only in
@ -- warp-per-row kernels: more bytes in flight per warp).  Row ri: xr[ri] ->
@ -- yr[ri] (may alias), weights wr[ri], present when ok[ri] (warp-uniform).
@ -- Thread t of the row group holds the rows in xv (read once).  Fast path
@ -- in f32; a sum of squares that is not finite in f32 -> the CPU's slow
@ -- path in double (rms_slow.cu.tpl, which re-reads the row).
@ local VE, C, LL, NV = util.int(L.VE), util.int(L.C), util.int(L.L), util.int(L.NV)
@ local R = util.int(L.R)
@ local LAY = DT .. ", " .. VE .. ", " .. C .. ", " .. LL .. ", " .. NV
@ local HAS = "kg_cu_has<" .. C .. ", " .. LL .. ", " .. NV .. ">(c, t)"
@ local AT = "(c * " .. LL .. " + t) * " .. VE
@ local X = DT .. "::in(xv[ri][c].e[j])"
@ -- Weights are loaded together with x (one memory round trip, what
@ -- decode latency needs: a one-row RMSNorm 4096 bf16 went from 2.4 to 1.7
@ -- us per call on an H100 against loading them after the reduction), and
@ -- stay packed until used; no kgtc kernel spills under the 64-register cap.
    kg_cu_pack<$(DT), $(VE)> xv[$(R)][$(C)];
#pragma unroll
    for (int ri = 0; ri < $(R); ri++) kg_cu_ld_row<$(LAY)>(xr[ri], t, ok[ri], xv[ri]);
    kg_cu_pack<$(DT), $(VE)> wv[$(R)][$(C)];
#pragma unroll
    for (int ri = 0; ri < $(R); ri++) kg_cu_ld_row<$(LAY)>(wr[ri], t, ok[ri], wv[ri]);
    float ss[$(R)];
#pragma unroll
    for (int ri = 0; ri < $(R); ri++) {
      ss[ri] = 0.0f;
#pragma unroll
      for (int c = 0; c < $(C); c++)
#pragma unroll
        for (int j = 0; j < $(VE); j++) ss[ri] = fmaf($(X), $(X), ss[ri]);
    }
@ if P.warp and L.S > 1 then
    kg_cu_lanes_sum_n<$(LL)>(ss);
@ elseif P.warp then
    kg_cu_warp_sum_n(ss);
@ else
    ss[0] = kg_cu_block_sum<$(util.int(L.NW))>(ss[0], kg_red);
@ end
    /* every row's fast-path rstd first, without branches, so that the
     * rows' dependency chains overlap (unused for a slow-path row) */
    float rsf[$(R)];
#pragma unroll
    for (int ri = 0; ri < $(R); ri++) rsf[ri] = kg_cu_rsqrt(fma((double)ss[ri], $(INV_D), (double)$(EPS)));
#pragma unroll
    for (int ri = 0; ri < $(R); ri++) {
@ if L.S > 1 then
      /* rows side by side: the whole warp enters the rare path (its sums
       * shuffle) when any of its rows needs it; each row's lanes store
       * only for their own row */
      const float ss_k = ss[ri];
      const bool slow_r = ok[ri] && ($(slow_test));
      if (__any_sync(0xffffffffu, slow_r))
        $(sym)_$(L.base)_slow(xr[ri], yr[ri], wr[ri], t, slow_r$(has_rstd and ", rstd_out[ri]" or ""));
      if (!ok[ri] || slow_r) continue;
      {
@ else
      if (!ok[ri]) continue;
      const float ss_k = ss[ri];
      if ($(slow_test)) {
        /* rare: values near the f32 limit or a NaN/Inf in the row */
        $(sym)_$(L.base)_slow(xr[ri], yr[ri], wr[ri], t$(has_rstd and ", rstd_out[ri]" or "")$(P.warp and "" or ", kg_redd"));
      } else {
@ end
        const float rs = rsf[ri];
@ if has_rstd then
        if (rstd_out[ri] && t == 0) *rstd_out[ri] = rs;
@ end
#pragma unroll
        for (int c = 0; c < $(C); c++) {
          if (!($(HAS))) continue;
          float wc[$(VE)], o[$(VE)];
#pragma unroll
          for (int j = 0; j < $(VE); j++) wc[j] = $(DT)::in(wv[ri][c].e[j]);
#pragma unroll
          for (int j = 0; j < $(VE); j++) {
@ local wexpr = HAS_OFF and ("(wc[j] + " .. OFF .. ")") or "wc[j]"
@ if k.rounding == "hf" then
            o[j] = $(DT)::round($(X) * rs) * $(wexpr);
@ else
            o[j] = $(X) * rs * $(wexpr);
@ end
          }
          kg_cu_st<$(DT), $(VE)>(yr[ri] + $(AT), o);
        }
      }
    }
