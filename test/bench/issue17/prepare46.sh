#!/usr/bin/env bash
# Builds run 46's plugins and run 45's backtrace handler into build/exp46 (run46.sh's header says what
# each is), on a clean tree:
# applies run46-kpre-ilv.patch, builds, reverts it. Then strip and carry as run46.sh says.
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd); cd "$root"
git diff --quiet -- variants/ || { echo "prepare46: variants/ has local changes; commit or stash them first" >&2; exit 1; }
git apply test/bench/issue17/run46-kpre-ilv.patch
trap 'git checkout -q -- variants/' EXIT
B=test/bench/issue17/build-config.sh
$B build/exp46 ws-kpre -DWS_KPRE=1
$B build/exp46 ws-ilv3 -DWS_WGILV=3
$B build/exp46 ws-kpi -DWS_KPRE=1 -DWS_WGILV=3
$B build/exp46/goldkpre warp-specialized -DWS_KPRE=1
$B build/exp46/goldilv3 warp-specialized -DWS_WGILV=3
$B build/exp46/goldkpi warp-specialized -DWS_KPRE=1 -DWS_WGILV=3
cc -O1 -g -shared -fPIC -o build/exp46/segv_bt.so test/bench/issue17/segv_bt.c
strip --strip-debug build/exp46/*.so build/exp46/*/*.so
ls -la build/exp46 build/exp46/gold*
