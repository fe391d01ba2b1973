/* $(banner) */
/* $(spec.name)_dispatch.c: the unsuffixed entry points of pack $(spec.name).
 * Each resolves its variant once, on first call, from the CPU and KGEN_ISA;
 * the pointer is published atomically, so concurrent first calls are safe
 * (they resolve to the same variant). */
#include "$(spec.name).h"

@ for _, k in ipairs(spec.kernels) do
@   local base = spec.name .. "_" .. k.name
@   local sig, call, fty = sigs(k)
typedef void (*$(base)_fn)($(fty));

@   local has_avx2 = false
@   for _, i in ipairs(k.dispatch) do has_avx2 = has_avx2 or i == "avx2" end
/* Why: the first variant of the pack's list (best first) that the CPU has
@   if k.dtype == "f16" and has_avx2 then
 * and KGEN_ISA allows; scalar is always allowed.  f16: not AVX-512 where
 * kg_cpu_f16_avx2() says its AVX2 variant is faster. */
@   else
 * and KGEN_ISA allows; scalar is always allowed. */
@   end
static $(base)_fn $(base)_pick(int *isa)
{
  const int cap = kg_dispatch_cap();
@   for _, isa in ipairs(k.dispatch) do
@     local g = guards[isa]
@     if g then
#if $(g)
@     end
@     local f16 = ""
@     if isa == "avx512" and k.dtype == "f16" and has_avx2 then f16 = " && !kg_cpu_f16_avx2()" end
  if (kg_dispatch_allows(KG_ISA_$(isa:upper()), cap)$(f16)) {
    *isa = KG_ISA_$(isa:upper());
    return $(base)_$(isa);
  }
@     if g then
#endif
@     end
@   end
  *isa = KG_ISA_SCALAR;
  return $(base)_scalar;
}

static void $(base)_first($(sig));
static $(base)_fn $(base)_impl = $(base)_first;
static int $(base)_level = -1;

/* Why: picks and publishes the variant; runs once per process (or once
 * per racing thread, which all pick the same). */
static $(base)_fn $(base)_resolve(void)
{
  int isa;
  $(base)_fn f = $(base)_pick(&isa);
  __atomic_store_n(&$(base)_level, isa, __ATOMIC_RELAXED);
  __atomic_store_n(&$(base)_impl, f, __ATOMIC_RELEASE);
  return f;
}

static void $(base)_first($(sig))
{
  $(base)_resolve()($(call));
}

$(proto(k, nil))
{
  __atomic_load_n(&$(base)_impl, __ATOMIC_ACQUIRE)($(call));
}

const char *$(base)_isa(void)
{
  if (__atomic_load_n(&$(base)_level, __ATOMIC_RELAXED) < 0) $(base)_resolve();
  return kg_cpu_isa_name(__atomic_load_n(&$(base)_level, __ATOMIC_RELAXED));
}

@ end
/* Type-erased forwarders for the variant table (void * data pointers). */
@ for _, e in ipairs(entries) do
@   if e.guard then
#if $(e.guard)
@   end
$(e.wrapper)
@   if e.guard then
#endif
@   end
@ end

const kg_variant $(spec.name)_variants[] = {
@ for _, e in ipairs(entries) do
@   if e.guard then
#if $(e.guard)
@   end
  $(e.row),
@   if e.guard then
#endif
@   end
@ end
};
const size_t $(spec.name)_num_variants =
    sizeof($(spec.name)_variants) / sizeof($(spec.name)_variants[0]);
