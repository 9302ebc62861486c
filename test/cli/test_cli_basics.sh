#!/usr/bin/env bash
# CLI smoke tests: help, version, list, run, exit codes for bad usage.
set -u
source "$(dirname "$0")/lib.sh"

check "help" 0 "$S" --help && contains "help lists compare" "compare" && contains "help has exit codes" "exit codes"
check "no args is usage" 2 "$S"
check "unknown command" 2 "$S" frobnicate && contains "unknown command named" "unknown command 'frobnicate'"
check "version" 0 "$S" --version && contains "version string" "sagerun 0.1.0"
for cmd in list run compare workload show diff; do
    check "$cmd --help" 0 "$S" "$cmd" --help && contains "$cmd --help usage" "usage: sagerun $cmd"
done

check "list" 0 env SAGERUN_PLUGIN_PATH="$FAKES" "$S" list --backend host
contains "list shows reference" "reference"
contains "list shows a path and sha256" "sha256 "
contains "list shows ABI rejection" "ABI mismatch"
contains "list shows missing entry" "no entry point [sagerun_plugin_entry]"
contains "list shows duplicate" "duplicate variant name"
contains "list shows init failure" "init failed"

check "run reference" 0 "$S" run --variant reference --shape 1,256,2,128 --iterations 1 --warmup 0
contains "run prints a time" "run_p50_s"
# times to the nanosecond, as profile's call_s (microsecond calls read 0.000009, one digit)
grep -Eq "^prepare_s +[0-9]+\.[0-9]{9}$" <<<"$out" && grep -Eq "^run_p50_s +[0-9]+\.[0-9]{9} \(min [0-9]+\.[0-9]{9}, max [0-9]+\.[0-9]{9}, 1 runs\)$" <<<"$out" \
    && echo "ok   run: times in seconds to 9 decimals" || fail "run: times to 9 decimals" "$out"
h1=$(grep output_sha256 <<<"$out")
check "run reference again" 0 "$S" run --variant reference --shape 1,256,2,128 --iterations 1 --warmup 0
h2=$(grep output_sha256 <<<"$out")
if [ -z "$h1" ] || [ "$h1" != "$h2" ]; then echo "FAIL same hash twice: '$h1' vs '$h2'"; fails=$((fails+1)); else echo "ok   same hash twice"; fi
check "run --seed with trailing junk is usage" 2 "$S" run --variant reference --seed 7x && contains "bad seed named" "--seed '7x'"
check "run --seed out of range is usage" 2 "$S" run --variant reference --seed 99999999999999999999999
check "run another seed differs" 0 "$S" run --variant reference --shape 1,256,2,128 --iterations 1 --warmup 0 --seed 7
h3=$(grep output_sha256 <<<"$out")
if [ "$h1" = "$h3" ]; then echo "FAIL seed changes the output"; fails=$((fails+1)); else echo "ok   seed changes the output"; fi

check "run without variant" 2 "$S" run && contains "names the option" "--variant NAME is required"
check "run bad shape" 2 "$S" run --variant reference --shape 1,x,2 && contains "names the shape" "--shape '1,x,2'"
for cmd in list "run --variant reference" "profile --variant reference"; do # usage errors: exit 2
    check "$cmd --backend bogus is usage" 2 "$S" $cmd --backend bogus && contains "names it" "--backend 'bogus'"
done
check "compare --batch above the most calls per sample is usage" 2 "$S" compare --backend host --batch 10001 \
    && contains "says the limit" "--batch 10001: at most 10000 calls per sample"
check "--expect-plugin-sha256 with 64 non-hex digits is usage" 2 "$S" list \
    --expect-plugin-sha256 "reference=$(printf 'z%.0s' {1..64})" && contains "says hex" "64 hex digits"
check "compare --rounds above the limit names the range" 2 "$S" compare --backend host --rounds 100000001 \
    && contains "says the range" "expected an integer from 1 to 100000000"
for v in abc 0 99999; do # a bad scan timeout was the default (10 s) in silence
    check "SAGERUN_PLUGIN_SCAN_TIMEOUT=$v is usage" 2 env SAGERUN_PLUGIN_SCAN_TIMEOUT=$v "$S" list --backend host \
        && contains "names it and the range" "SAGERUN_PLUGIN_SCAN_TIMEOUT '$v': expected seconds, more than 0 and at most 3600"
done
for v in 0x10 1e +5 inf; do # seconds are decimals (1e3 and .5 are; strtod also took these)
    check "compare --max-time $v is usage" 2 "$S" compare --backend host --max-time $v \
        && contains "names it" "--max-time '$v': expected a decimal number"
done
check "compare --workload '' is usage" 2 "$S" compare --backend host --workload '' \
    && contains "names the option" "compare: --workload: an empty path"
# an empty output or plugin path is a usage error, as --workload '' and --out-dir '' are (they
# exited 1, as for a file that cannot be written), named before any work
for c in "compare --json" "compare --markdown" "compare --plugin" "run --variant=x --save-output" \
    "run --plugin" "list --plugin" "profile --plugin" "diff a.json b.json --csv" \
    "plot r.json -o" "sweep s.json --csv"; do
    opt=${c##* }
    check "$c '' is usage" 2 "$S" $c '' && contains "$c '': named" "${c%% *}: $opt: an empty path"
done
# options that would be ignored are refused (they were ignored in silence)
check "compare --timer event --batch 3 is usage" 2 "$S" compare --backend host --timer event --batch 3 \
    && contains "says why" "an event sample is one call"
for opt in "--warmup 7" "--rounds 2" "--iterations 2" "--batch 3"; do
    check "compare --schedule seed $opt is usage" 2 "$S" compare --backend host --schedule seed $opt \
        && contains "says why" "--schedule seed times the seed's way"
done
for bad in 1,64,2,1,64,999 1,64,2,1,64, 1,64,2,1,64,x; do # nothing after the fifth size
    check "run --shape $bad is usage" 2 "$S" run --variant reference --backend host --shape $bad \
        && contains "names the shape" "--shape '$bad'"
done
check "run bad iterations" 2 "$S" run --variant reference --iterations 0
check "run unknown variant" 1 "$S" run --variant nosuch --backend host && contains "names the variant" "no variant named 'nosuch'"
check "run shape too large" 2 "$S" run --variant reference --shape 99999999999,64,2,64 \
    && contains "says the range" "every size from 1 to 4294967295"
check "run bad GQA shape" 2 "$S" run --variant reference --shape 1,16,3,2,64 && contains "names the heads" "Hq=3 is not a multiple of Hkv=2"
if [ -n "$NO_CUDA_BUILD" ]; then
    echo "SKIP: run CUDA variant on host: this build has no CUDA plugins"
else
    check "run CUDA variant on host" 1 "$S" run --variant baseline --backend host --shape 1,64,1,128 && contains "needs CUDA" "needs a CUDA device"
    # compare refuses it before anything runs (it failed at its create after the others were
    # measured, for the whole --max-time)
    t0=$SECONDS
    check "compare: a CUDA variant named on the host" 1 "$S" compare --backend host \
        --shape 1,64,2,64 --variant reference-mt --variant baseline --max-time 5 \
        --json "$TMP/cuda-on-host.json"
    contains "... named, nothing measured" "variant baseline needs a CUDA device"
    [ $((SECONDS - t0)) -lt 3 ] && [ ! -e "$TMP/cuda-on-host.json" ] \
        && echo "ok   ... at once, no report" || fail "compare: a CUDA variant on the host took $((SECONDS - t0)) s"
fi
check "missing --plugin file" 1 "$S" list --plugin /nonexistent.so && contains "names the file" "/nonexistent.so"

# A workload file's shape must agree with its input file; --layout re-reads a file's axes.
TINY=$ROOT/test/data/tiny_qkv.safetensors
printf '{"shape": [2, 999, 8, 128], "input": {"source": "safetensors", "path": "%s"}}' "$TINY" > "$TMP/wl.json"
check "workload shape differs from its file" 1 "$S" run --variant reference --workload "$TMP/wl.json" \
    && contains "names both shapes" "declares [B=2, N=999, Hq=8, D=128]" && contains "names the file" "tiny_qkv.safetensors holds [B=1, N=16, Hq=2, D=8]"
check "inputs read as NHD" 0 "$S" run --variant reference --inputs "$TINY" --iterations 1 --warmup 0 \
    && contains "NHD shape" "[1, 16, 2, 8] Hkv 2 NHD"
# the same tensors without the __metadata__ that names their layout: --layout says how to read them
python3 -c '
import json, struct, sys
b = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n]); h.pop("__metadata__", None); t = json.dumps(h).encode()
t += b" " * (-len(t) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(t)) + t + b[8 + n:])' "$TINY" "$TMP/tiny_bare.safetensors"
check "inputs read as HND" 0 "$S" run --variant reference --inputs "$TMP/tiny_bare.safetensors" --layout hnd \
    --iterations 1 --warmup 0 && contains "HND shape" "[1, 2, 16, 8] Hkv 16 HND"
# as reports write it (only "hnd" was taken)
check "--layout HND" 0 "$S" run --variant reference --inputs "$TMP/tiny_bare.safetensors" --layout HND \
    --iterations 1 --warmup 0 && contains "--layout HND: read as HND" "[1, 2, 16, 8] Hkv 16 HND"
# An HND file with fewer k/v heads than q heads (GQA), no layout in its metadata: --layout hnd
# says how to read it (before, the shapes were checked as NHD and the file refused).
python3 - "$TMP/gqa_hnd.safetensors" <<'PY'
import json, struct, sys
def tensor(shape):
    n = 1
    for x in shape:
        n *= x
    return shape, struct.pack("<%dH" % n, *[0x3c00 ^ (i * 7 % 251) for i in range(n)])
ts = [("q", tensor([1, 4, 40, 64])), ("k", tensor([1, 2, 40, 64])), ("v", tensor([1, 2, 40, 64]))]
hdr, off = {}, 0
for name, (shape, data) in ts:
    hdr[name] = {"dtype": "F16", "shape": shape, "data_offsets": [off, off + len(data)]}
    off += len(data)
h = json.dumps(hdr).encode()
h += b" " * (-len(h) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + b"".join(d for _, (_, d) in ts))
PY
check "HND GQA inputs read with --layout hnd" 0 "$S" run --variant reference --inputs "$TMP/gqa_hnd.safetensors" \
    --layout hnd --iterations 1 --warmup 0 && contains "HND GQA shape" "[1, 40, 4, 64] Hkv 2 HND"
# A workload naming no layout reads its file in the file's own: an HND file (N = H, so its shapes
# fit either way) was read as NHD, with its axes swapped, silently.
"$S" run --variant reference --backend host --shape 1,4,4,32 --layout hnd --save-inputs "$TMP/hnd.safetensors" \
    --iterations 1 > /dev/null
printf '{"shape": [1, 4, 4, 32], "input": {"source": "safetensors", "path": "hnd.safetensors"}}' > "$TMP/hnd_wl.json"
check "a workload without layout on an HND file" 0 "$S" workload show "$TMP/hnd_wl.json" && contains "says HND" '"layout": "HND"'
want=$("$S" run --variant reference --backend host --inputs "$TMP/hnd.safetensors" --iterations 1 | awk '/output_sha256/ {print $2}')
check "... runs as the file itself" 0 "$S" run --variant reference --backend host --workload "$TMP/hnd_wl.json" --iterations 1 \
    && contains "the same output" "output_sha256 $want"
printf '{"shape": [1, 4, 4, 32], "layout": "NHD", "input": {"source": "safetensors", "path": "hnd.safetensors"}}' > "$TMP/nhd_wl.json"
# ... and a layout given that the file contradicts is refused: the given word over the file's read
# an NHD file as HND (or an HND one as NHD), its axes swapped, silently
check "... a workload's layout that the file contradicts" 1 "$S" workload show "$TMP/nhd_wl.json" \
    && contains "says both" "hnd.safetensors: the layout given, NHD, is not the file's (its __metadata__ says HND)"
check "... --layout that the file contradicts" 1 "$S" run --variant reference --backend host \
    --inputs "$TMP/hnd.safetensors" --layout nhd --iterations 1 \
    && contains "says both" "the layout given, NHD, is not the file's (its __metadata__ says HND)"
check "... --layout that the file agrees with" 0 "$S" run --variant reference --backend host \
    --inputs "$TMP/hnd.safetensors" --layout hnd --iterations 1 && contains "the same output" "output_sha256 $want"
# An error quoting a file (a key, a tensor name) shows its bytes: a key with ESC sequences and a
# line break cleared the screen and forged a line of output
printf '{"shape":[1,16,2,32],"\\u001b[2J\\u001b[Hsagerun: ok\\n\\u001b[8m":1}' > "$TMP/esc.json"
check "an error quoting a hostile key" 1 "$S" workload show "$TMP/esc.json" && contains "shown escaped" "unknown key '\x1b[2J\x1b[Hsagerun: ok\x0a\x1b[8m'"
[[ "$out" == *$'\x1b'* ]] && fail "a control character of the file reached the terminal" "$(cat -v <<<"$out")"
python3 -c "import json,struct,sys;h=json.dumps({'q\x1b[2J':{'dtype':'X','shape':[1],'data_offsets':[0,2]}}).encode();open(sys.argv[1],'wb').write(struct.pack('<Q',len(h))+h+b'\0\0')" "$TMP/esc.safetensors"
check "an error quoting a hostile tensor name" 1 "$S" workload show "$TMP/esc.safetensors" && contains "shown escaped" 'q\x1b[2J'
[[ "$out" == *$'\x1b'* ]] && fail "a control character of the file reached the terminal" "$(cat -v <<<"$out")"
# A long --variant spec cut the message before its reason (the spec, then the library's message
# quoting the value again, in 512 bytes)
LL=fake-long-label-0123456789-0123456789-0123456789-0123456789-abc
check "a 400-digit parameter value" 1 "$S" run --backend host --shape 1,64,2,64 --plugin "$FAKES/fake_long_label.so" \
    --variant "$LL[rows_per_thread_tile=$(printf '9%.0s' {1..400})]" && contains "the reason survives" "is not an int"
# ... and a message that fills the buffer alone kept neither the option nor the reason's end
# ("sagerun: : xxx...xxx: File name too lo")
check "a 5000-byte --plugin path" 1 "$S" list --backend host --plugin "$(printf 'x%.0s' {1..5000})" \
    && contains "names the option" "--plugin: x" && contains "keeps the reason" "File name too long"
check "list --device must be a number" 2 "$S" list --device abc && contains "names the option" "--device 'abc'"

# Plugin policy: pins and unsafe permissions.
sha=$("$S" list --backend host --plugin "$FAKES/fake_good.so" | awk '/^  fake-good /{f=1} f && /sha256/{print $2; exit}')
check "pinned plugin, right hash" 0 "$S" list --backend host --plugin "$FAKES/fake_good.so" --expect-plugin-sha256 "fake-good=$sha"
bad=$(printf '%064d' 0)
check "pinned plugin, wrong hash" 1 "$S" list --backend host --plugin "$FAKES/fake_good.so" --expect-plugin-sha256 "fake-good=$bad" \
    && contains "names both hashes" "expected $bad"
check "bad pin syntax" 2 "$S" list --expect-plugin-sha256 nohash && contains "names the option" "NAME=HEX"
tmp=$(mktemp -d); cp "$FAKES/fake_good.so" "$tmp/"; chmod 0666 "$tmp/fake_good.so"
check "world-writable plugin listed as rejected" 0 "$S" list --backend host --plugin "$tmp" && contains "unsafe" "unsafe permissions"
check "allowed with the flag" 0 "$S" list --backend host --plugin "$tmp" --allow-unsafe-plugins && contains "loaded" "fake-good"
rm -rf "$tmp"

# a trailing -- ends the options: compare took the hidden options of its measuring child, added
# after it, for arguments ("unexpected argument '--isolated-child'", exit 2)
check "compare ... --" 0 "$S" compare --backend host --shape 1,32,1,32 --rounds 2 --iterations 1 \
    --warmup 0 --quiet --

# workload show --help is the help (it was a usage error); a file whose name is not UTF-8 names a
# workload that is (the name is JSON: "out of memory")
check "workload show --help" 0 "$S" workload show --help && contains "the usage" "usage: sagerun workload show"
printf '{"shape": [1, 32, 1, 32]}' > "$TMP/"$'\xff'".json"
check "workload show: a file name that is not UTF-8" 0 "$S" workload show "$TMP/"$'\xff'".json"
contains "the name escaped" '"name": "\\xff"'

check "--shape with Hq not a multiple of Hkv: usage, naming --shape" 2 "$S" compare --backend host \
    --shape 1,64,3,2,64 --quiet && contains "names the option" "--shape '1,64,3,2,64': Hq=3 is not a multiple of Hkv=2"

# getopt's refusals said "unknown option" for all of these
check "an option that takes no value given one" 2 "$S" compare --quiet=false && contains "says so" "option takes no value '--quiet=false'"
# --causal takes a value now (top-left, bottom-right): another one is refused, naming both
check "--causal=false" 2 "$S" compare --causal=false && contains "says so" "--causal='false': expected top-left or bottom-right"
check "compare --in-process --timeout is usage" 2 "$S" compare --backend host --in-process --timeout 1 \
    && contains "says why (it was ignored)" "--timeout needs the watched child"
check "list --plugin ''" 2 "$S" list --backend host --plugin '' && contains "names the option" "--plugin: an empty path"
grep -q registry_add_path <<<"$out" && fail "list --plugin '': the library's function named" "$out"
# ... also where the option's value is a letter (--markdown is 'm'): it was named "-m"
for c in "show --markdown=yes" "diff --relative=1" "merge --quiet=1" "run --in-process=1" "compare --help=1"; do
    check "$c: named as given" 2 "$S" $c && contains "$c: names it" "'${c#* }'"
done
check "an ambiguous prefix" 2 "$S" compare --in x && contains "says so" "ambiguous option (the start of several) '--in'"
check "an output path that is the next option" 2 "$S" compare --backend host --json --quiet
contains "says so" "--json '--quiet': an option where a file is needed"
[ ! -e ./--quiet ] && echo "ok   ... no file '--quiet'" || { fail "a file --quiet was written"; rm -f ./--quiet; }

finish
