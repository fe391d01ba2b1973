@ -- The host wrapper's kernel choice and launch (after `args` is set):
@ -- the first vector layout whose `aligned` holds, else the element layout; each
@ -- one's twin for few rows (gen/cuda.lua) when the call has at most its
@ -- bound (KG_CU_FEW_ROWS or KG_CU_FEW_WIDE_ROWS) rows.
@ local function go(L, indent)
$(indent)return (int)cudaLaunchKernel($(sym)_$(L.name), dim3(kg_cu_grid($(rows), $(util.int(L.RPB)))),
$(indent)                             dim3($(util.int(L.NT))), args, 0, (cudaStream_t)stream);
@ end
@ local function pick(L, indent)
@   if L.few then
$(indent)if ($(rows) <= $(L.few.bound))
@     go(L.few, indent .. "  ")
@   end
@   go(L, indent)
@ end
@ for i = 1, #P.paths - 1 do
  if ($(aligned[i])) {
@   pick(P.paths[i], "    ")
  }
@ end
@ pick(P.paths[#P.paths], "  ")
