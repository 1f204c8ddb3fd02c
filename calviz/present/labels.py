"""Names of measures and methods, axis labels and number formats, shared by every surface.

The app, the report, the command line and notebooks name a T-Cal method, a distance measure or a number the
same way because they read these.
"""

from __future__ import annotations

import math

from calviz._results import format_pvalue
from calviz.targets import simplex_cells

__all__ = ["format_value", "format_interval_end", "METHOD_NAMES", "method_name", "tcal_xlabel",
           "MEASURE_LABELS", "measure_label", "bound_label", "byte_size", "short_count"]


def short_count(n: int) -> str:
    """A row count short enough for a title: thousands separators below a million, else millions.

    Millions are written to 3 significant digits ("n = 10,000,000" made a half-width dashboard card's
    title too long at 1280 px).

    Parameters
    ----------
    n : int
        The number of rows.

    Returns
    -------
    str
        ``n`` with thousands separators, or in millions ("10M", "2.35M").

    Examples
    --------
    >>> from calviz.present.labels import short_count
    >>> short_count(52_991), short_count(10_000_000), short_count(2_345_678)
    ('52,991', '10M', '2.35M')
    """
    n = int(n)
    return f"{n:,}" if n < 1_000_000 else f"{n / 1e6:.3g}M"


def byte_size(n: int) -> str:
    """A size in bytes as calviz writes it everywhere, in binary units.

    A limit of ``20 * 2**20`` bytes is "20 MiB" in the sidebar and in the refusal of a larger file.

    Parameters
    ----------
    n : int
        The size in bytes.

    Returns
    -------
    str
        The size with one decimal (none when whole or from 100 units on) and its unit.

    Examples
    --------
    >>> from calviz.present.labels import byte_size
    >>> byte_size(20 * 2**20), byte_size(22_020_096 + 150_000), byte_size(16_000_000), byte_size(21)
    ('20 MiB', '21.1 MiB', '15.3 MiB', '21 bytes')
    """
    n = int(n)
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            value = n / scale
            return f"{value:.0f} {unit}" if value == round(value) or value >= 100 else f"{value:.1f} {unit}"
    return f"{n} byte{'s' if n != 1 else ''}"


def format_value(x) -> str:
    """A number as the views print it: 4 decimals, or 3 significant digits in scientific notation.

    Scientific notation below 10⁻³ and from 10⁴ on; "—" for None.

    Parameters
    ----------
    x : float or None
        The number.

    Returns
    -------
    str
        Its text.

    Examples
    --------
    >>> from calviz.present import labels
    >>> labels.format_value(0.123456), labels.format_value(2.5e-5), labels.format_value(None)
    ('0.1235', '2.50e-05', '—')
    """
    if x is None:
        return "—"
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e4):
        return f"{x:.2e}"
    return f"{x:.4f}"


#: how T-Cal's critical values were obtained, in words (the result's ``method`` field → display name)
METHOD_NAMES = {
    "analytic": "analytic critical values",
    "y_only": "Y-only resampling",
    "consistency": "consistency resampling",
    "threshold": "Chebyshev thresholds",
}


def method_name(method) -> str:
    """The display name of a T-Cal critical-value method; unknown ones as given.

    Parameters
    ----------
    method : str
        ``TCalResult.method``.

    Returns
    -------
    str
        Its name in words.

    Examples
    --------
    >>> from calviz.present import labels
    >>> labels.method_name("y_only"), labels.method_name("analytic")
    ('Y-only resampling', 'analytic critical values')
    """
    return METHOD_NAMES.get(str(method), str(method).replace("_", " "))


def format_interval_end(x: float) -> str:
    """An end of a p-value's Monte Carlo interval: "0" at 0, otherwise as p-values are printed.

    Parameters
    ----------
    x : float
        The end.

    Returns
    -------
    str
        Its text.

    Examples
    --------
    >>> from calviz.present import labels
    >>> labels.format_interval_end(0.0), labels.format_interval_end(0.0123)
    ('0', '0.0123')
    """
    return "0" if x == 0 else format_pvalue(x).replace("< ", "<")


def tcal_xlabel(discrete: bool, tcal=None) -> str:
    """The x-axis label of the T-Cal view.

    Parameters
    ----------
    discrete : bool
        Whether the exact binomial test ran (x is a predicted value).
    tcal : TCalResult, optional
        The result: full calibration of K > 2 classes counts bins per axis of the simplex partition.

    Returns
    -------
    str
        The label.

    Examples
    --------
    >>> from calviz.present import labels
    >>> labels.tcal_xlabel(False)
    'number of bins at each dyadic scale (log scale)'
    """
    if discrete:
        return "distinct predicted value"
    if tcal is not None and simplex_cells(tcal.target, tcal.K) is not None:
        exponent = str(int(tcal.K) - 1).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
        return f"bins per axis m (m{exponent} simplex cells; log scale)"
    return "number of bins at each dyadic scale (log scale)"


#: display names of the distance measures (the keys of ``DistanceBounds.measures`` and their other spellings)
MEASURE_LABELS = {
    "smce": "smCE",
    "dce_lower": "dCE_lower (LP)",
    "lower_dce": "dCE_lower (LP)",
    "kce": "kCE (Laplace)",
    "laplace_kce": "kCE (Laplace)",
    "sintce": "SintCE",
    "binned_ece_width": "binnedECE + width",
    "binned_ece_with_width": "binnedECE + width",
    "binned_ece": "binnedECE (ℓ1)",
    "intce": "intCE",
}


def measure_label(key) -> str:
    """The display name of a distance measure's key.

    Parameters
    ----------
    key : str
        A key of ``DistanceBounds.measures``.

    Returns
    -------
    str
        Its name.

    Examples
    --------
    >>> from calviz.present import labels
    >>> labels.measure_label("lower_dce")
    'dCE_lower (LP)'
    """
    return MEASURE_LABELS.get(str(key).lower(), str(key))


def bound_label(bound) -> str:
    """'measure: inequality [paper, theorem]' for a bound of the implied dCE interval.

    Parameters
    ----------
    bound : Bound or str
        ``DistanceBounds.lower_bound`` / ``upper_bound`` (a string is returned as it is).

    Returns
    -------
    str
        The label.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import labels
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> b = calviz.distance_bounds(y, p, grid_step=0.01)
    >>> labels.bound_label(b.lower_bound).split(":")[0] in labels.MEASURE_LABELS.values()
    True
    """
    if isinstance(bound, str):
        return bound
    measure, inequality, source = bound.measure, bound.inequality, bound.source
    return f"{MEASURE_LABELS.get(str(measure), measure)}: {inequality}" + (f" [{source}]" if source else "")
