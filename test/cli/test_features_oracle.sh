#!/usr/bin/env bash
# The host reference variants on every problem of plugin ABI 1.2 (kv_len, causal and window in
# both alignments, softcap, varlen, paged, GQA, HND, bf16), against a float64 oracle written in
# test/python/test_features_oracle.py, which drives the build's libsagerun through ctypes;
# reference-mt byte-identical to reference on each case.
set -u
source "$(dirname "$0")/lib.sh"
BUILD=$(cd "$(dirname "$S")/.." && pwd)
LIB=$BUILD/lib/libsagerun.so.0
# A build without nvcc keeps its plugins in <build>/plugins, a CUDA build in the repository's.
PLUGINS=$BUILD/plugins
[ -f "$PLUGINS/reference.so" ] || PLUGINS=$ROOT/plugins
if [ ! -f "$PLUGINS/reference.so" ] || [ ! -f "$PLUGINS/reference-mt.so" ]; then
    echo "SKIP: the reference variants are not built (no $PLUGINS/reference.so)"; exit 0
fi
[ -f "$LIB" ] || { fail "the library under test is at $LIB"; finish; exit; }
# A sanitizer's runtime must be the first library of the process, which python3 is not
if nm -D "$LIB" 2>/dev/null | grep -q '__asan_init\|__tsan_init'; then
    echo "SKIP: a sanitizer build's library cannot be loaded into python3 (test_reference runs)"
    exit 0
fi
# numpy: Debian's python3-numpy belongs to /usr/bin/python3, not to a python3 earlier in PATH
PY=""
for cand in ${SAGERUN_TEST_PYTHON:-} /usr/bin/python3 python3; do
    if "$cand" -c 'import numpy' 2>/dev/null; then PY=$cand; break; fi
done
if [ -z "$PY" ]; then
    echo "SKIP: no python3 with numpy (python3-numpy) for the oracle"; exit 0
fi
export SAGERUN_CACHE_DIR=${SAGERUN_CACHE_DIR:-$TMP/cache}
check "reference and reference-mt against the float64 oracle, every feature and pairs" 0 \
    "$PY" "$ROOT/test/python/test_features_oracle.py" "$LIB" "$PLUGINS"
echo "$out" | sed 's/^/  | /'
contains "no case failed" "---- 0 of "
finish
