-- kernels/qk_norm.lua: the QK-norm op plan.  Per-head RMSNorm of Q and K in
-- place; one weight vector for all Q heads, one for all K heads.
return {
  op = "qk_norm",
  live = 2,
  frame = "qk_norm.c.tpl", row = "rms_row.c.tpl", slow = "rms_slow.c.tpl",
  params = {
    { "size_t", "tokens" }, { "T *", "q" }, { "size_t", "q_stride" },
    { "T *", "k" }, { "size_t", "k_stride" }, { "const T *", "q_w" },
    { "const T *", "k_w" },
  },
  row_env = { xr = "xr", yr = "yr", w = "w", rstd_out = "NULL", rstd_store = nil },
  layout_doc = {
    token_major = "element (t,h,d) at x[t*stride + h*head_dim + d]",
    head_major = "element (t,h,d) at x[h*stride + t*head_dim + d]",
  },
}
