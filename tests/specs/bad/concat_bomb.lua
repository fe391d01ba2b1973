local s = "0123456789abcdef"
for _ = 1, 40 do s = s .. s end
return { name = s }
