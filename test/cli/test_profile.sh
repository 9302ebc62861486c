#!/usr/bin/env bash
# sagerun profile on the host backend: exactly warmup + 2 calls of the variant's run (a test
# plugin logs each call), the last one alone inside the range "profile NAME" (the NVTX test tool
# logs the ranges into the same file, so the log shows which calls fall in which range), its time
# and output hash (the same as `run`'s); a variant whose output changes exits 3; bad options.
set -u
source "$(dirname "$0")/lib.sh"
LOGP=$FAKES/fake_call_log.so
[ -f "$LOGP" ] || { echo "SKIP: the test plugin $LOGP is not built"; exit 0; }
P=(--plugin "$LOGP" --backend host --shape 1,32,2,64)
CALLS=$TMP/calls.log

check "--help names the range and the ncu and nsys command lines" 0 "$S" profile --help \
    && contains "range" 'inside an NVTX range named "profile NAME"' \
    && contains "ncu" 'ncu --nvtx --nvtx-include "profile NAME/"' \
    && contains "nsys" 'nsys profile --trace=cuda,nvtx --capture-range=nvtx --nvtx-capture="profile NAME"'
help=$out
check "sagerun help profile says the same" 0 "$S" help profile
[ "$out" = "$help" ] && echo "ok   help profile = profile --help" || fail "help profile = profile --help"
check "listed in sagerun --help" 0 "$S" --help && contains "listed" "profile    one warmed call"

# ---- the calls ----
for w in 0 4; do
    rm -f "$CALLS"
    check "--warmup $w runs" 0 env SAGERUN_TEST_CALL_LOG="$CALLS" "$S" profile --variant fake-call-log \
        "${P[@]}" --warmup "$w"
    n=$(grep -c '^plugin run$' "$CALLS" 2>/dev/null)
    [ "$n" = $((w + 2)) ] && echo "ok   --warmup $w: $((w + 2)) calls (warm-up, checked, profiled)" \
        || fail "--warmup $w: $((w + 2)) calls, got ${n:-none}" "$(cat "$CALLS" 2>&1)"
done
contains "the range" 'range         "profile fake-call-log" around that one call'
contains "warm-up said" "warmup        4 calls, then one checked call"
contains "the time" "call_s        "
grep -Eq "^prepare_s +[0-9]+\.[0-9]{9}$" <<<"$out" && echo "ok   prepare_s to 9 decimals, as call_s" \
    || fail "prepare_s to 9 decimals (it had 6, call_s 9)" "$out"
hash=$(sed -n 's/^output_sha256 \([0-9a-f]\{64\}\) (the same as the checked call.s)$/\1/p' <<<"$out")
[ -n "$hash" ] && echo "ok   the output hash, the same as the checked call's" || fail "the output hash" "$out"
check "run on the same workload" 0 "$S" run --variant fake-call-log "${P[@]}" --warmup 0 --iterations 1
contains "run's hash is profile's" "output_sha256 $hash"
check "a spec's range is the variant's name, without its [parameters]" 0 "$S" profile \
    --variant 'fake-call-log[tag=3]' "${P[@]}" --warmup 0
contains "the range" 'range         "profile fake-call-log" around'
contains "the spec" 'variant       fake-call-log[tag=3] (host backend)'

# ---- which calls fall in which range: the NVTX test tool logs into the same file ----
TOOL=$(dirname "$(dirname "$S")")/test/nvtx/fake_tool.so
if [ -n "$NO_CUDA_BUILD" ] || [ ! -f "$TOOL" ]; then
    echo "SKIP: the NVTX ranges (no NVTX test tool: a build without CUDA has no ranges)"
else
    rm -f "$CALLS"
    check "profile under the NVTX test tool" 0 env NVTX_INJECTION64_PATH="$TOOL" SAGERUN_NVTX_LOG="$CALLS" \
        SAGERUN_TEST_CALL_LOG="$CALLS" "$S" profile --variant fake-call-log "${P[@]}" --warmup 2
    contains "says a tool is attached" "(NVTX: a tool is attached)"
    py "one call inside \"profile fake-call-log\", every phase a range" '
import sys
stack, calls, phases = [], {}, []
for line in open(sys.argv[1]).read().splitlines():
    if line.startswith("nvtx push "):
        stack.append(line[len("nvtx push "):]); phases.append(stack[-1])
    elif line == "nvtx pop":
        assert stack, "a pop without a push"
        stack.pop()
    elif line == "plugin run":
        assert stack and stack[-1] == "run fake-call-log", ("a call outside its run range", stack)
        for r in set(stack): calls[r] = calls.get(r, 0) + 1
assert not stack, ("ranges left open", stack)
assert calls.get("profile fake-call-log (registered)") == 1, calls
assert calls.get("warm-up") == 2 and calls.get("checked call") == 1, calls
assert calls.get("sagerun profile") == 4, calls
for p in ("create (context, plugins, inputs, instance)", "prepare", "hashing"):
    assert p in phases, (p, phases)
assert phases.count("hashing") == 2, phases
' "$CALLS"
fi

# ---- outputs that differ, calls that fail ----
check "a variant whose output changes exits 3" 3 "$S" profile --variant fake-nondeterministic \
    --plugin "$FAKES/fake_nondeterministic.so" --backend host --shape 1,32,2,64
contains "says so" "variant fake-nondeterministic is not deterministic"
check "a run that fails exits 1" 1 env SAGERUN_TEST_FAULTS=1 "$S" profile --variant fault-error-run \
    --plugin "$FAKES/fault_error_run.so" --backend host --shape 1,32,2,64
contains "names the variant" "fault-error-run"

# ---- bad command lines ----
check "no --variant" 2 "$S" profile --backend host && contains "says so" "profile: --variant NAME is required"
check "unknown option: a one-line hint" 2 "$S" profile --variant reference --iterations 3
contains "names it" "profile: unknown option '--iterations'"
[ "$(wc -l <<<"$out")" -eq 1 ] && echo "ok   one line" || fail "one line" "$out"
check "bad --warmup" 2 "$S" profile --variant reference --warmup -1 && contains "says what" "--warmup '-1'"
check "a stray argument" 2 "$S" profile --variant reference extra && contains "names it" "unexpected argument 'extra'"
check "a bad shape" 2 "$S" profile --variant reference --shape 1,2 && contains "names the option" "--shape"
check "an unknown variant" 1 "$S" profile --variant no-such --backend host \
    && contains "says so" "profile: no variant named 'no-such'"
check "a bad backend is usage" 2 "$S" profile --variant reference --backend gpu && contains "names it" "gpu"
finish
