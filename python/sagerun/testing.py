"""pytest helpers: fail a test on a report's answers, with the interval in the message.

    def test_my_kernel():
        r = sagerun.compare("reference", my_kernel, shape=(1, 256, 2, 64), rounds=10)
        sagerun.testing.assert_accepted(r)                      # byte-exact or in tolerance
        sagerun.testing.assert_not_slower(r, "my-kernel", margin=5)
"""


class SagerunAssertion(AssertionError):
    """What the helpers raise (an AssertionError: pytest shows its message)."""


def _entries(report, label):
    if label is not None:
        return [report[label]]
    return [v for v in report.variants if not v.is_baseline]


def _failed(v):
    return v.failure and "%s failed in %s: %s" % (v.label, v.failure_phase, v.failure)


def assert_byte_exact(report, label=None):
    """Every variant (or label) ran and its output is the baseline's, byte for byte."""
    for v in _entries(report, label):
        if _failed(v) or not v.byte_exact:
            raise SagerunAssertion(_failed(v) or "%s is not byte-exact with the baseline "
                                   "(accuracy: cos %s, relative L1 %s; speedup %s)"
                                   % (v.label, v.cosine, v.relative_l1, v.interval_text()))


def assert_accepted(report, label=None):
    """Every variant (or label) ran and is byte-exact or within its tolerance (max_ulp=,
    min_cos=, max_rel_l1= given to compare)."""
    for v in _entries(report, label):
        if _failed(v) or not v.accepted:
            tol = (v.entry.get("tolerance") or {}).get("detail")
            raise SagerunAssertion(_failed(v) or "%s is neither byte-exact nor within its "
                                   "tolerance (%s)" % (v.label, tol or "no tolerance given"))


def assert_not_slower(report, label=None, margin=None):
    """No variant (or label) is slower than the baseline by more than margin percent: fails
    when the whole 95% interval lies below -margin (default: the report's noise threshold)."""
    if margin is None:
        margin = report.data.get("noise_threshold_percent") or 1.0
    for v in _entries(report, label):
        if _failed(v):
            raise SagerunAssertion(_failed(v))
        if v.interval is not None and v.interval[1] < -margin:
            raise SagerunAssertion("%s is slower than the baseline by more than %g%%: speedup "
                                   "%s (95%% interval)" % (v.label, margin, v.interval_text()))


def assert_faster(report, label=None, margin=0.0):
    """Every variant (or label) is faster than the baseline by more than margin percent: the
    whole 95% interval lies above +margin."""
    for v in _entries(report, label):
        if _failed(v):
            raise SagerunAssertion(_failed(v))
        if v.interval is None or v.interval[0] <= margin:
            raise SagerunAssertion("%s is not shown faster than the baseline by more than %g%%: "
                                   "speedup %s (95%% interval)"
                                   % (v.label, margin, v.interval_text()))
