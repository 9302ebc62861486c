#!/usr/bin/env bash
# Cold A/As of interleave-softmax on the three us shapes, one process each, alternating two modes
# of one build: MODE_ON runs as built, MODE_OFF with the environment switch SWITCH=1 set. Writes
# $OUT/exp-summary.txt (per A/A, then per mode and shape: sd of the estimates, "same" count) and
# $OUT/NAME.tgz (the reports). REPS: the repetitions (default 1..6).
# Usage (device, repository root): bash test/bench/issue12/cold-aa-modes.sh NAME MODE_ON MODE_OFF SWITCH
set -u
NAME=$1 ON=$2 OFF=$3 SWITCH=$4
export LD_LIBRARY_PATH=$PWD/build/dev1/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
S=$PWD/build/bin/sagerun R=$OUT/x P="--plugin $PWD/plugins"
mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
AA="$P --baseline interleave-softmax --variant interleave-softmax --max-time 4 --cache cold"
for k in ${REPS:-1 2 3 4 5 6}; do for sh in 1,1,1,128 1,777,2,64 3,300,5,128; do for mode in $ON $OFF; do
  n=$(echo $sh | tr , x)
  timeout 40 env $([ $mode = $OFF ] && echo $SWITCH=1) $S compare $AA --shape $sh --quiet --json $R/$mode-$n-$k.json > $R/$mode-$n-$k.log 2>&1
  echo "$mode-$n-$k rc=$?" >> $R/steps.txt
done; done; done
python3 - $R > $OUT/exp-summary.txt <<'PYEOF'
import json, sys, glob, os, statistics
R = sys.argv[1]
rows = {}
for f in sorted(glob.glob(R + "/*-*-*.json")):
    mode, shape, k = os.path.basename(f)[:-5].split("-")
    d = json.load(open(f)); v = d["variants"]
    iv = v[1].get("speedup_interval_percent") or {}
    hw = (iv.get("high", 0) - iv.get("low", 0)) / 2
    print("%-6s %-11s %s  %8.3f %8.3f us  %+.2f%% [%+.2f, %+.2f] hw %.2f %s rounds %d" % (mode, shape, k,
          v[0]["timing"]["p50_s"]*1e6, v[1]["timing"]["p50_s"]*1e6, iv.get("estimate", 0),
          iv.get("low", 0), iv.get("high", 0), hw, v[1].get("verdict"), d["rounds_completed"]))
    rows.setdefault((mode, shape), []).append((iv.get("estimate", 0), v[1].get("verdict"), hw))
for (mode, shape), r in sorted(rows.items()):
    est = [e for e, _, _ in r]
    print("%-6s %-11s mean |estimate| %.2f points, sd %.2f, max %.2f; mean half-width %.2f; same %d of %d" % (mode, shape,
          statistics.mean(abs(e) for e in est), statistics.pstdev(est), max(abs(e) for e in est),
          statistics.mean(h for _, _, h in r), sum(v == "same" for _, v, _ in r), len(r)))
PYEOF
cat $R/steps.txt >> $OUT/exp-summary.txt
cd $OUT && tar czf $NAME.tgz x && rm -rf x
cat $OUT/exp-summary.txt
