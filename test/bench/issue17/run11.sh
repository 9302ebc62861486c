#!/usr/bin/env bash
# Issue 17, H200 run 11: the final tree (golden test as shipped, seed A/B through the CLI).
set -u
export LD_LIBRARY_PATH=$PWD/.dev/lib:$PWD/.devc:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.golden SAGERUN_TEST_PLUGINS=$PWD/plugins SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15
S=$PWD/build/bin/sagerun
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0 && ln -sf libsagerun.so.0 libsagerun.so)
mkdir -p $OUT
timeout 60 build/test/gpu/test_sage2_golden > $OUT/golden.log 2>&1; echo "golden rc=$?" > $OUT/summary.txt
timeout 60 $S compare --variant interleave-softmax --variant warp-specialized --max-time 8 --json $OUT/seed.json > $OUT/seed.log 2>&1; echo "seed rc=$?" >> $OUT/summary.txt
{ grep -h "PASSED\|FAILED\|SKIP" $OUT/golden.log; grep -E "^(baseline|interleave|warp)|commit" $OUT/seed.log; } >> $OUT/summary.txt
cat $OUT/summary.txt
