#!/usr/bin/env bash
# Issue 12, H200: does creating every instance before preparing any (outputs side by side, not each
# beside the previous entry's quantized tensors) remove the cold A/A's slow baseline entry? Old and
# new library alternate, four processes each, per shape. Carried: build/bin, plugins, .dev/lib,
# build/dev1 (lib/: the new libsagerun.so.0, old/: the one before).
set -u
S=$PWD/build/bin/sagerun R=$OUT/r P="--plugin $PWD/plugins"
mkdir -p $R
for k in 1 2 3 4; do for lib in old lib; do for sh in 1,1,1,128 1,777,2,64; do
  n=$(echo $sh | tr , x)
  LD_LIBRARY_PATH=$PWD/build/dev1/$lib:$PWD/.dev/lib timeout 40 $S compare $P --baseline interleave-softmax --variant interleave-softmax --shape $sh --max-time 4 --cache cold --quiet --json $R/$lib-$n-$k.json > $R/$lib-$n-$k.log 2>&1
done; done; done
python3 - $R > $OUT/summary.txt <<'PYEOF'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    d = json.load(open(f)); v = d["variants"]
    iv = v[1].get("speedup_interval_percent") or {}
    print("%-26s %8.3f %8.3f us  %+.2f%% [%+.2f, %+.2f] %s" % (os.path.basename(f), v[0]["timing"]["p50_s"]*1e6, v[1]["timing"]["p50_s"]*1e6, iv.get("estimate", 0), iv.get("low", 0), iv.get("high", 0), v[1].get("verdict")))
PYEOF
cd $OUT && tar czf order.tgz r && rm -rf r
