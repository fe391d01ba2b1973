@ -- The LayerNorm body of R rows at once (R > 1 only in warp-per-row
@ -- kernels).  Row ri: xr[ri] -> yr[ri] (may alias), present when ok[ri]
@ -- (warp-uniform); thread t of the row group holds the rows in xv (read
@ -- once).  Two passes as the CPU's ln_row.c.tpl: the mean mu from a sum
@ -- in double (m1 = it in f32); then d = x - m1 gives sum(d^2), and
@ -- var = sum(d^2)/D - (mu - m1)^2 (mu is exact, so mean(d) is taken as
@ -- mu - m1 rather than summed: one reduction less).  Squared deviations
@ -- not finite in f32 -> the CPU's slow path in double (ln_slow.cu.tpl,
@ -- which re-reads the row).
@ local VE, C, LL, NV = util.int(L.VE), util.int(L.C), util.int(L.L), util.int(L.NV)
@ local R = util.int(L.R)
@ local LAY = DT .. ", " .. VE .. ", " .. C .. ", " .. LL .. ", " .. NV
@ local HAS = "kg_cu_has<" .. C .. ", " .. LL .. ", " .. NV .. ">(c, t)"
@ local AT = "(c * " .. LL .. " + t) * " .. VE
@ local NW = util.int(L.NW)
@ local X = DT .. "::in(xv[ri][c].e[j])"
@ -- warp rows and the few-rows twin of block rows: gamma and beta are
@ -- loaded together with x (one memory round trip); other block rows load
@ -- them after the reductions (L1 hits by then; early, 16-bit rows spill).
@ local early = P.warp or L.early
@ local function weights(indent)
@   if early then
$(indent)float gc[$(VE)], bc[$(VE)];
#pragma unroll
$(indent)for (int j = 0; j < $(VE); j++) {
$(indent)  gc[j] = $(DT)::in(gv[c].e[j]);
$(indent)  bc[j] = $(DT)::in(bv[c].e[j]);
$(indent)}
@   else
$(indent)float gc[$(VE)], bc[$(VE)];
$(indent)kg_cu_ld<$(DT), $(VE)>(gamma + $(AT), gc);
$(indent)kg_cu_ld<$(DT), $(VE)>(beta + $(AT), bc);
@   end
@ end
    kg_cu_pack<$(DT), $(VE)> xv[$(R)][$(C)];
#pragma unroll
    for (int ri = 0; ri < $(R); ri++) kg_cu_ld_row<$(LAY)>(xr[ri], t, ok[ri], xv[ri]);
@ if early then
    kg_cu_pack<$(DT), $(VE)> gv[$(C)], bv[$(C)];
    kg_cu_ld_row<$(LAY)>(gamma, t, true, gv);
    kg_cu_ld_row<$(LAY)>(beta, t, true, bv);
@ end
    /* the mean is summed in double: exact for cancelling and sparse rows */
    double s[$(R)];
#pragma unroll
    for (int ri = 0; ri < $(R); ri++) {
      s[ri] = 0.0;
#pragma unroll
      for (int c = 0; c < $(C); c++)
#pragma unroll
        for (int j = 0; j < $(VE); j++) s[ri] += (double)$(X);
    }
@ if P.warp then
    kg_cu_warp_sum_n(s);
@ else
    s[0] = kg_cu_block_sum<$(NW)>(s[0], kg_redd);
@ end
    float m1[$(R)], sq[$(R)];
#pragma unroll
    for (int ri = 0; ri < $(R); ri++) {
      m1[ri] = (float)(s[ri] * $(INV_D));
      sq[ri] = 0.0f;
#pragma unroll
      for (int c = 0; c < $(C); c++) {
        if (!($(HAS))) continue;
#pragma unroll
        for (int j = 0; j < $(VE); j++) {
          const float e = $(X) - m1[ri];
          sq[ri] = fmaf(e, e, sq[ri]);
        }
      }
    }
@ if P.warp then
    kg_cu_warp_sum_n(sq);
@ else
    sq[0] = kg_cu_block_sum<$(NW)>(sq[0], kg_red);
@ end
    /* every row's fast-path statistics first, without branches, so that
     * the rows' dependency chains overlap (unused for a slow-path row) */
    float mfs[$(R)], rsf[$(R)];
#pragma unroll
    for (int ri = 0; ri < $(R); ri++) {
      const double corr = s[ri] * $(INV_D) - (double)m1[ri];
      double var = (double)sq[ri] * $(INV_D) - corr * corr;
      if (var < 0.0) var = 0.0;
      mfs[ri] = (float)(s[ri] * $(INV_D));
      rsf[ri] = kg_cu_rsqrt(var + (double)$(EPS));
    }
#pragma unroll
    for (int ri = 0; ri < $(R); ri++) {
      if (!ok[ri]) continue;
      const size_t r = r0 + ri;
      if (!(sq[ri] <= FLT_MAX)) {
        /* rare: values near the f32 limit or a NaN/Inf in the row */
        $(sym)_$(L.base)_slow(xr[ri], yr[ri], gamma, beta, t, mean ? mean + r : NULL,
            rstd ? rstd + r : NULL$(P.warp and "" or ", kg_redd, kg_redd2"));
      } else {
        const float rs = rsf[ri], mf = mfs[ri];
        if (t == 0) {
          if (mean) mean[r] = mf;
          if (rstd) rstd[r] = rs;
        }
#pragma unroll
        for (int c = 0; c < $(C); c++) {
          if (!($(HAS))) continue;
@ weights("          ")
          float o[$(VE)];
#pragma unroll
          for (int j = 0; j < $(VE); j++) o[j] = fmaf(($(X) - mf) * rs, gc[j], bc[j]);
          kg_cu_st<$(DT), $(VE)>(yr[ri] + $(AT), o);
        }
      }
    }
