#!/usr/bin/env bash
# Python variants end to end on the host backend (no GPU): .py files declaring variants, run by
# sagerun's Python bridge in an interpreter found at run time (SAGERUN_PYTHON), compared against
# `reference`: byte-exact where they compute the same thing, judged by tolerance where they do
# not, and every way of failing (bad declarations, a syntax error, an exception, a wrong output,
# a crash, a hang, no libpython) reported with its reason while the others are measured.
set -u
source "$(dirname "$0")/lib.sh"
PY=${SAGERUN_TEST_PYTHON:-/usr/bin/python3}
EX=$ROOT/examples/python/numpy_attention.py
T=$ROOT/test/python
export SAGERUN_PYTHON=$PY

# ---- the CUDA side, without a GPU: sagerun.py and the CUDA examples against a stand-in torch ----
if "$PY" -c pass 2>/dev/null; then
    check "the CUDA paths against a stand-in torch (test/python/test_cuda_paths.py)" 0 \
        "$PY" "$T/test_cuda_paths.py"
fi

if ! "$S" list --backend host 2>/dev/null | grep -q '^  reference '; then
    echo "SKIP: the reference variant (plugins/reference.so) is not built"; exit 0
fi
if "$S" list --backend host --plugin "$EX" 2>&1 | grep -q "need sagerun's Python bridge"; then
    echo "SKIP: sagerun's Python bridge is not built (no Python headers: python3-dev)"; exit 0
fi
if ! "$PY" -c 'import numpy' 2>/dev/null; then
    echo "SKIP: $PY has no numpy (python3-numpy)"; exit 0
fi
HOST=(--backend host --shape 1,64,2,64 --quiet --schedule fixed --rounds 2 --iterations 1 --warmup 0)
# A sanitizer build reports a SIGSEGV itself (test_faults.sh says so too).
SEGV="crashed: SIGSEGV"
nm "$S" 2>/dev/null | grep -q '__asan_init\|__tsan_init' && SEGV="a sanitizer report"
sha() { sha256sum "$1" | cut -d' ' -f1; }

# ---- declarations: list shows the variants, with the .py file's path and hash ----
check "list the example" 0 "$S" list --backend host --plugin "$EX"
contains "numpy-reference listed" "numpy-reference      py       host"
contains "its description" "numpy: exact attention in float64"
contains "the .py file is its path" "path $EX"
contains "and its SHA-256" "sha256 $(sha "$EX")"
check "list the test files" 0 "$S" list --backend host --plugin "$T"
for want in "line 3: unknown key 'colour'" "line 4: missing run=FUNCTION" \
    "line 5: missing backend=host|cuda" "line 6: backend=gpu: expected host or cuda" \
    "line 7: 'Bad_Name' is not a variant name" "line 8: run=not-a-name: not a Python function name" \
    "line 9: param=block:int:64: expected KEY:int|float:DEFAULT:MIN:MAX" \
    "line 10: unterminated quote" "line 11: run= given twice" \
    "line 12: extension=\$SAGERUN_TEST_UNSET_EXTENSION: SAGERUN_TEST_UNSET_EXTENSION is not set" \
    "line 13: variant \"py-good\" is declared twice in this file (first on line 2)" \
    "line 14: variant py-inverted: parameter block: its range [10, 1] is inverted"; do
    contains "refused: $want" "$want"
done
grep -q "no_declaration.py" <<<"$out" && fail "a folder's .py file without a declaration is rejected" "$out" \
    || echo "ok   a folder's .py file without a declaration is passed over (a module variants import)"
contains "a good line of a bad file loads" "py-good"
contains "a parameter's declaration" "param block int = 64 [16, 256]: rows per block"
contains "a bool parameter" "param exact bool = true"
contains "version and description" "py-lifecycle         2.5      host  -      hooks in order"
contains "graph=yes is the graph flag" "flags graph-capturable"
check "a .py file without a declaration, named" 0 "$S" list --backend host \
    --plugin "$T/no_declaration.py" && contains "is refused, saying why" \
    "no variant declared: a Python variant file has lines"
check "a missing .py file" 1 "$S" list --backend host --plugin "$TMP/none.py" \
    && contains "names it" "$TMP/none.py: No such file or directory"
# extension=$VAR/file and ${VAR}/file: the variable, then the rest of the path (${VAR}/x.so lost its
# /x.so and named the folder; $VAR/x.so took VAR/x.so for the variable's name)
mkdir -p "$TMP/extdir" && cp "$EX" "$TMP/extdir/x.so"
printf '%s\n' '# sagerun-variant: ext-braced run=f backend=host extension=${SAGERUN_TEST_EXTD}/x.so' \
    '# sagerun-variant: ext-bare run=f backend=host extension=$SAGERUN_TEST_EXTD/x.so' \
    '# sagerun-variant: ext-nameless run=f backend=host extension=$/x.so' \
    'def f(call):' '    call.o[...] = 0' > "$TMP/ext.py"
check "extension=\$VAR/file" 0 env SAGERUN_TEST_EXTD="$TMP/extdir" "$S" list --backend host --plugin "$TMP/ext.py"
[ "$(grep -c "extension $TMP/extdir/x.so" <<<"$out")" = 2 ] && echo "ok   ... both forms name the file" \
    || fail "extension=\$VAR/file: both forms name $TMP/extdir/x.so" "$out"
contains "a \$ without a name refused" 'line 3: extension=$/x.so: $ is not followed by a variable name'
# a UTF-8 byte order mark before the first line (Python reads past it): the file declared nothing
printf '\xef\xbb\xbf# sagerun-variant: py-bom run=f backend=host\ndef f(call):\n    call.o[...] = 0\n' > "$TMP/bom.py"
check "a .py file with a byte order mark" 0 "$S" list --backend host --plugin "$TMP/bom.py" \
    && contains "its variant" "py-bom "
cp "$EX" "$TMP/open.py" && chmod o+w "$TMP/open.py"
check "a .py file others can write" 0 "$S" list --backend host --plugin "$TMP/open.py" \
    && contains "refused as a plugin would be" "unsafe permissions"
rm -f "$TMP/open.py"

# ---- byte-exact where it computes the same thing ----
check "numpy-reference is byte-exact with reference: exit 0" 0 "$S" compare "${HOST[@]}" \
    --plugin "$EX" --baseline reference --variant numpy-reference --json "$TMP/exact.json" \
    --csv "$TMP/exact.csv"
py "report: byte-exact, the .py file's path and hash, accepted by bytes" '
import json, sys
r = json.load(open(sys.argv[1]))
v = {x["label"]: x for x in r["variants"]}["numpy-reference"]
assert v["byte_exact"] is True and v["output_sha256"] == r["reference_output_sha256"], v
assert v["path"] == sys.argv[2] and v["plugin_sha256"] == sys.argv[3], (v["path"], v["plugin_sha256"])
assert v["version"] == "py" and v["backend"] == "host" and v["extension_module"] is None
assert v["accepted_by"] == "bytes" and v["tolerance"] is None and v["failure"] is None
assert v["timing"]["count"] == 2 and v["scheduler"] is None
' "$TMP/exact.json" "$EX" "$(sha "$EX")"
py "csv: accepted_by" '
import csv, sys
rows = {r["variant"]: r for r in csv.DictReader(open(sys.argv[1]))}
assert rows["numpy-reference"]["accepted_by"] == "bytes", rows
' "$TMP/exact.csv"
check "in-process as well" 0 "$S" compare "${HOST[@]}" --in-process --plugin "$EX" \
    --baseline reference --variant numpy-reference
check "pinned to the .py file's hash" 0 "$S" compare "${HOST[@]}" --plugin "$EX" \
    --baseline reference --variant numpy-reference \
    --expect-plugin-sha256 "numpy-reference=$(sha "$EX")"
check "pinned to another hash: refused" 1 "$S" compare "${HOST[@]}" --plugin "$EX" \
    --baseline reference --variant numpy-reference \
    --expect-plugin-sha256 "numpy-reference=$(printf '0%.0s' $(seq 64))" \
    && contains "says so" "pinned plugin numpy-reference"
check "sagerun run" 0 "$S" run --variant numpy-reference --plugin "$EX" --backend host \
    --shape 1,64,2,64 --iterations 1 --warmup 0
REF_SHA=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["reference_output_sha256"])' "$TMP/exact.json")
contains "the reference's bytes" "$REF_SHA"
check "sagerun profile" 0 "$S" profile --variant numpy-reference --plugin "$EX" --backend host \
    --shape 1,64,2,64 && contains "the reference's bytes" "output_sha256 $REF_SHA"

# ---- ABI 1.2: what a variant declares (features=, dtypes=, head_dims=) ----
printf '%s\n' '# sagerun-variant: py-feat run=f backend=host features=kv_len,causal-top-left,causal-bottom-right,window,softcap,varlen,paged dtypes=fp16 head_dims=64,128' \
    '# sagerun-variant: py-feat-bad run=f backend=host features=kv_len,sparkle' \
    '# sagerun-variant: py-dtype-bad run=f backend=host dtypes=fp16,fp8' \
    '# sagerun-variant: py-dims-empty run=f backend=host head_dims=64,,128' \
    '# sagerun-variant: py-dims-bad run=f backend=host head_dims=0' \
    '# sagerun-variant: py-d128 run=f backend=host head_dims=128' \
    'def f(call):' '    call.o[...] = 0' > "$TMP/feat.py"
check "a declaration with features, dtypes and head_dims" 0 "$S" list --backend host \
    --plugin "$TMP/feat.py"
contains "is accepted" "py-feat              py       host"
for want in "line 2: features=: unknown feature 'sparkle' (known: kv_len, causal-top-left" \
    "line 3: dtypes=: unknown dtype 'fp8' (known: fp16, bf16)" \
    "line 4: head_dims=64,,128: an empty entry" "line 5: head_dims=: '0' is not a head dim"; do
    contains "refused: $want" "$want"
done
check "head_dims=128: a D=64 problem refused" 1 "$S" run --backend host --shape 1,64,2,64 \
    --plugin "$TMP/feat.py" --variant py-d128 --warmup 0 --iterations 1 \
    && contains "naming the head dim" "variant py-d128 does not declare head_dim 64"
check "dtypes=fp16: a bf16 problem refused" 1 "$S" run --backend host --shape 1,64,2,64 \
    --dtype bf16 --plugin "$EX" --variant numpy-reference --warmup 0 --iterations 1 \
    && contains "naming the dtype" "variant numpy-reference does not declare dtype bf16"
check "no features declared: a --kv-len problem refused" 1 "$S" run --backend host \
    --shape 1,64,2,64 --kv-len 96 --plugin "$EX" --variant numpy-f32 --warmup 0 --iterations 1 \
    && contains "naming the feature" "variant numpy-f32 does not declare kv_len != q_len"
check "... and a bottom-right causal one" 1 "$S" run --backend host --shape 1,64,2,64 \
    --kv-len 96 --causal=bottom-right --plugin "$TMP/feat.py" --variant py-d128 --warmup 0 \
    --iterations 1 && contains "naming the feature" "does not declare kv_len != q_len"
# numpy-reference declares every feature sagerun states: byte-exact with reference on each
for problem in "--kv-len 96" "--kv-len 40 --causal=bottom-right" "--kv-len 96 --causal=top-left" \
    "--kv-len 96 --causal=bottom-right --window 8,0" "--window 5,3" "--softcap 2.5 --causal" \
    "--kv-len 96 --window 8,4 --align bottom-right" \
    "--varlen 10,33,1" "--varlen 5:40,30:7,12:1 --causal=bottom-right" \
    "--kv-len 100 --page-size 16 --causal=bottom-right" \
    "--varlen 5:40,30:7,2:2 --page-size 8 --causal=bottom-right --window 4,-1 --softcap 3"; do
    # shellcheck disable=SC2086
    check "numpy-reference byte-exact with reference: $problem" 0 "$S" compare --backend host \
        --shape 3,48,4,2,64 $problem --quiet --schedule fixed --rounds 2 --iterations 1 \
        --warmup 0 --plugin "$EX" --baseline reference --variant numpy-reference
done
# what a host variant sees of a varlen, a paged and a kv_len problem
cat > "$TMP/seq.py" <<'PY'
# sagerun-variant: py-seq run=run backend=host features=kv_len,varlen,paged,causal-bottom-right,window
import os
import numpy as np

def run(call):
    p, want = call.problem, os.environ["SAGERUN_TEST_SEQ"]
    seen = {"cu_q": call.cu_seqlens_q, "cu_kv": call.cu_seqlens_kv, "table": call.block_table}
    for key, value in seen.items():
        assert value is None or (value.dtype == np.int32 and not value.flags.writeable), key
    if want == "varlen":
        assert p.varlen and (p.total_q, p.total_kv) == (47, 59), p
        assert call.cu_seqlens_q.tolist() == [0, 5, 35, 47], call.cu_seqlens_q
        assert call.cu_seqlens_kv.tolist() == [0, 40, 47, 59], call.cu_seqlens_kv
        assert call.q.shape == call.o.shape == (47, 4, 64) and call.k.shape == (59, 2, 64)
        assert call.block_table is None and p.align == "bottom-right" and p.causal
    elif want == "paged":
        assert (p.page_size, p.kv_len) == (16, 100) and p.pages_per_seq >= 7, p
        assert call.k.shape == call.v.shape == (p.pages, 16, 2, 64), call.k.shape
        assert call.block_table.shape == (3, p.pages_per_seq) and call.cu_seqlens_q is None
        used = call.block_table[:, :7].ravel().tolist()  # no page used twice
        assert len(used) == len(set(used)) and all(0 <= x < p.pages for x in used), used
    else:
        assert not p.varlen and p.kv_len == 96 and p.window == (8, 0) and p.softcap == 0.0, p
        assert call.k.shape == (3, 96, 2, 64) and call.q.shape == (3, 48, 4, 64)
        assert all(v is None for v in seen.values()), seen
    call.o[...] = 0
PY
SEQ=(run --backend host --shape 3,48,4,2,64 --plugin "$TMP/seq.py" --variant py-seq --warmup 0
     --iterations 1)
check "a varlen problem: cu_seqlens and packed shapes seen" 0 env SAGERUN_TEST_SEQ=varlen \
    "$S" "${SEQ[@]}" --varlen 5:40,30:7,12:12 --causal=bottom-right
check "a paged problem: the block table and the page cache seen" 0 env SAGERUN_TEST_SEQ=paged \
    "$S" "${SEQ[@]}" --kv-len 100 --page-size 16
check "a kv_len problem: kv_len rows of K, no sequences" 0 env SAGERUN_TEST_SEQ=dense \
    "$S" "${SEQ[@]}" --kv-len 96 --window 8,0 --causal=bottom-right
check "... and a wrong expectation fails (the checks can fail)" 1 env SAGERUN_TEST_SEQ=paged \
    "$S" "${SEQ[@]}" --varlen 5:40,30:7,12:12 --causal=bottom-right

# ---- judged by tolerance where it does not ----
F32=(--plugin "$EX" --baseline reference --variant numpy-reference --variant numpy-f32)
check "numpy-f32 is not byte-exact: exit 3" 3 "$S" compare "${HOST[@]}" "${F32[@]}" \
    && contains "says how many elements" "NO (" 
check "within --min-cos for it: exit 0" 0 "$S" compare "${HOST[@]}" "${F32[@]}" \
    --min-cos numpy-f32=0.9999 --max-rel-l1 0.01 --json "$TMP/tol.json" --csv "$TMP/tol.csv"
contains "the table says tol. ok" "tol. ok"
contains "the note says what was compared" "numpy-f32 is within the tolerance: cosine"
py "report: judged by tolerance, passed, the limits" '
import json, sys
r = json.load(open(sys.argv[1]))
v = {x["label"]: x for x in r["variants"]}
f, e = v["numpy-f32"], v["numpy-reference"]
assert f["byte_exact"] is False and f["accepted_by"] == "tolerance", f
t = f["tolerance"]
assert t["min_cosine"] == 0.9999 and t["max_relative_l1"] == 0.01 and t["max_ulp"] is None, t
assert t["judged"] is True and t["passed"] is True and "cosine" in t["detail"], t
assert e["accepted_by"] == "bytes" and e["tolerance"]["judged"] is False, e["tolerance"]
' "$TMP/tol.json"
check "sagerun show reads it back" 0 "$S" show "$TMP/tol.json" && contains "table" "tol. ok"
check "beyond --max-ulp 0 for it: exit 3" 3 "$S" compare "${HOST[@]}" "${F32[@]}" \
    --max-ulp numpy-f32=0 --json "$TMP/tolfail.json"
contains "the table says tol. FAIL" "tol. FAIL"
contains "the note says why" "numpy-f32 FAILS the tolerance: max 1 ulp (limit 0)"
py "report: failed by tolerance" '
import json, sys
v = {x["label"]: x for x in json.load(open(sys.argv[1]))["variants"]}["numpy-f32"]
assert v["accepted_by"] is None and v["tolerance"]["passed"] is False, v["tolerance"]
assert v["byte_diff"]["max_ulp"] >= 1
' "$TMP/tolfail.json"
check "a general limit, met: exit 0" 0 "$S" compare "${HOST[@]}" "${F32[@]}" --max-ulp 2
check "the variant's own limit wins: exit 3" 3 "$S" compare "${HOST[@]}" "${F32[@]}" \
    --max-ulp 2 --max-ulp numpy-f32=0
check "a limit for no variant: a warning" 3 "$S" compare "${HOST[@]}" "${F32[@]}" \
    --min-cos nosuch=0.5 && contains "warns" "--min-cos nosuch=0.5: no variant nosuch"
check "--min-cos 2: usage" 2 "$S" compare "${HOST[@]}" "${F32[@]}" --min-cos 2 \
    && contains "names it" "--min-cos '2': expected [LABEL=]VALUE"
check "--max-ulp 1.5: usage" 2 "$S" compare "${HOST[@]}" --max-ulp 1.5
check "--max-rel-l1 x=: usage" 2 "$S" compare "${HOST[@]}" --max-rel-l1 x=
check "--max-rel-l1 =0.1: usage" 2 "$S" compare "${HOST[@]}" --max-rel-l1 =0.1 \
    && contains "says why" "the label is empty"
check "--min-cos with --no-accuracy: usage" 2 "$S" compare "${HOST[@]}" --min-cos 0.9 --no-accuracy

# ---- failures: each variant alone, with its reason; the others measured ----
FAULTS=(py-raises py-create-raises py-unsupported py-missing-function py-wrong-shape py-wrong-dtype
        py-returns-int py-writes-q py-crash py-prints py-syntax)
args=(); for v in "${FAULTS[@]}"; do args+=(--variant "$v"); done
check "a compare of faulty variants: exit 1" 1 "$S" compare "${HOST[@]}" --plugin "$T" \
    --plugin "$EX" --baseline reference --variant numpy-reference "${args[@]}" \
    --json "$TMP/faults.json"
# an exception names the variant's file and line (only a syntax error's did)
for want in "py-raises failed: checked run: variant py-raises: run failed (SAGERUN_VARIANT): ValueError: bad thing in run (at $T/faults.py:27, in raises)" \
    "py-create-raises failed: create: variant py-create-raises: create failed (SAGERUN_VARIANT): RuntimeError: no GPU handle for py-create-raises" \
    "create failed (SAGERUN_UNSUPPORTED): Unsupported: head_dim 64 is not done here" \
    "AttributeError: $T/faults.py has no function nowhere() (declared by run=nowhere on line 6)" \
    "ValueError: run returned shape (1, 2, 3), o has shape (1, 64, 2, 64)" \
    "TypeError: run returned float32, o is float16 (sagerun does not convert)" \
    "TypeError: run returned int: expected None" \
    "py-writes-q failed: checked run: variant py-writes-q: run failed (SAGERUN_VARIANT): ValueError: assignment destination is read-only" \
    "py-crash failed: checked run: $SEGV" \
    "py-syntax failed: create: variant py-syntax: create failed (SAGERUN_VARIANT): SyntaxError:"; do
    contains "reported: ${want:0:60}" "$want"
done
py "report: the good variants measured, each faulty one failed alone" '
import json, sys
v = {x["label"]: x for x in json.load(open(sys.argv[1]))["variants"]}
assert v["numpy-reference"]["byte_exact"] is True and v["numpy-reference"]["timing"]["count"] == 2
assert v["py-prints"]["failure"] is None and v["py-prints"]["timing"]["count"] == 2
bad = [k for k in v if k not in ("reference", "numpy-reference", "py-prints")]
assert len(bad) == 10 and all(v[k]["failure"] for k in bad), {k: v[k]["failure"] for k in v}
assert v["py-crash"]["failure_phase"] == "check" and v["py-raises"]["failure_phase"] == "check"
assert v["py-create-raises"]["failure_phase"] == "create"
assert "line 3" in v["py-syntax"]["failure"], v["py-syntax"]["failure"]
' "$TMP/faults.json"
out=$("$S" compare "${HOST[@]}" --plugin "$T" --baseline reference --variant py-prints 2>/dev/null)
grep -q PRINTED-BY-PYTHON <<<"$out" && fail "a Python print went to stdout" "$out" \
    || echo "ok   a Python print goes to stderr, not into sagerun's output"
check "a hang: the watchdog" 1 "$S" compare "${HOST[@]}" --plugin "$T" --baseline reference \
    --variant numpy-reference --plugin "$EX" --variant py-hang --timeout 1 \
    && contains "says it hung" "py-hang failed: checked run: timeout: no answer within 1 s"
check "an exception in-process" 1 "$S" compare "${HOST[@]}" --in-process --plugin "$T" \
    --baseline reference --variant py-raises && contains "its message" "ValueError: bad thing in run"
check "SAGERUN_DEBUG: the traceback" 1 env SAGERUN_DEBUG=1 "$S" compare "${HOST[@]}" \
    --plugin "$T" --baseline reference --variant py-raises
contains "a traceback" "Traceback (most recent call last)"
contains "naming the file and line" "faults.py\", line 27, in raises"
contains "the interpreter used" "python: $($PY -c 'import sys; print(sys.executable)')"

# ---- hooks, parameters, sage2 tensors, extension modules ----
check "hooks run in order, parameters arrive typed, sage2 tensors are shaped" 3 "$S" compare \
    "${HOST[@]}" --plugin "$T/lifecycle.py" --baseline reference --variant py-lifecycle \
    --variant 'py-params[block=128,scale=1.5,exact=0]' --variant py-sage2 --json "$TMP/life.json"
py "each of them ran" '
import json, sys
v = {x["label"]: x for x in json.load(open(sys.argv[1]))["variants"]}
assert set(v) == {"reference", "py-lifecycle", "py-params[block=128,scale=1.5,exact=false]", "py-sage2"}, set(v)
for k, x in v.items():
    assert x["failure"] is None and x["timing"]["count"] == 2, (k, x["failure"])
' "$TMP/life.json"
check "a parameter out of range" 1 "$S" compare "${HOST[@]}" --plugin "$T/lifecycle.py" \
    --baseline reference --variant 'py-params[block=1024]' && contains "names the key" "block"
echo "not an extension module, a file to hash" > "$TMP/ext.bin"
check "an extension module: listed with its hash" 0 env SAGERUN_TEST_EXTENSION="$TMP/ext.bin" \
    "$S" list --backend host --plugin "$T/extension.py"
contains "its path" "extension $TMP/ext.bin"
contains "its hash" "sha256 $(sha "$TMP/ext.bin")"
check "an extension module: in the report" 3 env SAGERUN_TEST_EXTENSION="$TMP/ext.bin" \
    "$S" compare "${HOST[@]}" --plugin "$T/extension.py" --baseline reference --variant py-ext \
    --json "$TMP/ext.json"
py "report: extension_module" '
import json, sys
v = {x["label"]: x for x in json.load(open(sys.argv[1]))["variants"]}["py-ext"]
assert v["failure"] is None, v["failure"]
assert v["extension_module"] == {"path": sys.argv[2], "sha256": sys.argv[3]}, v["extension_module"]
' "$TMP/ext.json" "$TMP/ext.bin" "$(sha "$TMP/ext.bin")"
check "an extension module that is not there" 0 env SAGERUN_TEST_EXTENSION="$TMP/none.so" \
    "$S" list --backend host --plugin "$T/extension.py" \
    && contains "refused, naming it" "extension=\${SAGERUN_TEST_EXTENSION}: $TMP/none.so: No such file or directory"

# ---- the interpreter: a setting, and clear errors without one ----
fake() { # fake NAME FIELD...: an "interpreter" answering the bridge's question with these fields
    printf '%s\0' "${@:2}" > "$TMP/$1.answer"
    printf '#!/bin/sh\ncat "%s"\n' "$TMP/$1.answer" > "$TMP/$1" && chmod +x "$TMP/$1"
}
NR=(compare "${HOST[@]}" --plugin "$EX" --baseline reference --variant numpy-reference)
check "SAGERUN_PYTHON names no program" 1 env SAGERUN_PYTHON="$TMP/nopython" "$S" "${NR[@]}" \
    && contains "says so" "the Python interpreter '$TMP/nopython' (SAGERUN_PYTHON) could not be run"
fake missing-lib /fake/python3 50987248 "$TMP/libpython3.10.so.1.0" /tmp
check "its libpython is missing" 1 env SAGERUN_PYTHON="$TMP/missing-lib" "$S" "${NR[@]}" \
    && contains "names the file" "cannot load libpython of /fake/python3 (SAGERUN_PYTHON): $TMP/libpython3.10.so.1.0"
fake static /fake/python3 50987248 "" /tmp
check "an interpreter without a shared libpython" 1 env SAGERUN_PYTHON="$TMP/static" "$S" "${NR[@]}" \
    && contains "says so" "has no shared libpython"
fake old /fake/python3.8 50856176 /usr/lib/libpython3.8.so.1.0 /tmp
check "a Python older than 3.9" 1 env SAGERUN_PYTHON="$TMP/old" "$S" "${NR[@]}" \
    && contains "says so" "is 3.8.0; sagerun's Python bridge needs 3.9.0 or newer"
printf '#!/bin/sh\nexit 3\n' > "$TMP/broken" && chmod +x "$TMP/broken"
check "an interpreter that fails" 1 env SAGERUN_PYTHON="$TMP/broken" "$S" "${NR[@]}" \
    && contains "says so" "failed when asked for its libpython and sys.path"
check "the reference still ran" 1 env SAGERUN_PYTHON="$TMP/broken" "$S" "${NR[@]}" --json "$TMP/nopy.json"
py "report: reference measured, the Python variant failed in create" '
import json, sys
v = {x["label"]: x for x in json.load(open(sys.argv[1]))["variants"]}
assert v["reference"]["timing"]["count"] == 2 and v["numpy-reference"]["failure_phase"] == "create"
' "$TMP/nopy.json"
check "no bridge" 0 env SAGERUN_PYTHON_BRIDGE="$TMP/none/bridge.so" "$S" list --backend host \
    --plugin "$EX" && contains "says what is missing" "Python variants need sagerun's Python bridge $TMP/none/bridge.so"

# ---- a virtual environment's packages: the venv's interpreter decides ----
if "$PY" -m venv --without-pip --system-site-packages "$TMP/venv" 2>/dev/null; then
    site=$("$TMP/venv/bin/python3" -c 'import site; print(site.getsitepackages()[0])')
    echo 'TOKEN = "from the venv"' > "$site/sagerun_venv_probe.py"
    export SAGERUN_TEST_VENV=$TMP/venv
    VP=(compare "${HOST[@]}" --plugin "$T/venv_probe.py" --baseline reference --variant py-venv
        --json "$TMP/venv.json")
    check "SAGERUN_PYTHON=the venv's python: its packages import" 3 \
        env SAGERUN_PYTHON="$TMP/venv/bin/python3" "$S" "${VP[@]}"
    py "py-venv ran" 'import json, sys
v = {x["label"]: x for x in json.load(open(sys.argv[1]))["variants"]}["py-venv"]
assert v["failure"] is None and v["timing"]["count"] == 2, v["failure"]' "$TMP/venv.json"
    check "VIRTUAL_ENV alone picks the venv" 3 env -u SAGERUN_PYTHON VIRTUAL_ENV="$TMP/venv" \
        "$S" "${VP[@]}"
    check "another interpreter: the venv's module is missing" 1 "$S" "${VP[@]}" \
        && contains "says which" "ModuleNotFoundError: No module named 'sagerun_venv_probe'"
else
    echo "SKIP: $PY -m venv does not work here: the venv cases"
fi

# ---- os._exit in a variant: run exited 0 with no output (a script took it as a success) ----
printf '# sagerun-variant: exits run=run backend=host\nimport os\ndef run(call):\n    os._exit(0)\n' > "$TMP/exits.py"
check "run: a variant calling os._exit(0) fails" 1 "$S" run --backend host --shape 1,64,2,64 --plugin "$TMP/exits.py" \
    --variant exits --warmup 0 --iterations 1 && contains "says why" "os._exit(0) in a variant"
printf '# sagerun-variant: forks run=run backend=host\nimport os\ndef run(call):\n    pid = os.fork()\n    if pid == 0:\n        os._exit(3)\n    _, status = os.waitpid(pid, 0)\n    assert os.waitstatus_to_exitcode(status) == 3, status\n    call.o[...] = call.v[...]\n' > "$TMP/forks.py"
check "... a child it forks still exits with os._exit" 0 "$S" run --backend host --shape 1,64,2,64 --plugin "$TMP/forks.py" \
    --variant forks --warmup 0 --iterations 1

# ---- a sweep runs Python variants like any other ----
check "sweep" 0 "$S" sweep "$ROOT/test/data/sweep-host.json" --backend host --quiet \
    --plugin "$EX" --variant numpy-reference --out-dir "$TMP/sweep"
py "every point has numpy-reference, byte-exact" '
import glob, json, sys
files = [f for f in glob.glob(sys.argv[1] + "/*.json") if not f.endswith("summary.json")]
assert len(files) == 3, files
for f in files:
    v = {x["label"]: x for x in json.load(open(f))["variants"]}
    assert v["numpy-reference"]["byte_exact"] is True, (f, v["numpy-reference"]["failure"])
' "$TMP/sweep"
finish
