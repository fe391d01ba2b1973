-- cuda.lua: the CUDA backend's pack files (NAME_cuda.cu) and the header
-- declarations of its host wrappers.  Not implemented yet: adds nothing.
local M = {}

function M.render(ctx)
  local _ = ctx
  return {}, {}
end

return M
