#!/usr/bin/env bash
# Issue 12 cold-vs-ncu experiment: (a) is the gap a timing-definition offset? CUPTI kernel
# timestamps on hot single calls against ncu hot; (b) does evicting address translations
# (SAGERUN_FLUSH_PAGES_MIB) close it? ncu in the same run.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export SAGERUN_CUPTI_LIBRARY=$(ls /usr/local/cuda-13.0/targets/x86_64-linux/lib/libcupti.so* | head -1)
S=$PWD/build/bin/sagerun
R=$OUT/r; mkdir -p $R
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
AA="--baseline interleave-softmax --variant interleave-softmax --quiet --max-time 3"
for sh in 1,1,1,128 1,777,2,64 3,300,5,128; do
  n=$(echo $sh | tr , x)
  NCU="ncu --clock-control none --metrics gpu__time_duration.sum -k regex:sage2_attn --launch-skip 3 --launch-count 15 --csv"
  step ncu-hot-$n 60 $NCU --cache-control none $S run --variant interleave-softmax --shape $sh --warmup 3 --iterations 15
  step ncu-cold-$n 60 $NCU --cache-control all $S run --variant interleave-softmax --shape $sh --warmup 3 --iterations 15
  step hot-cupti-$n 30 env SAGERUN_KERNEL_CLOCK_HOT=1 $S compare $AA --shape $sh --timer event --json $R/hot-cupti-$n.json
  step hot-event-$n 30 $S compare $AA --shape $sh --timer event --json $R/hot-event-$n.json
  step cold-$n 30 $S compare $AA --shape $sh --cache cold --json $R/cold-$n.json
  step cold-pages-$n 40 env SAGERUN_FLUSH_PAGES_MIB=32768 $S compare $AA --shape $sh --cache cold --json $R/cold-pages-$n.json
done
python3 - $R > $OUT/summary.txt <<'PYEOF'
import json, sys, glob, os, statistics, csv, io
R = sys.argv[1]
def ncu(path):
    try: txt = open(path).read()
    except OSError: return None
    lines = [l for l in txt.splitlines() if l.startswith('"')]
    vals = []
    for row in csv.reader(io.StringIO("\n".join(lines))):
        if len(row) > 3 and row[-3] == "gpu__time_duration.sum":
            unit = row[-2]; v = float(row[-1].replace(",", ""))
            vals.append(v * {"nsecond": 1e-3, "usecond": 1, "msecond": 1e3}.get(unit, 1))
    return statistics.median(vals) if vals else None
def rep(path):
    try: d = json.load(open(path))
    except Exception as e: return None
    return [v["timing"]["p50_s"] * 1e6 for v in d["variants"] if v.get("timing")]
for sh in ["1x1x1x128", "1x777x2x64", "3x300x5x128"]:
    print(sh, "ncu hot %s cold %s" % (ncu(f"{R}/ncu-hot-{sh}.log"), ncu(f"{R}/ncu-cold-{sh}.log")))
    for k in ["hot-cupti", "hot-event", "cold", "cold-pages"]:
        print("   %-11s %s" % (k, rep(f"{R}/{k}-{sh}.json")))
PYEOF
cat $R/steps.txt >> $OUT/summary.txt
cd $OUT && tar czf exp12.tgz r && rm -rf r
