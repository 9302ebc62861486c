#!/usr/bin/env bash
# A scripted A/B gate, e.g. for CI on a GPU runner: compare a candidate variant against the
# baseline, fail unless it is byte-exact AND faster with the whole 95% interval above a minimum
# gain. Reads the JSON report with python3 (jq works the same way). The baseline is compare's
# default (`baseline` on a GPU, `reference` on the host backend) unless the options name one.
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

"$SAGERUN" compare --variant "$candidate" --json "$report" --quiet "$@"
rc=$?
case $rc in
    0 | 3) ;;                                 # ran; 3: not byte-exact, said below
    *) echo "GATE FAIL: sagerun compare exited $rc"; exit 1 ;;
esac

python3 - "$report" "$candidate" "$min_gain" <<'PY'
import json, sys
path, label, min_gain = sys.argv[1], sys.argv[2], float(sys.argv[3])
report = json.load(open(path))
base = next(v for v in report["variants"] if v.get("is_baseline"))
# compare labels a variant by its spec (NAME[key=value,...], every parameter) or its name
v = next(v for v in report["variants"]
         if not v.get("is_baseline") and (v["label"] == label or v["name"] == label))
if v["byte_exact"] is not True:
    print(f"GATE FAIL: {v['label']} is not byte-exact with {base['label']}")
    sys.exit(1)
ci = v["speedup_interval_percent"]
if not ci:
    print(f"GATE FAIL: {v['label']} has no speedup interval (fewer than two rounds?)")
    sys.exit(1)
print(f"{v['label']}: p50 {v['timing']['p50_s'] * 1e3:.3f} ms, speedup over {base['label']} "
      f"{ci['estimate']:+.2f}% [{ci['low']:+.2f}, {ci['high']:+.2f}], "
      f"verdict {v['verdict']}, byte_exact {v['byte_exact']}")
if v["verdict"] != "faster" or ci["low"] < min_gain:
    print(f"GATE FAIL: need verdict 'faster' with the interval above +{min_gain}%")
    sys.exit(1)
print("GATE PASS")
PY
