"""The dashboard, the report and ``calviz check`` on distributed data: a :class:`DistributedSource` runs the
compute functions of :mod:`calviz.analysis` with the distributed estimators on all rows, and the views
that need the rows in one process (:data:`calviz.sampling.SAMPLED_VIEWS`) in memory on the subsample the
in-memory data would use — the same rows for the same seed — or on every row when ``all_rows`` is set."""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import threading
import types
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from calviz import analysis
from calviz._data import InputError
from calviz._params import Interval, validate_params
from calviz.dask._data import (
    DaskCalibrationData,
    as_dask_data,
    check_n,
    compute,
    from_parquet,
    gather,
    map_partitions,
)
from calviz.sampling import SAMPLED_ROWS, sample_generator, sample_note


def _partition_summary(data):
    """(rows, correct predictions, sum of confidences) of one partition (its DataSummary, unnormalised)."""
    if data.n == 0:
        return 0, 0.0, 0.0
    s = analysis.DataSummary.of(data, analysis.AnalysisOptions())
    return data.n, s.accuracy * data.n, s.mean_confidence * data.n


#: persistent clients of :func:`get_client` (one per scheduler address; "local" = one LocalCluster)
_CLIENTS: dict = {}
_CLIENTS_LOCK = threading.Lock()


def get_client(scheduler: str):
    """A long-lived ``distributed.Client`` shared by every caller in this process.

    Parameters
    ----------
    scheduler : str
        ``"local"``: one 2-process LocalCluster, created at first use and closed at exit;
        ``"tcp://host:port"``: a connection to that scheduler.

    Returns
    -------
    distributed.Client
        Not made dask's default scheduler: calviz passes it explicitly.  The dashboard's sessions share the
        connection, not any state.
    """
    import distributed

    if not isinstance(scheduler, str) or not scheduler:
        raise InputError(f"scheduler must be 'local' or an address like 'tcp://host:8786'; got {scheduler!r}")
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(scheduler)
        if client is not None and client.status in ("running", "connecting"):
            return client
        try:
            if scheduler == "local":  # (the client owns its LocalCluster and closes it with itself)
                client = distributed.Client(n_workers=2, threads_per_worker=1, processes=True,
                                            dashboard_address=None, set_as_default=False)
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
            with contextlib.suppress(Exception):
                client.close()
        _CLIENTS.clear()


#: the views that need the whole sample in one process, and why
_NOT_ON_DASK = {
    "smooth": "the smooth diagram needs the whole sample in one process",
    "smooth_curve": "the smooth diagram needs the whole sample in one process",
    "bootstrap": "the bootstrap resamples the whole sample; the asymptotic interval is computed instead",
    "classical": "the classical tests and the ACE sort the whole sample",
}


_DISTANCE_SAMPLE = {"distance_sample": Interval(int, 2, None)}


@validate_params(_DISTANCE_SAMPLE)
def compute_view(view: str, data, options, *, client=None, distance_sample: int = SAMPLED_ROWS["distance"]):
    """One view of :mod:`calviz.analysis` on distributed data.

    Parameters
    ----------
    view : str
        A key of :data:`calviz.analysis.COMPUTE`.
    data : DistributedSource or any input of :func:`as_dask_data`
    options : calviz.analysis.AnalysisOptions
    client : distributed.Client, optional
    distance_sample : int, default 200000
        Rows of the distance measures' subsample.

    Returns
    -------
    (result, str or None)
        The in-memory result type and a note on the rows used (:meth:`DistributedSource.compute_view`).
    """
    if view in _NOT_ON_DASK:
        raise InputError(f"not available on Dask: {_NOT_ON_DASK[view]}")
    if not isinstance(data, DistributedSource):
        data = _source(as_dask_data(data), client, None, distance_sample)
    return data.compute_view(view, options)


@dataclass(frozen=True, repr=False)
class DistributedSource:
    """Distributed predictions analysed in place: the data, the client that computes on it and the counts
    of one validating pass.  The dashboard, :func:`calviz.analysis.analyze` and the report use it like a
    :class:`calviz.CalibrationData` (``n``, ``n_classes``, ``is_binary``, ``distributed``)."""

    data: DaskCalibrationData
    client: Any
    scheduler: str
    n: int
    correct: float
    confidence_sum: float
    distance_sample: int = SAMPLED_ROWS["distance"]
    _rows: dict = field(default_factory=dict, compare=False)
    #: the dashboard's cache keys and the report read this
    distributed = True

    n_classes = property(lambda self: self.data.n_classes)
    is_binary = property(lambda self: self.data.is_binary)
    source = property(lambda self: self.data.source)

    def __repr__(self) -> str:
        kind = "binary" if self.is_binary else f"{self.n_classes}-class"
        return (f"DistributedSource({self.source}, {kind}, n={self.n:,}, npartitions={self.data.npartitions},"
                f" scheduler={self.scheduler!r})")

    @property
    def estimators(self):
        """The distributed twins :mod:`calviz.analysis` calls instead of the in-memory estimators."""
        from calviz import dask as twins

        names = ("reliability", "multi_reliability", "adaptive_tcal", "ece_interval")
        return types.SimpleNamespace(**{name: functools.partial(getattr(twins, name), client=self.client)
                                        for name in names})

    def rows(self, size: int | None, seed: int, *, view_sample: bool = False):
        """In memory: every row, or the subsample of ``size`` rows the in-memory data would give —
        ``options.n`` (:func:`calviz.analysis.prepare`) or, ``view_sample``, a view's subsample
        (:func:`calviz.sampling.sample_for_view`).  Cached."""
        key = (size, int(seed), view_sample)
        if key not in self._rows:
            generator = sample_generator(seed) if view_sample else int(seed)
            self._rows[key] = gather(self.data, size, generator, client=self.client)[0]
        return self._rows[key]

    def compute_view(self, view: str, options):
        """``(result, note)`` of one view (:data:`calviz.analysis.COMPUTE`), computed as in memory.

        A user subsample (``options.n``) is gathered and analysed in memory.  Otherwise reliability,
        T-Cal and the asymptotic interval run on Dask on all rows (equal-width bins: a note says so when
        equal-mass ones were asked for); the distance measures (``distance_sample`` rows, by default the
        in-memory 2·10⁵) and, beyond 2·10⁵ rows, resampled T-Cal run in memory on the in-memory view
        subsample, with its note — or, with ``options.all_rows``, on every row (T-Cal on Dask; the
        distance measures gather every row into this process, as in memory).  The smooth diagram, the
        bootstrap and the classical tests are refused with the reason."""
        if view in _NOT_ON_DASK:
            raise InputError(f"not available on Dask: {_NOT_ON_DASK[view]}")
        if options.n is not None and options.n < self.n:
            rows = self.rows(int(options.n), options.seed)
            return analysis.run_view(view, rows, options.replace(n=None))[::2]
        limit = self.distance_sample if view == "distance" else SAMPLED_ROWS.get(view)
        if view == "distance" or (limit is not None and self.n > limit and not options.all_rows):
            size = None if options.all_rows or self.n <= limit else limit
            rows = self.rows(size, options.seed, view_sample=True)
            note = None if size is None else sample_note(view, rows, self.n, options)
            return analysis.COMPUTE[view](rows, options), note
        note = None
        if view == "reliability" and options.scheme != "equal_width":
            note = "equal-mass bins need global quantiles; equal-width bins are used on Dask"
            options = options.replace(scheme="equal_width")
        return analysis.COMPUTE[view](self, options), note

    def data_summary(self, options):
        """The :class:`calviz.analysis.DataSummary` of all rows (of the user subsample with ``options.n``)."""
        if options.n is not None and options.n < self.n:
            return analysis.DataSummary.of(self.rows(int(options.n), options.seed), options, n_total=self.n)
        return analysis.DataSummary(n=self.n, n_total=self.n, n_classes=self.n_classes,
                                    is_binary=self.is_binary, target=analysis.resolve_target(self, options),
                                    accuracy=self.correct / self.n,
                                    mean_confidence=self.confidence_sum / self.n)


def _open_data(path, y_true, y_prob, prob_prefix) -> DaskCalibrationData:
    """A Parquet path (file, directory, glob, list) or any input of :func:`as_dask_data`."""
    if isinstance(path, (str, os.PathLike, list, tuple)):
        return from_parquet(path, y_true=y_true, y_prob=y_prob, prob_prefix=prob_prefix)
    return as_dask_data(path, y_true_column=y_true, y_prob_columns=y_prob)


@validate_params(_DISTANCE_SAMPLE)
def open_source(path, *, scheduler: str | None = None, y_true: str | None = None,
                y_prob: str | Sequence[str] | None = None, prob_prefix: str | None = None,
                distance_sample: int = SAMPLED_ROWS["distance"], client=None) -> DistributedSource:
    """Open distributed predictions for the dashboard, validated and counted in one pass.

    Parameters
    ----------
    path : str, path, list of paths or any input of :func:`as_dask_data`
        A Parquet file, directory or glob.
    scheduler : str, optional
        ``"local"`` (the default) or ``"tcp://host:port"`` (:func:`get_client`); or pass ``client``.
    y_true, y_prob, prob_prefix : str, optional
        The columns (:func:`from_dataframe`).
    distance_sample : int, default 200000
        Rows of the distance measures' subsample.
    client : distributed.Client, optional

    Returns
    -------
    DistributedSource
        An :class:`InputError` names the partition and the row of the first bad value instead.
    """
    data = _open_data(path, y_true, y_prob, prob_prefix)
    if client is None:
        scheduler = scheduler or "local"
        client = get_client(scheduler)
    return _source(data, client, scheduler, distance_sample)


def _source(data: DaskCalibrationData, client, scheduler, distance_sample: int) -> DistributedSource:
    """The source after one validating pass that counts the rows (``client`` None: dask's scheduler)."""
    summaries = compute(data, *map_partitions(data, _partition_summary), client=client)
    n, correct, confidence = (sum(column) for column in zip(*summaries, strict=True))
    check_n(n)
    # the lengths counted here spare later passes over the data (gather's count)
    data = replace(data, lengths=tuple(int(s[0]) for s in summaries))
    name = scheduler if isinstance(scheduler, str) else str(getattr(client, "scheduler", None) and
                                                            client.scheduler.address)
    return DistributedSource(data, client, name, n, correct, confidence, int(distance_sample))


@validate_params(_DISTANCE_SAMPLE)
def analyze_parquet(path, *, scheduler=None, y_true: str | None = None,
                    y_prob: str | Sequence[str] | None = None, prob_prefix: str | None = None, options=None,
                    distance_sample: int = SAMPLED_ROWS["distance"],
                    **option_values):
    """:func:`calviz.analysis.analyze` of a Parquet file, directory or glob on Dask.

    Every view is computed as :meth:`DistributedSource.compute_view` says: on all rows on the cluster, or
    in memory on the subsample the in-memory analysis would use (``errors[view]`` says so), unless
    ``all_rows=True``; the smooth diagram, the bootstrap interval and consistency resampling are not
    available (``None``, the reason in ``errors``).

    Parameters
    ----------
    path : str, path or list
        Parquet data, or any input of :func:`as_dask_data`.
    scheduler : None, "local", "tcp://host:port" or distributed.Client
        None: dask's current scheduler; "local": the LocalCluster of :func:`get_client`.
    y_true, y_prob, prob_prefix : str, optional
        The columns (:func:`from_dataframe`).
    options : calviz.analysis.AnalysisOptions, optional
    distance_sample : int, default 200000
        Rows of the distance measures' subsample.
    **option_values
        Fields of ``options`` to override.

    Returns
    -------
    calviz.analysis.Analysis

    References
    ----------
    .. [1] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. 2024.
    .. [2] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.
    """
    data = _open_data(path, y_true, y_prob, prob_prefix)
    client = get_client(scheduler) if isinstance(scheduler, str) else scheduler  # None: dask's scheduler
    source = _source(data, client, scheduler, distance_sample)
    return analysis.analyze(source, options or analysis.AnalysisOptions(), **option_values)
