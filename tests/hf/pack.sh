#!/usr/bin/env bash
# tests/hf/pack.sh: a pack is self-contained.  Generated from a Hugging Face
# config, copied out of the checkout (nothing of it reachable), built with
# its own Makefile:
#   - plain `make` (cc -O2), `make CC=clang CFLAGS=...`, `make -j2`
#   - without nvcc (NVCC names no program): the CPU library still builds
#   - every generated file starts with DO NOT EDIT (JSON: its first key); no path of this machine
#     is written into the pack; generating twice gives the same bytes
#   - libNAME.a needs nothing but libc and libm: a program links with -lm only
#   - NAME.pc works in place and after `make install PREFIX=...`; uninstall
#     removes what install wrote
# Usage: tests/hf/pack.sh
set -u
# shellcheck source=tests/hf/checks.sh
. "$(dirname -- "$0")/checks.sh"
KGEN="$root/gen/kgen"

cd "$tmp" || exit 1
mkdir gen1 gen2
for m in qwen3-0.6b gemma-3-1b-it gpt2; do
  quiet "$KGEN" --hf "$root/tests/hf/$m/config.json" -o gen1 || fail "$m: kgen --hf"
  quiet "$KGEN" --hf "$root/tests/hf/$m/config.json" -o gen2 || fail "$m: kgen --hf"
done
if diff -r gen1 gen2 >/dev/null; then pass; else fail "two runs gave different bytes"; fi

for dir in gen1/*/; do
  name=$(basename "$dir")
  # DO NOT EDIT on the first line of every file; no absolute path of here
  for f in "$dir"*; do
    # JSON has no comments: there the first key says it
    lines=1; case "$f" in *.json) lines=2 ;; esac
    if head -n $lines "$f" | grep -qi "DO.NOT.EDIT"; then pass
    else fail "$name: $(basename "$f") does not start with DO NOT EDIT"; fi
  done
  if grep -rqF -e "$root" -e "$tmp" "$dir"; then fail "$name: a path of this machine in the pack"
  else pass; fi

  # the pack alone, somewhere else
  cp -R "$dir" "alone-$name"
  p="alone-$name"
  for f in Makefile README.md "$name.pc"; do
    [ -f "$p/$f" ] && pass || fail "$name: no $f in the pack"
  done
  if quiet make -C "$p" NVCC=no-nvcc-here && [ -f "$p/lib$name.a" ]; then pass
  else fail "$name: plain make (no nvcc) did not give lib$name.a"; fi
  quiet make -C "$p" clean
  if quiet make -C "$p" -j2 CC=clang CFLAGS="-O3 -fPIC" NVCC=no-nvcc-here \
      && [ -f "$p/lib$name.a" ]; then pass
  else fail "$name: make CC=clang CFLAGS=-O3 -fPIC"; fi
  ls "$p"/*.o >/dev/null 2>&1 && [ ! -f "$p/${name}_cuda.o" ] && pass \
    || fail "$name: objects missing, or a CUDA object without nvcc"

  # a program that uses the pack links with -lm and nothing else, in place
  cat >"main-$name.c" <<EOF
#include <stdio.h>
#include "$name.h"
int main(void)
{
  size_t n = 0;
  for (size_t i = 0; i < ${name}_num_variants; i++)
    if (${name}_variants[i].isa == KG_ISA_AUTO) n++;
  printf("%s: %zu kernels, %zu variants\n", "$name", n, ${name}_num_variants);
  return n == 0;
}
EOF
  if quiet cc -std=c11 -Wall -Wextra -Werror "main-$name.c" \
      $(PKG_CONFIG_PATH="$p" pkg-config --cflags --libs "$name") -o "main-$name" \
      && quiet "./main-$name"; then pass
  else fail "$name: in-place pkg-config build of a program"; fi
  if PKG_CONFIG_PATH="$p" pkg-config --libs "$name" | grep -qE -- "^-L[^ ]+ -l$name -lm *$"; then pass
  else fail "$name: Libs is not exactly -L.. -l$name -lm"; fi

  # install, use, uninstall
  prefix="$tmp/prefix"
  if quiet make -C "$p" install PREFIX="$prefix" NVCC=no-nvcc-here \
      && [ -f "$prefix/lib/lib$name.a" ] && [ -f "$prefix/include/$name/$name.h" ] \
      && [ -f "$prefix/lib/pkgconfig/$name.pc" ]; then pass
  else fail "$name: make install"; fi
  mv "$prefix" "$tmp/moved"   # the installed .pc is relative to itself
  if quiet cc -std=c11 "main-$name.c" \
      $(PKG_CONFIG_PATH="$tmp/moved/lib/pkgconfig" pkg-config --cflags --libs "$name") \
      -o "main2-$name" && quiet "./main2-$name"; then pass
  else fail "$name: build through the installed (and moved) $name.pc"; fi
  mv "$tmp/moved" "$prefix"
  quiet make -C "$p" uninstall PREFIX="$prefix"
  left=$(find "$prefix" -type f | wc -l)
  [ "$left" = 0 ] && pass || fail "$name: uninstall left $left files"
  rm -rf "$prefix"
done

summary tests/hf/pack.sh
