@ -- QK-norm: per-head RMSNorm of Q and K in place, one launch for both.
@ -- Row r is (token r / NHK, head r % NHK): Q heads first, then K heads.
@ local NH, NKV = util.int(k.num_heads), util.int(k.num_kv_heads)
@ local NHK = util.int(k.num_heads + k.num_kv_heads)
@ local function at(stride)
@   if k.layout == "token_major" then return "tok * " .. stride .. " + (size_t)h * " .. D end
@   return "(size_t)h * " .. stride .. " + tok * " .. D
@ end
@ for _, L in ipairs(P.kernels) do
@   if not L.twin then
$(slow(L))

@   end
/* $(sym), $(L.name) layout: $(P.warp and ((L.S > 1 and ("one warp per " .. util.int(L.R * L.S) .. " (token, head) rows side by side in " .. util.int(L.S) .. " groups of " .. util.int(L.L) .. " lanes, ") or ("one warp per " .. util.int(L.R) .. " (token, head) rows, ")) .. util.int(P.WPB) .. " warps per block") or ("one block of " .. util.int(L.NT) .. " threads per (token, head)")),
 * $(util.int(L.C)) x $(util.int(L.VE)) $(T) per thread; $(NH) Q heads, $(NKV) K heads of $(D), $(k.layout), eps $(EPS), rounding "$(k.rounding)". */
static __global__ void __launch_bounds__($(util.int(L.NT)), $(util.int(L.MINB))) $(sym)_$(L.name)(size_t tokens,
    $(S) *q, size_t q_stride, $(S) *k, size_t k_stride, const $(S) *q_w, const $(S) *k_w)
{
  const size_t rows = tokens * $(NHK);
@   local R = util.int(L.R)
@   -- row ri of a row group: r0 + RI (rows side by side: group `sub` of L lanes)
@   local RI = L.S > 1 and ("ri * " .. util.int(L.S) .. " + sub") or "ri"
@   if P.warp then
  const int t = threadIdx.x & $(util.int(L.L - 1))$(L.S > 1 and (", sub = (threadIdx.x & 31) / " .. util.int(L.L)) or "");
  for (size_t r0 = ((size_t)blockIdx.x * $(util.int(P.WPB)) + (threadIdx.x >> 5)) * $(util.int(L.R * L.S)); r0 < rows;
       r0 += (size_t)gridDim.x * $(util.int(P.WPB * L.R * L.S))) {
@   else
  __shared__ float kg_red[$(util.int(L.NW))];
  __shared__ double kg_redd[$(util.int(L.NW))];
  const int t = threadIdx.x;
  for (size_t r0 = blockIdx.x; r0 < rows; r0 += gridDim.x) {
    if (r0 != blockIdx.x) __syncthreads(); /* reduction buffers are reused */
@   end
    $(S) *yr[$(R)];
    const $(S) *xr[$(R)], *wr[$(R)];
    bool ok[$(R)];
#pragma unroll
    for (int ri = 0; ri < $(R); ri++) {
      ok[ri] = r0 + $(RI) < rows;
      const size_t r = ok[ri] ? r0 + $(RI) : r0;
      const size_t tok = r / $(NHK);
      int h = (int)(r - tok * $(NHK));
      const bool isq = h < $(NH);
      if (!isq) h -= $(NH);
      yr[ri] = isq ? q + $(at("q_stride")) : k + $(at("k_stride"));
      xr[ri] = yr[ri];
      wr[ri] = isq ? q_w : k_w;
    }
$(row(L))
  }
}

@ end
/* $(sym): QK-norm on the GPU, in place (device pointers; q and k may be
 * views into one fused QKV buffer).  Vector layout when every pointer and
 * stride is aligned to $(#P.paths > 2 and (util.int(P.VB) .. " bytes (rows side by side) or " .. util.int(P.paths[2].VB)) or util.int(P.VB)) bytes, element layout otherwise. */
$(proto)
{
  if (tokens == 0) return 0;
  void *args[] = { &tokens, &q, &q_stride, &k, &k_stride, &q_w, &k_w };
$(launch({ "q", "k", "q_w", "k_w" }, { "q_stride", "k_stride" }, "tokens * " .. NHK))
}
