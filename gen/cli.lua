-- cli.lua: process entry point (called by gen/kgen).
local dirs = {
  templates = os.getenv("KGEN_TEMPLATES"),
  runtime = os.getenv("KGEN_RUNTIME"),
}
os.exit(require("main").main(arg, dirs))
