#!/usr/bin/env bash
# Issue 12, H200: cold samples = kernel timestamps (CUPTI) + the variant's launch gap, against ncu's
# gpu__time_duration (cache control all = cold, none = hot) in the same run; hot A/A on the same
# shapes; then the final build's seed A/A and baseline-vs-interleave-softmax, and the calibrated
# slowdown. Built here, carried: build/bin, plugins, .dev/lib (libsodium, cmocka), build/test-plugins,
# build/dev1 (lib/libsagerun.so.0 of this build, test_gpu_basics).
# Usage (device, repository root): bash test/bench/issue12/cold-gap/run.sh   (outputs under $OUT)
set -u
export LD_LIBRARY_PATH=$PWD/build/dev1/lib:$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
S=$PWD/build/bin/sagerun R=$OUT/r P="--plugin $PWD/plugins"
mkdir -p $R
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s%N)
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a $R/steps.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
git log -1 --format=%H > $R/commit.txt 2>/dev/null
step gpu-basics 120 env SAGERUN_TEST_FAKES=$PWD/build/test-plugins build/dev1/test_gpu_basics
AA="$P --baseline interleave-softmax --variant interleave-softmax --max-time 4"
NCU="ncu --clock-control none --metrics gpu__time_duration.sum -k regex:sage2_attn --launch-skip 3 --launch-count 15 --csv"
for sh in 1,1,1,128 1,777,2,64 3,300,5,128 4,8192,32,128; do
  n=$(echo $sh | tr , x)
  step ncu-hot-$n 60 $NCU --cache-control none $S run $P --variant interleave-softmax --shape $sh --warmup 3 --iterations 15
  step ncu-cold-$n 60 $NCU --cache-control all $S run $P --variant interleave-softmax --shape $sh --warmup 3 --iterations 15
  step cold-$n 40 $S compare $AA --shape $sh --cache cold --json $R/cold-$n.json
  step hot-$n 40 $S compare $AA --shape $sh --json $R/hot-$n.json
done
step seed-aa 60 $S compare $AA --json $R/seed-aa.json
step seed-ab 60 $S compare $P --baseline baseline --variant interleave-softmax --json $R/seed-ab.json
step slowed 60 $S compare --plugin build/test-plugins/gpu_spin.so --plugin build/test-plugins/gpu_spin_slowed.so --shape 1,64,1,64 --no-accuracy --baseline gpu-spin --variant gpu-spin-slowed --json $R/slowed.json
python3 - $R > $OUT/summary.txt <<'PYEOF'
import json, sys, statistics, csv, io
R = sys.argv[1]
def ncu(path):
    try: txt = open(path).read()
    except OSError: return None
    vals = []
    for row in csv.reader(io.StringIO("\n".join(l for l in txt.splitlines() if l.startswith('"')))):
        if len(row) > 3 and row[-3] == "gpu__time_duration.sum":
            vals.append(float(row[-1].replace(",", "")) * {"ns": 1e-3, "nsecond": 1e-3, "us": 1, "usecond": 1, "ms": 1e3, "msecond": 1e3}.get(row[-2], 1))
    return statistics.median(vals) if vals else None
def rep(path):
    try: d = json.load(open(path))
    except Exception: return None
    vs = [v for v in d["variants"] if v.get("timing")]
    out = {"p50_us": [round(v["timing"]["p50_s"] * 1e6, 3) for v in vs],
           "gap_us": [None if (v.get("measurement") or {}).get("launch_gap_s") is None else round(v["measurement"]["launch_gap_s"] * 1e6, 3) for v in vs],
           "clock": d["measurement"]["sample_clock"]}
    v = vs[-1]
    iv = v.get("speedup_interval_percent") or {}
    out["verdict"] = v.get("verdict"); out["interval"] = [iv.get("estimate"), iv.get("low"), iv.get("high")]
    out["seed_formula"] = v.get("speedup_vs_baseline_percent")
    return out
for sh in ["1x1x1x128", "1x777x2x64", "3x300x5x128", "4x8192x32x128"]:
    h, c = ncu(f"{R}/ncu-hot-{sh}.log"), ncu(f"{R}/ncu-cold-{sh}.log")
    print(sh, "ncu hot", h, "cold", c)
    for k, ref in (("hot", h), ("cold", c)):
        r = rep(f"{R}/{k}-{sh}.json")
        if r and ref:
            r["diff_vs_ncu_percent"] = [round((p / ref - 1) * 100, 2) for p in r["p50_us"]]
            r["diff_vs_ncu_us"] = [round(p - ref, 3) for p in r["p50_us"]]
        print("   %-5s %s" % (k, r))
for k in ["seed-aa", "seed-ab", "slowed"]:
    print(k, rep(f"{R}/{k}.json"))
PYEOF
cat $R/steps.txt >> $OUT/summary.txt
grep -h 'launch gap\|cold rounds\|SKIP\|PASSED\|FAILED' $R/gpu-basics.log >> $OUT/summary.txt
cd $OUT && tar czf cold-gap.tgz r && rm -rf r
