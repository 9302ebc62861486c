#!/usr/bin/env bash
# Issue 12, H200: where does a cold A/A's 0.6 us between two instances of one variant come from
# (run 1: 1x1x1x128 entry 0 20.60 us, entry 1 19.88)? Four instances per comparison, each twice in
# separate processes: a fixed offset per entry position says placement (each instance's output
# buffer), a changing one says luck. Carried as run.sh.
set -u
export LD_LIBRARY_PATH=$PWD/build/dev1/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
S=$PWD/build/bin/sagerun R=$OUT/r P="--plugin $PWD/plugins"
mkdir -p $R
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
A4="$P --baseline interleave-softmax --variant interleave-softmax --variant interleave-softmax --variant interleave-softmax --max-time 4"
for k in 1 2; do
  step cold4-1x1x1x128-$k 40 $S compare $A4 --shape 1,1,1,128 --cache cold --json $R/cold4-1x1x1x128-$k.json
  step cold4-1x777x2x64-$k 40 $S compare $A4 --shape 1,777,2,64 --cache cold --json $R/cold4-1x777x2x64-$k.json
  step hot4-3x300x5x128-$k 40 $S compare $A4 --shape 3,300,5,128 --json $R/hot4-3x300x5x128-$k.json
done
python3 - $R > $OUT/summary.txt <<'PYEOF'
import json, sys, statistics, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    d = json.load(open(f))
    vs = [v for v in d["variants"] if v.get("samples_s")]
    s = [[x * 1e6 for x in (v["samples_s"] if not isinstance(v["samples_s"][0], list) else sum(v["samples_s"], []))] for v in vs]
    med = [round(statistics.median(x), 3) for x in s]
    verd = [(v.get("verdict"), round((v.get("speedup_interval_percent") or {}).get("estimate") or 0, 3)) for v in vs[1:]]
    print(os.path.basename(f), "medians", med, "vs entry 0:", verd)
PYEOF
cat $R/steps.txt >> $OUT/summary.txt
cd $OUT && tar czf aa4.tgz r && rm -rf r
