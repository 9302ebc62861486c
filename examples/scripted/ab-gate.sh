#!/usr/bin/env bash
# A scripted A/B gate, e.g. for CI on a GPU runner: compare a candidate variant against the
# baseline, fail unless it is byte-exact AND faster with the whole 95% interval above a minimum
# gain. Reads the JSON report with python3 (jq works the same way).
#
#   examples/scripted/ab-gate.sh CANDIDATE [MIN_GAIN_PERCENT] [sagerun compare options...]
#   examples/scripted/ab-gate.sh interleave-softmax 5
#   examples/scripted/ab-gate.sh reference-mt 10 --backend host --shape 1,256,2,128
set -uo pipefail
candidate=${1:?usage: ab-gate.sh CANDIDATE [MIN_GAIN_PERCENT] [compare options...]}
min_gain=${2:-0}
shift $(( $# >= 2 ? 2 : 1 ))
SAGERUN=${SAGERUN:-sagerun}
report=$(mktemp --suffix=.json)
trap 'rm -f "$report"' EXIT

baseline=baseline
for arg in "$@"; do [ "$arg" = "--backend" ] && baseline=; done
if [ -z "$baseline" ]; then baseline=reference; fi # host runs: the oracle is the baseline

"$SAGERUN" compare --baseline "$baseline" --variant "$candidate" --json "$report" --quiet "$@"
rc=$?
case $rc in
    0) ;;                                     # ran, byte-exact
    3) echo "GATE FAIL: $candidate is not byte-exact with $baseline"; exit 1 ;;
    *) echo "GATE FAIL: sagerun compare exited $rc"; exit 1 ;;
esac

python3 - "$report" "$candidate" "$min_gain" <<'PY'
import json, sys
path, name, min_gain = sys.argv[1], sys.argv[2], float(sys.argv[3])
report = json.load(open(path))
v = next(v for v in report["variants"] if v["name"] == name and not v.get("is_baseline"))
ci = v["speedup_interval_percent"]
print(f"{name}: p50 {v['timing']['p50_s'] * 1e3:.3f} ms, speedup "
      f"{v['speedup_vs_baseline_percent']:+.2f}% [{ci['low']:+.2f}, {ci['high']:+.2f}], "
      f"verdict {v['verdict']}, byte_exact {v['byte_exact']}")
if v["verdict"] != "faster" or ci["low"] < min_gain:
    print(f"GATE FAIL: need verdict 'faster' with the interval above +{min_gain}%")
    sys.exit(1)
print("GATE PASS")
PY
