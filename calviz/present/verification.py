"""The forecast-verification views' tables and sentences: the CORP (isotonic) reliability curve with its
bands, and the score decomposition (MCB, DSC, UNC).

No statistics and no GUI import: every number comes from a result object.
"""

from __future__ import annotations

import numpy as np

from calviz.present.frames import _arr
from calviz.present.labels import format_value

__all__ = [
    "corp_caption", "CORP_MARKS", "decomposition_caption", "decomposition_reading", "decomposition_text",
    "CORP_HIST_BINS", "is_corp", "corp_tables", "decomposition_frame",
]


def corp_caption(corp) -> str:
    """What the CORP reliability diagram says: where its curve leaves the consistency band, and its MCB.

    The Brier score's miscalibration component MCB closes the caption.

    Parameters
    ----------
    corp : CORPReliability
        From :func:`calviz.corp_reliability`.

    Returns
    -------
    str
        The caption.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import verification
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> corp = calviz.corp_reliability(y, p, n_resamples=200, bands=["consistency"], seed=0)
    >>> verification.corp_caption(corp).split(". ")[1]
    'It leaves the 90% consistency band at 781 of 1000 predictions (78%): miscalibrated there'
    """
    head = f"The isotonic (CORP) recalibration curve (no bins; n = {int(corp.n):,})."
    mcb = f" Brier miscalibration MCB = {format_value(corp.mcb)}."
    if corp.consistency_low is None:
        return head + mcb
    curve = np.asarray(corp.predict(corp.band_x))
    outside = (curve < np.asarray(corp.consistency_low)) | (curve > np.asarray(corp.consistency_high))
    points = int(outside.size)
    level = f"{100 * (1 - float(corp.alpha)):g}%"
    if not outside.any():
        where = (f" It stays inside the {level} consistency band at all {points} predictions shown: "
                 "consistent with calibration there.")
    else:
        where = (f" It leaves the {level} consistency band at {int(outside.sum())} of {points} predictions "
                 f"({100 * outside.mean():.0f}%): miscalibrated there.")
    return head + where + mcb + (f" {corp.note}." if corp.note else "")


CORP_MARKS = ("Black steps: the isotonic (CORP) recalibration curve; shaded: the consistency band, where a "
              "calibrated model's curve would fall; dashed: the diagonal; grey, below: the predictions' "
              "distribution.")


def decomposition_caption(decomposition) -> str:
    """The score decomposition in one line: S̄ = MCB − DSC + UNC with its numbers.

    Parameters
    ----------
    decomposition : ScoreDecomposition
        From :func:`calviz.score_decomposition`.

    Returns
    -------
    str
        The caption.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import verification
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> verification.decomposition_caption(calviz.score_decomposition(y, p))
    'Brier score 0.1604 = miscalibration 0.0160 − discrimination 0.0953 + uncertainty 0.2398'
    """
    d = decomposition
    score = "Brier score" if d.score == "brier" else "log loss"
    return (f"{score} {format_value(d.mean_score)} = miscalibration {format_value(d.mcb)} − discrimination "
            f"{format_value(d.dsc)} + uncertainty {format_value(d.unc)}")


def decomposition_reading(decomposition) -> str:
    """Where the score goes, in one sentence: the recalibration gain (MCB) and what discrimination saves.

    Parameters
    ----------
    decomposition : ScoreDecomposition
        From :func:`calviz.score_decomposition`.

    Returns
    -------
    str
        The sentence.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import verification
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> print(verification.decomposition_reading(calviz.score_decomposition(y, p)))
    Recalibrating the predictions (isotonic fit) would lower the score by 0.0160 (10.0% of it); their
    discrimination lowers it by 0.0953 below 0.2398, the score of always predicting the base rate
    (binary, n = 2,000).
    """
    d = decomposition
    total = float(d.mean_score)
    share = f" ({100 * float(d.mcb) / total:.1f}% of it)" if np.isfinite(total) and total > 0 else ""
    return (f"Recalibrating the predictions (isotonic fit) would lower the score by {format_value(d.mcb)}"
            f"{share}; their discrimination lowers it by {format_value(d.dsc)} below {format_value(d.unc)}, "
            f"the score of always predicting the base rate ({d.target}, n = {d.n:,}).")


def decomposition_text(decomposition) -> str:
    """The caption under the score decomposition's table: what it is, and what this result says.

    Parameters
    ----------
    decomposition : ScoreDecomposition
        From :func:`calviz.score_decomposition`.

    Returns
    -------
    str
        :func:`decomposition_caption` and :func:`decomposition_reading`.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import verification
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> print(verification.decomposition_text(calviz.score_decomposition(y, p)).split(". ")[0])
    Brier score 0.1604 = miscalibration 0.0160 − discrimination 0.0953 + uncertainty 0.2398
    """
    return f"{decomposition_caption(decomposition)}. {decomposition_reading(decomposition)}"


#: bars of the CORP diagram's histogram of the predictions (it has no bins of its own)
CORP_HIST_BINS = 20


def is_corp(result) -> bool:
    """Whether a reliability slot holds the CORP diagram (the ``corp`` scheme) rather than bins.

    Parameters
    ----------
    result : object
        A reliability slot's result (or None).

    Returns
    -------
    bool
        True for a :class:`calviz.CORPReliability`.

    Examples
    --------
    >>> import calviz
    >>> from calviz.present import verification
    >>> corp = calviz.corp_reliability([0, 1, 1], [0.2, 0.6, 0.9], n_resamples=0)
    >>> verification.is_corp(corp), verification.is_corp(None)
    (True, False)
    """
    return type(result).__name__ == "CORPReliability"


def _post_steps(x: np.ndarray, *ys: np.ndarray, end: float) -> tuple[np.ndarray, ...]:
    """A right-continuous step function given at sorted points x (value ys[k][i] on [x_i, x_{i+1})) as the
    corners of its drawn path up to ``end``: each value twice, at its start and at the next start."""
    if x.size == 0:
        return (x, *ys)
    xs = np.repeat(np.append(x, max(float(end), float(x[-1]))), 2)[1:-1]
    return (xs, *(np.repeat(y, 2) for y in ys))


def corp_tables(corp) -> dict:
    """Columns of the CORP reliability diagram for drawing: curve, consistency band and histogram.

    ``curve`` (``x``, ``y``: the isotonic step function's corners, one pair per block of equal value),
    ``band`` (``x``, ``low``, ``high``: the consistency band as a step function at the band points; empty
    while it is not computed) and ``hist`` (the predictions' weight in :data:`CORP_HIST_BINS` equal-width
    bars, columns of :func:`hist_table`).

    Parameters
    ----------
    corp : CORPReliability or None
        From :func:`calviz.corp_reliability`.

    Returns
    -------
    dict of dict
        ``{"curve": …, "band": …, "hist": …}``, each column name → array.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import verification
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> tables = verification.corp_tables(calviz.corp_reliability(y, p, n_resamples=50, seed=0))
    >>> sorted(tables["curve"]), sorted(tables["band"]), len(tables["hist"]["x0"])
    (['x', 'y'], ['high', 'low', 'x'], 20)
    """
    empty = np.zeros(0)
    edges = np.linspace(0.0, 1.0, CORP_HIST_BINS + 1)
    if corp is None:
        counts = np.zeros(CORP_HIST_BINS)
        return {"curve": {"x": empty, "y": empty}, "band": {"x": empty, "low": empty, "high": empty},
                "hist": {"x0": edges[:-1], "c0": counts, "x1": edges[1:], "c1": counts,
                         "count": counts.astype(np.int64)}}
    x, fit = _arr(corp.x), _arr(corp.recalibrated)
    # one corner pair per block: the curve is constant between the starts of its blocks
    starts = np.flatnonzero(np.r_[True, fit[1:] != fit[:-1]])
    cx, cy = _post_steps(x[starts], fit[starts], end=x[-1])
    band = {"x": empty, "low": empty, "high": empty}
    if corp.consistency_low is not None:
        bx, low, high = _post_steps(_arr(corp.band_x), _arr(corp.consistency_low),
                                    _arr(corp.consistency_high), end=x[-1])
        band = {"x": bx, "low": low, "high": high}
    counts, _ = np.histogram(x, bins=edges, weights=_arr(corp.weight))
    return {"curve": {"x": cx, "y": cy}, "band": band,
            "hist": {"x0": edges[:-1], "c0": np.zeros(CORP_HIST_BINS), "x1": edges[1:], "c1": counts,
                     "count": np.round(counts).astype(np.int64)}}


def decomposition_frame(decomposition) -> dict[str, list]:
    """Display columns of the score decomposition S̄ = MCB − DSC + UNC, one row per component.

    ``component`` (its name and symbol), ``value`` and ``share`` (the component over the mean score S̄;
    "—" when S̄ is 0 or not finite).

    Parameters
    ----------
    decomposition : ScoreDecomposition
        From :func:`calviz.score_decomposition`.

    Returns
    -------
    dict of list
        Column name → values.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import verification
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> columns = verification.decomposition_frame(calviz.score_decomposition(y, p))
    >>> columns["component"][1], columns["share"][0]
    ('miscalibration MCB', '100.0%')
    """
    score = "Brier score" if decomposition.score == "brier" else "log loss"
    values = (decomposition.mean_score, decomposition.mcb, decomposition.dsc, decomposition.unc)
    total = float(decomposition.mean_score)
    usable = np.isfinite(total) and total != 0
    return {
        "component": [f"{score} S̄", "miscalibration MCB", "discrimination DSC", "uncertainty UNC"],
        "value": [format_value(v) for v in values],
        "share": [f"{100 * float(v) / total:.1f}%" if usable and np.isfinite(v) else "—" for v in values],
    }
