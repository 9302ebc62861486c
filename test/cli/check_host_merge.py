"""Asserts that DIR holds the merge of test/data/sweep-host.json's two shards: its 3 workloads once
each, by index, every one run ("ok") with both host variants, its report copied beside the
summary, and the markdown summary naming them. Used by test_sweep.sh and test_slurm.sh."""
import json
import os
import sys

d = sys.argv[1]
m = json.load(open(os.path.join(d, "summary.json")))
ws = m["workloads"]
assert [w["index"] for w in ws] == [0, 1, 2], [w["index"] for w in ws]
assert [w["name"] for w in ws] == ["n32", "1x64x2x64", "n96"], [w["name"] for w in ws]
assert m["shard"] is None and len(m["merged_from"]) == 2 and "missing" not in m
for w in ws:
    assert w["status"] == "ok", w
    assert [v["label"] for v in w["variants"]] == ["reference", "reference-mt"], w["variants"]
    assert os.path.exists(os.path.join(d, w["report"])), w["report"]
md = open(os.path.join(d, "summary.md")).read()
assert all(n in md for n in ("n32", "1x64x2x64", "n96"))
