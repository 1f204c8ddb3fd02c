"""The entry points of the CLI (``calviz check``) and the dashboard on distributed data: every view of
:mod:`calviz.analysis` computed by the Dask drivers, and the clients they run on."""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from calviz import analysis as _analysis
from calviz._data import InputError
from calviz.dask._data import (
    DaskCalibrationData,
    as_dask_data,
    check_n,
    compute,
    from_parquet,
    map_partitions,
    validate,
)
from calviz.dask._estimators import (
    distance,
    ece_interval,
    multi_reliability,
    reliability,
    smce_sampling_error,
    uniform_subsample,
)
from calviz.dask._tcal import adaptive_tcal


def _partition_summary(part, index, row_offset):
    """(rows, correct predictions, sum of confidences): the in-memory
    :class:`calviz.analysis.DataSummary` of the partition, unnormalised."""
    data = validate(part, index, row_offset)
    if data.n == 0:
        return 0, 0.0, 0.0
    s = _analysis.DataSummary.of(data, _analysis.AnalysisOptions())
    return data.n, s.accuracy * data.n, s.mean_confidence * data.n


def _client(scheduler):
    """None: the current dask scheduler (a default distributed Client if one exists); a Client: itself;
    "local" or an address "tcp://host:port": the shared client of :func:`get_client`."""
    if scheduler is None or not isinstance(scheduler, str):
        return scheduler
    return get_client(scheduler)


#: persistent clients of :func:`get_client` (one per scheduler address; "local" = one LocalCluster)
_CLIENTS: dict = {}
_CLIENTS_LOCK = threading.Lock()


def get_client(scheduler: str):
    """A long-lived ``distributed.Client`` for ``scheduler`` (``"local"``: one 2-process LocalCluster for
    this Python process, created at first use; ``"tcp://host:port"``: a connection to that scheduler),
    shared by every caller in the process — the dashboard's sessions share the connection, not any
    state.  The client is not made dask's default scheduler; calviz passes it explicitly."""
    import distributed

    if not isinstance(scheduler, str) or not scheduler:
        raise InputError(f"scheduler must be 'local' or an address like 'tcp://host:8786'; got {scheduler!r}")
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(scheduler)
        if client is not None and client.status in ("running", "connecting"):
            return client
        try:
            if scheduler == "local":
                cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                                   dashboard_address=None)
                client = distributed.Client(cluster, set_as_default=False)
            else:
                client = distributed.Client(scheduler, timeout="10s", set_as_default=False)
        except OSError as exc:
            raise InputError(f"could not connect to the Dask scheduler at {scheduler!r}: {exc}") from None
        if not _CLIENTS:
            atexit.register(_close_clients)
        _CLIENTS[scheduler] = client
        return client


def _close_clients() -> None:
    """Close the clients (and the LocalCluster) of :func:`get_client` before the interpreter exits, so the
    workers stop cleanly instead of being killed mid-task."""
    with _CLIENTS_LOCK:
        for client in _CLIENTS.values():
            cluster = getattr(client, "cluster", None)
            with contextlib.suppress(Exception):
                client.close()
            if cluster is not None:
                with contextlib.suppress(Exception):
                    cluster.close()
        _CLIENTS.clear()


#: views computed on all rows of distributed data, and the ones that need the whole sample in memory
DASK_VIEWS = ("reliability", "tcal", "tcal_resampled", "interval", "distance")
_NOT_ON_DASK = {
    "smooth": "the smooth diagram needs the whole sample in one process",
    "smooth_curve": "the smooth diagram needs the whole sample in one process",
    "bootstrap": "the bootstrap resamples the whole sample; the asymptotic interval is computed instead",
    "classical": "the classical tests and the ACE sort the whole sample",
}


def _targets(data: DaskCalibrationData, options) -> tuple[str, str, int]:
    """(target, scalar target, class index) with the in-memory rules of
    :func:`calviz.analysis.resolve_target` / :func:`calviz.analysis.analysis_view`."""
    target = _analysis.resolve_target(data, options)
    return target, _analysis.scalar_target(data, target), min(int(options.class_index), data.n_classes - 1)


def compute_view(view: str, data: DaskCalibrationData, options, *, client=None,
                 distance_sample: int = 200_000):
    """One view of :mod:`calviz.analysis` (same name, same result object) computed on distributed data.

    Returns ``(result, note)``: ``note`` (or None) says how the result differs from the in-memory one —
    equal-width bins instead of equal-mass, or distance measures from a uniform subsample of
    ``distance_sample`` rows with their sampling error.  Raises :class:`InputError` for a
    view that is not available on Dask (:data:`_NOT_ON_DASK`) or refuses the input."""
    if view in _NOT_ON_DASK:
        raise InputError(f"not available on Dask: {_NOT_ON_DASK[view]}")
    target, scalar_target, class_index = _targets(data, options)
    if view == "reliability":
        note = None
        if options.scheme != "equal_width":
            note = "equal-mass bins need global quantiles; equal-width bins are used on Dask"
        if not _analysis.scalar_reliability(data, options):  # one diagram per rank / per class
            return multi_reliability(data, target=target, top_k=int(options.top_k),
                                     n_bins=int(options.n_bins), alpha=options.alpha, client=client), note
        return reliability(data, n_bins=int(options.n_bins), alpha=options.alpha, target=scalar_target,
                           class_index=class_index, client=client), note
    tcal_target = target if target in ("binary", "top1", "classwise", "full") else "full"
    tcal_class = class_index if tcal_target == "classwise" else None
    if view == "tcal":
        return adaptive_tcal(data, alpha=options.alpha, resampling="analytic", target=tcal_target,
                             class_index=tcal_class, client=client), None
    if view == "tcal_resampled":
        if options.resampling != "y_only" or tcal_target == "full":
            raise InputError(f"resampling {options.resampling!r} for the {tcal_target} target is not "
                             "available on Dask (y_only is, for 1-D targets); the analytic test is shown")
        # as in memory (calviz.analysis.compute_tcal): the sequential rule; options.n_resamples is for the
        # bootstrap views
        return adaptive_tcal(data, alpha=options.alpha, resampling="y_only", target=tcal_target,
                             class_index=tcal_class, seed=int(options.seed), client=client), None
    if view == "interval":
        if target in ("topk", "full"):
            k = data.n_classes if target == "full" else min(int(options.top_k), data.n_classes)
            return ece_interval(data, n_bins=int(options.n_bins), alpha=options.alpha, top_k=k,
                                client=client), None
        return ece_interval(data, n_bins=int(options.n_bins), alpha=options.alpha, target=scalar_target,
                            class_index=class_index, client=client), None
    if view == "distance":
        size = int(options.n) if options.n is not None else int(distance_sample)
        z, y, n_all, _, entropy, complete = uniform_subsample(
            data, size=size, seed=int(options.seed), target=scalar_target, class_index=class_index,
            client=client)
        bounds = distance.distance_bounds(y.astype(np.int64), z)
        if complete:
            return (bounds, None), None
        k = int(z.shape[0])
        smce_err = smce_sampling_error(k, float(np.mean(y)), 0.05)
        note = (f"distance measures computed on a uniform subsample of {k:,} of {n_all:,} rows (with "
                f"replacement, seed {entropy}); e.g. smCE sampling error ≤ {smce_err:.3g} with probability "
                "0.95 (see calviz.dask.subsample_measure for smCE, SintCE, dCE_lower bounds)")
        return (bounds, None), note
    raise InputError(f"unknown view {view!r}")


def _summary_counts(data: DaskCalibrationData, client) -> tuple[int, float, float]:
    """(rows, correct predictions, sum of confidences) over all partitions — one pass that also validates
    every partition."""
    summaries = compute(data, *map_partitions(data, _partition_summary), client=client)
    n = sum(s[0] for s in summaries)
    check_n(n)
    return n, sum(s[1] for s in summaries), sum(s[2] for s in summaries)


@dataclass(frozen=True, repr=False)
class DistributedSource:
    """Distributed predictions the dashboard and :func:`analyze_parquet` analyse in place: the data, the
    client that computes on it and the counts of one validating pass (so ``n`` is known).

    Every view of :mod:`calviz.analysis` goes through :meth:`compute_view` (:func:`compute_view`); the
    views that need the whole sample in memory (smooth diagram, bootstrap interval) are refused with the
    reason, and the distance measures use a uniform subsample whose sampling error is stated."""

    data: DaskCalibrationData
    client: Any
    scheduler: str
    n: int
    correct: float
    confidence_sum: float
    distance_sample: int = 200_000
    #: the dashboard's cache keys and the report use this like CalibrationData's
    distributed = True

    @property
    def n_classes(self) -> int:
        return self.data.n_classes

    @property
    def is_binary(self) -> bool:
        return self.data.is_binary

    @property
    def source(self) -> str:
        return self.data.source

    def __repr__(self) -> str:
        kind = "binary" if self.is_binary else f"{self.n_classes}-class"
        return (f"DistributedSource({self.source}, {kind}, n={self.n:,}, npartitions={self.data.npartitions},"
                f" scheduler={self.scheduler!r})")

    def compute_view(self, view: str, options):
        """``(result, note)`` of one analysis view on all rows (see :func:`compute_view`)."""
        return compute_view(view, self.data, options, client=self.client,
                            distance_sample=self.distance_sample)

    def data_summary(self, options):
        """The :class:`calviz.analysis.DataSummary` of all rows."""
        return _analysis.DataSummary(
            n=self.n, n_total=self.n, n_classes=self.n_classes, is_binary=self.is_binary,
            target=_targets(self.data, options)[0], accuracy=self.correct / self.n,
            mean_confidence=self.confidence_sum / self.n)


def _open_data(path, y_true, y_prob, prob_prefix) -> DaskCalibrationData:
    """A Parquet path (file, directory, glob, list) or any input of :func:`as_dask_data`."""
    if isinstance(path, DaskCalibrationData):
        return path
    if isinstance(path, (str, os.PathLike, list, tuple)):
        return from_parquet(path, y_true=y_true, y_prob=y_prob, prob_prefix=prob_prefix)
    return as_dask_data(path, y_true_column=y_true, y_prob_columns=y_prob)


def open_source(path, *, scheduler: str | None = None, y_true: str | None = None,
                y_prob: str | Sequence[str] | None = None, prob_prefix: str | None = None,
                distance_sample: int = 200_000, client=None) -> DistributedSource:
    """Open distributed predictions for the dashboard: a Parquet file / directory / glob (or any input of
    :func:`as_dask_data`) on the scheduler ``scheduler`` ("local" — the default — or "tcp://host:port", see
    :func:`get_client`; or pass a ``distributed.Client`` as ``client``).  Reads the schema, then validates
    every partition in one pass (an :class:`InputError` names the partition and row of the first bad value)
    and counts the rows."""
    data = _open_data(path, y_true, y_prob, prob_prefix)
    if client is None:
        scheduler = scheduler or "local"
        client = get_client(scheduler)
    return _source(data, client, scheduler, distance_sample)


def _source(data: DaskCalibrationData, client, scheduler, distance_sample: int) -> DistributedSource:
    """The source after one validating pass that counts the rows (``client`` None: dask's scheduler)."""
    n, correct, confidence = _summary_counts(data, client)
    name = scheduler if isinstance(scheduler, str) else str(getattr(client, "scheduler", None) and
                                                            client.scheduler.address)
    return DistributedSource(data, client, name, n, correct, confidence, int(distance_sample))


def analyze_parquet(
    path, *, scheduler=None, y_true: str | None = None, y_prob: str | Sequence[str] | None = None,
    prob_prefix: str | None = None, options=None, distance_sample: int = 200_000, **option_values,
):
    """Analyse a Parquet file / directory / glob (or any input of :func:`as_dask_data`) on Dask and return
    a :class:`calviz.analysis.Analysis` — the object the dashboard, the report and ``calviz check`` read.

    ``scheduler``: None (current dask scheduler), ``"local"`` (the 2-process LocalCluster of
    :func:`get_client`), a scheduler address ``"tcp://host:8786"`` or a ``distributed.Client``.
    ``y_true`` / ``y_prob``: column names (detected when None).  ``options``: a
    :class:`calviz.analysis.AnalysisOptions` (keywords override its fields).  Computed on all rows
    (:func:`compute_view`): reliability, analytic adaptive T-Cal, the asymptotic ECE interval of Sun,
    Chaudhari, Barnett and Dobriban (2024) (one or two passes each).  The distance bounds (smCE,
    dCE_lower, SintCE, kCE, ...) need the whole sorted sample: they are computed on a uniform subsample of
    ``distance_sample`` rows (or ``options.n``) — said in ``errors["distance"]`` with the sampling
    errors of :func:`subsample_measure`.  ``options.resampling == "y_only"`` adds y-only resampled T-Cal
    (1-D targets; the in-memory sequential rule and random streams) as ``tcal_resampled``.  Not available
    on Dask (``None`` with the reason in ``errors``): the smooth diagram, the bootstrap interval,
    consistency resampling.  ``prob_prefix``: probability columns
    ``<prefix>0..<prefix>K-1``.
    """
    opts = options or _analysis.AnalysisOptions()
    source = _source(_open_data(path, y_true, y_prob, prob_prefix), _client(scheduler), scheduler,
                     distance_sample)
    return _analysis.analyze(source, opts, **option_values)
