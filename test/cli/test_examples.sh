#!/usr/bin/env bash
# The scripted A/B gate example (examples/scripted/ab-gate.sh) on the host backend: it must fail
# a variant that is not byte-exact, and fail (reading the JSON) a variant that is not faster by
# an impossible margin.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export SAGERUN=${SAGERUN:?set SAGERUN}
export SAGERUN_PLUGIN_PATH=${SAGERUN_TEST_FAKES:-$ROOT/build/test-plugins}
gate=$ROOT/examples/scripted/ab-gate.sh
fails=0
out=$(bash "$gate" fake-good 0 --backend host --shape 1,64,1,64 --rounds 2 --iterations 2 2>&1)
if [ $? -ne 1 ] || ! grep -q "GATE FAIL: fake-good is not byte-exact" <<<"$out"; then
    echo "FAIL gate on a non-byte-exact variant"; echo "$out" | sed 's/^/  | /'; fails=$((fails+1))
else echo "ok   gate rejects a non-byte-exact variant"; fi
out=$(bash "$gate" reference-mt 1000000 --backend host --shape 1,64,1,64 --rounds 2 --iterations 2 2>&1)
if [ $? -ne 1 ] || ! grep -q "GATE FAIL: need verdict 'faster' with the interval above +1000000" <<<"$out" \
   || ! grep -q "reference-mt: p50 .* byte_exact True" <<<"$out"; then
    echo "FAIL gate reads the JSON"; echo "$out" | sed 's/^/  | /'; fails=$((fails+1))
else echo "ok   gate reads the report and applies the minimum gain"; fi
[ $fails -eq 0 ]
