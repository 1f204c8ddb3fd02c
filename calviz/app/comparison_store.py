"""The comparison mode's results: what is compared, computed off the session's thread, one reactive value.

A :class:`ComparisonRequest` says what to compare — before/after recalibration of the current data,
the current data (model A) against a second model on the same examples, or the current data in every
group of a grouping column — with the analysis options that apply (bins, α, target, T-Cal resampling,
seed).  :class:`ComparisonStore` computes it with the engine (:func:`calviz.recalibrate`,
:func:`calviz.compare`, :func:`calviz.calibration_by_group`, :func:`calviz.reliability`) in the
session's worker process (a background job of :class:`~calviz.app.store.ResultStore`), caches the
outcome by the request's inputs and publishes it as an :class:`~calviz.app.store.Entry` in its
``entry`` parameter; a result is published only while the mode still wants it.  The view draws the
entry and computes nothing.

Comparisons use all rows of the data (the subsample control applies to the single-model views), and
scalar targets only: top-k and full calibration are compared on their top-1 reduction.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import param

from calviz._data import CalibrationData, InputError, as_calibration_data
from calviz.analysis import AnalysisOptions
from calviz.app.store import DEBOUNCE_S, Entry, ResultStore

__all__ = [
    "MODES",
    "METHODS",
    "ComparisonRequest",
    "ComparisonOutcome",
    "ComparisonStore",
    "compute_comparison",
]

#: the comparison modes, as the mode selector shows them
MODES = {
    "off": "off",
    "recalibration": "before / after recalibration",
    "models": "model A vs model B",
    "groups": "by group (column)",
}
#: recalibration methods of :func:`calviz.recalibrate`
METHODS = ("temperature", "platt", "isotonic", "histogram")
_CACHE_SIZE = 16


@dataclass(frozen=True, eq=False)
class ComparisonRequest:
    """One comparison: ``mode`` ("recalibration", "models" or "groups"); ``data`` the current predictions
    (model A); ``other`` model B's predictions of the same examples ("models"); ``groups`` one group
    value per row ("groups"); ``names`` the labels of A and B; ``method`` the recalibration method;
    ``options`` the analysis options (only ``target``, ``class_index``, ``n_bins``, ``alpha``,
    ``resampling`` and ``seed`` are read); ``source`` a line saying where B or the groups came from."""

    mode: str
    data: CalibrationData
    options: AnalysisOptions
    other: CalibrationData | None = None
    groups: np.ndarray | None = None
    names: tuple = ("A", "B")
    method: str = "temperature"
    source: str = ""

    @property
    def key(self) -> tuple:
        """Cache key: the identity of the arrays and every input the computation reads."""
        o = self.options
        read = (o.target, o.class_index, o.n_bins, o.alpha, o.resampling, o.seed)
        mode_inputs = {
            "recalibration": (self.method,),
            "models": (id(self.other), tuple(self.names)),
            "groups": (id(self.groups),),
        }[self.mode]
        return ("comparison", self.mode, id(self.data), mode_inputs, read)


@dataclass(frozen=True)
class ComparisonOutcome:
    """What the comparison view draws.  ``items``: the compared things in order (model names, or group
    values as text); ``reliability``: per item its ``ReliabilityData`` (None: fewer than 2 rows);
    ``comparison``: the :class:`calviz.comparison.ModelComparison` (modes "recalibration" and
    "models"); ``groups``: the :class:`calviz.comparison.GroupCalibration` (mode "groups");
    ``recalibration``: method, split sizes and fitted temperature (mode "recalibration");
    ``target``: the scalar target compared; ``n``: rows compared; ``source``: the request's."""

    mode: str
    items: tuple
    reliability: tuple
    target: str
    n: int
    comparison: Any = None
    groups: Any = None
    recalibration: dict = field(default_factory=dict)
    source: str = ""

    @property
    def verdict(self) -> str:
        """One line: what changed and whether the change is statistically supported."""
        if self.groups is not None:
            return self.groups.verdict
        verdict = self.comparison.verdict
        if self.mode == "recalibration":
            r = self.recalibration
            fitted = f" (T = {r['temperature']:.3g})" if r.get("temperature") is not None else ""
            return (
                f"{r['method'].capitalize()} recalibration{fitted}, fitted on {r['n_calibration']:,} rows, "
                f"judged on the {r['n_eval']:,} held-out rows: {verdict}"
            )
        return verdict


def compute_comparison(mode, labels, probs, other_probs, groups, names, method, options,
                       confidence_form=False, weights=None) -> ComparisonOutcome:
    """The comparison of one request on plain arrays (picklable: runs in a worker process); with
    ``confidence_form`` the rows are (confidence, correct) pairs (:attr:`CalibrationData.confidence_form`);
    ``weights``: the rows' sample weights (:attr:`CalibrationData.weights`), read by two models'
    comparison as ``calviz compare --weight-column`` reads them
    (:func:`calviz.analysis.comparisons.unweighted_parts`)."""
    from calviz._ece import reliability
    from calviz._weights import with_weights
    from calviz.analysis.comparisons import (
        compare_models,
        comparison_keywords,
        group_calibration,
        recalibration,
    )

    keywords = comparison_keywords(options)
    common = {k: keywords[k] for k in ("n_bins", "alpha", "target", "class_index")}  # (the diagrams')

    def rows(y, p) -> CalibrationData:
        return as_calibration_data(y, p, confidence_form=confidence_form)

    def diagrams(y, *models, sample_weight=None):
        return tuple(reliability(rows(y, p), sample_weight=sample_weight, **common) for p in models)

    if mode == "groups":
        by_group = group_calibration(rows(labels, probs), groups, options)
        return ComparisonOutcome(
            mode,
            tuple(str(g.group) for g in by_group.groups),
            tuple(g.reliability for g in by_group.groups),
            by_group.target,
            by_group.n,
            groups=by_group,
        )
    if mode == "recalibration":
        res, cmp = recalibration(rows(labels, probs), method, options)
        info = {
            "method": method,
            "n_eval": res.n_eval,
            "n_calibration": int(res.calibration_indices.shape[0]),
            "temperature": res.temperature,
        }
        return ComparisonOutcome(
            mode,
            cmp.names,
            diagrams(res.y_true, res.y_prob_before, res.y_prob),
            cmp.target,
            cmp.n,
            comparison=cmp,
            recalibration=info,
        )
    if mode == "models":
        data = rows(labels, probs) if weights is None else with_weights(rows(labels, probs), weights)
        cmp = compare_models(data, other_probs, names, options)
        shown = diagrams(labels, probs, other_probs, sample_weight=data.weights)
        return ComparisonOutcome(mode, cmp.names, shown, cmp.target, cmp.n, comparison=cmp)
    raise InputError(f"unknown comparison mode {mode!r}")


def _arguments(request: ComparisonRequest) -> tuple:
    other = request.other.probs if request.other is not None else None
    return (
        request.mode,
        request.data.labels,
        request.data.probs,
        other,
        request.groups,
        tuple(request.names),
        request.method,
        request.options,
        request.data.confidence_form,
        request.data.weights,
    )


class ComparisonStore(param.Parameterized):
    """The comparison of one session: ``entry`` (an :class:`~calviz.app.store.Entry` whose ``result`` is a
    :class:`ComparisonOutcome`), computed as a background job of the session's
    :class:`~calviz.app.store.ResultStore` (its worker process), or inline outside a server."""

    entry = param.ClassSelector(class_=Entry, default=Entry(), doc="the comparison shown")

    def __init__(
        self,
        results: ResultStore,
        *,
        schedule=None,
        debounce: float = DEBOUNCE_S,
        inline: bool = True,
        **params,
    ):
        super().__init__(**params)
        self._results = results
        self._schedule = schedule or (lambda callback: callback())
        self._debounce = float(debounce)
        self._inline = bool(inline)
        self._cache: OrderedDict = OrderedDict()
        self._errors: dict = {}
        self._wanted: tuple | None = None
        self._lock = threading.RLock()
        self.calls = 0

    def update(self, request: ComparisonRequest | None) -> None:
        """Show the comparison of ``request`` (None: nothing to compare) — at once when cached or computed
        inline, else after its background job, with a pending entry meanwhile."""
        key = None if request is None else request.key
        if key == self._wanted and self.entry.key == key:
            return  # shown already, or its job is on the way
        self._wanted = key
        if request is None:
            self.entry = Entry()
            return
        with self._lock:
            cached = key in self._cache
        if cached or self._inline:
            if not cached:
                self._run(request)
            self._publish(request)
            return
        self.entry = Entry(
            key, None, request.options, request.data, pending=f"comparison: {MODES[request.mode]}"
        )
        self._results.in_background(self._job, request)

    def _run(self, request: ComparisonRequest, *, remote: bool = False) -> None:
        arguments = _arguments(request)
        try:
            if remote:
                outcome = self._results.run_in_worker(compute_comparison, *arguments)
            else:
                outcome = compute_comparison(*arguments)
            error = None
        except (InputError, ValueError, TypeError) as exc:  # the engine's message, shown in the card
            outcome, error = None, str(exc)
        except TimeoutError as exc:
            outcome, error = None, f"comparison: stopped: {exc}"
        with self._lock:
            self.calls += 1
            self._cache[request.key] = outcome
            self._errors[request.key] = error
            while len(self._cache) > _CACHE_SIZE:
                old, _ = self._cache.popitem(last=False)
                self._errors.pop(old, None)

    def _job(self, request: ComparisonRequest) -> None:
        if self._debounce:
            time.sleep(self._debounce)
        if self._wanted != request.key:
            return  # superseded before it started: never starts
        self._run(request, remote=True)
        if self._wanted == request.key:
            self._schedule(partial(self._publish, request))

    def _publish(self, request: ComparisonRequest) -> None:
        if self._wanted != request.key:
            return
        with self._lock:
            outcome, error = self._cache.get(request.key), self._errors.get(request.key)
        self.entry = Entry(request.key, outcome, request.options, request.data, error=error)

    def wait(self, timeout: float = 120.0) -> None:
        """Block until the wanted comparison is published (tests, scripts)."""
        deadline = time.monotonic() + timeout
        while self.entry.pending and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.entry.pending:
            raise TimeoutError("the comparison did not finish in time")
