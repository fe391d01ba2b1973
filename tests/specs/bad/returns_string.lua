return "name = bad"
