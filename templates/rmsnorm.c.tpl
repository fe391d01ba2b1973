$(slow_fn)
@ if walign and not lf then
/* the helper for weights off cache-line alignment, after the kernel */
static KG_NOINLINE $(attr)void $(sym)_wa($(walign.typed));
@ end
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
@ if walign then
  if ($(walign.cond)) {
    $(sym)_wa($(walign.args));
    return;
  }
@ end
@ if stage_code ~= "" then
  $(stage_code)
@ end
@ if p.hoist_w then
@   for i, c in ipairs(p.chunks) do
  const $(c.I.vt) wv$(i) = $(wload(c));
@   end
@ end
$(nt_rows)
@ if row_body_fused then
@   if ahead2 then
  /* Each step normalizes row r while summing the squares of row r + 2,
   * and starts the scale of row r + 1 (summed the step before), so a row's
   * sqrt -> divide runs a whole step ahead of its second pass. */
@   else
  /* Each step normalizes row r while summing the squares of row r + 1. */
@   end
  $(indent(fused_head, "  "))
  for (size_t r = 0; r < rows; r++) {
    const $(CT) *xr = x + r * x_stride;
    $(CT) *yr = y + r * y_stride;
    const $(CT) *xn = $(fused_xn);
$(row_body_fused)
  }
@ else
  for (size_t r = 0; r < rows; r++) {
    const $(CT) *xr = x + r * x_stride;
    $(CT) *yr = y + r * y_stride;
$(row_body)
  }
@ end
@ end
}
@ if walign and not lf then

/* Why: weights off cache-line alignment are copied once to aligned stack
 * arrays and the kernel runs on those (pack.lua walign; the arrays in a
 * frame of their own, not the kernel's). */
static KG_NOINLINE $(attr)void $(sym)_wa($(walign.typed))
{
@ for _, line in ipairs(walign.body) do
  $(line)
@ end
  $(sym)($(walign.wargs));
}
@ end
