#!/usr/bin/env python3
"""Where a kernel's warps spend their time, from ncu's per-instruction source counters.

usage: stall_groups.py SOURCE.csv [GROUPS]
SOURCE.csv: `ncu -i REPORT --page source --csv --print-source sass` of a report collected with
`--section SourceCounters`. Instructions that ran the same number of times form one group (a loop
body, one warp role's loop, a barrier's retry loop); for the GROUPS largest by stall samples it
prints the share of all samples, the instruction range and count, and the main stall reasons.
Samples are warp-time: a group's share is the time warps spent in it, issuing or not."""
import collections
import sys

from ncu_source import SourcePage


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    page = SourcePage(sys.argv[1])
    data, reasons, value = page.data, page.reasons, page.value

    groups = collections.defaultdict(lambda: {"n": 0, "samples": 0.0, "lo": None, "hi": 0,
                                              "why": collections.Counter()})
    for i, row in enumerate(data):
        samples = value(row, "Warp Stall Sampling (All Samples)")
        if samples == 0:
            continue
        g = groups[value(row, "Instructions Executed")]
        g["n"] += 1
        g["samples"] += samples
        g["lo"] = i if g["lo"] is None else g["lo"]
        g["hi"] = i
        for r in reasons:
            g["why"][r[6:]] += value(row, r)
    total = sum(g["samples"] for g in groups.values()) or 1.0
    top = int(sys.argv[2]) if len(sys.argv) == 3 else 10
    for executed, g in sorted(groups.items(), key=lambda kv: -kv[1]["samples"])[:top]:
        why = ", ".join(f"{k} {100 * v / g['samples']:.0f}%" for k, v in g["why"].most_common(4))
        print(f"{100 * g['samples'] / total:5.1f}%  executed {executed:>10.0f}  {g['n']:4d} instructions "
              f"[{g['lo']}-{g['hi']}]  {why}")


if __name__ == "__main__":
    main()
