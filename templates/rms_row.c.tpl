@ -- One RMSNorm row: xr -> yr (may alias), weights hoisted in <wv><i> or
@ -- read from pointer <w>.  Fast path: f32 math, sums blocked into double (row.reduce);
@ -- a sum of squares beyond FLT_MAX (huge values, NaN, Inf) -> slow path.
@ -- `head` (pack.lua env.fused_head): what goes before the fused loop
@ -- (rmsnorm.c.tpl, nt_rows.c.tpl): the sums of the first row, and with
@ -- ahead2 of the second and its scale
@ if head then
@   if ahead2 then
double sn, sn2 = 0.0;
@   else
double sn;
@   end
{
  const $(CT) *xn = x;
  $(indent(row.reduce(p, row.sum_sq("sq"), row.loader(T, "xn")), "  "))
  sn = sq;
}
@   if ahead2 then
if (rows > 1) {
  const $(CT) *xn = x + x_stride;
  $(indent(row.reduce(p, row.sum_sq("sq"), row.loader(T, "xn")), "  "))
  sn2 = sq;
}
float rn = $(row.rms_scale("sn", D, EPS));
@   end
@ else
@ local function wt(c, i)
@   if p.hoist_w then return wv .. i end
@   return wload(c, w)
@ end
@ -- `ahead`: this output goes with the sums of row xn (the fused loop's
@ -- steps), so a non-temporal row asks for xn's lines ahead of them
@ local function out(c, xv, i, ahead)
@   local v = row.scaled(c.I, T, xv, c.I == V and "vr" or "rs", wt(c, i), k.rounding)
@   if nt and c.I.store_nt and c.n == c.I.W then
@     local pf
@     if not fused then pf = row.spread_prefetch(p, c, T, "xp", 3)
@     elseif ahead then pf = row.part_prefetch(p, c, T, "xn") end
@     -- a split row's second half streams through its own state (nst2)
@     local off, b = c.off, nil
@     if c.half == 2 and stage == "shift" then off, b = c.pos, "2" end
@     return (pf and pf .. " " or "") .. ntstore(c.I, T, yr, off, v, b)
@   end
@   return c.I.store(T, yr, c.off, c.n, v)
@ end
@ local sq = row.sum_sq("ss")
@ local ld = row.loader(T, xr)
@ local vals = nil
@ if p.in_regs then
@   vals = {}
@   for i, c in ipairs(p.chunks) do
@     vals[i] = "x" .. i
      const $(c.I.vt) x$(i) = $(ld(c));
@   end
@ end
@ -- fused form (rmsnorm.c.tpl, wide rows): this row's sum came from the
@ -- previous step (sn); its second pass runs inside the first pass of the
@ -- next row xn (NULL on the last row), so the two rows' work overlaps.
@ -- `ahead2` (pack.lua): the sum came from two steps back and the scale
@ -- from the previous step (rn); the second pass runs inside the first
@ -- pass of row r + 2 (NULL on the last two rows), and the next row's
@ -- scale (rn) is computed from its finished sum (sn2) while this row is
@ -- written: halfway through the step (row.reduce `mid`), where the sum
@ -- has long been done, so the sqrt -> divide chain holds up nothing.
@ local sqn, ldn = row.sum_sq("sq"), row.loader(T, "xn")
@ -- the carried sums moved on one row at the end of a step (`summed`: the
@ -- step summed a row, in sq)
@ local function advance(summed)
@   if ahead2 then return summed and "sn = sn2; sn2 = sq;" or "sn = sn2;" end
@   return summed and "sn = sq;" or nil
@ end
@ local next_rn = ahead2 and fused and ("rn = " .. row.rms_scale("sn2", D, EPS) .. ";") or nil
@ -- the line frame (nt_rows.c.tpl, stage "frame": x and y at one offset
@ -- into their lines, rows of whole lines, fused rows only): row r's
@ -- output goes out as y's aligned lines, each from x's aligned line at
@ -- the same place (xa, ya: the rows' frame bases) and the weights copied
@ -- into that frame (frame_w), so no load of the output pass and no store
@ -- splits a line; the sums of row xn keep their own loads, so every row
@ -- gets the bits of the aligned rows (KT-LINES).  Line 0 is masked (and
@ -- holds the previous row's carried part where rows are end to end, cy),
@ -- line D / W ends the row (carried in cv, or stored masked)
@ local lframe = stage == "frame"
@ local function frame_val(off, m)
@   local xv = V.load(T, "xa", off, V.W, m)
@   return V.nt_value(T, row.scaled(V, T, xv, "vr", wload({ I = V, off = off, n = V.W }, frame_w(w)), k.rounding))
@ end
@ -- line c.off with chunk c (line 0, the head, masked and blended with
@ -- the carried part; the tail, line D / W, after the loop: frame_tail).
@ -- The line goes out after chunk c of xn is loaded: a line one ahead
@ -- (c.off + W) sat 64 bytes into the next chunk's load in the low 12
@ -- address bits (x and y at one offset in their pages, as a malloc's
@ -- are), and ran no faster than the realigned rows (RESULTS run 61)
@ local function frame_line(c, j, ahead)
@   local F, L = V.nt_frame, V.lf
@   local pf = ahead and row.part_prefetch(p, c, T, "xn")
@   local s = F.stream("ya + " .. c.off, frame_val(c.off))
@   if j == 1 and (c.half or 1) == 1 then
@     s = "if (" .. c.off .. " != 0) { " .. s .. " } else { const " .. F.vt .. " hd = " .. frame_val("0", L.head)
@       .. "; " .. row.frame_head(F, L, "ya", "hd") .. " }"
@   end
@   return (pf and pf .. " " or "") .. s
@ end
@ local function frame_tail()
@   local F, L = V.nt_frame, V.lf
@   return "cv = " .. frame_val(D, L.tail) .. "; " .. row.frame_tail(F, L, "ya + " .. D, "cv")
@ end
@ if fused then
      const double ss = sn;
@   if ahead2 then
      const float rc = rn;
@   end
@ else
@   -- non-temporal rows of tables without nt_fused (pack.lua) ask for the
@   -- next row's first half while summing (row.sums_prefetch) and its
@   -- second half while writing (`out`); with nt_fused they run the fused
@   -- form, asking for the summed row ahead (row.ahead_prefetch)
@   local pf_sums = nt and function(c) return row.sums_prefetch(p, c, T, "xp") end or nil
      $(indent(row.reduce(p, sq, ld, nil, vals, pf_sums), "      "))
@ end
      if (KG_UNLIKELY($(slow_test))) {
@ if lframe then
        $(row.frame_flush(V.nt_frame, V.lf))
@ end
@ if next_rn then
        $(next_rn)
@ end
        $(slow)(xr, yr, $(w), $(rstd_out));
@ if fused then
        if (xn) {
          $(indent(row.reduce(p, sqn, ldn), "          "))
          $(advance(true))
@   if advance(false) then
        } else {
          $(advance(false))
@   end
        }
@ end
        continue;
      }
@ if fused and ahead2 then
      const float rs = rc;
@ else
      const float rs = $(row.rms_scale("ss", D, EPS));
@ end
@ if rstd_store then
      $(rstd_store) = rs;
@ end
@ if p.has_vec then
      const $(V.vt) vr = $(V.set1("rs"));
@ end
@ if p.in_regs then
@   for i, c in ipairs(p.chunks) do
      $(out(c, "x" .. i, i))
@   end
@ else
@   -- `nt_split` (pack.lua): where the runtime says so (nt2 =
@   -- kg_cpu_nt_split(), or kg_cpu_nt_split4k() for rows on line alignment
@   -- in parts at most 4 KiB apart, nt_rows.c.tpl), the fused
@   -- non-temporal row reads the next row and writes this one as
@   -- streams: aligned, in nt_parts parts (pack.lua), realigned in halves
@   -- (row.reduce `split`; the same bits)
@   if fused and nt and nt_split and (stage == nil or stage == "shift") then
@     local H = util.int(p.dim / 2)
      if (xn && nt2) {
@     if stage == "shift" then
        $(V.nt_shift) nst2 = $(V.nt_shift)_begin(yr + $(H));
@     end
        $(indent(row.reduce(p, sqn, ldn, nil, nil, function(c, j) return out(c, ld(c), j, true) end, nil,
          stage == "shift" and 2 or nt_parts), "        "))
        $(advance(true))
@     if stage == "shift" then
        $(V.nt_shift)_end(&nst, $(H));
        $(V.nt_shift)_end(&nst2, $(H));
@     end
        continue;
      }
@   end
@   if lframe then
@     -- `frame_parts` (pack.lua): where the runtime says so (nt2 =
@     -- kg_cpu_nt_split4k(), nt_rows.c.tpl) the frame's row is read and
@     -- written in parts 4 KiB apart too (the same bits)
@     if frame_parts then
      if (xn && nt2) {
        $(indent(row.reduce(p, sqn, ldn, nil, nil, function(c, j) return frame_line(c, j, true) end, nil, frame_parts), "        "))
        $(frame_tail())
        $(advance(true))
        continue;
      }
@     end
      if (xn) {
        $(indent(row.reduce(p, sqn, ldn, nil, nil, function(c, j) return frame_line(c, j, true) end, next_rn), "        "))
        $(frame_tail())
        $(advance(true))
        continue;
      }
@     if next_rn then
      $(next_rn)
@     end
@     if advance(false) then
      $(advance(false))
@     end
      for (size_t i = 0; i < $(util.int(p.loop_end)); i += $(p.step)) {
@     for j, c in ipairs(p.block) do
        $(frame_line(c, j))
@     end
      }
      $(frame_tail())
@   elseif fused then
      if (xn) {
        $(indent(row.reduce(p, sqn, ldn, nil, nil, function(c, j) return out(c, ld(c), j, true) end, next_rn), "        "))
        $(advance(true))
@     if nt_post then
        $(nt_post)
@     end
        continue;
      }
@     if next_rn then
      $(next_rn)
@     end
@     if advance(false) then
      $(advance(false))
@     end
@   end
@   if p.loop_end > 0 and not lframe then
      for (size_t i = 0; i < $(util.int(p.loop_end)); i += $(p.step)) {
@     for j, c in ipairs(p.block) do
        $(out(c, ld(c), j))
@     end
      }
@   end
@   for j, c in ipairs(lframe and {} or p.rest) do
      $(out(c, ld(c), j))
@   end
@ end
@ end
