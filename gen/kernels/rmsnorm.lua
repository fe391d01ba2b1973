-- kernels/rmsnorm.lua: the RMSNorm op plan.  y = x * rstd * (w + offset),
-- rstd = 1/sqrt(mean(x^2) + eps) per row.
return {
  op = "rmsnorm",
  live = 2,                       -- x and w kept in registers
  nt_stores = true,               -- out of place: may bypass the caches
  walign = true,                  -- misaligned weights copied once per call (pack.lua)
  fuse_rows = true,               -- wide rows: next row's sum in this row's pass 2
  frame_rows = true,              -- streamed: x and y's shared line frame (rms_row.c.tpl)
  dot_twin = true,                -- AVX512_BF16 sums where a table has them
  lines_rows = true,              -- rows off line alignment: kernels/lines.lua
  frame = "rmsnorm.c.tpl", row = "rms_row.c.tpl", slow = "rms_slow.c.tpl",
  -- the C parameter list; "T" is the storage type
  params = {
    { "size_t", "rows" }, { "const T *", "x" }, { "size_t", "x_stride" },
    { "const T *", "w" }, { "T *", "y" }, { "size_t", "y_stride" },
    { "float *", "rstd" },
  },
  -- names the row template uses
  row_env = { xr = "xr", yr = "yr", w = "w", rstd_out = "rstd ? rstd + r : NULL",
              rstd_store = "if (rstd) rstd[r]" },
}
