#!/usr/bin/env python3
"""The loops of a kernel image's SASS, for reading a kernel change without a GPU.

    sass_loops.py IMAGE.fatbin [--function NAME] [--min 200] [--list]

For each function (or the one named): its instruction count, local-memory traffic (LDL/STL: spills),
and every loop of at least --min instructions (a backward branch and the code it jumps back over)
with its opcode counts and the fixed stall cycles of its control codes (what one warp alone needs to
issue it, before waiting on variable-latency results), largest first. --list prints the largest such
loop's instructions, each with its fixed stall (S) and the scoreboards it waits on (W, a bit mask).
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
WORD = re.compile(r"/\*\s*0x([0-9a-f]{16})\s*\*/\s*$")
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
            funcs[name].append([int(m.group(1), 16), m.group(2), 0])
        elif name and funcs[name] and not INSN.match(line) and WORD.search(line) and "/*" == line.strip()[:2]:
            # the instruction's second word: its scheduling control (sm_70 on) in bits 41-62
            funcs[name][-1][2] = int(WORD.search(line).group(1), 16) >> 41
    if not funcs:
        sys.exit(f"sass_loops: no SASS in {image}")
    return funcs


def opcode(text):
    text = re.sub(r"^@!?U?P\w+\s+", "", text)
    return text.split()[0].split(".")[0]


def loops(insns, min_len):
    index = {a: i for i, (a, _, _) in enumerate(insns)}
    found = []
    for i, (a, text, _) in enumerate(insns):
        m = BRANCH.search(text)
        # a loop closes with a predicated branch; an unconditional one going back is the return of an
        # out-of-line retry (an mbarrier wait's), and BRA.U.ANY is the elect loop of a TMA issue
        if not m or not text.startswith("@") or ".ANY" in text:
            continue
        target = int(m.group(1), 16)
        if target < a and target in index and i + 1 - index[target] >= min_len:
            found.append((index[target], i))
    return found


def stall_cycles(body):
    """The control codes' fixed stalls (4 bits each) summed: the fewest cycles one warp alone takes to
    issue the body, before any wait on a variable-latency result (MUFU, shared memory, wgmma, ...);
    and how many instructions wait on such a result (a scoreboard mask)."""
    return sum(c & 0xF for _, _, c in body), sum(1 for _, _, c in body if (c >> 11) & 0x3F)


def summary(body):
    counts = collections.Counter(opcode(t) for _, t, _ in body)
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
            stalls, waits = stall_cycles(body)
            top = ", ".join(f"{op} {n}" for op, n in c.most_common(14))
            print(f"  loop {body[0][0]:#x}-{body[-1][0]:#x}: {len(body)} instructions, uniform {u}, "
                  f"fixed stalls {stalls} cycles, {waits} scoreboard waits: {top}")
        if a.list and inner:
            lo, hi = max(inner, key=lambda l: l[1] - l[0])
            for addr, text, ctl in insns[lo:hi + 1]:
                wait = (ctl >> 11) & 0x3F
                print(f"    {addr:#07x}  S{ctl & 0xF:<2d} {'W%02x' % wait if wait else '   '}  {text}")


if __name__ == "__main__":
    main()
