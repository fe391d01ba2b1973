@ -- G in-place RMSNorm rows at once (QK-norm heads): xr<g> == yr<g>, g < G.
@ -- Why: a short row's time is its reduce -> sqrt -> divide chain; done row
@ -- by row, the out-of-order window holds the waiting second pass of one
@ -- row and little else.  Here the rows go G at a time and one group ahead:
@ -- a step starts the G scalar chains of its group (whose sums the previous
@ -- step made), then sums the next group (xn<g>, when `more`), then runs its
@ -- own second passes, so each chain has a whole group's first pass to
@ -- finish in and the second passes rarely wait.  `ahead2g` (pack.lua
@ -- ahead2_of; chained groups of 4 on AVX-512): the frame sums two groups
@ -- ahead and a step starts the next group's rs (rqc, from snv) while using
@ -- the one started a step before, so a chain has two groups to finish in.
@ -- part "sums": the next group's sums into sn<g> (declared by the frame),
@ -- pinned there by KG_PIN (isa_file.c.tpl: clang would sink them);
@ -- the frame also defines `more` and `nx`, the next group's first row (its
@ -- rows follow at head_dim apart: the next heads, or the next loop's;
@ -- nx_stride apart where that is set: head-major heads across heads).
@ -- `pair_step` (pack.lua, decode in pairs): a body whose frame sets ssv and
@ -- rq_b itself (qk_norm.c.tpl); the rest as ahead2g's.
@ -- part "body": the step.  Same arithmetic per row as rms_row.c.tpl
@ -- (bit-identical results); a group with a row for the slow path runs
@ -- the row code on each of its rows.  `lf` (the line-frame twin,
@ -- kernels/lines.lua): both parts work on the group's aligned lines.
@ local function wt(c, i)
@   if p.hoist_w then return wv .. i end
@   return wload(c, w)
@ end
@ -- V4 (groups of 4 on a table with V.g4): the rows' sums are finished
@ -- together into the frame's vector snv, their rs computed in one vector.
@ if part == "sums" and lf then
        $(V.g4.pvt) hv0, hv1, hv2, hv3;
        {
          $(indent(lines.sums(V, T, CT, p, G), "          "))
        }
        snv = $(V.g4.sum4("hv0", "hv1", "hv2", "hv3"));
        KG_PIN(snv);
@ elseif part == "sums" then
@   if V4 then
        $(V.g4.pvt) hv0, hv1, hv2, hv3;
@   end
@   for g = 0, G - 1 do
        {
          $(indent(row.reduce(p, row.sum_sq("tn", V4 and ("hv" .. g) or nil), row.loader(T, "xn" .. g)), "          "))
@   if not V4 then
          sn$(g) = tn;
@   end
        }
@   end
@   if V4 then
        snv = $(V.g4.sum4("hv0", "hv1", "hv2", "hv3"));
        KG_PIN(snv);
@   else
@     for g = 0, G - 1 do
        KG_PIN(sn$(g));
@     end
@   end
@ else
@ local tests = {}
@ for g = 0, G - 1 do tests[#tests + 1] = "(" .. slow_test:gsub("ss", "ss" .. g) .. ")" end
@ if V4 and pair_step then
      /* decode in pairs: the frame set ssv, this group's sums, and rq_b,
       * its rs in every 128-bit lane (qk_norm.c.tpl) */
@ elseif V4 and ahead2g then
      /* two groups ahead: this group's rs was started a step ago; start
       * the next one's now and sum the group after it (qk_norm.c.tpl) */
      const $(V.g4.svt) ssv = ssc;
      const $(V.g4.rvt) rq = rqc;
      ssc = snv;
      rqc = $(V.g4.rs4("snv", D, EPS));
@ elseif V4 then
      const $(V.g4.svt) ssv = snv;
      const $(V.g4.rvt) rq = $(V.g4.rs4("ssv", D, EPS));
@ else
@   for g = 0, G - 1 do
      const double ss$(g) = sn$(g);
@   end
@   for g = 0, G - 1 do
      const float rs$(g) = $(row.rms_scale("ss" .. g, D, EPS));
@   end
@ end
@ if V4 and V.g4.stash and not pair_step then
      $(V.g4.stash("rq"))
@ end
      if (more) {
@ for g = 0, lf and 0 or G - 1 do
@   -- (nx_stride: rows a head stride apart, head-major heads across heads)
@   local at = nx_stride and (g == 0 and "0" or util.int(g) .. " * " .. nx_stride) or util.int(g * k.dim)
        const $(CT) *xn$(g) = nx + $(at);
@ end
$(group_sums)
      }
      if (KG_UNLIKELY($(V4 and slow_test4 or table.concat(tests, " || ")))) {
@ local names = {}
@ for g = 0, G - 1 do names[#names + 1] = "yr" .. g end
@ if lf then
        $(lines.slow_head(V, T, CT, p, wv, k.rounding))
@ end
        $(CT) *const grp[$(G)] = { $(table.concat(names, ", ")) };
        for (size_t g = 0; g < $(G); g++) {
          $(CT) *yr = grp[g];
          const $(CT) *xr = yr;
$(rowtext)
        }
@ if lf then
        carry = 0;
@ end
      } else {
@ if lf then
@   for g = 0, G - 1 do
        const $(V.lf.svt) vr$(g) = $(V.lf.get("rq", g));
@   end
        $(indent(lines.body(V, T, CT, p, G, wv, k.rounding), "        "))
@ else
@ for g = 0, G - 1 do
@   if p.has_vec then
        const $(V.vt) vr$(g) = $(V4 and V.g4.get("rq", g) or V.set1("rs" .. g));
@   end
@   for i, c in ipairs(p.chunks) do
@     local x = c.I.load(T, "xr" .. g, c.off, c.n)
@     local v = row.scaled(c.I, T, x, c.I == V and ("vr" .. g) or ("rs" .. g), wt(c, i), k.rounding)
        $(c.I.store(T, "yr" .. g, c.off, c.n, v))
@   end
@ end
@ end
      }
@ end
