"""Every sentence calviz shows: titles, captions, verdicts and notes of the views, the report and the
command line, written once and read by every surface.

Nothing here computes a statistic: each function reads a result object (or its JSON dict) and says what
it shows.  No GUI import.
"""

from __future__ import annotations

import numpy as np

from calviz._results import pvalue_phrase
from calviz.present.frames import bins, critical_values_drawn, is_multi, rank_tables
from calviz.present.labels import format_interval_end, format_value, method_name
from calviz.present.verification import CORP_MARKS, corp_caption
from calviz.targets import simplex_cells

__all__ = [
    "TCAL_DECISION_WORDS", "TCAL_MISSING", "RELIABILITY_MISSING", "INTERVAL_MISSING", "DISTANCE_MISSING",
    "tcal_decision", "tcal_decision_words", "decision_cell", "scalar_reliability_title",
    "rank_reliability_title", "reliability_caption", "tcal_verdict", "tcal_marks", "tcal_caption",
    "tcal_view_note", "running_note", "tcal_hidden_note", "RELIABILITY_MARKS", "INTERVAL_MARKS",
    "reliability_section_caption", "tcal_section_caption", "interval_section_caption", "interval_title",
    "bins_phrase", "interval_caption", "BOOTSTRAP_NOTE", "interval_details", "distance_title",
    "distance_caption", "classical_caption", "weights_note",
]


def scalar_reliability_title(reliability) -> str:
    """Default title of a scalar reliability diagram: non-empty bins, n and the bins that miss the diagonal.

    Parameters
    ----------
    reliability : ReliabilityData
        From :func:`calviz.reliability`.

    Returns
    -------
    str
        The title.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import text
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> rel = calviz.reliability(y, p, n_bins=10)
    >>> text.scalar_reliability_title(rel)
    '10 non-empty of 10 bins, n = 500, 4 miss the diagonal'
    """
    if reliability is None:
        return RELIABILITY_MISSING
    b = bins(reliability)
    sel = b["sel"]
    n_missed = int((~b["covered"] & sel).sum())
    return (f"{int(sel.sum())} non-empty of {b['counts'].shape[0]} bins, n = {int(b['counts'].sum()):,}, "
            f"{n_missed} miss the diagonal")


def rank_reliability_title(multi, tables: dict | None = None) -> str:
    """Default title of the top-k view: k, n and how many bins miss the diagonal.

    Parameters
    ----------
    multi : MultiReliability
        Of kind ``"rank"``.
    tables : dict, optional
        :func:`rank_tables` of it, if already computed.

    Returns
    -------
    str
        The title.

    Examples
    --------
    >>> import calviz
    >>> from calviz.present import text
    >>> from calviz.analysis import AnalysisOptions, compute_reliability
    >>> data = calviz.datasets.load_dataset("scenario-perturbed_top2", n=2000)
    >>> multi = compute_reliability(data, AnalysisOptions(target="topk", top_k=2))
    >>> text.rank_reliability_title(multi)
    'top-2: one curve per rank · n = 2,000 · 6 of 14 bins miss the diagonal'
    """
    if multi is None:
        return RELIABILITY_MISSING
    tables = tables or rank_tables(multi)
    return (f"top-{len(tables['lines'])}: one curve per rank · n = {int(multi.n):,} · "
            f"{tables['n_missed']} of {tables['n_bins']} bins miss the diagonal")


def reliability_caption(reliability) -> str:
    """What a per-rank or per-class reliability view shows, in one or two sentences.

    Parameters
    ----------
    reliability : ReliabilityData or MultiReliability
        A reliability result.

    Returns
    -------
    str
        The caption ('' for a scalar diagram).

    Examples
    --------
    >>> import calviz
    >>> from calviz.present import text
    >>> from calviz.analysis import AnalysisOptions, compute_reliability
    >>> data = calviz.datasets.load_dataset("scenario-perturbed_top2", n=2000)
    >>> multi = compute_reliability(data, AnalysisOptions(target="topk", top_k=2))
    >>> import textwrap
    >>> print(textwrap.fill(text.reliability_caption(multi), 90))
    Top-2 calibration: one curve per rank r = 1..2: x = the r-th largest predicted probability
    (bin mean), y = how often the true class is the r-th ranked class, whiskers = 95% per-bin
    intervals, dashed = the diagonal (perfect calibration); markers outlined in crimson miss
    the diagonal. Each rank's marginal being calibrated is necessary (not sufficient) for
    top-1-to-k calibration. Below: the histogram of each rank's probabilities.
    """
    if not is_multi(reliability):
        return ""
    kind = reliability.kind
    level = reliability.panels[0].level if len(reliability.panels) else None
    level_txt = f"{100 * float(level):.0f}% " if level is not None else ""
    if kind == "rank":
        k = len(reliability.panels)
        return (
            f"Top-{k} calibration: one curve per rank r = 1..{k}: x = the r-th largest predicted "
            "probability (bin mean), y = how often the true class is the r-th ranked class, whiskers = "
            f"{level_txt}per-bin intervals, dashed = the diagonal (perfect calibration); markers outlined in "
            "crimson miss the diagonal. Each rank's "
            "marginal being calibrated is necessary (not sufficient) for top-1-to-k calibration. Below: "
            "the histogram of each rank's probabilities."
        )
    shown = len(reliability.panels)
    K = reliability.n_classes
    omitted = int(reliability.n_omitted or 0)
    text = (
        "Full calibration: one panel per class c, x = predicted P(class c), y = observed frequency of "
        f"class c, whiskers = {level_txt}per-bin intervals; crimson bins' intervals miss the diagonal, teal "
        "ones cover it. Every class marginal being calibrated is necessary (not sufficient) for full "
        "calibration. Every panel: x and y from 0 to 1, dashed = the diagonal; title: class · number of "
        "samples of that class."
    )
    if omitted:
        text += (
            f" Showing the {shown} classes with the most samples of K = {K} ({omitted} omitted)."
        )
    return text


#: every wording of a T-Cal decision, by where it stands: a view's title, the caption after "T-Cal
#: (method): ", a sentence whose subject is "T-Cal" (the command line, the report's summary) and a table
#: cell (comparisons, groups).  "undecided": the sequential rule reached its resampling cap with the
#: p-value's Monte Carlo interval containing α, which is not a rejection.
TCAL_DECISION_WORDS = {
    "title": {"reject": "REJECT", "accept": "not rejected", "undecided": "UNDECIDED"},
    "caption": {"reject": "REJECT calibration", "accept": "calibration not rejected",
                "undecided": "undecided at this resampling budget"},
    "sentence": {"reject": "REJECTS calibration", "accept": "does not reject calibration",
                 "undecided": "is UNDECIDED at this resampling budget"},
    "cell": {"reject": "rejects", "accept": "does not reject", "undecided": "undecided (not rejected)"},
}

#: what a view, a caption or a summary says when T-Cal could not be computed
TCAL_MISSING = "T-Cal not available"
#: ... the reliability diagram
RELIABILITY_MISSING = "reliability data not available"
#: ... the ECE interval
INTERVAL_MISSING = "ECE interval not available"
#: ... the distance bounds
DISTANCE_MISSING = "distance bounds not available"


def tcal_decision(tcal) -> str | None:
    """The decision of a T-Cal result: "reject", "accept" or "undecided" (None: no result).

    Reads a result object, its JSON dict (``decision`` / ``reject``) or a decision string ("not rejected",
    as ``calviz check --json`` writes it, is "accept").

    Parameters
    ----------
    tcal : TCalResult, dict, str or None
        The result, its dict, or a decision.

    Returns
    -------
    str or None
        The decision.

    Examples
    --------
    >>> from calviz.present import text
    >>> text.tcal_decision({"reject": False, "decision": "undecided"}), text.tcal_decision("not rejected")
    ('undecided', 'accept')
    """
    if tcal is None:
        return None
    if isinstance(tcal, str):
        return {"not rejected": "accept"}.get(tcal, tcal)
    if isinstance(tcal, dict):
        decision, reject = tcal.get("decision"), tcal.get("reject")
    else:
        decision, reject = getattr(tcal, "decision", None), tcal.reject
    if decision == "undecided":
        return "undecided"
    if reject is None:
        return None
    return "reject" if bool(reject) else "accept"


def tcal_decision_words(tcal, form: str = "cell") -> str:
    """A T-Cal decision in words, in one of the forms of :data:`TCAL_DECISION_WORDS`.

    Parameters
    ----------
    tcal : TCalResult, dict, str or None
        The result, its dict or a decision (:func:`tcal_decision`).
    form : {"title", "caption", "sentence", "cell"}, default "cell"
        Where the words stand.

    Returns
    -------
    str
        The words; "—" when there is no decision.

    Examples
    --------
    >>> from calviz.present import text
    >>> text.tcal_decision_words("reject", "sentence"), text.tcal_decision_words("accept")
    ('REJECTS calibration', 'does not reject')
    """
    decision = tcal_decision(tcal)
    return "—" if decision is None else TCAL_DECISION_WORDS[form][decision]


def decision_cell(reject) -> str:
    """A test's decision in a table cell: "rejects", "does not reject", "—" when it was not made.

    Parameters
    ----------
    reject : bool or None
        Whether the test rejects.

    Returns
    -------
    str
        The cell.

    Examples
    --------
    >>> from calviz.present import text
    >>> text.decision_cell(True), text.decision_cell(False), text.decision_cell(None)
    ('rejects', 'does not reject', '—')
    """
    return "—" if reject is None else tcal_decision_words("reject" if reject else "accept", "cell")


def tcal_verdict(tcal, *, method: bool = True) -> tuple[str, str]:
    """The T-Cal view's title and one-line caption, both from the result alone.

    The title gives the decision and the adjusted p-value (e.g. "REJECT · p = 0.0120 (Y-only
    resampling)", "UNDECIDED · …"), the caption is :func:`tcal_caption`.  Everything the live view and the
    report say about the verdict is written here.

    Parameters
    ----------
    tcal : TCalResult
        From :func:`calviz.adaptive_tcal`.
    method : bool, default True
        Name the critical values' method in the title too (the caption always does; a half-width card
        has no room for both).

    Returns
    -------
    tuple of str
        (title, caption).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import text
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> t = calviz.adaptive_tcal(y, p, resampling="analytic")
    >>> title, caption = text.tcal_verdict(t)
    >>> title
    'REJECT · p < 0.0001 (analytic critical values)'
    """
    if tcal is None:
        return TCAL_MISSING, tcal_caption(None)
    decision = tcal_decision_words(tcal, "title")
    p = pvalue_phrase(tcal.pvalue, bound=tcal.pvalue_is_bound)
    named = f" ({method_name(tcal.method)})" if method else ""
    return f"{decision} · {p}{named}", tcal_caption(tcal)


def tcal_view_note(tcal, *, target: str | None = None) -> str:
    """The live T-Cal view's caption: the verdict, what the marks mean, and what limits this result.

    :func:`tcal_caption`, the resamples of a method whose caption does not state them, :func:`tcal_marks`,
    why a top-k analysis shows the full vector's test, and why a test with too few resamples cannot
    reject.

    Parameters
    ----------
    tcal : TCalResult or None
        The result shown (None: still computing or refused).
    target : str, optional
        The target the analysis asked for ("topk": T-Cal tested the full vector instead).

    Returns
    -------
    str
        The caption (without a final period).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import text
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> print(text.tcal_view_note(calviz.adaptive_tcal(y, p, resampling="analytic")))
    T-Cal (analytic critical values): REJECT calibration at α = 0.05; adjusted p < 0.0001. Solid line:
    the statistic at each number of bins; dashed: its critical value; dots crimson where that bin count
    rejects (its p-value is at most α over the number of scales), teal where it does not
    """
    note = tcal_caption(tcal)
    if tcal is not None and tcal.n_resamples and tcal.method not in ("analytic", "y_only", "consistency"):
        note += f" ({tcal.n_resamples} resamples)"  # (the resampled methods' caption states them)
    note += ". " + tcal_marks(tcal).rstrip(".")
    if tcal is not None and target == "topk" and tcal.target == "full":
        note += (". T-Cal has no top-k form: it tests the full probability vector, whose calibration "
                 "implies the top-k vector's")
    floor = None if tcal is None else tcal.min_attainable_pvalue
    if floor is not None and float(floor) > float(tcal.alpha):
        note += (f". With {tcal.n_resamples} resamples the smallest attainable p-value is "
                 f"{float(floor):.3g} > α, so this test cannot reject: raise the number of resamples")
    return note


def running_note(method, shown, *, alpha: float | None = None) -> str:
    """What a T-Cal view says while its resampled test runs.

    Parameters
    ----------
    method : str
        The resampling method running.
    shown : TCalResult or None
        The result shown meanwhile (the analytic test, or the test drawn at another α), if any.
    alpha : float, optional
        The level the running test decides at: a ``shown`` test at another level is named by its own.

    Returns
    -------
    str
        The note.

    Examples
    --------
    >>> from calviz.present import text
    >>> text.running_note("y_only", None)
    'Y-only resampling running… (computing)'
    """
    if shown is None:
        meanwhile = "computing"
    elif alpha is not None and float(shown.alpha) != float(alpha):
        meanwhile = f"the test at α = {float(shown.alpha):g} is shown meanwhile"
    else:
        meanwhile = "the analytic result is shown meanwhile"
    return f"{method_name(method)} running… ({meanwhile})"


def tcal_marks(tcal) -> str:
    """What the T-Cal view's marks mean, for its caption.

    The dashed critical value is named only when one was computed: a sequential test that settled
    before estimating them, or a tail bound that settled it without resampling, computes none.

    Parameters
    ----------
    tcal : TCalResult or None
        The result shown (None: the general sentence).

    Returns
    -------
    str
        The sentence.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import text
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p).astype(int)
    >>> print(text.tcal_marks(calviz.adaptive_tcal(y, p, resampling="analytic")).split(";")[1])
     dashed: its critical value
    >>> "dashed" in text.tcal_marks(calviz.adaptive_tcal(y, p, seed=0))   # settled before estimating them
    False
    """
    dashed = "; dashed: its critical value" if tcal is None or critical_values_drawn(tcal) else ""
    return (f"Solid line: the statistic at each number of bins{dashed}; dots crimson where that bin count "
            "rejects (its p-value is at most α over the number of scales), teal where it does not.")


def tcal_caption(tcal) -> str:
    """One line on a T-Cal result: decision, adjusted p-value and how critical values were obtained.

    With its Monte Carlo interval and the resamples used when resampled.

    Parameters
    ----------
    tcal : TCalResult
        From :func:`calviz.adaptive_tcal`.

    Returns
    -------
    str
        The caption.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import text
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> t = calviz.adaptive_tcal(y, p, resampling="analytic")
    >>> import textwrap
    >>> print(textwrap.fill(text.tcal_caption(t), 90))
    T-Cal (analytic critical values): REJECT calibration at α = 0.05; adjusted p < 0.0001
    """
    if tcal is None:
        return TCAL_MISSING
    alpha = tcal.alpha
    p = tcal.pvalue
    method = tcal.method
    alpha_txt = f" at α = {float(alpha):g}" if alpha is not None else ""
    p_txt = pvalue_phrase(p, bound=tcal.pvalue_is_bound)
    decision = tcal_decision_words(tcal, "caption")
    text = f"T-Cal ({method_name(method)}): {decision}{alpha_txt}; adjusted {p_txt}"
    resamples = tcal.n_resamples or 0
    interval = tcal.pvalue_interval
    if interval is not None and resamples and method in ("y_only", "consistency"):
        low, high = (float(v) for v in interval)
        text += (f" (Monte Carlo interval [{format_interval_end(low)}, {format_interval_end(high)}], "
                 f"{resamples} resamples")
        risk = tcal.resampling_risk
        if tcal.max_resamples:
            # an undecided test says what the user can do (the engine's one advice text)
            text += f"; decision settled with resampling risk ≤ {float(risk):g}" if (
                tcal.decision != "undecided") else f"; {tcal.advice}"
        text += ")"
    elif method in ("y_only", "consistency") and not resamples and tcal.decision == "reject":
        text += " (settled without resampling: a tail bound of the null distribution is already below α)"
    if resamples and method in ("y_only", "consistency") and not critical_values_drawn(tcal):
        # the sequential rule stops once the p-value's Monte Carlo interval clears α
        text += "; no critical values are drawn: the decision was settled before they could be estimated"
    return text


def tcal_hidden_note(hidden: int, rejected: int = 0) -> str:
    """What the T-Cal caption says about the scales left off the axis.

    Parameters
    ----------
    hidden : int
        Scales tested but not drawn (:func:`tcal_shown_scales`).
    rejected : int
        How many of them reject.

    Returns
    -------
    str
        The note.

    Examples
    --------
    >>> from calviz.present import text
    >>> text.tcal_hidden_note(3)
    '3 finer scales with more bins than rows (mostly empty bins) tested but not drawn'
    >>> text.tcal_hidden_note(3, 2)
    '3 finer scales with more bins than rows (mostly empty bins) tested but not drawn (2 reject)'
    """
    note = (f"{hidden} finer scale{'s' if hidden != 1 else ''} with more bins than rows (mostly empty bins) "
            "tested but not drawn")
    return note + (f" ({rejected} reject{'s' if rejected == 1 else ''})" if rejected else "")


#: what the reliability diagram's marks mean (the caption under its scalar figure)
RELIABILITY_MARKS = (
    "Bars: observed frequency per bin, crimson where the bin's interval misses the diagonal, teal where "
    "it covers it; whiskers: per-bin intervals; dashed: the diagonal (perfect calibration); blue: the "
    "smooth curve and its band; grey, below: how many predictions fall in each bin; red, bottom: the "
    "witness w(v), far from 0 where the observed frequency is above (w > 0) or below (w < 0) the "
    "prediction."
)
#: what the ECE-interval figure's marks mean
INTERVAL_MARKS = (
    "Bars: the intervals (crimson when they exclude 0, teal when they include it); white dots: the "
    "point estimate; grey line: 0."
)


def reliability_section_caption(reliability) -> str:
    """The caption under the report's reliability figure: what its marks mean (vector targets: what is shown).

    For a vector target it says why the smooth curve and the witness are not drawn.

    Parameters
    ----------
    reliability : ReliabilityDiagram, RankReliability, ClassReliability, CORPReliability or None
        The analysis' reliability result (a CORP diagram in the ``corp`` mode).

    Returns
    -------
    str
        The caption.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import text
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p).astype(int)
    >>> text.reliability_section_caption(calviz.reliability(y, p)) == text.RELIABILITY_MARKS
    True
    """
    if is_multi(reliability):
        return reliability_caption(reliability) + (
            " The smooth curve and the smCE witness are defined for scalar predictions and are omitted for"
            f" the {reliability.target} target; the distance bounds (section 4) use the top-1"
            " reduction."
        )
    if type(reliability).__name__ == "CORPReliability":  # the CORP mode
        return f"{corp_caption(reliability)} {CORP_MARKS}"
    return RELIABILITY_MARKS


def tcal_section_caption(result) -> str:
    """The caption under the report's T-Cal figure: the verdict and what the marks mean.

    Parameters
    ----------
    result : TCalResult or None
        The test shown (the resampled one where computed).

    Returns
    -------
    str
        The caption.

    Examples
    --------
    >>> from calviz.present import text
    >>> text.tcal_section_caption(None) == f"{text.tcal_caption(None)}. {text.tcal_marks(None)}"
    True
    """
    return f"{tcal_caption(result)}. {tcal_marks(result)}"


def interval_section_caption(interval) -> str:
    """The caption under the report's ECE-interval figure: the interval in words and what the marks mean.

    Parameters
    ----------
    interval : ECEInterval or None
        From :func:`calviz.ece_interval`.

    Returns
    -------
    str
        The caption.

    Examples
    --------
    >>> from calviz.present import text
    >>> text.interval_section_caption(None).endswith(text.INTERVAL_MARKS)
    True
    """
    return f"{interval_caption(interval)} {INTERVAL_MARKS}"


def interval_title(interval) -> str:
    """The ECE-interval view's title: level and bin count of the interval.

    Parameters
    ----------
    interval : ECEInterval
        From :func:`calviz.ece_interval`.

    Returns
    -------
    str
        The title.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import text
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> ci = calviz.ece_interval(y, p, n_bins=10)
    >>> text.interval_title(ci)
    'ℓ2-ECE, 90% intervals (10 bins)'
    """
    if interval is None:
        return INTERVAL_MISSING
    level = interval.level
    n_bins = interval.n_bins
    head = "ℓ2-ECE with confidence interval"
    if level is not None:
        head = f"ℓ2-ECE, {100 * float(level):.0f}% intervals"
    if n_bins is not None:
        head += f" ({bins_phrase(int(np.asarray(n_bins).ravel()[0]), interval.target, interval.n_classes)})"
    return head


def bins_phrase(n_bins: int, target: str | None, n_classes: int | None) -> str:
    """'15 bins', or for full calibration of K > 2 classes '2 bins per axis, 512 simplex cells'.

    Parameters
    ----------
    n_bins : int
        Bins (per axis).
    target : str or None
        The result's target.
    n_classes : int or None
        K.

    Returns
    -------
    str
        The phrase.

    Examples
    --------
    >>> from calviz.present import text
    >>> text.bins_phrase(15, "top1", 10), text.bins_phrase(2, "full", 10)
    ('15 bins', '2 bins per axis, 512 simplex cells')
    """
    cells = simplex_cells(target, n_classes, n_bins)
    return f"{n_bins} bins" if cells is None else f"{n_bins} bins per axis, {cells:,} simplex cells"


def interval_caption(interval) -> str:
    """The ECE interval in words: what it says about calibration and why its lower end is there.

    Also why the bootstrap row may not contain the point estimate — plain sentences, no formulas (the
    case rule is :func:`interval_details`).

    Parameters
    ----------
    interval : ECEInterval
        From :func:`calviz.ece_interval`.

    Returns
    -------
    str
        The caption.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import text
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> ci = calviz.ece_interval(y, p, n_bins=10)
    >>> import textwrap
    >>> print(textwrap.fill(text.interval_caption(ci), 90))
    90% interval for the ℓ2-ECE: [0.0777, 0.1385]. Miscalibrated: the estimate is moderately
    far from 0; the interval starts at half of it (on the squared scale). The bootstrap row
    resamples (prediction, label) pairs of the same statistic; repeated rows in a bin inflate
    it, so with few rows per bin its interval can lie above the point estimate.
    """
    if interval is None:
        return INTERVAL_MISSING
    regime = str(interval.regime or "")
    level = interval.level
    level_txt = f"{100 * float(level):.0f}% " if level is not None else ""
    low, high = interval.confidence_interval()
    head = f"{level_txt}interval for the ℓ2-ECE: [{format_value(low)}, {format_value(high)}]. "
    kind = regime.split(":", 1)[0].strip().lower()
    explain = {
        "calibrated": "Consistent with calibration: the estimate is within the noise of a calibrated "
        "model, so the interval starts at 0.",
        "far": "Clearly miscalibrated: the estimate is far from 0, so the interval is centred on it.",
        "middle": "Miscalibrated: the estimate is moderately far from 0; the interval starts at half of it "
        "(on the squared scale).",
        # T₊ < 2 z₁ s: small for its own noise, which says nothing about calibration until the lower end does
        "near": "Miscalibrated: the interval excludes 0, though the estimate is small for its noise, so the "
        "interval starts a one-sided error margin below it." if low is not None and float(low) > 0 else
        "Consistent with calibration: the estimate is small for its noise, so the interval reaches 0.",
    }.get(kind)
    if explain is None:
        explain = (
            f"{regime}."
            if regime
            else (
                "Excludes 0: miscalibrated."
                if low is not None and float(low) > 0
                else "Includes 0: consistent with calibration."
            )
        )
    return head + explain + " " + BOOTSTRAP_NOTE


#: why the percentile-bootstrap row can lie beside (not around) the point estimate, in one sentence
BOOTSTRAP_NOTE = (
    "The bootstrap row resamples (prediction, label) pairs of the same statistic; repeated rows in a bin "
    "inflate it, so with few rows per bin its interval can lie above the point estimate."
)


def interval_details(interval) -> str:
    """The case rule that set the interval's lower end, as a formula (for a tooltip or "more").

    Parameters
    ----------
    interval : ECEInterval
        From :func:`calviz.ece_interval`.

    Returns
    -------
    str
        The rule.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import text
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> ci = calviz.ece_interval(y, p, n_bins=10)
    >>> text.interval_details(ci)[:47]
    '2 z₁ s ≤ T₊ < 2 z₂ s, so the lower end is T₊/2.'
    """
    regime = str(getattr(interval, "regime", "") or "")
    kind = regime.split(":", 1)[0].strip().lower()
    rule = {
        "calibrated": "T₊ < z₁ × the exact null sd of T, so the lower end is 0.",
        "far": "T₊ ≥ 2 z₂ s, so the interval is T₊ ± z₂ s.",
        "middle": "2 z₁ s ≤ T₊ < 2 z₂ s, so the lower end is T₊/2.",
        "near": "T₊ < 2 z₁ s, so the lower end is max(T₊ − z₁ s, 0).",
    }.get(kind, "")
    from calviz.plots import VIEW_EXPLANATIONS  # (the views' explanations: with the views)

    return (f"{rule} " if rule else "") + VIEW_EXPLANATIONS["interval"][1]


def distance_title(bounds) -> str | None:
    """The distance view's title: the implied interval for dCE.

    Parameters
    ----------
    bounds : DistanceBounds
        From :func:`calviz.distance_bounds`.

    Returns
    -------
    str or None
        'implied dCE ∈ [low, high]' (None when it has no bounds).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import text
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> b = calviz.distance_bounds(y, p, grid_step=0.01)
    >>> text.distance_title(b)
    'implied dCE ∈ [0.0808, 0.1432]'
    """
    lo, hi = (bounds.lower, bounds.upper) if bounds is not None else (None, None)
    if lo is None or hi is None:
        return None
    return f"implied dCE ∈ [{format_value(lo)}, {format_value(hi)}]"


def distance_caption(bounds) -> str:
    """The distance view's caption: glyphs, the empirical-distribution caveat and the kernel note.

    Parameters
    ----------
    bounds : DistanceBounds
        From :func:`calviz.distance_bounds`.

    Returns
    -------
    str
        One short paragraph.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import text
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> b = calviz.distance_bounds(y, p, grid_step=0.01)
    >>> len(text.distance_caption(b)) > 0
    True
    """
    lower, upper = (bounds.lower, bounds.upper) if bounds is not None else (None, None)
    txt = ""
    if lower is not None and upper is not None:
        txt = (f"Implied interval for the distance to calibration dCE: [{format_value(lower)}, "
               f"{format_value(upper)}]. ")
    return txt + (
        "Blue dots: each measure's value; dark bar (bottom row): the interval for dCE they imply (hover for "
        "the inequality behind each end). All measures describe this sample (its empirical distribution), "
        "not the population, so the "
        "bar stays above 0 even for a calibrated model: T-Cal and the ECE interval say whether the error "
        "is real. kCE uses the Laplace kernel with bandwidth 1 (the smooth-curve bandwidth "
        "option does not change it): a Gaussian kernel would not be consistent (Błasiok et al. 2023, "
        "Thm 8.6)."
    )


def classical_caption(tests, *, alpha: float | None = None) -> str:
    """One line on the classical tests: the level, target, n, and the MCE and ACE computed with them.

    Parameters
    ----------
    tests : ClassicalTests
        From :func:`calviz.classical_tests`.
    alpha : float, optional
        The level shown.

    Returns
    -------
    str
        The caption.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import text
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> tests = calviz.classical_tests(y, p, measures=True)
    >>> import textwrap
    >>> print(textwrap.fill(text.classical_caption(tests), 90))
    at α = 0.05 (binary, n = 500; asymptotic p-values) · MCE 0.2609 (largest gap observed −
    predicted, 15 equal-width bins) · ACE 0.1110 (15 equal-mass bins, averaged over classes)
    """
    level = tests.alpha if alpha is None else alpha
    text = f"at α = {level:g} ({tests.target}, n = {tests.n:,}; asymptotic p-values)"
    mce, ace = tests.measures.get("mce"), tests.measures.get("ace")
    if mce is not None:
        # (no "|": a caption may be rendered as Markdown, where pipes start a table)
        text += (f" · MCE {format_value(mce.value)} (largest gap observed − predicted, {mce.n_bins} "
                 "equal-width bins)")
    if ace is not None:
        text += f" · ACE {format_value(ace.value)} ({ace.n_bins} equal-mass bins, averaged over classes)"
    return text


def weights_note(column: str | None, unweighted: tuple) -> str:
    """The one note on sample weights: which column weights the rows, and the views that ignore it.

    Parameters
    ----------
    column : str or None
        The weight column's name ("": weights without a name shown; None: no weights).
    unweighted : tuple of str
        The labels of the views that ignore the weights (:func:`calviz.analysis.views.unweighted_views`).

    Returns
    -------
    str
        One sentence, or "" without weights.

    Examples
    --------
    >>> from calviz.present.text import weights_note
    >>> weights_note("w", ("T-Cal (analytic)", "ECE interval"))
    "Rows weighted by column 'w'; not weighted: T-Cal (analytic), ECE interval."
    """
    if column is None:
        return ""
    shown = f"column {column!r}" if column else "their sample weights"
    tail = f"; not weighted: {', '.join(unweighted)}" if unweighted else ""
    return f"Rows weighted by {shown}{tail}."
