@ -- One RMSNorm row: xr -> yr (may alias), weights hoisted in wv<i> or read
@ -- from `w`.  Fast path in f32; non-finite sum of squares -> slow path.
@ local function wt(c, i)
@   if p.hoist_w then return "wv" .. i end
@   local e = c.I.load(T, w, c.off, c.n)
@   if k.weight_offset ~= 0 then e = c.I.add(e, c.I.set1(util.f32(k.weight_offset))) end
@   return e
@ end
@ local function out(c, xv, rv, i)
@   local h = c.I.mul(xv, rv)
@   if k.rounding == "hf" then h = c.I.round(T, h) end
@   if nt and c.I.store_nt and c.n == c.I.W then
@     return c.I.store_nt(T, yr, c.off, c.I.mul(h, wt(c, i)))
@   end
@   return c.I.store(T, yr, c.off, c.n, c.I.mul(h, wt(c, i)))
@ end
@ if p.in_regs then
@   local a = row.accumulate(p, "ss")
@   for i, c in ipairs(p.chunks) do
      const $(c.I.vt) x$(i) = $(c.I.load(T, xr, c.off, c.n));
@   end
@   for _, c in ipairs(a.chunks) do
@     if c.first then
      $(c.I.vt) $(c.acc) = $(c.I.mul("x" .. c.idx, "x" .. c.idx));
@     else
      $(c.acc) = $(c.I.fma("x" .. c.idx, "x" .. c.idx, c.acc));
@     end
@   end
      const float ss = $(a.total);
      if (KG_UNLIKELY($(slow_test))) {
        $(slow)(xr, yr, $(w), $(rstd_out));
        continue;
      }
      const float rs = (float)(1.0 / sqrt((double)ss / $(D) + (double)$(EPS)));
@   if rstd_store then
      $(rstd_store) = rs;
@   end
@ if p.has_vec then
      const $(V.vt) vr = $(V.set1("rs"));
@ end
@   for i, c in ipairs(p.chunks) do
      $(out(c, "x" .. i, c.I == V and "vr" or "rs", i))
@   end
@ else
@   local a = row.accumulate(p, "ss")
      $(V.vt) ss1 = $(V.zero()), ss2 = $(V.zero()), ss3 = $(V.zero()), ss4 = $(V.zero());
      for (size_t i = 0; i < $(p.loop_end); i += $(p.step)) {
@   for j, c in ipairs(p.block) do
        const $(V.vt) x$(j) = $(V.load(T, xr, c.off, c.n));
        ss$(j) = $(V.fma("x" .. j, "x" .. j, "ss" .. j));
@   end
      }
@   for _, c in ipairs(a.chunks) do
@     if c.first then
      const $(c.I.vt) r$(c.idx) = $(c.I.load(T, xr, c.off, c.n));
      $(c.I.vt) $(c.acc) = $(c.I.mul("r" .. c.idx, "r" .. c.idx));
@     else
      const $(c.I.vt) r$(c.idx) = $(c.I.load(T, xr, c.off, c.n));
      $(c.acc) = $(c.I.fma("r" .. c.idx, "r" .. c.idx, c.acc));
@     end
@   end
      const float ss = $(a.total);
      if (KG_UNLIKELY($(slow_test))) {
        $(slow)(xr, yr, $(w), $(rstd_out));
        continue;
      }
      const float rs = (float)(1.0 / sqrt((double)ss / $(D) + (double)$(EPS)));
@   if rstd_store then
      $(rstd_store) = rs;
@   end
@ if p.has_vec then
      const $(V.vt) vr = $(V.set1("rs"));
@ end
      for (size_t i = 0; i < $(p.loop_end); i += $(p.step)) {
@   for j, c in ipairs(p.block) do
        $(out(c, V.load(T, xr, c.off, c.n), "vr", j))
@   end
      }
@   for _, c in ipairs(a.chunks) do
      $(out(c, "r" .. c.idx, c.I == V and "vr" or "rs", c.idx))
@   end
@ end
