"""Worker processes and job threads of the dashboard's sessions: every background computation of
:class:`~calviz.app.store.ResultStore` runs on a job thread, and every CPU-bound one in a worker process
(a numba kernel holds the GIL: in a thread it would stall the session's event loop).  Only this module
starts threads and processes for the dashboard."""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import multiprocessing
import os
import signal
import threading
import time
import warnings
import weakref
from collections.abc import Callable

import numpy as np

from calviz._data import CalibrationData, as_calibration_data
from calviz.analysis import COMPUTE, AnalysisOptions, run_view

__all__ = ["SessionWorker", "shutdown_workers", "start_spare_worker", "warm_in_background", "warm_kernels"]


def _in_thread(function, *args, **kwargs) -> concurrent.futures.Future:
    """Run ``function`` on a new daemon thread; its future.  Daemon: a job waiting for a worker (or for
    Dask) never delays the server's exit — the workers are stopped by :func:`shutdown_workers`."""
    future: concurrent.futures.Future = concurrent.futures.Future()

    def run():
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(function(*args, **kwargs))
        except BaseException as exc:  # handed to whoever reads the future (wait, _log_failure)
            future.set_exception(exc)

    threading.Thread(target=run, name="calviz-job", daemon=True).start()
    return future


def _log_failure(future: concurrent.futures.Future) -> None:
    if not future.cancelled() and future.exception() is not None:
        logging.getLogger("calviz").error("background job failed", exc_info=future.exception())


# -- the worker processes ------------------------------------------------------------------------------
_WORKERS: weakref.WeakSet = weakref.WeakSet()  # every session's worker, for shutdown_workers
_STOPPING = threading.Event()
_SPAWNER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="calviz-spawner")


class SessionWorker:
    """One session's worker process (spawned at its first job): sessions never wait for each other's
    jobs — each has its own process, and the OS shares the cores between them — and a job a session no
    longer wants can be stopped by replacing the process, which touches no other session."""

    def __init__(self):
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._ready: concurrent.futures.Future | None = None  # the spare's warm-up, when this is it
        self._jobs: list[concurrent.futures.Future] = []  # submitted to this pool, maybe not done
        self._lock = threading.Lock()

    def submit(self, function, *args) -> concurrent.futures.Future:
        with self._lock:
            if _STOPPING.is_set():
                raise RuntimeError("the server is stopping")
            if self._pool is None:
                _WORKERS.add(self)
                spare = _take_spare()  # started and warming before any session wanted it
                if spare is None:
                    self._pool = _new_pool(_warm_worker)
                    self._jobs = [_spawn(self._pool, function, *args)]
                    return self._jobs[0]
                self._pool, self._ready = spare
            pool, ready = self._pool, self._ready
        if ready is not None:
            # a first run compiles every kernel there: a job is submitted (and its time limit starts)
            # once they are loaded; a spare that died is replaced by a new process
            concurrent.futures.wait([ready])
            with self._lock:
                if self._pool is not pool:  # stopped meanwhile (the session ended, a job was stopped)
                    raise concurrent.futures.CancelledError
            if ready.cancelled() or ready.exception() is not None:
                self.kill()
                return self.submit(function, *args)
        return self._track(pool.submit(function, *args))

    def _track(self, job: concurrent.futures.Future) -> concurrent.futures.Future:
        with self._lock:
            self._jobs = [*(j for j in self._jobs if not j.done()), job]
        return job

    def kill(self) -> None:
        """Stop the process now, also mid-job (its pending jobs fail with ``BrokenProcessPool``)."""
        with self._lock:
            pool, self._pool, self._ready = self._pool, None, None
            jobs, self._jobs = self._jobs, []
        if pool is not None:
            _stop_pool(pool, jobs)


def _new_pool(initializer) -> concurrent.futures.ProcessPoolExecutor:
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=1,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=initializer,
        initargs=(os.getpid(),),
    )


def _spawn(pool, function, *args) -> concurrent.futures.Future:
    """``pool.submit(function, *args)`` on the spawner thread: the pool starts its process at the first
    submit, on the calling thread, and Linux ties a child's death signal to that thread, so it must be
    one that lives as long as the server."""
    return _SPAWNER.submit(pool.submit, function, *args).result()


def _stop_pool(pool, jobs=()) -> None:
    # (read before shutdown clears them)
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    if jobs:
        _in_thread(_fail_unresolved, manager, jobs)


def _fail_unresolved(manager, jobs) -> None:
    """Fail the jobs a stopped pool left unresolved.  When its process dies, CPython 3.11's pool manager
    (thread ``manager``) stops at the first job that was cancelled while queued and never resolves the
    jobs after it (3.12 skips cancelled jobs); a job thread waiting on one would wait until the job
    time limit."""
    if manager is not None:
        manager.join(timeout=30)  # (it resolves what it can first: no job is failed twice)
    stopped = concurrent.futures.process.BrokenProcessPool("the worker process was stopped")
    for job in jobs:
        if not job.done():
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                job.set_exception(stopped)


_SPARE: list = []  # (pool, its warm-up's future) of the spare worker process until a session takes it
_SPARE_STARTED = threading.Event()


def start_spare_worker() -> None:
    """Start one worker process now (once per server process; the first page's start calls it) and load
    — on a first run compile — every kernel in it, beside the server's own warm-up: the first session
    takes it for its background jobs, which then wait for no process start after the debounce."""
    with _WARM_LOCK:
        if _SPARE_STARTED.is_set() or _STOPPING.is_set():
            return
        _SPARE_STARTED.set()
        pool = _new_pool(_warm_spare)
        _SPARE.append((pool, _spawn(pool, os.getpid)))  # done once the initializer has warmed it


def _take_spare():
    with _WARM_LOCK:
        return _SPARE.pop() if _SPARE else None


def shutdown_workers() -> None:
    """Stop every session's worker process (``calviz serve`` calls this when it stops), also mid-job,
    and the spare one; no job starts a process afterwards."""
    _STOPPING.set()
    for worker in list(_WORKERS):
        worker.kill()
    while (spare := _take_spare()) is not None:
        _stop_pool(spare[0])


_WARM = threading.Event()  # set once this process has loaded (or compiled) its views' kernels
_WARM_LOCK = threading.Lock()
_WARMING: list[threading.Thread] = []


def warm_in_background(foreground: Callable[[CalibrationData], list[str]]) -> None:
    """Load — on a first run compile — the kernels of the views computed on the session's thread
    (``foreground(data)``), in a background thread (once per process): a served page shows "preparing"
    meanwhile instead of a blank page.  The background jobs' kernels are loaded by the worker processes
    (:func:`start_spare_worker`), so this process loads only what it runs itself."""
    with _WARM_LOCK:
        if _WARMING:
            return

        def warm():
            try:
                data = _warm_data()
                warm_kernels(foreground(data), data)
            except Exception:  # warming is an optimisation; a failure shows up in the views themselves
                logging.getLogger("calviz").exception("warming the kernels failed")
            finally:
                _WARM.set()

        _WARMING.append(threading.Thread(target=warm, name="calviz-warm", daemon=True))
        _WARMING[0].start()


def warm_kernels(views=None, data: CalibrationData | None = None) -> None:
    """Compile (or load from numba's cache) the kernels of ``views`` (default: every view the dashboard
    computes): the first call of a jitted function loads it, and a first run compiles it (tens of
    seconds).  On :func:`_warm_data`: nothing to read or train, and scikit-learn is not imported."""
    data = _warm_data() if data is None else data
    options = AnalysisOptions(resampling="y_only", n_resamples=20)
    with warnings.catch_warnings():  # 20 resamples cannot reject: said once per call, not wanted here
        warnings.simplefilter("ignore")
        for view in views or COMPUTE:
            run_view(view, data, options)


def _warm_data() -> CalibrationData:
    """400 seeded predictions of a 4-class model.  A kernel is compiled per argument type, not per size,
    and every dataset with more than two classes gives the views arrays of these types."""
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(4), size=400)
    labels = (probs.cumsum(axis=1) < rng.random((400, 1))).sum(axis=1).clip(0, 3)
    return as_calibration_data(labels, probs)


def _exit_with_parent(parent: int) -> None:
    """A worker whose server died (killed, so it could not stop its pool) is re-parented: exit then,
    instead of lingering — and finishing a stale job — forever."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(0)


def _warm_worker(server: int) -> None:
    """Import the engine in a new worker (loading numba's cached kernels) before its first job, and tie
    the worker's life to the server's (process ``server``): on Linux the kernel kills it when the server
    dies (even mid-way through a kernel, which holds the GIL: a watching thread could not run then);
    elsewhere a thread watches the parent.  A server that died while this worker was starting (before
    the death signal was asked for) is noticed at once."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != server:
        os._exit(0)
    threading.Thread(
        target=_exit_with_parent, args=(server,), name="calviz-parent-watch", daemon=True
    ).start()
    import calviz.analysis  # noqa: F401  (imports every engine module)


def _warm_spare(server: int) -> None:
    """A spare worker's start: :func:`_warm_worker`, then every kernel loaded (or compiled)."""
    _warm_worker(server)
    try:
        warm_kernels()
    except Exception:  # warming is an optimisation; a failure shows up in the views themselves
        logging.getLogger("calviz").exception("warming the kernels failed")


def _compute_in_worker(view, probs, labels, confidence_form, options):
    return run_view(view, CalibrationData(probs, labels, confidence_form), options)


def _run_remote(view, data, options, *, worker: SessionWorker, on_submit=None, timeout=None):
    """:func:`calviz.analysis.run_view` in ``worker``'s process; raises ``TimeoutError`` after
    ``timeout`` seconds (the caller stops the process)."""
    future = worker.submit(_compute_in_worker, view, data.probs, data.labels, data.confidence_form, options)
    if on_submit is not None:
        on_submit(future)
    return future.result(timeout=timeout)
