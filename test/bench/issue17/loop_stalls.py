#!/usr/bin/env python3
"""The hottest loop of a kernel, instruction by instruction, from ncu's per-instruction source counters.

usage: loop_stalls.py SOURCE.csv
SOURCE.csv: `ncu -i REPORT --page source --csv --print-source sass` of a report collected with
`--section SourceCounters`. The loop is the largest group of instructions that ran the same number of
times (stall_groups.py's groups); for each of its instructions it prints the stall samples and the three
main reasons, then totals by opcode (instructions, samples, reasons): where the warps of the loop wait."""
import collections
import sys

from ncu_source import SourcePage


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    page = SourcePage(sys.argv[1])
    data, reasons, value = page.data, page.reasons, page.value
    src = page.col.get("Source", 1)

    groups = collections.defaultdict(list)
    for i, row in enumerate(data):
        groups[value(row, "Instructions Executed")].append(i)
    executed, members = max(((k, v) for k, v in groups.items() if k > 0), key=lambda kv: len(kv[1]) * kv[0])
    print(f"loop: {len(members)} instructions executed {executed:.0f} times each, rows {members[0]}-{members[-1]}")
    by_op = collections.defaultdict(lambda: [0, 0.0, collections.Counter()])
    total = 0.0
    for i in members:
        row = data[i]
        samples = value(row, "Warp Stall Sampling (All Samples)")
        why = collections.Counter({r[6:]: value(row, r) for r in reasons})
        top = ", ".join(f"{k} {v:.0f}" for k, v in why.most_common(3) if v > 0)
        text = row[src].strip()
        print(f"{i:6d} {samples:7.0f}  {text[:70]:70s} {top}")
        op = text.split()[0] if text else "?"
        if op.startswith("@"):
            op = text.split()[1]
        op = op.split(".")[0]
        by_op[op][0] += 1
        by_op[op][1] += samples
        by_op[op][2].update(why)
        total += samples
    print(f"\nby opcode (loop samples {total:.0f}):")
    for op, (n, s, why) in sorted(by_op.items(), key=lambda kv: -kv[1][1]):
        top = ", ".join(f"{k} {100 * v / max(s, 1):.0f}%" for k, v in why.most_common(4) if v > 0)
        print(f"{op:12s} {n:4d} instr  {100 * s / max(total, 1):5.1f}% of samples  {top}")


if __name__ == "__main__":
    main()
