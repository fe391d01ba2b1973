$(slow_fn)
@ if walign then
/* the helper for weights off cache-line alignment, after the kernel */
static KG_NOINLINE $(attr)void $(sym)_wa($(walign.typed));
@ end
/* $(sym): LayerNorm of `rows` rows of $(D) $(T) elements,
 * y = gamma * (x - mean) / sqrt(var + $(util.f32(k.eps))) + beta. */
$(attr)void $(sym)(size_t rows, const $(CT) *x, size_t x_stride,
    const $(CT) *gamma, const $(CT) *beta, $(CT) *y, size_t y_stride,
    float *mean, float *rstd)
{
  if (rows == 0) return; /* touch nothing, not even the weights */
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
  const $(c.I.vt) gv$(i) = $(c.I.load(T, "gamma", c.off, c.n));
  const $(c.I.vt) bv$(i) = $(c.I.load(T, "beta", c.off, c.n));
@   end
@ end
$(nt_rows)
@ if row_body_fused then
  /* Each step writes row r while summing row r + 1 (ln_row.c.tpl). */
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
}
@ if walign then

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
