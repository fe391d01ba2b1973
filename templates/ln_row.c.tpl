@ -- One LayerNorm row: xr -> yr (may alias).  The mean comes from a sum
@ -- kept in double lanes (exact for any row that does not span 29 binades,
@ -- so cancelling rows such as [1e4, -1e4, 0.5, 0...] keep an accurate mean
@ -- and a symmetric row a mean of exactly 0); e = x - m1 gives sum(e^2),
@ -- and var = sum(e^2)/D - (mu - m1)^2 (shift-invariant, Chan et al.), so
@ -- large offsets with a small spread stay accurate.  mean(e) is taken as
@ -- mu - m1 in double rather than summed: mu is the exact mean, so that
@ -- differs from the sum of the rounded e only by their rounding (relative
@ -- eps^2 of var), and it saves an add per vector (LayerNorm bf16 4096 x
@ -- 8192 6-10 % faster on Zen 4, bench/RESULTS.md run 14).
@ -- Streamed rows (not in registers) take both sums in one pass, with m1 =
@ -- the mean of the row's first 16 elements, so the row is read and split
@ -- once instead of twice (LayerNorm bf16 4096 x 8192 5-10 % faster on
@ -- Zen 4, run 15); where that m1 is further from mu than the standard
@ -- deviation, sum(e^2) is taken again around mu.  Register rows keep two
@ -- passes with m1 = the mean in f32.  A constant row whose mean rounds
@ -- back to the constant gives beta exactly.
@ -- gamma and beta: in registers (hoisted), else from the stack arrays
@ -- pack.lua staged them in once per call (16-bit rows up to 1024), else
@ -- loaded (and converted) with the row
@ local function gam(c, i)
@   if p.hoist_w then return "gv" .. i end
@   return wload(c, "gamma")
@ end
@ local function bet(c, i)
@   if p.hoist_w then return "bv" .. i end
@   return wload(c, "beta")
@ end
@ -- fused rows (pack.lua `ln_fz`; not the line frame): this row's sums
@ -- (s, sq around m1) came from the step before, and its output pass runs
@ -- inside the sums of the next row xn (NULL on the last row), which leave
@ -- them in sn, sqn and m1n; non-temporal rows ask for each line of xn
@ -- ahead (row.ahead_prefetch).  Rendered with `head` (pack.lua
@ -- env.fused_head): what goes before the loop, the first row's sums.
@ local fz = ln_fz and not p.in_regs and stage ~= "frame"
@ -- fused: fma(x, rs, -mu*rs) (one op less); else (x - mf) * rs;
@ -- `ahead`: this output goes with the sums of xn (fz); b: "" for row r,
@ -- "b" for row r + 1 of a pair (its names end in b); gv, bv: gamma and
@ -- beta already loaded (a pair's, shared by its two rows)
@ local function out(c, xv, i, fused, ahead, b, gv, bv)
@   b = b or ""
@   local vr = ((c.I == V) and "vr" or "rs") .. b
@   local v
@   if fused then
@     v = c.I.fma(xv, vr, ((c.I == V) and "va" or "ma") .. b)
@   else
@     v = c.I.mul(c.I.sub(xv, ((c.I == V) and "vm" or "mf") .. b), vr)
@   end
@   v = c.I.fma(v, gv or gam(c, i), bv or bet(c, i))
@   if nt and c.I.store_nt and c.n == c.I.W then
@     local pf
@     if not fz then pf = row.spread_prefetch(p, c, T, "xp", 3)
@     elseif ahead then pf = row.part_prefetch(p, c, T, "xn" .. b, pair and "x_stride" or nil) end
@     return (pf and pf .. " " or "") .. ntstore(c.I, T, yr .. b, c.off, v, b)
@   end
@   return c.I.store(T, yr .. b, c.off, c.n, v)
@ end
@ local function ld(c, b) return c.I.load(T, xr .. (b or ""), c.off, c.n) end
@ local sum = { { var = "s", wide = true, term = function(A, acc, v) return A.acc_add(acc, v) end } }
@ local dev = {
@   { var = "sq", centred = true, term = function(A, acc, v) return A.acc_fma(v, v, acc) end },
@ }
@ -- e = x - (C variable m) as the reduce's `pre`
@ local function centre_at(m)
@   return function(c, v, tag)
@     local e = "e" .. tag
@     if c.I.acc_vt == "double" then
@       -- scalar elements: x - m exactly in double, so sum(e^2) sees no
@       -- rounding of e
@       return "const double " .. e .. " = (double)" .. v .. " - (double)" .. m .. ";", e
@     end
@     return "const " .. c.I.vt .. " " .. e .. " = " .. row.sub(c, v, c.I == V and "v" .. m or m) .. ";", e
@   end
@ end
@ local centre = centre_at("m1")
@ -- streamed rows: one pass sums x and (x - m1)^2 with m1 = the mean of
@ -- the first K elements (the row is read and split once instead of twice)
@ local fuse = not p.in_regs
@ local K = math.min(p.dim, 16)
@ local function prefix(lo, n, ptr)
@   ptr = ptr or xr
@   if n == 1 then return "(double)" .. S.load(T, ptr, util.int(lo)) end
@   local h = math.floor(n / 2)
@   return "(" .. prefix(lo, h, ptr) .. " + " .. prefix(lo + h, n - h, ptr) .. ")"
@ end
@ -- fz: the sums of row xn into sn, sqn, m1n, with `also` (row.reduce)
@ -- run after each of its chunks
@ -- `two`: also the sums of row xnb into snb, sqnb, m1nb, in the same loop
@ -- (a pair), each with the accumulators one row's get (the table's
@ -- wide_nacc), so the same bits as the rows taken one at a time
@ -- `split`: the rows read in that many parts side by side (row.reduce)
@ local function next_sums(also, two, split)
@   local ldn = function(c) return c.I.load(T, "xn", c.off, c.n) end
@   local sums = { { var = "s2", wide = true, term = sum[1].term },
@     { var = "sq2", centred = true, term = dev[1].term } }
@   local rows_of = { "" }
@   if two then
@     local ldb = function(c) return c.I.load(T, "xnb", c.off, c.n) end
@     local pre = centre_at("m1nb")
@     sums[3] = { var = "s2b", wide = true, term = sum[1].term, load = ldb, pre = pre, tag = "b" }
@     sums[4] = { var = "sq2b", centred = true, term = dev[1].term, load = ldb, pre = pre, tag = "b" }
@     rows_of[2] = "b"
@   end
@   local t = { "{" }
@   for _, b in ipairs(rows_of) do
@     t[#t + 1] = "  m1n" .. b .. " = (float)(" .. prefix(0, K, "xn" .. b) .. " / " .. util.int(K) .. ");"
@     if p.has_vec and V.acc_vt ~= "double" then
@       t[#t + 1] = "  const " .. V.vt .. " vm1n" .. b .. " = " .. V.set1("m1n" .. b) .. ";"
@     end
@   end
@   t[#t + 1] = "  " .. indent(row.reduce(p, sums, ldn, centre_at("m1n"), nil, also, nil, split), "  ")
@   for _, b in ipairs(rows_of) do
@     t[#t + 1] = "  sn" .. b .. " = s2" .. b .. ";"
@     t[#t + 1] = "  sqn" .. b .. " = sq2" .. b .. ";"
@   end
@   t[#t + 1] = "}"
@   return table.concat(t, "\n")
@ end
@ -- a pair's next two rows summed with `also` (ln_row `pair`); with
@ -- `ln_parts` (pack.lua), where the runtime says so (nt2 =
@ -- kg_cpu_nt_split4k(), nt_rows.c.tpl), in halves: four streams 3-4 KiB
@ -- apart, each part asking for its place two rows on (the same bits)
@ local function pair_sums(also)
@   if not ln_parts then return next_sums(also, true) end
@   return "if (nt2) {\n  " .. indent(next_sums(also, true, ln_parts), "  ") .. "\n} else {\n  "
@     .. indent(next_sums(also, true), "  ") .. "\n}"
@ end
@ -- the row's mean and rstd from its sums (s, sq around m1): row r (b
@ -- "") or the second row of a pair (b "b", row ro = r + 1); vals: the
@ -- row's registers (in_regs)
@ local function coef(b, ro, vals)
      const double mu$(b) = s$(b) / $(D);
      double corr$(b) = mu$(b) - (double)m1$(b);
@   if fuse then
      /* the first elements' mean was a poor shift (|mu - m1| above the
       * standard deviation: sum(e^2) would lose more than a bit to the
       * subtraction below): sum(e^2) once more around m2 = mu in f32 */
      if (KG_UNLIKELY(2.0 * corr$(b) * corr$(b) > sq$(b) / $(D))) {
        const float m2 = (float)mu$(b);
@     if p.has_vec and V.acc_vt ~= "double" then
        const $(V.vt) vm2 = $(V.set1("m2"));
@     end
        $(indent(row.reduce(p, { { var = "sr", centred = true, term = dev[1].term } }, function(c) return ld(c, b) end, centre_at("m2"), vals, nil), "        "))
        sq$(b) = sr;
        corr$(b) = mu$(b) - (double)m2;
      }
@   end
      double var$(b) = sq$(b) / $(D) - corr$(b) * corr$(b);
      if (var$(b) < 0.0) var$(b) = 0.0;
      const float rs$(b) = (float)(1.0 / sqrt(var$(b) + (double)$(EPS)));
      const float mf$(b) = (float)mu$(b);
      if (mean) mean[$(ro)] = mf$(b);
      if (rstd) rstd[$(ro)] = rs$(b);
      const double mr$(b) = mu$(b) * (double)rs$(b);
@ end
@ -- the line frame's value of row b ("" or "b", a pair's second row) at
@ -- frame offset off, masked by m at the row's ends: the aligned row's
@ -- operations on the frame's aligned loads (fused: fma(x, rs, -mu*rs))
@ local function frame_val(off, m, fused, b, gv, bv)
@   b = b or ""
@   local xv = V.load(T, "xa" .. b, off, V.W, m)
@   local v = fused and V.fma(xv, "vr" .. b, "va" .. b) or V.mul(V.sub(xv, "vm"), "vr")
@   local c = { I = V, off = off, n = V.W }
@   return V.nt_value(T, V.fma(v, gv or wload(c, frame_w("gamma")), bv or wload(c, frame_w("beta"))))
@ end
@ -- a pair's two outputs at chunk c with gamma and beta loaded (and, for
@ -- 16-bit rows, split) once for both: the compiler may not reuse the
@ -- first row's loads past its store to y (y could be gamma), and redid
@ -- the split: LayerNorm 4096 x 8192 bf16 AVX-512 on a Zen 5 core
@ -- 1.34-1.41 -> 1.23-1.27 x memcpy (bench/RESULTS.md run 44).  both(gv, bv)
@ -- gives the two outputs' code
@ local function shared_w(c, gsrc, bsrc, both)
@   return "{ const " .. c.I.vt .. " gq = " .. wload(c, gsrc) .. ", bq = " .. wload(c, bsrc) .. "; "
@     .. both("gq", "bq") .. " }"
@ end
@ -- a pair of line-frame rows (ln_row `pair` with stage "frame"): with the
@ -- sums chunk c of rows r + 2 and r + 3, frame line c.off of rows r and
@ -- r + 1, after that chunk's loads (a line one ahead, c.off + W, sat 64
@ -- bytes into the next chunk's loads in the low 12 address bits, x and y
@ -- at one offset in their pages as a malloc's are: RESULTS run 61).
@ -- Line 0 is not written here: row r's head goes after the loop, then
@ -- row r + 1's with row r's tail (frame_pair_end).  Before the loop, the
@ -- head's store waited on the pair's fresh scale while the next rows'
@ -- sums could have run: LayerNorm 4096 x 8192 bf16 at offset 16 on a
@ -- Zen 5 core 0.86-1.02x the time after (bench/RESULTS.md run 67)
@ local function frame_pair_out(c, j)
@   local F = V.nt_frame
@   local t = {}
@   for _, b in ipairs({ "", "b" }) do
@     t[#t + 1] = row.part_prefetch(p, c, T, "xn" .. b, "x_stride")
@   end
@   local both = shared_w(c, frame_w("gamma"), frame_w("beta"), function(g, be)
@     return F.stream("ya + " .. c.off, frame_val(c.off, nil, true, "", g, be)) .. " "
@       .. F.stream("yab + " .. c.off, frame_val(c.off, nil, true, "b", g, be))
@   end)
@   if j == 1 and (c.half or 1) == 1 then both = "if (" .. c.off .. " != 0) { " .. both .. " }" end
@   t[#t + 1] = both
@   return table.concat(t, " ")
@ end
@ -- after the pair's loop: row r's tail and row r + 1's head (one line
@ -- where rows are end to end), row r + 1's tail kept in cv for the next
@ -- row's head
@ local function frame_pair_end()
@   local F, L = V.nt_frame, V.lf
@   return "{ const " .. F.vt .. " tl = " .. frame_val(D, L.tail, true) .. ", hdb = "
@     .. frame_val("0", L.head, true, "b") .. "; "
@     .. "if (yc) " .. F.stream("yab", F.blend("tl", L.head, "hdb")) .. " else { "
@     .. F.mstore("ya + " .. D, L.tail, "tl") .. " " .. F.mstore("yab", L.head, "hdb") .. " } "
@     .. "cv = " .. frame_val(D, L.tail, true, "b") .. "; }"
@ end
@ if head == "pair" then
@ -- before nt_rows.c.tpl's pair loop: rows 0 and 1's sums
double sn, sqn, snb = 0.0, sqnb = 0.0;
float m1n, m1nb = 0.0f;
if (rows > 1) {
  const $(CT) *xn = x + x_stride;
  $(indent(next_sums(nil), "  "))
  snb = sn;
  sqnb = sqn;
  m1nb = m1n;
}
{
  const $(CT) *xn = x;
  $(indent(next_sums(nil), "  "))
}
@ elseif head == "sums" then
$(next_sums(nil))
@ elseif pair then
@ -- a pair (nt_rows.c.tpl's pair loop): rows r and r + 1 written inside
@ -- the sums of rows r + 2 and r + 3 (xn, xnb), so each line of gamma
@ -- and beta comes from L2 once for two rows: LayerNorm 4096 x 8192 f32
@ -- AVX-512 on a Zen 5 core 1.22-1.25 -> 1.03-1.05 x memcpy
@ -- (bench/RESULTS.md run 42).  Only where both rows are plain
@ -- (finite sums, the fused output form) and both next rows exist; the
@ -- loop takes the others one row at a time.
      if (KG_LIKELY(xnb != NULL && sqn <= (double)FLT_MAX && sqnb <= (double)FLT_MAX)) {
        const float m1 = m1n, m1b = m1nb;
        const double s = sn, sb = snb;
        double sq = sqn, sqb = sqnb;
@ coef("", "r", nil)
@ coef("b", "r + 1", nil)
        if (KG_LIKELY(sq != 0.0 && fabs(mr) <= (double)FLT_MAX / 2 && sqb != 0.0 && fabs(mrb) <= (double)FLT_MAX / 2)) {
          const float ma = (float)-mr, mab = (float)-mrb;
@ if p.has_vec then
          const $(V.vt) vr = $(V.set1("rs")), va = $(V.set1("ma"));
          const $(V.vt) vrb = $(V.set1("rsb")), vab = $(V.set1("mab"));
@ end
@ if stage == "frame" then
@   local F, L = V.nt_frame, V.lf
          const $(CT) *xa = (const $(CT) *)((uintptr_t)xr - 4 * kd), *xab = (const $(CT) *)((uintptr_t)xrb - 4 * kd);
          $(CT) *ya = ($(CT) *)((uintptr_t)yr - 4 * kd), *yab = ($(CT) *)((uintptr_t)yrb - 4 * kd);
          $(indent(pair_sums(frame_pair_out), "          "))
          {
            const $(F.vt) hd = $(frame_val("0", L.head, true));
            $(row.frame_head(F, L, "ya", "hd"))
          }
          $(frame_pair_end())
          $(row.frame_tail(F, L, "yab + " .. D, "cv"))
@ else
@   if stage == "shift" then
          $(V.nt_shift) nst = $(V.nt_shift)_begin(yr), nstb = $(V.nt_shift)_begin(yrb);
@   end
@   local function pair_out(c, j)
@     local function both(g, be)
@       return out(c, ld(c), j, true, true, "", g, be) .. " " .. out(c, ld(c, "b"), j, true, true, "b", g, be)
@     end
@     if p.hoist_w then return both() end
@     return shared_w(c, "gamma", "beta", both)
@   end
          $(indent(pair_sums(pair_out), "          "))
@   if stage == "shift" then
          $(V.nt_shift)_end(&nst, $(D));
          $(V.nt_shift)_end(&nstb, $(D));
@   end
@ end
          continue;
        }
      }
@ elseif head then
double sn, sqn;
float m1n;
{
  const $(CT) *xn = x;
  $(indent(next_sums(nil), "  "))
}
@ else
@ local vals = nil
@ if p.in_regs then
@   vals = {}
@   for i, c in ipairs(p.chunks) do
@     vals[i] = "x" .. i
      const $(c.I.vt) x$(i) = $(ld(c));
@   end
@ end
@ -- non-temporal rows ask for the next row through all the passes
@ local function pf_pass(pass)
@   if not nt then return nil end
@   return function(c) return row.spread_prefetch(p, c, T, "xp", pass) end
@ end
@ if fz then
      const float m1 = m1n;
      const double s = sn;
      double sq = sqn;
@ elseif fuse then
      const float m1 = (float)($(prefix(0, K)) / $(util.int(K)));
@   if p.has_vec and V.acc_vt ~= "double" then
      const $(V.vt) vm1 = $(V.set1("m1"));
@   end
@   local pf_fused = nt and function(c) return row.sums_prefetch(p, c, T, "xp") end
      $(indent(row.reduce(p, { sum[1], dev[1] }, ld, centre, vals, pf_fused), "      "))
@ else
      $(indent(row.reduce(p, sum, ld, nil, vals, pf_pass(1)), "      "))
      const float m1 = (float)(s / $(D));
@   if p.has_vec and V.acc_vt ~= "double" then
      const $(V.vt) vm1 = $(V.set1("m1"));
@   end
      $(indent(row.reduce(p, dev, ld, centre, vals, pf_pass(2)), "      "))
@ end
      if (KG_UNLIKELY(!(sq <= (double)FLT_MAX))) {
@ if stage == "frame" then
        $(row.frame_flush(V.nt_frame, V.lf))
@ end
        $(slow)(xr, yr, gamma, beta, $(mean_out), $(rstd_out));
@ if fz then
        if (xn) $(indent(next_sums(nil), "        "))
@ end
        continue;
      }
@ coef("", "r", vals)
@ -- the line frame (nt_rows.c.tpl, stage "frame"): line 0 (masked, and
@ -- with the carried part of the line before where rows are end to end),
@ -- lines 1 .. nv - 1 streamed, line nv carried or stored masked; each
@ -- element gets the aligned row's operations.  The next row's second
@ -- half is asked for line by line, all of it (a row that left its last
@ -- 128 bytes out ran 8 % slower: RESULTS run 34).
@ local function frame_outputs(fused)
@   local F, L, W = V.nt_frame, V.lf, V.W
@   local nv, size = p.dim / W, util.BYTES[T]
@   local half = math.floor(p.dim * size / 2)
@   local hint = row.PREFETCH_HINT
@   local function val(off, m) return frame_val(off, m, fused) end
@   local function pf(a) return "__builtin_prefetch(xp + " .. a .. ", 0, " .. hint .. ");" end
        {
          const $(F.vt) hd = $(val("0", L.head));
          $(row.frame_head(F, L, "ya", "hd"))
        }
@   local nit = math.floor((nv - 1) / 4)
@   if nit > 0 then
        for (size_t i = $(W); i < $(W + 4 * W * nit); i += $(4 * W)) {
          $(pf(util.int(half) .. " + ((i - " .. W .. ") * " .. size .. ") / 2")) $(pf(util.int(half) .. " + ((i - " .. W .. ") * " .. size .. ") / 2 + 64"))
@     for j = 0, 3 do
@       local off = "i + " .. util.int(j * W)
          $(F.stream("ya + " .. off, val(off)))
@     end
        }
@   end
@   for j = 1 + 4 * nit, nv - 1 do
        $(F.stream("ya + " .. util.int(j * W), val(util.int(j * W))))
@   end
@   for m = 2 * nit, math.ceil(nv / 2) - 1 do
        $(pf(util.int(half + 64 * m)))
@   end
        cv = $(val(D, L.tail));
        $(row.frame_tail(F, L, "ya + " .. D, "cv"))
@ end
@ local function outputs(fused)
@ if stage == "frame" then
@   frame_outputs(fused)
@ elseif p.in_regs then
@   for i, c in ipairs(p.chunks) do
        $(out(c, "x" .. i, i, fused))
@   end
@ else
@   if fz then
        if (xn) {
          $(indent(next_sums(function(c, j) return out(c, ld(c), j, fused, true) end), "          "))
        } else {
@   end
@   if p.loop_end > 0 then
        for (size_t i = 0; i < $(util.int(p.loop_end)); i += $(p.step)) {
@     for j, c in ipairs(p.block) do
          $(out(c, ld(c), j, fused))
@     end
        }
@   end
@   for j, c in ipairs(p.rest) do
        $(out(c, ld(c), j, fused))
@   end
@   if fz then
        }
@   end
@ end
@ end
      /* y = fma(x, rs, -mu*rs), then gamma and beta: one op less than
       * (x - mu) * rs, and -mu*rs rounds once (error eps |mu| rs, inside
       * the bound; LayerNorm bf16 4096 x 8192 4-6 % faster, bench/RESULTS.md
       * run 15).  The subtraction stays where sum(e^2) is 0 (a constant row,
       * which must give beta exactly: x - mf is 0 there, x*rs - mu*rs is
       * not; or a row so tiny that e^2 underflows) and where |mu| * rs nears
       * the f32 limit (x * rs could overflow). */
      if (KG_UNLIKELY(sq == 0.0 || !(fabs(mr) <= (double)FLT_MAX / 2))) {
@ if p.has_vec then
        const $(V.vt) vm = $(V.set1("mf"));
        const $(V.vt) vr = $(V.set1("rs"));
@ end
@ outputs(false)
      } else {
        const float ma = (float)-mr;
@ if p.has_vec then
        const $(V.vt) vr = $(V.set1("rs"));
        const $(V.vt) va = $(V.set1("ma"));
@ end
@ outputs(true)
      }
@ end
