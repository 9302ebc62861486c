#!/usr/bin/env bash
# Issue 17, H200 run 46 (prepared 2026-12-05, eleventh session, no device lent): run 45's two checks (ncu source
# counters of main; a backtrace of run's SIGSEGV under compute-sanitizer) and three candidates from
# run46-kpre-ilv.patch, each against main in the same compare:
#   ws-kpre (WS_KPRE=1): tile j+1's K stage tested (mbarrier.test_wait, no branch) and its descriptor made during
#     P.V(j)'s last group; the tile's top spins only when the test failed. Loop 886 instructions (9 of the 10
#     extra on the rarely taken spin path), 0 B spills. The span from P.V's last wait to the first Q.K wgmma,
#     which every warp walks before the Q.K rendezvous, falls from 63 instructions and an mbarrier round trip
#     to 49 and none. Prediction: -0.5..-2% on the seed.
#   ws-ilv3 (WS_WGILV=3): within each wgmma group no wgmma follows one writing its accumulator (P.V: the low
#     steps of both k-halves, then the high steps; Q.K: k-step outer over the two slices); every accumulator
#     sees the same wgmmas in the same order, so the bytes are the same. Loop 878, 0 B. Prediction: -3..+1%,
#     unknown: it depends on whether back-to-back wgmmas on one accumulator stall in the tensor pipe.
#   ws-kpi: both (890 instructions, 0 B). Prediction: about the sum.
# With the switches off the patch leaves every cubin's SASS identical (cuobjdump -sass, md5).
# Build: bash test/bench/issue17/prepare46.sh (applies the patch, builds build/exp46 with run 45's backtrace
# handler, reverts); keep unstripped copies of build/bin/sagerun and the library here for addr2line, then strip
# what is carried.
# Carried (64 MiB with the tracked tree; 8 paths): build/bin build/lib/libsagerun.so.0.1.0
# build/test/gpu/test_sage2_golden build/test-plugins/fault_gpu_illegal.so plugins .dev/lib .dev/pack build/exp46.
set -u
[ -d .dev/golden ] || [ ! -f .dev/pack/golden.tgz ] || tar xzf .dev/pack/golden.tgz -C .dev
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.dev/golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15 PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp46 F=$PWD/build/test-plugins R=$OUT/run46; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
G="goldkpre goldilv3 goldkpi"
for g in $G; do cp plugins/baseline.so plugins/baseline-fp16acc.so plugins/interleave-softmax.so plugins/reference.so $E/$g/; done
step golden-main 120 env SAGERUN_TEST_PLUGINS=$PWD/plugins build/test/gpu/test_sage2_golden
for g in $G; do step golden-$g 120 env SAGERUN_TEST_PLUGINS=$E/$g build/test/gpu/test_sage2_golden; done
X="--plugin $PWD/plugins --plugin $E/ws-kpre.so --plugin $E/ws-ilv3.so --plugin $E/ws-kpi.so"
V="--variant interleave-softmax --variant warp-specialized --variant ws-kpre --variant ws-ilv3 --variant ws-kpi"
step seed 240 $S compare $X $V --max-time 8 --timeout 20 --json $R/seed.json
for sh in "4,8192,32,128" "1,131072,8,128" "2,4097,8,2,128" "4,8192,32,128 --causal"; do
  [ $SECONDS -lt 330 ] || { echo "shape-${sh// /} skipped (time)" >> $R/steps.txt; continue; }
  step "shape-${sh// /}" 90 $S compare $X --shape $sh $V --max-time 3 --timeout 20
done
# run 45: where run dies of SIGSEGV under compute-sanitizer after a launch failure (run 44)
export SAGERUN_TEST_FAULTS=1
ILL="--plugin $F/fault_gpu_illegal.so --variant fault-gpu-illegal --backend cuda --shape 1,1024,8,128 --warmup 1 --iterations 2"
step san-bt 60 compute-sanitizer --tool memcheck --print-limit 1 env LD_PRELOAD=$E/segv_bt.so $S run --in-process $ILL
unset SAGERUN_TEST_FAULTS
# run 45: ncu source counters of main (1x8192x8x128)
[ $SECONDS -lt 420 ] && step ncu-src 120 ncu --section SourceCounters --section WarpStateStats -k regex:sage2_attn --launch-skip 1 --launch-count 1 -o /tmp/src $S profile --plugin $PWD/plugins --variant warp-specialized --shape 1,8192,8,128 --warmup 1 \
  && ncu -i /tmp/src.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2> $R/src.err \
  && python3 test/bench/issue17/loop_stalls.py /tmp/src.csv > $R/loop-stalls.txt 2>&1
# the sanitizers on ws-kpre's mbarrier test (the one change to synchronisation), as time allows
i=0
for tool in memcheck racecheck synccheck initcheck; do
  for sh in "1,333,3,128" "2,200,4,2,64 --causal --dtype bf16"; do i=$((i+1))
    [ $SECONDS -lt 540 ] || { echo "san-kpi-$i-$tool skipped (time)" >> $R/steps.txt; continue; }
    step san-kpi-$i-$tool 40 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S profile --plugin $E/goldkpi --variant warp-specialized --shape $sh --warmup 0
  done; done
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" golden-*.log; echo "sanitizers kpi:"; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" san-kpi-*.log | sort | uniq -c; echo "== seed"; grep -A8 "^variant" seed.log; for f in shape-*.log; do echo "== $f"; grep -A7 "^variant" $f; done; echo "== segv backtrace"; grep -n "segv_bt" -A30 san-bt.log | head -40; } > summary.txt 2>&1
sed -n '/^by opcode/,$p' loop-stalls.txt 2>/dev/null | head -12 >> summary.txt
tar czf /tmp/logs.tgz *.log && rm -f *.log && mv /tmp/logs.tgz $R/logs.tgz
cat $R/summary.txt | head -120
