-- luacheck settings for the generator and its busted tests
std = "max"
max_line_length = 120
files["tests/lua"] = { std = "+busted" }
