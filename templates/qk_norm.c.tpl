$(slow_fn)
/* Normalize the $(CT) heads of one tensor (Q or K) in place: nh heads of
 * $(D) per token, $(layout_doc).  Inlined twice so nh is a constant. */
static KG_ALWAYS_INLINE $(attr)void $(sym)_part(size_t tokens, $(CT) *x, size_t stride,
    const $(CT) *w, const size_t nh)
{
@ if p.hoist_w then
@   for i, c in ipairs(p.chunks) do
  const $(c.I.vt) wv$(i) = $(wload(c));
@   end
@ end
@ if k.layout == "token_major" then
  for (size_t t = 0; t < tokens; t++) {
    for (size_t h = 0; h < nh; h++) {
      $(CT) *yr = x + t * stride + h * $(D);
@ else
  for (size_t h = 0; h < nh; h++) {
    for (size_t t = 0; t < tokens; t++) {
      $(CT) *yr = x + h * stride + t * $(D);
@ end
      const $(CT) *xr = yr;
$(row_body)
    }
  }
}

/* $(sym): QK-norm, per-head RMSNorm of Q ($(k.num_heads) heads) and K
 * ($(k.num_kv_heads) heads) of $(D) $(T) elements, in place, eps $(util.f32(k.eps)),
 * rounding "$(k.rounding)". */
$(attr)void $(sym)(size_t tokens, $(CT) *q, size_t q_stride, $(CT) *k,
    size_t k_stride, const $(CT) *q_w, const $(CT) *k_w)
{
  if (tokens == 0) return; /* touch nothing, not even the weights */
  $(sym)_part(tokens, q, q_stride, q_w, $(k.num_heads));
  $(sym)_part(tokens, k, k_stride, k_w, $(k.num_kv_heads));
}
