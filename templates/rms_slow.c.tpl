/* Rare path of $(sym): the row's sum of squares is not finite in f32 (huge
 * values, or a NaN/Inf in the row).  Recompute in double, where the squares
 * of any finite f32 cannot overflow; a non-finite input gives a NaN row. */
static KG_NOINLINE void $(slow)(const $(CT) *xr, $(CT) *yr, const $(CT) *w, float *rstd_out)
{
  double ss = 0.0;
  for (size_t i = 0; i < $(D); i++) {
    const double v = (double)$(S.load(T, "xr", "i"));
    ss += v * v;
  }
  if (!(ss <= 1.79e308)) {
    for (size_t i = 0; i < $(D); i++) {
      $(S.store(T, "yr", "i", 1, "KG_NAN"))
    }
    if (rstd_out) *rstd_out = KG_NAN;
    return;
  }
  const double rs = 1.0 / sqrt(ss / $(D) + (double)$(EPS));
  if (rstd_out) *rstd_out = (float)rs;
  for (size_t i = 0; i < $(D); i++) {
@ if k.rounding == "hf" then
    const float h = $(S.round(T, "(float)((double)" .. S.load(T, "xr", "i") .. " * rs)"));
    $(S.store(T, "yr", "i", 1, "h * (" .. S.load(T, "w", "i") .. " + " .. util.f32(k.weight_offset) .. ")"))
@ else
    const double wi = (double)$(S.load(T, "w", "i")) + $(util.f64(k.weight_offset));
    $(S.store(T, "yr", "i", 1, "(float)((double)" .. S.load(T, "xr", "i") .. " * rs * wi)"))
@ end
  }
}
