#!/usr/bin/env bash
# sagerun sweep --gpus all|LIST on the host backend, with fake device lists (SAGERUN_TEST_FAKE_GPUS,
# the test hook): a shard per GPU bound through CUDA_VISIBLE_DEVICES, each claiming the next point
# (heaviest first) as it gets free, progress naming the GPU, the shards merged exactly as a
# one-device sweep (same points, statuses and output hashes); a
# GPU list through the process's own CUDA_VISIBLE_DEVICES; the errors (no GPU, a GPU that is not
# there, mixed models, bad lists, --shard/--device); a failed shard costs only its points; merge
# refuses points of different GPU models unless --allow-mixed-gpus, and says where each ran.
# test/bench/gpus/run-gpu.sh is the same on real GPUs.
set -u
source "$(dirname "$0")/lib.sh"
if ! "$S" list --backend host 2>/dev/null | grep -q '^  reference-mt '; then
    echo "SKIP: the host variants (plugins/reference*.so) are not built"; exit 0
fi
cp "$ROOT"/test/data/sweep-host.json "$ROOT"/test/data/sweep-host-n96.json "$TMP/"
cd "$TMP" || exit 1
SW=(sweep sweep-host.json --backend host)
unset CUDA_VISIBLE_DEVICES

check "the one-device sweep" 0 "$S" "${SW[@]}" --out-dir one --quiet
SAGERUN_TEST_FAKE_GPUS=2 check "--gpus all over 2 (fake) GPUs" 0 "$S" "${SW[@]}" --gpus all --out-dir two \
    && contains "a shard per GPU, bound" "shard 1/2 on GPU 1 (fake GPU, CUDA_VISIBLE_DEVICES=1), log two/gpu-1.log" \
    && contains "the last finished point" "ok (3/3 in all)" \
    && contains "the merged table" "merged from 2 summaries"
grep -qE "^sagerun sweep: GPU [01]: \[1\] '(n32|n96|1x64x2x64)' ok \([123]/3 in all\)$" <<<"$out" \
    && echo "ok   a line per finished point naming its GPU" || fail "a line per finished point naming its GPU" "$out"

# same points, statuses, variants, byte-exactness and output hashes as the one-device sweep
SAME='
import json, os, sys
one, many, where = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
a, b = (json.load(open(os.path.join(d, "summary.json"))) for d in (one, many))
assert b["shard"] is None and len(b["merged_from"]) == len(where) and "missing" not in b, b
assert a["sweep"] == b["sweep"] and a["options"] == b["options"]
keep = ("index", "name", "shape", "heads_kv", "report", "status", "error", "device", "backend")
vkeep = ("label", "name", "is_baseline", "byte_exact", "failure")
assert len(a["workloads"]) == len(b["workloads"]) == 3
for x, y in zip(a["workloads"], b["workloads"]):
    assert {k: x[k] for k in keep} == {k: y[k] for k in keep}, (x, y)
    assert [{k: v[k] for k in vkeep} for v in x["variants"]] == \
           [{k: v[k] for k in vkeep} for v in y["variants"]], (x, y)
    ra, rb = (json.load(open(os.path.join(d, x["report"]))) for d in (one, many))
    assert ra["reference_output_sha256"] == rb["reference_output_sha256"]
    assert [v["output_sha256"] for v in ra["variants"]] == [v["output_sha256"] for v in rb["variants"]]
    assert x["ran_on"]["cuda_visible_devices"] is None, x["ran_on"]
    assert y["ran_on"]["cuda_visible_devices"] in where, y["ran_on"]
    assert rb["device"] == {"name": "host", "backend": "host"}, rb["device"]  # no GPU fields
'
py "--gpus all: the one-device sweep's points, hashes and statuses, each row where it ran" \
    "$SAME" one two 0,1
[ -f two/gpu-0/summary.json ] && [ -f two/gpu-1/summary.json ] && [ -f two/gpu-1.log ] \
    && echo "ok   each shard's folder and log in the out dir" || fail "each shard's folder and log" "$(ls -R two)"
ls -a two | grep -q claims && fail "the claim folder is removed" "$(ls -a two)" || echo "ok   the claim folder is removed"
BOUND='
import json, sys
d, where = sys.argv[1], sys.argv[2].split(",")
for k, v in enumerate(where):
    s = json.load(open(f"{d}/gpu-{sys.argv[3 + k]}/summary.json"))
    assert s["shard"] == {"index": k, "count": len(where)}, s["shard"]
    assert all(w["ran_on"]["cuda_visible_devices"] == v for w in s["workloads"]), s["workloads"]
'
py "each shard ran its points on its own GPU" "$BOUND" two 0,1 0 1

# a list of ordinals, through this process's CUDA_VISIBLE_DEVICES (ordinal k is its k-th entry)
CUDA_VISIBLE_DEVICES=5,6,7 SAGERUN_TEST_FAKE_GPUS=3 check "--gpus 0,2 of CUDA_VISIBLE_DEVICES=5,6,7" 0 \
    "$S" "${SW[@]}" --gpus 0,2 --out-dir list --csv list.csv \
    && contains "GPU 2 is the 7" "shard 1/2 on GPU 2 (fake GPU, CUDA_VISIBLE_DEVICES=7)"
py "--gpus 0,2: the same points, shards bound to devices 5 and 7" "$SAME" one list 5,7
py "--gpus 0,2: shard 0 on device 5, shard 1 on 7" "$BOUND" list 5,7 0 2
py "--csv: every point of the merged sweep" '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert sorted({r["workload"] for r in rows}) == ["1x64x2x64", "n32", "n96"], rows
' list.csv
SAGERUN_TEST_FAKE_GPUS=1 check "--gpus all on one GPU, --quiet" 0 "$S" "${SW[@]}" --gpus all --quiet --out-dir single
grep -q "GPU 0:" <<<"$out" && fail "--quiet: no progress lines" "$out" || echo "ok   --quiet: no progress lines"
py "a shard takes the heaviest point first" '
import json, sys
s = json.load(open(sys.argv[1]))
assert [w["name"] for w in s["workloads"]] == ["n96", "1x64x2x64", "n32"], s["workloads"]
' single/gpu-0/summary.json
check "--claim-dir without --shard" 2 "$S" "${SW[@]}" --claim-dir x && contains "says so" "--claim-dir: a folder, with --shard"

# errors
SAGERUN_TEST_CUDA_LIBRARY=/nonexistent/libcuda.so.1 check "--gpus all without a GPU" 1 \
    "$S" "${SW[@]}" --gpus all --out-dir none && contains "says so" "sweep: --gpus all: no GPU here"
[ ! -e none ] && echo "ok   and ran nothing" || fail "--gpus all without a GPU ran nothing"
SAGERUN_TEST_FAKE_GPUS=2 check "--gpus 0,3 of 2 GPUs" 1 "$S" "${SW[@]}" --gpus 0,3 \
    && contains "names it" "--gpus 0,3: there is no GPU 3 here (2 GPUs: 0 to 1)"
SAGERUN_TEST_FAKE_GPUS="NVIDIA H100,NVIDIA H200" check "--gpus all of two models" 1 "$S" "${SW[@]}" \
    --gpus all --out-dir mixed && contains "names both" "GPU 0 is 'NVIDIA H100', GPU 1 'NVIDIA H200'"
SAGERUN_TEST_FAKE_GPUS=0 check "a bad test hook (0 GPUs)" 1 "$S" "${SW[@]}" --gpus all \
    && contains "names it" "SAGERUN_TEST_FAKE_GPUS='0': expected 1 to 64"
for bad in 0,0 1, x -1 ''; do
    check "--gpus '$bad' is a usage error" 2 "$S" "${SW[@]}" --gpus "$bad" \
        && contains "names it" "--gpus '$bad': expected all, or CUDA ordinals"
done
mkdir other && echo '{}' > other/summary.json
SAGERUN_TEST_FAKE_GPUS=2 check "--gpus into a folder that holds no summary of this sweep" 1 \
    "$S" "${SW[@]}" --gpus all --out-dir other && contains "says so" "--out-dir other holds other/summary.json, which is not a sweep summary"
[ ! -e other/gpu-0 ] && echo "ok   before anything ran" || fail "refused before anything ran" "$(ls other)"
SAGERUN_TEST_FAKE_GPUS=2 check "--gpus again into its own out dir" 0 "$S" "${SW[@]}" --gpus all --out-dir two --quiet
check "--gpus with --shard" 2 "$S" "${SW[@]}" --gpus all --shard 0/2 && contains "says so" "not with --shard"
check "--gpus with --device" 2 "$S" "${SW[@]}" --gpus all --device 1 && contains "says so" "not with --device"

# a shard that fails (its folder holds another sweep's summary): named, exit 1, and the other
# shard takes every point
mkdir -p failing/gpu-1 && cp one/summary.json failing/gpu-1/
SAGERUN_TEST_FAKE_GPUS=2 check "a failed shard: exit 1" 1 "$S" "${SW[@]}" --gpus all --out-dir failing \
    && contains "names it" "shard 1/2 on GPU 1 (fake GPU) failed with exit code 1 after 0 points: sweep: --out-dir failing/gpu-1 holds the summary of another" \
    && contains "and its log" "its log: failing/gpu-1.log"
py "the other shard ran every point, merged" '
import json, sys
m = json.load(open(sys.argv[1]))
assert [w["name"] for w in m["workloads"]] == ["n32", "1x64x2x64", "n96"], m["workloads"]
assert all(w["status"] == "ok" and w["ran_on"]["cuda_visible_devices"] == "0" for w in m["workloads"])
assert "missing" not in m and len(m["merged_from"]) == 1
' failing/summary.json

# a stop signal to the --gpus sweep (kill PID): passed on to every shard, whose comparisons end
# with their rounds so far; what ran is merged, the claim folder removed, exit 143
cat > sig.json <<'E'
{"name": "sig", "baseline": "reference", "variants": ["reference-mt"], "accuracy": false,
 "workloads": [{"name": "a", "shape": [1, 64, 1, 32]}, {"name": "b", "shape": [1, 64, 1, 32]},
               {"name": "c", "shape": [1, 64, 1, 32]}, {"name": "d", "shape": [1, 64, 1, 32]}]}
E
SAGERUN_TEST_FAKE_GPUS=2 "$S" sweep sig.json --backend host --gpus all --out-dir "$TMP/sig" --max-time 2 \
    --warmup-time 0.05 >sig.out 2>sig.err &
pid=$!
for _ in $(seq 1 300); do ls sig/gpu-*/*.json 2>/dev/null | grep -qv summary && break; sleep 0.1; done
sleep 0.5; kill -TERM $pid; wait $pid; rc=$?
[ $rc -eq 143 ] && echo "ok   --gpus, SIGTERM: exit 143" || fail "--gpus, SIGTERM: exit $rc, expected 143" "$(cat sig.err)"
pgrep -f "out-dir=$TMP/sig/gpu-" >/dev/null && fail "--gpus, SIGTERM: a shard still runs" "$(pgrep -af "$TMP/sig/gpu-")"
ls -A sig | grep -q claims && fail "--gpus, SIGTERM: the claim folder is left" "$(ls -A sig)"
py "--gpus, SIGTERM: what ran is merged, incomplete, the rest missing" '
import json, sys
m = json.load(open(sys.argv[1]))
assert m["workloads"] and all(w["status"] in ("ok", "incomplete") for w in m["workloads"]), m["workloads"]
assert any(w["status"] == "incomplete" for w in m["workloads"]), m["workloads"]
assert len(m["workloads"]) + len(m.get("missing", [])) == 4
' sig/summary.json

# merge: points of two GPU models refused, or flagged with --allow-mixed-gpus
check "shard 0/2 by hand" 0 "$S" "${SW[@]}" --shard 0/2 --out-dir m0 --quiet
check "shard 1/2 by hand" 0 "$S" "${SW[@]}" --shard 1/2 --out-dir m1 --quiet
cp -r m1 m1-host
python3 -c '
import json, sys
p = sys.argv[1]; s = json.load(open(p))
for w in s["workloads"]: w["device"] = "NVIDIA H200"
json.dump(s, open(p, "w"))' m1/summary.json
check "merge refuses points of two GPU models" 1 "$S" merge m0 m1 --out-dir mm \
    && contains "names both" "the points ran on different GPU models: host (m0/summary.json) and NVIDIA H200 (m1/summary.json)"
[ ! -e mm/summary.json ] && echo "ok   and writes nothing" || fail "a refused merge writes nothing"
check "merge --allow-mixed-gpus" 0 "$S" merge m0 m1 --out-dir mm --allow-mixed-gpus \
    && contains "flags them" "GPU models mixed (merge --allow-mixed-gpus; compare points only within one model): host, NVIDIA H200" \
    && contains "where each ran" "ran on NVIDIA H200: 1x64x2x64"
py "the merged summary lists the models" '
import json, sys
assert json.load(open(sys.argv[1]))["mixed_gpus"] == ["host", "NVIDIA H200"]' mm/summary.json
grep -q "ran on host: n32 n96" mm/summary.md \
    && echo "ok   summary.md says where each point ran" || fail "summary.md says where each point ran" "$(cat mm/summary.md)"
check "merge of one model says nothing of models" 0 "$S" merge m0 m1-host --out-dir one-model
grep -qE "mixed|ran on" <<<"$out" && fail "no note of models or places for one place" "$out" \
    || echo "ok   no note of models or places for one place"
finish
