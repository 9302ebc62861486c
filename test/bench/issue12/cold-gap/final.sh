#!/usr/bin/env bash
# Last device check of this session's tree: the GPU tests that cover it (gpu_basics with the cold
# launch-gap case, the sage2 golden test), cold A/A of 1x1x1x128 in three more processes, and the
# seed with every sage2 variant. Carried: build/bin, plugins, .dev/lib, build/test-plugins, .golden,
# build/dev1 (lib/libsagerun.so.0, test_gpu_basics, test_sage2_golden).
set -u
export LD_LIBRARY_PATH=$PWD/build/dev1/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.golden SAGERUN_TEST_FAKES=$PWD/build/test-plugins SAGERUN_TEST_PLUGINS=$PWD/plugins
S=$PWD/build/bin/sagerun R=$OUT/r P="--plugin $PWD/plugins"
mkdir -p $R
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $R/gpu.txt 2>&1
step gpu-basics 120 build/dev1/test_gpu_basics
step golden 300 build/dev1/test_sage2_golden
for k in 1 2 3; do
  step cold-aa-$k 40 $S compare $P --baseline interleave-softmax --variant interleave-softmax --shape 1,1,1,128 --max-time 4 --cache cold --json $R/cold-aa-$k.json
done
step seed-all 120 $S compare $P --variant interleave-softmax --variant warp-specialized --json $R/seed-all.json
{ grep -h 'launch gap\|SKIP\|PASSED\|FAILED' $R/gpu-basics.log $R/golden.log
  for f in $R/cold-aa-*.log $R/seed-all.log; do echo "== $(basename $f)"; grep -A6 '^variant ' $f; done
  cat $R/steps.txt; } > $OUT/summary.txt
cd $OUT && tar czf final.tgz r && rm -rf r
