"""Worker processes and job threads of the dashboard's sessions: every background computation of
:class:`~calviz.app.store.ResultStore` runs on a job thread, and every CPU-bound one in a worker process
(a numba kernel holds the GIL: in a thread it would stall the session's event loop).  Only this module
starts threads and processes for the dashboard."""

from __future__ import annotations

import collections
import concurrent.futures
import concurrent.futures.process
import contextlib
import dataclasses
import logging
import mmap
import multiprocessing
import os
import secrets
import signal
import tempfile
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from functools import partial
from multiprocessing import resource_tracker
from queue import Empty, SimpleQueue
from typing import Any

import numpy as np

from calviz._data import CalibrationData, as_calibration_data
from calviz.analysis import COMPUTE, AnalysisOptions, run_view

__all__ = ["SessionWorker", "shutdown_workers", "start_spare_worker", "warm_in_background", "warm_kernels"]


_STOPPING = threading.Event()  # set when the server stops: no job starts any more


#: s: a job thread with nothing to do waits this long for the next job before it ends
JOB_THREAD_IDLE_S = 60.0
_JOB_LOCK = threading.Lock()
_JOB_QUEUE: SimpleQueue = SimpleQueue()
_idle_job_threads = 0


def _in_thread(function, *args, **kwargs) -> concurrent.futures.Future:
    """Run ``function`` on a daemon thread of its own; its future.  Daemon: a job waiting for a worker (or
    for Dask) never delays the server's exit — the workers are stopped by :func:`shutdown_workers`.  A job
    thread that has finished its job waits :data:`JOB_THREAD_IDLE_S` for another one (a change's jobs then
    start without starting threads: ``Thread.start`` waits until the new thread runs, tens of ms each on a
    loaded machine, on the session's thread before the change is sent)."""
    global _idle_job_threads
    future: concurrent.futures.Future = concurrent.futures.Future()

    def run():
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(function(*args, **kwargs))
        except BaseException as exc:  # handed to whoever reads the future (wait, _log_failure)
            future.set_exception(exc)

    with _JOB_LOCK:
        if _idle_job_threads > 0:  # (one idle thread is promised this job)
            _idle_job_threads -= 1
            _JOB_QUEUE.put(run)
            return future
    threading.Thread(target=_job_thread, args=(run,), name="calviz-job", daemon=True).start()
    return future


def _job_thread(run) -> None:
    """A job thread: its first job, then the jobs :func:`_in_thread` hands it while it is idle."""
    global _idle_job_threads
    while True:
        run()
        run = None  # (nothing of the finished job is kept alive while idle)
        with _JOB_LOCK:
            _idle_job_threads += 1
        try:
            run = _JOB_QUEUE.get(timeout=JOB_THREAD_IDLE_S)
        except Empty:
            with _JOB_LOCK:
                if _idle_job_threads > 0:  # no job was promised to the idle threads: this one ends
                    _idle_job_threads -= 1
                    return
            run = _JOB_QUEUE.get()  # (a job was promised meanwhile: it is on its way)


def _log_failure(future: concurrent.futures.Future) -> None:
    if _STOPPING.is_set():
        return  # jobs cut short by the server's stop are no failures
    if not future.cancelled() and future.exception() is not None:
        logging.getLogger("calviz").error("background job failed", exc_info=future.exception())


# -- data shared with the worker processes ----------------------------------------------------------------
#: arrays smaller than this are pickled to a worker with its job (copying them costs less than a mapping)
SHARE_MIN_BYTES = 1 << 20
_SHARED_DIRS = tuple(d for d in ("/dev/shm", tempfile.gettempdir()) if os.path.isdir(d))
_BLOCKS: dict[int, tuple[weakref.ref, str, int]] = {}  # id(mmap) → (the mmap, its file, its address)
_RELEASES: dict[int, weakref.finalize] = {}  # id(mmap) → the call deleting its file (runs once)
_COPIES: dict[int, np.ndarray] = {}  # id(array not in a block) → its copy in one, while the array lives
_NAMED: collections.OrderedDict = collections.OrderedDict()  # dataset name → its data, shared
_SHARED_LOCK = threading.Lock()


def _new_block(nbytes: int):
    """A new memory-mapped file of ``nbytes`` (in ``/dev/shm`` when it has room, else in the temporary
    directory; ``None`` when neither has), deleted once no array of this process maps it.  Workers map
    the same file: the data exists once on the machine, however many processes read it."""
    size = max(1, int(nbytes))
    for directory in _SHARED_DIRS:
        path = os.path.join(directory, f"calviz-{os.getpid()}-{secrets.token_hex(8)}")
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError:
            continue
        try:
            # reserved now: writing to a tmpfs page past its room would kill the process (SIGBUS)
            os.posix_fallocate(fd, 0, size)
            mapped = mmap.mmap(fd, size)
        except OSError:
            os.unlink(path)
            continue
        finally:
            os.close(fd)
        tracked = directory == "/dev/shm"
        if tracked:  # a server killed outright leaves no file behind: the tracker deletes it
            resource_tracker.register("/" + os.path.basename(path), "shared_memory")
        address = np.frombuffer(mapped, np.uint8).ctypes.data
        _BLOCKS[id(mapped)] = (weakref.ref(mapped), path, address)
        _RELEASES[id(mapped)] = weakref.finalize(mapped, _delete_block, id(mapped), path, tracked)
        return mapped
    return None


def _delete_block(key: int, path: str, tracked: bool) -> None:
    _BLOCKS.pop(key, None)
    _RELEASES.pop(key, None)
    with contextlib.suppress(OSError):
        os.unlink(path)
    if tracked:
        with contextlib.suppress(Exception):
            resource_tracker.unregister("/" + os.path.basename(path), "shared_memory")


def shared_copy(array: np.ndarray) -> np.ndarray:
    """A read-only copy of ``array`` in a shared block (``array`` itself when no block can be made)."""
    mapped = _new_block(array.nbytes)
    if mapped is None:
        return array
    copy = np.ndarray(array.shape, array.dtype, buffer=mapped)
    copy[...] = array
    copy.flags.writeable = False
    return copy


def _block_of(array: np.ndarray):
    """``(mmap, file, address)`` of the shared block ``array`` is a view of, or ``None``."""
    base = array
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    if isinstance(base, mmap.mmap):
        entry = _BLOCKS.get(id(base))
        if entry is not None and entry[0]() is base:
            return base, entry[1], entry[2]
    return None


def share_data(data):
    """``data`` with its arrays in shared blocks (an in-memory :class:`~calviz.CalibrationData` of at
    least :data:`SHARE_MIN_BYTES`; anything else as it is): the server's one copy, which every worker maps
    instead of receiving a pickle of it."""
    if type(data) is not CalibrationData:  # (a Dask source; data kept on disk: FileBackedData)
        return data
    if data.probs.nbytes + data.labels.nbytes < SHARE_MIN_BYTES:
        return data
    if _block_of(data.probs) is not None and _block_of(data.labels) is not None:
        return data
    # (every other field kept; of the cache of views only the multiclass top-1 view formed while validating
    # — arrays of its own, not views of the unshared copy — so that it is not formed again)
    kept = {} if data.is_binary or "top1" not in data._cache else {"top1": data._cache["top1"]}
    return dataclasses.replace(data, probs=shared_copy(data.probs), labels=shared_copy(data.labels),
                               _cache=kept)


def share_named(name: str, load: Callable[[str], Any]):
    """``load(name)`` shared (:func:`share_data`), once per server for the last few names: sessions that
    open the same embedded dataset read one copy of it."""
    with _SHARED_LOCK:
        if name in _NAMED:
            _NAMED.move_to_end(name)
            return _NAMED[name]
    data = share_data(load(name))
    with _SHARED_LOCK:
        data = _NAMED.setdefault(name, data)
        while len(_NAMED) > 4:
            _NAMED.popitem(last=False)
    return data


class _SharedArray:
    """What a job's argument array becomes on its way to a worker: where it lies in a shared block (the
    worker maps the block; :func:`_map_shared`).  The parent keeps the block while the job holds this."""

    def __init__(self, array: np.ndarray, mapped, path: str, address: int, cached: bool):
        self._mapped = mapped  # (not pickled: the parent's block lives as long as the job's arguments)
        self.where = (path, array.dtype.str, array.shape, array.strides, array.ctypes.data - address, cached)

    def __reduce__(self):
        return _map_shared, self.where


def _shared(array):
    """A job's argument: arrays of :data:`SHARE_MIN_BYTES` or more go by their shared block — the data's
    own (:func:`share_data`), or a copy made for the job (a subsample, a view's column) — never by a
    pickle of their values."""
    if not isinstance(array, np.ndarray) or array.nbytes < SHARE_MIN_BYTES or array.dtype.hasobject:
        return array
    block = _block_of(array)
    cached = block is not None  # the data's own block: worth keeping mapped in the worker
    if block is None:
        with _SHARED_LOCK:
            copy = _COPIES.get(id(array))
            if copy is None:
                copy = shared_copy(array)
                if copy is array:  # no room for a block: pickled after all
                    return array
                _COPIES[id(array)] = copy
                weakref.finalize(array, _COPIES.pop, id(array), None)
        array, block = copy, _block_of(copy)
    return _SharedArray(array, *block, cached)


_MAPPED: collections.OrderedDict = collections.OrderedDict()  # (a worker's) file → its mapping


def _map_shared(path, dtype, shape, strides, offset, cached):
    """(in a worker) The array a :class:`_SharedArray` names, read-only.  The data's blocks stay mapped
    for the next jobs (the last few); a job's own copy is unmapped with its last array."""
    mapped = _MAPPED.get(path)
    if mapped is None:
        with open(path, "rb") as file:
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        if cached:
            _MAPPED[path] = mapped
            while len(_MAPPED) > 4:
                _MAPPED.popitem(last=False)
    else:
        _MAPPED.move_to_end(path)
    return np.ndarray(shape, np.dtype(dtype), buffer=mapped, offset=offset, strides=strides)


# -- the worker processes ------------------------------------------------------------------------------
#: worker processes at most by default: one per core (a job is one CPU-bound computation), but never so
#: many that their baseline memory (≈ 0.2 GB each: Python, numpy, numba and the loaded kernels) dominates
MAX_DEFAULT_WORKERS = 8
#: bytes of memory a job may allocate at least by default (see :func:`default_job_memory`)
MIN_JOB_MEMORY = 1 << 30


def default_workers() -> int:
    """Worker processes of ``calviz serve`` unless ``--workers`` says otherwise: one per core this process
    may run on, at most :data:`MAX_DEFAULT_WORKERS`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # (not Linux)
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_DEFAULT_WORKERS))


def default_job_memory(workers: int) -> int:
    """Bytes one job may allocate (its worker process's private memory, the shared data excluded):
    together, ``workers`` jobs at their limit hold half of the machine's memory, and a job gets at least
    :data:`MIN_JOB_MEMORY`."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return MIN_JOB_MEMORY
    return max(MIN_JOB_MEMORY, total // (2 * max(1, workers)))


class JobStopped(TimeoutError):
    """A job stopped by a limit — longer than its time limit, more memory than a job may use — or whose
    worker process ended under it; the message says which (a ``TimeoutError``, as the time limit is the
    common case)."""


class ServerStopping(RuntimeError):
    """No job starts any more: the server is stopping."""


class _Job:
    __slots__ = ("session", "function", "args", "limit", "future", "deadline")

    def __init__(self, session, function, args, limit):
        self.session, self.function, self.args, self.limit = session, function, args, limit
        self.future: concurrent.futures.Future = concurrent.futures.Future()
        self.deadline = float("inf")


class _Slot:
    """One worker process of the pool: ``executor`` (a one-process pool) is ``None`` until the process is
    needed, ``starting`` while it loads the engine, then it runs ``job`` or waits for one."""

    def __init__(self):
        self.executor: concurrent.futures.ProcessPoolExecutor | None = None
        self.starting = False
        self.job: _Job | None = None

    @property
    def idle(self) -> bool:
        return self.executor is not None and not self.starting and self.job is None


class WorkerPool:
    """``size`` worker processes shared by every session of the server, fairly.

    * Each session has its own queue; a free process takes the oldest job of the session that has
      waited longest since its last turn (round robin), and a session runs at most ``max(1, size // 2)``
      jobs at once, so one session's jobs never hold every process while another session waits.
    * A job cancelled while it waits never starts; :meth:`stop` stops a running one (its process is
      replaced, the other processes keep running).
    * A job gets ``limit`` seconds from the moment a warm process starts it (the time it waited for a
      process does not count), and ``job_memory`` bytes of private memory (the address-space limit
      ``RLIMIT_DATA`` of its process; the data shared by :func:`share_data` is not counted); over
      either, it is stopped with :class:`JobStopped` saying so.
    * Processes start when jobs need them (the first one with :meth:`start_spare`, when the first page
      is sent, loading — on a first run compiling — every kernel), and are replaced when stopped.

    One thread (``calviz-pool``) starts the processes and hands them their jobs: Linux ties a child's
    death signal to the thread that started it, which must live as long as the server."""

    def __init__(self, size: int, job_memory: int):
        self.size = int(size)
        self.job_memory = int(job_memory)
        self.per_session = max(1, self.size // 2)
        self._cond = threading.Condition()
        self._queues: dict[object, collections.deque] = {}  # session → its waiting jobs
        self._served: dict[object, int] = {}  # session → the turn it last had a job started
        self._turns = 0
        self._running: dict[object, int] = {}
        self._slots = [_Slot() for _ in range(self.size)]
        self._spare_wanted = False
        self._stopping = False
        self._thread: threading.Thread | None = None

    # -- the sessions' side -------------------------------------------------------------------------
    def submit(self, session, function, args, limit: float) -> concurrent.futures.Future:
        job = _Job(session, function, args, float(limit))
        with self._cond:
            if self._stopping:
                raise ServerStopping("the server is stopping")
            self._queues.setdefault(session, collections.deque()).append(job)
            self._start_thread()
            self._cond.notify_all()
        job.future.add_done_callback(self._wake)  # (a job cancelled while waiting frees its place)
        return job.future

    def stop(self, future: concurrent.futures.Future) -> None:
        """Stop one job: cancelled if it waits, its process stopped (and replaced) if it runs."""
        if future.cancel():
            return
        self._stop_where(lambda job: job.future is future, "the job was stopped")

    def stop_session(self, session) -> None:
        """Stop every job of ``session``, waiting or running (the session ended, or gave up on them)."""
        with self._cond:
            waiting = self._queues.pop(session, ())
        for job in waiting:
            job.future.cancel()
        self._stop_where(lambda job: job.session is session, "the session's jobs were stopped")

    def start_spare(self) -> None:
        """Start one process now and load every kernel in it (see the class docstring)."""
        with self._cond:
            if self._stopping:
                return
            self._spare_wanted = True
            self._start_thread()
            self._cond.notify_all()

    def shutdown(self) -> None:
        """Stop every process, also mid-job; every job waiting or running is cancelled or fails with
        :class:`ServerStopping`, and none starts afterwards."""
        with self._cond:
            self._stopping = True
            waiting = [job for queue in self._queues.values() for job in queue]
            self._queues.clear()
            executors = [slot.executor for slot in self._slots if slot.executor is not None]
            running = [slot.job for slot in self._slots if slot.job is not None]
            for slot in self._slots:
                slot.executor, slot.job, slot.starting = None, None, False
            self._cond.notify_all()
        for job in waiting:
            job.future.cancel()
        for executor in executors:
            _stop_pool(executor)
        for job in running:
            _resolve(job.future, exception=ServerStopping("the server is stopping"))

    def processes(self) -> int:
        """Worker processes started now (tests, benchmarks)."""
        with self._cond:
            return sum(slot.executor is not None for slot in self._slots)

    # -- the pool's thread --------------------------------------------------------------------------
    def _wake(self, _future=None) -> None:
        with self._cond:
            self._cond.notify_all()

    def _start_thread(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="calviz-pool", daemon=True)
            self._thread.start()

    def _stop_where(self, matches, why: str) -> None:
        stopped = []
        with self._cond:
            for slot in self._slots:
                if slot.job is not None and matches(slot.job):
                    stopped.append((slot.executor, slot.job))
                    self._release(slot, replace=True)
            self._cond.notify_all()
        for executor, job in stopped:
            _stop_pool(executor)
            _resolve(job.future, exception=concurrent.futures.process.BrokenProcessPool(why))

    def _release(self, slot: _Slot, *, replace: bool) -> None:
        """(under the lock) ``slot``'s job is over; ``replace``: its process is being stopped."""
        job, slot.job = slot.job, None
        if job is not None:
            self._running[job.session] = self._running.get(job.session, 1) - 1
            if not self._running[job.session]:
                del self._running[job.session]
        if replace:
            slot.executor, slot.starting = None, False

    def _serve(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._stopping:
                        return
                    now = time.monotonic()
                    expired = [slot for slot in self._slots
                               if slot.job is not None and slot.job.deadline <= now]
                    if expired:
                        stopped = []
                        for slot in expired:
                            stopped.append((slot.executor, slot.job))
                            self._release(slot, replace=True)
                        break
                    action = self._next()
                    if action is not None:
                        stopped = []
                        break
                    deadlines = [slot.job.deadline for slot in self._slots
                                 if slot.job is not None and slot.job.deadline != float("inf")]
                    self._cond.wait(max(0.0, min(deadlines) - now) if deadlines else None)
            for executor, job in stopped:
                _stop_pool(executor)
                _resolve(job.future, exception=JobStopped(f"took longer than {job.limit:g} s"))
            if not stopped:
                try:
                    action()
                except Exception:  # (a bug): logged, and the pool keeps serving the other jobs
                    logging.getLogger("calviz").exception("the worker pool failed to start a job")

    def _next(self):
        """(under the lock) What the pool's thread does next, as a function, or ``None``: hand a job to a
        free process, or start a process for waiting jobs (or the spare)."""
        for queue in self._queues.values():
            while queue and queue[0].future.cancelled():
                queue.popleft()
        for session in [s for s, queue in self._queues.items() if not queue and not self._running.get(s)]:
            del self._queues[session]
            self._served.pop(session, None)
        ready = [session for session, queue in self._queues.items()
                 if queue and self._running.get(session, 0) < self.per_session]
        ready.sort(key=lambda session: self._served.get(session, 0))  # the longest without a turn first
        idle = [slot for slot in self._slots if slot.idle]
        if ready and idle:
            session = ready[0]
            job = self._queues[session].popleft()
            self._turns += 1
            self._served[session] = self._turns
            if not job.future.set_running_or_notify_cancel():
                return lambda: None
            slot = idle[0]
            slot.job = job
            self._running[session] = self._running.get(session, 0) + 1
            job.deadline = time.monotonic() + job.limit
            return partial(self._hand, slot, slot.executor, job)
        starting = sum(slot.starting for slot in self._slots)
        waiting = sum(min(len(self._queues[s]), self.per_session - self._running.get(s, 0)) for s in ready)
        empty = [slot for slot in self._slots if slot.executor is None]
        if empty and (waiting > starting or (self._spare_wanted and not any(
                slot.executor is not None for slot in self._slots))):
            spare, self._spare_wanted = self._spare_wanted, False
            slot = empty[0]
            slot.starting = True
            slot.executor = _new_pool(_warm_spare if spare else _warm_worker, self.job_memory)
            return partial(self._start, slot, slot.executor)
        return None

    def _start(self, slot: _Slot, executor) -> None:
        """Start ``slot``'s process (on this thread: see the class docstring); it takes jobs once warm."""
        try:
            ready = executor.submit(os.getpid)
        except Exception:  # (a pool stopped meanwhile): the slot stays empty
            ready = concurrent.futures.Future()
            ready.set_exception(concurrent.futures.process.BrokenProcessPool("not started"))
        ready.add_done_callback(partial(self._started, slot, executor))

    def _started(self, slot: _Slot, executor, ready) -> None:
        failed = ready.cancelled() or ready.exception() is not None
        with self._cond:
            if slot.executor is not executor:
                return  # stopped meanwhile
            slot.starting = False
            if failed:
                slot.executor = None
            self._cond.notify_all()
        if failed:
            _stop_pool(executor)

    def _hand(self, slot: _Slot, executor, job: _Job) -> None:
        try:
            inner = executor.submit(_call_in_worker, job.function, *job.args)
        except Exception as exc:  # the process died meanwhile (or was stopped)
            inner = concurrent.futures.Future()
            inner.set_exception(concurrent.futures.process.BrokenProcessPool(str(exc)))
        inner.add_done_callback(partial(self._finished, slot, executor, job))

    def _finished(self, slot: _Slot, executor, job: _Job, inner) -> None:
        died = not inner.cancelled() and isinstance(inner.exception(),
                                                      concurrent.futures.process.BrokenProcessPool)
        with self._cond:
            ours = slot.job is job and slot.executor is executor
            if ours:
                self._release(slot, replace=died)
                self._cond.notify_all()
        if not ours:
            return  # stopped by the pool (time limit, stop, shutdown): already resolved
        if died:
            _stop_pool(executor)
            _resolve(job.future, exception=JobStopped(
                "its worker process ended (out of memory?)"))
        elif inner.cancelled():
            _resolve(job.future, exception=concurrent.futures.CancelledError())
        elif inner.exception() is not None:
            _resolve(job.future, exception=inner.exception())
        else:
            _resolve(job.future, result=inner.result())


def _resolve(future: concurrent.futures.Future, *, result=None, exception=None) -> None:
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        if exception is not None:
            future.set_exception(exception)
        else:
            future.set_result(result)


_POOL_LOCK = threading.Lock()
_POOL: list[WorkerPool] = []
_SETTINGS: dict[str, int | None] = {"workers": None, "job_memory": None}


def configure(*, workers: int | None = None, job_memory: int | None = None) -> None:
    """The worker processes of this server (``calviz serve --workers N --job-memory GB``) — before the
    first job: the pool is made then.  ``None``: :func:`default_workers`, :func:`default_job_memory`."""
    if workers is not None and int(workers) < 1:
        raise ValueError(f"workers must be at least 1; got {workers}")
    if job_memory is not None and int(job_memory) < 1:
        raise ValueError(f"job_memory must be positive; got {job_memory}")
    with _POOL_LOCK:
        _SETTINGS.update(workers=workers, job_memory=job_memory)


def pool() -> WorkerPool:
    """The server's worker pool (made at first use, with :func:`configure`'s settings)."""
    with _POOL_LOCK:
        if not _POOL:
            workers = _SETTINGS["workers"] or default_workers()
            _POOL.append(WorkerPool(workers, _SETTINGS["job_memory"] or default_job_memory(workers)))
        return _POOL[0]


class SessionWorker:
    """One session's access to the server's worker pool (:class:`WorkerPool`): its jobs wait in its own
    queue and take turns with the other sessions'."""

    def submit(self, function, *args, limit: float = float("inf")) -> concurrent.futures.Future:
        """``function(*args)`` (module-level, picklable) in a worker process, stopped with
        :class:`JobStopped` after ``limit`` seconds of running."""
        if _STOPPING.is_set():
            raise ServerStopping("the server is stopping")
        return pool().submit(self, function, args, limit)

    def stop(self, future: concurrent.futures.Future) -> None:
        """Stop one job of this session (a waiting one never starts)."""
        pool().stop(future)

    def kill(self) -> None:
        """Stop every job of this session now, also mid-job (they fail with ``BrokenProcessPool``)."""
        pool().stop_session(self)


def _new_pool(initializer, job_memory: int) -> concurrent.futures.ProcessPoolExecutor:
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=1,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=initializer,
        initargs=(os.getpid(), job_memory),
    )


def _stop_pool(pool) -> None:
    # (read before shutdown clears them)
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()


def start_spare_worker() -> None:
    """Start one worker process now (the first page's start calls it) and load — on a first run compile
    — every kernel in it, beside the server's own warm-up: the first background jobs then wait for no
    process start after the debounce."""
    if not _STOPPING.is_set():
        pool().start_spare()


def shutdown_workers() -> None:
    """Stop every worker process (``calviz serve`` calls this when it stops), also mid-job; no job
    starts a process afterwards."""
    _STOPPING.set()
    with _POOL_LOCK:
        pools = list(_POOL)
    for each in pools:
        each.shutdown()
    release_shared_files()


def release_shared_files() -> None:
    """Delete the files the worker processes map the data from (the arrays stay mapped here): a stop that
    ends the process before the garbage collector would otherwise leave them to the resource tracker,
    which warns of leaked memory on stderr.  Takes no lock (a stopping server's last resort calls it)."""
    for release in list(_RELEASES.values()):
        release()


_WARM = threading.Event()  # set once this process has loaded (or compiled) its views' kernels
#: how the kernels became ready in this process: ``seconds`` it took and how many kernels were
#: ``compiled`` (numba's cache misses: a first run, or a changed calviz) rather than loaded from the cache
WARMED: dict = {}


def _kernels_compiled() -> int:
    """Kernel signatures compiled so far in this process (numba cache misses of calviz's kernels)."""
    import sys

    misses = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("calviz._kernels") or module is None:
            continue
        for obj in vars(module).values():
            stats = getattr(obj, "stats", None)
            if stats is not None and hasattr(stats, "cache_misses"):
                misses += sum(stats.cache_misses.values())
    return misses
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
            started = time.perf_counter()
            try:
                data = _warm_data()
                warm_kernels(foreground(data), data)
            except Exception:  # warming is an optimisation; a failure shows up in the views themselves
                logging.getLogger("calviz").exception("warming the kernels failed")
            finally:
                WARMED.update(seconds=time.perf_counter() - started, compiled=_kernels_compiled())
                _WARM.set()
            # then the kernels of the sorted views' answers (not waited for: a sorted view is built in a
            # worker process seconds after the first views)
            try:
                from calviz.app.precomputed import warm_answers

                warm_answers(_warm_data())
            except Exception:
                logging.getLogger("calviz").exception("warming the kernels failed")

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


_JOB_MEMORY: list[int] = []  # (a worker's) the memory limit of its jobs, for the message


def _exit_with_parent(parent: int) -> None:
    """A worker whose server died (killed, so it could not stop its pool) is re-parented: exit then,
    instead of lingering — and finishing a stale job — forever."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(0)


def _warm_worker(server: int, job_memory: int | None = None) -> None:
    """Import the engine in a new worker (loading numba's cached kernels) before its first job, limit
    the private memory of its jobs to ``job_memory`` bytes (``RLIMIT_DATA``: an allocation beyond it
    fails with ``MemoryError``, which stops the job, not the machine; the shared data is not counted),
    and tie the worker's life to the server's (process ``server``): on Linux the kernel kills it when
    the server dies (even mid-way through a kernel, which holds the GIL: a watching thread could not
    run then); elsewhere a thread watches the parent.  A server that died while this worker was
    starting (before the death signal was asked for) is noticed at once."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != server:
        os._exit(0)
    # a worker never handles Ctrl+C itself: the server stops it (the terminal sends SIGINT to the group)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(
        target=_exit_with_parent, args=(server,), name="calviz-parent-watch", daemon=True
    ).start()
    if job_memory is not None:
        _JOB_MEMORY.append(int(job_memory))
        with contextlib.suppress(ImportError, ValueError, OSError):
            import resource

            _, hard = resource.getrlimit(resource.RLIMIT_DATA)
            limit = job_memory + _baseline_memory()
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)
            resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    import calviz.analysis  # noqa: F401  (imports every engine module)


def _baseline_memory() -> int:
    """Bytes of private memory this process holds before its first job, with room for the engine's
    imports (the limit is on the job, not on Python itself)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024 + (512 << 20)
    return 1 << 30


def _warm_spare(server: int, job_memory: int | None = None) -> None:
    """A spare worker's start: :func:`_warm_worker`, then every kernel loaded (or compiled)."""
    _warm_worker(server, job_memory)
    try:
        warm_kernels()
        from calviz.app.precomputed import warm_answers  # (the sorted views' builds)

        warm_answers(_warm_data())
    except Exception:  # warming is an optimisation; a failure shows up in the views themselves
        logging.getLogger("calviz").exception("warming the kernels failed")


def _memory_message() -> str:
    limit = f"{_JOB_MEMORY[0] / 2**30:.1f} GB" if _JOB_MEMORY else "its limit"
    return (f"needed more memory than a job may use ({limit}); choose a subsample (the n control) "
            "or start the server with a larger --job-memory")


def _call_in_worker(function, *args):
    """(in a worker) One job: a ``MemoryError`` (the job's memory limit) stops it with a message."""
    try:
        return function(*args)
    except MemoryError:
        raise JobStopped(_memory_message()) from None


def _compute_in_worker(view, probs, labels, confidence_form, options, weights=None):
    data = CalibrationData(probs, labels, confidence_form, weights=weights)
    result, seconds, error = run_view(view, data, options)
    if result is None and error is not None and f"{view} failed: MemoryError" in error:
        raise JobStopped(_memory_message())  # (run_view turns every exception into a message)
    return result, seconds, error


def _run_remote(view, data, options, *, worker: SessionWorker, on_submit=None, timeout=None):
    """:func:`calviz.analysis.run_view` in a worker process, on ``data``'s arrays shared (never pickled:
    :func:`_shared`); raises :class:`JobStopped` after ``timeout`` seconds of running."""
    future = worker.submit(_compute_in_worker, view, _shared(data.probs), _shared(data.labels),
                           data.confidence_form, options,
                           None if getattr(data, "weights", None) is None else _shared(data.weights),
                           limit=float("inf") if timeout is None else timeout)
    if on_submit is not None:
        on_submit(future)
    return future.result()
