-- kernels/layernorm.lua: the LayerNorm op plan.
-- y = gamma * (x - mean) * rstd + beta, rstd = 1/sqrt(var + eps) per row.
return {
  op = "layernorm",
  live = 3,                       -- x, gamma and beta kept in registers
  nt_stores = true,               -- out of place: may bypass the caches
  walign = true,                  -- misaligned weights copied once per call (pack.lua)
  fused_sums = true,              -- streamed rows: output inside the next row's sums (ln_row.c.tpl)
  frame_rows = true,              -- and stream x and y's shared line frame (ln_row.c.tpl)
  staged_w = { { w = "gamma" }, { w = "beta" } }, -- 16-bit: staged once per call (pack.lua)
  frame = "layernorm.c.tpl", row = "ln_row.c.tpl", slow = "ln_slow.c.tpl",
  params = {
    { "size_t", "rows" }, { "const T *", "x" }, { "size_t", "x_stride" },
    { "const T *", "gamma" }, { "const T *", "beta" }, { "T *", "y" },
    { "size_t", "y_stride" }, { "float *", "mean" }, { "float *", "rstd" },
  },
  row_env = { xr = "xr", yr = "yr", mean_out = "mean ? mean + r : NULL",
              rstd_out = "rstd ? rstd + r : NULL" },
}
