$(slow_fn)
@ local function prefetch()
@   -- token-major rows stream through memory: ask for the data 4 KiB ahead
@   -- (the hardware prefetcher alone stalls at each head's short row)
@   local bytes = k.dim * (T == "f32" and 4 or 2)
@   for off = 0, bytes - 1, 64 do
      __builtin_prefetch((const char *)yr + $(util.int(4096 + off)), 1, 3);
@   end
@ end
/* $(sym): QK-norm, per-head RMSNorm of Q ($(k.num_heads) heads) and K
 * ($(k.num_kv_heads) heads) of $(D) $(T) elements, in place, eps $(util.f32(k.eps)),
 * rounding "$(k.rounding)"; $(layout_doc). */
$(attr)void $(sym)(size_t tokens, $(CT) *q, size_t q_stride, $(CT) *k,
    size_t k_stride, const $(CT) *q_w, const $(CT) *k_w)
{
  if (tokens == 0) return; /* touch nothing, not even the weights */
@ if p.hoist_w then
@   for i, c in ipairs(p.chunks) do
  const $(c.I.vt) qv$(i) = $(wload(c, "q_w"));
  const $(c.I.vt) kv$(i) = $(wload(c, "k_w"));
@   end
@ end
@ if k.layout == "token_major" then
  /* token by token: its Q heads, then its K heads, one forward stream */
  for (size_t t = 0; t < tokens; t++) {
    for (size_t h = 0; h < $(util.int(k.num_heads)); h++) {
      $(CT) *yr = q + t * q_stride + h * $(D);
      const $(CT) *xr = yr;
@   prefetch()
$(row_q)
    }
    for (size_t h = 0; h < $(util.int(k.num_kv_heads)); h++) {
      $(CT) *yr = k + t * k_stride + h * $(D);
      const $(CT) *xr = yr;
@   prefetch()
$(row_k)
    }
  }
@ else
  /* head by head: each head's rows are contiguous */
  for (size_t h = 0; h < $(util.int(k.num_heads)); h++) {
    for (size_t t = 0; t < tokens; t++) {
      $(CT) *yr = q + h * q_stride + t * $(D);
      const $(CT) *xr = yr;
$(row_q)
    }
  }
  for (size_t h = 0; h < $(util.int(k.num_kv_heads)); h++) {
    for (size_t t = 0; t < tokens; t++) {
      $(CT) *yr = k + h * k_stride + t * $(D);
      const $(CT) *xr = yr;
$(row_k)
    }
  }
@ end
}
