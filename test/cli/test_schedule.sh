#!/usr/bin/env bash
# The measurement engine through the CLI (host backend): the schedules (timed, fixed, seed), the
# order, the timer and cache options, what the report records of them, and the headline (the
# paired estimate, inside its interval). The statistics themselves are test_engine_mc and
# test_stats; GPU timing is test/bench/RESULTS.md.
set -u
source "$(dirname "$0")/lib.sh"
H=(--backend host --shape 1,64,2,64 --quiet --baseline reference --variant reference-mt)

# ---- bad values: usage (exit 2), naming the option ----
for opt in "--schedule often" "--order random" "--timer stopwatch" "--cache warm" "--max-time 0" \
           "--max-time -1" "--target-precision x" "--batch 0" "--min-rounds 1"; do
    check "bad $opt" 2 "$S" compare "${H[@]}" $opt && contains "bad $opt: named" "${opt%% *}"
done
check "min above max" 2 "$S" compare "${H[@]}" --min-rounds 30 --max-rounds 20 \
    && contains "min above max: says so" "--min-rounds 30 is above --max-rounds 20"
# one bound alone: the other's default follows it (--max-rounds 5 was refused for the default
# --min-rounds 20 the user never gave)
check "--max-rounds 5 alone" 0 "$S" compare "${H[@]}" --max-rounds 5 --max-time 0.3 --no-accuracy \
    --json "$TMP/max5.json"
py "--max-rounds 5: never more (whole periods of 2: 4), min lowered to it" '
import json, sys
r = json.load(open(sys.argv[1])); m = r["measurement"]
assert r["rounds_completed"] <= 4 and m["max_rounds"] == 4 and m["min_rounds"] <= 4, (r["rounds_completed"], m)
assert any("--max-rounds 5 is not a whole number of periods" in w for w in r["warnings"]), r["warnings"]' "$TMP/max5.json"
# options of one schedule given to another did nothing: refused, naming both
check "--rounds with --max-time" 2 "$S" compare "${H[@]}" --rounds 3 --max-time 0.1
contains "says which schedule" "--max-time applies to --schedule timed, not to fixed"
check "--schedule timed with --rounds" 2 "$S" compare "${H[@]}" --schedule timed --rounds 3
contains "says so" "--warmup, --rounds and --iterations apply to --schedule fixed, not timed"
check "--schedule seed with --min-rounds" 2 "$S" compare "${H[@]}" --schedule seed --min-rounds 4
contains "says so" "--min-rounds applies to --schedule timed, not to seed"
# --batch alone asks for the batch timer (auto dropped it for calls of 1 ms and more: "1 call per
# sample"); a cold cache on the host backend is refused (nothing was flushed, the report said cold)
check "--batch 3 alone" 0 "$S" compare "${H[@]}" --batch 3 --rounds 2 --iterations 1 --warmup 0 \
    --no-accuracy --json "$TMP/b3.json"
py "--batch 3: batch timer, 3 calls per sample" '
import json, sys
for v in json.load(open(sys.argv[1]))["variants"]:
    assert (v["measurement"]["timer"], v["measurement"]["calls_per_sample"]) == ("batch", 3), v["measurement"]' "$TMP/b3.json"
check "--cache cold on the host" 1 "$S" compare "${H[@]}" --cache cold --rounds 2 --iterations 1
contains "says why" "a cold cache (--cache cold) needs a CUDA device"
check "--timer graph on the host" 1 "$S" compare "${H[@]}" --timer graph --rounds 2 --iterations 1
contains "says why, before any call" "the graph timer (--timer graph) needs a CUDA device"
grep -q "warm-up" <<<"$out" && fail "--timer graph on the host: refused only after the warm-up" "$out"
check "help documents the schedules" 0 "$S" compare --help
for w in "--schedule S" "--target-precision" "--max-time" "--timer T" "--cache C" "--order O"; do
    contains "help: $w" "$w"
done

# ---- memory follows the rounds taken: a large --max-rounds that --max-time ends early allocated
# (and filled) room for all of them up front: 4.7 GB for 1e8 rounds; here under a 1 GB limit ----
if nm "$S" 2>/dev/null | grep -q "__asan_init\|__tsan_init"; then
    echo "ok   (memory limit case skipped: a sanitizer build reserves its own address space)"
else
    check "--max-rounds 1e8 ended by --max-time, under 1 GB" 0 bash -c 'ulimit -v 1000000; exec "$@"' _ \
        "$S" compare "${H[@]}" --max-rounds 100000000 --max-time 0.5 --no-accuracy --json "$TMP/many.json"
    py "... ended by its budget" '
import json, sys
m = json.load(open(sys.argv[1]))["measurement"]
assert m["ended_by"] == "budget", m' "$TMP/many.json"
fi

# ---- the seed's schedule exactly: 3 warm-up calls, 5 rounds of 10, rotating ----
check "seed schedule" 0 "$S" compare "${H[@]}" --schedule seed --no-accuracy --json "$TMP/seed.json"
py "seed schedule: 3 + 5 x 10 rotating, one call per sample" '
import json, sys
r = json.load(open(sys.argv[1]))
m = r["measurement"]
assert (r["warmup"], r["rounds"], r["iterations_per_round"]) == (3, 5, 10), r
assert m["schedule"] == "seed" and m["order"] == "rotate" and m["ended_by"] == "rounds", m
assert m["order_seed"] is None, m  # rotate has no random shifts
for v in r["variants"]:
    assert v["timing"]["count"] == 50 and len(v["samples_s"]) == 5, v["timing"]
    assert v["measurement"]["calls_per_sample"] == 1 and v["measurement"]["warmup_calls"] == 3
' "$TMP/seed.json"

# ---- counts alone ask for a fixed schedule, interleaved by default ----
check "fixed by counts" 0 "$S" compare "${H[@]}" --rounds 4 --iterations 3 --warmup 1 \
    --no-accuracy --json "$TMP/fixed.json"
py "fixed: exactly 4 rounds x 3, interleaved, judged on the paired estimate" '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["measurement"]["schedule"] == "fixed" and r["measurement"]["order"] == "interleave"
assert r["rounds"] == 4 and r["iterations_per_round"] == 3 and r["rounds_completed"] == 4
v = r["variants"][1]
iv = v["speedup_interval_percent"]
assert iv["low"] <= iv["estimate"] <= iv["high"], iv
assert v["verdict"] in ("faster", "slower", "same", "below-threshold", "ambiguous")
' "$TMP/fixed.json"
check "show: the headline is the paired estimate" 0 "$S" show "$TMP/fixed.json"
est=$(python3 -c 'import json,sys; print("%+.2f%%" % json.load(open(sys.argv[1]))["variants"][1]["speedup_interval_percent"]["estimate"])' "$TMP/fixed.json")
contains "show: table shows $est" "$est ("  # the factor beside it, then the interval

# ---- the timed schedule: budget and precision, never past max-rounds ----
check "timed, small budget" 0 "$S" compare "${H[@]}" --max-time 0.3 --min-rounds 4 \
    --max-rounds 40 --no-accuracy --json "$TMP/timed.json"
py "timed: whole periods, ended by a stated reason, within the bounds" '
import json, sys
r = json.load(open(sys.argv[1]))
m = r["measurement"]
assert m["schedule"] == "timed" and m["ended_by"] in ("budget", "precision", "rounds"), m
assert 4 <= r["rounds_completed"] <= 40 and r["rounds_completed"] % 2 == 0, r["rounds_completed"]
assert m["max_time_s"] == 0.3 and m["min_rounds"] == 4 and m["max_rounds"] == 40
assert len(m["order_seed"]) == 16 and int(m["order_seed"], 16) >= 0, m  # interleave: its seed
assert r["iterations_per_round"] == 1
for v in r["variants"]:
    assert len(v["samples_s"]) == r["rounds_completed"]
    assert v["measurement"]["timer"] in ("host", "batch")
' "$TMP/timed.json"
check "rotate order" 0 "$S" compare "${H[@]}" --order rotate --rounds 2 --iterations 2 \
    --warmup 0 --no-accuracy --json "$TMP/rot.json"
py "rotate recorded" 'import json,sys; assert json.load(open(sys.argv[1]))["measurement"]["order"] == "rotate"' "$TMP/rot.json"
check "timed again" 0 "$S" compare "${H[@]}" --max-time 0.2 --min-rounds 4 --max-rounds 8 \
    --no-accuracy --json "$TMP/timed2.json"
py "every comparison draws its own order seed" '
import json, sys
a, b = (json.load(open(p))["measurement"]["order_seed"] for p in sys.argv[1:3])
assert a != b, (a, b)
' "$TMP/timed.json" "$TMP/timed2.json"

# ---- batch: K calls per sample, the same K for every variant ----
check "batch K=3" 0 "$S" compare "${H[@]}" --timer batch --batch 3 --rounds 2 --iterations 2 \
    --warmup 1 --no-accuracy --json "$TMP/batch.json"
py "batch: K = 3 for both" '
import json, sys
r = json.load(open(sys.argv[1]))
assert [v["measurement"]["calls_per_sample"] for v in r["variants"]] == [3, 3], r["variants"]
assert all(v["measurement"]["timer"] == "batch" for v in r["variants"])
' "$TMP/batch.json"
finish
