local os = require("os")
os.execute("touch /tmp/kgen_pwned")
