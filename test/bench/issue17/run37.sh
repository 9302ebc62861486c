#!/usr/bin/env bash
# Issue 17, H200 run 37 (2026-12-04, sixth session): the uniform datapath's descriptor work (run 36: ~110
# uniform instructions of the loop's 831), built into build/exp37 with experiment switches:
#  ws-d1 (not carried: the carry limit): P.V's descriptors from the V tile's (WS_BASE_DESC: one per tile, not per group);
#  ws-d2 (and goldd2/warp-specialized): ws-d1 + Q's descriptors made once (WS_Q_DESC_HOIST).
# Seed and shapes against main, SASS opcode counts of main.cubin and d2.cubin, golden and sanitizers of goldd2.
# Carried: build/bin build/lib/libsagerun.so.0.1.0 build/test/gpu/test_sage2_golden plugins .dev build/exp37.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.dev/golden SAGERUN_GOLDEN15_DIR=$PWD/test/gpu/golden15 PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp37 R=$OUT/run37; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
for c in main d2; do gunzip -c $E/$c.cubin.gz > /tmp/$c.cubin
  cuobjdump -sass -fun sage2_attn_warp_specialized /tmp/$c.cubin | grep -oE "^\s+/\*[0-9a-f]+\*/\s+[A-Z][A-Z0-9_.]*" | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn > $R/opcodes-$c.txt; done
cp plugins/baseline.so plugins/baseline-fp16acc.so plugins/interleave-softmax.so plugins/reference.so $E/goldd2/
V="ws-d2"
X="--plugin $PWD/plugins"; Y=""; for n in $V; do X="$X --plugin $E/$n.so"; Y="$Y --variant $n"; done
step seed 240 $S compare $X --variant interleave-softmax --variant warp-specialized $Y --max-time 8 --timeout 20 --json $R/seed.json
for sh in "4,8192,32,128" "1,131072,8,128" "2,4097,8,2,128" "4,8192,32,128 --causal"; do
  step "shape-${sh// /}" 120 $S compare $X --shape $sh --variant interleave-softmax --variant warp-specialized $Y --max-time 5 --timeout 20
done
step golden-goldd2 90 env SAGERUN_TEST_PLUGINS=$E/goldd2 build/test/gpu/test_sage2_golden
i=0
for tool in memcheck racecheck synccheck initcheck; do
  for sh in "1,333,3,128" "1,64,1,128" "2,200,4,2,64 --causal --dtype bf16" "1,1000,2,128 --layout hnd"; do i=$((i+1))
    step san-$i-$tool 45 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run --plugin $E/goldd2 --variant warp-specialized --shape $sh --warmup 0 --iterations 1
  done; done
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; grep -h "PASSED\|FAILED" golden-*.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" san*.log | sort | uniq -c; echo "== seed"; grep -A9 "^variant" seed.log; for f in shape-*.log; do echo "== $f"; grep -A6 "^variant" $f; done; for c in main d2; do echo "== opcodes $c: $(awk '{s+=$1} END {print s}' opcodes-$c.txt) instructions, uniform $(awk '$2 ~ /^U/ {s+=$1} END {print s}' opcodes-$c.txt)"; head -12 opcodes-$c.txt | tr '\n' ' '; echo; done; } > summary.txt 2>&1
tar czf /tmp/logs.tgz *.log && rm -f *.log && mv /tmp/logs.tgz $R/logs.tgz
cat $R/summary.txt | head -100
