#!/usr/bin/env bash
# Builds run 41's plugins into build/exp41 (run41.sh's header says what each is), on a clean tree:
# applies run41-desc.patch, builds, reverts it. Then strip and carry as run41.sh says.
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd); cd "$root"
git diff --quiet -- variants/ || { echo "prepare41: variants/ has local changes; commit or stash them first" >&2; exit 1; }
git apply test/bench/issue17/run41-desc.patch
trap 'git checkout -q -- variants/' EXIT
B=test/bench/issue17/build-config.sh
$B build/exp41 ws-si -DWS_PV_SLICE_INNER=1
$B build/exp41 ws-siq -DWS_PV_SLICE_INNER=1 -DWS_Q_DESC_OPAQUE=1
$B build/exp41/goldsiq warp-specialized -DWS_PV_SLICE_INNER=1 -DWS_Q_DESC_OPAQUE=1
strip --strip-debug build/exp41/*.so build/exp41/*/*.so
ls -la build/exp41 build/exp41/goldsiq
