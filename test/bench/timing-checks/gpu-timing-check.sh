#!/usr/bin/env bash
# GPU checks of the timing rules (slow mode, per-variant K cap, warm-up 0, SIGPIPE, drift), on the
# device: `run` it from the repository root after `make`, carrying build/bin, build/lib,
# build/test/gpu, build/test-plugins, plugins and a folder of libsodium (here .dev/lib). Outputs in $OUT/gpu13.
set -u
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
(cd build/lib && ln -sf libsagerun.so.0.1.0 libsagerun.so.0 && ln -sf libsagerun.so.0.1.0 libsagerun.so)
S=$PWD/build/bin/sagerun R=$OUT/gpu13; mkdir -p $R
export SAGERUN=$S SAGERUN_TEST_FAKES=$PWD/build/test-plugins SAGERUN_TEST_PLUGINS=$PWD/plugins SAGERUN_CACHE_DIR=/tmp/srcache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $(( $(date +%s) - t0 )) s" | tee -a $R/steps.txt; }
for t in test_gpu_basics test_quantize_gpu; do step $t 150 build/test/gpu/$t; done
step seed 200 $S compare --variant interleave-softmax --variant warp-specialized --max-time 8 --json $R/seed.json
step aa 120 $S compare --shape 1,4096,8,128 --baseline warp-specialized --variant warp-specialized --max-time 4 --json $R/aa.json
step small 120 $S compare --shape 1,512,8,128 --variant warp-specialized --variant interleave-softmax --max-time 3 --json $R/small.json
step warm0 120 $S compare --shape 1,512,8,128 --variant warp-specialized --schedule fixed --rounds 6 --iterations 3 --warmup 0 --json $R/warm0.json
step pipe 120 bash -c "$S compare --shape 1,1024,8,128 --variant warp-specialized --max-time 1 --json $R/pipe.json | true; exit \${PIPESTATUS[0]}"
cd $R && { cat gpu.txt; cat steps.txt; grep -h "PASSED\|FAILED\|SKIP" test_*.log;
  for f in seed aa small warm0 pipe; do echo "== $f"; grep -A5 "^variant" $f.log; grep -h "^warning\|timer" $f.log | head -8; done
  python3 -c "
import json
for f in ['seed','aa','small','warm0','pipe']:
    try: r = json.load(open(f + '.json'))
    except Exception as e: print(f, 'no report', e); continue
    print(f, r['measurement']['ended_by'], r['rounds_completed'], [(v['label'], v.get('verdict'), v['measurement']['timer'], v['measurement']['calls_per_sample']) for v in r['variants']])
"; } > summary.txt 2>&1
cat summary.txt
