return { name = "bad", dtype = "bf16" }
