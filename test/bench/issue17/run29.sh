#!/usr/bin/env bash
# Issue 17, H200 run 29 (2026-12-03, fourth session). Run 28's clocks: in the ping-pong the two softmax
# phases (1520 and 1880 cycles, against 983 for a warp alone on its scheduler) fill the whole cycle. Is it
# K's scale, loaded at the softmax's start (ws-pp-ksa, traced: ws-pp-ksa-tr; main's form ws-ksa-u, 68 B of
# spills)? And the warpgroup index broadcast by a shuffle in main's configuration (ws-u: ptxas then spills
# nothing in the causal kernels either, against 272 B). SASS of main (mainu.cubin) and the ping-pong
# (pp.cubin, ppksa.cubin) for reading. Built from exp/v13 into build/exp30.
# Carried: build/bin build/lib/libsagerun.so.0.1.0 plugins .dev/lib build/exp30. (The committed run29/logs.tgz
# leaves the SASS listings out: 2 MB.)
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun E=$PWD/build/exp30 R=$OUT/run29; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
for c in mainu pp ppksa; do cuobjdump -sass $E/$c.cubin > $R/$c.sass 2>&1; done
V="ws-u ws-pp ws-pp-ksa ws-ksa-u ws-pp-ksa-tr"
X="--plugin $PWD/plugins"; Y=""; for n in $V; do X="$X --plugin $E/$n.so"; Y="$Y --variant $n"; done
step seed 240 $S compare $X --variant interleave-softmax --variant warp-specialized $Y --max-time 8 --timeout 20 --json $R/seed.json
step causal 120 $S compare $X --shape 4,8192,32,128 --causal --variant interleave-softmax --variant warp-specialized --variant ws-u --max-time 5 --timeout 20
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; echo "== seed"; grep -A9 "^variant" seed.log; grep "^trace" seed.log; echo "== causal"; grep -A5 "^variant" causal.log; } > summary.txt 2>&1
tar czf /tmp/logs.tgz *.log *.sass && rm -f *.log *.sass && mv /tmp/logs.tgz $R/logs.tgz
cat $R/summary.txt | head -90
