#!/usr/bin/env bash
# Needs the build it ran on: commit 5241818 (the every-SM touch and SAGERUN_EXP_TOUCH_ONE were
# reverted after this run; RESULTS.md, issue 12 run 5).
# Issue 12, H200: shared-output/run2 showed per-process offsets of +-0.5% between two instances of
# one variant in a cold us A/A, steady over all 200 rounds, whether their outputs shared pages,
# had their own mapped pages or came from cuMemAlloc. What is per instance then is the output's
# address: its translation. The touch after the flush warmed it from one CTA, i.e. on one SM; the
# call's CTA may land elsewhere. Now the touch runs a CTA on every SM (sr_timer_touch);
# SAGERUN_EXP_TOUCH_ONE=1 (an experiment switch of this build, removed after) is the one CTA.
#   1. the whole issue-12 check of cold-gap/run.sh on this build;
#   2. cold A/As alternating every-SM and one-CTA touches, one process each, on the two us shapes.
# Carried: build/bin, plugins, .dev/lib, build/test-plugins, build/dev1.
# Usage (device, repository root): bash test/bench/issue12/touch-every-sm/run.sh
set -u
export LD_LIBRARY_PATH=$PWD/build/dev1/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
S=$PWD/build/bin/sagerun R=$OUT/x P="--plugin $PWD/plugins"
mkdir -p $R
bash test/bench/issue12/cold-gap/run.sh
mv $OUT/summary.txt $OUT/cold-gap-summary.txt
AA="$P --baseline interleave-softmax --variant interleave-softmax --max-time 4 --cache cold"
for k in ${REPS:-1 2 3 4 5 6 7 8}; do for sh in 1,1,1,128 1,777,2,64; do for mode in every one; do
  n=$(echo $sh | tr , x)
  timeout 40 env $([ $mode = one ] && echo SAGERUN_EXP_TOUCH_ONE=1) $S compare $AA --shape $sh --quiet --json $R/$mode-$n-$k.json > $R/$mode-$n-$k.log 2>&1
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
    print("%-6s %-11s %s  %8.3f %8.3f us  %+.2f%% [%+.2f, %+.2f] %s" % (mode, shape, k,
          v[0]["timing"]["p50_s"]*1e6, v[1]["timing"]["p50_s"]*1e6, iv.get("estimate", 0),
          iv.get("low", 0), iv.get("high", 0), v[1].get("verdict")))
    rows.setdefault((mode, shape), []).append((iv.get("estimate", 0), v[1].get("verdict")))
for (mode, shape), r in sorted(rows.items()):
    est = [e for e, _ in r]
    print("%-6s %-11s mean |estimate| %.2f points, sd %.2f, max %.2f; same %d of %d" % (mode, shape,
          statistics.mean(abs(e) for e in est), statistics.pstdev(est), max(abs(e) for e in est),
          sum(v == "same" for _, v in r), len(r)))
PYEOF
cat $R/steps.txt >> $OUT/exp-summary.txt
cd $OUT && tar czf touch-every-sm.tgz x && rm -rf x
cat $OUT/cold-gap-summary.txt $OUT/exp-summary.txt
