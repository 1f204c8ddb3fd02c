"""The result store of one dashboard session: results cached by their inputs, background jobs, one
reactive value per result.

The app hands the store the data and the options (:meth:`ResultStore.update`); the store decides per
result *slot* (reliability, smooth curve, T-Cal, ECE interval, bootstrap interval, distance bounds)
which computation answers the options, and publishes what each slot shows as an :class:`Entry` in one
``param`` parameter per slot.  Views watch those parameters and draw; they never compute.

* Fast computations (milliseconds at n = 10⁵: the binned diagram, the analytic T-Cal, the asymptotic
  interval, the smooth curve without its band) run on the caller's thread, so one change's new
  entries are published together.
* Slow ones (resampling, the distance family, anything on Dask) run as background jobs: the slot shows
  a fast stand-in (the analytic T-Cal, the band-less curve) or nothing, with a ``pending`` label, until
  the job's result arrives.  A job's result is published only while the slot still wants exactly that
  result (the same cache key); a job superseded before it starts never starts; a superseded job that
  is already running in a worker process is not interrupted, but its result is only cached, never
  shown.  Jobs wait :data:`DEBOUNCE_S` before starting, so dragging a slider starts only the jobs of
  the value it rests on.
* A change of α alone resamples nothing: the resampled views re-decide from the resamples kept with their
  results (``View.redecided_by``; :data:`calviz.app.precomputed.DRAWN`) — the bootstrap interval and the
  smooth and CORP bands at once, the sequential T-Cal as its job (more resamples only if the new α needs
  them).
* A bin change recomputes only the views that read the bins (``View.reads``), each from what the server
  keeps for the target where it can (:mod:`calviz.app.precomputed`): the diagram and the interval from
  its sorted view (a class not visited before: from its bin table, kept since the server's start), the
  classical tests' MCE and ACE from the sorted view and the dataset's ACE table (the tests themselves do
  not read the bins), the bootstrap interval from its replicates of every bin count.
* Once the controls rest, a served session also computes the diagram of the binning scheme it does not
  show (:data:`PREFETCH_DELAY_S`), so toggling the scheme to compare the two redraws from the cache.
* Background work (threads, worker processes) is started through :mod:`calviz.app.workers` only.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import param

from calviz._data import CalibrationData, InputError
from calviz.analysis import (
    COMPUTE,
    REGISTRY,
    AnalysisOptions,
    is_distributed,
    prepare,
    run_view,
    scalar_reliability,
    view,
)
from calviz.analysis import views as _views
from calviz.analysis.views import effective_target
from calviz.app import precomputed
from calviz.app.workers import (
    _WARM,
    ServerStopping,
    SessionWorker,
    _in_thread,
    _log_failure,
    _run_remote,
    _shared,
    start_spare_worker,
    warm_in_background,
)
from calviz.sampling import estimate_seconds, format_seconds, result_note, sample_for_view, sampled_rows

__all__ = ["Entry", "ResultStore", "VIEW_INPUTS", "view_key", "redecision_of", "effective_target"]

#: s: background jobs start this long after the change that wants them: a slider drag sends a value per
#: frame, and only the value it rests on should occupy the worker processes; and on a 2-core machine a
#: job starting sooner competes with the browser drawing the change itself
DEBOUNCE_S = 0.6
#: s: the same for a job that only re-decides a resampled view from its stored resamples (an α change of the
#: sequential T-Cal: a fraction of a second; a slider drag still sends its values faster than this)
REDECIDE_DEBOUNCE_S = 0.15
_CACHE_SIZE = 64
#: s: the other binning scheme's diagram is computed after this much quiet — shorter than the jobs'
#: debounce because it is one fast computation on this process, but long enough that a slider drag
#: (a value per frame) never pays for it
PREFETCH_DELAY_S = 0.2
#: rows up to which that diagram is worth computing unasked (a few ms; it holds the session's GIL)
PREFETCH_MAX_ROWS = 250_000
#: views computed from the rows on the session's thread while their target's sorted view is being built
#: (a target's first visit) and no bin table of the class answers them (:func:`precomputed.bin_table`: built
#: at the server's start for every class and the bin counts 1..100; then no pass): one pass over its column
#: each — at 10⁷ × K = 10, classwise, load 11: the
#: diagram 234–298 ms, the interval 347–439 ms — so the diagram and the interval of a class not shown before
#: appear at once, exact, instead of after the sort (seconds at 10⁷ rows, behind the session's other jobs).
#: The analytic T-Cal is not among them (1.3–1.5 s per 10⁶ rows at load 17): its sorted view answers it.
DIRECT_WHILE_SORTING = ("reliability", "interval")
#: rows up to which they are (they hold the session's thread for about 0.6 s per 10⁷ rows at load 11)
DIRECT_WHILE_SORTING_MAX_ROWS = 20_000_000
_OTHER_SCHEME = {"equal_width": "equal_mass", "equal_mass": "equal_width"}
#: s: a background job running longer is stopped, and its view says so (one session's pathological
#: input must not occupy a core for minutes)
JOB_LIMIT_S = 120.0

#: option fields each computation reads (besides the data): the registry's ``View.reads``.  ``n`` and
#: ``seed`` select the subsample; every view depends on them through :func:`calviz.analysis.prepare`, but
#: ``seed`` only matters when a subsample is drawn — :func:`view_key` accounts for that.  ``top_k`` is read
#: only by the views that treat the top-k vector as such.
VIEW_INPUTS: dict[str, tuple[str, ...]] = {record.name: record.reads for record in REGISTRY}

#: the option fields that select the target (:func:`calviz.analysis.views.effective_target` reads them)
_TARGET_FIELDS = ("target", "class_index", "top_k")


def view_key(view: str, data, options: AnalysisOptions) -> tuple:
    """Cache key of one computation: the identity of the data and the option values it reads (the
    target-selecting ones through :func:`effective_target`)."""
    reads = view_record(view).reads
    values = [("target", effective_target(view, data, options))]
    for name in reads:
        if name not in _TARGET_FIELDS:
            values.append((name, getattr(options, name)))
    subsampled = options.n is not None and options.n < data.n
    if "seed" not in reads and (subsampled or sampled_rows(view, _rows(data, options), options)):
        values.append(("seed", options.seed))  # the subsample depends on the seed
    return (view, id(data), tuple(values))


def redecision_of(key: tuple | None, other: tuple | None) -> bool:
    """Whether cache key ``key`` is the computation of ``other`` with other values of only the options that
    re-decide it (``View.redecided_by``, e.g. α): the same statistics, other critical values and decisions."""
    if key is None or other is None or key[0] != other[0]:
        return False
    fields = view_record(key[0]).redecided_by
    return bool(fields) and precomputed.key_without(key, fields) == precomputed.key_without(other, fields)


def _rows(data, options: AnalysisOptions) -> int:
    """Rows a view is given (before the policy of ``calviz.sampling``): the user subsample or all."""
    return data.n if options.n is None else min(int(options.n), data.n)


def job_label(slot: str, view: str, data, options: AnalysisOptions) -> str:
    """What the status line says while ``view``'s job runs: its name, the rows it reads and how long it
    should take (``calviz.sampling.estimate_seconds``)."""
    label = view_record(view).job_label
    if is_distributed(data):
        return label
    n = _rows(data, options)
    k = sampled_rows(view, n, options) or n
    rows = f"{k:,} of {n:,} rows" if k < n else f"all {n:,} rows"
    return f"{label} ({rows}, ≈ {format_seconds(estimate_seconds(view, k, data.n_classes, options))})"


@dataclass(frozen=True)
class Entry:
    """What one slot shows: ``result`` (an engine result, or ``None``: not computed / refused), computed
    with ``options`` on ``data``; ``key``: the cache key of the result the slot wants (a view compares
    keys to skip redrawing an unchanged slot); ``pending``: the label of the background job whose result
    will replace this one; ``error``: why the result is missing or how it differs."""

    key: tuple | None = None
    result: Any = None
    options: AnalysisOptions | None = None
    data: Any = None
    pending: str | None = None
    error: str | None = None


_EMPTY = Entry()


@dataclass(frozen=True)
class _Plan:
    """How a slot is answered: ``final`` — the computation it shows in the end; ``stand_in`` — a fast
    one shown while ``final`` runs in the background (or ``None``)."""

    final: str | None
    stand_in: str | None = None


#: the store's slots, in the order of the registry (the cards' order on the page: jobs reach the session's
#: worker in this order): one per ``View.slot``, answered by the last of its views that applies
SLOTS = tuple(dict.fromkeys(record.slot for record in REGISTRY if record.slot is not None))

#: one reactive :class:`Entry` parameter per slot
_Slots = type("_Slots", (param.Parameterized,), {
    slot: param.ClassSelector(class_=Entry, default=_EMPTY, doc=", then ".join(
        r.label for r in REGISTRY if r.slot == slot)) for slot in SLOTS})


def view_record(name: str):
    """The registry's record of view ``name``."""
    return view(name)


class ResultStore(_Slots):
    """Results of one session, one reactive :class:`Entry` per slot (see the module docstring)."""

    inputs = param.Parameter(default=None, doc="(data, options) of the latest update (for captions)")
    jobs = param.Dict(default={}, doc="slot → label of each background job running now")
    timings = param.Dict(default={}, doc="seconds of each computation of the latest change")

    SLOTS = SLOTS

    def __init__(
        self,
        *,
        schedule: Callable[[Callable[[], None]], None] | None = None,
        debounce: float = DEBOUNCE_S,
        job_limit: float = JOB_LIMIT_S,
        **params,
    ):
        super().__init__(**params)
        self._worker = SessionWorker()
        self._job_limit = float(job_limit)
        self._on_session = schedule or (lambda callback: callback())
        # (a job's result is published from its own thread when no session thread is given — a notebook,
        # a script: the changes of two jobs finishing together, and of a change made meanwhile, each read
        # and replace ``jobs``; one at a time, none is lost)
        self._publishing = threading.RLock()
        self._queue_lock = threading.Lock()
        self._queued: list[Callable[[], None]] = []  # callbacks for the session's thread (see _schedule)
        self._drain_scheduled = False
        self._debounce = float(debounce)
        self._cache: OrderedDict = OrderedDict()
        self._errors: dict[tuple, str | None] = {}
        self._lock = threading.RLock()
        self._wanted: dict[str, tuple | None] = {}
        self._futures: dict[str, concurrent.futures.Future] = {}
        self._running: dict[tuple, concurrent.futures.Future] = {}  # job of each key, until it ends
        self._worker_futures: dict[str, concurrent.futures.Future] = {}
        self.calls: dict[str, int] = {}  # results computed by this session (not found in a cache)
        self.passes: dict[str, int] = {}  # of which computed from the rows (not from a sorted view)
        self._awaiting: set = set()  # sorted views this session waits for (to answer its pending slots)
        self._pending_timings: dict[str, float] = {}
        self._prefetching: concurrent.futures.Future | None = None
        self._later_slots: frozenset[str] = frozenset()  # see compute_later

    # -- the cache ----------------------------------------------------------------------------------
    def result(self, view: str, data, options: AnalysisOptions):
        """The cached result of one computation (this session's, or the server's: another session may have
        computed it), else computed now on this thread — from the target's sorted view when it is built
        (:mod:`calviz.app.precomputed`), else from the rows."""
        key = view_key(view, data, options)
        with self._lock:
            if self._lookup(key):
                return self._cache[key]
        answered = (self._answer(view, data, options) or self._rebinned(view, data, options)
                    or self._redecided(view, data, options) or self._bootstrapped(view, data, options))
        if answered is None:
            answered = run_view(view, data, options)
            self.passes[view] = self.passes.get(view, 0) + 1
        result, seconds, error = answered
        self._pending_timings[view] = seconds  # the status line times the change's own computations
        return self._remember(key, view, result, error, data)

    def _remember(self, key, view, result, error, data=None, *, computed: bool = True):
        redecided_by = view_record(view).redecided_by
        if redecided_by and getattr(result, "_draws", None) is not None:  # (its resamples: kept once)
            if data is not None:
                precomputed.DRAWN.put(precomputed.key_without(key, redecided_by), data, result, error)
            result = precomputed.without_draws(result)
        with self._lock:
            if computed:
                self.calls[view] = self.calls.get(view, 0) + 1
            self._keep(key, result, error)
        if data is not None:  # (shared with the server's other sessions)
            precomputed.RESULTS.put(key, data, result, error)
            if view in precomputed.REBINNED and result is not None and error is None:
                precomputed.WITHOUT_BINS.put(precomputed.binless_key(key), data, result, None)
        return result

    def _keep(self, key, result, error) -> None:
        with self._lock:
            self._cache[key] = result
            self._errors[key] = error
            while len(self._cache) > _CACHE_SIZE:
                old, _ = self._cache.popitem(last=False)
                self._errors.pop(old, None)

    def _lookup(self, key) -> bool:
        """Whether ``key`` is cached: in this session, or in the server's cache (then copied here)."""
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return True
            found, result, error = precomputed.RESULTS.get(key)
            if found:
                self._keep(key, result, error)
            return found

    def seed(self, view: str, data, options: AnalysisOptions, result, *, show: bool = False) -> None:
        """Put a result computed elsewhere in the cache (e.g. the over-time view of a grown log, by merged
        sums: :func:`calviz.app.watch.poll`; a T-Cal drawn on with a larger cap: calviz.app.draw_more),
        and show it where its slot shows that computation now — or at once with ``show`` (the data it is
        for become the page's next: its slot is then up to date for them).  On the session's thread."""
        key = view_key(view, data, options)
        self._remember(key, view, result, None, data, computed=False)
        slot = view_record(view).slot
        if slot is not None and (show or getattr(self, slot).key == key):  # shown now: the new result
            if show:  # (a job still running for the slot's previous data is no longer wanted)
                self._wanted[slot] = key
            self.param.update(**{slot: Entry(key, result, options, data)})

    def cached(self, view: str, data, options: AnalysisOptions):
        key = view_key(view, data, options)
        with self._lock:
            return self._cache.get(key) if self._lookup(key) else None

    def _has(self, view, data, options) -> bool:
        return self._lookup(view_key(view, data, options))

    def _error(self, view, data, options) -> str | None:
        key = view_key(view, data, options)
        with self._lock:
            return self._errors.get(key) if self._lookup(key) else None

    # -- the sorted views (calviz.app.precomputed) ----------------------------------------------------
    def _answer(self, view: str, data, options: AnalysisOptions):
        """``(result, seconds, None)`` from the target's built sorted view — or, before it is built, from its
        class's bin table (:func:`precomputed.bin_table`) — or None (neither for it yet)."""
        target = precomputed.sorted_target(view, data, options)
        presorted = None if target is None else precomputed.SORTED.ready(data, target)
        if presorted is None:
            presorted = None if target is None else precomputed.bin_table(view, data, options)
            if presorted is None:
                return None
        start = time.perf_counter()
        try:
            result = precomputed.answer(view, presorted, options)
        except InputError:
            return None  # (the direct computation refuses it too, with its message)
        return result, time.perf_counter() - start, None

    def _rebinned(self, view: str, data, options: AnalysisOptions, slot=None, key=None):
        """``(result, seconds, None)`` of a view of :data:`precomputed.REBINNED` from its result at another
        bin count (on this thread, or — with ``slot`` — in the session's worker process), or None."""
        if view not in precomputed.REBINNED or is_distributed(data):
            return None
        found, base, _ = precomputed.WITHOUT_BINS.get(precomputed.binless_key(view_key(view, data, options)))
        if not found:
            return None
        ready = precomputed.rebin_ready(view, data, options)
        if ready is not None:  # (milliseconds: the MCE from the sorted view, the ACE from the table)
            start = time.perf_counter()
            result = precomputed.rebinned(view, data, options, base, *ready)
            return result, time.perf_counter() - start, None
        if slot is None:
            start = time.perf_counter()
            target = precomputed.sorted_target("interval", data, options)  # (the same scalar target)
            presorted = None if target is None else precomputed.SORTED.ready(data, target)
            result = precomputed.rebinned(view, data, options, base, presorted)
            return result, time.perf_counter() - start, None
        return self._wait_in_worker(slot, key, precomputed.rebinned_in_worker, view, data, options, base)

    def _redecided(self, view: str, data, options: AnalysisOptions, slot=None, key=None):
        """``(result, seconds, note)`` of a resampled view (``View.redecide``) from the resamples of its
        result at another α (on this thread, or — with ``slot``, when it reads the rows — in the session's
        worker process), or None (none cached)."""
        record = view_record(view)
        base = self.drawn(view, data, options)
        if base is None:
            return None
        result, note = base
        if slot is None or not record.redecide_reads_rows:
            start = time.perf_counter()
            try:
                return record.redecide(result, data, options), time.perf_counter() - start, note
            except InputError:
                return None  # (the direct computation refuses it too, with its message)
        rows = data
        if type(data) is CalibrationData:  # its subsample, drawn once per seed in this process (cached on the
            # data) and shared: not drawn again from all the rows in the worker on every α change (0.6–0.9 s
            # at 10⁷ rows)
            rows, _ = sample_for_view(view, prepare(data, options), options)
        return self._wait_in_worker(slot, key, precomputed.redecided_in_worker, view, rows, options, result,
                                    note)

    def _bootstrapped(self, view: str, data, options: AnalysisOptions, slot=None, key=None):
        """``(result, seconds, note)`` of the bootstrap interval from its table of every bin count
        (:class:`precomputed.BootstrapTable`: on this thread once built; with ``slot``, built first in the
        session's worker process), or None (not a scalar target of large in-memory data, or more bins than
        the table holds)."""
        target = precomputed.bootstrap_target(view, data, options)
        if target is None or int(options.n_bins) > precomputed.TABLE_BINS:
            return None
        table = precomputed.BOOTSTRAPS.ready(data, target)
        if table is None:
            if slot is None:
                return None
            rows, _, _ = precomputed._bootstrap_rows(data, options)
            future = precomputed.BOOTSTRAPS.request(data, target, lambda d, t: self._worker.submit(
                precomputed.bootstrap_table_in_worker, _shared(rows.probs), _shared(rows.labels),
                rows.confidence_form, options, limit=self._job_limit))
            if future is None:
                return None
            if self._still_wanted(slot, key):
                self._worker_futures[slot] = future
            table = future.result()
        start = time.perf_counter()
        answered = table.answer(data, options)
        return None if answered is None else (answered[0], time.perf_counter() - start, answered[1])

    def _wait_in_worker(self, slot, key, function, view: str, data, options: AnalysisOptions, *extra):
        """``function(view, probs, labels, confidence_form, options, *extra)`` in the session's worker process
        (the data's arrays through shared memory), its future held for ``slot`` while ``key`` is still wanted
        (a stop resolves it) and cancelled otherwise; waits for its value."""
        future = self._worker.submit(function, view, _shared(data.probs), _shared(data.labels),
                                     data.confidence_form, options, *extra, limit=self._job_limit)
        if self._still_wanted(slot, key):
            self._worker_futures[slot] = future
        else:
            future.cancel()
        return future.result()

    @staticmethod
    def drawn(view: str, data, options: AnalysisOptions):
        """``(result with its resamples, note)`` of resampled view ``view`` at these inputs but for its
        ``redecided_by`` (e.g. at another α), or None (none kept; in memory only where it reads the
        rows)."""
        record = view_record(view)
        if record.redecide is None or (record.redecide_reads_rows and type(data) is not CalibrationData):
            return None
        key = precomputed.key_without(view_key(view, data, options), record.redecided_by)
        found, result, note = precomputed.DRAWN.get(key)
        return (result, note) if found else None

    @staticmethod
    def _sorted_ready(view: str, data, options: AnalysisOptions) -> bool:
        """Whether ``view`` is answered now without a pass over the rows: from its target's sorted view, or
        (a bin change of :data:`precomputed.REBINNED`) from its result at another bin count."""
        target = precomputed.sorted_target(view, data, options)
        if target is not None and precomputed.SORTED.ready(data, target) is not None:
            return True
        table = precomputed.bootstrap_target(view, data, options)
        if table is not None and int(options.n_bins) <= precomputed.TABLE_BINS:
            return precomputed.BOOTSTRAPS.ready(data, table) is not None
        if precomputed.rebin_ready(view, data, options) is None:
            return False
        return precomputed.WITHOUT_BINS.get(precomputed.binless_key(view_key(view, data, options)))[0]

    def _direct_while_sorting(self, view: str, data, options: AnalysisOptions) -> bool:
        """Whether ``view`` is computed from the rows now although it is a background view at this size:
        one of :data:`DIRECT_WHILE_SORTING`, in a served session (a notebook computes in its update anyway),
        of data a sorted view answers (:func:`precomputed.sorted_target`) of at most
        :data:`DIRECT_WHILE_SORTING_MAX_ROWS` rows, whose sorted view is not built yet."""
        return (view in DIRECT_WHILE_SORTING and bool(self._debounce)
                and data.n <= DIRECT_WHILE_SORTING_MAX_ROWS
                and precomputed.sorted_target(view, data, options) is not None)

    def _request_sorted(self, data, options: AnalysisOptions, views) -> None:
        """Start building (once per server) the sorted view of each target these views read; when one
        is built, this session's slots still waiting for a job it answers are answered from it.  Served
        sessions only (a debounce: as :meth:`_prefetch_other_scheme`): a notebook starts no worker process."""
        if not self._debounce:
            return
        for name in dict.fromkeys(views):
            target = precomputed.sorted_target(name, data, options)
            if target is None or precomputed.SORTED.ready(data, target) is not None:
                continue
            future = precomputed.SORTED.request(data, target, self._build_sorted)
            if future is not None and (id(data), target) not in self._awaiting:
                self._awaiting.add((id(data), target))
                future.add_done_callback(partial(self._sorted_built, data, target))
        if (any(name in precomputed.REBINNED for name in views) and precomputed.table_eligible(data, options)
                and precomputed.ACE_TABLES.ready(data, precomputed.ACE_TABLE) is None):
            future = precomputed.ACE_TABLES.request(data, precomputed.ACE_TABLE, self._build_table)
            if future is not None and (id(data), precomputed.ACE_TABLE) not in self._awaiting:
                self._awaiting.add((id(data), precomputed.ACE_TABLE))
                future.add_done_callback(partial(self._sorted_built, data, precomputed.ACE_TABLE))

    def _build_table(self, data, target: tuple) -> concurrent.futures.Future:
        # (K sorts: bounded by the data, not by an option; a loaded machine may take minutes at 10⁷ rows)
        return self._worker.submit(precomputed.ace_table_in_worker, _shared(data.probs), _shared(data.labels),
                                   data.confidence_form, limit=10 * self._job_limit)

    def _build_sorted(self, data, target: tuple) -> concurrent.futures.Future:
        return self._worker.submit(precomputed.build_in_worker, _shared(data.probs), _shared(data.labels),
                                   data.confidence_form, *target, limit=self._job_limit)

    def _sorted_built(self, data, target, future) -> None:
        self._awaiting.discard((id(data), target))
        if not future.cancelled() and future.exception() is None:
            self._schedule(partial(self._answer_pending, data))

    def _answer_pending(self, data) -> None:
        """(On the session's thread) Slots whose background job a newly built sorted view answers: shown
        now, the job dropped."""
        if self.inputs is None or self.inputs[0] is not data:
            return
        changes, jobs = {}, dict(self.jobs)
        for slot, key in list(self._wanted.items()):
            entry = getattr(self, slot)
            if key is None or entry.pending is None or entry.key != key:
                continue
            view = key[0]
            if not self._sorted_ready(view, data, entry.options):
                continue
            self._cancel(slot)
            result = self.result(view, data, entry.options)
            error = self._error(view, data, entry.options)
            changes[slot] = Entry(key, result, entry.options, data, error=error)
            jobs.pop(slot, None)
        if changes:
            self.param.update(**changes, jobs=jobs)

    # -- what each slot shows -----------------------------------------------------------------------
    @staticmethod
    def plan(data, options: AnalysisOptions, *, show_smooth: bool = True) -> dict[str, _Plan]:
        """Per slot, the computation it shows and its fast stand-in: the last of the slot's views (the
        registry's ``View.slot``) that applies to these inputs (``View.applies``; an overlay, e.g. the smooth
        curve, only while shown, ``show_smooth``, and where it can be computed), or none."""
        distributed = is_distributed(data)
        plans = {}
        for slot in SLOTS:
            final = None
            for record in REGISTRY:
                if record.slot != slot or not record.applies(data, options):
                    continue
                if record.overlay and (not show_smooth or (distributed and record.dask is None)):
                    continue
                final = record
            plans[slot] = _Plan(None) if final is None else _Plan(final.name, final.stand_in)
        return plans

    def all_cached(self, data, options: AnalysisOptions, *, show_smooth: bool = True) -> bool:
        """Whether every result these inputs show is cached (this session's or the server's: an earlier
        session, or the server's start, :func:`calviz.app.precomputed.precompute_first_views`): an
        :meth:`update` then computes nothing and starts no job."""
        return all(plan.final is None or self._has(plan.final, data, options)
                   for plan in self.plan(data, options, show_smooth=show_smooth).values())

    @staticmethod
    def _in_background(view: str, data, options: AnalysisOptions | None = None) -> bool:
        if is_distributed(data):
            return True  # a pass over all rows on Dask: seconds
        # (the registry's background rule: always, or one pass that takes seconds from LARGE_ROWS rows)
        return view_record(view).in_background(_rows(data, options or AnalysisOptions()))

    def update(
        self,
        data,
        options: AnalysisOptions,
        *,
        show_smooth: bool = True,
        inline: bool = False,
        start_now: bool = False,
    ) -> None:
        """Publish what every slot shows for these inputs; only slots whose wanted result changed get a
        new entry (their views redraw, the others do not).  ``inline``: compute background results now
        too (a notebook's first render; tests).  ``start_now``: background jobs start without the
        debounce (a page's first results: no slider is being dragged)."""
        with self._publishing:
            self._update(data, options, show_smooth=show_smooth, inline=inline, start_now=start_now)

    def _update(self, data, options: AnalysisOptions, *, show_smooth: bool, inline: bool, start_now: bool):
        self._pending_timings: dict[str, float] = {}
        changes, jobs, deferred = {}, dict(self.jobs), []
        plans = self.plan(data, options, show_smooth=show_smooth)
        self._request_sorted(data, options, [v for p in plans.values() for v in (p.final, p.stand_in) if v])
        for slot, plan in plans.items():
            key = view_key(plan.final, data, options) if plan.final else None
            if key == self._wanted.get(slot, ()) and slot in self._wanted:
                continue
            self._wanted[slot] = key
            self._cancel(slot)
            jobs.pop(slot, None)
            if plan.final is None:
                changes[slot] = Entry()
                continue
            if (inline or self._has(plan.final, data, options)
                    or not self._in_background(plan.final, data, options)
                    or self._sorted_ready(plan.final, data, options)
                    or self._direct_while_sorting(plan.final, data, options)
                    or (not view_record(plan.final).redecide_reads_rows
                        and self.drawn(plan.final, data, options) is not None)):
                if slot in self._later_slots and not inline and not self._has(plan.final, data, options):
                    # (scheduled before this update's views schedule their draws: it runs first)
                    self._schedule(partial(self._compute_later, slot, key, plan.final, data, options))
                    continue
                result = self.result(plan.final, data, options)
                error = self._error(plan.final, data, options)
                changes[slot] = Entry(key, result, options, data, error=error)
                continue
            stand_in, error = None, None
            # (the stand-in: when it is cached or fast here; one that passes over many rows is shown after
            # this change's other views: :meth:`_show_stand_ins`.  Not the analytic T-Cal from a sorted view:
            # its first answer per target scans the view — 5.5–11.6 s at 10⁷ rows, load 11–17)
            if plan.stand_in is not None and self._has(plan.stand_in, data, options):
                stand_in = self.result(plan.stand_in, data, options)
                error = self._error(plan.stand_in, data, options)
            elif plan.stand_in is not None and not self._in_background(plan.stand_in, data, options):
                if self._debounce and _rows(data, options) >= _views.LARGE_ROWS:
                    deferred.append((slot, key, plan.stand_in))
                else:
                    stand_in = self.result(plan.stand_in, data, options)
                    error = self._error(plan.stand_in, data, options)
            label = job_label(slot, plan.final, data, options)
            changes[slot] = Entry(key, stand_in, options, data, pending=label, error=error)
            jobs[slot] = label
            delay = 0.0 if start_now else self._debounce
            if self.drawn(plan.final, data, options) is not None:  # (a re-decision from stored resamples)
                delay = min(delay, REDECIDE_DEBOUNCE_S)
            self._submit(slot, key, plan.final, data, options, delay)
        if changes or self._pending_timings:
            # a new change: its own computations (none when every result came from the cache), not the
            # previous change's
            changes["timings"] = dict(self._pending_timings)
        changes["jobs"] = jobs
        if self.inputs is None or self.inputs[0] is not data or self.inputs[1] != options:
            changes["inputs"] = (data, options)
        self.param.update(**changes)
        self._answer_pending(data)  # (a sorted view built during this update: its callback saw old inputs)
        if deferred:
            self._schedule(partial(self._show_stand_ins, data, options, deferred))
        self._prefetch_other_scheme(data, options)

    def _schedule(self, callback) -> None:
        """Run ``callback`` on the session's thread (the ``schedule`` given), one callback at a time.  The
        callbacks queued before the session's thread gets to them run together, in the order given, in one
        call of the scheduler: on a served page one tick and one message (job results finishing together,
        a sorted view and the jobs it answers), not a message each for the browser to apply."""
        with self._queue_lock:
            self._queued.append(callback)
            if self._drain_scheduled:
                return
            self._drain_scheduled = True
        self._on_session(self._run_queued)

    def _run_queued(self) -> None:
        with self._queue_lock:  # (one queued after this runs schedules its own call)
            callbacks, self._queued, self._drain_scheduled = self._queued, [], False
        failure = None
        with self._publishing:
            for callback in callbacks:
                try:
                    callback()
                except Exception as exc:  # (the others still run; the first failure is raised as before)
                    failure = failure or exc
        if failure is not None:
            raise failure

    def compute_later(self, slots) -> None:
        """The results of ``slots`` that a change computes on the session's thread are computed through the
        scheduler (a served page's next tick), after the change's other slots are published: the change's
        first message then waits only for the views drawn at once, not for the cards drawn after them, and
        their results change nothing those views draw (their seconds join ``timings`` without an event)."""
        self._later_slots = frozenset(slots)

    def _compute_later(self, slot: str, key, view: str, data, options: AnalysisOptions) -> None:
        if not self._still_wanted(slot, key):
            return  # (a later change wants another result)
        start = time.perf_counter()
        result = self.result(view, data, options)
        # its seconds join the change's timings unannounced: the status line, drawn with the four views,
        # would otherwise be sent again in a message of its own, which the browser applies and lays out
        # (a Div re-renders) before it paints the change; the line shows them when it is next drawn (the
        # change's first job result)
        with param.parameterized.discard_events(self):
            self.timings = {**self.timings, view: time.perf_counter() - start}
        self.param.update(**{slot: Entry(key, result, options, data, error=self._error(view, data, options))})

    def _show_stand_ins(self, data, options: AnalysisOptions, deferred: list) -> None:
        """(On the session's thread, after the change's other views were published) The stand-ins of a
        served session's large data that pass over the rows — the smooth curve without its band: 0.2–0.5 s
        at 10⁶ rows, load 17 — each shown in its slot while the slot still waits for that job: a change's
        fast views (the diagram, the interval, T-Cal from the sorted views) are not held back by them."""
        changes, timings = {}, dict(self.timings)
        for slot, key, name in deferred:
            entry = getattr(self, slot)
            if not self._still_wanted(slot, key) or entry.key != key or entry.pending is None:
                continue
            start = time.perf_counter()
            result = self.result(name, data, options)
            timings[name] = time.perf_counter() - start
            changes[slot] = Entry(key, result, options, data, pending=entry.pending,
                                  error=self._error(name, data, options))
        if changes:
            self.param.update(**changes, timings=timings)

    def _prefetch_other_scheme(self, data, options: AnalysisOptions) -> None:
        """Cache the scalar reliability diagram of the other binning scheme once the controls have rested
        for :data:`PREFETCH_DELAY_S` (served sessions, in-memory data up to :data:`PREFETCH_MAX_ROWS`
        rows).  Nothing is published; a change meanwhile drops it."""
        other = _OTHER_SCHEME.get(options.scheme)
        if (not self._debounce or other is None or self._in_background("reliability", data, options)
                or _rows(data, options) > PREFETCH_MAX_ROWS or not scalar_reliability(data, options)):
            return
        wanted, alternative = self._wanted.get("reliability"), options.replace(scheme=other)

        def prefetch():
            time.sleep(PREFETCH_DELAY_S)
            if self._wanted.get("reliability") == wanted and not self._has("reliability", data, alternative):
                result, _, error = run_view("reliability", data, alternative)
                self._remember(view_key("reliability", data, alternative), "reliability", result, error, data)

        self._prefetching = _in_thread(prefetch)
        self._prefetching.add_done_callback(_log_failure)

    # -- background jobs ----------------------------------------------------------------------------
    def _submit(self, slot, key, view, data, options, delay: float) -> None:
        running = self._running.get(key)
        if running is not None and not running.done():
            self._futures[slot] = running  # wanted again while still running: its result will do
            return
        future = self._running[key] = _in_thread(self._run_job, slot, key, view, data, options, delay)
        future.add_done_callback(lambda done: (self._running.pop(key, None), _log_failure(done)))
        self._futures[slot] = future

    def _cancel(self, slot) -> None:
        """The slot no longer wants its job's result: a job not yet started never starts, and one running
        in this session's worker process is stopped (the process is replaced)."""
        future = self._futures.pop(slot, None)
        if future is not None:
            future.cancel()
        future = self._worker_futures.pop(slot, None)
        if future is not None and not future.done():
            self._worker.stop(future)

    def _still_wanted(self, slot, key) -> bool:
        return self._wanted.get(slot) == key

    def _run_job(self, slot, key, view, data, options, delay: float) -> None:
        if delay:
            time.sleep(delay)
        for _ in range(3):  # again when the worker was replaced under another slot's stopped job
            if not self._still_wanted(slot, key):
                return
            try:
                # (its sorted view may be built meanwhile; a bin change of the classical tests redoes only
                # their binned measures; an α change of a resampled view re-decides from its resamples)
                answered = (self._answer(view, data, options)
                            or self._rebinned(view, data, options, slot, key)
                            or self._redecided(view, data, options, slot, key)
                            or self._bootstrapped(view, data, options, slot, key))
                if answered is None and self._computed_elsewhere(slot, key):
                    if self._still_wanted(slot, key):
                        self._schedule(lambda: self._publish(slot, key, view, data, options, seconds=0.0))
                    return
                result, seconds, error = answered or self._compute_once(slot, key, view, data, options)
                break
            except (concurrent.futures.CancelledError, concurrent.futures.process.BrokenProcessPool):
                continue
            except ServerStopping:
                return
            except TimeoutError as exc:  # (JobStopped: over the time or memory limit; said so)
                # (the time it was given joins the change's timings: "from the cache" would be wrong)
                self._schedule(partial(self._publish, slot, key, view, data, options, stopped=str(exc),
                                       seconds=self._job_limit))
                return
        else:  # (said, not left pending: the slot would wait for ever)
            stopped = "its worker process was replaced three times"
            self._schedule(partial(self._publish, slot, key, view, data, options, stopped=stopped))
            return
        if answered is None:
            self.passes[view] = self.passes.get(view, 0) + 1
        self._remember(key, view, result, error, data)
        if self._still_wanted(slot, key):
            self._schedule(lambda: self._publish(slot, key, view, data, options, seconds=seconds))

    def _computed_elsewhere(self, slot, key) -> bool:
        """Whether another session of the server (or the server's start) computed ``key`` while this job
        waited for it (:data:`precomputed.IN_FLIGHT`; then it is cached here), or the slot moved on
        meanwhile.  False: this job computes it (:meth:`_compute_once`)."""
        while (event := precomputed.IN_FLIGHT.begin(key)) is not None:
            event.wait()
            if self._lookup(key) or not self._still_wanted(slot, key):
                return True
        if self._lookup(key):  # (finished just before this job claimed it)
            precomputed.IN_FLIGHT.end(key)
            return True
        return False

    def _compute_once(self, slot, key, view, data, options):
        """:meth:`_compute`, the key marked as computing for the server's other sessions meanwhile."""
        try:
            return self._compute(slot, key, view, data, options)
        finally:
            precomputed.IN_FLIGHT.end(key)

    def _compute(self, slot, key, view, data, options):
        """``run_view`` for a job: in this session's worker process (a numba kernel holds the GIL: in a
        thread it would stall the session's event loop), within the job time limit.  Distributed data:
        on the Dask workers, or — for a view computed in memory — on the rows gathered from the cluster,
        in the worker process too."""
        total, remote_options = None, options
        if is_distributed(data):
            try:  # the rows a view computes in memory, gathered from the cluster (this thread waits)
                gathered = data.gathered(view, options)
            except InputError as exc:
                return None, 0.0, f"{view}: {exc}"
            if gathered is None:  # the work runs on the Dask workers; this thread only waits for it
                return run_view(view, data, options)
            rows, total, note = gathered
            # exactly these rows (the source's own subsample size may differ from calviz.sampling's)
            remote_options = options.replace(all_rows=True)

        def on_submit(future):
            if self._still_wanted(slot, key):
                self._worker_futures[slot] = future
            else:
                future.cancel()

        if total is None:
            # the worker process gets only the rows the view reads (calviz.sampling): a 10⁷-row array is
            # not copied to it for a view computed on a subsample
            prepared = prepare(data, options)
            rows, note = sample_for_view(view, prepared, options)
            total = prepared.n
        result, seconds, error = _run_remote(
            view, rows, remote_options, worker=self._worker, on_submit=on_submit, timeout=self._job_limit
        )
        return result, seconds, (error if result is None else result_note(view, rows, total, options,
                                                                          result, note))

    def _publish(self, slot, key, view, data, options, *, stopped: str | None = None,
                 seconds: float | None = None) -> None:
        """On the session's thread: show a finished job's result, unless the slot moved on meanwhile; its
        ``seconds`` join the timings of the change that asked for it; ``stopped``: why the job was stopped."""
        if not self._still_wanted(slot, key):
            return
        if stopped is not None:  # the fast stand-in (e.g. the analytic T-Cal) stays, with the reason
            error = f"{view_record(view).job_label}: stopped: {stopped}"
            entry = Entry(key, getattr(self, slot).result, options, data, error=error)
        else:
            error = self._error(view, data, options)
            entry = Entry(key, self.cached(view, data, options), options, data, error=error)
        jobs = {k: v for k, v in self.jobs.items() if k != slot}
        timings = self.timings if seconds is None else {**self.timings, view: seconds}
        self.param.update(**{slot: entry, "jobs": jobs, "timings": timings})

    def wait(self, timeout: float = 120.0) -> None:
        """Block until every background job has finished (tests, scripts)."""
        deadline = time.monotonic() + timeout
        while True:
            futures = [f for f in (*self._futures.values(), *self._running.values(), self._prefetching)
                       if f is not None and not f.done()]
            if not futures:
                return
            concurrent.futures.wait(futures, timeout=max(0.0, deadline - time.monotonic()))
            if time.monotonic() > deadline:
                raise TimeoutError("background jobs did not finish in time")

    def in_background(self, function, *args, **kwargs) -> None:
        """Run ``function`` on one of this session's job threads (opening a Dask source, …)."""
        _in_thread(function, *args, **kwargs).add_done_callback(_log_failure)

    def run_in_worker(self, function, *args):
        """``function(*args)`` (module-level, picklable arguments; arrays go by shared memory) in a worker
        process of the server, waited for on the calling job thread; ``JobStopped`` (a ``TimeoutError``)
        when it is stopped by the job time or memory limit; run again if its process was stopped under it."""
        args = tuple(_shared(arg) for arg in args)
        for _ in range(3):
            try:
                return self._worker.submit(function, *args, limit=self._job_limit).result()
            except (concurrent.futures.CancelledError, concurrent.futures.process.BrokenProcessPool):
                continue
        raise RuntimeError("the worker process was replaced three times during one job")

    def when_warm(self, callback) -> None:
        """Call ``callback`` (on a job thread) once this process has loaded the kernels."""
        warm_in_background(lambda data: [v for v in COMPUTE if not self._in_background(v, data)])
        start_spare_worker()  # (once per process)
        self.in_background(lambda: (_WARM.wait(), callback()))

    def close(self) -> None:
        """Drop every job of this session (the browser session ended)."""
        for slot in list(self._futures):
            self._wanted.pop(slot, None)
            self._cancel(slot)
        self._worker.kill()
