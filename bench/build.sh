#!/bin/sh
# bench/build.sh GENDIR BINARY: the harness (bench.c and its kb_* helpers)
# built against the one pack generated in GENDIR (its folder's name is the
# pack's name), with that pack's header and variant table.  The one build
# recipe of make bench-spec, bench-smoke and bench/ab.sh.  Environment: CC,
# CFLAGS (the Makefile passes its bench flags).
set -eu
gendir=$1 bin=$2
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
: "${CC:=cc}" "${CFLAGS:=-std=c11 -O2 -g}"
p=$(ls "$gendir")
# shellcheck disable=SC2086 # CFLAGS is a list of flags
$CC $CFLAGS -pthread -I"$gendir/$p" -I"$here" -DKB_CFLAGS="\"$CFLAGS\"" -DKB_PACK_HEADER="\"$p.h\"" \
  -DKB_PACK_VARIANTS="${p}_variants" -DKB_PACK_NUM="${p}_num_variants" \
  "$here"/bench.c "$here"/kb_*.c "$gendir/$p"/*.c -lm -o "$bin"
