$(slow_fn)
/* $(sym): RMSNorm of `rows` rows of $(D) $(T) elements,
 * y = x / sqrt(mean(x^2) + $(util.f32(k.eps))) * (w + $(util.f32(k.weight_offset))), rounding "$(k.rounding)". */
$(linkage)$(attr)void $(sym)(size_t rows, const $(CT) *x, size_t x_stride, const $(CT) *w,
    $(CT) *y, size_t y_stride, float *rstd)
{
@ if dot_call then
  $(dot_call)
@ end
  if (rows == 0) return; /* touch nothing, not even the weights */
@ if lf_call then
  /* rows off cache-line alignment: the line frame (y's) */
  if ($(lf_call.cond)) {
    $(lf_call.call)
    return;
  }
@ end
@ if lf then
@   for _, line in ipairs(V.lf.prologue("y")) do
  $(line)
@   end
  $(indent(lf_text, "  "))
@ else
@ if stage_code ~= "" then
  $(stage_code)
@ end
@ if p.hoist_w then
@   for i, c in ipairs(p.chunks) do
  const $(c.I.vt) wv$(i) = $(wload(c));
@   end
@ end
@ -- the fused rows (row_body_fused and its non-temporal twins): each step
@ -- normalizes row r while summing row r + 1 (r + 2 with ahead2); `pad`
@ -- indents it inside an if, pre and post go around each row
@ local function fused_loop(body, pad, pre, post)
@   if ahead2 then
$(pad)  double sn, sn2 = 0.0;
@   else
$(pad)  double sn;
@   end
$(pad)  {
$(pad)    const $(CT) *xn = x;
$(pad)    $(indent(row.reduce(p, row.sum_sq("sq"), row.loader(T, "xn")), pad .. "    "))
$(pad)    sn = sq;
$(pad)  }
@   if ahead2 then
$(pad)  if (rows > 1) {
$(pad)    const $(CT) *xn = x + x_stride;
$(pad)    $(indent(row.reduce(p, row.sum_sq("sq"), row.loader(T, "xn")), pad .. "    "))
$(pad)    sn2 = sq;
$(pad)  }
$(pad)  float rn = $(row.rms_scale("sn", D, EPS));
@   end
$(pad)  for (size_t r = 0; r < rows; r++) {
$(pad)    const $(CT) *xr = x + r * x_stride;
$(pad)    $(CT) *yr = y + r * y_stride;
$(pad)    const $(CT) *xn = r + $(ahead2 and 2 or 1) < rows ? xr + $(ahead2 and "2 * " or "")x_stride : NULL;
@   if pre then
$(pad)    $(pre)
@   end
$(pad)$(indent(body, pad))
@   if post then
$(pad)    $(post)
@   end
$(pad)  }
@ end
@ if nt_fused then
  /* Outputs far larger than the caches go around them (non-temporal
   * stores), row r streamed out while row r + 1 is read from memory
   * (the fused rows below, each line asked for ahead of its sums). */
  if (KG_USE_NT(y, y_stride, rows, x)) {
@   fused_loop(row_body_nt, "  ")
    _mm_sfence();
    return;
  }
@   if row_body_stage then
  /* the same for y at any other alignment, $(stage_mode == "shift" and "realigned in registers" or "through an aligned row") */
  if (KG_USE_NT_STAGED(y, y_stride, rows, x)) {
@     if stage_mode == "shift" then
@       fused_loop(row_body_stage, "  ", V.nt_shift .. " nst = " .. V.nt_shift .. "_begin(yr);", stage_post)
@     else
    $(CT) ys[$(D)] __attribute__((aligned(64)));
@       fused_loop(row_body_stage, "  ", nil, stage_post)
@     end
    _mm_sfence();
    return;
  }
@   end
@ else
$(nt_rows)
@ end
@ if row_body_fused then
@   if ahead2 then
  /* Each step normalizes row r while summing the squares of row r + 2,
   * and starts the scale of row r + 1 (summed the step before), so a row's
   * sqrt -> divide runs a whole step ahead of its second pass. */
@   else
  /* Each step normalizes row r while summing the squares of row r + 1. */
@   end
@   fused_loop(row_body_fused, "")
@ else
  for (size_t r = 0; r < rows; r++) {
    const $(CT) *xr = x + r * x_stride;
    $(CT) *yr = y + r * y_stride;
$(row_body)
  }
@ end
@ end
}
