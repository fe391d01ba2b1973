-- pcall would swallow the budget error; it is not there to call
pcall(function() while true do end end)
return { name = "bad" }
