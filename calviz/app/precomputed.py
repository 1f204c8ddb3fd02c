"""What the dashboard's sessions share on one server: results by data and declared inputs, and each
visited target's sorted view.

* :class:`ResultCache` — every session's results, keyed as the store keys them
  (:func:`calviz.app.store.view_key`: the data's identity and the option fields the view's registry record
  ``reads``), bounded in entries.  A new tab on the same data (the server's one copy: ``calviz serve FILE``,
  an embedded dataset) shows what an earlier tab computed instead of computing it again.  A dataset's
  entries go when the dataset does (no identity is ever reused for other data).
* :class:`SortedViews` — per (data, scalar target): a :class:`calviz._presorted.Presorted` (the predictions
  sorted once with block prefix sums, 11.25 bytes per row), built once in a worker process of the server
  and returned to it as arrays, bounded in bytes (least recently used first).  From it :func:`answer` gives
  the reliability diagram, the asymptotic ECE interval and the analytic T-Cal of any bin count, binning
  scheme and α without a pass over the rows (O(m log n) per change), equal to the direct computations to
  1e−12 (tests/test_store_presorted.py); revisiting a target reuses its view.
* Per dataset, :class:`calviz._presorted.ClasswiseACE` (:data:`ACE_TABLES`): the classical tests' ACE of
  every bin count 1..100, so a bin change redoes the classical tests' only bin-dependent parts — the MCE
  from the target's sorted view, the ACE from the table — on the session's thread (:func:`rebinned`); and
  per class a :class:`calviz._presorted.BinTable`, so the reliability diagram and the ECE interval of a
  class not visited before are answered at once (:func:`bin_table`) while its sorted view is built.
* Per (data, scalar target, seed, resamples, subsample), a :class:`BootstrapTable` (:data:`BOOTSTRAPS`): the
  bootstrap interval's replicates of every bin count drawn once, so a bin or α change of it is milliseconds.
* :data:`IN_FLIGHT` — the background computations running now in any session: another session wanting the
  same result waits for it.  :func:`precompute_first_views` — at the server's start, the first page's
  views (the sorted view and tables of its target too), so the first page finds them computed.
"""

from __future__ import annotations

import concurrent.futures
import threading
import weakref
from collections import OrderedDict

import numpy as np

from calviz._data import CalibrationData, InputError
from calviz._presorted import ACE_TABLE_BINS, BinTable, BootstrapBins, ClasswiseACE, Presorted
from calviz.analysis import AnalysisOptions, is_distributed
from calviz.analysis.views import REGISTRY, effective_target, view

__all__ = ["ResultCache", "SortedViews", "answer", "sorted_target", "RESULTS", "SORTED", "ACE_TABLES",
           "BOOTSTRAPS", "PRESORT_MIN_ROWS", "IN_FLIGHT", "first_views_done",
           "precompute_first_views"]

#: rows from which a session's scalar views are answered from a sorted view (below, a direct pass takes
#: milliseconds: sorting would cost more than it saves)
PRESORT_MIN_ROWS = 200_000
#: results the server keeps (all sessions): each is small (bins, scales, a few numbers)
RESULT_ENTRIES = 512
#: bytes of sorted views the server keeps: 11.25 bytes per row and target — two targets of 10⁷ rows (top-1
#: and the class shown), so that a server of 10⁷ × 10 stays within 2 GB beside the data's 0.8 GB however
#: many classes its sessions go through; older targets are sorted again (a class's first views come from
#: its bin table meanwhile)
SORTED_MAX_BYTES = 1 << 28
#: the views a sorted view answers (their registry record's ``sorted_answer``; scalar targets, every row)
ANSWERED = tuple(record.name for record in REGISTRY if record.sorted_answer is not None)
_SCALAR = ("binary", "top1", "classwise")


class _ByData:
    """Entries keyed by ``(…, id(data), …)`` that are dropped when ``data`` is collected."""

    def __init__(self):
        self._lock = threading.RLock()
        self._watched: dict[int, weakref.finalize] = {}

    def _watch(self, data) -> bool:
        key = id(data)
        with self._lock:
            if key in self._watched:
                return True
            try:
                self._watched[key] = weakref.finalize(data, self._forget, key)
            except TypeError:  # not weak-referenceable: not shared
                return False
        return True

    def _forget(self, data_id: int) -> None:
        with self._lock:
            self._watched.pop(data_id, None)
            self._drop(data_id)

    def _drop(self, data_id: int) -> None:
        raise NotImplementedError


class ResultCache(_ByData):
    """Results of every session of the server by cache key (``(view, id(data), inputs)``): LRU, at most
    ``entries``."""

    def __init__(self, entries: int = RESULT_ENTRIES):
        super().__init__()
        self.entries = int(entries)
        self._items: OrderedDict = OrderedDict()

    def get(self, key) -> tuple[bool, object, str | None]:
        """``(found, result, error)``."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return (True, *self._items[key])
        return False, None, None

    def put(self, key, data, result, error) -> None:
        if not self._watch(data):
            return
        with self._lock:
            self._items[key] = (result, error)
            self._items.move_to_end(key)
            while len(self._items) > self.entries:
                self._items.popitem(last=False)

    def _drop(self, data_id: int) -> None:
        for key in [k for k in self._items if k[1] == data_id]:
            del self._items[key]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


class SortedViews(_ByData):
    """The sorted view of each (data, scalar target) the sessions visited: a future while it is built (in
    a worker process), then the :class:`Presorted`; at most ``max_bytes`` of finished views are kept."""

    def __init__(self, max_bytes: int = SORTED_MAX_BYTES):
        super().__init__()
        self.max_bytes = int(max_bytes)
        self._items: OrderedDict = OrderedDict()  # (id(data), target, class_index) → Future[Presorted]
        self.builds = 0

    def ready(self, data, target: tuple) -> Presorted | None:
        """The finished sorted view, or None (not asked for, building, or failed)."""
        key = (id(data), *target)
        with self._lock:
            future = self._items.get(key)
            if future is None or not future.done() or future.cancelled() or future.exception() is not None:
                return None
            self._items.move_to_end(key)
            return future.result()

    def future(self, data, target: tuple) -> concurrent.futures.Future | None:
        """The future of the view (building or built), or None (not asked for)."""
        with self._lock:
            return self._items.get((id(data), *target))

    def request(self, data, target: tuple, build) -> concurrent.futures.Future | None:
        """The future of the sorted view; ``build(data, target)`` starts it (returning a future) when it
        is neither built nor building.  A failed build is forgotten, so a later request tries again."""
        if not self._watch(data):
            return None
        key = (id(data), *target)
        with self._lock:
            future = self._items.get(key)
            if future is not None:
                self._items.move_to_end(key)
                return future
            future = build(data, target)
            self._items[key] = future
            self.builds += 1
        future.add_done_callback(lambda done: self._finished(key, done))
        return future

    def _finished(self, key, future) -> None:
        with self._lock:
            if self._items.get(key) is not future:
                return
            if future.cancelled() or future.exception() is not None:
                del self._items[key]
                return
            done = [(k, f) for k, f in self._items.items() if f.done()]
            total = sum(f.result().nbytes for _, f in done)
            for k, f in done:  # least recently used first; the newest is kept whatever its size
                if total <= self.max_bytes or k == key:
                    break
                total -= f.result().nbytes
                del self._items[k]

    def _drop(self, data_id: int) -> None:
        for key in [k for k in self._items if k[0] == data_id]:
            del self._items[key]

    def nbytes(self) -> int:
        with self._lock:
            return sum(f.result().nbytes for f in self._items.values()
                       if f.done() and not f.cancelled() and f.exception() is None)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


#: the server's shared results and sorted views; per dataset, the classwise ACE of every bin count
#: (:class:`calviz._presorted.ClasswiseACE`, kept under the target ``("classwise_ace",)``)
RESULTS = ResultCache()
SORTED = SortedViews()
ACE_TABLES = SortedViews()
ACE_TABLE = ("classwise_ace",)


def sorted_target(view: str, data, options: AnalysisOptions) -> tuple | None:
    """``(target, class_index)`` of the sorted view that answers ``view`` for these inputs, or None: the
    view is not one of :data:`ANSWERED`, the data are distributed or smaller than
    :data:`PRESORT_MIN_ROWS`, carry sample weights, a subsample is asked for (``n``), or the target is not
    scalar."""
    if view not in ANSWERED or type(data) is not CalibrationData or is_distributed(data):
        return None
    if data.weights is not None:  # (the sorted views are unweighted)
        return None
    if data.n < PRESORT_MIN_ROWS or (options.n is not None and int(options.n) < data.n):
        return None
    target = effective_target(view, data, options)
    if target[0] not in _SCALAR:
        return None
    return (target[0], target[1] if target[0] == "classwise" else 0)


def answer(name: str, presorted: Presorted, options: AnalysisOptions):
    """View ``name``'s result from its sorted view (as :func:`calviz.analysis.run_view` computes it on all the
    rows); ``InputError`` for inputs the direct computation refuses too (the caller then runs it, for its
    message)."""
    record = view(name)
    if record.sorted_answer is None:
        raise InputError(f"no sorted-view answer for view {name!r}")
    return record.sorted_answer(presorted, options)


def build_in_worker(probs, labels, confidence_form: bool, target: str, class_index: int) -> Presorted:
    """(in a worker process) The sorted view of one target of the data (mapped, never pickled)."""
    data = CalibrationData(probs, labels, confidence_form)
    return Presorted.from_data(data, target, class_index=class_index)


def warm_answers(data: CalibrationData) -> None:
    """Load (on a first run: compile) the kernels of the sorted views in this process — a build and every
    answer of :data:`ANSWERED` in both binning schemes, and the classical tests' MCE — on small warm-up
    data of the server's array types.  Without it the first change a sorted view answers loads them on
    the session's thread: a bin change at 10⁶ rows showed its diagram after 10 s at load 20, against
    milliseconds for the next ones."""
    options = AnalysisOptions()
    for target in (("top1", 0), ("classwise", 1)):
        presorted = build_in_worker(data.probs, data.labels, data.confidence_form, *target)
        for scheme in ("equal_width", "equal_mass"):
            for name in ANSWERED:
                answer(name, presorted, options.replace(scheme=scheme))
        presorted.mce(int(options.n_bins))


class InFlight:
    """The background computations running now in any session of the server, by cache key: a session that
    wants a result another session (or the server's own start, :func:`precompute_first_views`) is
    computing waits for it instead of computing it again on the other worker process."""

    def __init__(self):
        self._lock = threading.Lock()
        self._events: dict = {}

    def begin(self, key) -> threading.Event | None:
        """None: the caller computes ``key`` (and calls :meth:`end` after); else the event the computation
        running now sets when it ends (its result then is in :data:`RESULTS`, unless it failed or stopped)."""
        with self._lock:
            event = self._events.get(key)
            if event is None:
                self._events[key] = threading.Event()
            return event

    def end(self, key) -> None:
        with self._lock:
            event = self._events.pop(key, None)
        if event is not None:
            event.set()

    def __len__(self) -> int:
        return len(self._events)


IN_FLIGHT = InFlight()
#: the data whose first page's views the server's start has computed (:func:`precompute_first_views`), by id
_FIRST_VIEWS_DONE: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def first_views_done(data) -> bool:
    """Whether the server's start has computed the first page's views of ``data``
    (:func:`precompute_first_views`)."""
    return _FIRST_VIEWS_DONE.get(id(data)) is data


#: s: the server's start waits at most this long for its first views' jobs before it lets its session go
FIRST_VIEWS_LIMIT_S = 3600.0


def first_options(data) -> AnalysisOptions:
    """The options of a new session's first page on ``data`` (the controls' defaults fitted to it)."""
    from calviz.app.controls import Controls

    controls = Controls()
    controls.param.update(**controls.fit_to(data.n, data.n_classes, data.is_binary))
    return controls.options(data.n)


def precompute_first_views(data, options: AnalysisOptions | None = None,
                           then=None) -> concurrent.futures.Future | None:
    """At the server's start, in the background: every view of the first page (``options``, default
    :func:`first_options`) computed once by a session of the server's own — the slow ones in the worker
    processes, on the server's shared copy of the data — with the sorted view of its target and the
    dataset's ACE table, into the server's caches.  The first page then finds them cached, or waits for the
    computation already running (:data:`IN_FLIGHT`) instead of starting its own.  None for data other than
    in-memory :class:`CalibrationData` of at least :data:`PRESORT_MIN_ROWS` rows (below, the first page
    computes them in seconds).  ``then(seconds)`` is called once they are (the command line says so)."""
    if type(data) is not CalibrationData or is_distributed(data) or data.n < PRESORT_MIN_ROWS:
        return None
    from calviz.app.store import ResultStore
    from calviz.app.workers import _in_thread, _log_failure

    options = first_options(data) if options is None else options

    def run():
        import time

        started = time.perf_counter()
        store = ResultStore()
        try:
            store.update(data, options, start_now=True)
            store.wait(timeout=FIRST_VIEWS_LIMIT_S)
            for cache, target in ((SORTED, sorted_target("reliability", data, options)),
                                  (ACE_TABLES, ACE_TABLE)):
                future = None if target is None else cache.future(data, target)
                if future is not None:
                    concurrent.futures.wait([future], timeout=FIRST_VIEWS_LIMIT_S)
        finally:
            store.close()
        _FIRST_VIEWS_DONE[id(data)] = data
        if then is not None:
            then(time.perf_counter() - started)
        return store

    future = _in_thread(run)
    future.add_done_callback(_log_failure)
    return future


# -- the classical tests across bin counts ---------------------------------------------------------------
#: the views whose result at one bin count follows from their result at another (:func:`rebinned`)
REBINNED = ("classical",)
#: the latest result of each such view per inputs other than the bins
WITHOUT_BINS = ResultCache(entries=64)


def binless_key(key: tuple) -> tuple:
    """A store cache key without its ``n_bins`` value."""
    return (key[0], key[1], tuple(item for item in key[2] if item[0] != "n_bins"))


def rebinned(view: str, data, options: AnalysisOptions, base, presorted: Presorted | None = None,
             ace_table: ClasswiseACE | None = None):
    """``view``'s result at ``options.n_bins`` from its result ``base`` at another bin count: the classical
    tests do not read the bins (Hosmer–Lemeshow has its own groups), only their MCE (equal-width bins of
    the target: from its sorted view when built) and ACE (equal-mass bins of every class: from the
    dataset's :class:`ClasswiseACE` when built and the bin count is in it) do — the same calls as
    :func:`calviz.classical_tests` makes."""
    import dataclasses

    from calviz._ece import ace, mce
    from calviz.analysis import prepare
    from calviz.analysis.data import _target

    if view not in REBINNED:
        raise InputError(f"view {view!r} is not rebinned")
    sample = prepare(data, options)
    target = _target(sample, options, scalar=True)
    n_bins = int(options.n_bins)
    if presorted is not None and presorted.target == target.name and presorted.class_index == (
            target.class_index if target.name == "classwise" else 0):
        found_mce = presorted.mce(n_bins)
    else:
        found_mce = mce(sample, n_bins=n_bins, target=target.name, class_index=target.class_index)
    found_ace = None if ace_table is None or sample is not data else ace_table.ace(n_bins)
    if found_ace is None:
        found_ace = ace(sample, n_bins=n_bins, target="classwise")
    return dataclasses.replace(base, measures={"mce": found_mce, "ace": found_ace})


def table_eligible(data, options: AnalysisOptions) -> bool:
    """Whether the dataset's :class:`ClasswiseACE` answers the classical tests' ACE for these inputs:
    in-memory, unweighted data of at least :data:`PRESORT_MIN_ROWS` rows, every row analysed."""
    return (type(data) is CalibrationData and not is_distributed(data) and data.weights is None
            and data.n >= PRESORT_MIN_ROWS and (options.n is None or int(options.n) >= data.n))


def rebin_ready(view: str, data, options: AnalysisOptions) -> tuple | None:
    """``(presorted, ace_table)`` when :func:`rebinned` answers ``view`` without a pass over the rows (its
    scalar target's sorted view and the dataset's ACE table are built), else None."""
    if view not in REBINNED or not table_eligible(data, options):
        return None
    table = ACE_TABLES.ready(data, ACE_TABLE)
    if table is None or int(options.n_bins) > table.max_bins:
        return None
    target = effective_target(view, data, options)
    if target[0] not in _SCALAR:
        return None
    presorted = SORTED.ready(data, (target[0], target[1] if target[0] == "classwise" else 0))
    return None if presorted is None else (presorted, table)


#: the views a class's :class:`calviz._presorted.BinTable` (kept in the dataset's ACE table) answers
TABLE_ANSWERED = ("reliability", "interval")


def bin_table(view: str, data, options: AnalysisOptions) -> BinTable | None:
    """The :class:`BinTable` of the classwise target's class that answers ``view`` for these inputs (kept in
    the dataset's :class:`ClasswiseACE`, built at the server's start: a class's first visit is answered
    without a pass over the rows, before its sorted view is built), or None: not one of
    :data:`TABLE_ANSWERED`, not a classwise target a sorted view would answer, no table yet, or a bin count
    or scheme the table does not hold."""
    if view not in TABLE_ANSWERED or not table_eligible(data, options):
        return None
    target = sorted_target(view, data, options)
    if target is None or target[0] != "classwise":
        return None
    table = ACE_TABLES.ready(data, ACE_TABLE)
    bins = None if table is None else table.table(target[1])
    if bins is None or not bins.has(options.n_bins):
        return None
    return bins if view != "reliability" or options.scheme in ("equal_width", "equal_mass") else None


def ace_table_in_worker(probs, labels, confidence_form: bool) -> ClasswiseACE:
    """(in a worker process) The dataset's :class:`ClasswiseACE` (the arrays mapped, never pickled)."""
    return ClasswiseACE.from_data(CalibrationData(probs, labels, confidence_form))


def rebinned_in_worker(view, probs, labels, confidence_form: bool, options, base):
    """(in a worker process) :func:`rebinned` on the shared arrays: ``(result, seconds, None)``."""
    import time

    start = time.perf_counter()
    result = rebinned(view, CalibrationData(probs, labels, confidence_form), options, base)
    return result, time.perf_counter() - start, None


# -- the resampled views across α ------------------------------------------------------------------------
#: the latest result, with its resamples, of each resampled view (``View.redecided_by``) per inputs other
#: than those that only re-decide it; the caches above keep the results without their resamples (a CORP
#: band's are 8 bytes × resamples × 1000 points)
DRAWN = ResultCache(entries=16)


def key_without(key: tuple, fields: tuple[str, ...]) -> tuple:
    """A store cache key without the values of ``fields``."""
    return (key[0], key[1], tuple(item for item in key[2] if item[0] not in fields))


def without_draws(result):
    """``result`` without the resamples it carries (``_draws``), for the caches of shown results."""
    import dataclasses

    if dataclasses.is_dataclass(result) and getattr(result, "_draws", None) is not None:
        return dataclasses.replace(result, _draws=None)
    return result


def redecided_in_worker(name: str, probs, labels, confidence_form: bool, options, base, note):
    """(in a worker process) View ``name``'s ``redecide`` of ``base`` on the shared arrays:
    ``(result, seconds, note)``."""
    import time

    start = time.perf_counter()
    result = view(name).redecide(base, CalibrationData(probs, labels, confidence_form), options)
    return result, time.perf_counter() - start, note



# -- the bootstrap interval across bin counts ------------------------------------------------------------
#: per (data, scalar target, seed, resamples, subsample): the bootstrap's replicates of every bin count
#: 1..100, drawn once (:class:`BootstrapTable`)
BOOTSTRAPS = SortedViews(max_bytes=64 << 20)
#: the view they answer, and the bin counts
BOOTSTRAPPED = "bootstrap"
TABLE_BINS = ACE_TABLE_BINS


def bootstrap_target(view: str, data, options: AnalysisOptions) -> tuple | None:
    """The :data:`BOOTSTRAPS` key (less the data) of ``view``'s table for these inputs, or None: not the
    bootstrap interval, not in-memory unweighted data of at least :data:`PRESORT_MIN_ROWS` rows, or not a
    scalar target (the top-k and full targets bin a vector)."""
    if view != BOOTSTRAPPED or type(data) is not CalibrationData or is_distributed(data):
        return None
    if data.weights is not None or data.n < PRESORT_MIN_ROWS:
        return None
    target = effective_target(view, data, options)
    if target[0] not in _SCALAR:
        return None
    return ("bootstrap", *target, int(options.seed), int(options.n_resamples), options.n,
            bool(options.all_rows))


def _bootstrap_rows(data, options: AnalysisOptions):
    """The rows the bootstrap view analyses (its subsample, as the store's job draws it), their number
    before subsampling and the subsample's note."""
    from calviz.analysis import prepare
    from calviz.sampling import sample_for_view

    prepared = prepare(data, options)
    rows, note = sample_for_view(BOOTSTRAPPED, prepared, options)
    return rows, prepared.n, note


def _bootstrap_target(rows, options: AnalysisOptions):
    """The resolved target the bootstrap interval bins on ``rows`` (as its compute function resolves it)."""
    from calviz.analysis.data import _resolved, _target

    target = _target(rows, options)
    if target.name == "topk" and target.top_k == 1:
        target = _resolved(rows, "auto")
    return target


class BootstrapTable:
    """The bootstrap interval of one scalar target, seed, number of resamples and subsample at every bin
    count 1..100 and every α: the replicates of each bin count drawn once
    (:class:`calviz._presorted.BootstrapBins`, built in a worker process), the rest — the asymptotic
    interval of the same rows and the percentiles — milliseconds on the subsample.  Equal to the view's
    compute function to 1e−12."""

    def __init__(self, bins: BootstrapBins, n_resamples: int):
        self.bins = bins
        self.n_resamples = int(n_resamples)

    @property
    def nbytes(self) -> int:
        return self.bins.nbytes

    @classmethod
    def from_rows(cls, rows, options: AnalysisOptions) -> BootstrapTable:
        from calviz._ece import prepare_view
        from calviz._intervals import bootstrap_resamples

        _, _, z, y = prepare_view(rows, target=_bootstrap_target(rows, options), integer_labels=True,
                                  caller="ece_interval")
        resamples = bootstrap_resamples(z.size, int(options.n_resamples))
        return cls(BootstrapBins(z, y, n_resamples=resamples, seed=int(options.seed)),
                   int(options.n_resamples))

    def answer(self, data, options: AnalysisOptions):
        """``(result, note)`` of the bootstrap view at ``options`` (its n_bins and α), or None (more bins
        than the table holds)."""
        from calviz._intervals import bootstrap_from_replicates, ece_interval
        from calviz.sampling import result_note

        reps = self.bins.replicates(int(options.n_bins))
        if reps is None:
            return None
        rows, total, note = _bootstrap_rows(data, options)
        asym = ece_interval(rows, target=_bootstrap_target(rows, options), n_bins=int(options.n_bins),
                            alpha=options.alpha)
        result = bootstrap_from_replicates(asym, np.array(reps), self.n_resamples, options.alpha, 1)
        return result, result_note(BOOTSTRAPPED, rows, total, options, result, note)


def bootstrap_table_in_worker(probs, labels, confidence_form: bool, options) -> BootstrapTable:
    """(in a worker process) The :class:`BootstrapTable` of the bootstrap view's rows (mapped)."""
    return BootstrapTable.from_rows(CalibrationData(probs, labels, confidence_form), options)
