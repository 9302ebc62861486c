#!/usr/bin/env bash
# Issue 16 (Python variants) and 18 (NVTX ranges under ncu/nsys) on the H200; memcheck API errors.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_GOLDEN_DIR=$PWD/.golden SAGERUN_TEST_PLUGINS=$PWD/plugins
mkdir -p /tmp/sx && tar xzf .dev/sage-built.tgz -C /tmp/sx
EXT=$(ls /tmp/sx/sageattention/_qattn_sm89*.so)
mkdir -p /tmp/sy && cp "$EXT" /tmp/sy/   # a second copy: the two-build A/B of one build (an A/A by path)
export PATH=$PATH:/usr/local/cuda/bin
ls /usr/local/cuda/bin | grep -i "nsys\|ncu" > $OUT/tools.txt; which nsys ncu >> $OUT/tools.txt 2>&1
timeout 400 env OUT=/tmp/py SAGE_EXT=$EXT SAGE_EXT_B=/tmp/sy/$(basename $EXT) bash test/gpu/python/run-h200.sh > /tmp/py-run.log 2>&1; echo "python rc=$?" >> /tmp/py-run.log
cp /tmp/py-run.log /tmp/py/ 2>/dev/null
timeout 100 bash test/gpu/nvtx/check_ranges.sh interleave-softmax /tmp/nvtx-is > $OUT/nvtx.txt 2>&1; echo "nvtx rc=$?" >> $OUT/nvtx.txt
timeout 60 compute-sanitizer --tool memcheck build/bin/sagerun run --variant interleave-softmax --backend cuda --shape 1,300,2,1,128 --causal --iterations 1 --warmup 0 > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$?" >> $OUT/memcheck.txt
cd /tmp && tar czf $OUT/py.tgz --exclude="*.nsys-rep" --exclude="*.ncu-rep" --exclude="*.sqlite" py nvtx-is 2>/dev/null; ls -la $OUT
cat /tmp/py/summary.txt 2>/dev/null | head -60
