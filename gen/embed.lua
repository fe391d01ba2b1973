-- embed.lua: the files that make a pack self-contained for embedding
-- (Makefile, README.md, NAME.pc).  Not implemented yet: adds nothing.
local M = {}

function M.render(ctx)
  local _ = ctx
  return {}, {}
end

return M
