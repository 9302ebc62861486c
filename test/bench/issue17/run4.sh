#!/usr/bin/env bash
# Issue 17, H200 run 4: v4 (softmax(j) overlapping tile j-1's last P.V groups) against v2 and v3b; stall metrics; SASS.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/lib:$PWD/.devc:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15
export PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0 && ln -sf libsagerun.so.0 libsagerun.so)
for d in build/exp/as-ws-*; do cp plugins/baseline.so plugins/interleave-softmax.so plugins/baseline-fp16acc.so $d/; done
R=$OUT/r; mkdir -p $R
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; return $rc; }
X="--plugin build/exp/ws-s1.so --plugin build/exp/ws-s1v4.so"
step smoke 30 $S run $X --variant ws-s1v4 --shape 1,1000,2,128 --iterations 2
SAGERUN_TEST_PLUGINS=$PWD/build/exp/as-ws-s1v4 step golden-s1v4 300 build/test/gpu/test_sage2_golden
step seed 150 $S compare $X --variant interleave-softmax --variant warp-specialized --variant ws-s1 --variant ws-s1v4 --max-time 12 --json $R/seed.json
M=smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
for r in barrier branch_resolving dispatch_stall drain lg_throttle math_pipe_throttle membar mio_throttle misc no_instruction not_selected selected short_scoreboard sleeping tex_throttle wait; do M=$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
M=$M,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active
for v in warp-specialized ws-s1v4 interleave-softmax; do
step ncu-$v 200 ncu --clock-control none -k regex:"warp_specialized|interleave" -s 1 -c 1 --metrics $M $S run $X --variant $v --shape 1,8192,8,128 --warmup 1 --iterations 1
done
mkdir -p /tmp/sass; for f in build/variants/warp-specialized/image.fatbin build/exp/ws-s1v4/image.fatbin build/exp/ws-s1/image.fatbin build/variants/interleave-softmax/image.fatbin; do cuobjdump -sass $f > /tmp/sass/$(echo $f | tr / _).sass 2>&1; done
tar czf $OUT/sass.tgz -C /tmp sass
{ cat $R/steps.txt; grep -h "PASSED\|FAILED" $R/golden-*.log; echo "== seed"; grep -v "^  *$" $R/seed.log | sed -n 6,12p;
  for v in warp-specialized ws-s1v4 interleave-softmax; do echo "== ncu $v"; grep -E "^\s+(sm|smsp)__" $R/ncu-$v.log | awk '{print $1, $NF}' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'; done; } > $OUT/summary.txt
cat $OUT/summary.txt
