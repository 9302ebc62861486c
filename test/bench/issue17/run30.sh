#!/usr/bin/env bash
# Issue 17, H200 run 30 (2026-12-03, fourth session), branch exp/v13 built into build/exp31:
#  ws-kss (and gold/warp-specialized): K's scale delivered with the tile (row D of the pre-pass's f16 V
#    tile, read from shared memory; run 29's early global load was -1.9% with 68 B of spills, this has
#    none) and the warpgroup index broadcast by a shuffle (causal kernels: 0 B of spills against 272);
#  ws-pp: the ping-pong (two warpgroups, one ring, 256-row CTAs) with the turn around the softmax;
#  ws-ppn (and goldpp/warp-specialized): the turn around the exponentials only (row maxima outside it);
#  ws-kss-tr, ws-ppn-tr: phase clocks.
# Golden test and compute-sanitizer for both gold builds; seed, the three shapes and a causal one.
# Carried: build/bin build/lib/libsagerun.so.0.1.0 build/test/gpu/test_sage2_golden plugins .dev build/exp31.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.dev/golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15 PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp31 R=$OUT/run30; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
for g in gold goldpp; do cp plugins/baseline.so plugins/baseline-fp16acc.so plugins/interleave-softmax.so plugins/reference.so $E/$g/; done
V="ws-kss ws-ppn ws-ppn-tr"
X="--plugin $PWD/plugins"; Y=""; for n in $V; do X="$X --plugin $E/$n.so"; Y="$Y --variant $n"; done
step seed 240 $S compare $X --variant interleave-softmax --variant warp-specialized $Y --max-time 8 --timeout 20 --json $R/seed.json
for sh in "4,8192,32,128" "1,131072,8,128" "2,4097,8,2,128" "4,8192,32,128 --causal"; do
  step "shape-${sh// /}" 120 $S compare $X --shape $sh --variant interleave-softmax --variant warp-specialized --variant ws-kss --variant ws-ppn --max-time 5 --timeout 20
done
for g in gold goldpp; do
  step golden-$g 90 env SAGERUN_TEST_PLUGINS=$E/$g build/test/gpu/test_sage2_golden
  i=0
  for tool in memcheck racecheck synccheck initcheck; do
    for sh in "1,333,3,128" "1,64,1,128" "2,200,4,2,64 --causal --dtype bf16" "1,1000,2,128 --layout hnd"; do i=$((i+1))
      step san-$g-$i-$tool 45 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run --plugin $E/$g --variant warp-specialized --shape $sh --warmup 0 --iterations 1
    done; done
done
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" golden-*.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" san*.log | sort | uniq -c; echo "== seed"; grep -A9 "^variant" seed.log; grep "^trace" seed.log; for f in shape-*.log; do echo "== $f"; grep -A6 "^variant" $f; done; } > summary.txt 2>&1
tar czf /tmp/logs.tgz *.log && rm -f *.log && mv /tmp/logs.tgz $R/logs.tgz
cat $R/summary.txt | head -100
