@ -- One LayerNorm row: xr -> yr (may alias).  Corrected two-pass: m1 = the
@ -- f32 mean; then d = x - m1 gives sum(d) and sum(d^2), so the mean is
@ -- m1 + sum(d)/D and var = sum(d^2)/D - (sum(d)/D)^2 (Chan et al.).  x - m1
@ -- is exact-ish near the mean, so large offsets with a small spread stay
@ -- accurate, and a constant row whose mean rounds back gives beta exactly.
@ local function gam(c, i)
@   if p.hoist_w then return "gv" .. i end
@   return c.I.load(T, "gamma", c.off, c.n)
@ end
@ local function bet(c, i)
@   if p.hoist_w then return "bv" .. i end
@   return c.I.load(T, "beta", c.off, c.n)
@ end
@ local function out(c, xv, i)
@   local vm = (c.I == V) and "vm" or "mf"
@   local vr = (c.I == V) and "vr" or "rs"
@   local v = c.I.fma(c.I.mul(c.I.sub(xv, vm), vr), gam(c, i), bet(c, i))
@   if nt and c.I.store_nt and c.n == c.I.W then return c.I.store_nt(T, yr, c.off, v) end
@   return c.I.store(T, yr, c.off, c.n, v)
@ end
@ if p.in_regs then
@   local s = row.accumulate(p, "s")
@   local d = row.accumulate(p, "d")
@   local q = row.accumulate(p, "q")
@   for i, c in ipairs(p.chunks) do
      const $(c.I.vt) x$(i) = $(c.I.load(T, xr, c.off, c.n));
@   end
@   for _, c in ipairs(s.chunks) do
@     if c.first then
      $(c.I.vt) $(c.acc) = x$(c.idx);
@     else
      $(c.acc) = $(c.I.add(c.acc, "x" .. c.idx));
@     end
@   end
      const float m1 = (float)((double)($(s.total)) / $(D));
@ if p.has_vec then
      const $(V.vt) vm1 = $(V.set1("m1"));
@ end
@   for j, c in ipairs(d.chunks) do
      const $(c.I.vt) e$(c.idx) = $(c.I.sub("x" .. c.idx, c.I == V and "vm1" or "m1"));
@     if c.first then
      $(c.I.vt) $(c.acc) = e$(c.idx);
      $(c.I.vt) $(q.chunks[j].acc) = $(c.I.mul("e" .. c.idx, "e" .. c.idx));
@     else
      $(c.acc) = $(c.I.add(c.acc, "e" .. c.idx));
      $(q.chunks[j].acc) = $(c.I.fma("e" .. c.idx, "e" .. c.idx, q.chunks[j].acc));
@     end
@   end
      const float sd = $(d.total);
      const float sq = $(q.total);
@ else
@   local s = row.accumulate(p, "s")
@   local d = row.accumulate(p, "d")
@   local q = row.accumulate(p, "q")
      $(V.vt) s1 = $(V.zero()), s2 = $(V.zero()), s3 = $(V.zero()), s4 = $(V.zero());
      for (size_t i = 0; i < $(p.loop_end); i += $(p.step)) {
@   for j, c in ipairs(p.block) do
        s$(j) = $(V.add("s" .. j, V.load(T, xr, c.off, c.n)));
@   end
      }
@   for _, c in ipairs(s.chunks) do
@     if c.first then
      $(c.I.vt) $(c.acc) = $(c.I.load(T, xr, c.off, c.n));
@     else
      $(c.acc) = $(c.I.add(c.acc, c.I.load(T, xr, c.off, c.n)));
@     end
@   end
      const float m1 = (float)((double)($(s.total)) / $(D));
@ if p.has_vec then
      const $(V.vt) vm1 = $(V.set1("m1"));
@ end
      $(V.vt) d1 = $(V.zero()), d2 = $(V.zero()), d3 = $(V.zero()), d4 = $(V.zero());
      $(V.vt) q1 = $(V.zero()), q2 = $(V.zero()), q3 = $(V.zero()), q4 = $(V.zero());
      for (size_t i = 0; i < $(p.loop_end); i += $(p.step)) {
@   for j, c in ipairs(p.block) do
        const $(V.vt) e$(j) = $(V.sub(V.load(T, xr, c.off, c.n), "vm1"));
        d$(j) = $(V.add("d" .. j, "e" .. j));
        q$(j) = $(V.fma("e" .. j, "e" .. j, "q" .. j));
@   end
      }
@   for j, c in ipairs(d.chunks) do
      const $(c.I.vt) e$(c.idx) = $(c.I.sub(c.I.load(T, xr, c.off, c.n), c.I == V and "vm1" or "m1"));
@     if c.first then
      $(c.I.vt) $(c.acc) = e$(c.idx);
      $(c.I.vt) $(q.chunks[j].acc) = $(c.I.mul("e" .. c.idx, "e" .. c.idx));
@     else
      $(c.acc) = $(c.I.add(c.acc, "e" .. c.idx));
      $(q.chunks[j].acc) = $(c.I.fma("e" .. c.idx, "e" .. c.idx, q.chunks[j].acc));
@     end
@   end
      const float sd = $(d.total);
      const float sq = $(q.total);
@ end
      if (KG_UNLIKELY(!(sq <= FLT_MAX))) {
        $(slow)(xr, yr, gamma, beta, $(mean_out), $(rstd_out));
        continue;
      }
      const double corr = (double)sd / $(D);
      const double mu = (double)m1 + corr;
      double var = (double)sq / $(D) - corr * corr;
      if (var < 0.0) var = 0.0;
      const float rs = (float)(1.0 / sqrt(var + (double)$(EPS)));
      const float mf = (float)mu;
      if (mean) mean[r] = mf;
      if (rstd) rstd[r] = rs;
@ if p.has_vec then
      const $(V.vt) vm = $(V.set1("mf"));
@ end
@ if p.has_vec then
      const $(V.vt) vr = $(V.set1("rs"));
@ end
@ if p.in_regs then
@   for i, c in ipairs(p.chunks) do
      $(out(c, "x" .. i, i))
@   end
@ else
      for (size_t i = 0; i < $(p.loop_end); i += $(p.step)) {
@   for j, c in ipairs(p.block) do
        $(out(c, V.load(T, xr, c.off, c.n), j))
@   end
      }
@   for _, c in ipairs(row.accumulate(p, "z").chunks) do
      $(out(c, c.I.load(T, xr, c.off, c.n), c.idx))
@   end
@ end
