#!/usr/bin/env bash
# Issue 17, H200 run 26 (2026-12-03): the check of what lands (main's warp-specialized: the refilling warp
# rotates, no proxy fence before a refill, k-half 1 of the pre-pass's f16 V with channel pairs swapped):
# golden test, compute-sanitizer (4 tools x 3 shapes), the seed and the three shapes against
# baseline, interleave-softmax and v8 (build/exp27/ws-base.so, built from exp/trace's default = v8's cubin).
# Also the ping-pong of run 25 (ws-pp3s, ws-pp3, branch exp/pp) and run 24's ws-nfrs on the seed.
# Carried: build/bin build/lib/libsagerun.so.0.1.0 build/test/gpu/test_sage2_golden plugins .dev build/exp27.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.dev/golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15 PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp27 R=$OUT/run26; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
M="--plugin $PWD/plugins"; X="$M"; for n in ws-base ws-nfrs ws-pp3s ws-pp3; do X="$X --plugin $E/$n.so"; done
step golden 300 env SAGERUN_TEST_PLUGINS=$PWD/plugins build/test/gpu/test_sage2_golden
step seed 240 $S compare $X --variant interleave-softmax --variant warp-specialized --variant ws-base --variant ws-nfrs --variant ws-pp3s --variant ws-pp3 --max-time 8 --timeout 20 --json $R/seed.json
for sh in 4,8192,32,128 1,131072,8,128 2,4097,8,2,128; do
  step shape-$sh 120 $S compare $X --shape $sh --variant interleave-softmax --variant warp-specialized --variant ws-base --max-time 5 --json $R/shape-$sh.json
done
i=0
for tool in memcheck racecheck synccheck initcheck; do
  for sh in "1,333,3,128" "2,200,4,2,64 --causal --dtype bf16" "1,1000,2,128 --layout hnd"; do i=$((i+1))
    step san$i-$tool 90 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run $M --variant warp-specialized --shape $sh --warmup 0 --iterations 1
  done; done
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" golden.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" san*.log | sort | uniq -c; echo "== seed"; sed -n 1,20p seed.log; for f in shape-*.log; do echo "== $f"; sed -n 7,12p $f; done; } > summary.txt 2>&1
tar czf /tmp/logs.tgz *.log && rm -f *.log && mv /tmp/logs.tgz $R/logs.tgz
cat $R/summary.txt | head -80
