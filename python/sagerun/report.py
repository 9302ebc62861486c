"""A comparison's report in Python: the JSON the CLI writes (schema/report.schema.json), its table
as `sagerun show` prints it, and each variant's answers as attributes."""

import ctypes
import html
import json
import os
import tempfile

from . import _lib


class VariantResult:
    """One variant of a report. name, label, is_baseline; verdict ("faster", "slower", "same",
    "below-threshold", "ambiguous"; None for the baseline or one that did not run); speedup
    (the interval's estimate, percent) and interval ((low, high), percent, 95%); p50_s;
    byte_exact; accepted (byte-exact, or within its tolerance); accepted_by ("bytes",
    "tolerance" or None); cosine, relative_l1 (accuracy against exact attention, or None);
    failure, failure_phase (None when it ran)."""

    def __init__(self, entry):
        self.entry = entry
        interval = entry.get("speedup_interval_percent") or {}
        accuracy = entry.get("accuracy") or {}
        self.name = entry.get("name")
        self.label = entry.get("label", self.name)
        self.is_baseline = bool(entry.get("is_baseline"))
        self.verdict = entry.get("verdict")
        self.speedup = interval.get("estimate")
        self.interval = ((interval.get("low"), interval.get("high"))
                         if "low" in interval else None)
        self.p50_s = (entry.get("timing") or {}).get("p50_s")
        self.byte_exact = bool(entry.get("byte_exact"))
        self.accepted_by = entry.get("accepted_by")
        self.accepted = self.accepted_by is not None
        self.cosine = accuracy.get("cosine_similarity")
        self.relative_l1 = accuracy.get("relative_l1")
        self.failure = entry.get("failure")
        self.failure_phase = entry.get("failure_phase")

    def interval_text(self):
        if self.interval is None or self.speedup is None:
            return "no interval"
        return "%+.2f%% [%+.2f, %+.2f]" % (self.speedup, self.interval[0], self.interval[1])

    def __repr__(self):
        what = self.failure and "failed: %s" % self.failure or "%s, %s, byte-exact %s" % (
            self.interval_text(), self.verdict, "yes" if self.byte_exact else "no")
        return "<%s: %s>" % (self.label, what)


class Report:
    """What compare() returns and load() reads. str(report) is the table; in Jupyter it shows as
    an HTML table. report.variants: every entry (the baseline first), report["label"] one of
    them; complete (False: interrupted, the rounds measured so far); to_dict() the JSON;
    save(path) writes it (`sagerun show PATH` reads it); to_pandas(), plot() where pandas and
    matplotlib are installed."""

    def __init__(self, data, text=None):
        self.data = data
        self.text = text
        self.variants = [VariantResult(e) for e in data.get("variants", [])]
        self.complete = bool(data.get("complete", True))

    @property
    def baseline(self):
        return next((v for v in self.variants if v.is_baseline), None)

    def __getitem__(self, label):
        for v in self.variants:
            if label in (v.label, v.name):
                return v
        raise KeyError("%r: no such variant in the report (%s)"
                       % (label, ", ".join(v.label for v in self.variants)))

    def to_dict(self):
        return json.loads(json.dumps(self.data))

    def save(self, path):
        """Writes the report's JSON (as `sagerun compare --json` writes it)."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.data, f, indent=2)
            f.write("\n")
        return path

    def __str__(self):
        return self.text if self.text is not None else self.__repr__()

    def __repr__(self):
        state = "" if self.complete else ", incomplete"
        return "<sagerun.Report: %s%s>" % (", ".join(repr(v) for v in self.variants), state)

    def rows(self):
        """One dict per variant: the table's columns."""
        return [{"variant": v.label, "p50_s": v.p50_s, "speedup_percent": v.speedup,
                 "low_percent": v.interval[0] if v.interval else None,
                 "high_percent": v.interval[1] if v.interval else None, "verdict": v.verdict,
                 "byte_exact": v.byte_exact, "accepted_by": v.accepted_by, "cosine": v.cosine,
                 "relative_l1": v.relative_l1, "failure": v.failure} for v in self.variants]

    def _repr_html_(self):
        head = ["variant", "p50", "speedup [95% CI]", "verdict", "byte-exact", "accuracy"]
        out = ['<table class="sagerun-report">', "<tr>%s</tr>" % "".join(
            "<th>%s</th>" % h for h in head)]
        for v in self.variants:
            cells = [v.label, "%.2f us" % (v.p50_s * 1e6) if v.p50_s else "-",
                     "(baseline)" if v.is_baseline else v.interval_text(),
                     v.failure and "failed (%s): %s" % (v.failure_phase, v.failure)
                     or v.verdict or "-", "yes" if v.byte_exact else
                     "no, %s" % ("tol. ok" if v.accepted else "tol. FAIL")
                     if v.accepted_by or v.entry.get("tolerance") else "no",
                     "cos %.6f" % v.cosine if v.cosine is not None else "-"]
            out.append("<tr>%s</tr>" % "".join("<td>%s</td>" % html.escape(str(c))
                                               for c in cells))
        out.append("</table>")
        if not self.complete:
            out.append("<p>incomplete: interrupted after %s rounds</p>"
                       % self.data.get("rounds_completed"))
        return "\n".join(out)

    def to_pandas(self):
        import pandas
        return pandas.DataFrame(self.rows())

    def plot(self, ax=None):
        """The speedups with their 95% intervals, one bar per variant (matplotlib)."""
        import matplotlib.pyplot as plt
        ax = ax or plt.gca()
        rows = [v for v in self.variants if not v.is_baseline and v.interval]
        ax.errorbar([v.speedup for v in rows], range(len(rows)), fmt="o", capsize=4,
                    xerr=[[v.speedup - v.interval[0] for v in rows],
                          [v.interval[1] - v.speedup for v in rows]])
        ax.set_yticks(range(len(rows)), [v.label for v in rows])
        ax.axvline(0, color="grey", linewidth=0.8)
        ax.set_xlabel("speedup vs %s, percent (95%% interval)"
                      % (self.baseline.label if self.baseline else "baseline"))
        return ax


def show_text(path):
    """The table `sagerun show PATH` prints."""
    return _lib.capture(lambda stream: _lib.call("sagerun_report_show", os.fsencode(path), 0,
                                                 stream))


def from_result(result):
    """A Report of a sagerun_compare_result handle: its JSON as the CLI writes it, and its
    table."""
    with tempfile.TemporaryDirectory(prefix="sagerun-") as folder:
        path = os.path.join(folder, "report.json")
        _lib.call("sagerun_compare_result_write_json", result, os.fsencode(path), None)
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        return Report(data, show_text(path))


def load(path):
    """A report (ours or the seed's) as a Report; a sweep summary as its JSON (a dict)."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if isinstance(data, dict) and "variants" in data:
        return Report(data, show_text(path))
    return data


class Diff:
    """What diff() returns: the table `sagerun diff` prints (str), and regression,
    lost_byte_exact, missing, lost_acceptance (bools: the findings)."""

    def __init__(self, text, findings):
        self.text, self.findings = text, findings
        self.regression = bool(findings & 0x1)
        self.lost_byte_exact = bool(findings & 0x2)
        self.missing = bool(findings & 0x4)
        self.lost_acceptance = bool(findings & 0x8)

    def __bool__(self):
        return self.findings != 0

    def __str__(self):
        return self.text


def diff(old, new, threshold=1.0, relative=True):
    """Two reports (paths or Reports) of the same workload, variant by variant, as `sagerun diff`
    judges them: relative (each variant's time over its own run's baseline's) by default, as the
    CLI; relative=False judges by time (`sagerun diff --absolute`)."""
    with tempfile.TemporaryDirectory(prefix="sagerun-") as folder:
        paths = []
        for name, r in (("old", old), ("new", new)):
            if isinstance(r, Report):
                r = r.save(os.path.join(folder, name + ".json"))
            elif not isinstance(r, (str, os.PathLike)):
                raise TypeError("%s: expected a Report or a path, got %s"
                                % (name, type(r).__name__))
            paths.append(os.fsencode(r))
        opts = _lib.DiffOptions()
        _lib.lib().sagerun_report_diff_options_init(ctypes.byref(opts))
        opts.threshold_percent, opts.relative = float(threshold), 1 if relative else 0
        findings = ctypes.c_uint(0)
        text = _lib.capture(lambda s: _lib.call("sagerun_report_diff", paths[0], paths[1],
                                                ctypes.byref(opts), s, ctypes.byref(findings)))
        return Diff(text, findings.value)
