#!/usr/bin/env bash
# Issue 17, H200 run 12 (2026-12-01 ~20:04 UTC, main 64fa570): exp/desc-words (dbac876) against main's
# plugins in one run, and ncu source counters of warp-specialized and interleave-softmax.
# Built here, carried: build/bin, plugins (main), .dev/lib (libsodium, cmocka), .golden, build/dev1 with
#   lib/libsagerun.so.0 (main's), test_sage2_golden, dw/ws-dw.so and dw/is-dw.so (the branch's two
#   kernels under the names ws-dw / is-dw: WS_NAME for warp-specialized, SAGE2_VARIANT_NAME edited for
#   interleave-softmax) and dw/as/ (the branch's warp-specialized.so and interleave-softmax.so beside
#   main's baseline, baseline-fp16acc and reference, for the golden test).
# Outputs: run12/ (stall-groups-*.txt: test/bench/issue17/stall_groups.py over the source pages).
set -u
export LD_LIBRARY_PATH=$PWD/build/dev1/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.golden PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun D=$PWD/build/dev1 R=$OUT
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
for c in $D/sass/*.cubin; do cuobjdump -sass $c > $R/$(basename $c .cubin).sass 2>&1; done  # ws-main, is-main, ws-dw cubins (nvcc -cubin, the plugin flags)
step seed-dw 200 $S compare --plugin $PWD/plugins --plugin $D/dw/ws-dw.so --plugin $D/dw/is-dw.so --variant interleave-softmax --variant warp-specialized --variant ws-dw --variant is-dw --json $R/seed-dw.json
step golden-dw 240 env SAGERUN_TEST_PLUGINS=$D/dw/as $D/test_sage2_golden
for v in warp-specialized interleave-softmax; do
  step ncu-$v 150 ncu --section SourceCounters --section WarpStateStats --section SchedulerStats --section SpeedOfLight --clock-control none -k regex:sage2_attn --launch-skip 1 --launch-count 1 -o /tmp/src-$v $S run --plugin $PWD/plugins --variant $v --shape 1,8192,8,128 --warmup 1 --iterations 1
  ncu -i /tmp/src-$v.ncu-rep --page source --csv --print-source sass > $R/src-$v.csv 2> $R/src-$v.err || ncu -i /tmp/src-$v.ncu-rep --page source --csv > $R/src-$v.csv 2>> $R/src-$v.err
  ncu -i /tmp/src-$v.ncu-rep --page details --csv > $R/details-$v.csv 2>&1
done
cd $R && tar czf /tmp/all.tgz . && rm -f *.sass *.csv && mv /tmp/all.tgz $R/all.tgz  # one archive: at most 8 files come back
