local s = "abc"
local up = s.upper
return { name = up(s) }
