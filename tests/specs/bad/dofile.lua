return dofile("/etc/passwd")
