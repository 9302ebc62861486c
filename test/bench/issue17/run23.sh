#!/usr/bin/env bash
# Issue 17, H200 run 23 (2026-12-03, third session): where v8's time goes, measured rather than inferred.
# build/exp24 (build-config.sh from branch exp/trace): ws-base (the shipped configuration), ws-tr (v8 with
# per-warp phase clocks: Q.K issue+wait, softmax, P.V, dumped at destroy), ws-tr1 / ws-base1 (the same at one
# CTA per SM: WS_SMEM_PAD), ws-qs (one Q.K group per slice, slice 0's softmax starts at its own scores).
# Also v8's SASS (ws-base.cubin), the loop's per-instruction stalls (loop_stalls.py) and ncu's pipe metrics.
# Carried: build/bin build/lib/libsagerun.so.0.1.0 plugins .dev/lib build/exp24.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp24 R=$OUT
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
cuobjdump -sass $E/ws-base.cubin | gzip > $R/ws-base.sass.gz
M="--plugin $PWD/plugins"; for n in ws-base ws-qs ws-tr ws-tr1 ws-base1; do M="$M --plugin $E/$n.so"; done
step smoke 60 $S run $M --variant ws-tr --shape 1,1000,2,128 --iterations 2
step seed 300 $S compare $M --variant interleave-softmax --variant warp-specialized --variant ws-base --variant ws-qs --variant ws-tr --variant ws-base1 --variant ws-tr1 --max-time 6 --json $R/seed.json
step tr8192 60 $S compare $M --shape 1,8192,8,128 --variant ws-tr --variant ws-tr1 --max-time 2
step ncu-src 200 ncu --section SourceCounters --section WarpStateStats -k regex:sage2_attn --launch-skip 1 --launch-count 1 -o /tmp/src $S run $M --variant ws-base --shape 1,8192,8,128 --warmup 1 --iterations 1
ncu -i /tmp/src.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2> $R/src.err
python3 test/bench/issue17/loop_stalls.py /tmp/src.csv > $R/loop-stalls.txt 2>&1
python3 test/bench/issue17/stall_groups.py /tmp/src.csv 8 > $R/stall-groups.txt 2>&1
step ncu-pipes 200 ncu --metrics "regex:sm__inst_executed_pipe_.*\.avg\.pct_of_peak_sustained_active$,regex:sm__pipe_.*_cycles_active\.avg\.pct_of_peak_sustained_active$,smsp__warp_issue_stalled_dispatch_stall_per_warp_active.pct" -k regex:sage2_attn --launch-skip 1 --launch-count 1 $S run $M --variant ws-base --shape 1,8192,8,128 --warmup 1 --iterations 1
cd $R && { cat steps.txt; sed -n 1,30p seed.log; grep -h trace seed.log tr8192.log; sed -n 1,12p tr8192.log; grep -E "pct|%" ncu-pipes.log | grep -v "^==" | sort -k3 -n -r | head -40; sed -n 1,12p stall-groups.txt; } > summary.txt 2>&1
gzip -f src.err 2>/dev/null; cat summary.txt | head -120
