-- a hot loop that LuaJIT would compile (traces skip hooks)
local t = {}
for i = 1, 1e12 do t[(i % 8) + 1] = i end
return t
