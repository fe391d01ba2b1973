-- write.lua: write a rendered pack atomically.  Files go to a fresh temp
-- folder beside the target; only when all are written is the old pack
-- swapped out, so a failure leaves the previous DIR/NAME/ untouched.
local lfs = require("lfs")
local util = require("util")

local M = {}

local function rmtree(path)
  local attr = lfs.symlinkattributes(path)
  if not attr then return end
  if attr.mode == "directory" then
    for f in lfs.dir(path) do
      if f ~= "." and f ~= ".." then rmtree(path .. "/" .. f) end
    end
    lfs.rmdir(path)
  else
    os.remove(path)
  end
end

local function mkdir_p(path)
  local cur = path:sub(1, 1) == "/" and "/" or ""
  for part in path:gmatch("[^/]+") do
    cur = cur .. part
    if not lfs.attributes(cur) then
      local ok, err = lfs.mkdir(cur)
      if not ok and not lfs.attributes(cur) then
        util.fail(path .. ": cannot create output folder: " .. tostring(err))
      end
    end
    cur = cur .. "/"
  end
end

-- Why: a name unlikely to clash, without os.time/date (determinism of the
-- output does not depend on it: only the final name is visible).
local function temp_name(dir, name)
  local base = tostring({}):gsub("[^%w]", "")
  return dir .. "/." .. name .. ".tmp" .. base
end

-- Why: the files of the pack into the temp folder; raises on any failure.
local function write_files(tmp, outdir, name, files)
  local names = {}
  for f in pairs(files) do names[#names + 1] = f end
  table.sort(names)
  for _, f in ipairs(names) do
    local h, e = io.open(tmp .. "/" .. f, "wb")
    if not h then util.fail(outdir .. "/" .. name .. "/" .. f .. ": " .. tostring(e)) end
    local wok, werr = h:write(files[f])
    local cok = h:close()
    if not wok or not cok then
      util.fail(outdir .. "/" .. name .. "/" .. f .. ": write failed: " .. tostring(werr))
    end
  end
end

function M.write_pack(outdir, name, files)
  if outdir == "" then util.fail("kgen: -o: the output folder must not be empty") end
  mkdir_p(outdir)
  local tmp = temp_name(outdir, name)
  local ok, err = lfs.mkdir(tmp)
  if not ok then util.fail(outdir .. ": cannot create temp folder: " .. tostring(err)) end
  -- any failure (also an internal one) removes the temp folder
  local wok, werr = pcall(write_files, tmp, outdir, name, files)
  if not wok then
    rmtree(tmp)
    error(werr, 0)
  end
  local final = outdir .. "/" .. name
  local old
  if lfs.attributes(final) then
    old = tmp .. ".old"
    local rok, rerr = os.rename(final, old)
    if not rok then rmtree(tmp); util.fail(final .. ": cannot replace: " .. tostring(rerr)) end
  end
  local rok, rerr = os.rename(tmp, final)
  if not rok then
    if old then os.rename(old, final) end
    rmtree(tmp)
    util.fail(final .. ": cannot move new pack into place: " .. tostring(rerr))
  end
  if old then rmtree(old) end
  return final
end

return M
