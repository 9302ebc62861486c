#!/usr/bin/env bash
# The scripted A/B gate example (examples/scripted/ab-gate.sh) on the host backend: it must fail
# a variant that is not byte-exact, and fail (reading the JSON) a variant that is not faster by
# an impossible margin.
set -u
source "$(dirname "$0")/lib.sh"
export SAGERUN=$S SAGERUN_PLUGIN_PATH=$FAKES
gate=$ROOT/examples/scripted/ab-gate.sh
check "gate rejects a non-byte-exact variant" 1 \
    bash "$gate" fake-good 0 --backend host --shape 1,64,1,64 --rounds 2 --iterations 2 \
    && contains "says why" "GATE FAIL: fake-good is not byte-exact"
check "gate reads the report and applies the minimum gain" 1 \
    bash "$gate" reference-mt 1000000 --backend host --shape 1,64,1,64 --rounds 2 --iterations 2 \
    && contains "needs faster" "GATE FAIL: need verdict 'faster' with the interval above +1000000" \
    && contains "read the JSON" "byte_exact True"
# without --backend (it passed --baseline baseline unless the options held the word --backend, and
# compare then failed on a machine without a GPU), and the speedup it prints is the interval's own
# estimate (it printed the seed's p50 ratio beside the paired interval, outside it at times)
check "gate without --backend" 1 bash "$gate" reference-mt 1000000 --shape 1,64,1,64 --rounds 4 \
    --iterations 2 && contains "against compare's default baseline" "speedup over reference "
python3 -c '
import re, sys
m = re.search(r"speedup over \S+ ([-+][0-9.]+)% \[([-+][0-9.]+), ([-+][0-9.]+)\]", sys.argv[1])
assert m and float(m[2]) <= float(m[1]) <= float(m[3]), sys.argv[1]' "$out" \
    && echo "ok   the estimate printed lies in its interval" || fail "the estimate printed" "$out"
finish
