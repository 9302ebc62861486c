#!/usr/bin/env bash
# H200 run 45 (2026-12-05, tenth session): (1) ncu source counters of main after run 41 (ws-siq), for the next
# session's stall map (run 41's were of the main before it); (2) where `run` dies of SIGSEGV under
# compute-sanitizer after a launch failure (run 44): a backtrace from an LD_PRELOADed SIGSEGV handler
# (test/bench/issue17/segv_bt.c, not part of the product).
# Prepared, not run (no device lent after run 44): next session, build the handler first
# (mkdir -p build/dbg && cc -O1 -g -shared -fPIC -o build/dbg/segv_bt.so test/bench/issue17/segv_bt.c), keep
# unstripped copies of build/bin/sagerun and the library to read the offsets with addr2line.
# Carried: build/bin build/lib/libsagerun.so.0.1.0 build/test-plugins plugins .dev/lib build/dbg.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-} PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun F=$PWD/build/test-plugins R=$OUT/run45; mkdir -p $R
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0)
export SAGERUN_TEST_FAULTS=1
ILL="--plugin $F/fault_gpu_illegal.so --variant fault-gpu-illegal --backend cuda --shape 1,1024,8,128 --warmup 1 --iterations 2"
timeout 60 compute-sanitizer --tool memcheck --print-limit 1 env LD_PRELOAD=$PWD/build/dbg/segv_bt.so $S run --in-process $ILL > $R/san-bt.log 2>&1; echo "san-bt rc=$?"
timeout 60 env LD_PRELOAD=$PWD/build/dbg/segv_bt.so $S run --in-process $ILL > $R/plain-bt.log 2>&1; echo "plain-bt rc=$?"
timeout 200 ncu --section SourceCounters --section WarpStateStats -k regex:sage2_attn --launch-skip 1 --launch-count 1 -o /tmp/src $S profile --plugin $PWD/plugins --variant warp-specialized --shape 1,8192,8,128 --warmup 1 > $R/ncu-src.log 2>&1; echo "ncu-src rc=$?"
ncu -i /tmp/src.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2> $R/src.err
python3 test/bench/issue17/loop_stalls.py /tmp/src.csv > $R/loop-stalls.txt 2>&1
grep -n "segv_bt" -A30 $R/san-bt.log | head -40
sed -n '/^by opcode/,$p' $R/loop-stalls.txt | head -12; grep -E "WARPGROUP|IGMMA.*RZ|HGMMA.*RZ" $R/loop-stalls.txt | sort -k2 -n -r | head -12
