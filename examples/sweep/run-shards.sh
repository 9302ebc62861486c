#!/usr/bin/env bash
# Runs a sweep on every GPU of this host, one shard per GPU, then merges the shards.
#   examples/sweep/run-shards.sh SWEEP.json [OUT_DIR] [sagerun sweep options...]
# DEVICES="0 1" picks the GPUs (default: all that nvidia-smi lists); SAGERUN the binary.
set -uo pipefail
SWEEP=${1:?usage: run-shards.sh SWEEP.json [OUT_DIR] [sagerun sweep options...]}
OUT=${2:-sweep-out}
shift $(( $# < 2 ? $# : 2 ))
SAGERUN=${SAGERUN:-sagerun}
DEVICES=${DEVICES:-$(nvidia-smi --query-gpu=index --format=csv,noheader | tr '\n' ' ')}
read -r -a devs <<<"$DEVICES"
n=${#devs[@]}
[ "$n" -gt 0 ] || { echo "run-shards.sh: no GPU (set DEVICES)" >&2; exit 1; }
mkdir -p "$OUT"
pids=() dirs=()
for i in "${!devs[@]}"; do
    # One process per GPU: CUDA_VISIBLE_DEVICES makes that GPU device 0 of the process.
    CUDA_VISIBLE_DEVICES=${devs[$i]} "$SAGERUN" sweep "$SWEEP" --shard "$i/$n" \
        --out-dir "$OUT/shard-$i" "$@" >"$OUT/shard-$i.log" 2>&1 &
    pids+=($!) dirs+=("$OUT/shard-$i")
    echo "shard $i/$n on GPU ${devs[$i]}: pid $!, log $OUT/shard-$i.log"
done
worst=0
for p in "${pids[@]}"; do
    wait "$p"; rc=$?
    [ $rc -gt $worst ] && worst=$rc # 3: ran, not byte-exact; 1: something failed
done
# Merge whatever the shards wrote (a failed workload is a row of its own in the summary).
"$SAGERUN" merge "${dirs[@]}" --out-dir "$OUT/merged"; mrc=$?
exit $(( mrc != 0 ? mrc : worst ))
