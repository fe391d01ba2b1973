return function() return { name = "bad" } end
