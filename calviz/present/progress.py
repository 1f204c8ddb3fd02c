"""Words for the work in progress: durations, the names of computations, compute times and the state
of the compiled kernels, for the status line and the report's footer.
"""

from __future__ import annotations

__all__ = ["duration", "computation_name", "compute_times", "kernels_ready"]


def duration(seconds: float) -> str:
    """A duration as a person reads it.

    Milliseconds below a second, seconds to one decimal up to a minute, then minutes and seconds.

    Parameters
    ----------
    seconds : float
        The duration.

    Returns
    -------
    str
        The duration in words.

    Examples
    --------
    >>> from calviz.present import progress
    >>> progress.duration(0.0123), progress.duration(8.04), progress.duration(83.4)
    ('12 ms', '8.0 s', '1 min 23 s')
    """
    seconds = float(seconds)
    if seconds < 1:
        return f"{1000 * seconds:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


def computation_name(key: str) -> str:
    """What a timed computation is called on screen: its view's label, never an internal name.

    Parameters
    ----------
    key : str
        The computation's name (a view of the registry, e.g. ``tcal_resampled``).

    Returns
    -------
    str
        The view's label, or the name with spaces for a computation that is not a view.

    Examples
    --------
    >>> from calviz.present import progress
    >>> progress.computation_name("tcal_resampled"), progress.computation_name("sorted_view")
    ('T-Cal (resampled)', 'sorted view')
    """
    from calviz.analysis.views import REGISTRY

    labels = {record.name: record.label for record in REGISTRY}
    return labels.get(key, key.replace("_", " "))


def compute_times(timings: dict) -> tuple[str, str]:
    """The time a change (or a report) took to compute, in words: ``(summary, details)``.

    ``summary``: the total and the computation that took most of it; ``details``: every computation by
    name with its time (for a tooltip or a report's footer), slowest first.

    Parameters
    ----------
    timings : dict
        Computation (a view's name) → seconds.

    Returns
    -------
    tuple of str
        ``(summary, details)``; two empty strings when nothing was timed.

    Examples
    --------
    >>> from calviz.present import progress
    >>> summary, details = progress.compute_times({"reliability": 0.001, "tcal_resampled": 0.009,
    ...                                         "classical": 0.127})
    >>> summary
    '137 ms, mostly other tests: 127 ms'
    >>> details
    'other tests 127 ms · T-Cal (resampled) 9 ms · reliability diagram 1 ms'
    >>> progress.compute_times({})
    ('', '')
    """
    if not timings:
        return "", ""
    ordered = sorted(timings.items(), key=lambda kv: -kv[1])
    total = sum(timings.values())
    slowest, seconds = ordered[0]
    summary = duration(total)
    if len(ordered) > 1:
        summary += f", mostly {computation_name(slowest)}: {duration(seconds)}"
    details = " · ".join(f"{computation_name(k)} {duration(v)}" for k, v in ordered)
    return summary, details


def kernels_ready(seconds: float, compiled: int) -> str:
    """What the status line says once the compiled kernels are ready: the step and its measured time.

    Parameters
    ----------
    seconds : float
        How long the kernels took to become ready.
    compiled : int
        How many kernels were compiled (0: all were loaded from numba's on-disk cache).

    Returns
    -------
    str
        The status line's words.

    Examples
    --------
    >>> from calviz.present import progress
    >>> progress.kernels_ready(74.2, 31)
    'kernels compiled in 1 min 14 s (first run on this machine; cached on disk for the next starts)'
    >>> progress.kernels_ready(0.84, 0)
    'kernels loaded from the cache in 840 ms'
    """
    if compiled:
        return (f"kernels compiled in {duration(seconds)} (first run on this machine; cached on disk for the "
                "next starts)")
    return f"kernels loaded from the cache in {duration(seconds)}"
