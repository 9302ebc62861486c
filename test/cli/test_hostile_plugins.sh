#!/usr/bin/env bash
# Hostile plugins (issue 13, problems 4-6): constructors that crash, exit or hang, a truncated
# ELF, a foreign-architecture ELF, a symlink into a world-writable folder, variants that raise
# SIGINT, kill their process group, fork and linger or print to stdout. Through list, run and
# compare each is reported with its reason, the good variants still run, nothing is left running
# and no temporary files are left. Also: pinned hashes are checked before a file's code runs,
# SIGHUP stops compare like SIGTERM, and the scanner's verdicts are cached.
set -u
source "$(dirname "$0")/lib.sh"
export SAGERUN_TEST_HOSTILE=1 SAGERUN_PLUGIN_SCAN_TIMEOUT=2 SAGERUN_CACHE_DIR=$TMP/cache
mkdir -m 700 "$TMP/cache"

if ! "$S" list --backend host 2>/dev/null | grep -q '^  reference-mt '; then
    echo "SKIP: reference / reference-mt plugins are not built"; exit 0
fi
[ -f "$FAKES/hostile_ctor_segv.so" ] || { echo "SKIP: hostile plugins not built ($FAKES)"; exit 0; }

# ---- the hostile folder ----
HP=$TMP/hp && mkdir "$HP"
for p in ctor_segv ctor_exit ctor_hang ctor_print; do cp "$FAKES/hostile_$p.so" "$HP/"; done
head -c 4096 /bin/ls > "$HP/junk.so"                       # a truncated ELF: SIGBUS in the loader
cp "$FAKES/fake_good.so" "$HP/aarch64.so"                   # an ELF of another machine
printf '\xb7\x00' | dd of="$HP/aarch64.so" bs=1 seek=18 conv=notrunc status=none
WW=$TMP/world && mkdir "$WW" && chmod 0777 "$WW"          # world-writable, not sticky
cp "$FAKES/fake_good.so" "$WW/" && chmod 0644 "$WW/fake_good.so"
ln -s "$WW/fake_good.so" "$HP/linked.so"
chmod -R go-w "$HP"
export SAGERUN_PLUGIN_PATH=$HP
H=(--backend host --shape 1,64,2,64 --quiet --rounds 2 --iterations 2 --warmup 1 --timeout 5)
reasons() { # the rejections every command must report, with their reasons
    contains "ctor SIGSEGV" "hostile_ctor_segv.so"
    grep -qE "crashed while loading: (SIGSEGV|a sanitizer report)" <<<"$out" \
        || fail "ctor SIGSEGV: no reason" "$out"
    contains "ctor exit reason" "ended the process while loading (exit status 0"
    contains "ctor hang reason" "hung while loading: no answer within 2 s"
    contains "truncated ELF" "junk.so"
    grep -qE "crashed while loading: (SIGBUS|SIGSEGV|a sanitizer report)|not a loadable plugin" <<<"$out" \
        || fail "truncated ELF: no reason" "$out"
    contains "foreign ELF reason" "built for aarch64 (ELF machine 183)"
    contains "symlink reason" "the folder $WW is writable by everyone"
}

# ---- 4. list survives them all, and says why ----
start=$SECONDS
check "list: hostile plugins on the path" 0 timeout 60 "$S" list --backend host && reasons
contains "list: the good variants" "reference-mt"
grep -q "HOSTILE PLUGIN OUTPUT" <<<"$("$S" list --backend host 2>/dev/null)" \
    && fail "list: a constructor's print reached stdout"
contains "list: where the cache is" "plugin scan cache: $TMP/cache/plugin-scan.txt"
[ -s "$TMP/cache/plugin-scan.txt" ] || fail "list: no cache written"
start=$SECONDS
check "list: warm" 0 timeout 60 "$S" list --backend host && reasons
[ $((SECONDS - start)) -le 4 ] || fail "list: warm took $((SECONDS - start)) s"

# ---- run goes on with them on the path ----
check "run: hostile plugins on the path" 0 timeout 60 "$S" run --variant reference --backend host \
    --shape 1,32,1,32 --iterations 1 --warmup 0
check "run: a printing variant" 0 timeout 60 "$S" run --backend host --shape 1,32,1,32 \
    --iterations 1 --warmup 0 --variant hostile-run-print --plugin "$FAKES/hostile_run_print.so"
grep -q "HOSTILE" <<<"$(timeout 60 "$S" run --backend host --shape 1,32,1,32 --iterations 1 \
    --warmup 0 --variant hostile-run-print --plugin "$FAKES/hostile_run_print.so" 2>/dev/null)" \
    && fail "run: the variant's print reached stdout"

# run's child has a process group of its own, as compare's: a variant's kill(0, SIGTERM) fails
# that run, naming the variant, and the script that ran sagerun goes on (it was killed with it).
# setsid: the wrapper is a group of its own, so that the failure, before the fix, spares this script.
check "run: a variant signalling its group ends its run, not its caller" 0 timeout 60 setsid bash -c \
    '"$0" run --backend host --shape 1,32,1,32 --iterations 5 --warmup 0 \
         --variant hostile-run-kill-group --plugin "$1"; echo "run exited $?, the caller lives"' \
    "$S" "$FAKES/hostile_run_kill_group.so"
contains "the caller lives, run failed" "run exited 1, the caller lives"
contains "the variant is named" "hostile-run-kill-group"

# the Python bridge (SAGERUN_PYTHON_BRIDGE names any file) runs in the scanner first, as a plugin
# does: a constructor that exits emptied list's output with exit 0; one that crashes killed it
for k in exit segv; do
    check "list: a Python bridge whose constructor does $k" 0 env \
        SAGERUN_PYTHON_BRIDGE="$FAKES/hostile_ctor_$k.so" "$S" list --backend host \
        --plugin "$ROOT/examples/python/numpy_attention.py"
    contains "... the .py file rejected, the bridge named" "the Python bridge $FAKES/hostile_ctor_$k.so"
    contains "... the other variants listed" "reference-mt"
done

# ---- 6. compare: variants that signal, fork, print; the others measured; nothing left ----
mkdir "$TMP/t"
PIDS=$TMP/pids
comp() {
    TMPDIR=$TMP/t SAGERUN_TEST_PIDFILE=$PIDS timeout 120 "$S" compare "${H[@]}" --baseline reference \
        --variant reference-mt "$@" --json "$TMP/c.json"
}
V=()
for p in run_sigint run_kill_group run_fork run_print; do
    V+=(--plugin "$FAKES/hostile_$p.so" --variant "hostile-${p//_/-}")
done
check "compare: hostile variants (and the hostile path), exit 1" 1 comp "${V[@]}"
contains "sigint blamed" "hostile-run-sigint failed: timed run: sent SIGINT (Interrupt) to its own process"
contains "kill(0) blamed" "hostile-run-kill-group failed: timed run: sent SIGTERM (Terminated) to its own process"
grep -q "INCOMPLETE\|interrupted" <<<"$out" && fail "compare: a variant's signal stopped the comparison" "$out"
py "compare: the good ones measured, each hostile one failed or measured" '
import json, sys
r = json.load(open(sys.argv[1])); v = {x["label"]: x for x in r["variants"]}
assert r.get("complete", True) is not False, "incomplete"
for good in ("reference", "reference-mt", "hostile-run-fork", "hostile-run-print"):
    assert v[good]["timing"]["count"] == 4 and not v[good]["failure"], (good, v[good]["failure"])
for bad, sig in (("hostile-run-sigint", "SIGINT"), ("hostile-run-kill-group", "SIGTERM")):
    assert sig in v[bad]["failure"] and v[bad]["failure_phase"] == "run", v[bad]
' "$TMP/c.json"
table=$(TMPDIR=$TMP/t SAGERUN_TEST_PIDFILE=$PIDS timeout 120 "$S" compare "${H[@]}" --baseline reference \
    --variant hostile-run-print --plugin "$FAKES/hostile_run_print.so" 2>/dev/null)
grep -q "HOSTILE" <<<"$table" && fail "compare: the variant's print reached the table" "$table"
sleep 0.5
while read -r pid; do
    kill -0 "$pid" 2>/dev/null && { fail "compare: the forked process $pid still runs"; kill "$pid"; }
done < "$PIDS"
[ -s "$PIDS" ] || fail "compare: the forking variant never forked"
[ -z "$(ls -A "$TMP/t")" ] || fail "compare: temporary files left: $(ls -A "$TMP/t")"

# the same containment for a crashing constructor named explicitly, in compare and run
check "compare: a variant whose constructor crashes" 1 timeout 60 "$S" compare "${H[@]}" \
    --baseline reference --variant hostile-ctor-segv && contains "names it" "no variant named 'hostile-ctor-segv'"

# a file named by --plugin that is rejected is an error in compare and run (it was dropped in
# silence: compare measured the rest and exited 0); list shows it with its reason
: > "$TMP/empty.so" && chmod go-w "$TMP/empty.so"
check "compare: an explicit --plugin that is rejected" 1 timeout 60 "$S" compare "${H[@]}" --plugin "$TMP/empty.so" \
    && contains "names it and why" "--plugin $TMP/empty.so: not loaded: not a loadable plugin"
check "run: an explicit --plugin that is rejected" 1 timeout 60 "$S" run --variant reference --backend host \
    --shape 1,32,1,32 --plugin "$TMP/empty.so" && contains "names it" "--plugin $TMP/empty.so: not loaded"
check "list: an explicit --plugin that is rejected is shown" 0 timeout 60 "$S" list --backend host \
    --plugin "$TMP/empty.so" && contains "with its reason" "not a loadable plugin"

# the same file named with --plugin and found in the plugins folder is loaded once, not listed as
# a duplicate of itself (the file this build's sagerun loads reference from: another build's
# reference.so is a duplicate indeed)
ref=$("$S" list --backend host 2>/dev/null | awk '/^  reference /{getline; print $2; exit}')
if [ -f "$ref" ]; then
    check "list: a --plugin file that is also in the plugins folder" 0 timeout 60 "$S" list --backend host \
        --plugin "$ref" --plugin "$ref"
    grep -q "duplicate variant name \"reference\"" <<<"$out" && fail "reference.so rejected as its own duplicate" "$out"
else
    fail "list shows where reference comes from" "$("$S" list --backend host 2>&1 | head -20)"
fi

# ---- a constructor that hangs only when the measuring process loads the file (the scanner, a
# process of its own, approved it): no call is open, so no call's watchdog sees it; it hung
# compare forever. Killed when no call into a variant began within the setup limit (600 s; 5 here)
rm -rf "$TMP/cache2" "$TMP/second"
out=$(SAGERUN_CACHE_DIR=$TMP/cache2 SAGERUN_TEST_SECOND_LOAD=$TMP/second SAGERUN_TEST_SETUP_TIMEOUT_S=5 \
    timeout 60 "$S" compare "${H[@]}" --baseline reference --variant reference-mt \
    --plugin "$FAKES/hostile_ctor_hang_second.so" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "no call into a variant within 5 s of starting: killed while loading the plugins of $FAKES/hostile_ctor_hang_second.so (" <<<"$out" \
    && echo "ok   compare: a constructor hanging in the measuring process: killed, the file named" \
    || fail "compare: a constructor hanging in the measuring process (exit $rc; 124: hung)" "$out"
[ -e "$TMP/second" ] || fail "the hostile plugin was never loaded (its scanner load leaves $TMP/second)"
# the same from a folder of the search path: the folders named
mkdir "$TMP/hs" && cp "$FAKES/hostile_ctor_hang_second.so" "$TMP/hs/" && chmod -R go-w "$TMP/hs"
rm -rf "$TMP/cache3" "$TMP/second"
out=$(SAGERUN_PLUGIN_PATH=$TMP/hs SAGERUN_CACHE_DIR=$TMP/cache3 SAGERUN_TEST_SECOND_LOAD=$TMP/second \
    SAGERUN_TEST_SETUP_TIMEOUT_S=5 timeout 60 "$S" compare "${H[@]}" --baseline reference 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "killed while loading the plugins of the folders of SAGERUN_PLUGIN_PATH ($TMP/hs)" <<<"$out" \
    && echo "ok   compare: the same on the search path: the folders named" \
    || fail "compare: a constructor hanging on the search path (exit $rc; 124: hung)" "$out"

# ---- SIGHUP: stopped like SIGTERM, temporary folder removed. The compare starts with SIGHUP at its
# default whatever this script got (a suite run under nohup ignores it, and compare keeps an ignored
# SIGHUP ignored: the next case; a shell cannot reset a signal ignored at its entry, Python can) ----
mkdir "$TMP/t2"
TMPDIR=$TMP/t2 python3 -c 'import os, signal, sys
signal.signal(signal.SIGHUP, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
    "$S" compare --backend host --shape 1,256,2,128 --quiet --rounds 200 \
    --iterations 20 --json "$TMP/hup.json" >/dev/null 2>&1 &
cpid=$!
sleep 2; kill -HUP $cpid; wait $cpid; rc=$?
[ $rc -eq 129 ] || fail "SIGHUP: exit $rc, expected 129"
[ -z "$(ls -A "$TMP/t2")" ] || fail "SIGHUP: temporary files left: $(ls -A "$TMP/t2")"
py "SIGHUP: the report says incomplete" '
import json, sys
assert json.load(open(sys.argv[1]))["complete"] is False
' "$TMP/hup.json"

# ---- a stop signal the caller ignores stays ignored (nohup): compare's handler took SIGHUP over,
# and a comparison started under nohup stopped when its terminal closed ----
(trap '' HUP; exec "$S" compare --backend host --shape 1,256,2,128 --quiet --rounds 40 \
    --iterations 5 --baseline reference --variant reference-mt --json "$TMP/nohup.json" >/dev/null 2>&1) &
cpid=$!
sleep 1; kill -HUP $cpid; wait $cpid; rc=$?
[ $rc -eq 0 ] || fail "SIGHUP ignored by the caller (nohup): exit $rc, expected 0"
py "nohup: the report is complete" '
import json, sys
assert json.load(open(sys.argv[1]))["complete"] is True
' "$TMP/nohup.json"

# ---- a plugin's texts (description, version, parameters, refusals, rejected names) are shown,
# not obeyed: list printed them raw, so a plugin could clear the screen, retitle the terminal or
# forge the lines after its own ----
no_controls() { # no_controls NAME: the last output holds no ESC, CR or BEL, and no forged line
    [[ "$out" == *$'\x1b'* || "$out" == *$'\r'* || "$out" == *$'\a'* ]] \
        && fail "$1: a control character reached the terminal" "$(cat -v <<<"$out")"
    grep -q "^FORGED" <<<"$out" && fail "$1: a text forged a line" "$out"
}
check "list: a variant's texts with controls" 0 "$S" list --backend host --plugin "$FAKES/fake_hostile_text.so"
contains "description escaped" 'desc\x1b[2J\x0aFORGED  row\u2028'
contains "version escaped" '1.0\x0d9.9'
contains "parameter description escaped" 'rows\x1b]0;pwned\x07\x0aFORGED param'
no_controls "list: texts"
# texts that are not UTF-8: escaped in tables, and a report holding them is still written (it was
# lost: "out of memory building the report", exit 1, no table)
check "list: texts that are not UTF-8" 0 "$S" list --backend host --plugin "$FAKES/fake_bad_utf8.so"
contains "the version's byte escaped" '1.0\xff'
contains "the override and the cut character escaped" 'desc \u202eevil \xc3'
check "compare: a variant whose version is not UTF-8" 0 "$S" compare --backend host --quiet \
    --shape 1,32,1,32 --rounds 2 --iterations 1 --warmup 0 --baseline reference \
    --variant reference-mt --variant fake-bad-utf8 --max-rel-l1 fake-bad-utf8=1e9 --max-ulp fake-bad-utf8=65535 \
    --plugin "$FAKES/fake_bad_utf8.so" --json "$TMP/utf8.json"
py "the report holds the version escaped" '
import json, sys
v = {x["label"]: x for x in json.load(open(sys.argv[1]))["variants"]}
assert v["fake-bad-utf8"]["version"] == "1.0\\xff", v["fake-bad-utf8"]["version"]' "$TMP/utf8.json"
SAGERUN_TEST_FAULTS=1 check "compare: a failure reason cut inside a character" 1 "$S" compare --backend host --quiet \
    --shape 1,32,1,32 --rounds 2 --iterations 1 --warmup 0 --baseline reference --variant reference-mt \
    --plugin "$FAKES/fault_error_bad_utf8.so" --variant fault-error-bad-utf8 --json "$TMP/utf8r.json"
contains "the reason shown (a whole character as is), the cut byte escaped" "fails ö\\xc3"
py "the report is written, reason escaped" '
import json, sys
v = {x["label"]: x for x in json.load(open(sys.argv[1]))["variants"]}
assert v["fault-error-bad-utf8"]["failure"].endswith("fails \u00f6\\xc3"), v["fault-error-bad-utf8"]["failure"]
assert v["reference-mt"]["timing"]["count"] > 0' "$TMP/utf8r.json"
# a plugin file that replaces a same-named variant of the search path (here the shipped baseline)
# is said where it is used, not only by list
cp "$ROOT/plugins/reference.so" "$TMP/myref.so" && chmod go-w "$TMP/myref.so"
check "run: --plugin replacing the shipped reference" 0 "$S" run --backend host --shape 1,32,1,32 \
    --variant reference --plugin "$TMP/myref.so" --iterations 1 --warmup 0
contains "says which file is left out" "reference.so left out: duplicate variant name \"reference\" (already loaded from $TMP/myref.so)"
check "list: a rejected name and a refusal with controls" 0 "$S" list --backend host \
    --plugin "$FAKES/fake_hostile_reason.so" --plugin "$FAKES/fake_hostile_refusal.so"
contains "the name shown escaped" 'invalid variant name "evil\x1b[2Jname"'
contains "the refusal shown escaped" 'refused\x1b[2J\x0aFORGED  line'
no_controls "list: rejections"
check "run: the same rejections" 1 "$S" run --backend host --shape 1,32,1,32 --iterations 1 --warmup 0 \
    --variant reference --plugin "$FAKES/fake_hostile_reason.so"
no_controls "run: rejections"
# ---- pins are checked before any code of the file runs ----
unset SAGERUN_PLUGIN_PATH
PIN=$TMP/pin && mkdir "$PIN" && cp "$FAKES/hostile_ctor_mark.so" "$PIN/hostile-ctor-mark.so" && chmod go-w "$PIN"
export SAGERUN_TEST_MARKER=$TMP/marker
check "pin: wrong hash refused" 1 "$S" list --backend host --plugin "$PIN" \
    --expect-plugin-sha256 hostile-ctor-mark=$(printf '0%.0s' {1..64}) \
    && contains "says so" "pinned plugin hostile-ctor-mark"
[ -e "$TMP/marker" ] && fail "pin: the constructor of a file with the wrong hash ran"
good=$(sha256sum "$PIN/hostile-ctor-mark.so" | cut -d' ' -f1)
check "pin: right hash loads" 0 "$S" list --backend host --plugin "$PIN" \
    --expect-plugin-sha256 hostile-ctor-mark=$good
[ -e "$TMP/marker" ] || fail "pin: the right file was not loaded"
check "pin: reference pinned wrong" 1 "$S" list --backend host \
    --expect-plugin-sha256 reference=$(printf 'a%.0s' {1..64}) && contains "names the file" "reference.so has SHA-256"
finish
