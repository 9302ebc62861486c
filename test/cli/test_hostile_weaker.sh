#!/usr/bin/env bash
# The weaker hostile cases of issue 41, each named for what it did: a variant closing descriptors
# it did not open (sagerun's pipe among them), a variant writing into the inputs under `run`, a
# plugin path listing one folder many times with a plugin that hangs when loaded, and two stop
# signals close together.
set -u
source "$(dirname "$0")/lib.sh"
[ -f "$FAKES/fault_close_fds_run.so" ] || { echo "SKIP: the fault plugins are not built"; exit 0; }
export SAGERUN_TEST_FAULTS=1
H=(--backend host --shape 1,32,1,32)

# ---- a variant closing descriptors 3..4095: its pipe to sagerun closed, named so (it read
# "exited with status 0 ... does the plugin call exit()?") ----
check "run: a variant closing every descriptor" 1 "$S" run "${H[@]}" \
    --plugin "$FAKES/fault_close_fds_run.so" --variant fault-close-fds-run --iterations 5
contains "run: named, with what it did" "variant 'fault-close-fds-run' closed the pipe through which the process running it reports to sagerun"
grep -q "exit()" <<<"$out" && fail "run: still asks whether it calls exit()" "$out"
check "compare: a variant closing every descriptor" 1 "$S" compare "${H[@]}" --quiet --max-time 0.3 \
    --plugin "$FAKES/fault_close_fds_run.so" --variant fault-close-fds-run --json "$TMP/cf.json"
py "compare: its failure says what it did, the baseline measured" '
import json, sys
r = json.load(open(sys.argv[1]))
b, v = r["variants"]
assert "closed the measuring process'"'"'s pipe to sagerun" in v["failure"], v["failure"]
assert "exited with status" not in v["failure"], v["failure"]
assert b["failure"] is None and b["timing"]["count"] > 0, b
' "$TMP/cf.json"

# ---- run checks the inputs as compare does: a variant writing into V is named, exit 1, no hash
# of an output computed on changed inputs (exit 0 with that hash) ----
for f in fault-write-v-run fault-write-v-once; do
    so=$FAKES/${f//-/_}.so
    check "run: $f writes into V" 1 "$S" run "${H[@]}" --plugin "$so" --variant "$f" --iterations 5
    contains "... named, with the tensor" "run: variant '$f' wrote into its inputs (v), which are read-only"
    grep -q output_sha256 <<<"$out" && fail "run: $f: an output hash printed" "$out"
done
check "run: a variant that leaves its inputs alone (varlen: the sequences hashed too)" 0 "$S" run \
    --backend host --shape 1,32,1,32 --varlen 10,22 --variant reference --iterations 2
contains "its output hash" "output_sha256"

# ---- a plugin that hangs when loaded, on a plugin path that lists its folder many times and
# named twice: examined once (each occurrence cost the scan timeout: 8000 listings, 11 min) ----
if [ -f "$FAKES/hostile_ctor_hang.so" ]; then
    mkdir -p "$TMP/hang" && cp "$FAKES/hostile_ctor_hang.so" "$TMP/hang/" && chmod -R go-w "$TMP/hang"
    ln -s "$TMP/hang" "$TMP/hang-link"
    path=$TMP/hang; for i in $(seq 1 7); do path=$path:$TMP/hang; done; path=$path:$TMP/hang-link
    t0=$(date +%s.%N)
    check "list: the folder 9 times on the path, the file named twice" 0 env SAGERUN_TEST_HOSTILE=1 \
        SAGERUN_PLUGIN_SCAN_TIMEOUT=1 SAGERUN_CACHE_DIR="$TMP/cache" SAGERUN_PLUGIN_PATH="$path" \
        "$S" list --backend host --plugin "$TMP/hang/hostile_ctor_hang.so" \
        --plugin "$TMP/hang-link/hostile_ctor_hang.so"
    t=$(echo "$(date +%s.%N) - $t0" | bc)
    [ "$(echo "$t < 4" | bc)" = 1 ] && echo "ok   ... in ${t}s: examined once" \
        || fail "took ${t}s with a scan timeout of 1 s: examined more than once" "$out"
    contains "... rejected, saying it hung" "hung while loading"
fi

# ---- two stop signals 1 ms apart are one request: the report is written with the rounds
# finished (the second killed the measurement at once, and the report was lost) ----
# (a sanitizer build's child takes seconds to load and create its instances before the rounds:
# the signals then came before any round, TSan in CI)
settle=1.5
LIB=$(cd "$(dirname "$S")/../lib" && pwd)/libsagerun.so.0
nm -D "$LIB" 2>/dev/null | grep -qE '__(tsan|asan)_init' && settle=10
"$S" compare --backend host --shape 1,64,2,64 --quiet --max-time 40 --json "$TMP/sig.json" \
    > "$TMP/sig.out" 2>&1 &
pid=$!
for i in $(seq 1 100); do # until the rounds run: a report with rounds in it
    grep -q . "$TMP/sig.out" 2>/dev/null && break; [ -n "$(pgrep -P $pid)" ] && sleep $settle && break
    sleep 0.05
done
kill -INT $pid; sleep 0.001; kill -TERM $pid
wait $pid; rc=$?
[ "$rc" = 130 ] && echo "ok   two signals 1 ms apart: exit 130 (the first one's)" \
    || fail "two signals 1 ms apart: exit $rc, expected 130" "$(cat "$TMP/sig.out")"
py "... the report written, incomplete, with its rounds" '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["complete"] is False and r["rounds_completed"] > 0, (r["complete"], r["rounds_completed"])
' "$TMP/sig.json"

finish
