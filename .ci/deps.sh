#!/bin/sh
# deps.sh: install the Debian packages kgen needs (make deps / make demo /
# make test / CI).  As root it runs apt-get; otherwise it prints the command.
# Usage: .ci/deps.sh [extra-package ...]
set -eu
pkgs="make gcc clang pkg-config check luajit lua5.4 lua-penlight lua-argparse
lua-dkjson lua-filesystem lua-busted lua-check gnuplot-nox qemu-user
gcc-aarch64-linux-gnu libc6-dev-arm64-cross python3 python3-numpy python3-torch valgrind libclang-rt-dev libsimde-dev $*"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing="$missing $p"
done
# the aarch64 Check library (cross-built static test suites)
if ! dpkg-query -W -f='${Status}\n' check:arm64 2>/dev/null | grep -q "install ok installed"; then
  missing_arm=1
else
  missing_arm=0
fi
if [ -z "$missing" ] && [ "$missing_arm" = 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "kgen: missing Debian packages:$missing$( [ "$missing_arm" = 1 ] && echo ' check:arm64')" >&2
  echo "kgen: run as root:  dpkg --add-architecture arm64 && apt-get update && apt-get install -y$missing check:arm64" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if [ "$missing_arm" = 1 ]; then
  dpkg --add-architecture arm64
fi
echo "kgen: installing:$missing$( [ "$missing_arm" = 1 ] && echo ' check:arm64')"
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing $( [ "$missing_arm" = 1 ] && echo check:arm64 ) >/dev/null
