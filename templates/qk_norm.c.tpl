$(slow_fn)
@ -- next-token prefetches into L1 or L2 by the runtime's answer (below),
@ -- where one token's heads are at most V.prefetch_l1 bytes (16-bit heads,
@ -- which go in groups: twice that)
@ local pl1 = V.prefetch_l1 and k.layout == "token_major"
@   and (k.num_heads + k.num_kv_heads) * row_bytes <= V.prefetch_l1 * (k.dtype == "f32" and 1 or 2)
@ local function prefetch(ind, ptr, pf)
@   -- token-major rows stream through memory: ask for the same head of the
@   -- next token, pf = one token stride ahead (pfq for Q heads, pfk for K;
@   -- the hardware prefetcher alone stalls at each head's short row).
@   -- A fixed 4 KiB ahead was a third of a bf16 head_dim 128 token of
@   -- Qwen3-8B's fused QKV: one token ahead measured 25-42 % faster on
@   -- 16-bit prefill on a Zen 5 core (bench/RESULTS.md run 11); into L2
@   -- (row.PREFETCH_HINT), as a token ahead is 10-40 KiB of q|k lines.  On
@   -- the last token (all of decode) pf is 0: the row's own lines, which are
@   -- wanted now, instead of lines past the data (skipping them measured
@   -- AVX-512 f32 decode 21 % slower on a Zen 4 core, run 13).  Read intent even though
@   -- the rows are written: a build with prfchw (-march=native) would emit
@   -- prefetchw, measured 10 % slower on prefill.  Tables marked
@   -- own_line_prefetch = false (AVX2) skip the last token's.
@   -- Token-major rows of tables with prefetch_l1 (x86) ask for them into
@   -- L1 instead where the runtime says so (pl1, kg_cpu_prefetch_zen5: AMD
@   -- Zen 5) and a token's heads are few enough bytes (above): a branch
@   -- per head on a value read once per call.
@   local own = V.own_line_prefetch ~= false
@   local in2 = own and ind or ind .. "  "
@   if not own then
$(ind)if ($(pf)) {
@   end
@   -- (the row's requests from one opaque base pointer: row.prefetch_lines)
$(row.prefetch_lines(in2, "(const char *)" .. ptr .. " + " .. pf, row_bytes, pl1))
@   if not own then
$(ind)}
@   end
@ end
/* $(sym): QK-norm, per-head RMSNorm of Q ($(k.num_heads) heads) and K
 * ($(k.num_kv_heads) heads) of $(D) $(T) elements, in place, eps $(util.f32(k.eps)),
 * rounding "$(k.rounding)"; $(layout_doc). */
$(linkage)$(attr)void $(sym)(size_t tokens, $(CT) *q, size_t q_stride, $(CT) *k,
    size_t k_stride, const $(CT) *q_w, const $(CT) *k_w)
{
@ if dot_call then
  $(dot_call)
@ end
  if (tokens == 0) return; /* touch nothing, not even the weights */
@ if lf_call then
  /* heads off cache-line alignment, q's at one offset, k's at one: the line frame */
  if ($(lf_call.cond)) {
    $(lf_call.call)
    return;
  }
@ end
@ if stage_code ~= "" then
  $(stage_code)
@ end
@ if pl1 then
  const int pl1 = kg_cpu_prefetch_zen5(); /* prefetch next tokens into L1, else L2 */
@ end
@ if lf then
  /* q's and k's offsets into their lines and each one's weights in that frame */
@   for _, t in ipairs({ { "qv", "q" }, { "kv", "k" } }) do
@     for _, line in ipairs(lines.frame(V, t[1]).prologue(t[2], { own = true })) do
  $(line)
@     end
@   end
@   -- (a weight set whose token-major heads make no group has none)
@   for _, set in ipairs({ { "qv", "q_w", k.num_heads }, { "kv", "k_w", k.num_kv_heads } }) do
@     if k.layout ~= "token_major" or set[3] >= G then
@       for _, line in ipairs(lines.weights(V, CT, p_lf, set[1], set[2], wload_lf)) do
  $(line)
@       end
@     end
@   end
@ elseif p.hoist_w then
@   for i, c in ipairs(p.chunks) do
  const $(c.I.vt) qv$(i) = $(wload(c, "q_w"));
  const $(c.I.vt) kv$(i) = $(wload(c, "k_w"));
@   end
@ end
@ -- the sums of the first group (rows at ptr(0 .. G-1)) into sn0 .. sn<G-1>;
@ -- again: into the variables a first call declared (a second group)
@ local function first_sums(ind, G, ptr, again)
@   if again then
@   elseif V4 and G == 4 then
$(ind)$(V.g4.svt) snv;
@   else
@     local sn = {}
@     for g = 0, G - 1 do sn[#sn + 1] = "sn" .. g end
$(ind)double $(table.concat(sn, ", "));
@   end
$(ind){
@   for g = 0, lf and 0 or G - 1 do
$(ind)  const $(CT) *xn$(g) = $(ptr(util.int(g)));
@   end
$(sums_of(G))
$(ind)}
@ end
@ -- rows idx = 0 .. n-1 at pointer ptr(idx): groups of G (rms_group.c.tpl)
@ -- then one row at a time; n is a constant or a run-time count.  pf: what
@ -- each row prefetches: the name of a C byte offset (pfq / pfk, one token
@ -- ahead) or false (none).
@ -- chain (token-major, both head counts multiples of G): the loops of a
@ -- call form one pipeline: a loop's last step sums the first group of the
@ -- next loop (at chain.nxt, when chain.has_next) into the sums the frame
@ -- declared once (all_rows), so K's and the next token's first groups do
@ -- not wait; without it each loop sums its own first group.
@ -- gkey: the key of the group code, when not key's (head-major heads
@ -- grouped across heads: key .. "_across"; their row pointers go
@ -- through KG_OPAQUE, isa_file.c.tpl).
@ local function rows(ind, idx, n, ptr, key, pf, G, chain, gkey)
@   local from = "0"
@   if G > 1 and (type(n) ~= "number" or n >= G) then
@     -- groups of G, one group ahead (rms_group.c.tpl): each step sums the
@     -- next group while its own chains run
@     local ng = type(n) == "number" and util.int(n - n % G) or ("(" .. n .. ") / " .. G .. " * " .. G)
@     from = ng
@     local inner = idx .. " + " .. G .. " < " .. ng
@     local after = ptr("(" .. idx .. " + " .. G .. ")")
@     local more, nx = inner, after
@     if chain and chain.nx2 then
@       more, nx = chain.more2(idx), chain.nx2(idx)
@     elseif chain then
@       more = chain.has_next == "1" and "1" or (inner .. " || " .. chain.has_next)
@       nx = inner .. " ? " .. after .. " : " .. chain.nxt
@     end
@     if type(n) ~= "number" then
$(ind)if ($(ng) > 0) {
@     else
$(ind){
@     end
@     if not chain then first_sums(ind .. "  ", G, ptr) end
@     if lf then
$(ind)  int carry = 0;        /* the group before wrote its first line... */
$(ind)  $(V.lf.svt) sprev = $(V.lf.szero); /* ...and left its last row's scale */
@     end
$(ind)  for (size_t $(idx) = 0; $(idx) < $(ng); $(idx) += $(G)) {
$(ind)    const int more = $(more);
$(ind)    const $(CT) *nx = $(nx);
@     if lf then
$(ind)    const int lastg = !($(inner));
@     end
@     for g = 0, G - 1 do
$(ind)    $(CT) *yr$(g) = $(ptr("(" .. idx .. " + " .. g .. ")"));
@       if not lf then
$(ind)    const $(CT) *xr$(g) = yr$(g);
@       end
@       if gkey then
$(ind)    KG_OPAQUE(xr$(g));
@       end
@       if pf then prefetch(ind .. "    ", "yr" .. g, pf) end
@     end
$(group_of(gkey or key, G))
$(ind)  }
$(ind)}
@   end
@   if G == 1 or type(n) ~= "number" or n % G ~= 0 then
$(ind)for (size_t $(idx) = $(from); $(idx) < $(type(n) == "number" and util.int(n) or n); $(idx)++) {
$(ind)  $(CT) *yr = $(ptr(idx));
$(ind)  const $(CT) *xr = yr;
@     if pf then prefetch(ind .. "  ", "yr", pf) end
$(row_of(key))
$(ind)}
@   end
@ end
@ -- Heads of up to 512 bytes (G > 1, gen/pack.lua) go G at a time, one
@ -- group ahead: the reduce -> sqrt chains, not memory, limit them.
@ -- 16-bit heads do so at every call length (with the next-token
@ -- prefetch, grouped measured 40 % faster than streaming in 2048-token
@ -- prefill on a Zen 5 core, run 11, and 35-45 % on a Zen 4 core, run
@ -- 12), calls over group_tokens tokens (gen/pack.lua) in
@ -- groups of G_long when a group of G would pass 1 KiB (512-byte heads
@ -- two at a time).  f32 heads carry half the arithmetic per byte:
@ -- calls over group_tokens tokens (either layout) stream them row by row.
@ -- Wider heads go head by head, streaming with the same prefetch (until
@ -- run 12 f32 ones asked for the head 4 KiB ahead in the q|k stream: the
@ -- same head of the next token into L2 measured 1.48 -> 0.97 x the
@ -- in-place pass for f32 head_dim 256 on a Zen 4 core).
@ -- Decode in pairs (pack.lua `pairs_ok`): a one-token call takes its
@ -- groups of 4 in order, Q's then K's, two a step, summing four groups
@ -- ahead; each step's first group starts the rs of the next two in one
@ -- vector (V.g4.rs8, whose sums are then a step old, so the longer chain
@ -- does not wait), each group takes its four from the pair (V.g4.pick).
@ -- Same bits per row as the steps below.  The line frame too where
@ -- pack.lua leaves `pairs_ok` set for it, its shared lines carried from
@ -- group to group within Q's loop and within K's.
@ local function decode_pairs(g)
@   local nq, nk = k.num_heads, k.num_kv_heads
@   local total = util.int(nq + nk)
@   -- the flat group f's first row (f < 4: the first groups, constants;
@   -- past the last group q, whose sums go unused)
@   local function first(f)
@     if f * g < nq then return "q + " .. util.int(f * g) .. " * " .. D end
@     if f * g < nq + nk then return "k + " .. util.int(f * g - nq) .. " * " .. D end
@     return "q + 0 * " .. D
@   end
@   -- the group whose first row is head `at` of the call's q|k sequence
@   -- (a C expression), when `at` < total
@   local function ahead(at)
@     return string.format("%s < %d ? q + (%s) * %s : k + (%s - %d) * %s", at, nq, at, D, at, nq, D)
@   end
  if (tokens == 1) {
    /* one token (decode): groups in pairs, sums four groups ahead, two
     * groups' rs in one vector (qk_norm.c.tpl decode_pairs) */
@   for f = 0, 3 do
@     first_sums("    ", g, function(r) return first(f) .. " + " .. r .. " * " .. D end, f > 0)
    $(V.g4.svt) s$(f) = snv;
@   end
    $(V.g4.rvt) pa = $(V.g4.rs8("s0", "s1", D, EPS)), pb = pa;
@   for _, L in ipairs({ { "q", nq, 0, "row_q" }, { "k", nk, nq, "row_k" } }) do
@     local x, n, base, key = L[1], L[2], L[3], L[4]
@     -- the position in the q|k sequence of this loop's head h + d
@     local function pos(d) return base == 0 and ("h + " .. d) or ("h + " .. util.int(base + d)) end
    {
@     if lf then
    int carry = 0;        /* the group before wrote its first line... */
    $(V.lf.svt) sprev = $(V.lf.szero); /* ...and left its last row's scale */
@     end
    for (size_t h = 0; h < $(util.int(n)); h += $(util.int(2 * g))) {
      $(V.g4.svt) s4 = snv, s5 = snv;
@     -- a loop of an odd number of groups (K's of 4 heads) ends on a lone
@     -- one: its partner's half of the step is skipped
@     local lone = n % (2 * g) ~= 0
@     for half = 0, 1 do
@       if half == 1 and lone then
      if (h + $(util.int(g)) < $(util.int(n))) {
@       else
      {
@       end
@       if half == 0 then
        if ($(pos(2 * g)) < $(total)) pb = $(V.g4.rs8("s2", "s3", D, EPS));
@       end
@       for r = 0, g - 1 do
        $(CT) *yr$(r) = $(x) + (h + $(util.int(half * g + r))) * $(D);
@         if not lf then
        const $(CT) *xr$(r) = yr$(r);
@         end
@         prefetch("        ", "yr" .. r, "0")
@       end
        const int more = $(pos(half * g + 4 * g)) < $(total);
        const $(CT) *nx = more ? $(ahead(pos(half * g + 4 * g))) : q;
        const $(V.g4.svt) ssv = s$(half);
        const $(V.g4.rvt) rq_b = $(V.g4.pick("pa", half == 1));
@       if lf then
@         -- this group the loop's last: only a step's second, or a lone first
@         local last = "!(h + " .. util.int((half + 1) * g) .. " < " .. util.int(n) .. ")"
        const int lastg = $((half == 1 or lone) and last or "0");
@       end
$(pairs_of(key))
        s$(4 + half) = snv;
      }
@     end
      s0 = s2; s1 = s3; s2 = s4; s3 = s5; pa = pb;
    }
    }
@   end
    return;
  }
@ end
@ -- rk: a suffix of the row keys of token-major calls streamed head by
@ -- head ("_reload": pack.lua's second bodies)
@ local function all_rows(g, rk)
@   rk = rk or ""
@   if k.layout == "token_major" then
@     local chain = chained(g)
@     local nq, nk = k.num_heads, k.num_kv_heads
@     local two = chain and ahead2_of(g)
@     if two and pairs_ok then decode_pairs(g) end
@     if two then
@       -- two groups ahead (rms_group.c.tpl, ahead2g): a step sums the
@       -- group two after its own in the call's sequence of groups (Q's,
@       -- then K's, then the next token's) and starts the next one's rs
  /* the first group's sums and rs, then the second group's sums; every
   * step sums the group two ahead, across loops and tokens */
@       first_sums("  ", g, function(i) return "q + " .. i .. " * " .. D end)
  $(V.g4.svt) ssc = snv;
  $(V.g4.rvt) rqc = $(V.g4.rs4("snv", D, EPS));
@       first_sums("  ", g, function(i)
@         if nq >= 2 * g then return "q + (" .. util.int(g) .. " + " .. i .. ") * " .. D end
@         return "k + " .. i .. " * " .. D
@       end, true)
@     elseif chain then
  /* the first group's sums; every step sums the next group, across loops */
@       first_sums("  ", g, function(i) return "q + " .. i .. " * " .. D end)
@     end
  /* token by token: its Q heads, then its K heads, one forward stream */
  for (size_t t = 0; t < tokens; t++) {
    const size_t pfq = t + 1 < tokens ? q_stride * sizeof(*q) : 0;
    const size_t pfk = t + 1 < tokens ? k_stride * sizeof(*k) : 0;
@     local cq, ck
@     if chain then
@       cq = { nxt = "k + t * k_stride", has_next = "1" }
@       ck = { nxt = "q + (t + 1 < tokens ? t + 1 : t) * q_stride", has_next = "t + 1 < tokens" }
@     end
@     if two then
@       -- the group two ahead of the one at head h of this loop (a loop of
@       -- n heads, then one of m at token tb, then this loop's next token),
@       -- and whether it exists: in this token while it falls in this loop
@       -- or in a second loop of the same token (tb "t"), else a next token
@       local tn = "(t + 1 < tokens ? t + 1 : t)"
@       local function two_ahead(c, a, sa, n, b, sb, m, tb)
@         local inside = tb == "t" and n + m or n
@         c.nx2 = function(h)
@           local f = "(" .. h .. " + " .. util.int(2 * g) .. ")"
@           return string.format("%s < %d ? %s + t * %s + %s * %s : %s - %d < %d ? %s + %s * %s + (%s - %d) * %s : %s + %s * %s + (%s - %d) * %s",
@             f, n, a, sa, f, D, f, n, m, b, tb, sb, f, n, D, a, tn, sa, f, n + m, D)
@         end
@         c.more2 = function(h) return h .. " + " .. util.int(2 * g) .. " < " .. util.int(inside) .. " || t + 1 < tokens" end
@       end
@       two_ahead(cq, "q", "q_stride", nq, "k", "k_stride", nk, "t")
@       two_ahead(ck, "k", "k_stride", nk, "q", "q_stride", nq, tn)
@     end
@     rows("    ", "h", k.num_heads, function(i) return "q + t * q_stride + " .. i .. " * " .. D end, "row_q" .. rk, "pfq", g, cq)
@     rows("    ", "h", k.num_kv_heads, function(i) return "k + t * k_stride + " .. i .. " * " .. D end, "row_k" .. rk, "pfk", g, ck)
  }
@   else
@     -- tables marked head_major_groups (AVX2, AVX-512): calls of fewer
@     -- tokens than a group (decode) take each token's heads g at a time
@     -- across heads, one group ahead, as token-major calls do, instead of a
@     -- loop of at most g - 1 rows per head whose reduce -> sqrt chains run
@     -- one by one.  Not in the line frame (lf): its groups read their rows
@     -- as one block of lines, which heads a stride apart are not.
@     local across = g > 1 and V.head_major_groups and not lf
@     if across then
  if (tokens < $(util.int(g))) {
    /* few tokens: each token's heads in groups across heads */
    for (size_t t = 0; t < tokens; t++) {
@       rows("      ", "h", k.num_heads, function(i) return "q + t * " .. D .. " + " .. i .. " * q_stride" end, "row_q", false, g,
@         nil, "row_q_across")
@       rows("      ", "h", k.num_kv_heads, function(i) return "k + t * " .. D .. " + " .. i .. " * k_stride" end, "row_k", false,
@         g, nil, "row_k_across")
    }
    return;
  }
@     end
@     -- each head's rows ask for the lines hm_pf_bytes (gen/pack.lua) ahead
@     -- in its contiguous stream (into the next head's past its end); tables
@     -- with hm_pf_zen5 (x86) ask that far instead where the runtime says so
@     -- (kg_cpu_prefetch_zen5: AMD Zen 5)
@     local hpf = hm_pf_bytes and "pfh" or false
@     local far = hpf and V.hm_pf_zen5 and V.hm_pf_zen5[k.dtype == "f32" and "f32" or "half"]
@     if far and far ~= hm_pf_bytes then
  const size_t pfh = kg_cpu_prefetch_zen5() ? $(util.int(far)) : $(util.int(hm_pf_bytes)); /* bytes ahead in the head's rows */
@     elseif hpf then
  const size_t pfh = $(util.int(hm_pf_bytes)); /* bytes ahead in the head's rows */
@     end
  /* head by head: each head's rows are contiguous */
  for (size_t h = 0; h < $(util.int(k.num_heads)); h++) {
@     rows("    ", "t", "tokens", function(i) return "q + h * q_stride + " .. i .. " * " .. D end, "row_q", hpf, g)
  }
  for (size_t h = 0; h < $(util.int(k.num_kv_heads)); h++) {
@     rows("    ", "t", "tokens", function(i) return "k + h * k_stride + " .. i .. " * " .. D end, "row_k", hpf, g)
  }
@   end
@ end
@ if group_tokens then
  if (tokens <= $(util.int(group_tokens))) { /* <= $(util.int(math.floor(group_bytes / 1024))) KiB of heads: groups of $(G) */
@   all_rows(G)
    return;
  }
@   if reload and G_long == 1 then
@     -- f32 heads held in registers streamed from DRAM where holding them
@     -- cost bandwidth (isa/avx512.lua stream_reload): the same rows with
@     -- each vector loaded twice (gen/pack.lua), from KG_NT_BYTES of heads
@     local tb = (k.num_heads + k.num_kv_heads) * row_bytes
  if (tokens >= (KG_NT_BYTES + $(util.int(tb - 1))) / $(util.int(tb)) && kg_cpu_stream_reload()) {
@     all_rows(1, "_reload")
    return;
  }
@   end
@   if pipe_code then
  if (kg_cpu_qk_pipe()) $(pipe_code(pl1))
@   end
@   all_rows(G_long)
@ else
@   all_rows(G)
@ end
}
