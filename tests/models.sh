#!/bin/sh
# models.sh: the ISA matrix of every model pack, as a user gets them:
# `kgen --hf tests/hf/MODEL/config.json`, then tests/matrix.sh over the
# pack (the same runner and float64 reference as `make matrix`, but on
# the real models' shapes: their head counts, head_dim, dims, dtypes and
# weight offsets, which the test pack tests/specs/kgt.lua does not all
# have).  Each pack runs twice:
#   native   scalar and avx2 (avx512 where the CPU has it), and scalar and
#            neon cross-built static under qemu-aarch64
#   emu512   its AVX-512 file compiled against SIMDe with the target
#            attributes rewritten to AVX2 (as `make test-avx512-emu`), so
#            the avx512 cells run on any x86-64 with AVX2, FMA and F16C
# A leg that cannot run here says SKIPPED and why; a cell that ran and
# failed fails the target.
#
#   sh tests/models.sh BUILD_DIR     (make test-models)
#
# Environment (the Makefile passes its own): CC, CFLAGS, AARCH64_CC,
# EMU512_CC and EMU512_FLAGS (mk/emu512.mk's), LUA (for tests/matrix.sh); MODELS="qwen3-8b gpt2" runs only those
# folders of tests/hf/.
set -u
if [ $# -ne 1 ]; then
  echo "usage: sh tests/models.sh BUILD_DIR" >&2
  exit 2
fi
root=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
cd "$root" || exit 2
B=$1/models
: "${CC:=cc}" "${CFLAGS:=-std=c11 -O2 -Wall -Wextra -Werror}" "${AARCH64_CC:=aarch64-linux-gnu-gcc}"
: "${EMU512_CC:=gcc}" "${EMU512_FLAGS:=-std=c11 -O1 -Wall -Wextra -Werror -Wno-psabi -mavx2 -mfma -mf16c}"
rm -rf "$B"
mkdir -p "$B"

# Why: the emulated leg needs what `make test-avx512-emu` needs.
emu_why=$(sh tests/emu512/emu512.sh why "$EMU512_CC")
arm=1
command -v "$AARCH64_CC" >/dev/null 2>&1 || arm=0

fails=0
# Why: one leg's matrix, its summary line ("N cells: ...") and its verdict.
leg() { # $1 model, $2 leg name, $3 pack dir, $4 runner dir
  if sh tests/matrix.sh "$3" "$4" "$4" >"$4/table.md" 2>"$4/progress.log"; then
    echo "test-models: $1 ($2): $(sed -n 's/^\([0-9]* cells: .*\)$/\1/p' "$4/matrix.md")"
  else
    echo "test-models: $1 ($2): FAILED"
    grep -F '**FAIL**' "$4/matrix.md" 2>/dev/null | head -8
    [ -s "$4/matrix.md" ] || tail -3 "$4/progress.log"
    fails=$((fails + 1))
  fi
}

for cfg in tests/hf/*/config.json; do
  model=$(basename "$(dirname "$cfg")")
  case " ${MODELS:-$model} " in *" $model "*) ;; *) continue ;; esac
  d=$B/$model
  mkdir -p "$d/native" "$d/emu512"
  if ! gen/kgen --hf "$cfg" -o "$d/gen" >/dev/null 2>"$d/kgen.err"; then
    echo "test-models: $model: kgen --hf failed: $(cat "$d/kgen.err")"
    fails=$((fails + 1))
    continue
  fi
  pack=$(ls -d "$d"/gen/*/)
  pack=${pack%/}
  name=$(basename "$pack")
  set -- -I"$pack" -Itests -DKG_PACK_HEADER="\"$name.h\"" \
    -DKG_PACK_VARIANTS="${name}_variants" -DKG_PACK_NUM="${name}_num_variants"
  others=""
  for f in "$pack"/*.c; do
    case $f in *_avx512.c) ;; *) others="$others $f" ;; esac
  done
  # shellcheck disable=SC2086 # CFLAGS and the file lists are word lists
  if ! $CC $CFLAGS "$@" tests/matrix.c tests/ref.c "$pack"/*.c -lm -o "$d/native/matrix"; then
    echo "test-models: $model: the native runner did not build"
    fails=$((fails + 1))
    continue
  fi
  if [ $arm = 1 ] && ls "$pack"/*_neon.c >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    $AARCH64_CC -static $CFLAGS "$@" tests/matrix.c tests/ref.c "$pack"/*.c -lm -o "$d/native/matrix-aarch64" \
      || { echo "test-models: $model: the aarch64 runner did not build"; fails=$((fails + 1)); }
  fi
  leg "$model" native "$pack" "$d/native"
  if [ -n "$emu_why" ]; then
    echo "SKIPPED test-models: $model (emu512): $emu_why"
    continue
  fi
  # the AVX-512 file with every AVX-512 target made AVX2 (as mk/emu512.mk)
  if ! sh tests/emu512/emu512.sh rewrite "$pack/${name}_avx512.c" "$d/emu512/emu.c"; then
    echo "test-models: $model: the AVX-512 file could not be rewritten for the emulation"
    fails=$((fails + 1))
    continue
  fi
  # shellcheck disable=SC2086
  if ! $EMU512_CC $EMU512_FLAGS -Itests/emu512 -I"$pack" \
        -c "$d/emu512/emu.c" -o "$d/emu512/emu.o" \
     || ! $CC $CFLAGS "$@" tests/matrix.c tests/ref.c $others "$d/emu512/emu.o" \
        tests/emu512/kg_cpu_emu.c -lm -o "$d/emu512/matrix"; then
    echo "test-models: $model: the emulated runner did not build"
    fails=$((fails + 1))
    continue
  fi
  leg "$model" "emu512, SIMDe" "$pack" "$d/emu512"
done
if [ $fails -ne 0 ]; then
  echo "test-models: $fails failure(s)"
  exit 1
fi
echo "test-models: every model pack's cells that ran passed"
