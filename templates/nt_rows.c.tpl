@ -- Out-of-place rows far larger than the caches (rmsnorm.c.tpl and
@ -- layernorm.c.tpl, `$(nt_rows)`), rendered by pack.lua.  y aligned to
@ -- whole cache lines (start and stride): non-temporal stores straight to
@ -- it (row_body_nt).  Any other y (a malloc'd buffer starts 16 bytes into
@ -- a line; odd strides) streams too (row_body_stage, pack.lua): rows of
@ -- whole vectors on AVX-512 f32 / bf16 realign each vector in registers
@ -- (stage_mode "shift", kgi_ntr / kgi_ntw), other rows of up to
@ -- NT_STAGE_MAX bytes are computed into an aligned stack row and
@ -- streamed out from there ("row", kgi_nt_row).  Such y used to take
@ -- plain stores, which read every output line first: LayerNorm
@ -- 4096 x 8192 f32 1.46 x memcpy against 0.92 aligned (bench/RESULTS.md
@ -- run 18).  A row that takes the slow path writes y itself and skips
@ -- the end of the stream (its `continue`).
@ -- `nt_fused` (pack.lua): the rows run fused (rms_row.c.tpl,
@ -- ln_row.c.tpl): each row's sums come from an earlier step, the first
@ -- ones from fused_head, and its output pass runs inside the sums of row
@ -- xn (fused_xn), whose lines it asks for ahead; `fz`: this loop's rows
@ -- are fused (the line frame's are not)
@ local function loop(body, xp, pre, post, fin, fz)
@   if fz then
    $(indent(fused_head, "    "))
@   end
    for (size_t r = 0; r < rows; r++) {
      const $(CT) *xr = x + r * x_stride;
      $(CT) *yr = y + r * y_stride;
@   if fz then
      const $(CT) *xn = $(fused_xn);
@   end
@   if xp then
      /* the next row (this one on the last), asked for while this one streams out */
      const char *xp = (const char *)(r + 1 < rows ? xr + x_stride : xr);
@   end
@   if pre then
      $(pre)
@   end
$(body)
@   if post then
      $(post)
@   end
    }
@   if fin then
    $(fin)
@   end
    _mm_sfence();
    return;
@ end
@ -- `row_body_pair` (pack.lua, LayerNorm): the rows two at a time, each
@ -- pair written inside the next pair's sums (ln_row.c.tpl `pair`;
@ -- row_body_pair_stage realigned in registers, row_body_pair_frame in
@ -- the line frame); a pair that is not plain, and the last rows, go one
@ -- row at a time (`alone`, which emits that code), then the next two
@ -- rows' sums are taken alone (pair_sums)
@ local function pair_loop(pair_body, alone, fin)
    $(indent(pair_head, "    "))
    for (size_t r = 0; r < rows; r += 2) {
      const $(CT) *xr = x + r * x_stride;
      $(CT) *yr = y + r * y_stride;
      const $(CT) *xrb = r + 1 < rows ? xr + x_stride : NULL;
      $(CT) *yrb = r + 1 < rows ? yr + y_stride : NULL;
      const $(CT) *xn = r + 2 < rows ? xr + 2 * x_stride : NULL;
      const $(CT) *xnb = r + 3 < rows ? xr + 3 * x_stride : NULL;
$(pair_body)
@   alone()
      if (xnb) {
        {
          const $(CT) *xn = xnb;
          $(indent(pair_sums, "          "))
        }
        snb = sn;
        sqnb = sqn;
        m1nb = m1n;
      }
      if (xn) {
        $(indent(pair_sums, "        "))
      }
    }
@   if fin then
    $(fin)
@   end
    _mm_sfence();
    return;
@ end
@ -- a pair's rows one at a time through the fused row `single` (its
@ -- `continue` ends a do-while, skipping `post` as in loop), each on the
@ -- sums the pair loop carried for it
@ local function fused_alone(single, pre, post)
@   local function one()
          do {
@     if pre then
            $(pre)
@     end
$(single)
@     if post then
            $(post)
@     end
          } while (0);
@   end
      {
        const $(CT) *xn = NULL;
@   one()
      }
      if (xrb) {
        const size_t rb = r + 1;
        sn = snb;
        sqn = sqnb;
        m1n = m1nb;
        {
          const size_t r = rb;
          const $(CT) *xr = xrb, *xn = NULL;
          $(CT) *yr = yrb;
@   one()
        }
      }
@ end
@ -- a pair's rows one at a time through the line frame's own row (which
@ -- takes its own sums; its `continue` ends that row)
@ local function frame_alone(pre)
      for (size_t r1 = r; r1 < r + 2 && r1 < rows; r1++) {
        const size_t r = r1;
        const $(CT) *xr = x + r * x_stride;
        $(CT) *yr = y + r * y_stride;
@   if frame_xp then
        /* the next row (this one on the last), asked for while this one streams out */
        const char *xp = (const char *)(r + 1 < rows ? xr + x_stride : xr);
@   end
        $(pre)
$(row_body_frame)
      }
@ end
@ -- the weights these rows load staged (pack.lua nt_stage_code: rows
@ -- too long to stage at kernel entry), split (converted) once per call
@ local function nt_weights()
@   if #nt_stage_code > 0 then
    /* the weights split once for all these rows */
@   end
@   for _, line in ipairs(nt_stage_code) do
    $(line)
@   end
@ end
@ if row_body_nt then
  /* Outputs far larger than the caches go around them (non-temporal
   * stores) when y is aligned for it and is not x. */
  if (KG_USE_NT(y, y_stride, rows, x)) {
@   nt_weights()
@   if nt_split then
    const int nt2 = $(nt_split_aligned)();
@   elseif ln_pair_parts then
    const int nt2 = kg_cpu_nt_split4k();
@   end
@   if row_body_pair then
@     pair_loop(row_body_pair, function() fused_alone(row_body_nt) end)
@   else
@     loop(row_body_nt, nt_xp, nil, nil, nil, nt_fused)
@   end
  }
@ end
@ if row_body_frame then
@   local F = V.nt_frame
  /* x and y the same bytes into their lines (two malloc'd buffers):
   * each row read and written as the aligned lines it covers (y's
   * frame), the weights copied into that frame once per call, so no
   * load of the output pass and no store splits a line (RMSNorm's sums
   * of the next row keep their own loads); the line two rows share is
   * streamed whole by the later row (the earlier one's part carried in
   * cv).  Same bits as the aligned rows (KT-LINES). */
  if (KG_USE_NT_STAGED(y, y_stride, rows, x) && (((uintptr_t)x ^ (uintptr_t)y) & 63) == 0
      && ((uintptr_t)y & 3) == 0
@   if frame_fz and nt_split then
      && !kg_cpu_nt_split()
@   end
      && (rows == 1 || (((x_stride * sizeof(*x)) & 63) == 0 && ((y_stride * sizeof(*y)) & 63) == 0))) {
@   for _, line in ipairs(V.lf.prologue("y", { own = true })) do
    $(line)
@   end
@   for _, line in ipairs(frame_stage) do
    $(line)
@   end
@   if frame_parts or (row_body_pair_frame and ln_pair_parts) then
    const int nt2 = kg_cpu_nt_split4k();
@   end
    /* rows end to end: each row's last line is the next one's first */
    const int yc = y_stride == $(D);
    $(F.vt) cv = $(F.zero);
    int cy = 0;
@   local pre = "const " .. CT .. " *xa = (const " .. CT .. " *)((uintptr_t)xr - 4 * kd);\n      "
@     .. CT .. " *ya = (" .. CT .. " *)((uintptr_t)yr - 4 * kd);"
@   local fin = "if (cy) " .. F.mstore("(" .. CT .. " *)((uintptr_t)(y + (rows - 1) * y_stride) - 4 * kd) + " .. D,
@     V.lf.tail, "cv")
@   -- the pairs where the runtime says so (kg_cpu_ln_frame_pairs: not on
@   -- AMD Zen 4, where they took 1.8x the time of rows one at a time)
@   if row_body_pair_frame then
    if (kg_cpu_ln_frame_pairs()) {
@     pair_loop(row_body_pair_frame, function() frame_alone(pre) end, fin)
    }
@   end
@   loop(row_body_frame, frame_xp, pre, nil, fin, frame_fz)
  }
@ end
@ if row_body_stage and stage_mode == "shift" then
  /* the same for y at any other alignment, realigned in registers */
  if (KG_USE_NT_STAGED(y, y_stride, rows, x)) {
@   nt_weights()
@   if nt_split then
    const int nt2 = kg_cpu_nt_split();
@   end
@   local pre = V.nt_shift .. " nst = " .. V.nt_shift .. "_begin(yr);"
@   if row_body_pair_stage then
@     pair_loop(row_body_pair_stage, function() fused_alone(row_body_stage, pre, stage_post) end)
@   else
@     loop(row_body_stage, stage_xp, pre, stage_post, nil, nt_fused)
@   end
  }
@ elseif row_body_stage then
  /* the same for y at any other alignment, through an aligned row */
  if (KG_USE_NT_STAGED(y, y_stride, rows, x)) {
    $(CT) ys[$(D)] __attribute__((aligned(64)));
@   nt_weights()
@   loop(row_body_stage, stage_xp, nil, stage_post, nil, nt_fused)
  }
@ end
