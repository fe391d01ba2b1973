# tests/hf/checks.sh: what tests/hf/run.sh, pack.sh and install.sh share,
# sourced by each (bash): the checkout's root, a temporary folder removed
# on exit, and the pass/fail counting their summary line reports.
#   . "$(dirname -- "$0")/checks.sh"   sets root, tmp, checks, fails
#   pass; fail MESSAGE; quiet COMMAND...; summary NAME (the exit status)
# shellcheck shell=bash
# shellcheck disable=SC2034 # root and tmp are for the sourcing script
root=$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
checks=0
# Why: every check counts once; a failure also says what failed.
pass() { checks=$((checks + 1)); }
fail() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAIL: $*"; }
# Why: a command's output matters only when it fails: then its last lines.
quiet() { "$@" >"$tmp/log" 2>&1 || { echo "    $(tail -5 "$tmp/log")"; return 1; }; }
# Why: one summary line a script ends with; its status is the verdict.
summary() { echo "$1: $checks checks, $fails failed"; [ "$fails" = 0 ]; }
