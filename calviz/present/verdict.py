"""The overall verdict: one sentence that weighs T-Cal, the ECE intervals and the classical tests,
and, when the methods disagree, why (power, sample size, what each one measures).

No statistics and no GUI import: every number comes from a result object.
"""

from __future__ import annotations

import numpy as np

from calviz.present.text import tcal_decision

__all__ = ["overall_verdict"]


def _excludes_zero(interval) -> bool | None:
    """Whether an ECE interval's lower end is above 0 (None: no interval)."""
    if interval is None:
        return None
    low = interval.confidence_interval()[0]
    return bool(low is not None and np.isfinite(low) and float(low) > 0.0)


def overall_verdict(*, tcal=None, interval=None, bootstrap=None, classical=None,
                    alpha: float | None = None) -> tuple[str, list[str]]:
    """The one verdict calviz states about calibration, and — when its methods disagree — why.

    T-Cal leads: it is the test of calibration itself (every binning scale, error rate controlled at
    any n; Lee, Huang, Hassani and Dobriban, 2023).  The classical tests each look for one pattern, the
    ECE interval (Sun, Chaudhari, Barnett and Dobriban, 2024) measures the size of the binned error
    rather than testing it; where one of them disagrees with T-Cal the reasons say what it measures and
    why it can differ (power, sample size).  The app, the report and ``calviz check`` show this text.

    Parameters
    ----------
    tcal : TCalResult, optional
        The T-Cal result (the resampled one when computed).
    interval, bootstrap : ECEInterval, optional
        The asymptotic and the percentile-bootstrap ECE intervals.
    classical : ClassicalTests, optional
        The classical tests.
    alpha : float, optional
        The level of the classical decisions (default: T-Cal's, else the tests' own).

    Returns
    -------
    (str, list of str)
        The verdict (one sentence) and the reasons for each disagreement (empty when all agree).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present.verdict import overall_verdict
    >>> rng = np.random.default_rng(2)
    >>> p = rng.uniform(size=3000)
    >>> y = (rng.uniform(size=3000) < p).astype(int)          # calibrated
    >>> verdict, reasons = overall_verdict(
    ...     tcal=calviz.adaptive_tcal(y, p, resampling="analytic"), interval=calviz.ece_interval(y, p))
    >>> verdict
    'No evidence of miscalibration: T-Cal does not reject and the ECE interval includes 0.'
    >>> reasons
    []
    """
    if alpha is None:
        alpha = getattr(tcal, "alpha", None) or getattr(classical, "alpha", None)
    decision = tcal_decision(tcal) if tcal is not None else None
    n = next((int(r.n) for r in (tcal, interval, classical) if getattr(r, "n", None) is not None), None)
    rows = [r for r in classical.rows(alpha) if r["reject"] is not None] if classical is not None else []
    rejecting = [r["test"] for r in rows if r["reject"]]
    asymptotic, boot = _excludes_zero(interval), _excludes_zero(bootstrap)
    # the evidence, in words: (says miscalibrated?, phrase)
    evidence = []
    if decision in ("reject", "accept"):
        evidence.append((decision == "reject", "T-Cal rejects" if decision == "reject" else
                         "T-Cal does not reject"))
    if rows:
        k = len(rejecting)
        if len(rows) == 1:  # (a weighted view runs fewer tests)
            phrase = "the one classical test " + ("rejects" if k else "does not reject")
        elif k == len(rows):
            phrase = f"all {k} classical tests reject"
        else:  # the verb agrees with k: "1 of the 2 tests rejects", "none … rejects"
            phrase = (f"{k} of the {len(rows)} classical tests " + ("rejects" if k == 1 else "reject") if k
                      else f"none of the {len(rows)} classical tests rejects")
        evidence.append((k > 0, phrase))
    if asymptotic is not None:
        evidence.append((asymptotic, "the ECE interval excludes 0" if asymptotic else
                         "the ECE interval includes 0"))
    if boot is not None:
        evidence.append((boot, "the bootstrap interval excludes 0" if boot else
                         "the bootstrap interval includes 0"))
    if not evidence:
        return "No verdict: no test could be computed.", []
    listed = ", ".join(p for _, p in evidence[:-1]) + (" and " if len(evidence) > 1 else "") + evidence[-1][1]
    if decision in ("reject", "accept"):
        miscalibrated = decision == "reject"
    elif decision == "undecided":
        return f"Undecided: T-Cal cannot settle the test yet; {listed}.", []
    else:  # no T-Cal: the tests (not the intervals) decide
        miscalibrated = bool(rejecting) if rows else bool(asymptotic)
    head = "Miscalibrated" if miscalibrated else "No evidence of miscalibration"
    verdict = f"{head}: {listed}."
    small = n is not None and n < 500
    at_n = f" at n = {n:,}" if n is not None else ""
    reasons = []
    if miscalibrated and asymptotic is False:
        reasons.append(
            "The ECE interval measures how large the binned calibration error is; reaching down to 0 means "
            f"the data{at_n} cannot bound that size away from 0 at this level — not that the model is "
            "calibrated. It is conservative at small n (in simulations at n = 100–500 its 90% interval "
            "covered 88–99% of the time), while the tests are built to decide.")
    if miscalibrated and boot and asymptotic is False:
        reasons.append(
            "The percentile bootstrap excludes 0 where the asymptotic interval does not: at small n the "
            "bootstrap interval is too narrow (its 90% interval covered only 72–89% of the time at "
            "n = 100–500), so its exclusion of 0 is weaker evidence than the tests' rejections.")
    if not miscalibrated and (asymptotic or boot):
        reasons.append(
            "An ECE interval excludes 0 while T-Cal does not reject: the interval looks at one binning; "
            "T-Cal tests every number of bins and pays for it in power (its level is split over the "
            "scales), so a small error at one binning may not reach significance"
            + (" — and the bootstrap interval is too narrow at small n" if boot and not asymptotic else "")
            + ".")
    if decision == "reject" and len(rejecting) < len(rows):
        silent = [r["test"] for r in rows if not r["reject"]]
        reasons.append(
            f"{', '.join(silent)} do{'es' if len(silent) == 1 else ''} not reject: each classical test "
            "looks for one pattern (overall bias, a wrong slope, a one-signed excess over a range of "
            "predictions); T-Cal compares the error at every number of bins with what chance gives, so it "
            "also finds miscalibration that cancels out for a test aimed at another pattern.")
    if decision == "accept" and rejecting:
        reasons.append(
            f"{', '.join(rejecting)} reject{'s' if len(rejecting) == 1 else ''}: a test aimed at one pattern "
            "has more power against exactly that pattern than T-Cal, which splits its level over every "
            "scale; their rejection points to that pattern, but it is not confirmed by the test of "
            "calibration as a whole"
            + (f"{at_n}, where small errors are hard to detect" if small else "") + ".")
    if small and reasons:
        reasons.append(
            f"With {n:,} rows the classical p-values are exact or resampled (asymptotic ones need 500 rows "
            "or more), so every test keeps its error rate; what is lost at this size is power.")
    return verdict, reasons
