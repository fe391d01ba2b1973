-- support.lua: helpers shared by the busted tests of the generator (not a
-- test file itself).  Tests run from the repository root.
local lfs = require("lfs")

package.path = "gen/?.lua;tests/lua/?.lua;" .. package.path

local M = {}

-- The interpreter running these tests; gen/kgen runs under the same one.
M.LUA = rawget(_G, "jit") and "luajit" or "lua5.4"
M.OTHER_LUA = (M.LUA == "luajit") and "lua5.4" or "luajit"

function M.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

function M.write(path, text)
  local f = assert(io.open(path, "wb"))
  assert(f:write(text))
  assert(f:close())
end

function M.exists(path)
  return lfs.symlinkattributes(path) ~= nil
end

function M.rmtree(path)
  local attr = lfs.symlinkattributes(path)
  if not attr then return end
  if attr.mode == "directory" then
    for f in lfs.dir(path) do
      if f ~= "." and f ~= ".." then M.rmtree(path .. "/" .. f) end
    end
    assert(lfs.rmdir(path))
  else
    assert(os.remove(path))
  end
end

-- Why: a fresh empty folder per test (os.tmpname creates a file; reuse its
-- unique name for a folder).
function M.tmpdir()
  local p = os.tmpname()
  os.remove(p)
  assert(lfs.mkdir(p))
  return p
end

-- Why: every file and folder under root with its bytes, so "untouched"
-- can be asserted byte for byte (and "no temp folder left behind" too).
function M.snapshot(root)
  local snap = {}
  local function walk(dir, rel)
    for f in lfs.dir(dir) do
      if f ~= "." and f ~= ".." then
        local p, r = dir .. "/" .. f, (rel == "" and f or rel .. "/" .. f)
        local attr = lfs.symlinkattributes(p)
        if attr.mode == "directory" then
          snap[r .. "/"] = "<dir>"
          walk(p, r)
        else
          snap[r] = M.read(p) or ("<" .. attr.mode .. ">")
        end
      end
    end
  end
  if lfs.attributes(root) then walk(root, "") end
  return snap
end

function M.listdir(dir)
  local t = {}
  for f in lfs.dir(dir) do
    if f ~= "." and f ~= ".." then t[#t + 1] = f end
  end
  table.sort(t)
  return t
end

local function quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- Why: run gen/kgen as a user would; returns status, stdout, stderr.
-- opts.lua picks the interpreter (default: the one running the tests).
function M.kgen(args, opts)
  opts = opts or {}
  local parts = {}
  for i, a in ipairs(args) do parts[i] = quote(a) end
  local outf, errf = os.tmpname(), os.tmpname()
  local cmd = "KGEN_LUA=" .. (opts.lua or M.LUA) .. " gen/kgen " .. table.concat(parts, " ")
    .. " >" .. outf .. " 2>" .. errf .. "; echo $?"
  local p = assert(io.popen(cmd, "r"))
  local status = tonumber(p:read("*a"):match("(%d+)%s*$"))
  p:close()
  local out, err = M.read(outf), M.read(errf)
  os.remove(outf)
  os.remove(errf)
  return status, out, err
end

-- Why: a user error raised in-process; returns its message (or fails).
function M.user_error(fn, ...)
  local util = require("util")
  local ok, e = pcall(fn, ...)
  assert(not ok, "expected an error, got success")
  assert(util.is_user_error(e), "expected a user error, got: " .. tostring(e))
  return e.msg
end

-- A small valid spec (as Lua source) with the given pack name.
function M.good_spec(name)
  return 'return { name = "' .. name .. '", dtype = "bf16", kernels = {\n'
    .. '  { op = "rmsnorm", name = "norm", dim = 72, eps = 1e-6 },\n'
    .. '  { op = "qk_norm", head_dim = 64, num_heads = 4, num_kv_heads = 2 },\n'
    .. '  { op = "layernorm", name = "ln", dim = 33, dtype = "f32" },\n} }\n'
end

return M
