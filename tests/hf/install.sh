#!/usr/bin/env bash
# tests/hf/install.sh: `make install PREFIX=...` gives a kgen that works
# from any folder without the checkout: it finds its modules, templates and
# runtime under PREFIX/share/kgen, writes the same bytes as gen/kgen, and
# comes with the runtime headers, kgen.pc and a man page.  DESTDIR stages;
# uninstall removes everything install wrote.
# Usage: tests/hf/install.sh
set -u
# shellcheck source=tests/hf/checks.sh
. "$(dirname -- "$0")/checks.sh"

p="$tmp/prefix"
if quiet make -C "$root" --no-print-directory install PREFIX="$p"; then pass
else fail "make install PREFIX=$p"; fi
for f in bin/kgen lib/pkgconfig/kgen.pc share/man/man1/kgen.1 include/kgen/kg_variant.h \
    include/kgen/kg_cpu.h include/kgen/kg_dispatch.h include/kgen/kg_convert.h \
    share/kgen/gen/main.lua share/kgen/gen/hf.lua share/kgen/gen/embed.lua \
    share/kgen/templates/pack.h.tpl share/kgen/templates/embed/Makefile.tpl \
    share/kgen/runtime/kg_cpu.c; do
  [ -f "$p/$f" ] && pass || fail "not installed: $f"
done

# the installed kgen, moved away from where it was installed, run from
# another folder: nothing of the checkout is used
mv "$p" "$tmp/moved"
mkdir "$tmp/work"
cp "$root/tests/hf/qwen3-0.6b/config.json" "$tmp/work/config.json"
cd "$tmp/work" || exit 1
k="$tmp/moved/bin/kgen"
if "$k" --version | grep -q '^kgen [0-9]'; then pass; else fail "kgen --version"; fi
if "$k" --help | grep -q -- '--hf'; then pass; else fail "kgen --help lacks --hf"; fi
for lua in luajit lua5.4; do
  if quiet env KGEN_LUA=$lua "$k" --hf config.json --name qwen3_0_6b -o "out-$lua"; then pass
  else fail "installed kgen ($lua) --hf"; fi
done
quiet "$root/gen/kgen" --hf config.json --name qwen3_0_6b -o out-checkout
if diff -r out-luajit out-checkout >/dev/null && diff -r out-lua5.4 out-checkout >/dev/null; then pass
else fail "the installed kgen writes other bytes than gen/kgen"; fi
if quiet "$k" "$root/specs/gpt2.lua" -o out2 && [ -f out2/gpt2/Makefile ]; then pass
else fail "installed kgen with a spec file"; fi
cd "$tmp" || exit 1
mv "$tmp/moved" "$p"

# kgen.pc: variables and flags
pc() { PKG_CONFIG_PATH="$p/lib/pkgconfig" pkg-config "$@" kgen; }
[ "$(pc --variable=kgen)" = "$p/bin/kgen" ] && pass || fail "kgen.pc kgen=$(pc --variable=kgen)"
[ "$(pc --variable=templatesdir)" = "$p/share/kgen/templates" ] && pass || fail "kgen.pc templatesdir"
[ -d "$(pc --variable=runtimedir)" ] && pass || fail "kgen.pc runtimedir"
[ "$(pc --modversion)" = "$("$root/gen/kgen" --version | sed 's/^kgen //')" ] && pass \
  || fail "kgen.pc version"
printf '#include "kg_variant.h"\n#include "kg_cpu.h"\nint main(void){return KG_ISA_SCALAR;}\n' >h.c
if quiet cc -std=c11 -Wall -Werror $(pc --cflags) -c h.c -o h.o; then pass
else fail "runtime headers through pkg-config --cflags kgen"; fi
# the man page is roff around the --help text
if head -n 1 "$p/share/man/man1/kgen.1" | grep -q '^\.TH KGEN 1' \
    && grep -q -- '--emit-spec' "$p/share/man/man1/kgen.1"; then pass
else fail "kgen.1"; fi
if command -v man >/dev/null 2>&1 && command -v groff >/dev/null 2>&1; then
  if MANWIDTH=80 man -l "$p/share/man/man1/kgen.1" 2>/dev/null | grep -q -- '--hf'; then pass
  else fail "man -l kgen.1 does not render"; fi
fi

# uninstall leaves nothing behind
quiet make -C "$root" --no-print-directory uninstall PREFIX="$p"
left=$(find "$p" -type f | wc -l)
[ "$left" = 0 ] && pass || fail "uninstall left $left files: $(find "$p" -type f | head -3)"

# DESTDIR stages under a real-looking prefix
if quiet make -C "$root" --no-print-directory install DESTDIR="$tmp/stage" PREFIX=/usr/local \
    && [ -x "$tmp/stage/usr/local/bin/kgen" ] \
    && grep -qx 'prefix=/usr/local' "$tmp/stage/usr/local/lib/pkgconfig/kgen.pc"; then pass
else fail "make install DESTDIR=... PREFIX=/usr/local"; fi
if make -C "$root" --no-print-directory install PREFIX= >/dev/null 2>&1; then
  fail "make install PREFIX= (empty) did not refuse"
else pass; fi

summary tests/hf/install.sh
