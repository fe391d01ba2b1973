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
@ local function loop(body, xp, pre, post)
    for (size_t r = 0; r < rows; r++) {
      const $(CT) *xr = x + r * x_stride;
      $(CT) *yr = y + r * y_stride;
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
    _mm_sfence();
    return;
@ end
@ if row_body_nt then
  /* Outputs far larger than the caches go around them (non-temporal
   * stores) when y is aligned for it and is not x. */
  if (KG_USE_NT(y, y_stride, rows, x)) {
@   loop(row_body_nt, nt_xp)
  }
@ end
@ if row_body_stage and stage_mode == "shift" then
  /* the same for y at any other alignment, realigned in registers */
  if (KG_USE_NT_STAGED(y, y_stride, rows, x)) {
@   loop(row_body_stage, stage_xp, V.nt_shift .. " nst = " .. V.nt_shift .. "_begin(yr);",
@        V.nt_shift .. "_end(&nst, " .. D .. ");")
  }
@ elseif row_body_stage then
  /* the same for y at any other alignment, through an aligned row */
  if (KG_USE_NT_STAGED(y, y_stride, rows, x)) {
    $(CT) ys[$(D)] __attribute__((aligned(64)));
@   loop(row_body_stage, stage_xp, nil, "kgi_nt_row((char *)yr, (const char *)ys, sizeof ys);")
  }
@ end
