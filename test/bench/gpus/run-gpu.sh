#!/usr/bin/env bash
# Issue 45's GPU check, on one host with 2 or more GPUs, in one device call (after
# tools/gpu-bundle.sh; carry .gpu; from the repository root, $OUT set; about 2 + 2/n minutes with
# the defaults):
#   one    the seed's sweep over N (examples/sweep/sweep-n.json, 7 points) with baseline,
#          interleave-softmax and warp-specialized on GPU 0 alone (CUDA_VISIBLE_DEVICES=0), timed;
#   gpus   the same sweep with --gpus all, timed;
#          check_gpus.py: every point byte-exact with the same hashes as on one GPU, each speedup
#          within the one-GPU sweep's interval, wall time <= 1.2/n of the one-GPU sweep's;
#   slurm  where slurmd can start (root, slurm-wlm and munge installed): test/cli/test_slurm.sh
#          on this node's GPUs as gres, then the same sweep through the job array
#          (SAGERUN_SLURM_SWEEP), one GPU per task.
# STEPS="one gpus slurm" (the default) picks the steps; MAX_TIME (8) is compare's --max-time per
# point: compare's timed schedule, so that each point takes about the same time (the sweep
# file's fixed counts are dropped: with them n64k alone is three quarters of the sweep).
# A summary at the end of stdout and in $OUT/summary.txt; the summaries and logs in
# $OUT/gpus.tar.xz. A dry run without GPUs (the script's own check, on the host backend):
#   SAGERUN=build-host/bin/sagerun SAGERUN_TEST_FAKE_GPUS=2 SWEEP=test/data/sweep-host.json \
#   SWEEP_ARGS="--backend host --baseline reference --variant reference-mt --max-time 1" \
#   SAGERUN_TEST_FAKES=build-host/test-plugins bash test/bench/gpus/run-gpu.sh
set -u
cd "$(dirname "$0")/../../.."
[ -d .gpu ] && eval "$(bash tools/gpu-unpack.sh)"
OUT=${OUT:-$(mktemp -d)}
W=$OUT/work
mkdir -p "$W"
S=$(realpath "${SAGERUN:-build/bin/sagerun}")
STEPS=${STEPS:-one gpus slurm}
export SAGERUN_CACHE_DIR=$W/cache
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
has() { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; }
finish() {
    tar -C "$W" -cJf "$OUT/gpus.tar.xz" --exclude=cache . 2>/dev/null
    rm -rf "$W"
    tail -80 "$OUT/summary.txt"
}
trap finish EXIT
if [ -n "${SAGERUN_TEST_FAKE_GPUS:-}" ]; then # a dry run
    n=$(tr ',' '\n' <<<"$SAGERUN_TEST_FAKE_GPUS" | wc -l); [ "$n" -eq 1 ] && n=$SAGERUN_TEST_FAKE_GPUS
else
    n=$(nvidia-smi -L | grep -c '^GPU ')
    say "$(nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv,noheader)"
fi
[ "$n" -ge 2 ] || { say "blocked: $n GPU here, the check needs 2 or more"; exit 1; }
python3 -c '
import json, os, sys
s = json.load(open(sys.argv[1]))
for k in ("warmup", "rounds", "iterations"): s.pop(k, None)
here = os.path.dirname(os.path.abspath(sys.argv[1]))  # workload files: from the copy too
s["workloads"] = [os.path.join(here, w) if isinstance(w, str) else w for w in s["workloads"]]
s["name"] += "-timed"
json.dump(s, open(sys.argv[2], "w"), indent=1)' "${SWEEP:-examples/sweep/sweep-n.json}" "$W/sweep-n.json"
if [ -n "${SWEEP_ARGS:-}" ]; then read -r -a ARGS <<<"$SWEEP_ARGS"; else
    ARGS=(--baseline baseline --variant interleave-softmax --variant warp-specialized --max-time "${MAX_TIME:-8}")
fi
walls=()
timed() { # timed NAME COMMAND...: runs it, its wall time into walls, its output into NAME.log
    local name=$1 t0=$EPOCHREALTIME rc; shift
    "$@" >"$W/$name.log" 2>&1; rc=$?
    walls+=("$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')")
    say "$name rc $rc, ${walls[-1]} s: $*"
}
if has "$STEPS" one; then
    timed one env CUDA_VISIBLE_DEVICES=0 "$S" sweep "$W/sweep-n.json" "${ARGS[@]}" --out-dir "$W/one"
    grep -A12 '^#  workload' "$W/one.log" | tee -a "$OUT/summary.txt"
fi
if has "$STEPS" gpus; then
    timed gpus "$S" sweep "$W/sweep-n.json" "${ARGS[@]}" --gpus all --out-dir "$W/gpus"
    grep -E "^sagerun sweep: (shard|GPU)|failed" "$W/gpus.log" | tee -a "$OUT/summary.txt"
    grep -A20 '^#  workload' "$W/gpus.log" | tee -a "$OUT/summary.txt"
    has "$STEPS" one && python3 test/bench/gpus/check_gpus.py "$W/one" "$W/gpus" "${walls[0]}" \
        "${walls[1]}" "$n" 2>&1 | tee -a "$OUT/summary.txt"
fi
if has "$STEPS" slurm; then
    export SAGERUN=$S SAGERUN_TEST_FAKES=${SAGERUN_TEST_FAKES:-$PWD/build/test-plugins}
    timeout 300 bash test/cli/test_slurm.sh >"$W/slurm-host.log" 2>&1
    say "test_slurm.sh (host sweep, this node's GPUs as gres) rc $?: $(grep -cE '^ok' "$W/slurm-host.log") ok, $(grep -E '^FAIL|^SKIP' "$W/slurm-host.log" | head -3)"
    SAGERUN_SLURM_SWEEP=$W/sweep-n.json SAGERUN_SLURM_ARGS="${ARGS[*]} --quiet" SAGERUN_SLURM_KEEP=$W/slurm \
        timeout 400 bash test/cli/test_slurm.sh >"$W/slurm-gpu.log" 2>&1
    say "the sweep through the array (one GPU per task) rc $?: $(grep -E '^(ok|FAIL|SKIP)' "$W/slurm-gpu.log" | tr '\n' ';')"
    [ -f "$W/slurm/merged/summary.json" ] && has "$STEPS" one && python3 test/bench/gpus/check_gpus.py \
        "$W/one" "$W/slurm/merged" 0 0 0 2>&1 | tee -a "$OUT/summary.txt"
fi
