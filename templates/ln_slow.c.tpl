/* Rare path of $(sym): the row's squared deviations are not finite in f32
 * (values near the f32 limit, or a NaN/Inf in the row).  Recompute in
 * double, where any finite f32 row is representable; a non-finite input
 * gives a NaN row. */
static KG_NOINLINE void $(slow)(const $(CT) *xr, $(CT) *yr, const $(CT) *gamma,
    const $(CT) *beta, float *mean_out, float *rstd_out)
{
  double s = 0.0;
  for (size_t i = 0; i < $(D); i++) s += (double)$(S.load(T, "xr", "i"));
  const double mu = s / $(D);
  double sq = 0.0;
  for (size_t i = 0; i < $(D); i++) {
    const double e = (double)$(S.load(T, "xr", "i")) - mu;
    sq += e * e;
  }
  if (!(sq <= 1.79e308)) {
    for (size_t i = 0; i < $(D); i++) {
      $(S.store(T, "yr", "i", 1, "KG_NAN"))
    }
    if (mean_out) *mean_out = KG_NAN;
    if (rstd_out) *rstd_out = KG_NAN;
    return;
  }
  const double rs = 1.0 / sqrt(sq / $(D) + (double)$(EPS));
  if (mean_out) *mean_out = (float)mu;
  if (rstd_out) *rstd_out = (float)rs;
  for (size_t i = 0; i < $(D); i++) {
    const double v = ((double)$(S.load(T, "xr", "i")) - mu) * rs;
    $(S.store(T, "yr", "i", 1, "(float)(v * (double)" .. S.load(T, "gamma", "i") .. " + (double)" .. S.load(T, "beta", "i") .. ")"))
  }
}
