#!/usr/bin/env bash
# Issue 17, H200 run 36 (2026-12-04, sixth session): where main's time goes after the integer row maxima
# (8323b60's warp-specialized, the shipped plugin): the tile loop's per-instruction stalls (loop_stalls.py,
# stall_groups.py over ncu's source counters) and ncu's pipe metrics, on 1x8192x8x128 as in run 23 (v8).
# Carried: build/bin build/lib/libsagerun.so.0.1.0 plugins .dev/lib.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun R=$OUT/run36; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
M="--plugin $PWD/plugins"
step ncu-src 200 ncu --section SourceCounters --section WarpStateStats -k regex:sage2_attn --launch-skip 1 --launch-count 1 -o /tmp/src $S run $M --variant warp-specialized --shape 1,8192,8,128 --warmup 1 --iterations 1
ncu -i /tmp/src.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2> $R/src.err
python3 test/bench/issue17/loop_stalls.py /tmp/src.csv > $R/loop-stalls.txt 2>&1
python3 test/bench/issue17/stall_groups.py /tmp/src.csv 8 > $R/stall-groups.txt 2>&1
step ncu-pipes 200 ncu --metrics "regex:sm__inst_executed_pipe_.*\.avg\.pct_of_peak_sustained_active$,regex:sm__pipe_.*_cycles_active\.avg\.pct_of_peak_sustained_active$,smsp__warp_issue_stalled_dispatch_stall_per_warp_active.pct" -k regex:sage2_attn --launch-skip 1 --launch-count 1 $S run $M --variant warp-specialized --shape 1,8192,8,128 --warmup 1 --iterations 1
cd $R && { cat steps.txt; grep -E "pct|%" ncu-pipes.log | grep -v "^==" | sort -k3 -n -r | head -24; sed -n 1,12p stall-groups.txt; sed -n '/^by opcode/,$p' loop-stalls.txt | head -24; } > summary.txt 2>&1
gzip -f src.err 2>/dev/null; rm -f *.log.gz; gzip -f ncu-src.log ncu-pipes.log 2>/dev/null
cat summary.txt | head -90
