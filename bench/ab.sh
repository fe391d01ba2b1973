#!/bin/sh
# bench/ab.sh: the kernels of a generator revision (A, e.g. HEAD~1) against
# those of the working tree (B), each built with the same harness, run
# alternately: A B A B ...  Single runs on a shared or throttled machine
# move by tens of percent minutes apart, so a change is kept on figures
# taken side by side like this (bench/RESULTS.md).
#
#   sh bench/ab.sh REV SPEC RUNS OUTDIR [bench options...]
#
# SPEC: what gen/kgen takes (a spec file, or its words: "--op qk_norm ...").
# Writes OUTDIR/ab.md (also on stdout) and each run's JSON as
# OUTDIR/{a,b}-N.json.  Environment: CC, CFLAGS (the Makefile passes its
# bench flags).
set -eu
if [ $# -lt 4 ]; then
  echo "usage: bench/ab.sh REV SPEC RUNS OUTDIR [bench options...]" >&2
  exit 2
fi
rev=$1 spec=$2 runs=$3 outdir=$4
shift 4
case $runs in '' | *[!0-9]*) echo "bench/ab.sh: RUNS must be a positive integer, not '$runs'" >&2; exit 2 ;; esac
[ "$runs" -ge 1 ] || { echo "bench/ab.sh: RUNS must be at least 1" >&2; exit 2; }
root=$(git rev-parse --show-toplevel)
sha=$(git -C "$root" rev-parse --verify --quiet "$rev^{commit}") || {
  echo "bench/ab.sh: '$rev' is not a revision of this repository" >&2
  exit 2
}
: "${CC:=cc}" "${CFLAGS:=-std=c11 -O2 -g}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$tmp/rev" "$outdir"
# the generator of REV: its gen/, templates/ and runtime/
git -C "$root" archive "$sha" gen templates runtime | tar -x -C "$tmp/rev"

# Why: one pack per side from the same spec, one harness binary per pack
# built from the working tree's bench sources (only the kernels differ).
build() { # $1: kgen, $2: side
  # shellcheck disable=SC2086 # SPEC may be several kgen words
  "$1" $spec -o "$tmp/$2" >/dev/null
  sh "$root/bench/build.sh" "$tmp/$2" "$tmp/bench-$2"
}
build "$tmp/rev/gen/kgen" a
build "$root/gen/kgen" b

# Why a copy per run: where a binary's own pages lie in memory moved one
# build's LayerNorm 4096 x 8192 bf16 between 0.80 and 1.31 x memcpy
# (bench/RESULTS.md run 49), fixed for the life of its page cache; a
# fresh copy (kept to the end, so its pages are not the ones just freed)
# is another draw, so RUNS sample that too instead of one placement.
i=1
while [ "$i" -le "$runs" ]; do
  for side in a b; do
    cp "$tmp/bench-$side" "$tmp/bench-$side-$i"
    # (its progress lines go to a log, shown if it fails)
    "$tmp/bench-$side-$i" --no-2t --md /dev/null --dat /dev/null --json "$outdir/$side-$i.json" \
      --commit "$side" "$@" >/dev/null 2>"$outdir/$side.log" || { cat "$outdir/$side.log" >&2; exit 1; }
  done
  i=$((i + 1))
done

# per kernel (shape, dtype, ISA; one thread): the medians of its runs'
# per-call times and ratios, A and B side by side, and B / A
python3 - "$outdir" "$runs" "$sha" <<'EOF' | tee "$outdir/ab.md"
import json, statistics, sys
outdir, runs, sha = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = {}
for side in "ab":
    for i in range(1, runs + 1):
        for r in json.load(open("%s/%s-%d.json" % (outdir, side, i)))["results"]:
            if r["kind"] != "kernel" or r["threads"] != 1:
                continue
            key = (r["label"], r["dtype"], r["what"])
            rows.setdefault(key, {"a": [], "b": [], "vs": r["ratio_vs"]})[side].append((r["ns_median"], r["ratio"]))
assert rows, "no kernel was timed (check the bench options)"
print("A = %s, B = the working tree; %d alternating run(s) each; medians of the runs (range)\n" % (sha[:12], runs))
print("| shape | dtype | ISA | A ns | B ns | B / A | A ratio | B ratio | vs |")
print("|---|---|---|--:|--:|--:|--:|--:|---|")
def cell(v):
    m = statistics.median(v)
    return "%.4g (%.4g-%.4g)" % (m, min(v), max(v)) if len(v) > 1 else "%.4g" % m
for (label, dtype, isa), d in sorted(rows.items()):
    if not d["a"] or not d["b"]:
        continue  # a kernel only one side has
    na, nb = [x[0] for x in d["a"]], [x[0] for x in d["b"]]
    print("| %s | %s | %s | %s | %s | %.3f | %s | %s | %s |" % (
        label, dtype, isa, cell(na), cell(nb), statistics.median(nb) / statistics.median(na),
        cell([x[1] for x in d["a"]]), cell([x[1] for x in d["b"]]), d["vs"]))
EOF
