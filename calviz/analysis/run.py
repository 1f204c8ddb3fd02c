"""Running the views: :func:`prepare` the rows, :func:`run_view` one view, :func:`analyze` them all.

Every loop here iterates the registry (:data:`calviz.analysis.views.REGISTRY`); :class:`Analysis` has one
field per result of a view that :func:`analyze` computes, generated from the records.  Distributed data
(a :class:`calviz.analysis.compute.DistributedBackend`) computes each view itself
(:meth:`~calviz.analysis.compute.DistributedBackend.compute_view`).
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

import calviz.sampling as sampling_policy
from calviz._data import CalibrationData, InputError, as_calibration_data
from calviz._params import BOOLEAN, Instance, ListOf, NoneOr, Options, validate_params
from calviz._results import ResultMixin, _jsonable
from calviz.analysis.data import (
    DistributedBackend,
    check_options_fit,
    is_distributed,
    prepare,
    resolve_target,
)
from calviz.analysis.options import AnalysisOptions, with_option_values
from calviz.analysis.views import REGISTRY, view

#: view name -> compute function, derived from the registry (the views' own record: :func:`view`)
COMPUTE = {record.name: record.compute for record in REGISTRY}


def run_view(name: str, data: CalibrationData, options: AnalysisOptions):
    """Run one view's computation; returns ``(result or None, seconds, message or None)``.

    ``message`` says why the result is ``None``, or how a result differs from the all-rows one: views that
    cost more than one pass run on the subsample of ``calviz.sampling`` (the message states it and its
    sampling error), and distributed data (a :class:`~calviz.analysis.compute.DistributedBackend`, which
    computes each view itself) says e.g. that distance measures come from a uniform subsample."""
    start = time.perf_counter()
    try:
        record = view(name)
        if isinstance(data, DistributedBackend):
            result, error = data.compute_view(name, options)
        else:
            prepared = prepare(data, options)
            rows, error = sampling_policy.sample_for_view(name, prepared, options)
            result = record.compute(rows, options)
            error = sampling_policy.result_note(name, rows, prepared.n, options, result, error)
    except InputError as exc:
        result, error = None, f"{name}: {exc}"
    except Exception as exc:  # an engine bug must not take the dashboard down; it is reported instead
        result, error = None, f"{name} failed: {type(exc).__name__}: {exc}"
    return result, time.perf_counter() - start, error


#: rows from which :func:`run_views` computes the subsampled views beside the others (below: milliseconds)
OVERLAP_MIN_ROWS = 1 << 20


def run_views(names: tuple[str, ...], data, options: AnalysisOptions, *, overlap: bool | None = None) -> list:
    """``[run_view(name, data, options) for name in names]``, the subsampled views computed on a second
    thread beside the all-rows views when ``overlap`` (default: when the data have ``OVERLAP_MIN_ROWS``
    rows and numba has two threads).

    The views' kernels release the GIL, so a subsampled view (e.g. the distance bounds on their 200,000
    rows) runs on the second core while the all-rows views run one after another on the calling thread.
    Never two all-rows views at once: each holds temporaries of several bytes per row (at 10^7 rows,
    200-300 MB), the subsampled views' temporaries are bounded by the subsample.  Each view is computed
    alone from the same prepared rows (the subsample is drawn once, here, before the threads start), so
    the results are the sequential loop's to the last bit, returned in the order of ``names``."""
    import numba

    from calviz._threads import map_items

    if overlap is None:
        overlap = (not isinstance(data, DistributedBackend) and data.n >= OVERLAP_MIN_ROWS
                   and numba.get_num_threads() >= 2)
    if not overlap or isinstance(data, DistributedBackend):
        return [run_view(name, data, options) for name in names]
    prepared = prepare(data, options)
    subsampled = set()
    for name in names:  # the shared subsample drawn once, here, rather than by two threads at once
        try:
            rows, _ = sampling_policy.sample_for_view(name, prepared, options)
        except Exception:  # noqa: S112 - the view's own run reports it
            continue
        if rows.n < prepared.n:
            subsampled.add(name)
    results: list = [None] * len(names)

    def run(indices: list[int]) -> None:
        for i in indices:
            results[i] = run_view(names[i], data, options)  # (run_view catches a view's errors)

    # the all-rows views on the calling thread, the subsampled ones on a second (map_items' first item
    # runs on the calling thread)
    map_items(run, [[i for i, name in enumerate(names) if name not in subsampled],
                    [i for i, name in enumerate(names) if name in subsampled]])
    return results


def result_fields(name: str, result) -> dict:
    """The :class:`Analysis` fields of view ``name``'s result (the record's ``results``: a pair, such as
    the distance bounds and the smCE witness, fills two; a missing result leaves them all None)."""
    fields = view(name).results
    if len(fields) == 1:
        return {fields[0]: result}
    return dict(zip(fields, (None,) * len(fields) if result is None else result, strict=True))


def selected_views(data, options: AnalysisOptions, *, resampled: bool = True,
                   views: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The views :func:`analyze` computes: ``views`` (default: every view of the analysis, without the
    resampling ones unless ``resampled``), those that apply to these inputs (the record's ``applies``:
    e.g. the smooth curve belongs to a scalar diagram; the resampled T-Cal needs a resampling)."""
    names = views or tuple(r.name for r in REGISTRY if r.in_analysis and (resampled or not r.resampled))
    return tuple(name for name in names if view(name).applies(data, options))


# -- the whole analysis -----------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class DataSummary(ResultMixin):
    """What was analysed: sizes, the target used and simple descriptive numbers.

    Attributes
    ----------
    n : int
        Rows analysed.
    n_total : int
        Rows of the data (more than ``n`` when a subsample was analysed).
    n_classes : int
        Classes.
    is_binary : bool
        Whether the predictions are 1-D P(y = 1).
    target : str
        The calibration target used.
    accuracy, mean_confidence : float
        Top-1 accuracy and mean top-1 confidence.
    """

    n: int
    n_total: int
    n_classes: int
    is_binary: bool
    target: str
    accuracy: float
    mean_confidence: float

    @classmethod
    def of(cls, data: CalibrationData, options: AnalysisOptions, n_total: int | None = None):
        if is_distributed(data):
            return data.data_summary(options)
        if data.is_binary and not data.confidence_form:
            pred = (data.probs >= 0.5).astype(np.int64)
            conf = np.maximum(data.probs, 1.0 - data.probs)
        else:
            conf, correct = data.top1()
            pred = None
        accuracy = float(np.mean(pred == data.labels)) if pred is not None else float(np.mean(correct))
        return cls(
            n=data.n,
            n_total=data.n if n_total is None else int(n_total),
            n_classes=data.n_classes,
            is_binary=data.is_binary,
            target=resolve_target(data, options),
            accuracy=accuracy,
            mean_confidence=float(np.mean(conf)),
        )


class _AnalysisMethods:
    @property
    def total_time(self) -> float:
        return float(sum(self.timings.values()))

    def to_dict(self) -> dict:
        out = {"options": self.options.to_dict(), "summary": self.summary.to_dict()}
        for name in (*RESULT_FIELDS, "groups"):
            out[name] = _result_dict(getattr(self, name))
        out["timings"] = {k: float(v) for k, v in self.timings.items()}
        out["errors"] = dict(self.errors)
        return out


#: the fields of :class:`Analysis` that hold the views' results, in the registry's order
RESULT_FIELDS = tuple(name for record in REGISTRY if record.in_analysis for name in record.results)


def _result_doc(name: str) -> str:
    record = next(r for r in REGISTRY if name in r.results)
    what = record.label if name == record.name else f"second result of the {record.label} view"
    return (f"    {name} : object\n        The {what} (the registry's record"
            f" ``view({record.name!r})``).")


Analysis = dataclasses.make_dataclass(
    "Analysis",
    [("options", "AnalysisOptions"), ("summary", "DataSummary"),
     *((name, "Any", dataclasses.field(default=None)) for name in RESULT_FIELDS),
     ("groups", "Any", dataclasses.field(default=None)),
     ("timings", "dict", dataclasses.field(default_factory=dict)),
     ("errors", "dict", dataclasses.field(default_factory=dict))],
    bases=(_AnalysisMethods, ResultMixin),
    frozen=True,
    repr=False,
    namespace={"__module__": __name__, "__doc__": """All results for one (data, options) pair.

    Returned by :func:`analyze`: one field per result of a view of the registry
    (:data:`calviz.analysis.views.REGISTRY`); a result is ``None`` when its engine refused the input (or
    failed), and ``errors`` says why.

    Attributes
    ----------
    options : AnalysisOptions
        What was asked.
    summary : DataSummary
        What was analysed.
""" + "\n".join(_result_doc(name) for name in RESULT_FIELDS) + """
    groups : GroupCalibration or None
        Per-group results when ``group`` was given.
    timings : dict
        Seconds per view.
    errors : dict
        View → why it could not be computed (or, beside a result, how it was computed).
    """},
)
Analysis.__qualname__ = "Analysis"

#: the views :func:`analyze` computes (``views=``)
VIEWS = tuple(record.name for record in REGISTRY if record.in_analysis)


def _result_dict(value):
    if value is None:
        return None
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return _jsonable(dict(value._asdict()))
    return _jsonable(value)


@validate_params({"options": NoneOr(Instance(AnalysisOptions)), "resampled": BOOLEAN,
                  "views": NoneOr(ListOf(Options(VIEWS)))})
def analyze(
    data,
    options: AnalysisOptions | None = None,
    *,
    resampled: bool = True,
    views: tuple[str, ...] | None = None,
    group=None,
    **option_values,
) -> Analysis:
    """Run every view's computation on a set of predictions: the whole analysis the app and report show.

    ``data`` is a ``CalibrationData``, a ``(y_true, y_prob)`` tuple or the path of a predictions file,
    read with :func:`calviz.io.read_predictions`.

    ``resampled=False`` skips the resampling-based results (resampled T-Cal, bootstrap interval) — the
    dashboard computes those off the UI thread.  Extra keywords override fields of ``options``.

    ``group``: one group value per row (an array), or the name of a column of the predictions file
    ``data`` (CSV/TSV, Parquet or an NPZ array; the label column's name groups by the label).  Then
    ``Analysis.groups`` is :func:`calviz.calibration_by_group` on the analysed rows (the subsample's
    rows when ``n`` is set) with the options' bins, α, seed and T-Cal resampling (resampled: the
    sequential rule of adaptive_tcal): per-group reliability data, ECE interval and T-Cal decision,
    Holm's correction across groups, the worst group, and the groups too small to test.  Top-k and
    full targets are compared per group on their top-1 reduction.

    Parameters
    ----------
    data : CalibrationData, (y_true, y_prob) or path
        The predictions, validated by :func:`calviz.as_calibration_data`.
    options : AnalysisOptions, optional
        Target, bins, level, resampling, … (defaults: :class:`AnalysisOptions`).
    resampled : bool, default True
        Also compute the resampled T-Cal decision and the bootstrap interval.
    views : list, tuple or set of str, optional
        Compute only these views, among ``VIEWS`` (the registry's views of the analysis:
        ``"reliability"``, ``"smooth"``, ``"tcal"``, ``"tcal_resampled"``, ``"interval"``,
        ``"bootstrap"``, ``"distance"`` (with the witness), ``"classical"``), those that apply to the
        inputs.  A single name is passed as a one-element tuple, e.g. ``views=("tcal",)``.
    group : array-like or str, optional
        Group values, one per row, or a column name of the predictions file (see above).
    **option_values
        Fields of ``options`` to override, e.g. ``n_bins=10``.

    Returns
    -------
    Analysis
        One result per view — ``reliability``, ``smooth``, ``tcal`` (analytic) and ``tcal_resampled``,
        ``interval`` and ``bootstrap``, ``distance`` and ``witness``, ``classical`` — with ``summary``,
        ``options``, ``timings`` and ``errors`` (views that could not be computed, and why).

    Raises
    ------
    InvalidParameterError
        An option outside its range or of the wrong type — ``options``, ``resampled``, ``views`` or one of
        ``**option_values`` (checked against ``AnalysisOptions.parameter_constraints``) — before any file
        is read, with the uniform message naming ``analyze``: "The 'n_bins' parameter of analyze must be
        an int in [1, 1000000]; got 0."  (A field of an ``AnalysisOptions`` built beforehand is refused when
        it is built, naming ``AnalysisOptions``.)
    TypeError
        A keyword that is no field of :class:`AnalysisOptions`.

    References
    ----------
    .. [1] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.
    .. [2] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. 2024.
    .. [3] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *STOC* 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> from calviz.analysis import analyze
    >>> result = analyze((y, p), n_bins=10, resampling="analytic", resampled=False)
    >>> result.tcal.reject, round(result.interval.estimate, 3), result.summary.target
    (True, 0.11, 'binary')
    """
    options = with_option_values(options, option_values, "analyze")  # before a file is read
    path = None
    if isinstance(data, (str, os.PathLike)):
        from calviz.io import read_predictions

        path, data = os.fspath(data), read_predictions(data)
    if isinstance(data, tuple):
        data = as_calibration_data(*data)
    elif not is_distributed(data) and not isinstance(data, CalibrationData):
        data = as_calibration_data(data)  # (validated once; distributed data: by calviz.dask.open_source)
    check_options_fit(data, options)
    prepared = prepare(data, options)
    results: dict[str, Any] = {}
    timings: dict[str, float] = {}
    errors: dict[str, str] = {}
    names = selected_views(prepared, options, resampled=resampled, views=views)
    for name, (result, seconds, error) in zip(names, run_views(names, prepared, options), strict=True):
        timings[name] = seconds
        if error:  # with a result: a note (e.g. the subsample it used); without one: why it is missing
            errors[name] = error
        results.update(result_fields(name, result))
    if group is not None:
        from calviz.analysis.comparisons import by_group

        start = time.perf_counter()
        results["groups"] = by_group(data, prepared, options, group, path)
        timings["groups"] = time.perf_counter() - start
    return Analysis(
        options=options,
        summary=DataSummary.of(prepared, options, n_total=data.n),
        timings=timings,
        errors=errors,
        **results,
    )
