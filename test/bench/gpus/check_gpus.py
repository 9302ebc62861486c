"""Issue 45's verdict: a sweep run with --gpus against the same sweep on one GPU.

    check_gpus.py ONE_DIR MANY_DIR WALL_ONE_S WALL_MANY_S N_GPUS

Every point of ONE_DIR's summary is in MANY_DIR's, with the same status; every variant's output
SHA-256 (and the reference's) is the same in both reports, and byte-exact; each speedup of the
multi-GPU sweep lies within the one-GPU sweep's 95% interval; the wall time is at most 1.2/n of
the one-GPU sweep's; each GPU's reports name one card (UUID, PCI bus id), a card of its own; the
points ran on every GPU, each on one (N_GPUS 0: neither of these two, for a
sweep run elsewhere, e.g. through Slurm). Prints a line per point and
variant, then PASS or FAIL lines; exits 1 when one fails."""
import json
import os
import sys

one_dir, many_dir = sys.argv[1], sys.argv[2]
wall_one, wall_many, n = float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
one, many = (json.load(open(os.path.join(d, "summary.json"))) for d in (one_dir, many_dir))
rows = {w["index"]: w for w in many["workloads"]}
fails = []


def check(ok, what):
    print(("PASS " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)


def hashes(d, row):
    r = json.load(open(os.path.join(d, row["report"])))
    return r["reference_output_sha256"], {v.get("label", v["name"]): v["output_sha256"] for v in r["variants"]}, r["device"]


print(f"{'point':8} {'variant':22} {'one GPU: speedup [95% CI]':34} {'--gpus':10} {'ran on'}")
for a in one["workloads"]:
    b = rows.get(a["index"])
    if b is None:
        check(False, f"{a['name']}: in the --gpus sweep")
        continue
    check(a["status"] == b["status"] == "ok", f"{a['name']}: status {a['status']} / {b['status']}")
    if not (a["report"] and b["report"]):
        continue
    ra, ha, _ = hashes(one_dir, a)
    rb, hb, dev = hashes(many_dir, b)
    check(ra == rb and ha == hb, f"{a['name']}: every output the same bytes as on one GPU")
    on = b.get("ran_on") or {}
    where = f"{dev.get('name')} {on.get('uuid')} CUDA_VISIBLE_DEVICES={on.get('cuda_visible_devices')}"
    for va, vb in zip(a["variants"], b["variants"]):
        if va["is_baseline"]:
            continue
        check(va["byte_exact"] is True and vb["byte_exact"] is True, f"{a['name']} {va['label']}: byte-exact")
        lo, hi = va["interval_percent"] or (float("nan"), float("nan"))
        s = vb["speedup_estimate_percent"]
        print(f"{a['name']:8} {va['label']:22} {va['speedup_estimate_percent']:+7.2f}% [{lo:+.2f}, {hi:+.2f}]"
              f"{'':10} {s:+7.2f}%  {where}")
        check(s is not None and lo <= s <= hi, f"{a['name']} {va['label']}: speedup {s:+.2f}% within [{lo:+.2f}, {hi:+.2f}]")
cards = {}
for w in many["workloads"]:
    on = w.get("ran_on") or {}
    cards.setdefault(on.get("cuda_visible_devices"), set()).add((on.get("uuid"), on.get("pci_bus_id")))
check(all(len(c) == 1 and None not in next(iter(c)) for c in cards.values()),
      f"each GPU's points name one card, UUID and PCI bus id: {cards}")
check(len({next(iter(c)) for c in cards.values()}) == len(cards), "different GPUs, different cards")
places = {(w.get("ran_on") or {}).get("cuda_visible_devices") for w in many["workloads"]}
print(f"ran on CUDA_VISIBLE_DEVICES {sorted(map(str, places))}")
if n == 0:
    print(f"{len(fails)} failed")
    sys.exit(1 if fails else 0)
check(len(places) == min(n, len(one["workloads"])), f"the points ran on {len(places)} GPUs ({sorted(map(str, places))}) of {n}")
check(wall_many <= 1.2 * wall_one / n, f"wall {wall_many:.1f} s <= 1.2/{n} x {wall_one:.1f} s = {1.2 * wall_one / n:.1f} s"
      f" (ratio {wall_many / wall_one:.3f})")
print(f"{len(fails)} failed")
sys.exit(1 if fails else 0)
