#!/bin/sh
# matrix.sh: run the ISA matrix of a pack; write matrix.json and matrix.md.
#
#   sh tests/matrix.sh PACK_DIR BUILD_DIR OUT_DIR      (make matrix)
#
# PACK_DIR   a generated pack; its manifest.json lists the variants (cells)
# BUILD_DIR  holds `matrix` (tests/matrix.c built for this machine) and,
#            when the cross compiler exists, `matrix-aarch64` (static)
# OUT_DIR    receives matrix.json and matrix.md
#
# Cells: every op x dtype x shape of the pack, for each ISA:
#   scalar, avx2, avx512   the native x86_64 runner (an ISA the CPU lacks is
#                          skipped by the runner, with the reason)
#   scalar, neon (aarch64) when neon is in the pack: the static cross-built
#                          runner under qemu-aarch64
#   cuda                   skipped with the reason, unless a GPU exists
#                          (nvidia-smi -L) and a CUDA runner is built: hook
#                          for tests/cuda/: an executable $KG_MATRIX_CUDA
#                          (default BUILD_DIR/matrix_cuda) taking
#                          `--run SYMBOL` and printing one JSON line per cell
#                          as tests/matrix.c does.
# Each cell runs in its own process, so a crash is a failed cell.  A cell
# that did not run is never shown as passed.  Progress goes to stderr, the
# table to stdout.  Exit status 1 when a cell that ran failed.
set -u

if [ $# -ne 3 ]; then
  echo "usage: sh tests/matrix.sh PACK_DIR BUILD_DIR OUT_DIR" >&2
  exit 2
fi
PACK=$1
BUILD=$2
OUTD=$3
MANIFEST=$PACK/manifest.json
RUNNER=$BUILD/matrix
ARM=$BUILD/matrix-aarch64
CUDA_RUNNER=${KG_MATRIX_CUDA:-$BUILD/matrix_cuda}
LUA=${LUA:-lua5.4}
TOOL=$BUILD/matrix_tool.lua
CELLS=$BUILD/matrix_cells.jsonl
ERR=$BUILD/matrix_cell.err
TIMEOUT=""
command -v timeout >/dev/null 2>&1 && TIMEOUT="timeout 300"

for f in "$MANIFEST" "$RUNNER"; do
  if [ ! -e "$f" ]; then
    echo "matrix: $f: missing (run make matrix)" >&2
    exit 2
  fi
done
mkdir -p "$OUTD"

# The JSON half (plan from the manifest, merge, tables) is Lua 5.4 with
# dkjson; the plan prints one tab-separated line per cell:
#   ARCH ISA SYMBOL LABEL
cat >"$TOOL" <<'EOF'
local json = require("dkjson")

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function manifest(path)
  local m, _, err = json.decode(read(path))
  if not m then error(path .. ": " .. tostring(err)) end
  local has, kernels, byname = {}, {}, {}
  for _, i in ipairs(m.isa) do has[i] = true end
  for _, v in ipairs(m.variants) do
    local k = byname[v.kernel]
    if not k then
      k = { name = v.kernel, op = v.op, dtype = v.dtype, rounding = v.rounding,
            layout = v.layout, dim = v.dim, num_heads = v.num_heads,
            num_kv_heads = v.num_kv_heads, sym = {} }
      byname[v.kernel] = k
      kernels[#kernels + 1] = k
    end
    k.sym[v.isa] = v.symbol
  end
  return m, has, kernels
end

-- Why: the display comes from the manifest, so a cell that never ran (or
-- crashed) is described exactly like one that did.
local function shape(k)
  if k.op == "qk_norm" then
    return string.format("hd %d, %d/%d heads, %s", k.dim, k.num_heads,
      k.num_kv_heads, k.layout == "head_major" and "head-major" or "token-major")
  end
  return string.format("dim %d", k.dim)
end

-- The cells in table order: x86 ISAs, aarch64 (scalar there only when the
-- pack has neon: the aarch64 runner exists for neon), cuda.
local function plan(m, has, kernels)
  local cells = {}
  for _, k in ipairs(kernels) do
    local function add(arch, isa)
      local sym = k.sym[isa] or (m.name .. "_" .. k.name .. "_" .. isa)
      cells[#cells + 1] = { k = k, arch = arch, isa = isa, sym = sym,
        key = sym .. "@" .. arch,
        label = sym .. (arch == "aarch64" and isa == "scalar" and " (aarch64)" or "") }
    end
    -- every ISA gets a cell; one the pack lacks is skipped with that reason
    add("x86_64", "scalar")
    add("x86_64", "avx2")
    add("x86_64", "avx512")
    if has.neon then add("aarch64", "scalar") end
    add("aarch64", "neon")
    add("gpu", "cuda")
  end
  return cells
end

local ORDER = { "kernel", "op", "dtype", "rounding", "shape", "isa", "arch",
  "status", "error", "max_ulp", "bound_used", "bound", "pass", "worst", "reason",
  "cell" }

local function merge(mpath, cpath, outd, host)
  local m, has, kernels = manifest(mpath)
  local got = {}
  for line in io.lines(cpath) do
    local c = json.decode(line)
    if type(c) == "table" and c.key then got[c.key] = c end
  end
  local rows, s = {}, { cells = 0, ran = 0, passed = 0, failed = 0, skipped = 0 }
  for _, p in ipairs(plan(m, has, kernels)) do
    local c = got[p.key] or { status = "skipped", reason = "no result recorded" }
    local r = {
      cell = p.sym, kernel = p.k.name, op = p.k.op, dtype = p.k.dtype,
      rounding = p.k.rounding, shape = shape(p.k), isa = p.isa, arch = p.arch,
      status = c.status == "ran" and "ran" or "skipped",
      error = c.error, max_ulp = c.max_ulp, bound_used = c.bound_used,
      bound = c.status == "ran" and c.bound or nil, worst = c.worst,
      reason = c.reason,
    }
    -- a cell passes only if it ran and said so
    r.pass = r.status == "ran" and c.pass == true
    if r.status ~= "ran" then r.pass = json.null end
    if r.error == nil and r.status == "ran" then r.error = "-" end
    s.cells = s.cells + 1
    if r.status == "ran" then
      s.ran = s.ran + 1
      if r.pass == true then s.passed = s.passed + 1 else s.failed = s.failed + 1 end
    else
      s.skipped = s.skipped + 1
    end
    rows[#rows + 1] = r
  end

  local doc = { pack = m.name, generator = m.generator, spec_hash = m.spec_hash,
    host = host, summary = s, cells = rows }
  local keyorder = { "pack", "generator", "spec_hash", "host", "summary",
    "cells", "ran", "passed", "failed", "skipped" }
  for _, k in ipairs(ORDER) do keyorder[#keyorder + 1] = k end
  local f = assert(io.open(outd .. "/matrix.json", "wb"))
  f:write(json.encode(doc, { indent = true, keyorder = keyorder }), "\n")
  f:close()

  local md = {}
  local function out(l) md[#md + 1] = l end
  out("# ISA matrix: pack " .. m.name)
  out("")
  out("Host: " .. host .. ".")
  out(string.format("%d cells: %d ran (%d passed, %d failed), %d skipped.",
    s.cells, s.ran, s.passed, s.failed, s.skipped))
  out("")
  out("| op | dtype | shape | isa | status | max error | bound | pass |")
  out("|---|---|---|---|---|---|---|---|")
  for _, r in ipairs(rows) do
    local isa = r.isa .. ((r.arch == "aarch64" and r.isa == "scalar") and " (aarch64)" or "")
    local dt = r.dtype .. (r.rounding == "hf" and " hf" or "")
    local status, err, bound, pass
    if r.status == "ran" then
      -- the layernorm bound is spelled out under the table
      status, err = "ran", r.error
      bound = r.op == "layernorm" and "LN bound" or (r.bound or "-")
      pass = r.pass == true and "pass" or "**FAIL**"
    else
      status, err, bound, pass = "skipped: " .. (r.reason or "?"), "-", "-", "-"
    end
    local cols = { r.op, dt, r.shape, isa, status, err, bound, pass }
    for j, c in ipairs(cols) do cols[j] = tostring(c):gsub("|", "\\|") end
    out("| " .. table.concat(cols, " | ") .. " |")
  end
  out("")
  out("Errors are against a float64 reference of the stored inputs " ..
    "(tests/ref.c), over random rows and hard rows (huge, tiny, " ..
    "subnormal, spike, zero, constant, offset 1000, wide exponent range, " ..
    "NaN/Inf rows, which must give all-NaN rows).  Bounds: f32 8 ULP; " ..
    "bf16/f16 1 ULP of the correctly rounded result (\"hf\" rounding: " ..
    "2 ULP of the HF order); LN bound: |y - ref| <= " ..
    "16 eps32 (|gamma| (|x| + |mean|) rstd + |beta|) + 1 ULP of T, where " ..
    "max error is the largest share of that bound used (pass: <= 1).")
  local first = true
  for _, r in ipairs(rows) do
    if r.status == "ran" and r.pass ~= true then
      if first then
        out("")
        out("## Failures")
        out("")
        first = false
      end
      out(string.format("- `%s` (%s): %s", r.cell, r.arch,
        r.worst ~= nil and r.worst ~= "" and r.worst or "no detail"))
    end
  end
  local text = table.concat(md, "\n") .. "\n"
  f = assert(io.open(outd .. "/matrix.md", "wb"))
  f:write(text)
  f:close()
  io.write(text)
  return s.failed == 0
end

local mode = arg[1]
if mode == "plan" then
  local m, has, kernels = manifest(arg[2])
  for _, p in ipairs(plan(m, has, kernels)) do
    io.write(p.arch, "\t", p.isa, "\t", p.sym, "\t", p.label, "\t",
      p.k.sym[p.isa] and "yes" or "no", "\n")
  end
elseif mode == "key" then
  -- stamp a runner's JSON line with its cell key (arch as planned)
  local arch = arg[2]
  for line in io.lines() do
    local c = json.decode(line)
    if type(c) == "table" then
      c.key = (c.cell or "?") .. "@" .. arch
      io.write(json.encode(c), "\n")
    end
  end
elseif mode == "merge" then
  os.exit(merge(arg[2], arg[3], arg[4], arg[5]) and 0 or 1)
else
  io.stderr:write("matrix_tool: unknown mode\n")
  os.exit(2)
end
EOF

if ! "$LUA" -e 'require("dkjson")' 2>/dev/null; then
  echo "matrix: $LUA with dkjson is needed (Debian: lua5.4 lua-dkjson)" >&2
  exit 2
fi

NATIVE=$(uname -m)
have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  have_gpu=1
fi

# Why the aarch64 cells cannot run here, or nothing when they can.
arm_reason=""
if [ "$NATIVE" != aarch64 ]; then
  if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
    arm_reason="aarch64-linux-gnu-gcc not installed"
  elif [ ! -x "$ARM" ]; then
    arm_reason="aarch64 runner not built ($ARM)"
  elif ! command -v qemu-aarch64 >/dev/null 2>&1; then
    arm_reason="qemu-aarch64 not installed"
  fi
fi

# One skipped cell, as the runner would print it.
skip() { # KEY REASON
  printf '{"key":"%s","status":"skipped","pass":null,"reason":"%s"}\n' "$1" "$2" >>"$CELLS"
}

# Run one cell in its own process; a crash or a missing line is a failure.
run() { # KEY SYMBOL ARCH COMMAND...
  key=$1 sym=$2 arch=$3
  shift 3
  line=$($TIMEOUT "$@" --run "$sym" </dev/null 2>"$ERR")
  rc=$?
  if [ -n "$line" ] && [ "$rc" -le 1 ]; then
    printf '%s\n' "$line" | "$LUA" "$TOOL" key "$arch" >>"$CELLS"
    return
  fi
  why="exit status $rc"
  [ "$rc" -gt 128 ] && why="killed by signal $((rc - 128))"
  [ "$rc" -eq 124 ] && why="timed out"
  detail=$(grep -v '^qemu-' "$ERR" | head -n 1 | tr -d '"\134' | cut -c1-160)
  printf '{"key":"%s","status":"ran","pass":false,"error":"crashed","worst":"%s%s"}\n' \
    "$key" "$why" "${detail:+: $detail}" >>"$CELLS"
}

PLAN=$("$LUA" "$TOOL" plan "$MANIFEST") || exit 2
total=$(printf '%s\n' "$PLAN" | wc -l | tr -d ' ')
: >"$CELLS"
tty=0
[ -t 2 ] && tty=1
i=0
TAB=$(printf '\t')
while IFS=$TAB read -r arch _isa sym label inpack; do
  i=$((i + 1))
  if [ $tty = 1 ]; then
    printf '\r\033[K[%d/%d] %s ...' "$i" "$total" "$label" >&2
  else
    printf '[%d/%d] %s ...\n' "$i" "$total" "$label" >&2
  fi
  key="$sym@$arch"
  if [ "$inpack" = no ] && [ "$arch" != gpu ]; then
    skip "$key" "no $_isa variant in the pack"
    continue
  fi
  case $arch in
  gpu)
    if [ "$inpack" = no ]; then
      if [ $have_gpu = 1 ]; then
        skip "$key" "no cuda variant in the pack"
      else
        skip "$key" "no GPU on this machine; no cuda variant in the pack"
      fi
    elif [ $have_gpu = 0 ]; then
      skip "$key" "no GPU on this machine"
    elif [ ! -x "$CUDA_RUNNER" ]; then
      skip "$key" "CUDA runner not built"
    else
      run "$key" "$sym" gpu "$CUDA_RUNNER"
    fi
    ;;
  "$NATIVE")
    run "$key" "$sym" "$arch" "$RUNNER"
    ;;
  aarch64)
    if [ -n "$arm_reason" ]; then
      skip "$key" "$arm_reason"
    else
      run "$key" "$sym" "$arch" qemu-aarch64 "$ARM"
    fi
    ;;
  *)
    skip "$key" "$arch cells need a $arch host or emulator"
    ;;
  esac
done <<PLAN_EOF
$PLAN
PLAN_EOF
[ $tty = 1 ] && printf '\r\033[K' >&2

host="$NATIVE $("$RUNNER" --cpu)"
if [ -z "$arm_reason" ] && [ "$NATIVE" != aarch64 ]; then
  host="$host; aarch64 under $(qemu-aarch64 --version | head -n 1 | sed 's/ version / /')"
fi
"$LUA" "$TOOL" merge "$MANIFEST" "$CELLS" "$OUTD" "$host"
status=$?
echo "matrix: wrote $OUTD/matrix.md and $OUTD/matrix.json" >&2
exit $status
