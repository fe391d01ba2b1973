$(slow_fn)
@ local function prefetch(ind, ptr)
@   -- token-major rows stream through memory: ask for the data 4 KiB ahead
@   -- (the hardware prefetcher alone stalls at each head's short row)
@   local bytes = k.dim * (T == "f32" and 4 or 2)
@   for off = 0, bytes - 1, 64 do
$(ind)__builtin_prefetch((const char *)$(ptr) + $(util.int(4096 + off)), 1, 3);
@   end
@ end
/* $(sym): QK-norm, per-head RMSNorm of Q ($(k.num_heads) heads) and K
 * ($(k.num_kv_heads) heads) of $(D) $(T) elements, in place, eps $(util.f32(k.eps)),
 * rounding "$(k.rounding)"; $(layout_doc). */
$(attr)void $(sym)(size_t tokens, $(CT) *q, size_t q_stride, $(CT) *k,
    size_t k_stride, const $(CT) *q_w, const $(CT) *k_w)
{
  if (tokens == 0) return; /* touch nothing, not even the weights */
@ if stage_code ~= "" then
  $(stage_code)
@ end
@ if p.hoist_w then
@   for i, c in ipairs(p.chunks) do
  const $(c.I.vt) qv$(i) = $(wload(c, "q_w"));
  const $(c.I.vt) kv$(i) = $(wload(c, "k_w"));
@   end
@ end
@ -- rows idx = 0 .. n-1 at pointer ptr(idx): groups of G (rms_group.c.tpl)
@ -- then one row at a time; n is a constant or a run-time count
@ local function rows(ind, idx, n, ptr, key, pf)
@   local from = "0"
@   if G > 1 and (type(n) ~= "number" or n >= G) then
@     local ng = type(n) == "number" and util.int(n - n % G) or ("(" .. n .. ") / " .. G .. " * " .. G)
@     from = ng
$(ind)for (size_t $(idx) = 0; $(idx) < $(ng); $(idx) += $(G)) {
@     for g = 0, G - 1 do
$(ind)  $(CT) *yr$(g) = $(ptr("(" .. idx .. " + " .. g .. ")"));
$(ind)  const $(CT) *xr$(g) = yr$(g);
@       if pf then prefetch(ind .. "  ", "yr" .. g) end
@     end
$(group_of(key))
$(ind)}
@   end
@   if G == 1 or type(n) ~= "number" or n % G ~= 0 then
$(ind)for (size_t $(idx) = $(from); $(idx) < $(type(n) == "number" and util.int(n) or n); $(idx)++) {
$(ind)  $(CT) *yr = $(ptr(idx));
$(ind)  const $(CT) *xr = yr;
@     if pf then prefetch(ind .. "  ", "yr") end
$(row_of(key))
$(ind)}
@   end
@ end
@ if k.layout == "token_major" then
  /* token by token: its Q heads, then its K heads, one forward stream */
  for (size_t t = 0; t < tokens; t++) {
@   rows("    ", "h", k.num_heads, function(i) return "q + t * q_stride + " .. i .. " * " .. D end, "row_q", true)
@   rows("    ", "h", k.num_kv_heads, function(i) return "k + t * k_stride + " .. i .. " * " .. D end, "row_k", true)
  }
@ else
  /* head by head: each head's rows are contiguous */
  for (size_t h = 0; h < $(util.int(k.num_heads)); h++) {
@   rows("    ", "t", "tokens", function(i) return "q + h * q_stride + " .. i .. " * " .. D end, "row_q", false)
  }
  for (size_t h = 0; h < $(util.int(k.num_kv_heads)); h++) {
@   rows("    ", "t", "tokens", function(i) return "k + h * k_stride + " .. i .. " * " .. D end, "row_k", false)
  }
@ end
}
