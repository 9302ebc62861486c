#!/usr/bin/env bash
# The report's JSON Schema (schema/report.schema.json): what compare writes validates, what breaks
# it is caught and named; host reports carry no GPU fields; the driver's own version is shown
# beside the CUDA API version; compare --help explains the table's columns.
set -u
source "$(dirname "$0")/lib.sh"
V=(python3 "$ROOT/test/cli/validate_reports.py")

check "host compare" 0 "$S" compare --backend host --shape 1,64,2,64 --rounds 3 --iterations 2 \
    --warmup 0 --quiet --json "$TMP/host.json"
check "the host report validates" 0 "${V[@]}" "$TMP/host.json"
# the report names the commit the binary says it was built from (an object left out of the
# rebuild on a new commit once made every report name an older one)
commit=$("$S" --version | sed -n 's/.*commit \([0-9a-f]*\).*/\1/p')
reported=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["source_commit"])' "$TMP/host.json")
[ -n "$commit" ] && [ "${reported%-dirty}" = "$commit" ] && echo "ok   the report's source_commit is the binary's ($commit)" \
    || fail "the report's source_commit is the binary's" "--version: $commit, report: $reported"
check "the seed report validates" 0 "${V[@]}" "$ROOT/test/data/seed-report.json"
py "a host report has no GPU fields" '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["device"] == {"name": "host", "backend": "host"}, r["device"]
assert r["scheduler"] is None, r["scheduler"]
assert all(v["scheduler"] is None for v in r["variants"]), [v["scheduler"] for v in r["variants"]]' "$TMP/host.json"

# what the schema catches, each named by its path
edit() { # edit OUT PYTHON-STATEMENTS (on r)
    python3 -c "import json, sys
r = json.load(open(sys.argv[1]))
$2
json.dump(r, open(sys.argv[2], 'w'))" "$TMP/host.json" "$1"
}
edit "$TMP/cc0.json" 'r["device"]["compute_capability"] = 0'
check "a host report with a compute capability is invalid" 1 "${V[@]}" "$TMP/cc0.json" && contains "names it" "device: "
edit "$TMP/F16.json" 'r["problem"]["dtype"] = "F16"'
check "a dtype other than fp16/bf16 is invalid" 1 "${V[@]}" "$TMP/F16.json" && contains "names the problem" "problem"
# the whole problem (ABI 0.2): kv_len, alignment, window, softcap, lengths, pages; strict types
edit "$TMP/p02.json" 'r["problem"].update(kv_len=512, align="bottom-right", window=[64, 0], softcap=30.0, varlen={"q_lens": [100, 7], "kv_lens": [300, 7]}, page_size=16, pages=20)'
check "a report with every problem key validates" 0 "${V[@]}" "$TMP/p02.json"
edit "$TMP/p02old.json" '[r["problem"].pop(k) for k in ("kv_len", "align", "window", "softcap", "varlen", "page_size", "pages")]'
check "a report of an older sagerun (no such keys) validates" 0 "${V[@]}" "$TMP/p02old.json"
for bad in 'window=[-2, 0]' 'window=[1, 2, 3]' 'align="bottom"' 'softcap=-1' 'kv_len=0' \
        'varlen={"q_lens": [1]}' 'varlen={"q_lens": [-1], "kv_lens": [1]}' 'page_size=16.5'; do
    edit "$TMP/p02bad.json" "r['problem'].update($bad)"
    check "problem $bad is invalid" 1 "${V[@]}" "$TMP/p02bad.json" && contains "names the problem" "problem"
done
edit "$TMP/novariants.json" 'del r["variants"]'
check "a report without variants is invalid" 1 "${V[@]}" "$TMP/novariants.json" && contains "names the key" "'variants' is a required property"
edit "$TMP/badsha.json" 'r["variants"][0]["output_sha256"] = "xyz"'
check "a bad hash is invalid" 1 "${V[@]}" "$TMP/badsha.json" && contains "names the variant" "variants/0/output_sha256"
edit "$TMP/noext.json" 'del r["measurement"]'
check "extensions come together" 1 "${V[@]}" "$TMP/noext.json" && contains "names the missing one" "'measurement' is a dependency of 'schema_version'"

# a GPU report: compute capability, SMs, the CUDA API version and the driver's own version
edit "$TMP/gpu.json" 'r["device"] = {"name": "NVIDIA H200", "backend": "cuda", "compute_capability": 90, "driver_version": 13000, "driver_release": "580.159.04", "multiprocessors": 132}'
check "a GPU report validates" 0 "${V[@]}" "$TMP/gpu.json"
check "show the GPU report" 0 "$S" show "$TMP/gpu.json"
contains "CUDA API and driver side by side" "device NVIDIA H200 (sm_90, CUDA 13.0, driver 580.159.04)"
edit "$TMP/badrel.json" 'r["device"] = {"name": "x", "backend": "cuda", "driver_release": "580 beta"}'
check "a driver release that is not a version is invalid" 1 "${V[@]}" "$TMP/badrel.json" && contains "names it" "device/driver_release"
# which card: UUID and PCI bus id (null where unknown), GPU reports only
edit "$TMP/card.json" 'r["device"] = {"name": "NVIDIA H200", "backend": "cuda", "compute_capability": 90, "uuid": "GPU-8f2c1a4e-0000-1111-2222-333344445555", "pci_bus_id": "00000000:19:00.0"}'
check "a GPU report with its UUID and PCI bus id validates" 0 "${V[@]}" "$TMP/card.json"
check "show it" 0 "$S" show "$TMP/card.json" && contains "the bus" "device NVIDIA H200 (sm_90, PCI 00000000:19:00.0)"
edit "$TMP/nocard.json" 'r["device"] = {"name": "NVIDIA H200", "backend": "cuda", "uuid": None, "pci_bus_id": None}'
check "unknown as null validates" 0 "${V[@]}" "$TMP/nocard.json"
edit "$TMP/badpci.json" 'r["device"] = {"name": "x", "backend": "cuda", "pci_bus_id": "19:00.0"}'
check "a PCI bus id not as nvidia-smi writes it is invalid" 1 "${V[@]}" "$TMP/badpci.json" && contains "names it" "device/pci_bus_id"
edit "$TMP/hostuuid.json" 'r["device"] = {"name": "host", "backend": "host", "uuid": None}'
check "a host report has no GPU UUID" 1 "${V[@]}" "$TMP/hostuuid.json"

# the table's columns, explained where the table is made
check "compare --help explains the columns" 0 "$S" compare --help
contains "spread" "spread      -(p50-min)/p50 and +(p90-p50)/p50 in percent"
for col in p50 TOPS speedup verdict byte-exact accuracy; do
    grep -q "^  $col  " <<<"$out" && echo "ok   --help explains $col" || fail "--help explains $col" "$out"
done
contains "points at the schema" "schema/report.schema.json"

# a schema_version this sagerun does not read is refused, naming it (2, 999 and -7 were read as 1)
for ver in 2 999 -7; do
    python3 -c "import json, sys
r = json.load(open(sys.argv[1])); r['schema_version'] = int(sys.argv[3]); json.dump(r, open(sys.argv[2], 'w'))" \
        "$TMP/host.json" "$TMP/v$ver.json" "$ver"
    check "show: schema_version $ver refused" 1 "$S" show "$TMP/v$ver.json"
    contains "names it" "schema_version: $ver: this sagerun reads version 1"
done
check "diff: schema_version 2 refused" 1 "$S" diff "$TMP/host.json" "$TMP/v2.json"

# absurd values are shown whole, with their unit (TOPS 1e20 was cut to 1e14, a p50 of 1e30 s lost
# its unit); an interval without an estimate is no headline (it printed +nan%); a p50 of 0 for a
# variant that ran is refused (it hid any regression in diff)
python3 -c "import json, sys
r = json.load(open(sys.argv[1])); v = r['variants'][1]; v['tops'] = 1e20; v['timing']['p50_s'] = 1e30
json.dump(r, open(sys.argv[2], 'w'))
r = json.load(open(sys.argv[1])); r['variants'][1]['speedup_interval_percent']['estimate'] = None
json.dump(r, open(sys.argv[3], 'w'))
r = json.load(open(sys.argv[1])); r['variants'][1]['timing']['p50_s'] = 0
json.dump(r, open(sys.argv[4], 'w'))" "$TMP/host.json" "$TMP/big.json" "$TMP/noest.json" "$TMP/zero.json"
check "show: absurd values" 0 "$S" show "$TMP/big.json"
grep -qE "^reference-mt +1e\+30 s +.* 1e\+20 " <<<"$out" && echo "ok   ... shown whole, with the unit" || fail "absurd values shown" "$out"
check "show: an interval without an estimate" 0 "$S" show "$TMP/noest.json"
grep -q "nan" <<<"$out" && fail "an interval without an estimate shows nan" "$out" || echo "ok   ... no nan"
check "show: p50 0 for a variant that ran" 1 "$S" show "$TMP/zero.json"
contains "names it" "timing.p50_s: 0 for a variant that ran"
# a value error names its place: the round, the sample, the key (it said "rounds: a negative
# duration"); a 32-bit field past 2^32 is an error, not a wrapped number ("0 calls per sample")
python3 -c "import json, sys
r = json.load(open(sys.argv[1])); r['variants'][1]['rounds'][1]['min_s'] = -1
json.dump(r, open(sys.argv[2], 'w'))
r = json.load(open(sys.argv[1])); r['variants'][1]['samples_s'][2][1] = -1
json.dump(r, open(sys.argv[3], 'w'))
r = json.load(open(sys.argv[1])); r['variants'][1]['measurement']['calls_per_sample'] = 2**40
json.dump(r, open(sys.argv[4], 'w'))" "$TMP/host.json" "$TMP/negr.json" "$TMP/negs.json" "$TMP/wrap.json"
check "show: a negative round duration" 1 "$S" show "$TMP/negr.json"
contains "names the round and key" "variants[1] (reference-mt): rounds[1].min_s: a negative duration"
check "show: a negative sample" 1 "$S" show "$TMP/negs.json"
contains "names the sample" "variants[1] (reference-mt): samples_s[2][1]: a negative duration"
check "show: calls_per_sample past 2^32" 1 "$S" show "$TMP/wrap.json"
contains "names the key" "calls_per_sample: 1099511627776: at most 4294967295"
# the seed's format has no baseline flag: the baseline is the entry with speedup 0 wherever it
# stands (the first entry was taken, so a reversed file judged the baseline against the variant)
python3 -c "import json, sys
r = json.load(open(sys.argv[1])); r['variants'] = r['variants'][::-1]; json.dump(r, open(sys.argv[2], 'w'))" \
    "$ROOT/test/data/seed-report.json" "$TMP/seed-rev.json"
check "show: a seed report with its baseline last" 0 "$S" show "$TMP/seed-rev.json"
grep -qE "^baseline +[0-9.]+ ms .*\(baseline\)" <<<"$out" && grep -qE "^interleave-softmax .* -0.08% " <<<"$out" \
    && echo "ok   ... the baseline is the 0% entry" || fail "the seed's baseline by its 0% speedup" "$out"

# many warnings read in linear time, each kept whole (each was compared with every one before it
# and cut at 1023 bytes: 100,000 took 15 s, 300,000 minutes, in show, diff and plot alike)
python3 -c "import json, sys
r = json.load(open(sys.argv[1])); r['warnings'] = ['w%d' % i for i in range(200000)] + ['x' * 3000]
json.dump(r, open(sys.argv[2], 'w'))" "$TMP/host.json" "$TMP/manyw.json"
check "show: 200,001 warnings" 0 timeout 20 "$S" show "$TMP/manyw.json"
grep -qx "warning: w199999" <<<"$out" && grep -qx "warning: x\{3000\}" <<<"$out" \
    && echo "ok   ... all shown, the long one whole" || fail "many warnings" "$(tail -3 <<<"$out")"
check "diff: 200,001 warnings" 0 timeout 20 "$S" diff "$TMP/manyw.json" "$TMP/manyw.json"

# fields that contradict each other (each was checked on its own, so show, diff and plot told
# different stories from one edited report): two baselines, a verdict its interval contradicts, a
# speedup below -100%
python3 -c "import json, sys
r = json.load(open(sys.argv[1])); r['variants'][1]['is_baseline'] = True; json.dump(r, open(sys.argv[2], 'w'))
r = json.load(open(sys.argv[1])); v = r['variants'][1]
v['verdict'] = 'slower'; v['speedup_interval_percent'].update(estimate=500, low=-5, high=5)
json.dump(r, open(sys.argv[3], 'w'))
r = json.load(open(sys.argv[1])); v = r['variants'][1]
v['verdict'] = 'slower'; v['speedup_interval_percent'].update(estimate=-150, low=-200, high=-120)
json.dump(r, open(sys.argv[4], 'w'))" "$TMP/host.json" "$TMP/twobase.json" "$TMP/contra.json" "$TMP/below100.json"
check "show: two baselines" 1 "$S" show "$TMP/twobase.json"
contains "names both" "variants[0] and variants[1] are both the baseline (is_baseline)"
check "show: a verdict its interval contradicts" 1 "$S" show "$TMP/contra.json"
contains "says which" "variants[1] (reference-mt): verdict 'slower' contradicts its interval [-5.000, +5.000]"
check "diff: a verdict its interval contradicts" 1 "$S" diff "$TMP/host.json" "$TMP/contra.json"
check "show: a speedup below -100%" 1 "$S" show "$TMP/below100.json"
contains "says why" "speedup_interval_percent: low -200 is not above -100% (a variant cannot take less than no time)"

finish
