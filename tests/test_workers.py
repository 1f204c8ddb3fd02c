"""The dashboard's worker pool (calviz.app.workers): a bounded number of processes shared fairly by the
sessions, jobs stopped by their time and memory limits with a message, the data shared (never pickled).

Every wait here is on an event (a job's future, a FIFO a job blocks on), never on the clock."""

from __future__ import annotations

import concurrent.futures
import os
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest

from calviz._data import as_calibration_data
from calviz.analysis import AnalysisOptions, run_view
from calviz.app import workers
from calviz.app.store import ResultStore

WAIT_S = 300  # generous: a worker process starts (imports the engine) on a loaded machine in seconds


def _block_on(fifo: str) -> str:
    """(in a worker) Wait until the test writes to ``fifo``: a job that runs until released."""
    with open(fifo) as file:
        return file.read()


def _mark(path: str, value: str) -> str:
    with open(path, "a") as file:
        file.write(value + "\n")
    return value


def _allocate(nbytes: int) -> int:
    return int(np.ones(nbytes // 8).nbytes)


@pytest.fixture(scope="module")
def one_process():
    """A pool of one worker process with a small memory limit (shared by this module's pool tests)."""
    pool = workers.WorkerPool(1, 256 << 20)
    yield pool
    pool.shutdown()


def test_sessions_take_turns_and_a_cancelled_job_never_starts(one_process, tmp_path):
    fifo, log = str(tmp_path / "release"), str(tmp_path / "log")
    os.mkfifo(fifo)
    a, b = object(), object()
    first = one_process.submit(a, _block_on, (fifo,), 60.0)
    later = [one_process.submit(a, _mark, (log, "a2"), 60.0), one_process.submit(a, _mark, (log, "a3"), 60.0),
             one_process.submit(b, _mark, (log, "b1"), 60.0), one_process.submit(b, _mark, (log, "b2"), 60.0)]
    cancelled = one_process.submit(b, _mark, (log, "never"), 60.0)
    assert cancelled.cancel()  # superseded while it waits
    with open(fifo, "w") as file:  # releases the first job: the queued ones run, one at a time
        file.write("go")
    assert first.result(timeout=WAIT_S) == "go"
    concurrent.futures.wait(later, timeout=WAIT_S)
    assert [job.result() for job in later] == ["a2", "a3", "b1", "b2"]
    with open(log) as file:
        assert file.read().split() == ["b1", "a2", "b2", "a3"]  # b's jobs did not wait behind all of a's
    assert one_process.processes() == 1


def test_a_job_over_its_time_limit_is_stopped_and_the_next_one_runs(one_process, tmp_path):
    fifo = str(tmp_path / "never-released")
    os.mkfifo(fifo)
    session = object()
    stuck = one_process.submit(session, _block_on, (fifo,), 0.5)
    after = one_process.submit(session, os.getpid, (), 60.0)
    with pytest.raises(workers.JobStopped, match=r"took longer than 0\.5 s"):
        stuck.result(timeout=WAIT_S)
    assert after.result(timeout=WAIT_S) > 0  # on a new process


def test_a_job_over_its_memory_limit_is_stopped_with_a_message(one_process):
    session = object()
    with pytest.raises(workers.JobStopped, match="needed more memory than a job may use"):
        one_process.submit(session, _allocate, (4 << 30,), 60.0).result(timeout=WAIT_S)
    assert one_process.submit(session, _allocate, (8 << 20,), 60.0).result(timeout=WAIT_S) == 8 << 20


def test_the_pool_never_starts_more_processes_than_its_size_and_stops_one_sessions_jobs(tmp_path):
    pool = workers.WorkerPool(2, 1 << 30)
    try:
        fifos = [str(tmp_path / f"release-{i}") for i in range(4)]
        sessions = [object() for _ in fifos]
        for fifo in fifos:
            os.mkfifo(fifo)
        jobs = [pool.submit(session, _block_on, (fifo,), 60.0)
                for session, fifo in zip(sessions, fifos, strict=True)]
        assert pool.processes() <= 2
        pool.stop_session(sessions[0])  # waiting or running: it never completes
        with pytest.raises((concurrent.futures.CancelledError, concurrent.futures.process.BrokenProcessPool)):
            jobs[0].result(timeout=WAIT_S)
        for i in (1, 2, 3):
            with open(fifos[i], "w") as file:
                file.write(str(i))
            assert jobs[i].result(timeout=WAIT_S) == str(i)
            assert pool.processes() <= 2
    finally:
        pool.shutdown()


def test_a_session_never_waits_behind_another_sessions_queue(tmp_path, monkeypatch):
    """Two sessions of a server with two worker processes.  Session A (3 rows, every prediction 1.0 and
    every label 1: the worst case of the smooth band's resampling) holds one process with a job that runs
    until the test releases it, and its views' jobs queue behind that one (a session runs at most
    ``size // 2`` jobs at once).  Session B's views' jobs then all start and finish on the other process
    while A's job still runs: B waits neither for A's running job nor for A's queue.  Once released, A's
    queued jobs run too.  The order is read from the pool's own hand-outs, never from the clock."""
    fifo = str(tmp_path / "release")
    os.mkfifo(fifo)
    pool = workers.WorkerPool(2, 1 << 30)
    monkeypatch.setattr(workers, "_POOL", [pool])
    started: list[object] = []  # the session of each job, in the order the pool hands them to a process
    hand = pool._hand

    def recording(slot, executor, job):
        started.append(job.session)
        hand(slot, executor, job)

    monkeypatch.setattr(pool, "_hand", recording)
    rng = np.random.default_rng(5)
    degenerate = as_calibration_data([1, 1, 1], [1.0, 1.0, 1.0])
    p = rng.uniform(0.05, 0.95, 600)
    usual = as_calibration_data((rng.random(600) < p).astype(int), p)
    options = AnalysisOptions(resampling="y_only", n_resamples=20)
    # (no job time limit: a first run compiles the kernels in the job itself)
    a, b = (ResultStore(debounce=0.01, job_limit=float("inf")) for _ in range(2))
    try:
        held = pool.submit(a._worker, _block_on, (fifo,), 600.0)
        a.update(degenerate, options, start_now=True)
        a_jobs = dict(a.jobs)
        assert a_jobs, "session A has no background job"
        b.update(usual, options, start_now=True)
        assert b.jobs, "session B has no background job"
        b.wait(WAIT_S)  # B's jobs are done ...
        assert not held.done()  # ... while A's first job still runs
        assert not b.jobs and all(getattr(b, slot).error is None for slot in b.SLOTS), b.jobs
        assert dict(a.jobs) == a_jobs  # A's views still wait for their jobs
        assert started[0] is a._worker and started[1:] and all(s is b._worker for s in started[1:]), started
        n_before = len(started)
        with open(fifo, "w") as file:
            file.write("go")
        assert held.result(timeout=WAIT_S) == "go"
        a.wait(WAIT_S)
        assert not a.jobs
        assert len(started) > n_before and all(s is a._worker for s in started[n_before:])
        assert pool.processes() <= 2
    finally:
        a.close()
        b.close()
        pool.shutdown()


def test_jobs_read_the_data_through_shared_memory_never_a_pickle(monkeypatch):
    """Every payload sent to a worker process is small — the data's arrays (and the subsamples the
    views read) go by shared memory — and the results equal those computed in this process."""
    dumps = ForkingPickler.dumps.__func__
    sent: list[bytes] = []

    def recording(cls, obj, protocol=None):
        payload = dumps(cls, obj, protocol)
        sent.append(payload)
        return payload

    monkeypatch.setattr(ForkingPickler, "dumps", classmethod(recording))
    rng = np.random.default_rng(3)
    n = 300_000
    probs = rng.dirichlet(np.ones(4), size=n)
    labels = (probs.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1).clip(0, 3)
    data = workers.share_data(as_calibration_data(labels, probs))
    assert workers._block_of(data.probs) is not None and workers._block_of(data.labels) is not None
    options = AnalysisOptions(resampling="y_only", n_resamples=20)
    store = ResultStore(debounce=0.01, job_limit=float("inf"))  # (no time limit: a loaded machine)
    try:
        store.update(data, options, start_now=True)
        store.wait(WAIT_S)
        assert sent, "no job went to a worker process"
        assert max(map(len, sent)) < workers.SHARE_MIN_BYTES < probs.nbytes
        for slot, view in [("classical", "classical"), ("bootstrap", "bootstrap"),
                           ("tcal", "tcal_resampled")]:
            entry = getattr(store, slot)
            expected = run_view(view, data, options)[0]
            assert entry.result is not None, entry.error
            assert repr(entry.result) == repr(expected), slot
    finally:
        store.close()


def test_shared_data_is_one_copy_read_only_and_deleted_with_its_arrays():
    import gc

    rng = np.random.default_rng(4)
    data = workers.share_data(as_calibration_data(rng.integers(0, 2, 200_000), rng.random(200_000)))
    assert workers.share_data(data) is data  # already shared: not copied again
    assert not data.probs.flags.writeable
    path = workers._block_of(data.probs)[1]
    assert os.path.exists(path)
    small = as_calibration_data([0, 1], [0.2, 0.7])
    assert workers.share_data(small) is small  # a copy costs less than a mapping
    del data
    gc.collect()
    assert not os.path.exists(path)


def test_shared_multiclass_data_keep_the_top1_view_formed_while_validating():
    rng = np.random.default_rng(5)
    probs = rng.dirichlet(np.ones(4), size=100_000)
    labels = rng.integers(0, 4, 100_000)
    data = as_calibration_data(labels, probs)
    shared = workers.share_data(data)
    assert workers._block_of(shared.probs) is not None
    assert shared.top1() is data.top1()  # kept, not formed again
    conf, correct = shared.top1()
    np.testing.assert_array_equal(conf, probs.max(axis=1))
    np.testing.assert_array_equal(correct, (probs.argmax(axis=1) == labels).astype(np.float64))


def test_configure_refuses_a_pool_of_no_processes():
    with pytest.raises(ValueError, match="at least 1"):
        workers.configure(workers=0)
    assert 1 <= workers.default_workers() <= workers.MAX_DEFAULT_WORKERS
    assert workers.default_job_memory(2) >= workers.MIN_JOB_MEMORY


def test_job_threads_are_reused_and_a_waiting_job_never_holds_back_another():
    """A finished job's thread takes the next job (no thread is started for it); a job that waits does not
    delay one submitted after it (that one gets a thread of its own); every job's result reaches its
    future, an exception too."""
    import threading

    assert workers._in_thread(lambda: 5).result(timeout=WAIT_S) == 5
    idle = threading.Event()
    while workers._idle_job_threads == 0:  # (until the thread has counted itself idle, after its job)
        idle.wait(0.001)
    idle_threads = {t.ident for t in threading.enumerate() if t.name == "calviz-job"}
    assert workers._in_thread(threading.get_ident).result(timeout=WAIT_S) in idle_threads
    release = threading.Event()
    waiting = workers._in_thread(release.wait)  # (no timeout: set below)
    assert workers._in_thread(lambda: 7).result(timeout=WAIT_S) == 7  # (not behind the waiting job)
    assert not waiting.done()
    release.set()
    assert waiting.result(timeout=WAIT_S) is True
    failed = workers._in_thread(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failed.result(timeout=WAIT_S)
    assert [f.result(timeout=WAIT_S) for f in [workers._in_thread(lambda i=i: i * i) for i in range(20)]] == [
        i * i for i in range(20)]
