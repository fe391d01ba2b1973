-- kernels/qk_norm.lua: the QK-norm op plan.  Per-head RMSNorm of Q and K in
-- place; one weight vector for all Q heads, one for all K heads.
return {
  op = "qk_norm",
  live = 3,                       -- x, q_w and k_w kept in registers
  dot_twin = true,                -- AVX512_BF16 sums where a table has them
  frame = "qk_norm.c.tpl", row = "rms_row.c.tpl", slow = "rms_slow.c.tpl",
  group = "rms_group.c.tpl",      -- several heads per step (short rows)
  lines = true,                   -- heads off line alignment: kernels/lines.lua
  params = {
    { "size_t", "tokens" }, { "T *", "q" }, { "size_t", "q_stride" },
    { "T *", "k" }, { "size_t", "k_stride" }, { "const T *", "q_w" },
    { "const T *", "k_w" },
  },
  row_env = { xr = "xr", yr = "yr", rstd_out = "NULL", rstd_store = nil },
  -- the row is rendered once per weight set
  rows = { { key = "row_q", w = "q_w", wv = "qv" }, { key = "row_k", w = "k_w", wv = "kv" } },
  layout_doc = {
    token_major = "element (t,h,d) at x[t*stride + h*head_dim + d]",
    head_major = "element (t,h,d) at x[h*stride + t*head_dim + d]",
  },
}
