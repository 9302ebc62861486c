#!/usr/bin/env bash
# Issue 16 on a GPU (an H200): Python variants beside the C ones. From the repository root, after
# `make` (plugins/python/bridge.so and embed.so built: the build machine needs python3-dev; one
# build serves every Python from 3.9 on):
#
#   SAGE_EXT=/path/to/sageattention/_qattn_sm89.cpython-312-x86_64-linux-gnu.so OUT=/tmp/out \
#       bash test/gpu/python/run-h200.sh
#
#   SAGE_EXT    a build of SageAttention's _qattn_sm89 extension (thu-ml/SageAttention at d1a57a5:
#               `TORCH_CUDA_ARCH_LIST=9.0 python setup.py build_ext --inplace` builds it for sm_90)
#   SAGE_EXT_B  optional: a second build, for the A/B of two builds (else an A/A of the first)
#   SAGERUN_PYTHON  the interpreter with torch (default /opt/torch/.venv/bin/python3)
#   OUT         where the reports go (each step's output, JSON/markdown/CSV reports, summary.txt)
#
# Steps: what sagerun sees; a small workload with every Python variant (sageattention-ext must be
# byte-exact with baseline, SDPA within tolerance) in fp16, bf16 + causal, HND; the seed workload
# with baseline, interleave-softmax, sageattention-ext and torch-sdpa-cudnn in one compare; the
# A/B (or A/A) of the extension builds; the graph timer refusing a variant without graph=yes.
# Each compare's exit status is logged, not fatal (3 = some variant not accepted). summary.txt has
# every variant's p50, speedup, byte-exactness, how it was accepted and its per-call host time
# (host_call_s: for the Python variants the interpreter's per-call overhead).
set -uo pipefail
cd "$(dirname "$0")/../../.."
: "${OUT:?set OUT to the folder for the reports}"
: "${SAGE_EXT:?set SAGE_EXT to a build of the _qattn_sm89 extension of SageAttention (.so)}"
export SAGE_EXT SAGERUN_PYTHON=${SAGERUN_PYTHON:-/opt/torch/.venv/bin/python3}
S=build/bin/sagerun
mkdir -p "$OUT"

step() { # step NAME COMMAND...: its output in $OUT/NAME.txt, its exit status in run.log
    local name=$1; shift
    echo "== $name: $*" | tee -a "$OUT/run.log"
    "$@" > "$OUT/$name.txt" 2>&1
    echo "   exit $?" | tee -a "$OUT/run.log"
    tail -n 30 "$OUT/$name.txt"
}

if [ ! -x "$S" ] || [ ! -f plugins/python/bridge.so ] || [ ! -f plugins/python/embed.so ]; then
    echo "build first (make): $S and plugins/python/{bridge,embed}.so are needed"; exit 1
fi
[ -f "$SAGE_EXT" ] || { echo "SAGE_EXT=$SAGE_EXT: no such file"; exit 1; }
"$SAGERUN_PYTHON" -c 'import sys, torch; print("python", sys.version.split()[0], "torch",
    torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))' \
    | tee "$OUT/python.txt" || { echo "$SAGERUN_PYTHON cannot import torch"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/nvidia-smi.txt" 2>&1
sha256sum "$SAGE_EXT" ${SAGE_EXT_B:+"$SAGE_EXT_B"} plugins/python/*.so examples/python/*.py \
    > "$OUT/sha256.txt"

PLUG=(--plugin examples/python/torch_sdpa.py --plugin examples/python/sageattention_ext.py)
# SDPA against exact attention (fp16 outputs carry ~2.4e-4 relative rounding error per element,
# bf16 ~2e-3); per variant, so that sageattention-ext is still judged by its bytes
CUDNN_TOL=(--min-cos torch-sdpa-cudnn=0.9999 --max-rel-l1 torch-sdpa-cudnn=0.005)
SDPA_TOL=("${CUDNN_TOL[@]}" --min-cos torch-sdpa-flash=0.9999 --max-rel-l1 torch-sdpa-flash=0.005)
ALL=(--variant sageattention-ext --variant torch-sdpa-cudnn --variant torch-sdpa-flash)

step list "$S" list "${PLUG[@]}"
step small "$S" compare "${PLUG[@]}" --shape 1,4096,8,128 "${ALL[@]}" "${SDPA_TOL[@]}" \
    --max-time 3 --json "$OUT/small.json"
step small-bf16-causal "$S" compare "${PLUG[@]}" --shape 2,3000,8,128 --dtype bf16 --causal \
    "${ALL[@]}" "${SDPA_TOL[@]}" --max-time 3 --json "$OUT/small-bf16-causal.json"
step small-hnd-d64 "$S" compare "${PLUG[@]}" --shape 1,5000,4,64 --layout hnd "${ALL[@]}" \
    "${SDPA_TOL[@]}" --max-time 3 --json "$OUT/small-hnd-d64.json"
# the seed workload (the default): the four in one compare
step seed "$S" compare "${PLUG[@]}" --variant interleave-softmax --variant sageattention-ext \
    --variant torch-sdpa-cudnn "${CUDNN_TOL[@]}" --json "$OUT/seed-python.json" \
    --markdown "$OUT/seed-python.md" --csv "$OUT/seed-python.csv"
if [ -n "${SAGE_EXT_B:-}" ]; then
    export SAGE_EXT_B
    step seed-ab "$S" compare "${PLUG[@]}" --baseline sageattention-ext \
        --variant sageattention-ext-b --json "$OUT/seed-ab.json"
else
    step seed-aa "$S" compare "${PLUG[@]}" --baseline sageattention-ext \
        --variant sageattention-ext --json "$OUT/seed-aa.json"
fi
step graph-refused "$S" compare "${PLUG[@]}" --shape 1,4096,8,128 --variant torch-sdpa-cudnn \
    --timer graph "${CUDNN_TOL[@]}" --json "$OUT/graph-refused.json"
# head_dim 96: sageattention-ext refuses it (sagerun.Unsupported), the traceback under SAGERUN_DEBUG
step unsupported env SAGERUN_DEBUG=1 "$S" compare "${PLUG[@]}" --shape 1,1024,2,96 \
    --baseline torch-sdpa-flash --variant sageattention-ext --in-process

"$SAGERUN_PYTHON" - "$OUT"/*.json <<'EOF' | tee "$OUT/summary.txt"
import json, sys
for path in sys.argv[1:]:
    r = json.load(open(path))
    floor = (r.get("measurement") or {}).get("launch_floor_s")
    print("%s: q_shape %s, %s, launch floor %s us" % (path.rsplit("/", 1)[-1], r["q_shape"],
          r["device"]["name"], "%.2f" % (floor * 1e6) if floor else "-"))
    for v in r["variants"]:
        t, m = v["timing"], v.get("measurement") or {}
        iv = v.get("speedup_interval_percent") or {}
        host = m.get("host_call_s")
        print("  %-22s p50 %9s ms  speedup %-26s %-16s byte-exact %-5s accepted %-9s host %s us%s"
              % (v["label"], "%.3f" % (t["p50_s"] * 1e3) if t and t.get("p50_s") else "-",
                 "%+.2f%% [%+.2f, %+.2f]" % (iv["estimate"], iv["low"], iv["high"]) if iv else "-",
                 v.get("verdict") or "-", v["byte_exact"], v.get("accepted_by"),
                 "%.1f" % (host * 1e6) if host else "-",
                 "  FAILED: " + v["failure"] if v.get("failure") else ""))
        if v.get("tolerance") and v["tolerance"]["judged"]:
            print("  %-22s tolerance: %s" % ("", v["tolerance"]["detail"]))
        if v.get("extension_module"):
            print("  %-22s extension %s sha256 %s" % ("", v["extension_module"]["path"],
                                                     v["extension_module"]["sha256"]))
EOF
echo "reports in $OUT"
