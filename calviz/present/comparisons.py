"""Comparisons in words and tables: model against model, before / after recalibration, groups.

:func:`comparison_summary` turns the results of :func:`calviz.compare`, :func:`calviz.recalibrate` and
:func:`calviz.calibration_by_group` into one JSON-ready dict (``calviz check --json`` prints it);
:func:`comparison_lines` writes it as ``calviz check``'s text and :func:`comparison_html` as the report's
sections (the command line's report and the dashboard's export).  The sentences both read are written
once here, and a T-Cal decision in the words of :mod:`calviz.present.text`.  No GUI import.
"""

from __future__ import annotations

import html

from calviz._results import format_number, format_pvalue, pvalue_phrase, strict_json
from calviz.present.text import tcal_decision_words

__all__ = ["comparison_summary", "comparison_lines", "comparison_html", "GROUP_STATUS", "tcal_pvalue_text",
           "difference_sentence", "holm_note", "recalibration_sentence", "decomposition_text",
           "decomposition_contrast"]


def _decomposition_part(split) -> dict | None:
    if split is None:
        return None
    return {"score": split.score, "mean_score": split.mean_score, "mcb": split.mcb, "dsc": split.dsc,
            "unc": split.unc}


def _model_part(interval, tcal, split=None) -> dict:
    return {
        "decomposition": _decomposition_part(split),
        "ece": None if interval is None else {"estimate": interval.estimate, "low": interval.low,
                                              "high": interval.high, "level": interval.level},
        "tcal": None if tcal is None else {"reject": bool(tcal.reject), "decision": tcal.decision,
                                           "pvalue": float(tcal.pvalue),
                                           "pvalue_is_bound": tcal.pvalue_is_bound,
                                           "sequential": bool(tcal.max_resamples)},
    }


def _comparison_dict(c) -> dict:
    return {
        "names": list(c.names), "difference": c.difference, "low": c.low, "high": c.high, "level": c.level,
        "se": c.se, "pvalue": c.pvalue, "reject": c.reject, "better": c.better, "verdict": c.verdict,
        "n": c.n, "n_bins": c.n_bins, "target": c.target, "method": c.method,
        "ece_sq": {c.names[0]: c.ece_sq_a, c.names[1]: c.ece_sq_b},
        "models": {c.names[0]: _model_part(c.ece_a, c.tcal_a, getattr(c, "decomposition_a", None)),
                   c.names[1]: _model_part(c.ece_b, c.tcal_b, getattr(c, "decomposition_b", None))},
    }


def _groups_dict(g) -> dict:
    rows = []
    for r in g.groups:
        rel = r.reliability
        rows.append({
            "group": r.group, "n": r.n, "status": r.status, "reason": r.reason,
            **_model_part(r.interval, r.tcal),
            "pvalue": r.pvalue, "adjusted_pvalue": r.adjusted_pvalue, "reject": r.reject,
            "decision": r.decision, "reliability": None if rel is None else {
                "edges": rel.edges, "counts": rel.counts, "mean_confidence": rel.mean_confidence,
                "observed_frequency": rel.observed_frequency, "low": rel.low, "high": rel.high},
        })
    return {"groups": rows, "worst_group": g.worst_group, "rejected": list(g.rejected),
            "too_small": list(g.too_small), "not_testable": list(g.not_testable), "alpha": g.alpha,
            "correction": "Holm", "min_group_size": g.min_group_size, "verdict": g.verdict}


def comparison_summary(results: dict) -> dict:
    """The comparison results as one JSON-ready dict (non-finite numbers become null).

    What ``calviz check --json`` prints, and what the comparison text and the report's sections are
    written from.

    Parameters
    ----------
    results : dict
        ``"comparison"``: a ``ModelComparison`` (:func:`calviz.compare`); ``"groups"``: a
        ``GroupCalibration`` (:func:`calviz.calibration_by_group`); ``"recalibration"``: a pair
        (``RecalibrationResult`` or its summary dict, ``ModelComparison`` of before and after).  Absent
        keys: not computed.

    Returns
    -------
    dict
        The same keys, each a dict of plain values.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import comparisons
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> cmp = calviz.compare(y, p, np.clip(p + 0.1, 0, 1), names=("a", "b"), resampling="analytic")
    >>> summary = comparisons.comparison_summary({"comparison": cmp})
    >>> summary["comparison"]["names"], sorted(summary["comparison"]["models"])
    (['a', 'b'], ['a', 'b'])
    """
    out = {}
    if "comparison" in results:
        out["comparison"] = _comparison_dict(results["comparison"])
    if "groups" in results:
        out["groups"] = _groups_dict(results["groups"])
    if "recalibration" in results:
        res, cmp = results["recalibration"]
        if isinstance(res, dict):  # already summarised (the dashboard keeps no predictions in its result)
            out["recalibration"] = {**res, "comparison": _comparison_dict(cmp)}
        else:
            out["recalibration"] = {
                "method": res.method, "n_calibration": int(res.calibration_indices.shape[0]),
                "n_eval": res.n_eval, "temperature": res.temperature, "seed": res.seed,
                "maps": [m.parameters for m in res.maps], "comparison": _comparison_dict(cmp),
            }
    return strict_json(out)


#: a tested group's status by its Holm decision (:attr:`calviz.GroupResult.decision`); the reason of an
#: undecided one says at which level and why it is not rejected
GROUP_STATUS = {"reject": "rejected (Holm)", "accept": "not rejected (Holm)", "undecided": "undecided (Holm)"}


def tcal_pvalue_text(p, tcal: dict | None, *, phrase: bool = False) -> str:
    """A T-Cal p-value of a comparison's model or group, "≤ …" when a tail bound settled the test.

    Without resampling, the Holm-adjusted p-value of such a group is a bound too.

    Parameters
    ----------
    p : float or None
        The p-value.
    tcal : dict or None
        The model's (or group's) T-Cal dict (its ``pvalue_is_bound``).
    phrase : bool, default False
        "p = 0.0123" rather than "0.0123".

    Returns
    -------
    str
        The text.

    Examples
    --------
    >>> from calviz.present import comparisons
    >>> comparisons.tcal_pvalue_text(0.0351, {"pvalue_is_bound": True})
    '≤ 0.0351'
    >>> comparisons.tcal_pvalue_text(0.2, None, phrase=True)
    'p = 0.2000'
    """
    bound = bool((tcal or {}).get("pvalue_is_bound"))
    return pvalue_phrase(p, bound=bound) if phrase else format_pvalue(p, bound=bound)


def difference_sentence(c: dict) -> str:
    """The paired difference of two models' ECE², its interval and the test of equal calibration.

    Parameters
    ----------
    c : dict
        A comparison of :func:`calviz.present.comparisons.comparison_summary`.

    Returns
    -------
    str
        The sentence.

    Examples
    --------
    >>> from calviz.present import comparisons
    >>> c = {"names": ["A", "B"], "difference": 0.01, "low": 0.0, "high": 0.02, "level": 0.95,
    ...      "pvalue": 0.2, "method": "asymptotic"}
    >>> print(comparisons.difference_sentence(c))
    ECE²(A) − ECE²(B) = 0.0100, 95% interval [0.0000, 0.0200]; test of equal calibration p = 0.2000
    (asymptotic)
    """
    a, b = c["names"]
    return (f"ECE²({a}) − ECE²({b}) = {format_number(c['difference'])}, {100 * c['level']:.0f}% interval "
            f"[{format_number(c['low'])}, {format_number(c['high'])}]; test of equal calibration "
            f"{pvalue_phrase(c['pvalue'])} ({c['method']})")


def holm_note(groups: dict) -> str:
    """How the group decisions were made, under the group table.

    With sequential resampling a decision and its Holm-adjusted p-value may seem to disagree.

    Parameters
    ----------
    groups : dict
        The groups of :func:`calviz.present.comparisons.comparison_summary`.

    Returns
    -------
    str
        The note.

    Examples
    --------
    >>> from calviz.present import comparisons
    >>> comparisons.holm_note({"groups": [], "alpha": 0.05})
    'A group is rejected when its Holm-adjusted p-value is at most α = 0.05.'
    """
    if any((row.get("tcal") or {}).get("sequential") for row in groups["groups"]):
        return ("The decisions are Holm's step-down procedure run on each group's sequential test, which "
                "settles at every Holm level with its own resamples; the p-values and their Holm adjustment "
                "are the tests' Monte Carlo estimates (≤: a bound), for reading.")
    return f"A group is rejected when its Holm-adjusted p-value is at most α = {groups['alpha']:g}."


def recalibration_sentence(r: dict) -> str:
    """Which rows fitted the recalibration map and which rows every number after it is computed on.

    Parameters
    ----------
    r : dict
        The recalibration of :func:`calviz.present.comparisons.comparison_summary`.

    Returns
    -------
    str
        The sentence.

    Examples
    --------
    >>> from calviz.present import comparisons
    >>> comparisons.recalibration_sentence({"n_calibration": 600, "n_eval": 400})
    'Map fitted on 600 rows; every number below is computed on the other 400 rows.'
    """
    return (f"Map fitted on {r['n_calibration']} rows; every number below is computed on the other "
            f"{r['n_eval']} rows.")


def decomposition_text(d: dict | None) -> str:
    """A model's score decomposition in one short clause (the comparison's text).

    Parameters
    ----------
    d : dict or None
        A model's ``decomposition`` entry of :func:`comparison_summary`.

    Returns
    -------
    str
        The clause.

    Examples
    --------
    >>> from calviz.present.comparisons import decomposition_text
    >>> decomposition_text({"score": "brier", "mean_score": 0.16, "mcb": 0.01, "dsc": 0.09, "unc": 0.24})
    'Brier 0.1600 = MCB 0.0100 − DSC 0.0900 + UNC 0.2400'
    """
    if not d:
        return "score decomposition not available"
    f = format_number
    score = "Brier" if d["score"] == "brier" else "log loss"
    return (f"{score} {f(d['mean_score'])} = MCB {f(d['mcb'])} − DSC {f(d['dsc'])} + UNC "
            f"{f(d['unc'])}")


def decomposition_contrast(c: dict) -> str:
    """What the two decompositions say together: which model discriminates and which is calibrated better.

    In the score's terms: the better discrimination with the worse miscalibration is what a recalibration
    fixes ("" when one is missing).

    Parameters
    ----------
    c : dict
        A comparison of :func:`comparison_summary`.

    Returns
    -------
    str
        The sentence, without a final full stop.

    Examples
    --------
    >>> from calviz.present.comparisons import decomposition_contrast
    >>> part = lambda mcb, dsc: {"decomposition": {"mcb": mcb, "dsc": dsc}}
    >>> sentence = decomposition_contrast({"names": ["raw", "fixed"], "models": {"raw": part(0.02, 0.10),
    ...                                                                          "fixed": part(0.001, 0.09)}})
    >>> sentence.split(": ")[0]
    'raw discriminates better (higher DSC) but is worse calibrated (higher MCB)'
    """
    parts = [c["models"][name].get("decomposition") for name in c["names"]]
    if not all(parts):
        return ""
    (a, b), (da, db) = c["names"], parts
    sharper = a if da["dsc"] > db["dsc"] else b if db["dsc"] > da["dsc"] else None
    calibrated = a if da["mcb"] < db["mcb"] else b if db["mcb"] < da["mcb"] else None
    if sharper is None or calibrated is None:
        return ""
    if sharper != calibrated:
        return (f"{sharper} discriminates better (higher DSC) but is worse calibrated (higher MCB): "
                f"recalibrating {sharper} keeps its discrimination and removes its MCB")
    return f"{sharper} both discriminates better (higher DSC) and is better calibrated (lower MCB)"


def _pair_lines(c: dict, indent: str = "           ") -> list[str]:
    f, lines = format_number, []
    for name in c["names"]:
        m = c["models"][name]
        ece, tcal = m["ece"] or {}, m["tcal"]
        lines.append(f"{indent}{name}: ECE {f(ece.get('estimate'))} [{f(ece.get('low'))}, "
                     f"{f(ece.get('high'))}], T-Cal {tcal_decision_words(tcal)} "
                     f"({tcal_pvalue_text(tcal and tcal['pvalue'], tcal, phrase=True)})")
        lines.append(f"{indent}  {decomposition_text(m.get('decomposition'))}")
    if contrast := decomposition_contrast(c):
        lines.append(f"{indent}{contrast}")
    lines.append(f"{indent}{difference_sentence(c)}")
    lines.append(f"{indent}verdict: {c['verdict']}")
    return lines


def comparison_lines(summary: dict) -> list[str]:
    """The comparison sections of ``calviz check`` as lines of text.

    Parameters
    ----------
    summary : dict
        From :func:`calviz.present.comparisons.comparison_summary` (other keys are ignored).

    Returns
    -------
    list of str
        The lines, indented under the check's own.

    Examples
    --------
    >>> from calviz.present import comparisons
    >>> comparisons.comparison_lines({})
    []
    """
    f = format_number
    lines = []
    if summary.get("comparison"):
        c = summary["comparison"]
        lines.append(f"  compare  {c['names'][0]} vs {c['names'][1]} on the same {c['n']} examples "
                     f"({c['target']}, {c['n_bins']} bins)")
        lines += _pair_lines(c)
    if summary.get("recalibration"):
        r = summary["recalibration"]
        extra = f", T = {f(r['temperature'])}" if r.get("temperature") is not None else ""
        lines.append(f"  recalibrate {r['method']}{extra}: fitted on {r['n_calibration']} rows, evaluated on "
                     f"the other {r['n_eval']}")
        lines += _pair_lines(r["comparison"])
    if summary.get("groups"):
        g = summary["groups"]
        lines.append(f"  groups   {len(g['groups'])} groups, T-Cal p-values Holm-adjusted at "
                     f"α = {g['alpha']:g}")
        for row in g["groups"]:
            head = f"           {row['group']!s:>12}  n = {row['n']:>6}  "
            if row["status"] != "tested":
                lines.append(f"{head}{row['status']}: {row['reason']}")
                continue
            ece, tcal = row["ece"] or {}, row["tcal"]
            p, holm = (tcal_pvalue_text(row[k], tcal, phrase=True) for k in ("pvalue", "adjusted_pvalue"))
            lines.append(f"{head}ECE {f(ece.get('estimate'))} [{f(ece.get('low'))}, {f(ece.get('high'))}]  "
                         f"{p}  Holm {holm}  {tcal_decision_words(row)}"
                         + (f" ({row['reason']})" if row["reason"] else ""))
        lines.append(f"           verdict: {g['verdict']}")
    return lines


def _pair_table(c: dict) -> str:
    f = format_number
    rows = []
    for name in c["names"]:
        m = c["models"][name]
        ece, tcal = m["ece"] or {}, m["tcal"]
        d = m.get("decomposition") or {}
        split = "".join(f"<td>{f(d.get(k))}</td>" for k in ("mean_score", "mcb", "dsc", "unc"))
        rows.append(f"<tr><td>{html.escape(name)}</td><td>{f(ece.get('estimate'))}</td>"
                    f"<td>[{f(ece.get('low'))}, {f(ece.get('high'))}]</td>"
                    f"<td>{tcal_decision_words(tcal)}</td>"
                    f"<td>{html.escape(tcal_pvalue_text(tcal and tcal['pvalue'], tcal))}</td>{split}</tr>")
    head = ("<tr><th>model</th><th>ℓ2-ECE</th><th>interval</th><th>T-Cal</th><th>p-value</th>"
            "<th>Brier S̄</th><th>MCB</th><th>DSC</th><th>UNC</th></tr>")
    contrast = decomposition_contrast(c)
    diff = (f'<p class="caption">{html.escape(difference_sentence(c), quote=False)}.'
            + (f" {html.escape(contrast, quote=False)}." if contrast else "") + "</p>")
    cls = "reject" if c["reject"] else "accept"
    return (f'<div class="verdict {cls}"><b>{html.escape(c["verdict"])}</b></div>'
            f"<table>{head}{''.join(rows)}</table>{diff}")


def comparison_html(summary: dict) -> str:
    """The report's comparison sections: model vs model, before / after recalibration, groups.

    Parameters
    ----------
    summary : dict
        From :func:`calviz.present.comparisons.comparison_summary` (other keys are ignored).

    Returns
    -------
    str
        HTML ``<section>`` elements ("" without comparisons).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present.comparisons import comparison_html, comparison_summary
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> cmp = calviz.compare(y, p, np.clip(p + 0.1, 0, 1), names=("a", "b"), resampling="analytic")
    >>> comparison_html(comparison_summary({"comparison": cmp})).startswith("<section><h2>Model comparison")
    True
    """
    f = format_number
    parts = []
    if summary.get("comparison"):
        c = summary["comparison"]
        parts.append(f"<section><h2>Model comparison: {html.escape(c['names'][0])} vs "
                     f"{html.escape(c['names'][1])}</h2>{_pair_table(c)}</section>")
    if summary.get("recalibration"):
        r = summary["recalibration"]
        extra = f" (T = {f(r['temperature'])})" if r.get("temperature") is not None else ""
        parts.append(f"<section><h2>Before / after {html.escape(r['method'])} recalibration{extra}</h2>"
                     f'<p class="caption">{html.escape(recalibration_sentence(r), quote=False)}</p>'
                     f"{_pair_table(r['comparison'])}</section>")
    if summary.get("groups"):
        g = summary["groups"]
        head = ("<tr><th>group</th><th>n</th><th>status</th><th>ℓ2-ECE</th><th>interval</th><th>T-Cal p</th>"
                "<th>Holm p</th><th>decision</th></tr>")
        rows = []
        for row in g["groups"]:
            ece = row["ece"] or {}
            status = f"{row['status']}: {row['reason']}" if row["reason"] else row["status"]
            rows.append(f"<tr><td>{html.escape(str(row['group']))}</td><td>{row['n']}</td>"
                        f"<td>{html.escape(status)}</td><td>{f(ece.get('estimate'))}</td>"
                        f"<td>[{f(ece.get('low'))}, {f(ece.get('high'))}]</td>"
                        f"<td>{html.escape(tcal_pvalue_text(row['pvalue'], row['tcal']))}</td>"
                        f"<td>{html.escape(tcal_pvalue_text(row['adjusted_pvalue'], row['tcal']))}</td>"
                        f"<td>{html.escape(tcal_decision_words(row))}</td></tr>")
        cls = "reject" if g["rejected"] else "accept"
        parts.append(f"<section><h2>Calibration by group</h2><div class=\"verdict {cls}\"><b>"
                     f"{html.escape(g['verdict'])}</b></div><table>{head}{''.join(rows)}</table>"
                     f'<p class="caption">{html.escape(holm_note(g), quote=False)}</p></section>')
    return "".join(parts)
