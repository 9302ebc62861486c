#!/usr/bin/env bash
# The GPU checks of several issues in one device call (machine starts cost most of a session's
# device time): after tools/gpu-bundle.sh, carry .gpu; from the repository root with $OUT set:
#   STEPS="ext aa repeat python" BUDGET=540 bash test/bench/checks/run-gpu.sh
#   ext     test/gpu/ext-sage2-by-id.sh: the sage2 variants asking for sage2 by id, golden bytes
#   aa      test/bench/aa/run-gpu.sh: ten us A/As with the shipped defaults (issue 41)
#   repeat  test/bench/repeat/run-gpu.sh: sweeps --repeat 3 diffed, a 3% slowdown injected
#   python  test/bench/python/run-gpu.py: sagerun.compare from Python against the CLI (issue 44)
# A step starts only with 60 s of BUDGET left and runs under the time left. Each step's output
# goes to $OUT/logs/STEP.log (and its own files under $OUT/logs/STEP/); they come back as one
# archive, $OUT/logs.tar.xz, with $OUT/summary.txt (each step's exit status and its last lines).
set -u
cd "$(dirname "$0")/../../.."
eval "$(bash tools/gpu-unpack.sh)"
OUT=${OUT:?set OUT}
L=$OUT/logs
mkdir -p "$L"
PY=/opt/torch/.venv/bin/python3
export SAGERUN_PYTHON=$PY SAGERUN_CACHE_DIR=$OUT/cache
T0=$SECONDS
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
finish() { tar -C "$OUT" -cJf "$OUT/logs.tar.xz" logs; rm -rf "$L" "$OUT/cache"; }
trap finish EXIT
say "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
step() { # NAME COMMAND...
    local name=$1; shift
    local left=$(( ${BUDGET:-540} - (SECONDS - T0) ))
    if [ $left -lt 60 ]; then say "$name skipped: ${left} s left of BUDGET"; return; fi
    mkdir -p "$L/$name"
    OUT=$L/$name timeout $((left - 5)) "$@" >"$L/$name.log" 2>&1
    say "== $name rc $? ($((SECONDS - T0)) s)"
    tail -${TAIL:-25} "$L/$name.log" | tee -a "$OUT/summary.txt"
}
for s in ${STEPS:-ext aa repeat python}; do
    case $s in
    ext) step ext bash test/gpu/ext-sage2-by-id.sh ;;
    aa) SKIP_ONE=${SKIP_ONE:-1} step aa bash test/bench/aa/run-gpu.sh ;;
    repeat) step repeat env SAGERUN=build/bin/sagerun FAKES=build/test-plugins \
                 bash test/bench/repeat/run-gpu.sh ;;
    python) step python env SAGERUN_LIBRARY="$PWD/build/lib/libsagerun.so.0" \
                 PYTHONPATH="$PWD/python" "$PY" test/bench/python/run-gpu.py "$L/python" ;;
    *) say "unknown step $s" ;;
    esac
done
