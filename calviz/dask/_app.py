"""The dashboard, the report and ``calviz check`` on distributed data: a :class:`DistributedSource` runs the
compute functions of :mod:`calviz.analysis` with the distributed estimators on all rows, and the views
that need the rows in one process (the registry's ``View.dask == "gathered"``) in memory on the subsample the
in-memory data would use — the same rows for the same seed — or on every row when ``all_rows`` is set."""

from __future__ import annotations

import atexit
import contextlib
import functools
import logging
import os
import threading
import types
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from calviz import analysis
from calviz._data import InputError
from calviz._params import Instance, Interval, NoneOr, validate_params
from calviz.analysis.data import DistributedBackend
from calviz.analysis.views import view as view_record
from calviz.dask._data import (
    DaskCalibrationData,
    PartitionInputError,
    as_dask_data,
    check_n,
    compute,
    from_parquet,
    gather,
    map_partitions,
)
from calviz.dask._estimators import ece_interval, multi_reliability, reliability
from calviz.dask._tcal import adaptive_tcal
from calviz.dask._twin import CLIENT_RULE
from calviz.sampling import SAMPLED_ROWS, result_note, sample_for_view, sample_generator, sample_note


def _partition_summary(data):
    """(rows, correct predictions, sum of confidences) of one partition (its DataSummary, unnormalised)."""
    if data.n == 0:
        return 0, 0.0, 0.0
    s = analysis.DataSummary.of(data, analysis.AnalysisOptions())
    return data.n, s.accuracy * data.n, s.mean_confidence * data.n


#: the interface every server of calviz's own local cluster listens on
LOOPBACK = "127.0.0.1"

#: persistent clients of :func:`get_client` (one per scheduler address; "local" = one LocalCluster)
_CLIENTS: dict = {}
_CLIENTS_LOCK = threading.Lock()


def get_client(scheduler: str):
    """A long-lived ``distributed.Client`` shared by every caller in this process.

    One client per scheduler address: a second call with the same address returns the same client while
    it is running (a closed one is replaced).  The clients still open are closed when the interpreter
    exits.  A scheduler that cannot be reached raises :class:`calviz.InputError`.

    Parameters
    ----------
    scheduler : str
        ``"local"``: one LocalCluster of 2 worker processes, created at first use and closed at exit;
        ``"tcp://host:port"`` (or any address ``distributed.Client`` accepts): a connection to that
        scheduler.

    Returns
    -------
    distributed.Client
        Not made dask's default scheduler: calviz passes it explicitly.  The dashboard's sessions share the
        connection, not any state.

    Examples
    --------
    A scheduler running in this process (a real deployment passes ``"tcp://host:8786"``):

    >>> import numpy as np, dask.array as da, calviz, calviz.dask
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> Y, P = da.from_array(y, chunks=700), da.from_array(p, chunks=700)
    >>> from distributed import Client, LocalCluster
    >>> cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    >>> client = calviz.dask.get_client(cluster.scheduler_address)
    >>> client is calviz.dask.get_client(cluster.scheduler_address)
    True
    >>> on_cluster = calviz.dask.debiased_ece(Y, P, n_bins=10, client=client)
    >>> bool(np.isclose(on_cluster.value, calviz.debiased_ece(y, p, n_bins=10).value, rtol=1e-12))
    True
    >>> client.close(); cluster.close()
    """
    import distributed

    if not isinstance(scheduler, str) or not scheduler:
        raise InputError(f"scheduler must be 'local' or an address like 'tcp://host:8786'; got {scheduler!r}")
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(scheduler)
        if client is not None and client.status in ("running", "connecting"):
            return client
        if scheduler != "local":
            _check_address(distributed, scheduler)
        try:
            if scheduler == "local":  # (the client owns its LocalCluster and closes it with itself)
                # no dashboard; the scheduler's HTTP server (always started) on a free port: on the
                # default 8787, taken by any other cluster, it would warn on the user's terminal.  Every
                # listener on the loopback interface: the cluster serves this process alone
                client = distributed.Client(n_workers=2, threads_per_worker=1, processes=True,
                                            host=LOOPBACK, dashboard_address=f"{LOOPBACK}:0",
                                            scheduler_kwargs={"dashboard": False}, set_as_default=False)
                client.register_plugin(_quiet_refusals(), name="calviz-quiet-refusals")
            else:
                client = distributed.Client(scheduler, timeout="10s", set_as_default=False)
        except OSError as exc:
            raise InputError(f"could not connect to the Dask scheduler at {scheduler!r}: {exc}") from None
        if not _CLIENTS:
            atexit.register(_close_clients)
        _CLIENTS[scheduler] = client
        return client


def _check_address(distributed, scheduler: str) -> None:
    """Refuse a scheduler address ``distributed.Client`` cannot parse before making one: a client whose
    construction failed part-way blocks the interpreter's exit for its connection timeout."""
    try:
        protocol, location = distributed.comm.parse_address(scheduler)
        if protocol in ("tcp", "tls", "ws", "wss"):
            distributed.comm.parse_host_port(location)
    except ValueError as exc:
        raise InputError(f"scheduler must be 'local' or an address like 'tcp://host:8786'; "
                         f"got {scheduler!r} ({exc})") from None


def _not_a_refusal(record: logging.LogRecord) -> bool:
    """Filter of the ``distributed.worker`` logger: False for the "Compute Failed" record (with the
    worker's traceback) of a task that refused a bad partition — a :class:`PartitionInputError`, or the
    KeyError of a table's file that lacks a column — which the client raises as one
    :class:`calviz.InputError` line; True for every other record."""
    def refused(arg) -> bool:  # bad values, or a table's file without a needed column (partition_errors)
        return isinstance(arg, str) and (arg.startswith(f"{PartitionInputError.__name__}(") or (
            arg.startswith("KeyError(") and "not in index" in arg))

    return not (str(record.msg).startswith("Compute Failed") and isinstance(record.args, tuple)
                and any(refused(arg) for arg in record.args))


def _not_a_lost_scheduler(record: logging.LogRecord) -> bool:
    """Filter of the ``distributed.worker`` logger: False for the traceback of a heartbeat that found the
    scheduler gone, True for every other record.  The local cluster's scheduler runs in the calviz process:
    it is gone only when calviz stops, and a Ctrl+C or SIGTERM closes it while a worker's heartbeat may be
    on its way (the worker then stops as well)."""
    return not str(record.msg).startswith("Failed to communicate with scheduler during heartbeat")


def _quiet_refusals():
    """The worker plugin of the local cluster of :func:`get_client`: its workers' ``distributed.worker``
    logger gets :func:`_not_a_refusal`, so bad data is reported once, by the client, and not also as a
    worker failure on the terminal the workers share with the user, and :func:`_not_a_lost_scheduler`, so
    a stop the user asked for prints no traceback there; and they ignore Ctrl+C.  Other clusters keep their
    logging and signals."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class QuietRefusals(WorkerPlugin):
        def setup(self, worker):
            logger = logging.getLogger("distributed.worker")
            for keep in (_not_a_refusal, _not_a_lost_scheduler):
                if keep not in logger.filters:
                    logger.addFilter(keep)
            # Ctrl+C reaches the whole foreground process group: calviz stops the cluster itself, so a
            # worker ignores it instead of printing a KeyboardInterrupt traceback on the user's terminal
            if threading.current_thread() is threading.main_thread():
                import signal

                signal.signal(signal.SIGINT, signal.SIG_IGN)

    return QuietRefusals()


def _close_clients() -> None:
    """Close the clients (and the LocalCluster) of :func:`get_client` before the interpreter exits, so the
    workers stop cleanly instead of being killed mid-task.  The cluster's shutdown warnings (a worker slow
    to exit on a loaded machine is killed) are not shown: the user asked for nothing then."""
    if _CLIENTS:
        logging.getLogger("distributed").setLevel(logging.ERROR)
    with _CLIENTS_LOCK:
        for client in _CLIENTS.values():
            with contextlib.suppress(Exception):
                client.close()
        _CLIENTS.clear()


def close_clients(timeout: float) -> bool:
    """Close the clients of :func:`get_client` within ``timeout`` seconds (a server stopping); whether
    they closed.  If not, the local cluster's worker processes are killed (they hold nothing that must
    be saved) and the caller should exit at once: the unfinished close holds the clients.  The
    cluster's own shutdown warnings are not shown (the stop is intended)."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    closing = threading.Thread(target=_close_clients, name="calviz-close-dask", daemon=True)
    closing.start()
    closing.join(timeout)
    if closing.is_alive():
        import multiprocessing

        for child in multiprocessing.active_children():
            with contextlib.suppress(Exception):
                child.kill()
        return False
    return True


def _refuse_if_not_on_dask(view: str) -> None:
    """The views that need the whole sample in one process (the registry's ``View.not_on_dask`` says why)."""
    reason = view_record(view).not_on_dask
    if reason is not None:
        raise InputError(f"not available on Dask: {reason}")


_DISTANCE_SAMPLE = {"distance_sample": Interval(int, 2, None)}


@validate_params({**_DISTANCE_SAMPLE, "client": CLIENT_RULE})
def compute_view(view: str, data, options, *, client=None, distance_sample: int = SAMPLED_ROWS["distance"]):
    """One view of :mod:`calviz.analysis` on distributed data.

    The view is computed as :meth:`DistributedSource.compute_view` says: reliability, T-Cal and the
    asymptotic interval on all rows on Dask, the distance measures and the bootstrap interval (and, on
    large data, resampled T-Cal) in memory on the rows the in-memory analysis would use.  The smooth
    diagram and the classical tests need the whole sample in one process and raise
    :class:`calviz.InputError`.  Data that is not a :class:`DistributedSource` is validated and counted
    first (one pass).

    Parameters
    ----------
    view : str
        A view of the registry ``calviz.analysis.views`` (``"reliability"``, ``"tcal"``, ``"interval"``, ...).
    data : DistributedSource or any input of :func:`as_dask_data`
        The predictions.
    options : calviz.analysis.AnalysisOptions
        The analysis options (target, bins, α, seed, ...).
    client : distributed.Client, optional
        Where to compute (default: dask's current scheduler); a :class:`DistributedSource` uses its own.
    distance_sample : int, default 200000
        Rows of the distance measures' subsample.

    Returns
    -------
    (result, str or None)
        The in-memory result type of the view and a note on the rows used (a subsample) or the bins
        (equal-width instead of equal-mass), None when there is nothing to note.

    Examples
    --------
    >>> import numpy as np, dask.array as da, calviz, calviz.dask
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> Y, P = da.from_array(y, chunks=700), da.from_array(p, chunks=700)
    >>> from calviz.analysis import COMPUTE, AnalysisOptions
    >>> data = calviz.dask.from_dask(Y, P)
    >>> interval, note = calviz.dask.compute_view("interval", data, AnalysisOptions(n_bins=10))
    >>> in_memory = COMPUTE["interval"](calviz.as_calibration_data(y, p), AnalysisOptions(n_bins=10))
    >>> bool(np.isclose(interval.estimate, in_memory.estimate, rtol=1e-12)), note
    (True, None)
    >>> diagram, note = calviz.dask.compute_view("reliability", data, AnalysisOptions(scheme="equal_mass"))
    >>> diagram.scheme, note
    ('equal_width', 'equal-mass bins need global quantiles; equal-width bins are used on Dask')
    """
    _refuse_if_not_on_dask(view)
    if not isinstance(data, DistributedSource):
        data = _source(as_dask_data(data), client, None, distance_sample)
    return data.compute_view(view, options)


@dataclass(frozen=True, repr=False)
class DistributedSource(DistributedBackend):
    """Distributed predictions analysed in place, with the client that computes on them.

    Made by :func:`open_source` (or :func:`analyze_parquet`) after one validating pass that counts the
    rows.  The dashboard, :func:`calviz.analysis.analyze` and the report use it like a
    :class:`calviz.CalibrationData` (``n``, ``n_classes``, ``is_binary``, ``distributed``) and call
    :meth:`compute_view` for each view.

    Attributes
    ----------
    data : DaskCalibrationData
        The predictions, with the partition lengths counted by the validating pass.
    client : distributed.Client or None
        Where to compute (None: dask's current scheduler).
    scheduler : str
        The scheduler's name or address, for display.
    n : int
        Rows of the data.
    correct : float
        Number of correct predictions (``accuracy`` × n of :class:`calviz.analysis.DataSummary`).
    confidence_sum : float
        Sum of the confidences (``mean_confidence`` × n); both are summed over the partitions.
    distance_sample : int
        Rows of the distance measures' subsample.
    n_classes, is_binary, source
        As for :class:`DaskCalibrationData`.
    distributed : bool
        Always True: tells the dashboard and the report that the data live on a cluster.
    """

    data: DaskCalibrationData
    client: Any
    scheduler: str
    n: int
    correct: float
    confidence_sum: float
    distance_sample: int = SAMPLED_ROWS["distance"]
    _rows: dict = field(default_factory=dict, compare=False)
    #: the dashboard's cache keys and the report read this (:class:`calviz.analysis.DistributedBackend`)
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
        twins = (reliability, multi_reliability, adaptive_tcal, ece_interval)
        return types.SimpleNamespace(**{twin.__name__: functools.partial(twin, client=self.client)
                                        for twin in twins})

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
        """``(result, note)`` of one view of the registry (``calviz.analysis.views``), computed as in memory.

        A user subsample (``options.n``) is gathered and analysed in memory.  Otherwise reliability,
        T-Cal and the asymptotic interval run on Dask on all rows (equal-width bins: a note says so when
        equal-mass ones were asked for); the distance measures (``distance_sample`` rows, by default the
        in-memory 2·10⁵), the bootstrap interval (5·10⁴) and, beyond 2·10⁵ rows, resampled T-Cal run in
        memory on the in-memory view subsample, with its note — or, with ``options.all_rows``, on every
        row (T-Cal on Dask; the distance measures and the bootstrap gather every row into this process, as
        in memory).  A resampled T-Cal that Dask cannot draw (consistency resampling, or y-only resampling
        of the full vector: the ``full`` and ``topk`` targets) is computed in memory like the distance
        measures: on every row gathered into this process, or beyond 2·10⁵ rows on the view subsample.
        The smooth diagram and the classical tests are refused with the reason."""
        _refuse_if_not_on_dask(view)
        gathered = self.gathered(view, options)
        if gathered is not None:
            rows, n, note = gathered
            result = view_record(view).compute(rows, options)
            return result, result_note(view, rows, n, options, result, note)
        note = None
        if view == "reliability" and options.scheme != "equal_width":
            note = "equal-mass bins need global quantiles; equal-width bins are used on Dask"
            options = options.replace(scheme="equal_width")
        return view_record(view).compute(self, options), note

    def gathered(self, view: str, options):
        """``(rows, n, note)`` when :meth:`compute_view` computes ``view`` in memory: the rows it reads,
        gathered into this process (``n``: the rows they stand for; ``note``: the subsample's note or
        None), as :func:`calviz.sampling.sample_for_view` gives them in memory; None when the view runs on
        Dask (or is not available there).  The dashboard sends these rows to its worker process, as for
        in-memory data."""
        where = view_record(view).dask
        if where is None:  # not on Dask
            return None
        if options.n is not None and options.n < self.n:
            prepared = self.rows(int(options.n), options.seed)
            rows, note = sample_for_view(view, prepared, options)
            return rows, prepared.n, note
        limit = self.distance_sample if view == "distance" else SAMPLED_ROWS.get(view)
        in_memory = where == "gathered" or (where == "dask_or_gathered"
                                            and not self._resamples_on_dask(options))
        if not in_memory and (limit is None or self.n <= limit or options.all_rows):
            return None
        # (no view subsample: every row, e.g. the isotonic fit's sort of the whole sample)
        size = None if options.all_rows or limit is None or self.n <= limit else limit
        rows = self.rows(size, options.seed, view_sample=True)
        return rows, self.n, None if size is None else sample_note(view, rows, self.n, options)

    def _resamples_on_dask(self, options) -> bool:
        """Whether :func:`calviz.dask.adaptive_tcal` draws the analysis's resampled T-Cal: y-only
        resampling of a 1-D view (the analysis tests the ``full`` and ``topk`` targets through the full
        vector, whose scan order has no distributed sort; consistency resampling draws predictions from
        the whole sample)."""
        if options.resampling == "consistency":
            return False
        return options.resampling != "y_only" or analysis.analysis_target(self, options).is_scalar

    def data_summary(self, options):
        """The :class:`calviz.analysis.DataSummary` of all rows (of the user subsample with ``options.n``)."""
        if options.n is not None and options.n < self.n:
            return analysis.DataSummary.of(self.rows(int(options.n), options.seed), options, n_total=self.n)
        return analysis.DataSummary(n=self.n, n_total=self.n, n_classes=self.n_classes,
                                    is_binary=self.is_binary, target=analysis.resolve_target(self, options),
                                    accuracy=self.correct / self.n,
                                    mean_confidence=self.confidence_sum / self.n)


def _open_data(path, **columns) -> DaskCalibrationData:
    """A Parquet path (file, directory, glob, list) or any input of :func:`as_dask_data` (which takes the
    label and probability columns of a table only)."""
    if isinstance(path, (str, os.PathLike, list, tuple)):
        return from_parquet(path, **columns)
    return as_dask_data(path, y_true_column=columns["y_true"], y_prob_columns=columns["y_prob"])


@validate_params({**_DISTANCE_SAMPLE, "client": CLIENT_RULE})
def open_source(path, *, scheduler: str | None = None, y_true: str | None = None,
                y_prob: str | Sequence[str] | None = None, prob_prefix: str | None = None,
                confidence: str | None = None, correct: str | None = None,
                distance_sample: int = SAMPLED_ROWS["distance"], client=None) -> DistributedSource:
    """Open distributed predictions for the dashboard, validated and counted in one pass.

    The data stay on the cluster; the returned source is what ``calviz serve`` and
    :class:`calviz.app.CalvizApp` analyse.  Without ``client`` the shared client of :func:`get_client` is
    used (by default a local cluster of worker processes).

    Parameters
    ----------
    path : str, path, list of paths or any input of :func:`as_dask_data`
        A Parquet file, directory or glob, or data already loaded.
    scheduler : str, optional
        ``"local"`` (the default) or ``"tcp://host:port"`` (:func:`get_client`); ignored with ``client``.
    y_true, y_prob, prob_prefix, confidence, correct : str, optional
        The columns (:func:`from_dataframe`).
    distance_sample : int, default 200000
        Rows of the distance measures' subsample.
    client : distributed.Client, optional
        A client to compute with instead of the one of ``scheduler``.

    Returns
    -------
    DistributedSource
        An :class:`InputError` names the partition and the row of the first bad value instead.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np, pandas as pd, calviz, calviz.dask
    >>> from calviz.analysis import AnalysisOptions
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> from distributed import Client, LocalCluster
    >>> cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    >>> client = Client(cluster, set_as_default=False)
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     path = os.path.join(directory, "predictions.parquet")
    ...     pd.DataFrame({"y_true": y, "y_prob": p}).to_parquet(path)
    ...     source = calviz.dask.open_source(path, client=client)
    ...     interval, note = source.compute_view("interval", AnalysisOptions(n_bins=10))
    >>> source.n, source.is_binary, source.data.lengths
    (2000, True, (2000,))
    >>> bool(np.isclose(interval.estimate, calviz.ece_interval(y, p, n_bins=10).estimate, rtol=1e-12))
    True
    >>> client.close(); cluster.close()
    """
    data = _open_data(path, y_true=y_true, y_prob=y_prob, prob_prefix=prob_prefix, confidence=confidence,
                      correct=correct)
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


@validate_params({**_DISTANCE_SAMPLE, "options": NoneOr(Instance(analysis.AnalysisOptions))})
def analyze_parquet(path, *, scheduler=None, y_true: str | None = None,
                    y_prob: str | Sequence[str] | None = None, prob_prefix: str | None = None,
                    confidence: str | None = None, correct: str | None = None, options=None,
                    distance_sample: int = SAMPLED_ROWS["distance"], **option_values):
    """:func:`calviz.analysis.analyze` of a Parquet file, directory or glob on Dask.

    Every view is computed as :meth:`DistributedSource.compute_view` says: on all rows on the cluster, or
    in memory on the subsample the in-memory analysis would use (``errors[view]`` says so), unless
    ``all_rows=True``; a resampled T-Cal that Dask cannot draw (consistency resampling; y-only resampling
    of the ``full`` and ``topk`` targets, tested through the full vector) is computed in memory on every
    row gathered from the cluster, or beyond 2·10⁵ rows on that subsample, and so is the bootstrap interval
    (beyond 5·10⁴ rows on its subsample, as in memory), and the score decomposition and the CORP diagram
    (every row gathered: the isotonic fit sorts the whole sample); the smooth diagram and the classical
    tests are not available (``None``, the reason in ``errors``).

    Parameters
    ----------
    path : str, path or list
        Parquet data, or any input of :func:`as_dask_data`.
    scheduler : None, "local", "tcp://host:port" or distributed.Client
        None: dask's current scheduler; "local": the LocalCluster of :func:`get_client`; an address: a
        shared connection to that scheduler (:func:`get_client`); a client: that client.
    y_true, y_prob, prob_prefix, confidence, correct : str, optional
        The columns (:func:`from_dataframe`).
    options : calviz.analysis.AnalysisOptions, optional
        The analysis options (default: the defaults of :class:`calviz.analysis.AnalysisOptions`).
    distance_sample : int, default 200000
        Rows of the distance measures' subsample.
    **option_values
        Fields of ``options`` to override (checked before the data is opened; a bad value is refused with
        the uniform message naming ``analyze_parquet``).

    Returns
    -------
    calviz.analysis.Analysis
        The same result as the in-memory analysis: T-Cal [2]_, the interval of the ℓ2 ECE [1]_, the
        reliability diagram and the distance measures [3]_, with the views not available on Dask as None.

    References
    ----------
    .. [1] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024.
    .. [2] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.
    .. [3] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.

    Examples
    --------
    On dask's default scheduler (threads in this process); pass ``scheduler=`` for a cluster:

    >>> import os, tempfile
    >>> import numpy as np, pandas as pd, calviz, calviz.dask
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     path = os.path.join(directory, "predictions.parquet")
    ...     pd.DataFrame({"y_true": y, "y_prob": p}).to_parquet(path)
    ...     result = calviz.dask.analyze_parquet(path, n_bins=10, seed=0)
    >>> result.summary.n, result.tcal.reject, sorted(result.errors)
    (2000, True, ['classical', 'smooth', 'smooth_summaries'])
    >>> bool(np.isclose(result.interval.estimate, calviz.ece_interval(y, p, n_bins=10).estimate, rtol=1e-12))
    True
    """
    # the keyword options are checked (naming analyze_parquet) before the data is opened
    options = analysis.with_option_values(options, option_values, "analyze_parquet")
    data = _open_data(path, y_true=y_true, y_prob=y_prob, prob_prefix=prob_prefix, confidence=confidence,
                      correct=correct)
    client = get_client(scheduler) if isinstance(scheduler, str) else scheduler  # None: dask's scheduler
    source = _source(data, client, scheduler, distance_sample)
    return analysis.analyze(source, options)
