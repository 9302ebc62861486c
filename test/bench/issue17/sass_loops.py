#!/usr/bin/env python3
"""The loops of a kernel image's SASS, for reading a kernel change without a GPU.

    sass_loops.py IMAGE.fatbin [--function NAME] [--min 200] [--list]

For each function (or the one named): its instruction count, local-memory traffic (LDL/STL: spills),
and every loop of at least --min instructions (a backward branch and the code it jumps back over)
with its opcode counts, largest first. --list prints the innermost such loop's instructions.
Needs cuobjdump (tools/get-cuobjdump.sh puts one under build/cuda-tools/bin; $CUOBJDUMP overrides).
The counts are static: a loop's branches that one warp in four takes (the refill) are included, and
the out-of-line retries of its mbarrier waits are not."""
import argparse
import signal
import collections
import os
import re
import subprocess
import sys

INSN = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)")
BRANCH = re.compile(r"\bBRA(?:\.\S+)?\s+(?:`\(\S+\)\s*)?0x([0-9a-f]+)")


def cuobjdump():
    env = os.environ.get("CUOBJDUMP")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    local = os.path.join(here, "..", "..", "..", "build", "cuda-tools", "bin", "cuobjdump")
    return local if os.access(local, os.X_OK) else "cuobjdump"


def functions(image):
    try:
        out = subprocess.run([cuobjdump(), "-sass", image], check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        sys.exit("sass_loops: no cuobjdump (run tools/get-cuobjdump.sh, or set CUOBJDUMP)")
    except subprocess.CalledProcessError as e:
        sys.exit(f"sass_loops: cuobjdump -sass {image} failed: {e.stderr.strip()}")
    funcs, name = {}, None
    for line in out.splitlines():
        m = FUNC.match(line)
        if m:
            name = m.group(1)
            funcs[name] = []
            continue
        m = INSN.match(line)
        if m and name:
            funcs[name].append((int(m.group(1), 16), m.group(2)))
    if not funcs:
        sys.exit(f"sass_loops: no SASS in {image}")
    return funcs


def opcode(text):
    text = re.sub(r"^@!?U?P\w+\s+", "", text)
    return text.split()[0].split(".")[0]


def loops(insns, min_len):
    index = {a: i for i, (a, _) in enumerate(insns)}
    found = []
    for i, (a, text) in enumerate(insns):
        m = BRANCH.search(text)
        # a loop closes with a predicated branch; an unconditional one going back is the return of an
        # out-of-line retry (an mbarrier wait's), and BRA.U.ANY is the elect loop of a TMA issue
        if not m or not text.startswith("@") or ".ANY" in text:
            continue
        target = int(m.group(1), 16)
        if target < a and target in index and i + 1 - index[target] >= min_len:
            found.append((index[target], i))
    return found


def summary(body):
    counts = collections.Counter(opcode(t) for _, t in body)
    uniform = sum(n for op, n in counts.items() if op.startswith("U") and op not in ("UTMALDG", "UTMACCTL"))
    return counts, uniform


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under head
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("image")
    ap.add_argument("--function")
    ap.add_argument("--min", type=int, default=200)
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    funcs = functions(a.image)
    if a.function and a.function not in funcs:
        sys.exit(f"sass_loops: no function {a.function} in {a.image} (it has: {', '.join(funcs)})")
    for name, insns in funcs.items():
        if a.function and name != a.function:
            continue
        counts, uniform = summary(insns)
        print(f"{name}: {len(insns)} instructions, uniform {uniform}, LDL {counts['LDL']}, STL {counts['STL']}")
        found = loops(insns, a.min)
        # innermost first: a loop that contains no other listed loop
        inner = [l for l in found if not any(o != l and l[0] <= o[0] and o[1] <= l[1] for o in found)]
        for lo, hi in sorted(inner, key=lambda l: l[1] - l[0], reverse=True):
            body = insns[lo:hi + 1]
            c, u = summary(body)
            top = ", ".join(f"{op} {n}" for op, n in c.most_common(14))
            print(f"  loop {body[0][0]:#x}-{body[-1][0]:#x}: {len(body)} instructions, uniform {u}: {top}")
        if a.list and inner:
            lo, hi = max(inner, key=lambda l: l[1] - l[0])
            for addr, text in insns[lo:hi + 1]:
                print(f"    {addr:#07x}  {text}")


if __name__ == "__main__":
    main()
