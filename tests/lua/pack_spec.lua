-- pack_spec.lua: the generated pack: deterministic bytes (run to run and
-- LuaJIT against Lua 5.4), a DO-NOT-EDIT first line in every file.
local S = require("tests.lua.support")
local spec = require("spec")
local util = require("util")

-- every op, dtype, layout and rounding, odd dims, a weight offset
local WIDE = [[
return {
  name = "wide", dtype = "f16",
  kernels = {
    { op = "rmsnorm", name = "r32", dim = 4096, eps = 1e-6, dtype = "f32" },
    { op = "rmsnorm", name = "rhf", dim = 33, dtype = "bf16", rounding = "hf", weight_offset = 1 },
    { op = "qk_norm", name = "qt", head_dim = 128, num_heads = 32, num_kv_heads = 8 },
    { op = "qk_norm", name = "qh", head_dim = 24, num_heads = 6, num_kv_heads = 2, layout = "head_major" },
    { op = "layernorm", name = "ln", dim = 1023, eps = 1e-5, dtype = "bf16" },
  },
}
]]

local function gen(spec_path, out, lua)
  local status, _, err = S.kgen({ spec_path, "-o", out }, { lua = lua })
  assert.equals(0, status, err)
  assert.equals("", err)
end

describe("generated packs", function()
  local dir
  before_each(function()
    dir = S.tmpdir()
    S.write(dir .. "/wide.lua", WIDE)
  end)
  after_each(function() S.rmtree(dir) end)

  it("are byte-identical from run to run", function()
    for _, p in ipairs({ "specs/qwen3-8b.lua", dir .. "/wide.lua" }) do
      gen(p, dir .. "/a")
      gen(p, dir .. "/b")
    end
    local a, b = S.snapshot(dir .. "/a"), S.snapshot(dir .. "/b")
    assert.is_truthy(next(a))
    assert.same(a, b)
  end)

  it("are byte-identical from LuaJIT and from Lua 5.4", function()
    for _, p in ipairs({ "specs/qwen3-8b.lua", dir .. "/wide.lua" }) do
      gen(p, dir .. "/jit", "luajit")
      gen(p, dir .. "/54", "lua5.4")
    end
    assert.same(S.snapshot(dir .. "/jit"), S.snapshot(dir .. "/54"))
  end)

  it("do not depend on the order of keys in the spec", function()
    S.write(dir .. "/w2.lua", [[
return {
  kernels = {
    { name = "r32", eps = 1e-6, dim = 4096, op = "rmsnorm", dtype = "f32" },
    { weight_offset = 1, rounding = "hf", dtype = "bf16", dim = 33, name = "rhf", op = "rmsnorm" },
    { num_kv_heads = 8, num_heads = 32, head_dim = 128, name = "qt", op = "qk_norm" },
    { layout = "head_major", num_kv_heads = 2, num_heads = 6, head_dim = 24, name = "qh", op = "qk_norm" },
    { dtype = "bf16", eps = 1e-5, dim = 1023, name = "ln", op = "layernorm" },
  },
  dtype = "f16", name = "wide",
}
]])
    gen(dir .. "/wide.lua", dir .. "/a")
    gen(dir .. "/w2.lua", dir .. "/b")
    assert.same(S.snapshot(dir .. "/a"), S.snapshot(dir .. "/b"))
  end)

  it("begin every file with a DO-NOT-EDIT line naming the generator version", function()
    gen(dir .. "/wide.lua", dir)
    local s = spec.load_file(dir .. "/wide.lua")
    local files = S.listdir(dir .. "/wide")
    assert.is_truthy(#files >= 5)
    local banners = 0
    for _, f in ipairs(files) do
      local text = S.read(dir .. "/wide/" .. f)
      local first = text:match("^[^\n]*")
      if f:match("%.json$") then
        -- JSON has no comments: the first key holds the line
        local second = text:match("^{\n%s*([^\n]*)")
        assert.is_truthy(second and second:match('^"do_not_edit":%s*"DO NOT EDIT: '), f .. ": " .. tostring(second))
        assert.is_truthy(second:find("kgen " .. util.VERSION, 1, true), f)
      else
        -- after the comment leader of the file's language (/* # <!-- //)
        assert.matches("^[/%*#<!%- ]*DO NOT EDIT: ", first, f)
        assert.is_truthy(first:find("kgen " .. util.VERSION, 1, true), f)
      end
      -- files rendered from the spec carry its canonical hash (runtime copies do not depend on it)
      if text:find("from template", 1, true) then
        banners = banners + 1
        assert.is_truthy(text:match("^[^\n]*\n?[^\n]*"):find(s.hash, 1, true), f)
      end
    end
    assert.is_truthy(banners >= 4)
  end)

  it("hold the header, one file per CPU ISA, the dispatcher and the manifest", function()
    gen(dir .. "/wide.lua", dir)
    local s = spec.load_file(dir .. "/wide.lua")
    for _, f in ipairs({ "wide.h", "wide_dispatch.c", "manifest.json" }) do
      assert.is_truthy(S.exists(dir .. "/wide/" .. f), f)
    end
    for _, isa in ipairs(s.isa) do
      if isa ~= "cuda" then assert.is_truthy(S.exists(dir .. "/wide/wide_" .. isa .. ".c"), isa) end
    end
    -- nothing but the pack (no temp folders) is left in the output folder
    local left = S.listdir(dir)
    table.sort(left)
    assert.same({ "wide", "wide.lua" }, left)
  end)

  it("bake every number of the spec into the header", function()
    gen(dir .. "/wide.lua", dir)
    local h = S.read(dir .. "/wide/wide.h")
    assert.is_truthy(h:find("#define WIDE_R32_DIM 4096", 1, true))
    assert.is_truthy(h:find("#define WIDE_QT_NUM_KV_HEADS 8", 1, true))
    assert.is_truthy(h:find("#define WIDE_LN_DIM 1023", 1, true))
    assert.is_truthy(h:find("#define WIDE_LN_EPS 1e-05f", 1, true))
  end)

  -- Where text asks for the line `off` bytes into a row's prefetch window
  -- (qk_norm.c.tpl: the requests of row ptr, pf bytes ahead, from one
  -- opaque base pointer) with hint `hint`, searching from `from`; nil if
  -- it does not.
  local function req(text, ptr, pf, off, hint, from)
    local base = text:find("const char *pfb = (const char *)" .. ptr .. " + " .. pf .. ";\n", from or 1, true)
    if not base then return nil end
    local close = text:find("\n%s*}\n", base) or #text
    local at = text:find("__builtin_prefetch(pfb + " .. off .. ", 0, " .. hint .. ");", base, true)
    if at and at < close then return at end
    return req(text, ptr, pf, off, hint, close)
  end

  -- the body of one generated function, up to the next function's comment
  local function body(src, name)
    local i = src:find("void " .. name .. "(", 1, true)
    assert.is_truthy(i, name)
    local j = src:find("\n/%*", i) or #src
    return src:sub(i, j)
  end

  it("use the even/odd bf16 table on AVX-512 and group 16-bit QK-norm heads", function()
    gen(dir .. "/wide.lua", dir)
    local c = S.read(dir .. "/wide/wide_avx512.c")
    -- bf16 rows: one 64-byte load split into even/odd f32, packed on store
    local rhf = body(c, "wide_rhf_avx512")
    assert.is_truthy(rhf:find("kgi_v2_ldm(", 1, true))
    assert.is_truthy(rhf:find("kgi_v2_pack(", 1, true))
    assert.is_falsy(rhf:find("kgi_avx512_bf16_to_ps(", 1, true))
    assert.is_truthy(body(c, "wide_ln_avx512"):find("kgi_v2_ld(", 1, true))
    -- f32 and f16 rows keep the 16-lane table
    assert.is_falsy(body(c, "wide_r32_avx512"):find("kgi_v2", 1, true))
    assert.is_falsy(body(c, "wide_qt_avx512"):find("kgi_v2", 1, true))
    -- f16 QK-norm, 32 + 8 heads: four heads per step; 6 + 2 head-major
    -- heads: groups over tokens plus a remainder loop
    assert.is_truthy(body(c, "wide_qt_avx512"):find("h += 4", 1, true))
    assert.is_truthy(body(c, "wide_qh_avx512"):find("(tokens) / 4 * 4", 1, true))
    -- the scalar floor never groups
    assert.is_falsy(body(S.read(dir .. "/wide/wide_scalar.c"), "wide_qt_scalar"):find("yr3", 1, true))
  end)

  it("use the even/odd bf16 table on AVX2 too, with scalar tails", function()
    S.write(dir .. "/a2.lua", [[
return { name = "a2", isa = { "scalar", "avx2" }, kernels = {
  { op = "rmsnorm", name = "rb", dim = 1000, dtype = "bf16" },
  { op = "rmsnorm", name = "rh", dim = 64, dtype = "bf16", rounding = "hf" },
  { op = "rmsnorm", name = "rf", dim = 1000, dtype = "f16" },
  { op = "layernorm", name = "lb", dim = 40, dtype = "bf16" },
} }
]])
    gen(dir .. "/a2.lua", dir)
    local c = S.read(dir .. "/a2/a2_avx2.c")
    -- 16 bf16 per 32-byte load split into even/odd f32; "single" stores
    -- round ties away, "hf" to nearest even; no 8-wide widening left
    local rb, rh = body(c, "a2_rb_avx2"), body(c, "a2_rh_avx2")
    assert.is_truthy(rb:find("kgi_a2_ld(xr + i + 48)", 1, true))
    assert.is_truthy(rb:find("kgi_a2_pack_ta(", 1, true))
    assert.is_truthy(rh:find("kgi_a2_pack(", 1, true))
    assert.is_falsy(rb:find("kgi_avx2_load_bf16(", 1, true))
    -- 1000 = 62 x 16 + 8: the last 8 elements go through the scalar table
    assert.is_truthy(rb:find("kg_bf16_to_f32(xr[999])", 1, true))
    -- weights staged once per call, full blocks only
    assert.is_truthy(rb:find("float ws_w[992] __attribute__((aligned(32)));", 1, true))
    -- LayerNorm's mean in double lanes of the pair; f16 keeps F16C
    assert.is_truthy(body(c, "a2_lb_avx2"):find("kgi_aw2_", 1, true))
    assert.is_falsy(body(c, "a2_rf_avx2"):find("kgi_a2", 1, true))
  end)

  it("group AVX2 QK-norm heads of up to 1 KiB with the streamed form's accumulators", function()
    S.write(dir .. "/ag.lua", [[
return { name = "ag", isa = { "scalar", "avx2" }, kernels = {
  { op = "qk_norm", name = "b128", head_dim = 128, num_heads = 32, num_kv_heads = 8, dtype = "bf16" },
  { op = "qk_norm", name = "f128", head_dim = 128, num_heads = 32, num_kv_heads = 8, dtype = "f32" },
  { op = "qk_norm", name = "f256", head_dim = 256, num_heads = 32, num_kv_heads = 8, dtype = "f32" },
} }
]])
    gen(dir .. "/ag.lua", dir)
    local c = S.read(dir .. "/ag/ag_avx2.c")
    -- 16 ymm registers stream a 128-wide head (no register-resident row),
    -- yet its heads go four per step, one group ahead, up to 256 KiB of
    -- heads, and in pairs (512 bytes: long_group_bytes) beyond
    local b = body(c, "ag_b128_avx2")
    local long = b:find("    return;\n  }\n", b:find("if (tokens <= 12) {", 1, true), true)
    assert.is_truthy(long)
    assert.is_truthy(b:sub(1, long):find("h += 4", 1, true))
    assert.is_truthy(b:find("if (more) {", 1, true))
    assert.is_truthy(b:sub(long):find("h += 2", 1, true))
    assert.is_falsy(b:sub(long):find("h += 4", 1, true))
    -- the group's sums: 8 vectors unrolled into 4 accumulators, chunk j
    -- into accumulator (j - 1) % 4 + 1 as in the streamed loop (same bits)
    assert.is_truthy(b:find("tn4 = kgi_a2_fma(v8, v8, tn4);", 1, true))
    assert.is_truthy(b:find("for (size_t i = 0; i < 128; i += 64) {", 1, true))
    -- the four heads' sums finish together, rs in one vector, one test
    assert.is_truthy(b:find("snv = kgi_avx2_hsum4(hv0, hv1, hv2, hv3);", 1, true))
    assert.is_truthy(b:find("const __m256 rq = kgi_avx2_rs4(ssv, 128, (double)1e-06f);\n      float rq_m[4] "
      .. "__attribute__((aligned(16))); _mm_store_ps(rq_m, _mm256_castps256_ps128(rq)); KG_IN_MEMORY(rq_m);", 1, true))
    -- each head's rs broadcast from that stack copy, not permuted out of rq
    assert.is_truthy(b:find("kgi_a2_dup(_mm256_set1_ps(rq_m[3]))", 1, true))
    assert.is_falsy(b:find("_mm256_permutevar8x32_ps(rq, ", 1, true))
    assert.is_truthy(b:find("_mm256_movemask_pd(_mm256_cmp_pd(ssv, ", 1, true))
    -- f32: grouped up to 2 MiB of heads (group_f32_bytes; 256 KiB
    -- elsewhere), streamed beyond; 1 KiB heads too (group_row_bytes),
    -- where 512 bytes is the limit elsewhere
    local f = body(c, "ag_f128_avx2")
    assert.is_truthy(f:find("if (tokens <= 102) {", 1, true))
    assert.is_truthy(f:find("h += 4", 1, true))
    local f2 = body(c, "ag_f256_avx2")
    local long2 = f2:find("    return;\n  }\n", f2:find("if (tokens <= 51) {", 1, true), true)
    assert.is_truthy(long2)
    assert.is_truthy(f2:sub(1, long2):find("h += 4", 1, true))
    assert.is_falsy(f2:sub(long2):find("h += 4", 1, true))
  end)

  it("stage 16-bit weights once per call, fuse wide rows and round bf16 'single' ties away", function()
    S.write(dir .. "/st.lua", [[
return { name = "st", dtype = "bf16", isa = { "scalar", "avx512" }, kernels = {
  { op = "rmsnorm", name = "rs", dim = 1000, weight_offset = 1 },
  { op = "rmsnorm", name = "rh", dim = 1000, rounding = "hf" },
  { op = "rmsnorm", name = "big", dim = 4096 },
  { op = "rmsnorm", name = "huge", dim = 8192 },
  { op = "qk_norm", name = "qk", head_dim = 128, num_heads = 8, num_kv_heads = 2 },
} }
]])
    gen(dir .. "/st.lua", dir)
    local c = S.read(dir .. "/st/st_avx512.c")
    local rs, rh = body(c, "st_rs_avx512"), body(c, "st_rh_avx512")
    -- weights split once into a stack array (offset added there), loaded per row
    local tail = "kgi_v2_stage(ws_w + 992, kgi_v2_add(kgi_v2_ldm((__mmask32)0x000000ff, w + 992)"
    assert.is_truthy(rs:find(tail, 1, true))
    assert.is_truthy(rs:find("kgi_v2_lds(ws_w", 1, true))
    -- the only full-width load of w is the staging loop's
    local _, wloads = rs:gsub("kgi_v2_ld%(w ", "")
    assert.equals(1, wloads)
    -- "single" stores round ties away; "hf" keeps round-to-nearest-even
    assert.is_truthy(rs:find("kgi_v2_pack_ta(", 1, true))
    assert.is_falsy(rs:find("kgi_v2_pack(", 1, true))
    assert.is_truthy(rh:find("kgi_v2_pack(", 1, true))
    assert.is_falsy(rh:find("kgi_v2_pack_ta(", 1, true))
    -- wide rows: the next row's sum of squares inside this row's second pass
    assert.is_truthy(rs:find("sn = sq;", 1, true))
    assert.is_falsy(body(S.read(dir .. "/st/st_scalar.c"), "st_rs_scalar"):find("sn = sq;", 1, true))
    -- rows longer than the stage limit load and split their weights per row,
    -- except the streamed (non-temporal) rows, whose blocks stage them first
    -- (wn_w; pack.lua nt_stage_code), so that no streamed row splits them
    local big = body(c, "st_big_avx512")
    assert.is_falsy(big:find("ws_w", 1, true))
    local nt_at = big:find("if (KG_USE_NT(y, y_stride, rows, x)) {", 1, true)
    local stage_at = big:find("for (size_t i = 0; i < 4096; i += 32) kgi_v2_stage(wn_w + i, kgi_v2_ld(w + i));",
      1, true)
    assert.is_truthy(nt_at and stage_at and nt_at < stage_at)
    local streamed = big:sub(nt_at, big:find("_mm_sfence();", nt_at, true))
    assert.is_truthy(streamed:find("kgi_v2_lds(wn_w + (i + 0))", 1, true))
    local _, split = streamed:gsub("kgi_v2_ld%(w ", "")
    assert.equals(1, split) -- the staging loop's
    -- the cached rows: after the last streamed block
    local last = nt_at
    while big:find("_mm_sfence();", last + 1, true) do last = big:find("_mm_sfence();", last + 1, true) end
    local cached = big:sub(last)
    assert.is_falsy(cached:find("wn_w", 1, true))
    assert.is_truthy(cached:find("kgi_v2_ld(w + i + 0)", 1, true))
    -- past 16 KiB of f32 weights (8192), the streamed rows split their own
    -- too: staged, they would crowd the rows out of L1 (NT_WSTAGE_MAX)
    local huge = body(c, "st_huge_avx512")
    assert.is_truthy(huge:find("if (KG_USE_NT(y, y_stride, rows, x)) {", 1, true))
    assert.is_falsy(huge:find("wn_w", 1, true))
    assert.is_falsy(huge:find("ws_w", 1, true))
    -- QK-norm: both weight sets staged
    local qk = body(c, "st_qk_avx512")
    assert.is_truthy(qk:find("kgi_v2_lds(ws_q_w", 1, true))
    assert.is_truthy(qk:find("kgi_v2_lds(ws_k_w", 1, true))
  end)

  it("stage f16 weights and LayerNorm's gamma and beta once per call; f16 dispatchers may skip AVX-512", function()
    S.write(dir .. "/sh.lua", [[
return { name = "sh", dtype = "f16", kernels = {
  { op = "rmsnorm", name = "r", dim = 1000 },
  { op = "rmsnorm", name = "big", dim = 4096 },
  { op = "qk_norm", name = "qk", head_dim = 256, num_heads = 8, num_kv_heads = 2 },
  { op = "rmsnorm", name = "r32", dim = 1000, dtype = "f32" },
  { op = "layernorm", name = "ln", dim = 768 },
  { op = "layernorm", name = "lnb", dim = 768, dtype = "bf16" },
} }
]])
    gen(dir .. "/sh.lua", dir)
    local c = S.read(dir .. "/sh/sh_avx512.c")
    local r = body(c, "sh_r_avx512")
    -- converted once into a stack array (the tail block by a masked load), loaded per row
    assert.is_truthy(r:find("float ws_w[1008] __attribute__((aligned(64)));", 1, true))
    assert.is_truthy(r:find("_mm512_store_ps(ws_w + 992, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(", 1, true))
    assert.is_truthy(r:find("_mm512_load_ps(ws_w + (", 1, true))
    local _, conv = r:gsub("_mm512_cvtph_ps%(_mm256_loadu_si256%(%(const void %*%)%(w %+", "")
    assert.equals(1, conv) -- the staging loop's
    -- past the stage limit, and f32, nothing staged
    assert.is_falsy(body(c, "sh_big_avx512"):find("ws_w", 1, true))
    assert.is_falsy(body(c, "sh_r32_avx512"):find("ws_w", 1, true))
    local qk = body(c, "sh_qk_avx512")
    assert.is_truthy(qk:find("_mm512_load_ps(ws_q_w + (", 1, true))
    assert.is_truthy(qk:find("_mm512_load_ps(ws_k_w + (", 1, true))
    -- LayerNorm: gamma and beta both staged (bf16 split once per call too)
    local ln = body(c, "sh_ln_avx512")
    assert.is_truthy(ln:find("_mm512_load_ps(ws_gamma + (", 1, true))
    assert.is_truthy(ln:find("_mm512_load_ps(ws_beta + (", 1, true))
    assert.is_truthy(body(c, "sh_lnb_avx512"):find("kgi_v2_lds(ws_beta + (", 1, true))
    -- AVX2: full vectors staged, the scalar tail converts its own
    local c2 = S.read(dir .. "/sh/sh_avx2.c")
    local a2 = body(c2, "sh_r_avx2")
    assert.is_truthy(a2:find("float ws_w[1000] __attribute__((aligned(32)));", 1, true))
    assert.is_truthy(a2:find("_mm256_load_ps(ws_w + (", 1, true))
    -- AVX2 LayerNorm: f16 staged, bf16 split per row (stage_one_weight)
    assert.is_truthy(body(c2, "sh_ln_avx2"):find("_mm256_load_ps(ws_gamma + (", 1, true))
    assert.is_falsy(body(c2, "sh_lnb_avx2"):find("ws_gamma", 1, true))
    -- the f16 dispatchers ask kg_cpu_f16_avx2() before AVX-512, f32 ones do not
    local d = S.read(dir .. "/sh/sh_dispatch.c")
    assert.is_truthy(d:find("if (kg_dispatch_allows(KG_ISA_AVX512, cap) && !kg_cpu_f16_avx2()) {\n"
      .. "    *isa = KG_ISA_AVX512;\n    return sh_r_avx512;", 1, true))
    assert.is_truthy(d:find("if (kg_dispatch_allows(KG_ISA_AVX512, cap)) {\n"
      .. "    *isa = KG_ISA_AVX512;\n    return sh_r32_avx512;", 1, true))
    -- without an AVX2 variant to fall back on, f16 keeps AVX-512
    S.write(dir .. "/sn.lua", [[
return { name = "sn", dtype = "f16", isa = { "scalar", "avx512" }, kernels = {
  { op = "rmsnorm", name = "r", dim = 64 },
} }
]])
    gen(dir .. "/sn.lua", dir)
    assert.is_falsy(S.read(dir .. "/sn/sn_dispatch.c"):find("kg_cpu_f16_avx2", 1, true))
  end)

  it("group short QK-norm heads one group ahead (f32: calls in the caches), sum 16-bit rows in long blocks", function()
    S.write(dir .. "/gp.lua", [[
return { name = "gp", isa = { "scalar", "avx2", "avx512" }, kernels = {
  { op = "qk_norm", name = "q128", head_dim = 128, num_heads = 32, num_kv_heads = 8, dtype = "f32" },
  { op = "qk_norm", name = "qb", head_dim = 128, num_heads = 32, num_kv_heads = 8, dtype = "bf16" },
  { op = "qk_norm", name = "qb256", head_dim = 256, num_heads = 32, num_kv_heads = 8, dtype = "bf16" },
  { op = "qk_norm", name = "q256", head_dim = 256, num_heads = 32, num_kv_heads = 8, dtype = "f32" },
  { op = "qk_norm", name = "qb4", head_dim = 128, num_heads = 32, num_kv_heads = 4, dtype = "bf16" },
  { op = "qk_norm", name = "qb28", head_dim = 128, num_heads = 28, num_kv_heads = 4, dtype = "bf16" },
  { op = "qk_norm", name = "q64", head_dim = 64, num_heads = 32, num_kv_heads = 8, dtype = "f32" },
  { op = "rmsnorm", name = "r16", dim = 1024, dtype = "bf16" },
  { op = "rmsnorm", name = "r32", dim = 1024, dtype = "f32" },
} }
]])
    gen(dir .. "/gp.lua", dir)
    local c = S.read(dir .. "/gp/gp_avx512.c")
    -- f32 head_dim 128 (512-byte heads, 20 KiB a token): calls of up to 12
    -- tokens (256 KiB) go grouped, longer ones head by head; the group
    -- starts its chains before summing the next group
    local q = body(c, "gp_q128_avx512")
    assert.is_truthy(q:find("if (tokens <= 12) {", 1, true))
    -- (past the line-frame twin's call and return, and past the one-token
    -- block below, which returns too)
    local cut = q:find("    return;\n", q:find("/* token by token", q:find("if (tokens <= 12) {", 1, true), true), true)
    local grouped, stream = q:sub(1, cut), q:sub(cut)
    -- one token (decode), 32 + 8 heads (multiples of 8): groups in pairs
    -- through Q then K, sums four groups ahead, the first step of each
    -- pair starting the next pair's rs in one vector (8 lanes); each
    -- group takes its four lanes of the pair to every 128-bit lane
    local d1 = grouped:find("  if (tokens == 1) {\n", 1, true)
    local dend = grouped:find("\n    return;\n  }\n", d1, true)
    assert.is_truthy(d1 and dend and d1 < grouped:find("/* token by token", 1, true))
    local dec = grouped:sub(d1, dend)
    assert.is_truthy(dec:find("const float *xn0 = q + 12 * 128 + 0 * 128;", 1, true)) -- (the fourth group first)
    assert.is_truthy(dec:find("__m512 pa = kgi_avx512_rs8(s0, s1, 128, (double)1e-06f), pb = pa;", 1, true))
    assert.is_truthy(dec:find("for (size_t h = 0; h < 32; h += 8) {", 1, true))
    assert.is_truthy(dec:find("for (size_t h = 0; h < 8; h += 8) {", 1, true))
    assert.is_truthy(dec:find("if (h + 8 < 40) pb = kgi_avx512_rs8(s2, s3, 128, (double)1e-06f);", 1, true))
    assert.is_truthy(dec:find("if (h + 40 < 40) pb = kgi_avx512_rs8(s2, s3, 128, (double)1e-06f);", 1, true))
    assert.is_truthy(dec:find("const int more = h + 20 < 40;", 1, true))
    assert.is_truthy(dec:find("const float *nx = more ? h + 20 < 32 ? q + (h + 20) * 128 : "
      .. "k + (h + 20 - 32) * 128 : q;", 1, true))
    assert.is_truthy(dec:find("const __m512 rq_b = _mm512_shuffle_f32x4(pa, pa, 0x55);", 1, true))
    assert.is_truthy(dec:find("s0 = s2; s1 = s3; s2 = s4; s3 = s5; pa = pb;", 1, true))
    assert.is_falsy(dec:find("kgi_avx512_rs4", 1, true))
    assert.is_falsy(dec:find("_mm512_shuffle_f32x4(rq, rq, 0)", 1, true))
    -- the line frame the same way, its shared lines carried from group to
    -- group within each loop (the odd step's group may be a loop's last)
    local lfq = body(c, "gp_q128_avx512_lf")
    local lf1 = lfq:find("  if (tokens == 1) {\n", 1, true)
    local lfdec = lfq:sub(lf1, lfq:find("\n    return;\n  }\n", lf1, true))
    assert.is_truthy(lfdec:find("__m512 pa = kgi_avx512_rs8(s0, s1, 128, (double)1e-06f), pb = pa;", 1, true))
    assert.is_truthy(lfdec:find("    {\n    int carry = 0;", 1, true))
    assert.is_truthy(lfdec:find("const int lastg = 0;", 1, true))
    assert.is_truthy(lfdec:find("const int lastg = !(h + 8 < 32);", 1, true))
    assert.is_truthy(lfdec:find("const int lastg = !(h + 8 < 8);", 1, true))
    assert.is_falsy(lfdec:find("xn1", 1, true)) -- (a group's sums read its lines from its first row)
    -- (16-bit heads' line frame keeps the steps two ahead)
    assert.is_falsy(body(c, "gp_qb_avx512_lf"):find("kgi_avx512_rs8", 1, true))
    assert.is_truthy(body(c, "gp_qb_avx512_lf"):find("kgi_avx512_rs4", 1, true))
    grouped = grouped:sub(1, d1) .. grouped:sub(dend) -- (the steps of every other call)
    -- bf16 heads of 128 too, and 4 KV heads (K's lone group ends the call,
    -- its partner's half skipped); not wider 16-bit heads, f32 ones of 64,
    -- or Q heads not a multiple of 8 (a pair would straddle Q and K)
    assert.is_truthy(body(c, "gp_qb_avx512"):find("kgi_avx512_rs8", 1, true))
    local qb4 = body(c, "gp_qb4_avx512")
    assert.is_truthy(qb4:find("kgi_avx512_rs8", 1, true))
    local k4 = qb4:find("for (size_t h = 0; h < 4; h += 8) {", 1, true)
    assert.is_truthy(k4 and qb4:find("      if (h + 4 < 4) {\n", k4, true))
    assert.is_falsy(dec:find("if (h + 4 < ", 1, true)) -- (32 + 8: no lone group)
    for _, n in ipairs({ "gp_qb256_avx512", "gp_q64_avx512", "gp_qb28_avx512" }) do
      assert.is_falsy(body(c, n):find("kgi_avx512_rs8", 1, true), n)
      assert.is_truthy(body(c, n):find("kgi_avx512_rs4", 1, true), n)
    end
    assert.is_truthy(grouped:find("h += 4", 1, true))
    assert.is_falsy(stream:find("h += 4", 1, true))
    -- (AVX-512 groups of 4: two groups ahead, the next group's rs started
    -- a step before it is used)
    local rs4, more = grouped:find("rqc = kgi_avx512_rs4(snv, 128, (double)1e-06f);", 1, true),
      grouped:find("if (more) {", 1, true)
    assert.is_truthy(rs4 and more and rs4 < more)
    assert.is_truthy(grouped:find("const __m512 rq = rqc;", 1, true))
    -- the four rows' sums finish together (one transposed reduction, one
    -- vector of rs, one slow-path test); row g takes lane g
    assert.is_truthy(grouped:find("snv = kgi_avx512_hsum4(hv0, hv1, hv2, hv3);", 1, true))
    local slow = "if (KG_UNLIKELY(_mm256_cmp_pd_mask(ssv, _mm256_set1_pd((double)FLT_MAX), _CMP_NLE_UQ)))"
    assert.is_truthy(grouped:find(slow, 1, true))
    -- the group's four rs copied to every 128-bit lane at the step's top
    -- (before the next group's sums), row g's taken by an in-lane permute
    -- (no index vector)
    local stash = grouped:find("rqc = kgi_avx512_rs4(snv, 128, (double)1e-06f);\n      "
      .. "const __m512 rq_b = _mm512_shuffle_f32x4(rq, rq, 0);\n      if (more) {", 1, true)
    local get3 = grouped:find("const __m512 vr3 = _mm512_permute_ps(rq_b, 255);", 1, true)
    assert.is_truthy(stash and get3 and stash < get3)
    assert.is_falsy(grouped:find("_mm512_permutexvar_ps(_mm512_set1_epi32(3), rq)", 1, true))
    -- both paths ask for the same head of the next token (Q and K by their
    -- own strides) into L2; the last token prefetches its own lines, not
    -- past the data.  20 KiB of heads a token is past the 16 KiB whose
    -- requests may go to L1 (kg_cpu_prefetch_zen5): no question asked
    for _, part in ipairs({ grouped, stream }) do
      assert.is_truthy(part:find("const size_t pfq = t + 1 < tokens ? q_stride * sizeof(*q) : 0;", 1, true))
      assert.is_truthy(part:find("const size_t pfk = t + 1 < tokens ? k_stride * sizeof(*k) : 0;", 1, true))
      assert.is_falsy(part:find(", 0, 3);", 1, true))
    end
    assert.is_falsy(q:find("pl1", 1, true))
    assert.is_truthy(req(grouped, "yr3", "pfq", 448, 2))
    assert.is_truthy(req(grouped, "yr3", "pfk", 448, 2))
    assert.is_truthy(req(stream, "yr", "pfq", 448, 2))
    -- 1 KiB heads go grouped too (group_row_bytes_tm) in calls of up to 6
    -- tokens (256 KiB), head by head beyond
    local wide = body(c, "gp_q256_avx512")
    local wlong = wide:find("    return;\n  }\n", wide:find("if (tokens <= 6) {", 1, true), true)
    assert.is_truthy(wlong)
    assert.is_truthy(wide:sub(1, wlong):find("h += 4", 1, true))
    assert.is_falsy(wide:sub(wlong):find("h += 4", 1, true))
    assert.is_truthy(req(wide:sub(wlong), "yr", "pfk", 960, 2))
    -- calls of KG_NT_BYTES of heads or more take, where the runtime says so
    -- (kg_cpu_stream_reload), rows that load each vector twice: the
    -- streamed form's loops, before the held rows' stream
    local tail = wide:sub(wlong)
    local at = tail:find("if (tokens >= (KG_NT_BYTES + 40959) / 40960 && kg_cpu_stream_reload()) {", 1, true)
    assert.is_truthy(at)
    local tcut = tail:find("    return;\n  }\n", at, true)
    local twice, held = tail:sub(at, tcut), tail:sub(tcut)
    assert.is_truthy(twice:find("for (size_t i = b; i < b + 256; i += 64) {", 1, true))
    -- in ymm halves (isa/avx512.lua y2), summed by kgi_avx512_hsum's tree
    assert.is_truthy(twice:find("kgi_y2_st(yr + i + 48, kgi_y2_mul(kgi_y2_mul(kgi_y2_ld(xr + i + 48), vr), "
      .. "kgi_y2_ld(k_w + i + 48)));", 1, true))
    assert.is_truthy(twice:find("ss += (double)kgi_y2_hsum(kgi_y2_add(kgi_y2_add(ss1, ss2), kgi_y2_add(ss3, ss4)));",
      1, true))
    assert.is_falsy(twice:find("_mm512_", 1, true))
    assert.is_falsy(twice:find("const __m512 x1 =", 1, true))
    assert.is_truthy(req(twice, "yr", "pfk", 960, 2))
    assert.is_truthy(held:find("const __m512 x16 = _mm512_loadu_ps(xr + 240);", 1, true))
    assert.is_falsy(held:find("i += 64", 1, true))
    -- not for 512-byte or 16-bit heads, nor on AVX2 (whose rows stream)
    for _, name in ipairs({ "gp_q128_avx512", "gp_qb256_avx512", "gp_q256_avx512_lf" }) do
      assert.is_falsy(body(c, name):find("kg_cpu_stream_reload", 1, true), name)
    end
    assert.is_falsy(S.read(dir .. "/gp/gp_avx2.c"):find("kg_cpu_stream_reload", 1, true))
    -- 10 KiB of bf16 heads a token: into L1 where the runtime says so
    -- (read once per call), else into L2, in both paths
    local qb = body(c, "gp_qb_avx512")
    local _, asks = qb:gsub("kg_cpu_prefetch_zen5%(%)", "")
    assert.equals(1, asks)
    assert.is_truthy(qb:find("const int pl1 = kg_cpu_prefetch_zen5();", 1, true))
    local function both(part, pf)
      local at_l1 = req(part, "yr1", pf, 192, 3)
      local at_if = at_l1 and part:sub(1, at_l1):match(".*()if %(pl1%) {")
      local at_else = at_l1 and part:find("} else {", at_l1, true)
      local at_l2 = at_else and req(part, "yr1", pf, 192, 2, at_else)
      assert.is_truthy(at_if and at_else and at_l2, pf)
    end
    local cutb = qb:find("    return;\n", qb:find("/* token by token", qb:find("if (tokens <= ", 1, true), true), true)
    for _, part in ipairs({ qb:sub(1, cutb), qb:sub(cutb) }) do
      both(part, "pfq")
      both(part, "pfk")
    end
    -- 20 KiB of 16-bit heads a token is within their 32 KiB
    assert.is_truthy(body(c, "gp_qb256_avx512"):find("if (pl1) {", 1, true))
    -- the AVX2 variant asks too, also for 20 and 40 KiB of f32 heads (its
    -- table's limit is 64 KiB); the scalar one keeps the one hint
    local c2 = S.read(dir .. "/gp/gp_avx2.c")
    for _, name in ipairs({ "gp_qb_avx2", "gp_q128_avx2", "gp_q256_avx2" }) do
      assert.is_truthy(body(c2, name):find("if (pl1) {", 1, true), name)
    end
    assert.is_falsy(S.read(dir .. "/gp/gp_scalar.c"):find("pl1", 1, true))
    -- long calls of bf16 heads (the AVX512_BF16 twin) take, where the
    -- runtime says so (kg_cpu_qk_pipe), one pipeline of heads two ahead
    -- (kernels/pipe.lua): three register slots, each head loaded once,
    -- its next token's lines asked for, the flat head index split into
    -- token and head, the slow path for a sum past FLT_MAX by head kind
    local dq = body(c, "gp_qb_avx512_bf16dot")
    local short = dq:find("if (tokens <= 25) {", 1, true)
    local pat = dq:find("if (kg_cpu_qk_pipe()) {", 1, true)
    assert.is_truthy(short and pat and pat > short)
    local pipe = dq:sub(pat, dq:find("\n    return;\n  }\n", pat, true))
    assert.is_truthy(pipe:find("kgi_v2 xA1, xA2, xA3, xA4;", 1, true))
    assert.is_truthy(pipe:find("const size_t tt = jj / 40, hh = jj % 40;", 1, true))
    assert.is_truthy(pipe:find("pC = qC ? q + tt * q_stride + hh * 128 : k + tt * k_stride + (hh - 32) * 128;",
      1, true))
    assert.is_truthy(pipe:find("xC4 = kgi_v2_split(_mm512_loadu_si512((const void *)(pC + 96)));", 1, true))
    assert.is_truthy(pipe:find("tn2 = kgi_avx512_dot_sq(tn2, v4);", 1, true))
    assert.is_truthy(pipe:find("rB = (float)(1.0 / sqrt(sB / 128 + (double)1e-06f));", 1, true))
    assert.is_truthy(pipe:find("gp_qb_avx512_slow(pA, pA, qA ? q_w : k_w, NULL);", 1, true))
    assert.is_truthy(pipe:find("const float *wA = qA ? ws_q_w : ws_k_w;", 1, true))
    assert.is_truthy(pipe:find("_mm512_storeu_si512((void *)(pA + 96), "
      .. "kgi_v2_pack_ta(kgi_v2_mul(kgi_v2_mul(xA4, vr), kgi_v2_lds(wA + (96)))));", 1, true))
    assert.is_truthy(pipe:find("__builtin_prefetch(pfb + 192, 0, 2);", 1, true))
    assert.is_falsy(pipe:find("__builtin_prefetch(pfb + 256,", 1, true))
    assert.is_falsy(pipe:find("kgi_v2_ld(", 1, true)) -- (no second load)
    -- heads of 512 bytes keep their raw loads, split where scaled
    local wp = body(c, "gp_qb256_avx512_bf16dot")
    assert.is_truthy(wp:find("__m512i uC1, uC2, uC3, uC4, uC5, uC6, uC7, uC8;", 1, true))
    assert.is_truthy(wp:find("kgi_v2_mul(kgi_v2_split(uB8), vr)", 1, true))
    -- not without AVX512_BF16, not f32 heads, not on AVX2
    for _, name in ipairs({ "gp_qb_avx512", "gp_q128_avx512", "gp_q256_avx512" }) do
      assert.is_falsy(body(c, name):find("kg_cpu_qk_pipe", 1, true), name)
    end
    assert.is_falsy(S.read(dir .. "/gp/gp_avx2.c"):find("kg_cpu_qk_pipe", 1, true))
    -- a 128-wide f32 head folds 2 accumulators, not 4
    assert.is_truthy(q:find("__m512 ss1 = _mm512_setzero_ps(), ss2 = _mm512_setzero_ps();", 1, true))
    -- 16-bit rows: one block of 1024 per row; f32 rows: blocks of 256
    assert.is_truthy(body(c, "gp_r16_avx512"):find("b += 1024", 1, true))
    assert.is_truthy(body(c, "gp_r32_avx512"):find("b += 256", 1, true))
  end)

  it("ask for the next row ahead while a non-temporal row streams out; group 128-byte 16-bit heads at any length",
    function()
    S.write(dir .. "/nt.lua", [[
return { name = "nt", isa = { "scalar", "avx2", "avx512" }, kernels = {
  { op = "rmsnorm", name = "r32", dim = 4096, dtype = "f32" },
  { op = "rmsnorm", name = "r16", dim = 16384, dtype = "bf16" },
  { op = "rmsnorm", name = "r8", dim = 4096, dtype = "bf16" },
  { op = "layernorm", name = "ln", dim = 4096, dtype = "f16" },
  { op = "qk_norm", name = "q64", head_dim = 64, num_heads = 32, num_kv_heads = 8, dtype = "bf16" },
  { op = "qk_norm", name = "q128", head_dim = 128, num_heads = 32, num_kv_heads = 8, dtype = "bf16" },
  { op = "qk_norm", name = "q256", head_dim = 256, num_heads = 32, num_kv_heads = 8, dtype = "bf16" },
  { op = "qk_norm", name = "f64", head_dim = 64, num_heads = 32, num_kv_heads = 8, dtype = "f32" },
  { op = "layernorm", name = "l33", dim = 33, dtype = "bf16" },
} }
]])
    gen(dir .. "/nt.lua", dir)
    local c = S.read(dir .. "/nt/nt_avx512.c")
    local r32 = body(c, "nt_r32_avx512")
    local cut = r32:find("_mm_sfence();", 1, true)
    local ntp = r32:sub(1, cut)
    -- RMSNorm rows stream in the fused form: row r written while row r + 1
    -- is summed, each line of that row asked for 4 KiB ahead into L1
    -- (hint 3), one prefetch per 64-byte line, the address an integer
    assert.is_truthy(ntp:find("if (KG_USE_NT(y, y_stride, rows, x)) {", 1, true))
    assert.is_truthy(ntp:find("const float *xn = r + 1 < rows ? xr + x_stride : NULL;", 1, true))
    assert.is_truthy(ntp:find("sq1 = _mm512_fmadd_ps(v1, v1, sq1);\n            "
      .. "__builtin_prefetch((const void *)(((uintptr_t)xn + 4096) + i * 4 + 0), 0, 3); "
      .. "_mm512_stream_ps(yr + i + 0, ", 1, true))
    assert.is_truthy(ntp:find("(((uintptr_t)xn + 4096) + i * 4 + 192), 0, 3); _mm512_stream_ps(yr + i + 48, ", 1, true))
    assert.is_falsy(ntp:find("xp", 1, true))
    -- the last row (no xn) streams out without requests
    assert.is_truthy(ntp:find("\n        _mm512_stream_ps(yr + i + 0, ", 1, true))
    -- y off line alignment streams too: whole f32 / bf16 vectors realigned
    -- in registers (AVX-512), other rows through an aligned stack row; the
    -- cached path after both asks for nothing ahead
    local last = cut
    while true do
      local nxt = r32:find("_mm_sfence();", last + 1, true)
      if not nxt then break end
      last = nxt
    end
    assert.is_true(last > cut)
    local staged = r32:sub(cut + 1, last)
    assert.is_truthy(staged:find("if (KG_USE_NT_STAGED(y, y_stride, rows, x)) {", 1, true))
    assert.is_truthy(staged:find("kgi_ntr nst = kgi_ntr_begin(yr);", 1, true))
    assert.is_truthy(staged:find("(((uintptr_t)xn + 4096) + i * 4 + 0), 0, 3); kgi_ntr_put(&nst, i + 0, ",
      1, true))
    -- the stream of a fused row ends before its `continue`, and after the last row
    local _, ends = staged:gsub("kgi_ntr_end%(&nst, 4096%);", "")
    assert.are.equal(2, ends)
    assert.is_truthy(staged:find("kgi_ntr_end(&nst, 4096);\n        continue;", 1, true))
    assert.is_falsy(r32:sub(last):find("uintptr_t)xn", 1, true))
    assert.is_truthy(body(c, "nt_r16_avx512"):find("kgi_ntw_put(&nst, i + 32, kgi_v2_pack_ta(", 1, true))
    -- where the runtime says so (asked once per call), the fused rows go
    -- as streams: realigned (kg_cpu_nt_split) in halves side by side,
    -- aligned in parts of 4 KiB (f32 4096: quarters, kg_cpu_nt_split4k),
    -- each block's sum kept and added in the row's order; each part asks
    -- for its lines ahead and past its end for its part of the next row;
    -- realigned, the second half has a stream of its own
    assert.is_truthy(ntp:find("const int nt2 = kg_cpu_nt_split4k();", 1, true))
    assert.is_truthy(staged:find("const int nt2 = kg_cpu_nt_split();", 1, true))
    for _, part in ipairs({ ntp, staged }) do
      assert.is_truthy(part:find("if (xn && nt2) {", 1, true))
      assert.is_truthy(part:find("for (size_t q = 0; q < 16; q++) sq += sq_b[q];", 1, true))
    end
    assert.is_truthy(staged:find("for (size_t b = 0; b < 2048; b += 256) {", 1, true))
    assert.is_truthy(staged:find("const __m512 u2 = (_mm512_loadu_ps(xn + i + 2064));\n"
      .. "            squ2 = _mm512_fmadd_ps(u2, u2, squ2);", 1, true))
    assert.is_truthy(staged:find("sq_b[8 + b / 256] = (double)kgi_avx512_hsum(_mm512_add_ps("
      .. "_mm512_add_ps(squ1, squ2), _mm512_add_ps(squ3, squ4)));", 1, true))
    assert.is_truthy(staged:find("(((uintptr_t)xn + 4096) + i * 4 + 8256 + (i * 4 + 8256 - 8192 + 4096 >= 8192 ? "
      .. "x_stride * 4 - 8192 : 0)), 0, 3);", 1, true))
    assert.is_truthy(ntp:find("for (size_t b = 0; b < 1024; b += 256) {", 1, true))
    assert.is_truthy(ntp:find("const __m512 g2 = (_mm512_loadu_ps(xn + i + 3088));\n"
      .. "            sqg2 = _mm512_fmadd_ps(g2, g2, sqg2);", 1, true))
    for q, at in ipairs({ "", "4 + ", "8 + ", "12 + " }) do
      local v = ({ "sq", "squ", "sqh", "sqg" })[q]
      assert.is_truthy(ntp:find("sq_b[" .. at .. "b / 256] = (double)kgi_avx512_hsum(_mm512_add_ps(_mm512_add_ps("
        .. v .. "1, " .. v .. "2), _mm512_add_ps(" .. v .. "3, " .. v .. "4)));", 1, true), v)
    end
    assert.is_truthy(ntp:find("(((uintptr_t)xn + 4096) + i * 4 + 12352 + (i * 4 + 12352 - 12288 + 4096 >= 4096 ? "
      .. "x_stride * 4 - 4096 : 0)), 0, 3); _mm512_stream_ps(yr + i + 3088, ", 1, true))
    assert.is_truthy(ntp:find("_mm512_stream_ps(yr + i + 1040, ", 1, true))
    assert.is_truthy(staged:find("kgi_ntr nst2 = kgi_ntr_begin(yr + 2048);", 1, true))
    assert.is_truthy(staged:find("kgi_ntr_put(&nst2, i + 16, _mm512_mul_ps(_mm512_mul_ps("
      .. "_mm512_loadu_ps(xr + i + 2064)", 1, true))
    assert.is_truthy(staged:find("kgi_ntr_end(&nst, 2048);\n        kgi_ntr_end(&nst2, 2048);\n        continue;",
      1, true))
    -- the line frame (x and y at one offset, where kg_cpu_nt_split is not
    -- set) in the same parts as the aligned rows where kg_cpu_nt_split4k
    -- says so: f32 4096 in quarters, line 0 (masked, with the carried
    -- part) only in the first, each part asking for its own lines of the
    -- next row; one stream otherwise
    local function frame_of(text)
      local a = assert(text:find("x and y the same bytes into their lines", 1, true))
      local b = assert(text:find("_mm_sfence();", a, true))
      return text:sub(a, b)
    end
    local fr32 = frame_of(r32)
    assert.is_truthy(fr32:find("&& !kg_cpu_nt_split()", 1, true))
    assert.is_truthy(fr32:find("const int nt2 = kg_cpu_nt_split4k();", 1, true))
    assert.is_truthy(fr32:find("if (xn && nt2) {", 1, true))
    assert.is_truthy(fr32:find("for (size_t q = 0; q < 16; q++) sq += sq_b[q];", 1, true))
    assert.is_truthy(fr32:find("0, 3); if (i + 0 != 0) { _mm512_stream_ps(ya + i + 0, ", 1, true))
    assert.is_falsy(fr32:find("if (i + 1024 + 0 != 0)", 1, true))
    assert.is_truthy(fr32:find("(((uintptr_t)xn + 4096) + i * 4 + 12352 + (i * 4 + 12352 - 12288 + 4096 >= 4096 ? "
      .. "x_stride * 4 - 4096 : 0)), 0, 3); _mm512_stream_ps(ya + i + 3088, ", 1, true))
    -- bf16 rows of 4096 with x and y aligned: halves of 4 KiB
    -- (kg_cpu_nt_split4k), and so is their line frame; their realigned
    -- rows keep kg_cpu_nt_split (Intel)
    local r8 = body(c, "nt_r8_avx512")
    local al = r8:sub(1, r8:find("_mm_sfence();", 1, true))
    assert.is_truthy(al:find("if (KG_USE_NT(y, y_stride, rows, x)) {", 1, true))
    assert.is_truthy(al:find("const int nt2 = kg_cpu_nt_split4k();", 1, true))
    assert.is_truthy(al:find("for (size_t b = 0; b < 2048; b += 1024) {", 1, true))
    assert.is_falsy(al:find("kg_cpu_nt_split()", 1, true))
    local fr8 = frame_of(r8)
    assert.is_truthy(fr8:find("const int nt2 = kg_cpu_nt_split4k();", 1, true))
    assert.is_truthy(fr8:find("for (size_t b = 0; b < 2048; b += 1024) {", 1, true))
    local rest = r8:sub((r8:find("the same for y at any other alignment", 1, true)))
    assert.is_truthy(rest:find("const int nt2 = kg_cpu_nt_split();", 1, true))
    assert.is_falsy(rest:find("kg_cpu_nt_split4k", 1, true))
    -- rows of 16384 bf16 (32 KiB): quarters of 8 KiB, Intel's alone
    local r16a = body(c, "nt_r16_avx512")
    local al16 = r16a:sub(1, r16a:find("_mm_sfence();", 1, true))
    assert.is_truthy(al16:find("const int nt2 = kg_cpu_nt_split();", 1, true))
    assert.is_truthy(al16:find("for (size_t b = 0; b < 4096; b += 1024) {", 1, true))
    -- AVX2 keeps one stream
    assert.is_falsy(S.read(dir .. "/nt/nt_avx2.c"):find("nt2", 1, true))
    -- f16 (AVX-512 and AVX2): the stack row
    local a2c = S.read(dir .. "/nt/nt_avx2.c")
    local function stack_row(text, ty, n)
      assert.is_truthy(text:find(ty .. " ys[" .. n .. "] __attribute__((aligned(64)));", 1, true))
      assert.is_truthy(text:find("kgi_nt_row((char *)yr, (const char *)ys, sizeof ys);", 1, true))
      assert.is_falsy(text:find("kgi_ntr", 1, true))
    end
    stack_row(body(c, "nt_ln_avx512"), "kg_f16", 4096)
    stack_row(body(a2c, "nt_ln_avx2"), "kg_f16", 4096)
    -- AVX2 realigns f32 rows in registers too (32-byte stores); its 16-bit
    -- rows take the stack row, or plain stores past 16 KiB (no 32 KiB
    -- stack row)
    local a2r32 = body(a2c, "nt_r32_avx2")
    assert.is_truthy(a2r32:find("kgi_ntr nst = kgi_ntr_begin(yr);", 1, true))
    assert.is_truthy(a2r32:find("kgi_ntr_put(&nst, i + 8, ", 1, true))
    assert.is_falsy(a2r32:find(" ys[", 1, true))
    -- AVX2 f32: one request per line, not per 32-byte vector
    assert.is_truthy(a2r32:find("(((uintptr_t)xn + 4096) + i * 4 + 64), 0, 3); _mm256_stream_ps(yr + i + 16, ",
      1, true))
    assert.is_falsy(a2r32:find("i * 4 + 32), 0, 3)", 1, true))
    local a2r8 = body(a2c, "nt_r8_avx2")
    stack_row(a2r8, "kg_bf16", 4096)
    assert.is_truthy(a2r8:find("kgi_nt_row((char *)yr, (const char *)ys, sizeof ys);\n        continue;", 1, true))
    assert.is_falsy(a2r8:find("kgi_ntw", 1, true))
    assert.is_falsy(body(a2c, "nt_r16_avx2"):find("KG_USE_NT_STAGED(y", 1, true))
    -- 16-bit rows: one prefetch per line (a 32-element vector), none left over
    local r16 = body(c, "nt_r16_avx512")
    assert.is_truthy(r16:find("(((uintptr_t)xn + 4096) + i * 2 + 64), 0, 3); "
      .. "_mm512_stream_si512((void *)(yr + i + 32), ", 1, true))
    assert.is_falsy(r16:find("xp", 1, true))
    -- LayerNorm rows stream in the fused form too: aligned ones two at a
    -- time, rows r and r + 1 written inside the sums of rows r + 2 and
    -- r + 3, rows 0 and 1's sums before the loop, each line of xn and xnb
    -- asked for M.PAIR_AHEAD ahead (f16: one 32-byte vector in two starts
    -- a line)
    local ln = body(c, "nt_ln_avx512")
    local lcut = ln:find("_mm_sfence();", 1, true)
    local lnt = ln:sub(1, lcut)
    assert.is_truthy(lnt:find("double sn, sqn, snb = 0.0, sqnb = 0.0;\n    float m1n, m1nb = 0.0f;", 1, true))
    assert.is_truthy(lnt:find("for (size_t r = 0; r < rows; r += 2) {", 1, true))
    assert.is_truthy(lnt:find("const kg_f16 *xnb = r + 3 < rows ? xr + 3 * x_stride : NULL;", 1, true))
    for _, b in ipairs({ "", "b" }) do
      assert.is_truthy(lnt:find("(((uintptr_t)xn" .. b .. " + 2048) + i * 2 + 64"
        .. " + (i * 2 + 64 + 2048 >= 8192 ? (2 * x_stride) * 2 - 8192 : 0)), 0, 3); "
        .. "_mm256_stream_si256((void *)(yr" .. b .. " + i + 32), ", 1, true), b)
    end
    assert.is_falsy(lnt:find("i * 2 + 32 + (", 1, true))
    assert.is_falsy(lnt:find("xp", 1, true))
    -- where kg_cpu_nt_split4k says so, a pair of rows with halves of 4 KiB
    -- (f16 4096) goes as four streams: each row's halves side by side,
    -- each block's sums kept and added in the row's order, each part
    -- asking for its place two rows on
    assert.is_truthy(lnt:find("const int nt2 = kg_cpu_nt_split4k();", 1, true))
    assert.is_truthy(lnt:find("if (nt2) {", 1, true))
    for _, v in ipairs({ "s2", "sq2", "s2b", "sq2b" }) do
      assert.is_truthy(lnt:find("for (size_t q = 0; q < 4; q++) " .. v .. " += " .. v .. "_b[q];", 1, true), v)
    end
    assert.is_truthy(lnt:find("const __m512 ub1 = (_mm512_cvtph_ps(_mm256_loadu_si256("
      .. "(const void *)(xnb + i + 2048))));", 1, true))
    for _, b in ipairs({ "", "b" }) do
      assert.is_truthy(lnt:find("(((uintptr_t)xn" .. b .. " + 4096) + i * 2 + 4160 + (i * 2 + 4160 - 4096 + 4096 "
        .. ">= 4096 ? (2 * x_stride) * 2 - 4096 : 0)), 0, 3); ", 1, true), b)
    end
    -- a pair that is not plain, and the last rows, go one row at a time
    -- through the fused row, whose slow path's `continue` ends a do-while
    assert.is_truthy(lnt:find("const size_t r = rb;", 1, true))
    assert.is_truthy(lnt:find("continue;\n      }\n      const double mu = s / 4096;", 1, true))
    assert.is_truthy(select(2, lnt:gsub("} while %(0%);", "")) == 2)
    -- the realigning stream runs one row at a time: row r written inside
    -- row r + 1's sums, the first row's sums before the loop, each line of
    -- xn asked for ahead
    local lcut2 = ln:find("_mm_sfence();", lcut + 1, true)
    local lst = ln:sub(lcut, lcut2)
    assert.is_truthy(lst:find("double sn, sqn;\n    float m1n;\n    {\n      const kg_f16 *xn = x;", 1, true))
    assert.is_truthy(lst:find("const kg_f16 *xn = r + 1 < rows ? xr + x_stride : NULL;", 1, true))
    assert.is_truthy(lst:find("(((uintptr_t)xn + 4096) + i * 2 + 64), 0, 3); ", 1, true))
    -- the row's sums came from the step before; a row that takes the slow
    -- path still sums the next one
    assert.is_truthy(lst:find("const float m1 = m1n;\n      const double s = sn;\n      double sq = sqn;", 1, true))
    assert.is_truthy(lst:find("rstd ? rstd + r : NULL);\n        if (xn) {\n          m1n = ", 1, true))
    -- the cached rows are fused as well, and ask for nothing ahead
    local lrest = ln:sub(lcut2)
    assert.is_truthy(lrest:find("/* Each step writes row r while summing row r + 1 (ln_row.c.tpl). */", 1, true))
    assert.is_falsy(lrest:find("uintptr_t)xn", 1, true))
    -- a LayerNorm row without a loop asks for the line of the next row's
    -- (AVX2 bf16: the full chunks of 33 cover bytes 0-63, one line)
    local l33 = body(S.read(dir .. "/nt/nt_avx2.c"), "nt_l33_avx2")
    assert.is_truthy(l33:find("__builtin_prefetch((const void *)(((uintptr_t)xn + 4096) + 0), 0, 3); "
      .. "_mm256_stream_si256(", 1, true))
    assert.is_falsy(l33:find("+ 32), 0, 3)", 1, true))
    -- 128-byte 16-bit heads: groups of 4 at every length (no token-count
    -- switch); 256- and 512-byte ones in groups of 2 (at most 512 bytes,
    -- isa/avx512.lua long_group_bytes) past 256 KiB of heads; 256-byte f32
    -- heads beyond 256 KiB stream
    local q64 = body(c, "nt_q64_avx512")
    assert.is_falsy(q64:find("if (tokens <= ", 1, true))
    assert.is_truthy(q64:find("h += 4", 1, true))
    assert.is_falsy(q64:find("h += 2", 1, true))
    for n, most in pairs({ nt_q128_avx512 = 25, nt_q256_avx512 = 12 }) do
      local q = body(c, n)
      local open = "if (tokens <= " .. most .. ") { /* <= 256 KiB of heads: groups of 4 */"
      assert.is_truthy(q:find(open, 1, true), n)
      -- (past the one-token block of decode in pairs, which returns too)
      local cut2 = q:find("    return;\n", q:find("/* token by token", q:find(open, 1, true), true), true)
      assert.is_truthy(q:sub(1, cut2):find("h += 4", 1, true), n)
      assert.is_falsy(q:sub(1, cut2):find("h += 2", 1, true), n)
      assert.is_truthy(q:sub(cut2):find("h += 2", 1, true), n)
      assert.is_falsy(q:sub(cut2):find("h += 4", 1, true), n)
      -- the long form has no 4-lane sums: each head of a pair its own rs
      assert.is_falsy(q:sub(cut2):find("kgi_avx512_hsum4", 1, true), n)
    end
    assert.is_truthy(body(c, "nt_f64_avx512"):find("if (tokens <= 25) {", 1, true))
  end)

  it("give AVX-512 bf16 RMSNorm and QK-norm an AVX512_BF16 twin for every call length", function()
    S.write(dir .. "/nt.lua", [[
return { name = "nt", isa = { "scalar", "avx2", "avx512" }, kernels = {
  { op = "rmsnorm", name = "r32", dim = 4096, dtype = "f32" },
  { op = "rmsnorm", name = "r16", dim = 16384, dtype = "bf16" },
  { op = "rmsnorm", name = "r1k", dim = 1024, dtype = "bf16" },
  { op = "layernorm", name = "ln", dim = 4096, dtype = "bf16" },
  { op = "qk_norm", name = "q128", head_dim = 128, num_heads = 32, num_kv_heads = 8, dtype = "bf16" },
  { op = "rmsnorm", name = "h16", dim = 1024, dtype = "f16" },
} }
]])
    gen(dir .. "/nt.lua", dir)
    local c = S.read(dir .. "/nt/nt_avx512.c")
    -- the twin: static, its own target, sums of squares by vdpbf16ps; the
    -- public body calls it first, whatever the row or token count (so a
    -- QK-norm head gets the same bits in decode and prefill, KT-QKN-LONG),
    -- and has no vdpbf16ps itself
    for _, t in ipairs({ { "nt_r1k", "rows, x, x_stride, w, y, y_stride, rstd" },
                         { "nt_q128", "tokens, q, q_stride, k, k_stride, q_w, k_w" } }) do
      local n = t[1]
      assert.is_truthy(c:find('static __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c,'
        .. 'avx512bf16"))) void ' .. n .. "_avx512_bf16dot(", 1, true), n)
      local tw = body(c, n .. "_avx512_bf16dot")
      assert.is_truthy(tw:find("= kgi_avx512_dot_sq(", 1, true), n)
      assert.is_falsy(tw:find("kgi_v2_fma(", 1, true), n)
      assert.is_falsy(tw:find("kg_cpu_avx512_bf16", 1, true), n)
      local r = body(c, n .. "_avx512")
      assert.is_truthy(r:find("{\n  if (kg_cpu_avx512_bf16()) { " .. n .. "_avx512_bf16dot(" .. t[2] .. "); return; }",
        1, true), n)
      assert.is_falsy(r:find("dot_sq", 1, true), n)
    end
    -- the twin keeps the non-temporal path and shares the slow path
    assert.is_truthy(body(c, "nt_r16_avx512_bf16dot"):find("_mm512_stream_si512(", 1, true))
    assert.is_truthy(body(c, "nt_r16_avx512_bf16dot"):find("nt_r16_avx512_slow(", 1, true))
    assert.are.equal(1, select(2, c:gsub("static KG_NOINLINE void nt_r16_avx512_slow%(", "")))
    -- QK-norm's groups sum with it too
    assert.is_truthy(body(c, "nt_q128_avx512_bf16dot"):find("tn2 = kgi_avx512_dot_sq(tn2, v4);", 1, true))
    -- no twin for f32, f16, LayerNorm, or AVX2
    for _, n in ipairs({ "nt_r32_avx512_bf16dot", "nt_h16_avx512_bf16dot", "nt_ln_avx512_bf16dot" }) do
      assert.is_falsy(c:find(n, 1, true), n)
    end
    assert.is_falsy(S.read(dir .. "/nt/nt_avx2.c"):find("bf16dot", 1, true))
  end)

  it("give AVX-512 QK-norm heads of 4 or more whole lines a line-frame twin", function()
    S.write(dir .. "/lf.lua", [[
return { name = "lf", isa = { "scalar", "avx2", "avx512" }, kernels = {
  { op = "qk_norm", name = "f128", head_dim = 128, num_heads = 32, num_kv_heads = 8, dtype = "f32" },
  { op = "qk_norm", name = "b128", head_dim = 128, num_heads = 32, num_kv_heads = 8, dtype = "bf16" },
  { op = "qk_norm", name = "f64", head_dim = 64, num_heads = 8, num_kv_heads = 1, dtype = "f32" },
  { op = "qk_norm", name = "p64", head_dim = 64, num_heads = 8, num_kv_heads = 2, dtype = "f32" },
  { op = "qk_norm", name = "b64", head_dim = 64, num_heads = 32, num_kv_heads = 8, dtype = "bf16" },
  { op = "qk_norm", name = "h128", head_dim = 128, num_heads = 32, num_kv_heads = 8, dtype = "f16" },
  { op = "qk_norm", name = "f72", head_dim = 72, num_heads = 32, num_kv_heads = 8, dtype = "f32" },
  { op = "qk_norm", name = "f256", head_dim = 256, num_heads = 32, num_kv_heads = 8, dtype = "f32" },
  { op = "qk_norm", name = "hm", head_dim = 128, num_heads = 8, num_kv_heads = 8, dtype = "bf16",
    layout = "head_major" },
} }
]])
    gen(dir .. "/lf.lua", dir)
    local c = S.read(dir .. "/lf/lf_avx512.c")
    -- f32 and bf16 (its AVX512_BF16 twin too): called first for q off its
    -- line and k by whole lanes anywhere, short calls only where long ones
    -- stream; q's and k's frames each of their own, the sums' from their rows
    for _, n in ipairs({ "lf_f128_avx512", "lf_b128_avx512", "lf_b128_avx512_bf16dot", "lf_f64_avx512",
                         "lf_hm_avx512" }) do
      assert.is_truthy(c:find("static __attribute__((noinline)) " .. '__attribute__((target("', 1, true), n)
      local b = body(c, n)
      -- not 32 bytes into a line (split halves are faster there) but f32
      -- heads of 8 lines or more (f32 128)
      local qa = n == "lf_f128_avx512" and "63" or "31"
      assert.is_truthy(b:find("((uintptr_t)q & " .. qa
        .. ") != 0 && ((uintptr_t)q & 3) == 0 && ((uintptr_t)k & 3) == 0", 1, true), n)
      assert.is_truthy(b:find(n .. "_lf(tokens, q, q_stride, k, k_stride, q_w, k_w);\n    return;", 1, true), n)
      local lf = body(c, n .. "_lf")
      assert.is_truthy(lf:find("const unsigned kd_q = (unsigned)(((uintptr_t)q & 63) >> 2);", 1, true), n)
      assert.is_truthy(lf:find("const unsigned kd_k = (unsigned)(((uintptr_t)k & 63) >> 2);", 1, true), n)
      assert.is_truthy(lf:find("const unsigned kd_s = (unsigned)(((uintptr_t)xn0 & 63) >> 2);", 1, true), n)
      assert.is_truthy(lf:find("int carry = 0;", 1, true), n)
      assert.is_falsy(lf:find("_lf(tokens", 1, true), n)
    end
    -- (bf16 head_dim 128 has a long form too: pairs past 25 tokens)
    assert.is_truthy(body(c, "lf_f128_avx512"):find("&& tokens <= ", 1, true))
    assert.is_truthy(body(c, "lf_b128_avx512"):find("&& tokens <= 25) {", 1, true))
    assert.is_falsy(body(c, "lf_b64_avx512"):find("&& tokens <= ", 1, true))
    assert.is_truthy(body(c, "lf_hm_avx512"):find("&& ((q_stride * sizeof(*q)) & 63) == 0", 1, true))
    -- bf16 heads only where the runtime says the frame pays (not on Intel)
    for _, n in ipairs({ "lf_b128_avx512", "lf_b128_avx512_bf16dot", "lf_hm_avx512" }) do
      assert.is_truthy(body(c, n):find("&& kg_cpu_bf16_line_frame()", 1, true), n)
    end
    for _, n in ipairs({ "lf_f128_avx512", "lf_f64_avx512" }) do
      assert.is_falsy(body(c, n):find("kg_cpu_bf16_line_frame", 1, true), n)
    end
    -- 8 + 2 heads go in chained pairs (pair_groups), which have no twin:
    -- off alignment they beat the twin's unchained groups of 4 (run 27)
    assert.is_falsy(c:find("lf_p64_avx512_lf(", 1, true))
    assert.is_truthy(body(c, "lf_p64_avx512"):find("h += 2", 1, true))
    -- the shared line: a masked term into each row, the scales blended
    local f = body(c, "lf_f128_avx512_lf")
    assert.is_truthy(f:find("a0_1 = _mm512_mask3_fmadd_ps(l8, l8, a0_1, kmt_s);\n"
      .. "          a1_1 = _mm512_mask3_fmadd_ps(l8, l8, a1_1, kmh_s);", 1, true))
    -- the sums go to the tree in the frame's lane order (no permute)
    assert.is_truthy(f:find("hv3 = _mm512_add_ps(a3_1, a3_2);", 1, true))
    assert.is_falsy(c:find("krot", 1, true))
    -- the body in its loop's frame: q's for Q heads, k's for K heads
    assert.is_truthy(f:find("_mm512_mul_ps(_mm512_loadu_ps(ya + 128), _mm512_mask_mov_ps(vr1, kmt_q, vr0))", 1, true))
    assert.is_truthy(f:find("_mm512_mul_ps(_mm512_loadu_ps(ya + 128), _mm512_mask_mov_ps(vr1, kmt_k, vr0))", 1, true))
    assert.is_truthy(f:find("if (lastg) _mm512_mask_storeu_ps(ya + 512, kmt_q, ", 1, true))
    assert.is_truthy(f:find("const float *kvp = (const float *)((uintptr_t)k_w - 4 * kd_k);", 1, true))
    -- bf16: the shared line's two sides loaded apart, each as zeros
    -- outside its row, and no masked vdpbf16ps (GCC drops mask lanes 8-15)
    local b = body(c, "lf_b128_avx512_bf16dot_lf")
    assert.is_truthy(b:find("a0_1 = kgi_avx512_dot_sq(a0_1, _mm512_maskz_loadu_epi16(kmt2_s, na + 128));\n"
      .. "          a1_1 = kgi_avx512_dot_sq(a1_1, _mm512_maskz_loadu_epi16(kmh2_s, na + 128));", 1, true))
    assert.is_falsy(c:find("dpbf16_ps(acc, m", 1, true))
    assert.is_falsy(c:find("_mm512_mask_dpbf16_ps", 1, true))
    assert.is_falsy(c:find("_mm512_maskz_dpbf16_ps", 1, true))
    -- token-major heads all in groups of 4: the twin stages the frame's
    -- weights only, its rare per-row path converts them from memory;
    -- the plain code and head-major twins keep their staged copies
    for _, n in ipairs({ "lf_b128_avx512_lf", "lf_b128_avx512_bf16dot_lf" }) do
      local t = body(c, n)
      assert.is_falsy(t:find("ws_q_w", 1, true), n)
      assert.is_falsy(t:find("ws_k_w", 1, true), n)
      assert.is_truthy(t:find("kgi_v2_ld(q_w + 0)", 1, true), n)
      assert.is_truthy(t:find("kgi_v2_ld(k_w + 0)", 1, true), n)
      assert.is_truthy(t:find("float qvl[128]", 1, true), n)
    end
    assert.is_truthy(body(c, "lf_b128_avx512_bf16dot"):find("float ws_q_w[128]", 1, true))
    assert.is_truthy(body(c, "lf_hm_avx512_lf"):find("float ws_q_w[128]", 1, true))
    -- token-major f32 heads of 1 KiB go in groups of 4 too (the "gp" test
    -- above), so they have a twin
    assert.is_truthy(c:find("lf_f256_avx512_lf(", 1, true))
    -- not for rows under 4 lines, f16 (256-bit halves), tails, AVX2
    for _, n in ipairs({ "lf_b64_avx512", "lf_h128_avx512", "lf_f72_avx512" }) do
      assert.is_falsy(c:find(n .. "_lf", 1, true), n)
    end
    assert.is_falsy(S.read(dir .. "/lf/lf_avx2.c"):find("_lf(", 1, true))
  end)

  it("stream f32 LayerNorm rows at one offset in the realigning form, bf16 ones in the line frame (both in pairs)",
    function()
    S.write(dir .. "/lnf.lua", [[
return { name = "lnf", isa = { "scalar", "avx512" }, kernels = {
  { op = "layernorm", name = "f", dim = 4096, dtype = "f32" },
  { op = "layernorm", name = "b", dim = 4096, dtype = "bf16" },
  { op = "layernorm", name = "s", dim = 768, dtype = "bf16" },
} }
]])
    gen(dir .. "/lnf.lua", dir)
    local c = S.read(dir .. "/lnf/lnf_avx512.c")
    local frame = "(((uintptr_t)x ^ (uintptr_t)y) & 63) == 0"
    local f, b = body(c, "lnf_f_avx512"), body(c, "lnf_b_avx512")
    assert.is_falsy(f:find(frame, 1, true))
    assert.is_truthy(f:find("kgi_ntr nst = kgi_ntr_begin(yr);", 1, true))
    assert.is_truthy(f:find("(((uintptr_t)xn + 4096) + i * 4 + 0), 0, 3); kgi_ntr_put(&nst, i + 0, ", 1, true))
    assert.is_truthy(b:find(frame, 1, true))
    -- f32 rows realigned in registers also go two at a time (one stream a
    -- row of the pair); bf16 ones (kgi_ntw) one at a time
    assert.is_truthy(f:find("kgi_ntr nst = kgi_ntr_begin(yr), nstb = kgi_ntr_begin(yrb);", 1, true))
    -- each row of a pair asks for its lines 2 KiB ahead, and past its end
    -- for the row two on (the pair after next starts there, not at the
    -- row that follows, which is the pair's other row)
    assert.is_truthy(f:find("(((uintptr_t)xnb + 2048) + i * 4 + 0 + (i * 4 + 0 + 2048 >= 16384 ? "
      .. "(2 * x_stride) * 4 - 16384 : 0)), 0, 3); kgi_ntr_put(&nstb, i + 0, ", 1, true))
    -- a pair's rows no longer than that distance: the same line of the
    -- row two on
    assert.is_truthy(body(c, "lnf_s_avx512"):find("__builtin_prefetch((const void *)(((uintptr_t)xnb + "
      .. "(2 * x_stride) * 2) + i * 2 + 64), 0, 3);", 1, true))
    assert.is_falsy(b:find("kgi_ntw_begin(yrb)", 1, true))
    assert.is_truthy(b:find("kgi_ntw nst = kgi_ntw_begin(yr);", 1, true))
    -- bf16 rows in the line frame go two at a time (ln_pair_frame): rows r
    -- and r + 1's frame lines inside the sums of rows r + 2 and r + 3, row
    -- r's tail ending at the row's last chunk with row r + 1's head (one
    -- line where rows are end to end), row r + 1's tail carried in cv; a
    -- pair that is not plain, and the last rows, one at a time through
    -- the frame's own row
    local fr = b:sub((b:find(frame, 1, true)))
    fr = fr:sub(1, fr:find("_mm_sfence();", 1, true))
    assert.is_truthy(fr:find("for (size_t r = 0; r < rows; r += 2) {", 1, true))
    assert.is_truthy(fr:find(", hdb = kgi_v2_pack_ta(kgi_v2_fma(kgi_v2_fma(kgi_v2_ldm(kmh2, xab + 0), "
      .. "vrb, vab), kgi_v2_ld(fl_gamma + 0), kgi_v2_ld(fl_beta + 0)));", 1, true))
    -- each frame line goes out with the sums chunk at its own offset, after
    -- that chunk's loads (not one line ahead: 4 KiB aliasing, RESULTS run
    -- 61); line 0 of the pair's rows goes before and after the loop
    assert.is_truthy(fr:find("(((uintptr_t)xnb + 2048) + i * 2 + 0 + (i * 2 + 0 + 2048 >= 8192 ? "
      .. "(2 * x_stride) * 2 - 8192 : 0)), 0, 3); "
      .. "if (i + 0 != 0) { { const kgi_v2 gq = kgi_v2_ld(fl_gamma + i + 0), bq = kgi_v2_ld(fl_beta + i + 0); "
      .. "_mm512_stream_si512((void *)(ya + i + 0), ", 1, true))
    assert.is_truthy(fr:find("const kgi_v2 v2 = (kgi_v2_ld(xn + i + 32));", 1, true))
    assert.is_truthy(fr:find("{ const kgi_v2 gq = kgi_v2_ld(fl_gamma + i + 32), bq = kgi_v2_ld(fl_beta + i + 32); "
      .. "_mm512_stream_si512((void *)(ya + i + 32), ", 1, true))
    assert.is_true(fr:find("const kgi_v2 v2 = (kgi_v2_ld(xn + i + 32));", 1, true)
      < fr:find("_mm512_stream_si512((void *)(ya + i + 32), ", 1, true))
    -- a pair's gamma and beta are loaded (and split) once for both rows:
    -- aligned, realigned and line-frame pairs
    -- (rows of 4096 split gamma and beta themselves: staged, the two would
    -- take 32 KiB of L1 next to the rows, NT_WSTAGE_MAX in pack.lua)
    assert.is_truthy(b:find("{ const kgi_v2 gq = kgi_v2_ld(gamma + i + 0), bq = kgi_v2_ld(beta + i + 0); ", 1, true))
    assert.is_falsy(b:find("wn_gamma", 1, true))
    assert.is_truthy(b:find("_mm512_stream_si512((void *)(yrb + i + 0), kgi_v2_pack_ta(kgi_v2_fma(kgi_v2_fma("
      .. "kgi_v2_ld(xrb + i + 0), vrb, vab), gq, bq))); }", 1, true))
    assert.is_truthy(f:find("kgi_ntr_put(&nstb, i + 0, _mm512_fmadd_ps(_mm512_fmadd_ps(_mm512_loadu_ps(xrb + i + 0), "
      .. "vrb, vab), gq, bq)); }", 1, true))
    assert.is_truthy(fr:find("kgi_v2_ld(xab + i + 32), vrb, vab), gq, bq))); }", 1, true))
    assert.is_falsy(fr:find("if (i + 128 < 4096) {", 1, true))
    assert.is_truthy(fr:find("{ const __m512i tl = kgi_v2_pack_ta(kgi_v2_fma(kgi_v2_fma(kgi_v2_ldm(kmt2, xa + 4096), "
      .. "vr, va), ", 1, true))
    assert.is_truthy(fr:find("if (yc) _mm512_stream_si512((void *)(yab), _mm512_mask_mov_epi16(tl, kmh2, hdb));",
      1, true))
    assert.is_truthy(fr:find("cv = kgi_v2_pack_ta(kgi_v2_fma(kgi_v2_fma(kgi_v2_ldm(kmt2, xab + 4096), vrb, vab), ",
      1, true))
    assert.is_truthy(fr:find("for (size_t r1 = r; r1 < r + 2 && r1 < rows; r1++) {", 1, true))
    -- the pairs where the runtime says so (kg_cpu_ln_frame_pairs: not on
    -- AMD Zen 4), else the frame's rows one at a time
    local ask = fr:find("    if (kg_cpu_ln_frame_pairs()) {\n", 1, true)
    assert.is_truthy(ask and ask < fr:find("for (size_t r = 0; r < rows; r += 2) {", 1, true))
    local rest = b:sub((b:find(frame, 1, true)) + #fr - 1) -- from the pairs' _mm_sfence
    assert.is_truthy(rest:find("^_mm_sfence%(%);\n    return;\n    }\n    for %(size_t r = 0; r < rows; r%+%+%) {"))
    assert.is_falsy(f:find("kg_cpu_ln_frame_pairs", 1, true))
  end)

  it("stream RMSNorm rows at one offset in the line frame, each line after its sums chunk's loads (AVX-512)",
    function()
    S.write(dir .. "/rmf.lua", [[
return { name = "rmf", isa = { "scalar", "avx2", "avx512" }, kernels = {
  { op = "rmsnorm", name = "f", dim = 4096, dtype = "f32" },
  { op = "rmsnorm", name = "b", dim = 4096, dtype = "bf16" },
  { op = "rmsnorm", name = "g", dim = 4096, dtype = "f16" },
  { op = "rmsnorm", name = "t", dim = 1000, dtype = "f32" },
} }
]])
    gen(dir .. "/rmf.lua", dir)
    local c = S.read(dir .. "/rmf/rmf_avx512.c")
    local frame = "(((uintptr_t)x ^ (uintptr_t)y) & 63) == 0"
    local f = body(c, "rmf_f_avx512")
    local fr = f:sub((f:find(frame, 1, true)))
    fr = fr:sub(1, fr:find("_mm_sfence();", 1, true))
    -- not where the runtime asks for two streams (Intel: kg_cpu_nt_split)
    assert.is_truthy(fr:find("&& !kg_cpu_nt_split()", 1, true))
    assert.is_truthy(fr:find("float fl_w[4112] __attribute__((aligned(64)));", 1, true))
    -- the next row's sums from its own loads (the aligned rows' bits), row
    -- r's line i + 16 streamed after the load of chunk i + 16, from x's
    -- and the weights' lines at the same place
    local ld = fr:find("const __m512 v2 = (_mm512_loadu_ps(xn + i + 16));", 1, true)
    local st = fr:find("_mm512_stream_ps(ya + i + 16, _mm512_mul_ps(_mm512_mul_ps(_mm512_loadu_ps(xa + i + 16), vr), "
      .. "_mm512_loadu_ps(fl_w + i + 16)));", 1, true)
    assert.is_truthy(ld and st and ld < st)
    assert.is_falsy(fr:find("< 4096) {", 1, true))
    -- line 0 with the carried part of the row before; the tail kept in cv
    assert.is_truthy(fr:find("if (i + 0 != 0) {", 1, true))
    assert.is_truthy(fr:find("if (cy) _mm512_stream_ps(ya, _mm512_mask_mov_ps(cv, kmh, hd));", 1, true))
    assert.is_truthy(fr:find("cv = _mm512_mul_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(kmt, xa + 4096), vr), "
      .. "_mm512_loadu_ps(fl_w + 4096)); if (yc) cy = 1; else _mm512_mask_storeu_ps(ya + 4096, kmt, cv);", 1, true))
    -- before the realigning stream, which the other offsets keep
    assert.is_true((f:find(frame, 1, true)) < (f:find("kgi_ntr nst = kgi_ntr_begin(yr);", 1, true)))
    -- bf16 (plain and the AVX512_BF16 twin) too; not f16 (256-bit halves),
    -- rows that are not whole lines, AVX2
    assert.is_truthy(body(c, "rmf_b_avx512"):find(frame, 1, true))
    assert.is_truthy(body(c, "rmf_b_avx512_bf16dot"):find(frame, 1, true))
    assert.is_falsy(body(c, "rmf_g_avx512"):find(frame, 1, true))
    assert.is_falsy(body(c, "rmf_t_avx512"):find(frame, 1, true))
    assert.is_falsy(S.read(dir .. "/rmf/rmf_avx2.c"):find(frame, 1, true))
  end)

  it("copy weights off line alignment once per call where rows read them from memory (AVX-512)", function()
    S.write(dir .. "/wa.lua", [[
return { name = "wa", isa = { "scalar", "avx2", "avx512" }, kernels = {
  { op = "rmsnorm", name = "f8k", dim = 8192, dtype = "f32" },
  { op = "rmsnorm", name = "b8k", dim = 8192, dtype = "bf16" },
  { op = "rmsnorm", name = "b1k", dim = 1024, dtype = "bf16" },
  { op = "rmsnorm", name = "f64", dim = 64, dtype = "f32" },
  { op = "layernorm", name = "l8k", dim = 8192, dtype = "f32" },
  { op = "layernorm", name = "l16k", dim = 16384, dtype = "f32" },
} }
]])
    gen(dir .. "/wa.lua", dir)
    local c = S.read(dir .. "/wa/wa_avx512.c")
    assert.is_truthy(c:find("#define KG_WALIGN_ROWS 8", 1, true))
    -- the kernel hands such calls to its helper <sym>_wa after the empty
    -- call's return, before any row
    local f = body(c, "wa_f8k_avx512")
    local call = "  if (rows >= KG_WALIGN_ROWS && (((uintptr_t)w) & 63)) {\n"
      .. "    wa_f8k_avx512_wa(rows, x, x_stride, w, y, y_stride, rstd);\n    return;\n  }"
    assert.is_truthy(f:find(call, 1, true))
    assert.is_truthy(f:find("return;", 1, true) < f:find(call, 1, true))
    assert.is_truthy(f:find(call, 1, true) < f:find("KG_USE_NT(", 1, true))
    -- which copies them and calls the kernel on the copies; its frame
    -- holds the arrays, the kernel's does not
    assert.is_truthy(c:find("void wa_f8k_avx512_wa(size_t rows, const float *x, size_t x_stride, const float *w, "
      .. "float *y, size_t y_stride, float *rstd)\n{\n"
      .. "  float wa_w[8192] __attribute__((aligned(64)));\n"
      .. "  memcpy(wa_w, w, sizeof wa_w);\n"
      .. "  wa_f8k_avx512(rows, x, x_stride, wa_w, y, y_stride, rstd);\n}", 1, true))
    assert.is_falsy(f:find("wa_w[", 1, true))
    -- the AVX512_BF16 twin too
    assert.is_truthy(c:find("rstd)\n{\n  kg_bf16 wa_w[8192] __attribute__((aligned(64)));\n"
      .. "  memcpy(wa_w, w, sizeof wa_w);\n  wa_b8k_avx512_bf16dot(rows, x, x_stride, wa_w, ", 1, true))
    -- both of LayerNorm's (64 KiB), none past that
    assert.is_truthy(body(c, "wa_l8k_avx512"):find("if (rows >= KG_WALIGN_ROWS && "
      .. "(((uintptr_t)gamma | (uintptr_t)beta) & 63)) {", 1, true))
    assert.is_truthy(c:find("  wa_l8k_avx512(rows, x, x_stride, wa_gamma, wa_beta, "
      .. "y, y_stride, mean, rstd);", 1, true))
    assert.is_falsy(c:find("wa_l16k_avx512_wa", 1, true))
    -- not for weights staged split (16-bit rows up to 1024) or held in registers
    assert.is_falsy(c:find("wa_b1k_avx512_wa", 1, true))
    assert.is_falsy(c:find("wa_f64_avx512_wa", 1, true))
    -- nor on other tables
    assert.is_falsy(S.read(dir .. "/wa/wa_avx2.c"):find("_wa(", 1, true))
    assert.is_falsy(S.read(dir .. "/wa/wa_scalar.c"):find("_wa(", 1, true))
  end)

  it("give AVX-512 streamed RMSNorm rows of whole lines up to 4 KiB a line-frame twin", function()
    S.write(dir .. "/lr.lua", [[
return { name = "lr", isa = { "scalar", "avx2", "avx512" }, kernels = {
  { op = "rmsnorm", name = "f1k", dim = 1024, dtype = "f32" },
  { op = "rmsnorm", name = "b1k", dim = 1024, dtype = "bf16" },
  { op = "rmsnorm", name = "b2k", dim = 2048, dtype = "bf16" },
  { op = "rmsnorm", name = "b4k", dim = 4096, dtype = "bf16" },
  { op = "rmsnorm", name = "f1000", dim = 1000, dtype = "f32" },
  { op = "rmsnorm", name = "h1k", dim = 1024, dtype = "f16" },
  { op = "rmsnorm", name = "f128", dim = 128, dtype = "f32" },
} }
]])
    gen(dir .. "/lr.lua", dir)
    local c = S.read(dir .. "/lr/lr_avx512.c")
    for _, n in ipairs({ "lr_f1k_avx512", "lr_b1k_avx512", "lr_b1k_avx512_bf16dot", "lr_b2k_avx512" }) do
      local b = body(c, n)
      -- y's frame: y off alignment (bf16 not 32 bytes in), x anywhere off it too (not y)
      local ya = n == "lr_f1k_avx512" and "63" or "31"
      assert.is_truthy(b:find("if (((uintptr_t)y & " .. ya .. ") != 0 && ((uintptr_t)y & 3) == 0"
        .. " && ((uintptr_t)x & 63) != 0 && (const void *)x != (const void *)y", 1, true), n)
      assert.is_truthy(b:find("&& rows * y_stride * sizeof(*y) < KG_NT_BYTES) {\n    " .. n
        .. "_lf(rows, x, x_stride, w, y, y_stride, rstd);\n    return;", 1, true), n)
      local lf = body(c, n .. "_lf")
      assert.is_truthy(lf:find("float wl[", 1, true), n)
      assert.is_falsy(lf:find("_lf(rows", 1, true), n)
      assert.is_falsy(lf:find("stream", 1, true), n)
    end
    -- f32 1024: the aligned code's four blocks of 256, a line across two
    -- of them summed into both (masked) and the block finished at once
    local f = body(c, "lr_f1k_avx512_lf"):gsub("\n%s+", "\n")
    assert.is_truthy(f:find("sq_1_1 = _mm512_mask3_fmadd_ps(sql16, sql16, sq_1_1, kmt);\n"
      .. "sq_2_1 = _mm512_mask3_fmadd_ps(sql16, sql16, sq_2_1, kmh);", 1, true))
    assert.is_truthy(f:find("sq += (double)kgi_avx512_hsum(_mm512_add_ps(", 1, true))
    assert.is_falsy(f:find("permutexvar", 1, true))
    -- bf16 1024 two rows ahead; 2048 (4 KiB) one; no masked vdpbf16ps:
    -- a line across two blocks is loaded once for each, as zeros outside
    assert.is_truthy(body(c, "lr_b1k_avx512_lf"):find("rn = (float)(1.0 / sqrt(sn2 / 1024", 1, true))
    assert.is_falsy(body(c, "lr_b2k_avx512_lf"):find("sn2", 1, true))
    local d = body(c, "lr_b1k_avx512_bf16dot_lf")
    assert.is_truthy(d:find("sq_1_1 = kgi_avx512_dot_sq(sq_1_1, _mm512_maskz_loadu_epi16(kmh2, na + 0));", 1, true))
    assert.is_truthy(d:find("sq_1_1 = kgi_avx512_dot_sq(sq_1_1, _mm512_maskz_loadu_epi16(kmt2, na + 1024));", 1, true))
    assert.is_falsy(S.read(dir .. "/lr/lr_avx512.c"):find("_mm512_mask_dpbf16_ps", 1, true))
    -- not past 4 KiB, not off whole lines, f16, register rows, AVX2
    for _, n in ipairs({ "lr_b4k_avx512", "lr_f1000_avx512", "lr_h1k_avx512", "lr_f128_avx512" }) do
      assert.is_falsy(c:find(n .. "_lf", 1, true), n)
    end
    assert.is_falsy(S.read(dir .. "/lr/lr_avx2.c"):find("_lf(", 1, true))
  end)

  it("sum two rows ahead only in 16-bit RMSNorm rows of at most 2 KiB, the next scale halfway", function()
    S.write(dir .. "/ah.lua", [[
return { name = "ah", isa = { "scalar", "avx2", "avx512" }, kernels = {
  { op = "rmsnorm", name = "b1k", dim = 1024, dtype = "bf16" },
  { op = "rmsnorm", name = "h1k", dim = 1024, dtype = "f16" },
  { op = "rmsnorm", name = "b1025", dim = 1025, dtype = "bf16" },
  { op = "rmsnorm", name = "b100", dim = 100, dtype = "bf16" },
  { op = "rmsnorm", name = "f512", dim = 512, dtype = "f32" },
} }
]])
    gen(dir .. "/ah.lua", dir)
    local two = "const kg_bf16 *xn = r + 2 < rows ? xr + 2 * x_stride : NULL;"
    local one = "const kg_bf16 *xn = r + 1 < rows ? xr + x_stride : NULL;"
    local rn = "rn = (float)(1.0 / sqrt(sn2 / 1024 + (double)1e-06f));"
    -- the next row's scale comes from its finished sum, computed halfway
    -- through the step: the fused loop split at element 512 around it
    local function mid(step)
      return "i < b %+ 512; i %+= " .. step .. "%) {.-}%s+" .. (rn:gsub("%p", "%%%0"))
        .. "%s+for %(size_t i = b %+ 512;"
    end
    local c = S.read(dir .. "/ah/ah_avx512.c")
    local a2 = S.read(dir .. "/ah/ah_avx2.c")
    local cases = { { c, "ah_b1k_avx512", 128 }, { c, "ah_b1k_avx512_bf16dot", 128 }, { a2, "ah_b1k_avx2", 64 } }
    for _, t in ipairs(cases) do
      local b = body(t[1], t[2])
      assert.is_truthy(b:find(two, 1, true), t[2])
      assert.is_truthy(b:find(mid(t[3])), t[2])
      assert.is_truthy(b:find("const float rs = rc;", 1, true), t[2])
    end
    -- the line-frame twin (rows off line alignment) too: after line 16 of 32
    for _, n in ipairs({ "ah_b1k_avx512_lf", "ah_b1k_avx512_bf16dot_lf" }) do
      local lf = body(c, n)
      assert.is_truthy(lf:find(two, 1, true), n)
      assert.is_truthy(lf:find("const float rc = rn;\n%s*if %(KG_UNLIKELY"), n)
      assert.is_truthy(lf:find("%(ya %+ 512%).-\n%s*" .. (rn:gsub("%p", "%%%0")) .. "\n%s*const [%w_]+ sql17 ="), n)
    end
    assert.is_truthy(body(c, "ah_h1k_avx512"):find("r + 2 < rows ? xr + 2 * x_stride", 1, true))
    assert.is_truthy(body(a2, "ah_h1k_avx2"):find("r + 2 < rows ? xr + 2 * x_stride", 1, true))
    assert.is_truthy(body(c, "ah_b1025_avx512"):find(one, 1, true))
    assert.is_truthy(body(c, "ah_f512_avx512"):find("r + 1 < rows ? xr + x_stride", 1, true))
    assert.is_falsy(body(a2, "ah_f512_avx2"):find("sn2", 1, true))
    -- a row of one loop step (AVX2, 100 bf16: 64 + a tail of 36) takes
    -- the scale after its loop and tail
    local b100 = body(a2, "ah_b100_avx2")
    assert.is_truthy(b100:find(two, 1, true))
    local at = b100:find("for (size_t i = 0; i < 64; i += 64) {", 1, true)
    local rn100 = "rn = (float)(1.0 / sqrt(sn2 / 100 + (double)1e-06f));"
    assert.is_truthy(at)
    assert.is_truthy(b100:find(rn100, at, true))
  end)

  it("chain a call's QK-norm groups into one pipeline", function()
    S.write(dir .. "/ch.lua", [[
return { name = "ch", isa = { "scalar", "avx2", "avx512" }, kernels = {
  { op = "qk_norm", name = "b", head_dim = 128, num_heads = 32, num_kv_heads = 8, dtype = "bf16" },
  { op = "qk_norm", name = "f", head_dim = 128, num_heads = 32, num_kv_heads = 8, dtype = "f32" },
  { op = "qk_norm", name = "odd", head_dim = 128, num_heads = 8, num_kv_heads = 2, dtype = "bf16" },
  { op = "qk_norm", name = "q4", head_dim = 64, num_heads = 4, num_kv_heads = 4, dtype = "bf16" },
  { op = "qk_norm", name = "hm", head_dim = 128, num_heads = 8, num_kv_heads = 4, dtype = "bf16",
    layout = "head_major" },
  { op = "qk_norm", name = "hmf", head_dim = 128, num_heads = 8, num_kv_heads = 4, dtype = "f32",
    layout = "head_major" },
} }
]])
    gen(dir .. "/ch.lua", dir)
    local c = S.read(dir .. "/ch/ch_avx512.c")
    local function grouped(name) return body(c, name) end
    -- 32 + 8 heads on AVX2: the first group summed once per call; the last
    -- Q step sums K's first group, the last K step the next token's first
    -- Q group
    local a2 = body(S.read(dir .. "/ch/ch_avx2.c"), "ch_b_avx2")
    local _, prologues = a2:gsub("__m256d snv;", "")
    assert.equals(1, prologues)
    assert.is_truthy(a2:find("h + 4 < 32 ? q + t * q_stride + (h + 4) * 128 : k + t * k_stride", 1, true))
    assert.is_truthy(a2:find("const int more = h + 4 < 8 || t + 1 < tokens;", 1, true))
    assert.is_truthy(a2:find(": q + (t + 1 < tokens ? t + 1 : t) * q_stride;", 1, true))
    assert.is_falsy(a2:find("rqc", 1, true))
    -- AVX-512 runs two groups ahead: the first two groups summed once per
    -- call (the second is Q's, or K's first where Q has one group); a Q
    -- step sums the group two on, in Q, in K or in the next token's Q
    local b = grouped("ch_b_avx512")
    -- (one-token calls first take their own block, decode in pairs, with a
    -- prologue of its own: left out here)
    local d1 = b:find("  if (tokens == 1) {\n", 1, true)
    assert.is_truthy(d1)
    b = b:sub(1, d1) .. b:sub((b:find("\n    return;\n  }\n", d1, true)))
    _, prologues = b:gsub("__m256d snv;", "")
    assert.equals(1, prologues)
    assert.is_truthy(b:find("const kg_bf16 *xn3 = q + (4 + 3) * 128;", 1, true))
    assert.is_truthy(b:find("const int more = h + 8 < 40 || t + 1 < tokens;", 1, true))
    assert.is_truthy(b:find("(h + 8) < 32 ? q + t * q_stride + (h + 8) * 128 : (h + 8) - 32 < 8 ? k + t * k_stride + "
      .. "((h + 8) - 32) * 128 : q + (t + 1 < tokens ? t + 1 : t) * q_stride + ((h + 8) - 40) * 128;", 1, true))
    assert.is_truthy(b:find("const int more = h + 8 < 8 || t + 1 < tokens;", 1, true))
    assert.is_truthy(b:find("(h + 8) < 8 ? k + t * k_stride + (h + 8) * 128 : (h + 8) - 8 < 32 ? q + (t + 1 < tokens ? "
      .. "t + 1 : t) * q_stride + ((h + 8) - 8) * 128 : k + (t + 1 < tokens ? t + 1 : t) * k_stride + "
      .. "((h + 8) - 40) * 128;", 1, true))
    assert.is_truthy(b:find("ssc = snv;\n      rqc = kgi_avx512_rs4(snv, 128, (double)1e-06f);", 1, true))
    -- one Q group: the second group is K's first, and a step's group two
    -- on is the next token's group in the same loop
    local q4 = grouped("ch_q4_avx512")
    assert.is_truthy(q4:find("const kg_bf16 *xn3 = k + 3 * 64;", 1, true))
    assert.is_truthy(q4:find("const int more = h + 8 < 8 || t + 1 < tokens;", 1, true))
    assert.is_truthy(q4:find("const int more = h + 8 < 4 || t + 1 < tokens;", 1, true))
    -- bf16 on AVX-512: the second pass loads and splits its rows again
    -- (no staging buffer: slower on a Zen 5 core, RESULTS run 11)
    assert.is_truthy(b:find("kgi_v2_ld(xn0 + 0)", 1, true))
    assert.is_truthy(b:find("kgi_v2_mul(kgi_v2_ld(xr3 + 96), vr3)", 1, true))
    assert.is_falsy(b:find("xs[", 1, true))
    -- the pair table's partial sum adds its halves; rs goes to both
    assert.is_truthy(b:find("hv3 = kgi_v2_part(tn1);", 1, true))
    assert.is_truthy(b:find("const kgi_v2 vr0 = kgi_v2_dup(_mm512_permute_ps(rq_b, 0));", 1, true))
    -- f32 chains but has nothing to stage; AVX2 bf16 neither
    local f = grouped("ch_f_avx512")
    assert.is_truthy(f:find("(h + 8) < 32 ? q + t * q_stride + (h + 8) * 128 : (h + 8) - 32 < 8 ? k", 1, true))
    assert.is_falsy(f:find("xs[", 1, true))
    assert.is_falsy(body(S.read(dir .. "/ch/ch_avx2.c"), "ch_b_avx2"):find("xs[", 1, true))
    -- 2 K heads (no group of 4) and head-major rows: one prologue per loop
    -- of groups, nothing staged
    for _, name in ipairs({ "ch_odd_avx512", "ch_hm_avx512" }) do
      local g = grouped(name)
      assert.is_falsy(g:find("xs[", 1, true), name)
      assert.is_truthy(g:find("const int more = ", 1, true), name)
    end
    -- AVX2 and AVX-512 (pair_groups): 8 + 2 heads go in chained pairs, one
    -- prologue per call, no head left to go alone
    for _, name in ipairs({ "ch_odd_avx2", "ch_odd_avx512" }) do
      local odd2 = name:find("avx2") and body(S.read(dir .. "/ch/ch_avx2.c"), name) or grouped(name)
      _, prologues = odd2:gsub("double sn0, sn1;", "")
      assert.equals(1, prologues, name)
      assert.is_truthy(odd2:find("for (size_t h = 0; h < 8; h += 2) {", 1, true), name)
      assert.is_truthy(odd2:find("const kg_bf16 *nx = h + 2 < 8 ? q + t * q_stride + (h + 2) * 128 : k + t * k_stride;",
        1, true), name)
      assert.is_truthy(odd2:find("const int more = h + 2 < 2 || t + 1 < tokens;", 1, true), name)
      assert.is_falsy(odd2:find("h++", 1, true), name)
    end
    -- and without the line-frame twin, built on groups of 4: chained pairs
    -- with split loads beat its unchained groups off alignment (run 27)
    assert.is_falsy(c:find("ch_odd_avx512_lf(", 1, true))
    -- AVX2 and AVX-512 (head_major_groups): head-major calls of under 4
    -- tokens group each token's heads across heads, the next group a head
    -- stride on; longer calls and AVX-512's line frame keep head by head
    local hm2 = body(S.read(dir .. "/ch/ch_avx2.c"), "ch_hm_avx2")
    assert.is_truthy(hm2:find("if (tokens < 4) {", 1, true))
    assert.is_truthy(hm2:find("const kg_bf16 *nx = q + t * 128 + (h + 4) * q_stride;", 1, true))
    assert.is_truthy(hm2:find("const kg_bf16 *xn3 = nx + 3 * q_stride;", 1, true))
    assert.is_truthy(hm2:find("const kg_bf16 *xn3 = nx + 3 * k_stride;", 1, true))
    assert.is_truthy(hm2:find("for (size_t h = 0; h < 8; h++) {", 1, true))
    assert.is_truthy(grouped("ch_hm_avx512"):find("tokens < 4", 1, true))
    assert.is_truthy(grouped("ch_hm_avx512"):find("const kg_bf16 *xn3 = nx + 3 * k_stride;", 1, true))
    if c:find("void ch_hm_avx512_lf(", 1, true) then
      assert.is_falsy(body(c, "ch_hm_avx512_lf"):find("tokens < 4", 1, true))
    end
    -- head-major rows ask for the lines 4 KiB ahead in their head (AVX2,
    -- NEON; AVX-512 1 KiB), where the runtime says so (Zen 5) 16 KiB for
    -- 16-bit heads, 4 KiB for f32 ones; token-major ones do not use that
    -- distance
    local zen5 = "const size_t pfh = kg_cpu_prefetch_zen5() ? "
    assert.is_truthy(hm2:find(zen5 .. "16384 : 4096;", 1, true))
    assert.is_truthy(req(hm2, "yr0", "pfh", 0, 2))
    -- (into L2 on every CPU: the L1 switch is token-major's)
    assert.is_falsy(hm2:find("pl1", 1, true))
    assert.is_falsy(grouped("ch_hm_avx512"):find("pl1", 1, true))
    assert.is_truthy(grouped("ch_hm_avx512"):find(zen5 .. "16384 : 1024;", 1, true))
    assert.is_truthy(grouped("ch_hmf_avx512"):find(zen5 .. "4096 : 1024;", 1, true))
    -- (AVX2 f32: the same 4 KiB either way, no question asked)
    local hmf2 = body(S.read(dir .. "/ch/ch_avx2.c"), "ch_hmf_avx2")
    assert.is_truthy(hmf2:find("const size_t pfh = 4096;", 1, true))
    assert.is_falsy(hmf2:find("kg_cpu_prefetch_zen5", 1, true))
    assert.is_falsy(grouped("ch_b_avx512"):find("pfh", 1, true))
    -- head-major f32 calls past 256 KiB of heads (AVX2: 2 MiB,
    -- group_f32_bytes) stream row by row, as token-major ones do; shorter
    -- ones keep groups of 4 along the head
    for name, most in pairs({ ch_hmf_avx2 = 341, ch_hmf_avx512 = 42 }) do
      local hf = name:find("avx2") and body(S.read(dir .. "/ch/ch_avx2.c"), name) or grouped(name)
      -- the short form ends at its last return (the first is decode's)
      local cut = hf:find("if (tokens <= " .. most .. ") {", 1, true)
      assert.is_truthy(cut, name)
      while hf:find("    return;\n  }\n", cut + 1, true) do cut = hf:find("    return;\n  }\n", cut + 1, true) end
      assert.is_truthy(hf:sub(1, cut):find("t += 4) {", 1, true), name)
      assert.is_falsy(hf:sub(cut):find("t += 4", 1, true), name)
      assert.is_truthy(hf:sub(cut):find("for (size_t t = 0; t < tokens; t++) {", 1, true), name)
    end
  end)
end)
