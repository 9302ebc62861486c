#!/usr/bin/env bash
# Hostile paths (issue 13, problems 1-3, 7, 8 and the weaker items on paths): outputs never
# replace a device, FIFO, folder or symlink, "-" is stdout, outputs are checked before measuring
# and never overwrite an input; stdout write errors exit 1; FIFOs and devices given as inputs are
# refused at once (no reader hangs); a sweep workload named "summary" is refused; merge copies
# only regular, valid reports, each claimed once, never into an input's folder.
set -u
source "$(dirname "$0")/lib.sh"
SEED=$ROOT/test/data/seed-report.json

if ! "$S" list --backend host 2>/dev/null | grep -q '^  reference '; then
    echo "SKIP: the reference variant (plugins/reference.so) is not built"; exit 0
fi
H=(--backend host --shape 1,32,1,32 --rounds 2 --iterations 1 --warmup 0 --quiet --no-accuracy)
T=(timeout 60) # an old build hangs on a FIFO: a hang is a failure, not a stuck suite
cd "$TMP"

# ---- 1. outputs never replace what is not a regular file ----
mkfifo fifo
check "--json FIFO refused" 1 "${T[@]}" "$S" compare "${H[@]}" --json fifo \
    && contains "names the FIFO" "fifo: a FIFO, not a regular file"
[ -p fifo ] || fail "--json FIFO: the FIFO was replaced"
ln -s /proc/self/fd/1 to-stdout # stdout, a pipe here: written in place, as "-" (issue 41)
check "--json symlink to stdout: written into it" 0 "${T[@]}" "$S" compare "${H[@]}" --json to-stdout \
    && contains "the report" '"schema_version"'
[ -L to-stdout ] || fail "--json symlink: the symlink was replaced"
ln -s /dev/null to-null
for opt in --json --markdown; do
    check "$opt symlink to /dev/null refused" 1 "${T[@]}" "$S" compare "${H[@]}" $opt to-null \
        && contains "$opt: says what it leads to" "a symlink to a character device"
done
[ -L to-null ] && [ -c /dev/null ] || fail "/dev/null or the symlink to it was replaced"
if [ "$(id -u)" = 0 ]; then # a device node of our own: as root the old writer renamed over it
    mknod fullnode c 1 7
    check "--json device node refused (root)" 1 "${T[@]}" "$S" compare "${H[@]}" --json fullnode
    [ -c fullnode ] || fail "--json device: the device node became $(stat -c %F fullnode)"
    check "plot -o device node refused" 1 "${T[@]}" "$S" plot "$SEED" -o fullnode
    check "run --save-output device node refused" 1 "${T[@]}" "$S" run --variant reference \
        --backend host --shape 1,32,1,32 --iterations 1 --warmup 0 --save-output fullnode
    [ -c fullnode ] || fail "a device node was replaced"
fi
mkdir adir
check "--save-inputs folder refused" 1 "${T[@]}" "$S" run --variant reference --backend host \
    --shape 1,32,1,32 --iterations 1 --warmup 0 --save-inputs adir && contains "says folder" "a folder"
# a symlink to a regular file is written through and stays a symlink
echo old > target.json && ln -s target.json link.json
check "--json through a symlink to a regular file" 0 "${T[@]}" "$S" compare "${H[@]}" --json link.json
[ -L link.json ] && grep -q schema_version target.json || fail "symlink not written through"
# modes: the umask's for new files, an existing file's own
check "--json new file" 0 bash -c "umask 077; \"$S\" compare ${H[*]} --json new.json"
[ "$(stat -c %a new.json)" = 600 ] || fail "umask 077: new report mode $(stat -c %a new.json), expected 600"
echo x > kept.json && chmod 640 kept.json
check "--json existing file" 0 "${T[@]}" "$S" compare "${H[@]}" --json kept.json
[ "$(stat -c %a kept.json)" = 640 ] || fail "existing mode 640 became $(stat -c %a kept.json)"
# a name of 255 bytes (NAME_MAX): written (its temporary file's name, the target's + ".tmp.PID.N",
# was too long, and the report was lost after the whole measurement)
long=$(printf 'a%.0s' $(seq 1 250)).json
check "--json a name of 255 bytes" 0 "${T[@]}" "$S" compare "${H[@]}" --json "$long"
grep -q schema_version "$long" || fail "--json a name of 255 bytes: not written"
ls -a | grep -q '\.tmp\.' && fail "--json a name of 255 bytes: a temporary file left" "$(ls -a)"

# ---- "-" is stdout; outputs checked before measuring; never an input ----
check "--json - writes stdout" 0 "${T[@]}" "$S" compare "${H[@]}" --json - && contains "JSON on stdout" '"schema_version"'
[ -e ./- ] && fail "--json -: a file named '-' was created"
start=$SECONDS
check "--json into a missing folder: refused before measuring" 1 "${T[@]}" "$S" compare \
    --backend host --shape 1,256,2,128 --rounds 50 --iterations 20 --quiet --json nodir/r.json \
    && contains "names the folder" "nodir"
[ $((SECONDS - start)) -lt 5 ] || fail "--json into a missing folder: took $((SECONDS - start)) s (measured first?)"
check "run: save inputs" 0 "$S" run --variant reference --backend host --shape 1,32,1,32 \
    --iterations 1 --warmup 0 --save-inputs in.safetensors
sum=$(sha256sum in.safetensors)
check "--json = --inputs refused" 1 "${T[@]}" "$S" compare --backend host --quiet --rounds 2 \
    --iterations 1 --inputs in.safetensors --json in.safetensors && contains "says input" "input"
check "--save-inputs F --save-output F refused" 1 "$S" run --variant reference --backend host \
    --inputs in.safetensors --iterations 1 --warmup 0 --save-inputs o.st --save-output o.st
check "--save-output = --inputs refused" 1 "$S" run --variant reference --backend host \
    --inputs in.safetensors --iterations 1 --warmup 0 --save-output in.safetensors
[ "$(sha256sum in.safetensors)" = "$sum" ] || fail "the input file was overwritten"
# the data file a workload file names, and a --plugin file, are inputs too
printf '{"shape": [1, 32, 1, 32], "input": {"source": "safetensors", "path": "in.safetensors"}}' > wl.json
check "--json = the workload's data file refused" 1 "${T[@]}" "$S" compare --backend host --quiet \
    --rounds 2 --iterations 1 --workload wl.json --json ./in.safetensors && contains "says input" "is the input"
check "--save-output = the workload's data file refused" 1 "$S" run --variant reference --backend host \
    --workload wl.json --iterations 1 --warmup 0 --save-output in.safetensors && contains "says input" "is the input"
[ "$(sha256sum in.safetensors)" = "$sum" ] || fail "the workload's data file was overwritten"
# workload show reads a workload's data file as a run would (it said 0 for a missing one)
check "workload show: the data file fits" 0 "$S" workload show wl.json
printf '{"shape": [1, 32, 1, 64], "input": {"source": "safetensors", "path": "in.safetensors"}}' > wl-d.json
check "workload show: a data file of another shape" 1 "$S" workload show wl-d.json \
    && contains "says both shapes" "holds [1, 32, 1, 32] (Hkv 1, F16) where the workload says [1, 32, 1, 64]"
printf '{"shape": [1, 32, 1, 32], "input": {"source": "safetensors", "path": "gone.safetensors"}}' > wl-g.json
check "workload show: a missing data file" 1 "$S" workload show wl-g.json \
    && contains "names the file, the key and why" "wl-g.json: input.path: "
contains "... and the missing file" "gone.safetensors: No such file or directory"
cp "$FAKES/fake_good.so" fake.so && chmod go-w fake.so && plugin_sum=$(sha256sum fake.so)
check "--json = a --plugin file refused" 1 "${T[@]}" "$S" compare "${H[@]}" --plugin fake.so --json fake.so \
    && contains "names the plugin" "is the input fake.so"
[ "$(sha256sum fake.so)" = "$plugin_sum" ] || fail "the plugin file was overwritten"
# a plugin found on SAGERUN_PLUGIN_PATH (not given with --plugin) is an input too: its file was
# replaced by the CSV of the comparison measuring it, or by run's --save-output
mkdir -p pp && cp "$FAKES/fake_good.so" pp/ && chmod go-w pp pp/fake_good.so && pp_sum=$(sha256sum pp/fake_good.so)
SAGERUN_PLUGIN_PATH=$PWD/pp check "compare --csv = a plugin on the path refused" 1 "${T[@]}" "$S" compare "${H[@]}" \
    --variant fake-good --csv pp/fake_good.so
contains "names the variant" "--csv pp/fake_good.so is the plugin file of variant fake-good"
SAGERUN_PLUGIN_PATH=$PWD/pp check "run --save-output = a plugin on the path refused" 1 "$S" run --backend host \
    --variant fake-good --shape 1,32,1,32 --iterations 1 --warmup 0 --save-output pp/fake_good.so
contains "names the variant" "--save-output pp/fake_good.so is the plugin file of variant fake-good"
[ "$(sha256sum pp/fake_good.so)" = "$pp_sum" ] && echo "ok   ... the plugin intact" || fail "a plugin on the path was overwritten"
# run --save-output - : stdout is the safetensors file alone (run's lines were mixed into it)
"$S" run --backend host --variant reference --shape 1,32,1,32 --iterations 1 --warmup 0 --save-output - \
    2>"$TMP/run-stdout.err" >"$TMP/run-stdout.st"
py "run --save-output -: the file alone on stdout, run's lines on stderr" '
import json, struct, sys
b = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
assert len(b) == 8 + n + 32 * 32 * 2, len(b)
assert "output_sha256" in open(sys.argv[2]).read()' "$TMP/run-stdout.st" "$TMP/run-stdout.err"
# two outputs that are one new file, spelled two ways
for pair in "r2.json ./r2.json" "d2/../r3.json r3.json" "$TMP/r4.json r4.json"; do
    mkdir -p d2 && set -- $pair
    check "--json $1 --csv $2 refused" 1 "${T[@]}" "$S" compare "${H[@]}" --json "$1" --csv "$2" \
        && contains "says so" "--json and --csv name the same file"
done
check "run: --save-inputs and --save-output one new file" 1 "$S" run --variant reference --backend host \
    --shape 1,32,1,32 --iterations 1 --warmup 0 --save-inputs n.st --save-output ./n.st \
    && contains "says so" "name the same file"
cp "$SEED" rep.json
check "plot X.json -o X.json refused" 1 "$S" plot rep.json -o rep.json
cmp -s rep.json "$SEED" || fail "plot overwrote its input"

# ---- 2. write errors on stdout exit 1 ----
for cmd in "show $SEED" "diff $SEED $SEED" "list --backend host" "workload show" "plot $SEED -o -" \
           "compare ${H[*]}" "run --variant reference --backend host --shape 1,32,1,32 --iterations 1 --warmup 0"; do
    check "stdout full: $cmd" 1 bash -c "\"$S\" $cmd > /dev/full" \
        && contains "says stdout" "standard output"
done

# a reader gone from stdout (`| head`) is a write error after the files are written: SIGPIPE ended
# compare, diff, run and sweep before their report files, and a whole measurement was lost
rm -f gone-*.json gone.st
gone() { # gone COMMAND...: runs it with stdout a pipe whose reader has gone (no race: closed first)
    python3 -c 'import os, subprocess, sys
r, w = os.pipe(); os.close(r)
rc = subprocess.call(sys.argv[1:], stdout=w)
sys.exit(rc if rc >= 0 else 128 - rc)' "$@"
}
check "compare, reader gone: the report is written" 1 gone "$S" compare "${H[@]}" --json gone-c.json
contains "says stdout" "standard output" && [ -s gone-c.json ] || fail "compare, reader gone: no report file"
check "diff, reader gone: the report is written" 1 gone "$S" diff "$SEED" "$SEED" --json gone-d.json
[ -s gone-d.json ] || fail "diff, reader gone: no report file"
check "run, reader gone: the output is saved" 1 gone "$S" run --variant reference --backend host \
    --shape 1,256,2,64 --iterations 1 --warmup 0 --save-output gone.st
[ -s gone.st ] || fail "run, reader gone: no output file"
grep -q SIGPIPE <<<"$out" && fail "run, reader gone: SIGPIPE blamed on the variant" "$out"
# a closed stdout that nothing is written to keeps the command's own exit code
check "plot -o FILE with stdout closed" 0 bash -c "\"$S\" plot $SEED -o closed.svg >&-"
[ -s closed.svg ] || fail "plot with stdout closed: no figure"
check "a usage error with stdout closed is still 2" 2 bash -c "\"$S\" compare --bogus >&-"
# a file size limit is a write error, not SIGXFSZ (plot was killed, its temporary file left)
check "plot under ulimit -f 4: an error" 1 bash -c "ulimit -f 4; \"$S\" plot $SEED -o big.svg"
ls -a | grep -q 'big.svg.tmp' && fail "plot under ulimit -f: a temporary file left" "$(ls -a)"

# ---- 3. a FIFO (or a folder, or a device) as an input is refused at once ----
for cmd in "compare --backend host --quiet --inputs fifo" "workload show fifo" "show fifo" \
           "diff fifo $SEED" "plot fifo" "show /dev/zero" "show adir" \
           "compare --backend host --quiet --workload fifo"; do
    check "input: $cmd" 1 "${T[@]}" "$S" $cmd && contains "not a regular file" "not a regular file"
done
mkdir fifo-plugins && mkfifo fifo-plugins/a.so && chmod go-w fifo-plugins
check "list: a FIFO named a.so" 0 "${T[@]}" "$S" list --backend host --plugin fifo-plugins \
    && contains "FIFO rejected with its kind" "a FIFO"

# ---- 7. a sweep workload named "summary" ----
cat > sw.json <<'J'
{"name": "s", "baseline": "reference", "variants": ["reference"], "warmup": 0, "rounds": 2,
 "iterations": 1, "defaults": {"heads_kv": 1},
 "workloads": [{"name": "summary", "shape": [1, 32, 1, 32]}]}
J
check "sweep: workload 'summary' refused" 1 "${T[@]}" "$S" sweep sw.json --backend host --quiet \
    --out-dir sw && contains "reserved" "reserved"

# ---- 8. merge validates what it copies ----
cat > sw2.json <<'J'
{"name": "m", "baseline": "reference", "variants": ["reference-mt"], "warmup": 0, "rounds": 2,
 "iterations": 1, "defaults": {"heads_kv": 1},
 "workloads": [{"name": "a", "shape": [1, 32, 1, 32]}, {"name": "b", "shape": [1, 48, 1, 32]}]}
J
check "merge: a sweep to merge" 0 "${T[@]}" "$S" sweep sw2.json --backend host --quiet --out-dir base
fresh() { rm -rf "$1" && cp -r base "$1"; }
edit() { # edit DIR PYTHON: change DIR/summary.json with s = the summary
    python3 -c "import json,sys; p=sys.argv[1]+'/summary.json'; s=json.load(open(p)); $2; json.dump(s, open(p,'w'))" "$1"
}
fresh m1 && rm m1/a.json && ln -s /etc/passwd m1/a.json
check "merge: a report symlinked to /etc/passwd" 1 "$S" merge m1 --out-dir o1 --quiet \
    && contains "symlink refused" "not a regular file"
[ -e o1/a.json ] && ! [ -L o1/a.json ] && grep -q root: o1/a.json && fail "merge copied /etc/passwd"
fresh m2 && echo '{"not": "a report"' > m2/a.json
check "merge: a corrupt report" 1 "$S" merge m2 --out-dir o2 --quiet && contains "names it" "m2/a.json"
fresh m3 && edit m3 's["workloads"][0]["report"] = None'
check "merge: report null on an ok row" 1 "$S" merge m3 --out-dir o3 --quiet && contains "key" "report"
fresh m4 && edit m4 's["workloads"][1]["report"] = "a.json"'
check "merge: two workloads claim one report" 1 "$S" merge m4 --out-dir o4 --quiet \
    && contains "claimed twice" "both claim"
fresh m5 && cp m5/summary.json m5.orig
check "merge: --out-dir = an input" 1 "$S" merge m5 --out-dir m5 --quiet && contains "says input" "input"
cmp -s m5/summary.json m5.orig || fail "merge --out-dir = input: the input summary was replaced"
fresh m6
check "merge: a valid shard still merges" 0 "$S" merge m6 --out-dir o6 --quiet
# ---- the weaker items: strict numbers, options that do not apply, forged reports ----
for t in 0x10 " 5" 1e inf -1 0; do
    check "--timeout '$t' refused" 2 "$S" compare "${H[@]}" --timeout "$t" && contains "names it" "--timeout"
done
check "--noise-threshold 0x1 refused" 2 "$S" compare "${H[@]}" --noise-threshold 0x1
# options that do not go together are a usage error (2) before any plugin loads, as --workload
# with --shape was (they were exit 1, found in the measuring child)
for opt in "--seed 3" "--dtype bf16"; do
    check "$opt with --inputs refused" 2 "$S" compare --backend host --quiet --rounds 2 \
        --iterations 1 --inputs in.safetensors $opt && contains "says why" "not to --inputs"
done
check "--causal with --workload refused" 2 "$S" compare --backend host --quiet --rounds 2 \
    --iterations 1 --workload wl.json --causal \
    && contains "says why" "--causal applies to --shape, --inputs and the default workload, not to --workload"
check "run: --seed with --inputs refused" 2 "$S" run --variant reference --backend host \
    --inputs in.safetensors --seed 3 --iterations 1 --warmup 0
check "compare: --layout with --workload refused" 2 "$S" compare --backend host --quiet --rounds 2 \
    --iterations 1 --workload wl.json --layout hnd && contains "says why" "not to --workload"
# --causal is the computation's, not the data's: it applies to --inputs (it was refused, "the file
# says what it holds", though a file did not say it), and a file saved from a causal run (or one of
# another sm_scale) says so itself: it replayed as a full attention at D^-0.5
"$S" run --variant reference --backend host --shape 1,32,2,32 --causal --iterations 1 \
    --save-inputs causal.safetensors > causal.out || fail "run --causal --save-inputs"
want=$(awk '/output_sha256/ {print $2}' causal.out)
check "run --inputs of a causal run's file" 0 "$S" run --variant reference --backend host \
    --inputs causal.safetensors --iterations 1 && contains "causal, as saved" "output_sha256 $want"
check "run --inputs FILE --causal" 0 "$S" run --variant reference --backend host \
    --inputs in.safetensors --causal --iterations 1 && contains "causal" "fp16 causal from in.safetensors"
check "profile --inputs FILE --causal" 0 "$S" profile --variant reference --backend host \
    --inputs causal.safetensors --causal
printf '{"shape": [1, 32, 2, 32], "sm_scale": 0.25, "input": {"source": "synthetic"}}' > scale.json
"$S" run --variant reference --backend host --workload scale.json --iterations 1 \
    --save-inputs scale.safetensors > scale.out || fail "run sm_scale --save-inputs"
want=$(awk '/output_sha256/ {print $2}' scale.out)
check "run --inputs of a file saved at sm_scale 0.25" 0 "$S" run --variant reference --backend host \
    --inputs scale.safetensors --iterations 1 && contains "its sm_scale, as saved" "output_sha256 $want"
# a varlen, paged file with its masks (kv_len, bottom-right, window, softcap in __metadata__, the
# lengths and block table as I32 tensors) replays to the same output: the alignment was the
# command line's default, top-left, over the file's
"$S" run --variant reference --backend host --shape 3,16,2,8 --varlen 4:10,16:16,2:20 \
    --causal=bottom-right --window 4,0 --softcap 30 --page-size 8 --iterations 1 \
    --save-inputs varlen.safetensors > varlen.out || fail "run --varlen --save-inputs"
want=$(awk '/output_sha256/ {print $2}' varlen.out)
check "run --inputs of a varlen, paged file" 0 "$S" run --variant reference --backend host \
    --inputs varlen.safetensors --iterations 1 && contains "the same output" "output_sha256 $want"
contains "its alignment, as saved" "causal bottom-right window 4,0 softcap 30 varlen 3 sequences"
forge() { # forge NAME PYTHON: rep-NAME.json, the seed's report changed with r = the report
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); $2; json.dump(r, open(sys.argv[2],'w'))" "$SEED" "rep-$1.json"
}
forge neg 'r["variants"][0]["timing"]["p50_s"] = -1.0'
forge sha 'r["reference_output_sha256"] = "zz"'
for f in neg sha; do
    check "show: forged report ($f) refused" 1 "$S" show "rep-$f.json"
done
# a p50 above its p90 (edited by hand) showed a spread of "-100.00/+-100.00%"
forge order 'r["variants"][0]["timing"]["p50_s"] = 1e308'
check "show: a p50 above its p90" 0 "$S" show rep-order.json && contains "the spread with its signs" \
    "-100.00/-100.00%"
forge ctl 'r["variants"][0]["name"] = "evil\u001b[2J\rforged row | x"'
check "show: control characters escaped" 0 "$S" show rep-ctl.json && contains "escaped" 'evil\x1b[2J\x0dforged'
grep -q $'\x1b' <<<"$out" && fail "show: a raw ESC reached the terminal"
check "show --markdown: '|' escaped" 0 "$S" show --markdown rep-ctl.json && contains "pipe escaped" 'forged row \| x'
forge nullp50 'r["variants"][1]["timing"]["p50_s"] = None'
check "diff: a null p50 in new is reported" 4 "$S" diff "$SEED" rep-nullp50.json && contains "says null" "NULL P50"
check "compare: an incomplete report" 0 "$S" compare "${H[@]}" --json inc.json
python3 -c "import json; p='inc.json'; r=json.load(open(p)); r['complete']=False; r['rounds_completed']=1; json.dump(r, open(p,'w'))"
check "diff: an incomplete report is noted" 0 "$S" diff inc.json inc.json && contains "note" "report is incomplete"
# ... of a timed schedule, which has no set count (it read "interrupted after 6 of 6 rounds: its
# numbers cover fewer rounds")
check "compare: a timed report" 0 "$S" compare --backend host --shape 1,32,1,32 --quiet --no-accuracy \
    --max-time 0.3 --json inct.json
python3 -c "import json; p='inct.json'; r=json.load(open(p)); r['complete']=False; json.dump(r, open(p,'w'))"
check "diff: an incomplete timed report is noted" 0 "$S" diff inct.json inct.json \
    && contains "note" "the old report is incomplete (interrupted after $(python3 -c "import json; print(json.load(open('inct.json'))['rounds_completed'])") rounds): its numbers cover only the rounds finished"
# two rows of one label (our format; the seed's, which has no labels, reads a name's second entry
# as NAME#2, test_compare) could not be told apart
python3 -c "import json; r=json.load(open('inc.json')); r['variants'][1]['label']=r['variants'][0]['label']; json.dump(r, open('rep-dup.json','w'))"
check "show: forged report (dup) refused" 1 "$S" show rep-dup.json && contains "dup: says label" "same label"
check "diff: duplicate labels refused" 1 "$S" diff rep-dup.json inc.json

# ---- the child's hidden options write over nothing (as root, --isolated-report /etc/passwd replaced
# the file with a report: they skipped every output check) ----
echo precious > victim.txt
check "--isolated-child with a non-pipe refused" 2 "${T[@]}" "$S" compare "${H[@]}" --isolated-child x \
    --isolated-report "$TMP/victim.txt" && contains "says whose" "sagerun's own"
exec 7< <(sleep 30)
check "--isolated-report over an existing file refused" 2 "${T[@]}" "$S" compare "${H[@]}" \
    --isolated-child 7 --isolated-report "$TMP/victim.txt" && contains "says why" "not a new file in a private folder"
check "--isolated-report in a shared folder refused" 2 "${T[@]}" "$S" compare "${H[@]}" \
    --isolated-child 7 --isolated-report /tmp/sagerun-test-$$.json
exec 7<&-
[ "$(cat victim.txt)" = precious ] || fail "--isolated-report replaced a file" "$(head -c 200 victim.txt)"
[ -e /tmp/sagerun-test-$$.json ] && fail "--isolated-report wrote into /tmp"
check "--isolated-skip alone refused" 2 "${T[@]}" "$S" compare "${H[@]}" --isolated-skip $'a\tb\tc'
finish
