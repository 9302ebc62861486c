#!/usr/bin/env bash
# Issue 12, H200: the cold A/A of a microsecond call differs by up to +-2% between two instances of
# one variant, by a sign that changes from process to process (order.sh). Is it the output's
# address translation, evicted by the flush with the page-table lines? The flush now ends with one
# read per 2 MiB page of the timed call's output (sr_timer_touch); SAGERUN_EXP_NO_TOUCH=1 (an
# experiment switch, removed after this run) leaves it out. Alternating, four processes each, and
# ncu's cold time of the same kernels. Carried: build/bin, plugins, .dev/lib, build/dev1 (lib/).
set -u
export LD_LIBRARY_PATH=$PWD/build/dev1/lib:$PWD/.dev/lib
S=$PWD/build/bin/sagerun R=$OUT/r P="--plugin $PWD/plugins"
mkdir -p $R
NCU="ncu --clock-control none --metrics gpu__time_duration.sum -k regex:sage2_attn --launch-skip 3 --launch-count 15 --csv"
for sh in 1,1,1,128 1,777,2,64; do
  n=$(echo $sh | tr , x)
  timeout 60 $NCU --cache-control all $S run $P --variant interleave-softmax --shape $sh --warmup 3 --iterations 15 > $R/ncu-cold-$n.log 2>&1
  for k in 1 2 3 4; do for mode in touch notouch; do
    env $([ $mode = notouch ] && echo SAGERUN_EXP_NO_TOUCH=1) timeout 40 $S compare $P --baseline interleave-softmax --variant interleave-softmax --shape $sh --max-time 4 --cache cold --quiet --json $R/$mode-$n-$k.json > $R/$mode-$n-$k.log 2>&1
  done; done
done
python3 - $R > $OUT/summary.txt <<'PYEOF'
import json, sys, glob, os, csv, io, statistics
R = sys.argv[1]
for f in sorted(glob.glob(R + "/ncu-cold-*.log")):
    vals = [float(r[-1].replace(",", "")) / 1000 for r in csv.reader(io.StringIO("\n".join(l for l in open(f) if l.startswith('"')))) if len(r) > 3 and r[-3] == "gpu__time_duration.sum"]
    print(os.path.basename(f), "median %.3f us" % statistics.median(vals) if vals else "none")
for f in sorted(glob.glob(R + "/*.json")):
    d = json.load(open(f)); v = d["variants"]
    iv = v[1].get("speedup_interval_percent") or {}
    print("%-26s %8.3f %8.3f us  %+.2f%% [%+.2f, %+.2f] %s" % (os.path.basename(f), v[0]["timing"]["p50_s"]*1e6, v[1]["timing"]["p50_s"]*1e6, iv.get("estimate", 0), iv.get("low", 0), iv.get("high", 0), v[1].get("verdict")))
PYEOF
cd $OUT && tar czf touch.tgz r && rm -rf r
