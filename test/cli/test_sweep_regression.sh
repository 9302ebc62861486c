#!/usr/bin/env bash
# Issue 18's "done when", on the host backend (no GPU): a sweep over 4 values of N x 3 values of a
# variant parameter (host_work.so's work[block]) runs and renders as a table, a CSV and a PNG/SVG
# figure; a second sweep with one injected 5% regression (SAGERUN_TEST_WORK_EXTRA: 5% more of the
# same work at one point) is caught by `diff --relative` (exit 4, that point alone named), while an
# identical re-run passes.
#
# Host timing on a shared machine drifts from run to run by more than 1%; --relative judges each
# variant by its time over its own run's baseline, round by round, so that what slowed a whole run
# cancels. What remains between two runs of one point on this 2-core VM (two instances' memory,
# load that preempts a long call more often than a short one) moved an identical re-run's
# estimates by up to 3% (the interval's lower bound by up to +1.3%, over 84 points), so the diffs
# here judge at a 2% threshold (--threshold 2): the injected 5% must clear it with its whole
# interval. The regression is real work (not an edited report) and the same judgement that passes
# the re-run must catch it: the test cannot pass by judging nothing. One control: where the
# injected point's own interval is wider than +-2.5% (a host so loaded — load average 4 and more on
# 2 cores — that its timing cannot resolve 5% against 2%), a miss is said as SKIP, not passed;
# a miss with an interval narrow enough fails.
set -u
source "$(dirname "$0")/lib.sh"
WORK=$FAKES/host_work.so
[ -f "$WORK" ] || { echo "SKIP: $WORK is not built"; exit 0; }

cat > "$TMP/nb.json" <<'JSON'
{"name": "n-by-block", "baseline": "work", "variants": ["work"], "warmup": 2, "rounds": 20,
 "iterations": 10, "accuracy": false,
 "axes": {"N": [64, 96, 128, 160], "work[block]": [1, 4, 16]},
 "workloads": [{"name": "w", "shape": [1, 64, 1, 32]}]}
JSON
sweep() { # sweep NAME OUT-DIR [ENV...]: the sweep of nb.json into OUT-DIR
    local name=$1 dir=$2; shift 2
    check "$name" 0 env "$@" "$S" sweep "$TMP/nb.json" --backend host --quiet --plugin "$WORK" \
        --out-dir "$dir" --csv "$dir.csv"
}

sweep "the sweep: 4 N x 3 work[block]" "$TMP/old"
contains "12 points" "sweep n-by-block: 12 of 12 workloads"
for n in 64 96 128 160; do for b in 1 4 16; do
    grep -qE "^[0-9]+ +w/N=$n,work\[block\]=$b +1x${n}x1x32 .* work\[block=$b\] .* yes$" <<<"$out" \
        || fail "table row N=$n block=$b" "$out"
done; done
echo "ok   the table: a row per point, named by its axes, byte-exact"
py "the CSV: 24 rows, a column per axis" '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 24, len(rows)
got = {(r["axis.N"], r["axis.work[block]"], r["variant"]) for r in rows}
want = {(str(n), str(b), v) for n in (64, 96, 128, 160) for b in (1, 4, 16)
        for v in ("work", "work[block=%d]" % b)}
assert got == want, got ^ want
' "$TMP/old.csv"
for ext in png svg; do
    check "the figure as $ext" 0 "$S" plot "$TMP/old/summary.json" -o "$TMP/fig.$ext" --layout "$TMP/fig.$ext.layout"
    if msg=$(python3 "$ROOT/test/cli/check_figure.py" "$TMP/fig.$ext" "$TMP/fig.$ext.layout" \
             --series "sweep=work[block=1]|work[block=4]|work[block=16]" 2>&1); then
        echo "ok   the $ext figure: valid, its layout clean, a line per block value"
    else fail "the $ext figure" "$msg"; fi
done
py "the figure: speedup along N, 4 points per line" '
import json, sys
l = json.load(open(sys.argv[1]))
p = next(p for p in l["panels"] if p["name"] == "sweep")
assert p["scales"]["x"] == {"axis": "N", "values": ["64", "96", "128", "160"]}, p["scales"]
assert [s["points"] for s in l["series"]] == [4, 4, 4], l["series"]
' "$TMP/fig.png.layout"

sweep "the sweep again, 5% more work at N=160, block=16" "$TMP/slow" SAGERUN_TEST_WORK_EXTRA=160:16:5
out=$("$S" diff --relative --threshold 2 "$TMP/old/summary.json" "$TMP/slow/summary.json" \
      --json "$TMP/slow.diff.json" 2>&1)
rc=$?
resolvable=$(python3 -c '
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"]
        if r["point"] == "w/N=160,work[block]=16" and r["speedup_interval_percent"]]
iv = rows[0]["speedup_interval_percent"] if rows else None
print("missing" if not rows else "yes" if rows[0]["regression"] or (iv["high"] - iv["low"]) / 2 <= 2.5
      else "no: its interval is %+.2f%% [%+.2f, %+.2f]" % (iv["estimate"], iv["low"], iv["high"]))
' "$TMP/slow.diff.json" 2>&1)
if [ $rc -ne 4 ] && [[ $resolvable == no:* ]]; then
    echo "SKIP: the host is too loaded to resolve 5% at N=160 (${resolvable#no: }; load average" \
         "$(cut -d' ' -f1-3 /proc/loadavg)): re-run on a quieter machine"
else
[ $rc -eq 4 ] && echo "ok   diff --relative catches it (exit 4)" \
    || fail "diff --relative catches it: exit $rc, expected 4 (the injected point: $resolvable)" "$out"
grep -qE "^w/N=160,work\[block\]=16 +work\[block=16\] .* slower .*SLOWER$" <<<"$out" \
    && echo "ok   the point named" || fail "the point named" "$out"
py "that point alone, about 5% slower" '
import json, sys
d = json.load(open(sys.argv[1]))
bad = [(r["point"], r["variant"]) for r in d["rows"] if r["regression"]]
assert bad == [("w/N=160,work[block]=16", "work[block=16]")], bad
row = next(r for r in d["rows"] if r["regression"])
change = (100 / (100 + row["speedup_interval_percent"]["estimate"]) - 1) * 100
assert 3 < change < 8, change
assert d["relative"] is True and d["regression"] is True
' "$TMP/slow.diff.json"
fi

sweep "an identical re-run" "$TMP/again"
check "diff --relative passes it" 0 "$S" diff --relative --threshold 2 "$TMP/old/summary.json" "$TMP/again/summary.json" --json "$TMP/again.diff.json"
py "no regression, every point judged" '
import json, sys
d = json.load(open(sys.argv[1]))
judged = [r for r in d["rows"] if r["speedup_interval_percent"]]
assert len(judged) == 12 and not any(r["regression"] for r in d["rows"]), d["rows"]
' "$TMP/again.diff.json"

finish
