#!/usr/bin/env bash
# Issue 17, H200 run 24 (2026-12-03): the refill's cost on warp 0 (run 23's trace: its Q.K phase 841 cycles per
# tile against ~460 for warps 1-3). build/exp25 (build-config.sh, branch exp/trace): ws-base (shipped config),
# ws-nf (no proxy fence before the refill's copies: TMA writes, wgmma reads, no generic access to the ring),
# ws-rot (warp j%4 refills), ws-nfr (both), ws-nfrm (+ the max as a tree), ws-nfrq (+ one Q.K group per slice),
# ws-pp3 / ws-pp3s (branch exp/pp: two blocks per CTA whose softmax phases alternate, WS_PAIR 3: block index from %tid, blocks numbered across heads, 304 B spills / block by shuffle, adjacent row blocks, 120 B spills), ws-nfm (no fence + tree), ws-nfrs (ws-nfr + k-half 1 of f16 V with channel pairs swapped, so the fold adds h0[i] + h1[i^1]: registers of different parity), ws-nfrt / ws-tr (phase traces of ws-nfr and ws-base).
# Carried: build/bin build/lib/libsagerun.so.0.1.0 plugins .dev/lib build/exp25.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp25 R=$OUT/run24; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
M="--plugin $PWD/plugins"; for n in ws-base ws-nf ws-rot ws-nfr ws-nfrm ws-nfrq ws-nfm ws-nfrt ws-tr ws-nfrs ws-pp3 ws-pp3s; do M="$M --plugin $E/$n.so"; done
step seed 300 $S compare $M --variant interleave-softmax --variant warp-specialized --variant ws-nf --variant ws-rot --variant ws-nfr --variant ws-nfrm --variant ws-nfrq --variant ws-nfm --variant ws-nfrs --variant ws-pp3 --variant ws-pp3s --variant ws-tr --variant ws-nfrt --max-time 6 --json $R/seed.json
i=0
for tool in racecheck synccheck; do
  for sh in "1,333,3,128" "2,200,4,2,64 --causal --dtype bf16"; do i=$((i+1))
    step san$i-$tool 90 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 4 $S run $M --variant ws-nfr --shape $sh --warmup 0 --iterations 1
  done; done
cd $R && { cat steps.txt; sed -n 7,22p seed.log; grep -h "trace.*per tile" seed.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" san*.log | sort | uniq -c; } > summary.txt 2>&1
tar czf ../run24.tgz . ; cat summary.txt
