#!/usr/bin/env bash
# Issue 17, H200 run 34 (2026-12-04, sixth session), built into build/exp34 from main's kernel with switches:
# (WS_KS_EARLY and WS_SPLIT_SOFTMAX were removed after the run: neither gained; NOTES-kernels.md, run 34)
#  ws-ke (and goldke/warp-specialized): K's scale read from shared memory before the Q.K wait (WS_KS_EARLY);
#  ws-sx: slice 0's first P.V group issued before slice 1's softmax (WS_SPLIT_SOFTMAX; 28 B of spills; not built: the carry limit);
#  ws-sxke (and goldsxke/warp-specialized): both.
# Seed against main and interleave-softmax, the shapes and a causal one for ws-ke and ws-sxke; the golden test and
# sanitizers of both gold builds.
# Carried: build/bin build/lib/libsagerun.so.0.1.0 build/test/gpu/test_sage2_golden plugins .dev build/exp34.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.dev/golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15 PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp34 R=$OUT/run34; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
for g in goldke goldsxke; do cp plugins/baseline.so plugins/baseline-fp16acc.so plugins/interleave-softmax.so plugins/reference.so $E/$g/; done
V="ws-ke ws-sxke"
X="--plugin $PWD/plugins"; Y=""; for n in $V; do X="$X --plugin $E/$n.so"; Y="$Y --variant $n"; done
step seed 240 $S compare $X --variant interleave-softmax --variant warp-specialized $Y --max-time 8 --timeout 20 --json $R/seed.json
for sh in "4,8192,32,128" "1,131072,8,128" "2,4097,8,2,128" "4,8192,32,128 --causal"; do
  step "shape-${sh// /}" 120 $S compare $X --shape $sh --variant interleave-softmax --variant warp-specialized --variant ws-ke --variant ws-sxke --max-time 5 --timeout 20
done
for g in goldke goldsxke; do step golden-$g 90 env SAGERUN_TEST_PLUGINS=$E/$g build/test/gpu/test_sage2_golden; done
i=0
for tool in memcheck racecheck synccheck initcheck; do
  for sh in "1,333,3,128" "1,64,1,128" "2,200,4,2,64 --causal --dtype bf16" "1,1000,2,128 --layout hnd"; do i=$((i+1))
    for g in goldke goldsxke; do
      step san-$g-$i-$tool 45 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run --plugin $E/$g --variant warp-specialized --shape $sh --warmup 0 --iterations 1
    done
  done; done
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" golden-*.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" san*.log | sort | uniq -c; echo "== seed"; grep -A9 "^variant" seed.log; for f in shape-*.log; do echo "== $f"; grep -A6 "^variant" $f; done; } > summary.txt 2>&1
tar czf /tmp/logs.tgz *.log && rm -f *.log && mv /tmp/logs.tgz $R/logs.tgz
cat $R/summary.txt | head -100
