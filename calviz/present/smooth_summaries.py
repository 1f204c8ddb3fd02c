"""The smooth-curve summaries' table and sentence: ICI, E50, E90 and Emax (Austin and Steyerberg 2019) of
the smooth calibration curve the reliability diagram draws.

No statistics and no GUI import: every number comes from an :class:`calviz.ICIResult`.
"""

from __future__ import annotations

from calviz.present.labels import format_value

__all__ = ["ici_frame", "ici_caption", "smoother_words"]

def smoother_words(result) -> str:
    """Which smoother the summaries come from, in words: calviz's kernel curve, not LOESS.

    Parameters
    ----------
    result : ICIResult
        From :func:`calviz.ici`.

    Returns
    -------
    str
        The smoother, its kernel and its bandwidth.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import smooth_summaries
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> smooth_summaries.smoother_words(calviz.ici(y, p, bandwidth=0.05))
    "calviz's kernel smoother (reflected Gaussian, σ = 0.0500), not LOESS"
    """
    from calviz.analysis.options import option  # (the kernel's name as the sidebar shows it: one table)

    kernel = option("kernel").choice_label(result.kernel)
    return f"calviz's kernel smoother ({kernel}, σ = {format_value(result.bandwidth)}), not LOESS"


def ici_caption(result) -> str:
    """What ICI, E50, E90 and Emax say, with the smoother they come from.

    Parameters
    ----------
    result : ICIResult
        From :func:`calviz.ici`.

    Returns
    -------
    str
        The caption.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import smooth_summaries
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> smooth_summaries.ici_caption(calviz.ici(y, p)).split(";")[0]
    'ICI = 0.1010: the predictions are on average 0.1010 away from the smooth calibration curve'
    """
    ici = format_value(result.ici)
    return (f"ICI = {ici}: the predictions are on average {ici} away from the smooth calibration curve; "
            f"half are within E50 = {format_value(result.e50)} of it, 90% within E90 = "
            f"{format_value(result.e90)}, all within Emax = {format_value(result.emax)} (Austin and "
            f"Steyerberg 2019). The curve is the reliability diagram's smooth curve: "
            f"{smoother_words(result)} as in the paper (n = {int(result.n):,}).")


def ici_frame(result) -> dict[str, list]:
    """Display columns of the smooth-curve summaries, one row per measure.

    ``measure``, ``value`` and ``meaning`` (what it summarises of d_i = |f̂(z_i) − z_i|, the distance of
    each prediction z_i from the smooth curve f̂ at it).

    Parameters
    ----------
    result : ICIResult
        From :func:`calviz.ici`.

    Returns
    -------
    dict of list
        Column name → values.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.present import smooth_summaries
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> columns = smooth_summaries.ici_frame(calviz.ici(y, p))
    >>> columns["measure"], columns["value"][0]
    (['ICI', 'E50', 'E90', 'Emax'], '0.1010')
    """
    return {
        "measure": ["ICI", "E50", "E90", "Emax"],
        "value": [format_value(v) for v in (result.ici, result.e50, result.e90, result.emax)],
        "meaning": ["mean |f̂(z) − z| over the predictions", "its median", "its 90th percentile",
                    "its maximum"],
    }
