#!/bin/sh
# emu512.sh: the two steps every emulated AVX-512 build shares (make
# test-avx512-emu in mk/emu512.mk, tests/models.sh), kept in one place.
#
#   sh tests/emu512/emu512.sh why CC        prints why the emulation cannot
#                                           run here (nothing when it can);
#                                           exit 0 either way
#   sh tests/emu512/emu512.sh rewrite IN OUT
#                                           IN (a pack's *_avx512.c) with
#                                           every AVX-512 target attribute
#                                           made AVX2 (and KG_ONE_LOAD a
#                                           no-op); exit 1 if one is left
set -u

# Why: SIMDe's portable AVX-512 is built on AVX2, FMA and F16C, and needs
# its headers; a host without them must say SKIPPED, not fail.
why() { # $1 the compiler
  if [ "$(uname -m)" != x86_64 ]; then
    echo "not an x86-64 machine ($(uname -m))"
  elif ! grep -qw avx2 /proc/cpuinfo || ! grep -qw fma /proc/cpuinfo || ! grep -qw f16c /proc/cpuinfo; then
    echo "the emulation needs an x86-64 CPU with AVX2, FMA and F16C"
  elif ! echo '#include <simde/x86/avx512.h>' | $1 -E -x c - >/dev/null 2>&1; then
    echo "SIMDe's headers are missing (Debian package libsimde-dev; make deps)"
  fi
}

# Why: the file must compile for this CPU and call SIMDe's functions; a
# target string the rewrite missed fails here rather than running real
# AVX-512 code.  KG_ONE_LOAD (isa_file.c.tpl), a register hint for GCC
# that changes no bit, becomes a no-op: SIMDe's 64-byte vectors fit no
# register here.
rewrite() { # $1 in, $2 out
  sed -E -e 's/target\("avx512[^"]*"\)/target("avx2,fma,f16c")/g' \
    -e 's/^(#define KG_ONE_LOAD\(v\)) __asm__.*/\1 ((void)0)/' "$1" >"$2" || return 1
  if grep -q 'target("[^"]*avx512' "$2"; then
    echo "emu512: an AVX-512 target attribute is left in $2" >&2
    rm -f "$2"
    return 1
  fi
}

case "${1:-}" in
  why) [ $# -eq 2 ] && why "$2" && exit 0 ;;
  rewrite) [ $# -eq 3 ] && { rewrite "$2" "$3"; exit $?; } ;;
esac
echo "usage: sh tests/emu512/emu512.sh why CC | rewrite IN OUT" >&2
exit 2
