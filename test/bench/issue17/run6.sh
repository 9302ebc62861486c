#!/usr/bin/env bash
# Issue 17, H200 run 6: what synccheck reports on the warp-specialized kernels; v4 (240 registers) on the seed.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/lib:$PWD/.devc:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0 && ln -sf libsagerun.so.0 libsagerun.so)
R=$OUT/r; mkdir -p $R
X="--plugin build/exp/ws-s1v4.so --plugin build/exp/ws-s1v4r240.so"
for v in warp-specialized ws-s1v4r240; do
  timeout 120 compute-sanitizer --tool synccheck --print-limit 6 $S run $X --variant $v --shape 1,333,3,128 --warmup 0 --iterations 1 > $R/sync-$v.log 2>&1
done
timeout 150 $S compare $X --variant interleave-softmax --variant warp-specialized --variant ws-s1v4r240 --max-time 10 > $R/seed.log 2>&1
{ for v in warp-specialized ws-s1v4r240; do echo "== sync $v"; head -60 $R/sync-$v.log; done; echo "== seed"; grep -v "^  *$" $R/seed.log | sed -n 5,12p; } > $OUT/summary.txt
cat $OUT/summary.txt
