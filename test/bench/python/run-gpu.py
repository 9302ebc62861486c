#!/usr/bin/env python3
"""Issue 44 on a GPU, from one Python script: torch SDPA (cuDNN, examples/python/torch_sdpa.py) and
a torch callable defined here against `baseline`, on the seed workload and on a decode problem,
through `sagerun.compare` in this process; then the CLI's `sagerun compare` of the same variants
(this file declares the callable for it, below). Prints both speedups with their 95% intervals,
whether they agree (the intervals overlap), and the Python call's per-call host overhead
(host_call_s: the interpreter's time to queue one call, kept out of the timing).

    SAGERUN_PYTHON=/opt/torch/.venv/bin/python3 SAGERUN_LIBRARY=$PWD/build/lib/libsagerun.so.0 \
        PYTHONPATH=$PWD/python /opt/torch/.venv/bin/python3 test/bench/python/run-gpu.py [OUT_DIR]
    (PROBLEMS="decode" runs that problem alone)

Record the output in test/bench/RESULTS.md (issue 44).
"""
# sagerun-variant: torch-callable run=_cli_run backend=cuda min_cc=80 features=kv_len description="run-gpu.py's torch callable: SDPA, any backend"
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SDPA_FILE = os.path.join(ROOT, "examples", "python", "torch_sdpa.py")


def torch_callable(q, k, v, o):
    """SDPA on sagerun's NHD tensors (torch picks the backend); its result copied into o."""
    import torch.nn.functional as F
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
    o.copy_(out.transpose(1, 2))


def _cli_run(call):  # the same callable, as the CLI's bridge calls a variant file's function
    torch_callable(call.q, call.k, call.v, call.o)


PROBLEMS = {
    "seed": dict(args=["--shape", "1,37810,56,128"], kw=dict(shape=(1, 37810, 56, 128)),
                 variants=[SDPA_FILE, "torch-callable"]),
    "decode": dict(args=["--shape", "8,1,32,128", "--kv-len", "8192"],
                   kw=dict(shape=(8, 1, 32, 128), kv_len=8192), variants=["torch-callable"]),
}


def _line(where, v):
    host = (v.entry.get("measurement") or {}).get("host_call_s")
    return "  %-7s %-18s %-30s %-16s host per call %s" % (
        where, v.label, v.interval_text(), v.verdict or v.failure,
        "%.1f us" % (host * 1e6) if host else "-")


def python_side(name, problem):
    import sagerun
    specs = ["baseline"] + [torch_callable if s == "torch-callable" else s
                            for s in problem["variants"]]
    r = sagerun.compare(*specs, min_cos=0.99, progress=False, **problem["kw"])
    return r


def cli_side(name, problem, out_dir):
    import sagerun
    from sagerun import _isolate
    path = os.path.join(out_dir, "cli-%s.json" % name)
    cmd = [_isolate.cli(), "compare", "--quiet", "--json", path, "--baseline", "baseline",
           "--plugin", SDPA_FILE, "--plugin", os.path.abspath(__file__), "--min-cos", "0.99"]
    cmd += problem["args"]
    for v in problem["variants"]:
        cmd += ["--variant", "torch-sdpa-cudnn" if v == SDPA_FILE else v]
    subprocess.run(cmd, check=False)
    return sagerun.load(path)


def zero_copy_check():
    """torch CUDA tensors given as q, k, v are read where they are: the variant sees their
    memory (data_ptr) and the baseline's output is the same as on sagerun's own copy."""
    import torch
    import sagerun
    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(1, 4096, 8, 128, device="cuda", dtype=torch.float16, generator=g)
               for _ in range(3))
    seen = []

    def recorder(q_, k_, v_, o):
        seen.append((q_.data_ptr(), k_.data_ptr(), v_.data_ptr()))
        torch_callable(q_, k_, v_, o)
    r = sagerun.compare("baseline", recorder, q=q, k=k, v=v, min_cos=0.99, progress=False)
    same = all(s == (q.data_ptr(), k.data_ptr(), v.data_ptr()) for s in seen)
    copied = sagerun.compare("baseline", q=q.cpu(), k=k.cpu(), v=v.cpu(), backend="cuda",
                             rounds=2, iterations=1, warmup=0, progress=False)
    out_same = r.data["reference_output_sha256"] == copied.data["reference_output_sha256"]
    print("zero copy: the variant saw the caller's tensors: %s; baseline's output hash equal to "
          "the copied inputs': %s" % (same, out_same))
    return {"variant_saw_caller_memory": same, "baseline_hash_equal_to_copy": out_same}


def _overlap(a, b):
    return a.interval and b.interval and a.interval[0] <= b.interval[1] \
        and b.interval[0] <= a.interval[1]


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", ".")
    os.makedirs(out_dir, exist_ok=True)
    summary = {}
    only = os.environ.get("PROBLEMS", "").split()  # e.g. PROBLEMS=decode: that one alone
    for name, problem in PROBLEMS.items():
        if only and name not in only:
            continue
        py = python_side(name, problem)
        py.save(os.path.join(out_dir, "python-%s.json" % name))
        cli = cli_side(name, problem, out_dir)
        print("%s: %s" % (name, problem["args"]))
        for v in py.variants[1:]:
            label = v.label
            try:
                other = cli[label]
            except KeyError:  # a variant of the file the CLI's compare did not name
                print(_line("python", v) + "  (not in the CLI's compare)")
                continue
            print(_line("python", v))
            print(_line("cli", other))
            agree = bool(_overlap(v, other))
            print("  intervals overlap: %s" % ("yes" if agree else "NO"))
            summary["%s/%s" % (name, label)] = {
                "python": [v.speedup, v.interval], "cli": [other.speedup, other.interval],
                "agree": agree,
                "python_host_call_s": (v.entry.get("measurement") or {}).get("host_call_s"),
                "cli_host_call_s": (other.entry.get("measurement") or {}).get("host_call_s")}
    summary["zero_copy"] = zero_copy_check()
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()
