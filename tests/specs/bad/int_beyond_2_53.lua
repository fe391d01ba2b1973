-- 0x10000000000000040 wraps to 64 in Lua 5.4 but is 2^64 + 64 in LuaJIT
return { name = "bad", kernels = { { op = "rmsnorm", dim = 0x10000000000000040 } } }
