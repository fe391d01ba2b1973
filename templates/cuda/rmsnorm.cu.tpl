@ -- RMSNorm: kernels (one per row layout of the plan) and the host wrapper.
@ for _, L in ipairs(P.kernels) do
@   if not L.twin then
$(slow(L))

@   end
/* $(sym), $(L.name) layout: $(P.warp and ((L.S > 1 and ("one warp per " .. util.int(L.R * L.S) .. " rows side by side in " .. util.int(L.S) .. " groups of " .. util.int(L.L) .. " lanes, ") or ("one warp per " .. util.int(L.R) .. " rows, ")) .. util.int(P.WPB) .. " warps per block") or ("one block of " .. util.int(L.NT) .. " threads per row")),
 * $(util.int(L.C)) x $(util.int(L.VE)) $(T) per thread; y = x * rstd * w, $(D) wide, eps $(EPS), rounding "$(k.rounding)". */
static __global__ void __launch_bounds__($(util.int(L.NT)), $(util.int(L.MINB))) $(sym)_$(L.name)(size_t rows,
    const $(S) *x, size_t x_stride, const $(S) *w, $(S) *y, size_t y_stride, float *rstd)
{
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
    const $(S) *xr[$(R)], *wr[$(R)];
    $(S) *yr[$(R)];
    float *rstd_out[$(R)];
    bool ok[$(R)];
#pragma unroll
    for (int ri = 0; ri < $(R); ri++) {
      ok[ri] = r0 + $(RI) < rows;
      const size_t r = ok[ri] ? r0 + $(RI) : r0;
      xr[ri] = x + r * x_stride;
      yr[ri] = y + r * y_stride;
      wr[ri] = w;
      rstd_out[ri] = rstd ? rstd + r : NULL;
    }
$(row(L))
  }
}

@ end
/* $(sym): RMSNorm of `rows` rows of $(D) $(T) on the GPU (device pointers;
 * y may equal x; rstd may be NULL).  Vector layout when every pointer and
 * stride is aligned to $(#P.paths > 2 and (util.int(P.VB) .. " bytes (rows side by side) or " .. util.int(P.paths[2].VB)) or util.int(P.VB)) bytes, element layout otherwise. */
$(proto)
{
  if (rows == 0) return 0;
  void *args[] = { &rows, &x, &x_stride, &w, &y, &y_stride, &rstd };
$(launch({ "x", "y", "w" }, { "x_stride", "y_stride" }, "rows"))
}
