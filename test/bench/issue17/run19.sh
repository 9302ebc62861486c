#!/usr/bin/env bash
# Issue 17, H200 run 19 (2026-12-03): v8, V converted once per call (NOTES-kernels.md). Built here with
# build-config.sh into build/exp19: ws-v2 (the shipped configuration of this code), ws-vf (-DWS_V_F16=1),
# ws-vf0 (-DWS_V_F16=1 -DWS_PRODUCER=0); as-vf*/ hold each as warp-specialized.so beside baseline and
# interleave-softmax for the golden test; plugins-main/ main's (93e2108) baseline, interleave-softmax and
# warp-specialized. Carried: build/bin build/lib/libsagerun.so.0.1.0 build/test/gpu/test_sage2_golden plugins .dev (libs, golden)
# build/exp19 (the test plugins' directories are completed here from plugins/).
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.dev/golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15 PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp19 R=$OUT
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
for d in as-vf as-vf0; do cp plugins/baseline.so plugins/interleave-softmax.so plugins/baseline-fp16acc.so plugins/reference.so $E/$d/; done
cp plugins/baseline.so plugins/interleave-softmax.so $E/plugins-main/
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
M="--plugin $E/plugins-main --plugin $E/ws-v2.so --plugin $E/ws-vf.so --plugin $E/ws-vf0.so"
for v in ws-vf ws-vf0; do step smoke-$v 60 $S run $M --variant $v --shape 1,1000,2,128 --iterations 2; done
step seed 240 $S compare $M --variant interleave-softmax --variant warp-specialized --variant ws-v2 --variant ws-vf --variant ws-vf0 --max-time 15 --json $R/seed.json
step golden-vf0 300 env SAGERUN_TEST_PLUGINS=$E/as-vf0 build/test/gpu/test_sage2_golden
for sh in 4,8192,32,128 1,131072,8,128 2,4097,8,2,128; do
  step shape-$sh 120 $S compare $M --shape $sh --variant interleave-softmax --variant warp-specialized --variant ws-vf --variant ws-vf0 --max-time 6 --json $R/shape-$sh.json
done
step golden-vf 300 env SAGERUN_TEST_PLUGINS=$E/as-vf build/test/gpu/test_sage2_golden
i=0
for tool in memcheck racecheck synccheck initcheck; do
  for sh in "1,333,3,128" "2,200,4,2,64 --causal --dtype bf16"; do i=$((i+1))
    step san$i-$tool 90 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run $M --variant ws-vf0 --shape $sh --warmup 0 --iterations 1
  done; done
for v in warp-specialized ws-vf0; do
  step ncu-$v 120 ncu --metrics sm__inst_issued.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,smsp__warps_eligible.avg.per_cycle_active,smsp__warps_active.avg.per_cycle_active -k regex:sage2_attn --launch-skip 1 --launch-count 1 $S run $M --variant $v --shape 1,8192,8,128 --warmup 1 --iterations 1
done
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" golden-*.log; echo "== seed"; sed -n 1,40p seed.log; for f in shape-*.log; do echo "== $f"; sed -n 1,30p $f; done; } > summary.txt 2>&1
tar czf /tmp/all.tgz *.log *.json && rm -f *.log && mv /tmp/all.tgz $R/all.tgz
cat $R/summary.txt | head -150
