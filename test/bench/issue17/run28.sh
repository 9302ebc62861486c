#!/usr/bin/env bash
# Issue 17, H200 run 28 (2026-12-03, fourth session): why the ping-pong did not pay (run 27: ws-pp 70.36 ms
# against main's 69.34 and the turnless ws-ppnt's 70.72): phase clocks of main (ws-tr) and of the ping-pong
# (ws-pp-tr), the turn around P.V instead (ws-ppv), and 64-channel P.V groups with one in flight (ws-n64,
# ws-pp-n64; 176 and 116 B of spills), built from exp/v13 into build/exp29. Seed only.
# Carried: build/bin build/lib/libsagerun.so.0.1.0 plugins .dev/lib build/exp29.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
S=$PWD/build/bin/sagerun E=$PWD/build/exp29 R=$OUT/run28; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
V="ws-pp ws-ppv ws-n64 ws-pp-n64 ws-tr ws-pp-tr"
X="--plugin $PWD/plugins"; Y=""; for n in $V; do X="$X --plugin $E/$n.so"; Y="$Y --variant $n"; done
step seed 240 $S compare $X --variant interleave-softmax --variant warp-specialized $Y --max-time 8 --timeout 20 --json $R/seed.json
cd $R && { grep -v "rc=0" steps.txt; echo "(others rc=0)"; echo "== seed"; sed -n 1,20p seed.log; grep "^trace" seed.log; } > summary.txt 2>&1
tar czf /tmp/logs.tgz *.log && rm -f *.log && mv /tmp/logs.tgz $R/logs.tgz
cat $R/summary.txt | head -90
