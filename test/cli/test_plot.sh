#!/usr/bin/env bash
# sagerun plot end to end on the host backend (no GPU): a report of ours (with per-call samples)
# and the seed's (per-round summaries only) become valid SVG with one series per variant; bad
# inputs give exit 1 or 2 with a message naming the file.
set -u
source "$(dirname "$0")/lib.sh"
SEED=$ROOT/test/data/seed-report.json
valid_svg() { # valid_svg NAME FILE: well-formed XML (xmllint, the CI check; else python's parser)
    if command -v xmllint >/dev/null; then
        check "$1: xmllint --noout" 0 xmllint --noout "$2"
    else
        py "$1: well-formed XML (xmllint not installed: tools/install-deps.sh)" \
            'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$2"
    fi
}
# series FILE LABEL... : the drift panel has one series per variant, in report order
SERIES='
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == ns + "svg", root.tag
got = [g.get("data-variant") for g in root.iter(ns + "g") if g.get("class") == "series"]
assert got == sys.argv[2:], f"series {got}, expected {sys.argv[2:]}"
for cls in ("distribution", "series"):
    n = sum(1 for g in root.iter(ns + "g") if g.get("class") == cls)
    assert n == len(sys.argv) - 2, (cls, n)
'

if ! "$S" list --backend host 2>/dev/null | grep -q '^  reference-mt '; then
    echo "SKIP: the host variants (plugins/reference*.so) are not built"; exit 0
fi

# ---- a report of ours: every timed call is in it ----
check "compare writes a report" 0 "$S" compare --backend host --shape 1,64,2,64 --quiet \
    --baseline reference --variant reference-mt --rounds 3 --iterations 4 --warmup 0 \
    --no-accuracy --json "$TMP/r.json"
py "report carries samples_s: rounds x iterations, after the seed keys" '
import json, sys
r = json.load(open(sys.argv[1]))
for v in r["variants"]:
    s = v["samples_s"]
    assert len(s) == 3 and all(len(x) == 4 for x in s), s
    assert all(isinstance(t, float) and t > 0 for x in s for t in x)
    assert min(min(x) for x in s) == v["timing"]["min_s"] and max(max(x) for x in s) == v["timing"]["max_s"]
    assert list(v)[-1] != "name" and list(v).index("samples_s") > list(v).index("speedup_vs_baseline_percent")
' "$TMP/r.json"
check "show still reads it" 0 "$S" show "$TMP/r.json"
check "plot ours" 0 "$S" plot "$TMP/r.json" -o "$TMP/r.svg"
valid_svg "ours" "$TMP/r.svg"
py "ours: one series per variant" "$SERIES" "$TMP/r.svg" reference reference-mt
grep -q "Every timed call" "$TMP/r.svg" && echo "ok   ours: drawn from the calls" \
    || { echo "FAIL ours: not drawn from the calls"; fails=$((fails+1)); }
cp "$TMP/r.json" "$TMP/named.json"
check "default output: REPORT.svg" 0 "$S" plot "$TMP/named.json"
[ -s "$TMP/named.svg" ] && echo "ok   default output written" \
    || { echo "FAIL default output $TMP/named.svg missing"; fails=$((fails+1)); }
check "-o - writes to stdout" 0 "$S" plot "$TMP/r.json" -o - --title 'A <&> "title"'
printf '%s\n' "$out" > "$TMP/stdout.svg"
valid_svg "stdout, title escaped" "$TMP/stdout.svg"

# ---- the seed's report: per-round summaries only ----
check "plot the seed fixture" 0 "$S" plot "$SEED" -o "$TMP/seed.svg"
valid_svg "seed" "$TMP/seed.svg"
py "seed: one series per variant" "$SERIES" "$TMP/seed.svg" baseline interleave-softmax
grep -q "no per-call samples" "$TMP/seed.svg" && echo "ok   seed: says it draws summaries" \
    || { echo "FAIL seed: does not say it draws summaries"; fails=$((fails+1)); }

# ---- bad inputs ----
check "no report: usage" 2 "$S" plot
check "two reports: usage" 2 "$S" plot "$SEED" "$SEED"
check "unknown option: usage" 2 "$S" plot --frobnicate "$SEED"
check "missing report" 1 "$S" plot "$TMP/none.json" -o "$TMP/x.svg" && contains "names it" "$TMP/none.json"
printf '{"metadata": {}, ' > "$TMP/broken.json"
check "not JSON" 1 "$S" plot "$TMP/broken.json" -o "$TMP/x.svg" && contains "names it" "broken.json"
echo '{"hello": 1}' > "$TMP/other.json"
check "not a report" 1 "$S" plot "$TMP/other.json" -o "$TMP/x.svg" \
    && contains "names file and key" "other.json: metadata: missing"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1])); r["variants"][1]["samples_s"][1] = [1.0]
json.dump(r, open(sys.argv[2], "w"))' "$TMP/r.json" "$TMP/ragged.json"
check "ragged samples_s" 1 "$S" plot "$TMP/ragged.json" -o "$TMP/x.svg" \
    && contains "names file and key" "ragged.json: variants[1].samples_s[1]"
check "unwritable output" 1 "$S" plot "$SEED" -o "$TMP/no/such/dir/x.svg" \
    && contains "names the output" "$TMP/no/such/dir/x.svg"
[ -e "$TMP/x.svg" ] && { echo "FAIL a failed plot left $TMP/x.svg"; fails=$((fails+1)); }

finish
