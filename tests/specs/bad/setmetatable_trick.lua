local t = setmetatable({}, { __index = function() return os end })
return t
