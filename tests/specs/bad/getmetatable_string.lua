local mt = getmetatable("")
return { name = mt.__index.rep("x", 1e9) }
