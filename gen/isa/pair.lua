-- isa/pair.lua: what the even/odd bf16 tables of isa/avx512.lua and
-- isa/avx2.lua share.  A pair holds 2 x B.W bf16 elements as two f32
-- vectors of the ISA's base table B: e (the even elements) and o (the odd
-- ones); every elementwise op is B's op on both halves.  The ISA keeps what
-- differs: loads (split), stores (packers), masks, staging layout.
local M = {}

-- Why: the Lua side of the shared ops, calls of the C helpers that
-- M.c_types / M.c_ops emit (prefix pfx, double-lane prefix wpfx); fills P
-- in place and returns P's dtype check.
function M.ops(P, B, pfx, wpfx)
  P.vt, P.wide_vt = pfx, wpfx
  local function need(dtype)
    if dtype ~= "bf16" then error(B.name .. " even/odd table: bf16 only, got " .. tostring(dtype)) end
  end
  local function call(name, ...) return pfx .. "_" .. name .. "(" .. table.concat({ ... }, ", ") .. ")" end
  function P.round(dtype, v) need(dtype) return call("round", v) end
  function P.load_staged(name, off) return call("lds", name .. " + (" .. off .. ")") end
  -- a pair from a raw vector of 2 x B.W bf16 (kernels/pipe.lua)
  function P.split_raw(u) return call("split", u) end
  function P.zero() return call("set1", "0.0f") end
  function P.set1(s) return call("set1", s) end
  function P.add(a, b) return call("add", a, b) end
  function P.sub(a, b) return call("sub", a, b) end
  function P.mul(a, b) return call("mul", a, b) end
  function P.fma(a, b, c) return call("fma", a, b, c) end
  function P.hsum(v) return call("hsum", v) end
  if B.fmam then
    function P.fmam(a, b, c, m) return call("fmam", a, b, c, m) end
    function P.blend(m, a, b) return call("blend", m, a, b) end
  end
  function P.wide_zero() return wpfx .. "_zero()" end
  function P.wide_lo(v) return wpfx .. "_lo(" .. v .. ")" end
  function P.wide_hi(v) return wpfx .. "_hi(" .. v .. ")" end
  function P.wide_add(a, b) return wpfx .. "_add(" .. a .. ", " .. b .. ")" end
  function P.wide_hsum(v) return wpfx .. "_hsum(" .. v .. ")" end
  function P.prelude(attr) return B.prelude(attr) end
  if B.g4 then
    -- groups of 4 (B.g4): a pair's partial is its halves added, and a
    -- row's rs goes to both halves
    P.g4 = {}
    for key, f in pairs(B.g4) do P.g4[key] = f end
    function P.g4.part(v) return call("part", v) end
    function P.g4.get(r, g) return call("dup", B.g4.get(r, g)) end
  end
  return need
end

-- Why: B.for_dtype: bf16 kernels take P ("hf": its stores round to nearest
-- even) or its twin whose stores are `store_ta` ("single": ties away).
-- f16 kernels take B with B.f16 (staging of converted weights: stage,
-- load_staged) where B has it, else B itself.
function M.for_dtype(B, P, store_ta, store_nt_ta, nt_value_ta)
  local PS = {}
  for key, f in pairs(P) do PS[key] = f end
  PS.store, PS.store_nt, PS.nt_value = store_ta, store_nt_ta, nt_value_ta
  local B16 = B.f16 and setmetatable({ stage = B.f16.stage, load_staged = B.f16.load_staged }, { __index = B }) or B
  return function(dtype, rounding)
    if dtype == "bf16" then return rounding == "hf" and P or PS end
    if dtype == "f16" then return B16 end
    return B
  end
end

-- Why: the pair types, before the ISA's own helpers that use them.
function M.c_types(B, pfx, wpfx, isa)
  return string.format([[
/* %d bf16 elements as f32: e holds elements 0, 2, 4 ..., o elements 1, 3,
 * 5 ... (bf16 kernels; see isa/%s.lua). */
typedef struct { %s e, o; } %s;
/* Double lanes of half a %s, its even and odd elements added (LayerNorm's
 * mean): one vector, not a pair, so that two rows' sums fit the registers. */
typedef %s %s;
]], 2 * B.W, isa, B.vt, pfx, pfx, B.wide_vt, wpfx)
end

-- Why: the C helpers behind M.ops, each B's primitive on both halves;
-- staging stores and loads whole halves at `half` floats apart with the
-- aligned intrinsics store_a / load_a (the stack arrays are aligned).
function M.c_ops(B, pfx, wpfx, half, store_a, load_a)
  local out = {}
  local function fn(ret, name, args, body)
    out[#out + 1] = string.format("static inline __attribute__((unused)) ATTR %s %s(%s)\n{\n%s\n}\n",
      ret, name, args, body)
  end
  local function pair(t, e, o) return string.format("  %s r = { %s, %s };\n  return r;", t, e, o) end
  local function both(t, f) return pair(t, f("e"), f("o")) end
  out[#out + 1] = string.format("/* Why: stores %d weights as even/odd f32 once per call (the ISA's P.stage), so\n"
    .. " * rows read them back with %s_lds instead of splitting them again. */", 2 * B.W, pfx)
  fn("void", pfx .. "_stage", "float *dst, " .. pfx .. " v",
    string.format("  %s(dst, v.e);\n  %s(dst + %d, v.o);", store_a, store_a, half))
  fn(pfx, pfx .. "_lds", "const float *p", pair(pfx, load_a .. "(p)", string.format("%s(p + %d)", load_a, half)))
  fn(pfx, pfx .. "_set1", "float s", pair(pfx, B.set1("s"), B.set1("s")))
  fn(pfx, pfx .. "_dup", B.vt .. " v", pair(pfx, "v", "v"))
  fn(B.vt, pfx .. "_part", pfx .. " v", "  return " .. B.add("v.e", "v.o") .. ";")
  for _, op in ipairs({ "add", "sub", "mul" }) do
    fn(pfx, pfx .. "_" .. op, pfx .. " a, " .. pfx .. " b",
      both(pfx, function(h) return B[op]("a." .. h, "b." .. h) end))
  end
  fn(pfx, pfx .. "_fma", pfx .. " a, " .. pfx .. " b, " .. pfx .. " c",
    both(pfx, function(h) return B.fma("a." .. h, "b." .. h, "c." .. h) end))
  if B.fmam then
    local mt = "__mmask" .. B.W
    fn(pfx, pfx .. "_fmam", pfx .. " a, " .. pfx .. " b, " .. pfx .. " c, " .. mt .. " m",
      both(pfx, function(h) return B.fmam("a." .. h, "b." .. h, "c." .. h, "m") end))
    fn(pfx, pfx .. "_blend", mt .. " m, " .. pfx .. " a, " .. pfx .. " b",
      both(pfx, function(h) return B.blend("m", "a." .. h, "b." .. h) end))
  end
  fn("float", pfx .. "_hsum", pfx .. " v", "  return " .. B.hsum(pfx .. "_part(v)") .. ";")
  fn(pfx, pfx .. "_round", pfx .. " v", both(pfx, function(h) return B.round("bf16", "v." .. h) end))
  -- the double lanes of a pair's half: its even and odd elements added as
  -- doubles on the way in (two bf16 values, exact in double unless 45
  -- binades apart), one vector where a pair spilled: a LayerNorm bf16 row
  -- pair's sums in half the registers (bench/RESULTS.md run 48)
  fn(wpfx, wpfx .. "_zero", "void", "  return " .. B.wide_zero() .. ";")
  fn(wpfx, wpfx .. "_lo", pfx .. " v", "  return " .. B.wide_add(B.wide_lo("v.e"), B.wide_lo("v.o")) .. ";")
  fn(wpfx, wpfx .. "_hi", pfx .. " v", "  return " .. B.wide_add(B.wide_hi("v.e"), B.wide_hi("v.o")) .. ";")
  fn(wpfx, wpfx .. "_add", wpfx .. " a, " .. wpfx .. " b", "  return " .. B.wide_add("a", "b") .. ";")
  fn("double", wpfx .. "_hsum", wpfx .. " v", "  return " .. B.wide_hsum("v") .. ";")
  return table.concat(out, "\n")
end

-- Why: the C helper that streams an aligned stack row out to y at any
-- alignment (nt_rows.c.tpl): the partial cache lines at its two ends are
-- plain copies, each whole line between them one unaligned load from the
-- stack row (in L1) and non-temporal stores (`line`: the C statements
-- copying 64 bytes s + i -> d + i, d + i 64-byte aligned).  The caller
-- ends with sfence.
function M.c_nt_row(line)
  return ([[
/* Why: a row computed into the aligned stack row s goes to y at d (any
 * alignment) without y's lines being read first: the whole cache lines
 * it covers by non-temporal stores, the partial ones at its ends by plain
 * copies. */
static inline __attribute__((unused)) ATTR void kgi_nt_row(char *d, const char *s, size_t n)
{
  size_t i = (size_t)(-(uintptr_t)d & 63);
  if (i > n) i = n;
  __builtin_memcpy(d, s, i);
  for (; i + 64 <= n; i += 64) {
    LINE
  }
  __builtin_memcpy(d + i, s + i, n - i);
}

]]):gsub("LINE", line)
end

return M
