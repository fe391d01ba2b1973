-- isa/scalar.lua: the portable primitive table.  One "vector" is one float;
-- 16-bit storage converts through the runtime's scalar helpers.  Also used
-- for the scalar tails of ISAs without masked loads.
local M = {
  name = "scalar",
  W = 1,                 -- f32 lanes per vector
  regs = 16,             -- values the plan may keep live in a row
  masked = false,
  target = nil,          -- no target attribute: baseline code
  guard = nil,           -- compiles on every architecture
  includes = {},
  vt = "float",
}

local LOAD = {
  f32 = "%s[%s]",
  bf16 = "kg_bf16_to_f32(%s[%s])",
  f16 = "kg_f16_to_f32(%s[%s])",
}
local STORE = {
  f32 = "%s[%s] = %s;",
  bf16 = "%s[%s] = kg_f32_to_bf16(%s);",
  f16 = "%s[%s] = kg_f32_to_f16(%s);",
}
local ROUND = { f32 = "%s", bf16 = "kg_round_bf16(%s)", f16 = "kg_round_f16(%s)" }

function M.load(dtype, base, off) return LOAD[dtype]:format(base, off) end
function M.store(dtype, base, off, _, v) return STORE[dtype]:format(base, off, v) end
function M.round(dtype, v) return ROUND[dtype]:format(v) end
function M.zero() return "0.0f" end
function M.set1(s) return s end
function M.add(a, b) return "(" .. a .. " + " .. b .. ")" end
function M.sub(a, b) return "(" .. a .. " - " .. b .. ")" end
function M.mul(a, b) return "(" .. a .. " * " .. b .. ")" end
function M.fma(a, b, c) return "(" .. a .. " * " .. b .. " + " .. c .. ")" end
function M.hsum(v) return v end
function M.prelude() return "" end

-- Sums accumulate in double: free for scalar code and exact enough that
-- the scalar variant is the accurate baseline SIMD is compared with.
M.acc_vt = "double"
function M.acc_zero() return "0.0" end
function M.acc_fma(a, b, c) return "(" .. c .. " + (double)" .. a .. " * (double)" .. b .. ")" end
function M.acc_add(c, a) return "(" .. c .. " + (double)" .. a .. ")" end
function M.acc_hsum(v) return v end

return M
