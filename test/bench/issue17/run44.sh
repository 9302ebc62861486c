#!/usr/bin/env bash
# H200 run 44 (2026-12-05, tenth session): harness checks on a GPU, no kernel timing. Since `run` forks a
# watched child (ninth session): do compute-sanitizer's defaults reach the child's kernels, or only
# --target-processes all / run --in-process? A plugin reading an illegal address (fault_gpu_illegal) must be
# reported as an invalid read in each form that claims to check it. Also test_gpu_basics and the CLI fault
# tests (their GPU section: an illegal address poisoning the context) on a real device.
# First call (outputs in run44a/): the plugin faulted on its second call, so run with one call never faulted,
# and test_faults.sh failed on the GPU (the checked call, not a timed one, faulted: a stale expectation). The
# plugin now faults on its third call, and run makes three (warm-up 1, iterations 2).
# Carried: build/bin build/lib/libsagerun.so.0.1.0 build/test/gpu/test_gpu_basics build/test-plugins plugins .dev/lib.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun F=$PWD/build/test-plugins R=$OUT/run44; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; timeout "$limit" "$@" > "$R/$name.log" 2>&1; echo "$name rc=$?" | tee -a $R/steps.txt; }
export SAGERUN_TEST_FAULTS=1
ILL="--plugin $F/fault_gpu_illegal.so --variant fault-gpu-illegal --backend cuda --shape 1,1024,8,128 --warmup 1 --iterations 2"
step san-default 60 compute-sanitizer --tool memcheck --print-limit 2 $S run $ILL
step san-all 60 compute-sanitizer --tool memcheck --print-limit 2 --target-processes all $S run $ILL
step san-inproc 60 compute-sanitizer --tool memcheck --print-limit 2 $S run --in-process $ILL
step plain 60 $S run $ILL
step gputest-basics 120 env SAGERUN_TEST_PLUGINS=$PWD/plugins SAGERUN_TEST_FAKES=$F build/test/gpu/test_gpu_basics
step cli-faults 300 env SAGERUN=$S SAGERUN_TEST_FAKES=$F SAGERUN_CACHE_DIR=/tmp/sr-cache bash test/cli/test_faults.sh
cd $R && for f in san-default san-all san-inproc plain; do echo "== $f"; grep -E "Invalid __global__|ERROR SUMMARY|sagerun: |output_sha256|ILLEGAL" $f.log | head -5; done
grep -hE "PASSED|FAILED" gputest-basics.log; grep -E "GPU|^FAIL|failure\(s\)" cli-faults.log | head -8; cat steps.txt
