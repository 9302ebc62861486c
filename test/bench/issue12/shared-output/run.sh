#!/usr/bin/env bash
# Needs the build it ran on: branch exp/cold-shared-outputs (main no longer has the output sharing,
# SAGERUN_COLD_OWN_OUTPUTS or SAGERUN_EXP_PLAIN_OUTPUTS; RESULTS.md, issue 12 runs 3-4).
# Issue 12, H200: the cold A/A of a microsecond call split two instances of one variant by up to
# 2%, per instance and per process (cold-gap/ run 2: 1x1x1x128 -0.86% [-1.44, -0.27] ambiguous).
# Guess: where each instance's own output pages fell (an L2 partition near or far). The engine now
# maps every entry's output onto the baseline's pages for the cold rounds (libsagerun/output.c);
# SAGERUN_COLD_OWN_OUTPUTS=1 keeps each on its own pages, as before. Here, in one run:
#   1. test_gpu_basics (output sharing, cold reports) and the golden test (every variant's bytes
#      on the new output memory);
#   2. the whole issue-12 check of cold-gap/run.sh on this build (ncu hot/cold, A/A hot/cold,
#      seed A/A and A/B, the calibrated slowdown);
#   3. cold A/As alternating shared, own and (run 2) plain outputs, one process each, on the two
#      us shapes (run 1: MODES="shared own" REPS="1 2 3 4 5 6").
# Carried: build/bin, build/lib, plugins, .dev/lib, build/test-plugins, build/dev1, .golden.
# Usage (device, repository root): bash test/bench/issue12/shared-output/run.sh
set -u
export LD_LIBRARY_PATH=$PWD/build/dev1/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun R=$OUT/x P="--plugin $PWD/plugins"
mkdir -p $R
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
step golden 240 env SAGERUN_GOLDEN_DIR=$PWD/.golden SAGERUN_TEST_PLUGINS=$PWD/plugins build/dev1/test_sage2_golden
bash test/bench/issue12/cold-gap/run.sh
mv $OUT/summary.txt $OUT/cold-gap-summary.txt
# a Python variant (torch tensors viewing sagerun's o) under the cold remapping (run 2)
step torch-cold 120 env SAGERUN_PYTHON=/opt/torch/.venv/bin/python3 $S compare $P --plugin $PWD/examples/python/torch_sdpa.py --baseline baseline --variant torch-sdpa-cudnn --shape 1,4096,8,128 --min-cos 0.9999 --max-time 2 --cache cold --json $R/torch-cold.json
AA="$P --baseline interleave-softmax --variant interleave-softmax --max-time 4 --cache cold"
# shared: the default; own: SAGERUN_COLD_OWN_OUTPUTS=1 (each entry its own mapped pages); plain
# (run 2 only): SAGERUN_EXP_PLAIN_OUTPUTS=1, an experiment switch of that build, outputs from
# cuMemAlloc as before this change (each its own, placed by the driver's allocator).
envof() { case $1 in own) echo SAGERUN_COLD_OWN_OUTPUTS=1;; plain) echo SAGERUN_EXP_PLAIN_OUTPUTS=1;; esac; }
for k in ${REPS:-1 2 3 4 5 6 7 8}; do for sh in 1,1,1,128 1,777,2,64; do for mode in ${MODES:-shared own plain}; do
  n=$(echo $sh | tr , x)
  step $mode-$n-$k 40 env $(envof $mode) $S compare $AA --shape $sh --quiet --json $R/$mode-$n-$k.json
done; done; done
python3 - $R > $OUT/exp-summary.txt <<'PYEOF'
import json, sys, glob, os, statistics
R = sys.argv[1]
rows = {}
for f in sorted(glob.glob(R + "/*-*-*.json")):
    if "torch" in f: continue
    mode, shape, k = os.path.basename(f)[:-5].split("-")
    d = json.load(open(f)); v = d["variants"]
    iv = v[1].get("speedup_interval_percent") or {}
    print("%-6s %-11s %s  %8.3f %8.3f us  %+.2f%% [%+.2f, %+.2f] %-16s shared=%s" % (mode, shape, k,
          v[0]["timing"]["p50_s"]*1e6, v[1]["timing"]["p50_s"]*1e6, iv.get("estimate", 0),
          iv.get("low", 0), iv.get("high", 0), v[1].get("verdict"), d["measurement"].get("cold_outputs_shared")))
    rows.setdefault((mode, shape), []).append((iv.get("estimate", 0), v[1].get("verdict")))
for (mode, shape), r in sorted(rows.items()):
    est = [e for e, _ in r]
    print("%-6s %-11s mean |estimate| %.2f points, max %.2f; verdicts %s" % (mode, shape,
          statistics.mean(abs(e) for e in est), max(abs(e) for e in est), " ".join(v for _, v in r)))
PYEOF
cat $R/steps.txt >> $OUT/exp-summary.txt
grep -h 'cold rounds\|launch gap\|SKIP\|PASSED\|FAILED' $R/golden.log $OUT/cold-gap-summary.txt >> $OUT/exp-summary.txt
tail -25 $R/torch-cold.log >> $OUT/exp-summary.txt 2>/dev/null
cd $OUT && tar czf shared-output.tgz x && rm -rf x
cat $OUT/cold-gap-summary.txt $OUT/exp-summary.txt
