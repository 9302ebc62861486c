#!/usr/bin/env bash
# Fault containment of sagerun compare (host backend; the GPU case runs where there is a device):
# variants that crash in create / prepare / run, abort, return an error, hang, or write outside
# their output are reported failed with phase and reason, while `reference` and `reference-mt`
# keep their timings and verdicts. Also: SIGINT mid-comparison writes an incomplete report, and
# resource limits refuse absurd workloads with the numbers.
set -u
source "$(dirname "$0")/lib.sh"
export SAGERUN_TEST_FAULTS=1 # the fault plugins refuse to load without it

if ! "$S" list --backend host 2>/dev/null | grep -q '^  reference-mt '; then
    echo "SKIP: reference / reference-mt plugins are not built"; exit 0
fi
if [ ! -f "$FAKES/fault_segv_run.so" ]; then
    echo "SKIP: fault plugins not built ($FAKES)"; exit 0
fi
# A sanitizer build turns a SIGSEGV into a sanitizer report (ASan handles SEGV itself).
ASAN=0
if ldd "$S" 2>/dev/null | grep -q libasan || nm "$S" 2>/dev/null | grep -q __asan_init; then ASAN=1; fi
# ThreadSanitizer: it reports a SEGV itself (a sanitizer report); everything runs several times slower.
TSAN=0
if nm "$S" 2>/dev/null | grep -q __tsan_init; then TSAN=1; fi
SLOW=1; [ $ASAN -eq 1 ] && SLOW=3; [ $TSAN -eq 1 ] && SLOW=10
HOST=(--backend host --shape 1,64,2,64 --quiet --baseline reference --variant reference-mt
      --rounds 3 --iterations 3 --warmup 1 --timeout 3)

# fault_case PLUGIN VARIANT PHASE REASON_REGEX: the faulty variant is failed with that phase and
# reason; both good variants have timings, the variant a verdict; exit 1; the report parses.
fault_case() {
    local plugin=$1 name=$2 phase=$3 reason=$4
    out=$("$S" compare "${HOST[@]}" --plugin "$FAKES/$plugin.so" --variant "$name" \
        --json "$TMP/$name.json" --markdown "$TMP/$name.md" 2>&1); rc=$?
    [ $rc -eq 1 ] || { fail "$name: exit $rc, expected 1" "$out"; return; }
    grep -qE -- "$name +-.*FAILED" <<<"$out" || fail "$name: the table says FAILED" "$out"
    grep -qE -- "$name failed: ${reason#^}" <<<"$out" || fail "$name: the table names the reason" "$out"
    py "$name: failed in $phase ($reason), the good pair measured" '
import json, re, sys
r = json.load(open(sys.argv[1])); name, phase, reason = sys.argv[2:5]
v = {x["label"]: x for x in r["variants"]}
assert list(v) == ["reference", "reference-mt", name], list(v)
bad = v[name]
assert bad["failure_phase"] == phase, bad["failure_phase"]
assert re.search(reason, bad["failure"]), bad["failure"]
assert bad["timing"]["count"] == 0 and bad["verdict"] is None and bad["output_sha256"] is None
for good in ("reference", "reference-mt"):
    g = v[good]
    assert g["failure"] is None and g["timing"]["count"] == 9 and len(g["rounds"]) == 3, g
    assert g["timing"]["p50_s"] > 0 and g["byte_exact"] is True, g
assert v["reference-mt"]["verdict"] in ("faster", "slower", "same", "ambiguous")
assert r["complete"] is True and r["rounds_completed"] == 3
' "$TMP/$name.json" "$name" "$phase" "$reason"
    grep -q "^| $name |" "$TMP/$name.md" || fail "$name: markdown report lists it"
}

SEGV='crashed: SIGSEGV \(Segmentation fault\)'
[ $ASAN -eq 1 ] || [ $TSAN -eq 1 ] && SEGV='a sanitizer report'
fault_case fault_segv_create fault-segv-create create "^create: $SEGV"
fault_case fault_segv_prepare fault-segv-prepare prepare "^prepare: $SEGV"
fault_case fault_segv_run fault-segv-run run "^timed run: $SEGV"
fault_case fault_abort_run fault-abort-run run '^timed run: crashed: SIGABRT \(Aborted\)'
fault_case fault_error_run fault-error-run run '^timed run: variant fault-error-run: run failed .*the fault plugin fails on purpose'
fault_case fault_hang_run fault-hang-run run '^timed run: timeout: no answer within 3 s'
# A thread the plugin started crashes in the plugin's code while another variant's call is open
# (or none): that plugin's variant is blamed, in phase "background" (the open call's variant was,
# the baseline's failing the whole comparison). The sanitizers handle SIGSEGV themselves.
if [ $ASAN -eq 0 ] && [ $TSAN -eq 0 ]; then
    fault_case fault_thread_segv fault-thread-segv background \
        "^crashed: SIGSEGV \(Segmentation fault\) in its plugin's code \([^)]*fault_thread_segv\.so\) outside its own calls \(in a thread it started\?\), (while reference(-mt)?'s [a-z ]+ was running|between calls); the others were measured again without it"
else
    echo "skip fault-thread-segv: a sanitizer build reports the crash itself (the code address is read only without one)"
fi

# A write just past O (in a timed call) lands in the guard the host keeps after it: the last
# checked call reports it, with the numbers, in every build.
fault_case fault_overflow_run fault-overflow-run check \
    '^wrote past the end of its output: 16 of the 65536 bytes after o changed, the first at byte 100 past its end \(o is 16384 bytes'

# Stray writes the guard cannot see, on the host backend: 4 KiB past the guard after O (it landed
# in the next heap block: another variant's output, whose check then blamed reference, or the
# input guard's copy, which was then put back over the inputs) and the byte before O (the heap's
# bookkeeping: "double free or corruption" at destroy). The pages around every host block are
# inaccessible now: the write faults in the call that made it.
fault_case fault_stray_far_run fault-stray-far-run run "^timed run: $SEGV"
fault_case fault_stray_before_run fault-stray-before-run run "^timed run: $SEGV"

# run and profile check the guard too (they printed the output's hash and exit 0): the fault is in
# the third run call, run's last timed one and profile's profiled one (after one warm-up and the
# checked call)
for cmd in "run --warmup 0 --iterations 3" "profile --warmup 1"; do
    out=$("$S" $cmd --backend host --shape 1,64,2,64 --plugin "$FAKES/fault_overflow_run.so" \
        --variant fault-overflow-run 2>&1); rc=$?
    [ $rc -eq 1 ] && grep -qE '^sagerun: (run: )?variant fault-overflow-run wrote past the end of its output: 16 of the 65536 bytes after o changed, the first at byte 100' <<<"$out" \
        && ! grep -q "^output_sha256" <<<"$out" \
        && echo "ok   ${cmd%% *}: the write past O named (exit 1)" || fail "${cmd%% *}: write past O (exit $rc)" "$out"
done

# ---- the default watchdog times a sample by its K calls, not by one call ----
# Every entry's sample is K calls, K chosen for the fastest (fake-good, ~0.05 us: K up to 10000),
# so the baseline's samples last K x ~30 us. The watchdog judged them by one call (20 x 30 us,
# at least 10 s) and killed a healthy baseline as hung once a sanitizer build on a loaded host
# made them pass 10 s (CI on 2026-12-03, examples/scripted/ab-gate.sh). Here the 10 s floor is
# lowered to 0.002 s (SAGERUN_TEST_WATCHDOG_MIN_S) so that samples of some milliseconds show it (a
# slow entry's sample is at most 10x the fastest's: ~10 ms here).
out=$(SAGERUN_TEST_WATCHDOG_MIN_S=0.002 "$S" compare --backend host --shape 1,16,1,32 --quiet \
    --baseline reference --plugin "$FAKES/fake_good.so" --variant fake-good --rounds 2 \
    --iterations 2 --json "$TMP/batched.json" 2>&1); rc=$?
[ $rc -eq 3 ] || fail "slow baseline, batched samples: exit $rc, expected 3 (fake-good differs)" "$out"
py "slow baseline, batched samples: not killed, every sample timed" '
import json, sys
v = json.load(open(sys.argv[1]))["variants"]
assert [x["failure"] for x in v] == [None, None], [x["failure"] for x in v]
assert all(x["timing"]["count"] == 4 for x in v), [x["timing"]["count"] for x in v]
k, call = v[0]["measurement"]["calls_per_sample"], v[0]["timing"]["p50_s"]
assert k * call > 0.002, "samples of %d x %.3g s: too short to test the watchdog" % (k, call)
' "$TMP/batched.json"
# ... and a sample that hangs is still killed by the default limit, not after 10 s
out=$(SAGERUN_TEST_WATCHDOG_MIN_S=0.05 timeout 60 "$S" compare --backend host --shape 1,64,2,64 --quiet \
    --baseline reference --variant reference-mt --rounds 3 --iterations 3 --warmup 1 --plugin "$FAKES/fault_hang_run.so" --variant fault-hang-run 2>&1); rc=$?
[ $rc -eq 1 ] && grep -qE "fault-hang-run failed: timed run: timeout: no answer within 0\.[0-9]+ s" <<<"$out" \
    && echo "ok   a hung sample: killed by the default watchdog (20 x K x its slowest call)" \
    || fail "a hung sample under the default watchdog (exit $rc)" "$out"

# ... nor by a slow first call: first contact (0.5 s here, as a JIT would take) sets no yardstick.
# It did: the limit was 20 x K x 0.5 s, 10 s here (K = 1: the warm-up's one call is the slow one)
# and hours where a faster variant batches the samples (K up to 10000). The checked call sets it.
out=$(SAGERUN_TEST_WATCHDOG_MIN_S=0.5 timeout 60 "$S" compare --backend host --shape 1,64,2,64 \
    --quiet --baseline reference --variant reference-mt --rounds 3 --iterations 3 --warmup 1 \
    --plugin "$FAKES/fault_slow_first_hang.so" --variant fault-slow-first-hang 2>&1); rc=$?
[ $rc -eq 1 ] && grep -qE "fault-slow-first-hang failed: timed run: timeout: no answer within 0\.5 s" <<<"$out" \
    && echo "ok   a hang after a slow first call: killed at the floor, the first call not the yardstick" \
    || fail "a hang after a slow first call (exit $rc; 124: not killed within 60 s)" "$out"

# ---- a plugin that crashes as the process exits, after the report is written: nothing lost ----
out=$(SAGERUN_TEST_EXIT_FAULT=1 timeout 60 "$S" compare --backend host --shape 1,64,2,64 --quiet \
    --baseline reference --plugin "$FAKES/fault_segv_exit.so" --variant fault-segv-exit \
    --rounds 2 --iterations 2 --warmup 1 --json "$TMP/exit.json" 2>&1); rc=$?
if [ $ASAN -eq 1 ] || [ $TSAN -eq 1 ]; then
    # a sanitizer reports the crash and exits non-zero: that is not downgraded (CI must see its
    # leak and race reports from the measuring process)
    [ $rc -ne 0 ] && echo "ok   a crash at exit under a sanitizer: an error (exit $rc)" \
        || fail "a crash at exit under a sanitizer passed" "$out"
else
    [ $rc -eq 3 ] && grep -q "warning: the measurement process ended with .* after writing its report" <<<"$out" \
        && echo "ok   a crash at exit: warned, the report kept (exit 3: the variant differs)" \
        || fail "a crash at exit after the report (exit $rc, expected 3)" "$out"
    py "a crash at exit: both variants measured" '
import json, sys
v = json.load(open(sys.argv[1]))["variants"]
assert [x["failure"] for x in v] == [None, None] and all(x["timing"]["count"] == 4 for x in v), v
' "$TMP/exit.json"
fi

# ... and one that hangs there: killed 10 s after the report, which stands
t0=$(date +%s)
out=$(SAGERUN_TEST_EXIT_FAULT=1 timeout 90 "$S" compare --backend host --shape 1,64,2,64 --quiet \
    --baseline reference --plugin "$FAKES/fault_hang_exit.so" --variant fault-hang-exit \
    --rounds 2 --iterations 2 --warmup 1 --json "$TMP/hexit.json" 2>&1); rc=$?
[ $rc -eq 3 ] && grep -q "warning: the measurement process did not exit within 10 s after writing its report" <<<"$out" \
    && [ -f "$TMP/hexit.json" ] \
    && echo "ok   a hang at exit: killed after 10 s, warned, the report kept ($(( $(date +%s) - t0 )) s)" \
    || fail "a hang at exit after the report (exit $rc, expected 3; 124: never killed)" "$out"

# ---- several faulty variants at once: every one named, in its place ----
out=$("$S" compare "${HOST[@]}" --plugin "$FAKES" --variant fault-segv-create \
    --variant fault-abort-run --variant fault-error-run --json "$TMP/many.json" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "several faults: exit $rc, expected 1" "$out"
py "several faults: each failed with its phase, the pair measured" '
import json, sys
r = json.load(open(sys.argv[1]))
v = {x["label"]: x for x in r["variants"]}
assert list(v) == ["reference", "reference-mt", "fault-segv-create", "fault-abort-run",
                   "fault-error-run"], list(v)
assert [v[n]["failure_phase"] for n in list(v)[2:]] == ["create", "run", "run"]
assert all(v[n]["timing"]["count"] == 9 for n in ("reference", "reference-mt"))
' "$TMP/many.json"

# ---- the baseline itself crashes: nothing to compare against, exit 1 with the reason (and the
# report of it: test_readouts.sh) ----
out=$("$S" compare --backend host --shape 1,64,2,64 --quiet --plugin "$FAKES/fault_abort_run.so" \
    --baseline fault-abort-run --variant reference --rounds 2 --iterations 2 --warmup 1 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "fault-abort-run failed: timed run: crashed: SIGABRT" <<<"$out" \
    && grep -q "reference failed: not measured: the baseline fault-abort-run failed" <<<"$out" \
    && echo "ok   baseline crash: exit 1 with the reason" || fail "baseline crash (exit $rc)" "$out"

# ---- in-process (no containment): an error return is still contained ----
INPROC=("${HOST[@]:0:${#HOST[@]}-2}") # no --timeout: --in-process has no watchdog (a usage error)
out=$("$S" compare "${INPROC[@]}" --in-process --plugin "$FAKES/fault_error_run.so" \
    --variant fault-error-run --json "$TMP/inproc.json" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "fault-error-run failed: timed run:" <<<"$out" \
    && echo "ok   in-process: error return recorded" || fail "in-process error (exit $rc)" "$out"
py "in-process report: failure phase" '
import json, sys
v = json.load(open(sys.argv[1]))["variants"]
assert v[2]["failure_phase"] == "run" and v[0]["timing"]["count"] == 9
' "$TMP/inproc.json"

# ---- a variant's own failure reason is shown, not obeyed: run and profile printed it raw (ESC
# sequences reached the terminal, a line break forged a line) ----
for cmd in run profile; do
    out=$("$S" $cmd --backend host --shape 1,64,2,64 --warmup 1 --plugin "$FAKES/fault_error_hostile.so" \
        --variant fault-error-hostile 2>&1); rc=$?
    [ $rc -eq 1 ] && grep -qF 'fails\x1b[2J\x0aFORGED line' <<<"$out" \
        && echo "ok   $cmd: a hostile failure reason escaped" || fail "$cmd: hostile reason (exit $rc)" "$(cat -v <<<"$out")"
    [[ "$out" == *$'\x1b'* ]] && fail "$cmd: a control character reached the terminal" "$(cat -v <<<"$out")"
    grep -q "^FORGED" <<<"$out" && fail "$cmd: the reason forged a line" "$out"
done
out=$("$S" compare "${HOST[@]}" --plugin "$FAKES/fault_error_hostile.so" --variant fault-error-hostile \
    --json "$TMP/hostile.json" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -qF 'fails\x1b[2J\x0aFORGED line' <<<"$out" \
    && echo "ok   compare: a hostile failure reason escaped" || fail "compare: hostile reason (exit $rc)" "$(cat -v <<<"$out")"
[[ "$out" == *$'\x1b'* ]] && fail "compare: a control character reached the terminal" "$(cat -v <<<"$out")"

# ---- a call returning 1 (not a sagerun_status): said as such ("run failed (SAGERUN_UNKNOWN_STATUS):
# no reason given" left the plugin's author guessing) ----
out=$("$S" run --backend host --shape 1,64,2,64 --warmup 0 --iterations 3 --plugin "$FAKES/fault_positive_run.so" \
    --variant fault-positive-run 2>&1); rc=$?
[ $rc -eq 1 ] && grep -qF "variant fault-positive-run: run returned 1, which is not a sagerun_status (0, or a negative SAGERUN_* on failure: plugin.h section 8)" <<<"$out" \
    && echo "ok   run returning 1: named as not a status" || fail "run returning 1 (exit $rc)" "$out"

# ---- a variant that writes into the inputs the variants share (read-only, plugin.h): it changed
# what every variant after it computed, the baseline too, and passed as byte-exact (exit 0) ----
for case in "fault_write_v_run fault-write-v-run v" "fault_write_sage2_run fault-write-sage2-run sage2 k_int8"; do
    set -- $case; plugin=$1 name=$2; shift 2; tensor="$*"
    out=$("$S" compare "${HOST[@]}" --plugin "$FAKES/$plugin.so" --variant "$name" --json "$TMP/$name.json" 2>&1); rc=$?
    [ $rc -eq 1 ] && grep -qF "$name failed: wrote into the inputs the variants share: $tensor changed" <<<"$out" \
        && echo "ok   $name: failed for writing into the inputs ($tensor)" || fail "$name (exit $rc)" "$out"
    py "$name: the others computed on the inputs put back" '
import json, sys
r = json.load(open(sys.argv[1])); v = {x["label"]: x for x in r["variants"]}
assert v[sys.argv[2]]["failure_phase"] == "check", v[sys.argv[2]]
assert r["reference_output_sha256"] == sys.argv[3], r["reference_output_sha256"]
assert v["reference-mt"]["byte_exact"] is True' "$TMP/$name.json" "$name" "$("$S" run --backend host --shape 1,64,2,64 \
        --variant reference --iterations 1 --warmup 0 | sed -n 's/^output_sha256 //p')"
done
out=$("$S" compare "${HOST[@]}" --plugin "$FAKES/fault_write_v_once.so" --variant fault-write-v-once 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "the inputs (v) changed during the rounds, and no variant's checked call changed them again" <<<"$out" \
    && echo "ok   inputs changed once, by nobody's checked call: the comparison refuses" || fail "inputs changed once (exit $rc)" "$out"

# ---- run: a variant that ends the process is named, with its phase; it had passed for success
# (exit(0) and _exit(0) in run gave exit status 0 and no output) ----
run_end_case() { # run_end_case PLUGIN VARIANT HOW_REGEX (the fault plugins fault at their third run call)
    out=$("$S" run --backend host --shape 1,64,2,64 --warmup 0 --iterations 3 \
        --plugin "$FAKES/$1.so" --variant "$2" 2>&1); rc=$?
    [ $rc -eq 1 ] && grep -qE "^sagerun: run: the process $3 in variant '$2' \(phase: runs\), before run finished: no result" <<<"$out" \
        && ! grep -q "^output_sha256" <<<"$out" \
        && echo "ok   run: $2 named (exit 1)" || fail "run: $2 (exit $rc)" "$out"
}
run_end_case fault_exit_run fault-exit-run "ended with exit status 0"
run_end_case fault_quick_exit_run fault-quick-exit-run "ended with exit status 0"
run_end_case fault_abort_run fault-abort-run 'died of SIGABRT \(Aborted\)'
[ $ASAN -eq 1 ] || [ $TSAN -eq 1 ] || run_end_case fault_segv_run fault-segv-run 'died of SIGSEGV \(Segmentation fault\)'
# run --in-process: the variant in sagerun's own process (gdb follows the parent of a fork): the same
# output as the watched child's; a variant's exit(0) is then the process's (documented), and --timeout,
# which needs the child, is a usage error
sha() { sed -n 's/^output_sha256 //p'; }
a=$("$S" run --backend host --shape 1,64,2,64 --warmup 0 --iterations 1 --variant reference 2>/dev/null | sha)
b=$("$S" run --in-process --backend host --shape 1,64,2,64 --warmup 0 --iterations 1 --variant reference 2>/dev/null | sha)
[ -n "$a" ] && [ "$a" = "$b" ] && echo "ok   run --in-process: the same output as the watched child" \
    || fail "run --in-process output ($a / $b)"
[ $ASAN -eq 1 ] || [ $TSAN -eq 1 ] || {
out=$("$S" run --in-process --backend host --shape 1,64,2,64 --warmup 0 --iterations 3 \
    --plugin "$FAKES/fault_exit_run.so" --variant fault-exit-run 2>&1); rc=$?
[ $rc -eq 0 ] && ! grep -q "ended with exit status" <<<"$out" && ! grep -q "^output_sha256" <<<"$out" \
    && echo "ok   run --in-process: no watching child (the variant's exit is the process's)" \
    || fail "run --in-process with fault-exit-run (exit $rc)" "$out"
}
out=$("$S" run --in-process --timeout 5 --backend host --variant reference 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "run: --timeout needs the watched child, which --in-process leaves out" <<<"$out" \
    && echo "ok   run --in-process --timeout: usage" || fail "run --in-process --timeout (exit $rc)" "$out"
# run --timeout: a run that never returns is killed and named (run had no limit: it hung)
out=$("$S" run --backend host --shape 1,64,2,64 --warmup 0 --iterations 3 --timeout $((2 * SLOW)) \
    --plugin "$FAKES/fault_hang_run.so" --variant fault-hang-run 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "run: variant 'fault-hang-run' did not finish within $((2 * SLOW)) s (phase: runs): killed (--timeout)" <<<"$out" \
    && echo "ok   run --timeout: a hang killed and named" || fail "run --timeout (exit $rc)" "$out"
# a crash at exit, after the results: they stand (exit 0), with a warning
[ $ASAN -eq 1 ] || [ $TSAN -eq 1 ] || {
out=$(SAGERUN_TEST_EXIT_FAULT=1 "$S" run --backend host --shape 1,64,2,64 --warmup 0 --iterations 1 \
    --plugin "$FAKES/fault_segv_exit.so" --variant fault-segv-exit 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q "^output_sha256 " <<<"$out" && grep -q "warning: after it finished, the process died of SIGSEGV" <<<"$out" \
    && echo "ok   run: a crash at exit keeps the results" || fail "run: crash at exit (exit $rc)" "$out"
}
# a stop signal reaches the run (forwarded to the child): interrupted, 143, nothing left running
"$S" run --backend host --shape 1,1024,2,128 --warmup 0 --iterations 1000 --variant reference \
    >"$TMP/run-int.out" 2>&1 &
pid=$!
sleep $((2 * SLOW))
kill -TERM $pid; wait $pid; rc=$?
[ $rc -eq 143 ] && grep -q "^sagerun: run: interrupted (SIGTERM" "$TMP/run-int.out" \
    && echo "ok   run: SIGTERM interrupts (143)" || fail "run: SIGTERM (exit $rc)" "$(cat "$TMP/run-int.out")"
sleep 0.5
pgrep -f -- "--shape 1,1024,2,128 --warmup 0 --iterations 1000" >/dev/null \
    && fail "run: the child outlived the interrupted run" "$(pgrep -af -- '--iterations 1000')" \
    || echo "ok   run: no child left behind"

# ---- a plugin that closes stdout and stderr: the report written before the exit is kept (a build
# without sanitizers: in one, a non-zero exit after the report stays an error, for leak reports) ----
if [ $ASAN -eq 0 ] && [ $TSAN -eq 0 ]; then
    out=$("$S" compare "${HOST[@]}" --plugin "$FAKES/fault_close_stdio_run.so" --variant fault-close-stdio-run \
        --json "$TMP/stdio.json" 2>&1); rc=$?
    # (a closed stdout that nothing was written to is no error since main.c's close_stdout follows
    # gnulib: the process now exits cleanly, where the parent warned of its late exit status 1)
    [ $rc -eq 3 ] && [ -s "$TMP/stdio.json" ] \
        && echo "ok   a plugin closing stdout and stderr: the report kept" || fail "closed stdio (exit $rc)" "$out"
fi

# ---- a plugin that sets the file size limit to 0: the report is still written, with a warning (with
# stderr in a file, the comparison ended with exit 1 and not a word: the child could write neither
# its report nor its error) ----
"$S" compare "${HOST[@]}" --plugin "$FAKES/fault_fsize_run.so" --variant fault-fsize-run \
    --json "$TMP/fsize.json" >"$TMP/fsize.out" 2>&1; rc=$?
[ $rc -eq 3 ] && grep -q "^sagerun: compare: warning: a plugin changed the file size limit (RLIMIT_FSIZE)" "$TMP/fsize.out" \
    && grep -q "^fault-fsize-run " "$TMP/fsize.out" \
    && echo "ok   a plugin setting RLIMIT_FSIZE to 0: the report written, warned" || fail "RLIMIT_FSIZE 0 (exit $rc)" "$(cat "$TMP/fsize.out")"
py "RLIMIT_FSIZE 0: the JSON report is whole" '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["complete"] is True and [v["label"] for v in r["variants"]] == ["reference", "reference-mt", "fault-fsize-run"]
' "$TMP/fsize.json"

# ---- a plugin's log line: named and escaped (it reached stderr raw, unnamed, forging a line) ----
out=$("$S" run --backend host --shape 1,64,2,64 --warmup 0 --iterations 1 \
    --plugin "$FAKES/fault_log_hostile.so" --variant fault-log-hostile 2>&1); rc=$?
[ $rc -eq 0 ] && grep -qF 'sagerun: plugin fault-log-hostile: error: logged\x1b]0;pwned\x07\x0asagerun: FORGED line' <<<"$out" \
    && echo "ok   a plugin's log line named and escaped" || fail "a plugin's log line (exit $rc)" "$(cat -v <<<"$out")"
[[ "$out" == *$'\x1b'* ]] && fail "log: a control character reached the terminal" "$(cat -v <<<"$out")"
grep -q "^sagerun: FORGED" <<<"$out" && fail "log: a forged line" "$out"

# ---- usage ----
out=$("$S" compare --timeout 0 2>&1); rc=$?
[ $rc -eq 2 ] && echo "ok   --timeout 0: usage" || fail "--timeout 0: exit $rc" "$out"
"$S" compare --help | grep -q -- "--timeout SECONDS" && "$S" compare --help | grep -q "130" \
    && echo "ok   help documents --timeout and exit 130" || fail "help lacks --timeout / 130"

# ---- SIGINT / SIGTERM: a report marked incomplete, with the rounds finished ----
# ~8 ms per call (~80 ms under ASan): 1000 rounds would take minutes; the signal comes after 2.5 s,
# once the warm-up and the first checked calls are done and some rounds have run.
interrupt_case() { # interrupt_case SIGNAL EXPECTED_RC [extra options]
    local sig=$1 want=$2; shift 2
    "$S" compare --backend host --shape 1,256,2,64 --quiet --baseline reference \
        --variant reference-mt --rounds 1000 --iterations 2 --warmup 1 "$@" \
        --json "$TMP/int.json" --markdown "$TMP/int.md" --csv "$TMP/int.csv" >"$TMP/int.out" 2>&1 &
    local pid=$!
    sleep $(awk -v s=$SLOW 'BEGIN { print 2.5 * s }')
    kill -"$sig" $pid
    wait $pid; local rc=$?
    [ $rc -eq "$want" ] || { fail "SIG$sig $*: exit $rc, expected $want" "$(cat "$TMP/int.out")"; return; }
    grep -q "INCOMPLETE: interrupted after" "$TMP/int.out" || fail "SIG$sig $*: the table says INCOMPLETE"
    py "SIG$sig $*: exit $want, report incomplete with the rounds finished" '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["complete"] is False and 1 <= r["rounds_completed"] < 1000, (r["complete"], r["rounds_completed"])
k = r["rounds_completed"]
for v in r["variants"]:
    assert v["timing"]["count"] == 2 * k and len(v["rounds"]) == k, v["timing"]
    assert v["failure"] is None and v["output_sha256"] is not None
assert r["rounds"] == 1000 and r["measurement"]["ended_by"] == "stopped", r["measurement"]
assert any("interrupted after" in w for w in r["warnings"])
' "$TMP/int.json"
    # the CSV says it too (a script reading it could not tell): complete false on every row
    py "SIG$sig $*: the CSV rows say complete false" '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2 and all(x["complete"] == "false" for x in rows), rows' "$TMP/int.csv"
    rm -f "$TMP/int.json" "$TMP/int.csv"
}
interrupt_case INT 130
interrupt_case TERM 143
interrupt_case INT 130 --in-process
# stopped before the rounds (in the warm-up of a timed schedule): "stopped", not "rounds", and no
# warning about one round where there were none
# (calls of ~0.1 s, ~1 s under a sanitizer on a loaded machine: the stop waits for the call in
# flight, at most 30 s)
"$S" compare --backend host --shape 1,512,2,128 --quiet --json "$TMP/early.json" >"$TMP/early.out" 2>&1 &
pid=$!; sleep $(awk -v s=$SLOW 'BEGIN { print 0.5 * s }'); kill -TERM $pid; wait $pid; rc=$?
py "stopped early: ended_by stopped (exit $rc)" '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["complete"] is False and r["measurement"]["ended_by"] == "stopped", r["measurement"]
assert not any("one round gives no interval" in w for w in r["warnings"]) or r["rounds_completed"] == 1, r["warnings"]
' "$TMP/early.json"
grep -q "INCOMPLETE: interrupted after [0-9]* rounds$" "$TMP/early.out" && echo "ok   ... the table: interrupted after N rounds (timed: of no set count)" \
    || fail "stopped early: the table's line" "$(cat "$TMP/early.out")"
grep -q "ended by an interruption" "$TMP/early.out" && echo "ok   ... the schedule: ended by an interruption" \
    || fail "stopped early: the schedule line (it read 'ended by stopped')" "$(cat "$TMP/early.out")"
# a variant that set the stop signals to SIG_IGN: the stop still comes through (the handlers are
# put back after each call, the parent sends it again each second)
"$S" compare --backend host --shape 1,256,2,64 --quiet --baseline reference --variant reference-mt \
    --plugin "$FAKES/fault_ignore_stop_run.so" --variant fault-ignore-stop-run --rounds 1000 --iterations 2 \
    --warmup 1 --json "$TMP/ign.json" >"$TMP/ign.out" 2>&1 &
pid=$!; sleep $(awk -v s=$SLOW 'BEGIN { print 2.5 * s }'); t0=$SECONDS; kill -INT $pid; wait $pid; rc=$?
[ $rc -eq 130 ] && [ $((SECONDS - t0)) -lt $((10 * SLOW)) ] && [ -s "$TMP/ign.json" ] \
    && echo "ok   a variant ignoring SIGINT: stopped anyway ($((SECONDS - t0)) s), the report written" \
    || fail "a variant ignoring SIGINT (exit $rc, $((SECONDS - t0)) s)" "$(cat "$TMP/ign.out")"
# a variant that blocked the stop signals (sigprocmask): the mask is reset after each call, so the
# stop comes through at once, and the variant is named (Ctrl-C waited 30 s, killed, no report)
"$S" compare --backend host --shape 1,256,2,64 --quiet --baseline reference --variant reference-mt \
    --plugin "$FAKES/fault_block_stop_run.so" --variant fault-block-stop-run --rounds 1000 --iterations 2 \
    --warmup 1 --json "$TMP/blk.json" >"$TMP/blk.out" 2>&1 &
pid=$!; sleep $(awk -v s=$SLOW 'BEGIN { print 2.5 * s }'); t0=$SECONDS; kill -INT $pid; wait $pid; rc=$?
[ $rc -eq 130 ] && [ $((SECONDS - t0)) -lt $((10 * SLOW)) ] && [ -s "$TMP/blk.json" ] \
    && grep -q "fault-block-stop-run blocked SIGINT" "$TMP/blk.out" \
    && echo "ok   a variant blocking SIGINT: stopped anyway ($((SECONDS - t0)) s), named, the report written" \
    || fail "a variant blocking SIGINT (exit $rc, $((SECONDS - t0)) s)" "$(cat "$TMP/blk.out")"
# services->mem_free / mem_fill on what every variant shares are refused (plugin.h section 3): a
# variant freeing Q crashed the input guard (no report); one filling K wrote the shared inputs
check "mem_free of Q: refused, logged, the comparison goes on" 3 "$S" compare --backend host \
    --shape 1,64,2,64 --quiet --baseline reference --plugin "$FAKES/fault_free_input_run.so" \
    --variant fault-free-input-run --rounds 4 --iterations 2 --warmup 1 --json "$TMP/free.json"
contains "... the variant's log line says why" "not a block this variant allocated with mem_alloc"
[ -s "$TMP/free.json" ] && echo "ok   ... the report written" || fail "mem_free of Q: no report"
check "mem_fill of K: that call fails, named" 1 "$S" compare --backend host --shape 1,64,2,64 \
    --quiet --baseline reference --plugin "$FAKES/fault_fill_input_run.so" \
    --variant fault-fill-input-run --rounds 4 --iterations 2 --warmup 1 --json "$TMP/fill.json"
contains "... with the reason" "not within a block of the variant's"
# a variant leaking a descriptor per call is blamed when three quarters of RLIMIT_NOFILE are open,
# the others measured and the report written ('Too many open files' at the report, no report)
check "a variant leaking descriptors: blamed, the report written" 1 bash -c 'ulimit -n 256; exec "$@"' \
    _ "$S" compare --backend host --shape 1,64,2,64 --quiet --baseline reference --variant reference-mt \
    --plugin "$FAKES/fault_leak_fd_run.so" --variant fault-leak-fd-run --rounds 400 --iterations 2 \
    --warmup 1 --json "$TMP/leak.json"
py "... the leaking variant failed, named why; the others measured" '
import json, sys
v = {x["label"]: x for x in json.load(open(sys.argv[1]))["variants"]}
assert "file descriptors open after its call" in v["fault-leak-fd-run"]["failure"], v["fault-leak-fd-run"]
assert not v["reference-mt"]["failure"] and v["reference-mt"]["timing"]["count"] > 0
' "$TMP/leak.json"
# interrupted, and the report cannot be written (its folder removed meanwhile): an error, not 143,
# which says the report holds the rounds finished
for mode in "" --in-process; do
    mkdir -p "$TMP/gone"
    "$S" compare --backend host --shape 1,256,2,64 --quiet --baseline reference --variant reference-mt \
        --rounds 1000 --iterations 2 --warmup 1 $mode --json "$TMP/gone/int.json" >"$TMP/gone.out" 2>&1 &
    pid=$!
    sleep $(awk -v s=$SLOW 'BEGIN { print 2.5 * s }'); rm -rf "$TMP/gone"
    kill -TERM $pid; wait $pid; rc=$?
    [ $rc -eq 1 ] && grep -q -- "--json: .*$TMP/gone/int.json" "$TMP/gone.out" \
        && echo "ok   SIGTERM $mode, the report not written: exit 1" || fail "SIGTERM $mode, report not written: exit $rc" "$(cat "$TMP/gone.out")"
done

# ---- resource limits ----
out=$("$S" compare --backend host --quiet --shape 65535,1073741824,65535,1024 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "\-\-shape '65535,1073741824,65535,1024': .* too large" <<<"$out" && echo "ok   overflowing shape refused (usage, naming --shape)" \
    || fail "overflowing shape (exit $rc)" "$out"
if [ "$(cat /proc/sys/vm/overcommit_memory 2>/dev/null)" != 1 ]; then
    # 1 TiB per tensor passes the shape checks; the host allocation fails and is reported.
    out=$(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1 \
        TSAN_OPTIONS=${TSAN_OPTIONS:+$TSAN_OPTIONS:}allocator_may_return_null=1 \
        "$S" compare --backend host --quiet --shape 1,1048576,512,1024 --baseline reference \
        --variant reference-mt 2>&1); rc=$?
    [ $rc -eq 1 ] && grep -q "out of host memory allocating" <<<"$out" \
        && echo "ok   allocation failure reported" || fail "allocation failure (exit $rc)" "$out"
fi
ls "$TMP" | grep -q '\.tmp\.' && fail "temporary report files left"

# ---- GPU: a kernel that reads an illegal address poisons the CUDA context ----
if "$S" list --plugin "$FAKES/gpu_fill.so" --backend cuda >/dev/null 2>&1; then
    out=$("$S" compare --backend cuda --shape 1,1024,8,128 --quiet --plugin "$FAKES/gpu_fill.so" \
        --plugin "$FAKES/fault_gpu_illegal.so" --baseline gpu-fill --variant gpu-fill \
        --variant fault-gpu-illegal --rounds 3 --iterations 3 --warmup 1 \
        --json "$TMP/gpu.json" 2>&1); rc=$?
    [ $rc -eq 1 ] || fail "GPU illegal address: exit $rc, expected 1" "$out"
    py "GPU illegal address: failed with CUDA_ERROR_ILLEGAL_ADDRESS, the A/A pair measured" '
import json, sys
r = json.load(open(sys.argv[1]))
v = {x["label"]: x for x in r["variants"]}
assert list(v) == ["gpu-fill", "gpu-fill#2", "fault-gpu-illegal"], list(v)
bad = v["fault-gpu-illegal"]
assert bad["failure_phase"] == "run", bad  # its third call: the first timed one (warm-up, check, rounds)
assert "CUDA_ERROR_ILLEGAL_ADDRESS" in bad["failure"] and "CUDA context unusable" in bad["failure"], bad["failure"]
for g in ("gpu-fill", "gpu-fill#2"):
    assert v[g]["failure"] is None and v[g]["timing"]["count"] == 9 and v[g]["byte_exact"] is True
assert v["gpu-fill#2"]["verdict"] in ("same", "faster", "slower", "ambiguous")
' "$TMP/gpu.json"
else
    echo "ok   (SKIP: GPU illegal-address case: no CUDA device)"
fi

finish
