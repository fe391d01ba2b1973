return rawget(_G, "os")
