"""Shared fixtures: headless Chromium (Playwright) and a served calviz dashboard in a subprocess."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # (hypothesis is a test dependency; without it only its tests fail to import)
    settings = None
else:
    # Every property test draws the same examples in every run (derandomized, from the test's own name): a
    # run fails only on a change of the code, never on an example drawn by chance, and a failure re-runs
    # as it failed.  No wall-clock deadline and no "too slow" health check: on a loaded machine an example
    # or its generation takes longer, which says nothing about the code.  Each test's own @settings keeps
    # its number of examples.
    settings.register_profile(
        "calviz", derandomize=True, database=None, deadline=None, print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    settings.load_profile("calviz")

REPO = Path(__file__).resolve().parents[1]
#: screenshots and failure pictures of the browser tests (git-ignored; CI keeps the folder)
ARTIFACTS = Path(os.environ.get("CALVIZ_ARTIFACTS") or REPO / "artifacts")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


#: the cache fill's work (numba's cache of calviz's kernels: calviz/_kernels/__pycache__) as jobs, which
#: each of the fill's processes takes in turn (a counter file in ``$CALVIZ_FILL_LOCKS``) until none is left,
#: so that the processes end together whatever each job costs (with a fixed share each, the process of the
#: public estimators ran alone for the last third of the fill); ``python -c COMPILE_ONCE + FILL_JOBS``.
#: The jobs:
#:
#: * every dashboard view on :func:`calviz.app.workers.warm_kernels`' 4-class data;
#: * the public estimators that no view runs (rintce, the score decomposition's bootstrap, ...) and
#:   adaptive_tcal's sequential rule, in memory on binary and 3-class data with their defaults and a few
#:   options, as the API, fuzz and option tests call them;
#: * calviz.dask's partition kernels (the LocalCluster's two worker processes would otherwise both compile
#:   each of them at once, as both get partitions of the same graph): every driver on binary and 3-class
#:   data with empty partitions, on dask's synchronous scheduler, also reading Parquet folders and
#:   DataFrames (their columns reach the kernels as read-only arrays, and labels as the column's dtype:
#:   numba's signatures of their own).
#:
#: A call that refuses its input (an option a target does not allow) only fails: the kernels are compiled
#: per argument type, not per size.
FILL_JOBS = """
import fcntl
import functools
import os
import tempfile
import warnings

import numpy as np

import calviz
from calviz.analysis import COMPUTE, AnalysisOptions

warnings.simplefilter("ignore")  # (20 resamples cannot reject, a refused option, ...: nobody reads them)
rng = np.random.default_rng(0)
p = rng.uniform(0.02, 0.98, size=240)
probs = rng.dirichlet(np.ones(3), size=240)
DATA = [((rng.random(p.size) < p).astype(np.int64), p),
        ((probs.cumsum(axis=1) < rng.random((p.size, 1))).sum(axis=1).clip(0, 2).astype(np.int64), probs)]
PUBLIC = {"kumar_debiased_ece": {}, "ace": {}, "tcal": {}, "adaptive_tcal": {"seed": 0},
          "split_tcal": {"n_permutations": 99, "seed": 0}, "classical_tests": {}, "smce_witness": {},
          "lower_dce": {"grid_step": 0.01}, "rintce": {"width": 0.1}, "sintce": {}, "laplace_kce": {},
          "binned_ece_with_width": {}, "distance_bounds": {"grid_step": 0.01, "n_resamples": 5, "seed": 0},
          "smce_test": {"eps0": 0.01, "eps1": 0.3}, "smooth_ece": {},
          "smooth_reliability": {"n_resamples": 10, "grid_size": 51, "seed": 0},
          "corp_reliability": {"n_resamples": 20, "seed": 0},
          "score_decomposition": {"n_resamples": 20, "seed": 0},
          "murphy_decomposition": {}, "ici": {}, "top_label_ece": {}, "recalibrate": {}}
DASK_ESTIMATORS = ("binned_ece", "debiased_ece", "unbiased_ece", "mce", "reliability", "ece_interval",
                   "laplace_kce", "smce", "sintce", "lower_dce")
DASK_TARGETS = [[{}], [{}, {"target": "classwise", "class_index": 1}, {"target": "full"}, {"target": "top1"}]]


def run(f, *args, **kwargs):
    try:
        f(*args, **kwargs)
    except Exception:
        pass


def view(name):
    from calviz.app.workers import warm_kernels

    warm_kernels([name])


def public(kind, name):
    y, z = DATA[kind]
    f = getattr(calviz, name)
    run(getattr(f, name, f), y, z, **PUBLIC[name])


def sequential_targets(kind):
    y, z = DATA[kind]
    for target in ("top1", "classwise", "full"):
        run(calviz.adaptive_tcal, y, z, target=target, seed=0)


@functools.cache
def dask_data(kind):
    import dask
    import dask.array as da

    dask.config.set(scheduler="synchronous")
    chunks = (0, 1, 150, 0, 240, 9)
    rng = np.random.default_rng(0)
    p = rng.random(sum(chunks))
    probs = rng.dirichlet(np.ones(3), size=sum(chunks))
    data = [((rng.random(p.size) < p).astype(np.int64), p),
            ((probs.cumsum(axis=1) < rng.random((p.size, 1))).sum(axis=1).clip(0, 2).astype(np.int64), probs)]
    y, z = data[kind]
    return y, z, da.from_array(y, chunks=(chunks,)), da.from_array(z, chunks=(chunks,) + z.shape[1:])


def dask_drivers(kind, target):
    import calviz.dask as cdask

    _, _, Y, Z = dask_data(kind)
    kwargs = DASK_TARGETS[kind][target]
    for name in DASK_ESTIMATORS:
        run(getattr(cdask, name), Y, Z, **kwargs)
    for resampling in ("analytic", "threshold", "y_only"):
        run(cdask.adaptive_tcal, Y, Z, resampling=resampling, n_resamples=20, **kwargs)
    run(cdask.adaptive_tcal, Y, Z, resampling="analytic", max_bins=64, **kwargs)
    run(cdask.multiscale_debiased_ece, Y, Z, exponents=range(1, 5), **kwargs)
    if target == 0:
        run(cdask.binned_ece, Y, Z, p=2)
        run(cdask.ece_interval, Y, Z, top_k=2)


def dask_view(kind, name):
    import calviz.dask as cdask

    _, _, Y, Z = dask_data(kind)
    run(cdask.compute_view, name, cdask.from_dask(Y, Z), AnalysisOptions(resampling="y_only", n_resamples=20))


def dask_sources(kind):
    import dask.dataframe as dd
    import pandas as pd

    import calviz.dask as cdask

    y, z, _, _ = dask_data(kind)
    columns = {"y_prob": z} if z.ndim == 1 else {f"p_{k}": z[:, k] for k in range(z.shape[1])}
    frame = pd.DataFrame({"y_true": y, **columns})
    with tempfile.TemporaryDirectory() as path:
        for i, (start, stop) in enumerate(zip((0, 150), (150, len(y)))):
            frame.iloc[start:stop].to_parquet(os.path.join(path, f"part.{i}.parquet"), index=False)
        for source in (path, dd.from_pandas(frame, npartitions=3),
                       dd.from_pandas(frame.astype({"y_true": float}), npartitions=3)):
            for name in ("binned_ece", "ece_interval", "reliability"):
                run(getattr(cdask, name), source)
            run(cdask.ece_interval, source, top_k=2)
            run(cdask.adaptive_tcal, source, resampling="analytic")


# (the longer jobs first: the last ones each process takes are short)
JOBS = ([functools.partial(dask_drivers, kind, target) for kind in (0, 1)
         for target in range(len(DASK_TARGETS[kind]))]
        + [functools.partial(view, name) for name in sorted(COMPUTE)]
        + [functools.partial(sequential_targets, kind) for kind in (0, 1)]
        + [functools.partial(public, kind, name) for kind in (0, 1) for name in PUBLIC]
        + [functools.partial(dask_sources, kind) for kind in (0, 1)]
        + [functools.partial(dask_view, kind, name) for kind in (0, 1) for name in sorted(COMPUTE)])


def next_job():
    with open(os.path.join(os.environ["CALVIZ_FILL_LOCKS"], "next-job"), "a+") as counter:
        fcntl.flock(counter, fcntl.LOCK_EX)  # (released when the file is closed)
        counter.seek(0)
        job = int(counter.read() or 0)
        counter.truncate(0)
        counter.write(str(job + 1))
    return job


while (job := next_job()) < len(JOBS):
    JOBS[job]()
"""

#: prepended to each cache-filling script: one kernel (a jitted function, every signature of it: numba keeps
#: them in one index file) is compiled by one fill process at a time, under a lock file of its own.  Two
#: processes that reach the same kernel at once (any job may run in any process: a kernel shared by two
#: views, or by a view and calviz.dask's in-memory part) would compile it twice, and the second index
#: written would lose the first one's entry (numba reads, extends and rewrites the index without a lock);
#: now the second waits, then loads it.  The
#: lock file is taken inside numba's own (per-process) compiler lock, as numba takes it to compile; numba's
#: own helpers, which are not cached, are compiled by each process that needs them, without a lock.
COMPILE_ONCE = """
import fcntl as _fcntl, hashlib as _hashlib, os as _os
from numba.core import sigutils as _sigutils
from numba.core.caching import NullCache as _NullCache
from numba.core.compiler_lock import global_compiler_lock as _compiler_lock
from numba.core.dispatcher import Dispatcher as _Dispatcher

_LOCKS = _os.environ["CALVIZ_FILL_LOCKS"]
_held, _compile = set(), _Dispatcher.compile


def _compile_once(self, sig):
    key = f"{self.py_func.__module__}.{self.py_func.__qualname__}"
    with _compiler_lock:
        if (isinstance(self._cache, _NullCache) or key in _held
                or tuple(_sigutils.normalize_signature(sig)[0]) in self.overloads):
            return _compile(self, sig)
        path = _os.path.join(_LOCKS, _hashlib.sha1(key.encode()).hexdigest())
        with open(path, "wb") as lock:  # (closing it releases the lock)
            _fcntl.flock(lock, _fcntl.LOCK_EX)
            _held.add(key)
            try:
                return _compile(self, sig)
            finally:
                _held.discard(key)


_Dispatcher.compile = _compile_once
"""


@contextlib.contextmanager
def cache_fill(env: Mapping[str, str],
               processes: int = 3) -> Iterator[tuple[list[list[str]], dict[str, str]]]:
    """The cache fill's processes (:data:`FILL_JOBS`): their command lines, and ``env`` with
    ``CALVIZ_FILL_LOCKS``, a new empty folder for their lock files and job counter (:data:`COMPILE_ONCE`)
    — one per fill: a counter left by an earlier fill says that every job is done — removed on exit."""
    import tempfile

    locks = tempfile.mkdtemp(prefix="calviz-fill-locks-")
    try:
        commands = [[sys.executable, "-c", COMPILE_ONCE + FILL_JOBS]] * processes
        yield commands, {**env, "CALVIZ_FILL_LOCKS": locks}
    finally:
        shutil.rmtree(locks, ignore_errors=True)


def pytest_configure(config):
    """Under ``-n N`` (the controller, before its workers start): start filling numba's cache of the
    kernels (:func:`cache_fill`).
    A fresh checkout has no cache, and each kernel's first use compiles it — about 84 CPU-s for the
    dashboard's views — in every process that gets there before the cache is written: both test workers,
    the served apps' worker processes and the Dask workers, all at the start of the run.  With the cache
    filled this costs a few seconds (loading it); a failure only loses the saving.  The workers collect
    the tests meanwhile (no kernel runs while collecting): the tests are handed out once the fill has
    ended (:func:`pytest_xdist_node_collection_finished`)."""
    if (hasattr(config, "workerinput") or not config.getoption("numprocesses", default=None)
            or config.getoption("collectonly")):
        return
    _compile_package()
    fill = config._calviz_fill = contextlib.ExitStack()  # (closed by _finish_cache_fill)
    commands, env = fill.enter_context(cache_fill(_serve_env(REPO)))
    config._calviz_cache_fill = [
        subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for command in commands]
    _rewrite_test_modules(config)  # (while the fill runs: the workers start when this hook returns)


def _compile_package() -> None:
    """Write calviz's bytecode (``__pycache__``, git-ignored) once, before the workers and the cache fill
    start.  With ``PYTHONDONTWRITEBYTECODE`` set (as in many CI images) no process writes it, and every
    process the run starts — the workers, each served app and its worker processes, each kernel and
    command, and test_imports' 107 first imports — compiles calviz from source: about 0.1 CPU-s per
    module imported (test_imports: 23 CPU-s instead of 13).  This costs 0.6 CPU-s; a checkout that cannot
    be written only loses the saving."""
    import compileall

    compileall.compile_dir(str(REPO / "calviz"), quiet=2)


def _rewrite_test_modules(config) -> None:
    """Write the test modules' assertion-rewritten bytecode (``tests/__pycache__``, git-ignored) once, before
    the workers start: each worker imports every test module to collect it, and pytest rewrites a module's
    asserts and compiles it unless it finds that bytecode.  With ``PYTHONDONTWRITEBYTECODE`` set no process
    writes it, and without it both workers of a fresh checkout rewrite every module at the same time
    before either has written it: each worker did the whole rewrite.  (pytest's own functions, which are
    not public API: any failure only loses the saving.)"""
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        for source in sorted(Path(__file__).parent.glob("*.py")):
            if source.name != "conftest.py" and not source.name.startswith("test_"):
                continue
            folder = rewrite.get_cache_dir(source)
            pyc = folder / (source.stem + rewrite.PYC_TAIL)
            if rewrite._read_pyc(source, pyc) is None and rewrite.try_makedirs(folder):
                source_stat, code = rewrite._rewrite_test(source, config)
                rewrite._write_pyc(state, code, source_stat, pyc)
    except Exception:  # noqa: BLE001 - (another pytest, --assert=plain, a read-only checkout)
        return


def _finish_cache_fill(config, *, timeout: float) -> None:
    """Wait for the cache-filling processes (killed after ``timeout`` seconds: a hang guard)."""
    processes = getattr(config, "_calviz_cache_fill", None) or []
    config._calviz_cache_fill = []
    for each in processes:
        try:
            each.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            each.kill()
            each.wait()
    fill = getattr(config, "_calviz_fill", None)
    if fill is not None:  # (the lock folder)
        config._calviz_fill = None
        fill.close()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """(The controller, as each worker reports its collection, before any test is handed out.)  The
    tests start once numba's cache is filled: the collection overlapped the fill."""
    _finish_cache_fill(node.config, timeout=900)


def pytest_unconfigure(config):
    _finish_cache_fill(config, timeout=0)  # (a run ended before any worker collected: no process left)


#: fixtures of module scope or wider that every xdist worker may hold a copy of: cheap (a path, a folder, a
#: factory) or, for Chromium, a launch of about a second; any other fixture of module scope or wider ties
#: its tests together (:func:`pytest_collection_modifyitems`)
_CHEAP_SHARED_FIXTURES = {"dataset_cache", "artifacts_dir", "screenshots", "chromium_browser",
                          "fixed_probability_classifier", "tmp_path_factory", "worker_id", "testrun_uid"}
#: the session's one LocalCluster: every test on it runs in the same worker, so the run starts one
_CLUSTER_GROUP = "local-cluster"
#: the session's one served dashboard (:func:`served_app`): its tests, of several modules, run in one worker
_SERVED_APP_GROUP = "served-app"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under ``--dist loadgroup`` (pyproject's addopts; without ``-n`` it does nothing), the tests that
    share an expensive fixture — a served app, a Jupyter server, a Dask cluster, a fitted model or a
    written file of module scope or wider — run in one worker, so each fixture is set up once per run
    instead of once per worker; every other test is balanced one by one between the workers (the
    default ``--dist load`` splits a module's tests between workers, and each worker starts its own
    servers and cluster)."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        if "local_cluster" in item.fixturenames:
            item.add_marker(pytest.mark.xdist_group(_CLUSTER_GROUP))
            continue
        if "served_app" in item.fixturenames:
            item.add_marker(pytest.mark.xdist_group(_SERVED_APP_GROUP))
            continue
        for name in item.fixturenames:
            defs = info.name2fixturedefs.get(name)
            if name in _CHEAP_SHARED_FIXTURES or not defs:
                continue
            if defs[-1].scope in ("module", "package", "session"):
                item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
                break
    if hasattr(config, "workerinput"):
        _long_tests_first(items)


#: seconds of the long tests that run alone, by test id (a committed table of a full run's durations)
SLOW_TESTS = Path(__file__).with_name("slow_tests.txt")


def _long_tests_first(items) -> None:
    """(In each xdist worker, whose collection order the controller schedules by.)  ``--dist loadgroup``
    hands out the groups and single tests by their number of tests (most first; a single test and a group
    of one test alike), and those of one size in collection order, each worker taking the next when it is
    almost out of work: a long test late in the order ends the run on one worker while the other waits.
    The tests of :data:`SLOW_TESTS` go first among their size, longest first (a group of one test — a
    server of its own for one test — too; a bigger group is placed by its first test); every other test
    keeps its place (a stable sort, the same in every worker)."""
    seconds = {}
    for line in SLOW_TESTS.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            value, nodeid = line.split(None, 1)
            seconds[nodeid.strip()] = float(value)
    items.sort(key=lambda item: -seconds.get(item.nodeid, 0.0))


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def _missing(reason: str):
    """Skip locally; in CI (CI=true) a missing browser is a failure, never a silent skip."""
    if _in_ci():
        pytest.fail(f"{reason} (CI=true: browser tests must run)")
    pytest.skip(reason)


#: ms between two evaluations of a ``wait_for_function`` predicate that names no polling of its own
#: (Playwright's default evaluates it at every animation frame: 60 times a second, each a walk over
#: every Bokeh model of the page, for the whole wait — on a served dashboard about a fifth of a core taken
#: from the server the page waits on).  A wait on a state that may last less than this passes
#: ``polling="raf"``.
WAIT_POLLING_MS = 100


@pytest.fixture(scope="session")
def chromium_browser():
    """A headless Chromium driven by Playwright's sync API (Debian's /usr/bin/chromium); its pages'
    ``wait_for_function`` polls every :data:`WAIT_POLLING_MS` unless told otherwise."""
    executable = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if not executable:
        _missing("chromium is not installed")
    try:
        from playwright.sync_api import Frame, Page, sync_playwright
    except ImportError:
        _missing("playwright is not installed")
    patch = pytest.MonkeyPatch()
    for cls in (Page, Frame):
        patch.setattr(cls, "wait_for_function", _polling_every(cls.wait_for_function, WAIT_POLLING_MS))
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
            try:
                yield browser
            finally:
                browser.close()
    finally:
        patch.undo()


def _polling_every(wait_for_function, interval_ms: float):
    """``wait_for_function`` with ``polling=interval_ms`` when the call names none."""
    import functools

    @functools.wraps(wait_for_function)
    def wait(self, expression, *, arg=None, polling=None, timeout=None):
        return wait_for_function(self, expression, arg=arg, timeout=timeout,
                                 polling=interval_ms if polling is None else polling)

    return wait


@pytest.fixture(scope="session", autouse=True)
def dataset_cache(tmp_path_factory):
    """One cache of the embedded datasets (``$CALVIZ_CACHE_DIR``) for the whole run, shared by every test
    process (pytest-xdist's workers too) and every server, kernel and command they start: each model is
    trained once per run instead of once per served app, notebook or command, and never in the user's
    own cache.  Its writes are atomic (a file is replaced whole), so concurrent first uses only repeat
    work.  Tests of the cache itself point ``CALVIZ_CACHE_DIR`` elsewhere."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # (the run's folder, above this worker's own)
    path = root / "calviz-datasets"
    patch = pytest.MonkeyPatch()
    patch.setenv("CALVIZ_CACHE_DIR", str(path))
    yield path
    patch.undo()


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """The folder for screenshots: ``artifacts/`` in the checkout (git-ignored), or ``$CALVIZ_ARTIFACTS``."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


#: the ports :func:`free_port` handed out in this process
_PORTS_GIVEN: set[int] = set()


def free_port() -> int:
    """A free loopback port, never one handed out before in this process: a server launched but not yet
    listening leaves its port free, and the next call could otherwise return it again."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in _PORTS_GIVEN:
            _PORTS_GIVEN.add(port)
            return port


def _serve_env(cache_dir: Path) -> dict:
    """The server's environment: this working tree importable; the run's dataset cache (inherited:
    :func:`dataset_cache`); thread stacks on SIGUSR1 (:data:`STACK_DUMPS`)."""
    env = dict(os.environ)
    path = [str(REPO), str(STACK_DUMPS), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(path).rstrip(os.pathsep)
    return env


#: a folder whose ``sitecustomize`` makes SIGUSR1 write every thread's stack to the server's log
STACK_DUMPS = Path(__file__).parent / "stack_dumps"


def thread_stacks(proc, *, settle: float = 1.0, limit: float = 15.0) -> str:
    """Every thread's stack of the server ``proc`` (of :func:`launch_server`) and of its child processes,
    as they write them to the server's log on SIGUSR1 (:data:`STACK_DUMPS`): the log's new text once it
    has not grown for ``settle`` seconds (at most ``limit`` seconds)."""
    import signal

    log = Path(proc._calviz_log.name)
    start = log.stat().st_size
    pids = [proc.pid]
    for pid in pids:  # (the list grows: the children's children are visited too)
        for task in Path(f"/proc/{pid}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                pids.extend(int(child) for child in task.read_text().split())
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGUSR1)
    size, still, waited = start, 0.0, 0.0
    while still < settle and waited < limit:
        time.sleep(0.1)
        waited += 0.1
        now = log.stat().st_size
        still = still + 0.1 if now == size else 0.0
        size = now
    with open(log, "rb") as f:
        f.seek(start)
        return f"processes {pids}:\n" + f.read().decode(errors="replace")[-30_000:]


@contextlib.contextmanager
def panel_server_in_thread(new_session, *, prepare=None):
    """A Panel server of ``new_session`` (a function building a session's page) on a free loopback port, run
    by a thread of this process; yields ``(url, prepared)``: ``prepare(server)``'s result (run before the
    server starts), or None.  The server is stopped on exit."""
    import asyncio
    import threading

    import panel as pn

    port, ready, held = free_port(), threading.Event(), {}

    def run():
        asyncio.set_event_loop(asyncio.new_event_loop())
        server = pn.serve({"/": new_session}, port=port, address="127.0.0.1", show=False, start=False,
                          websocket_origin=[f"127.0.0.1:{port}"], verbose=False)
        held["prepared"] = None if prepare is None else prepare(server)
        held["server"] = server
        server.start()
        ready.set()
        server.io_loop.start()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(300)  # a hang guard, not a speed requirement
    try:
        yield f"http://127.0.0.1:{port}/", held["prepared"]
    finally:
        server = held["server"]
        server.io_loop.add_callback(server.io_loop.stop)
        thread.join(30)


def _cli_can_serve() -> bool:
    try:
        from calviz import cli
    except ImportError:
        return False
    return hasattr(cli, "cmd_serve")


def start_server(cache_dir: Path, *, timeout: float = 300.0, extra_args: tuple[str, ...] = ()):
    """Start ``calviz serve --no-show --port N`` (or ``panel serve apps/calviz_app.py`` while the CLI
    cannot serve) in a subprocess; return ``(process, url)`` once the page answers HTTP 200."""
    proc, url = launch_server(cache_dir, extra_args=extra_args)
    wait_for_server(proc, url, timeout=timeout)
    return proc, url


def wait_for_server(proc, url: str, *, timeout: float = 300.0) -> None:
    """Wait until a server of :func:`launch_server` answers HTTP 200 (:func:`wait_for_http`)."""
    wait_for_http(proc, url, proc._calviz_log.name, timeout=timeout, name="server")


def launch_server(cache_dir: Path, *, extra_args: tuple[str, ...] = ()):
    """Start a server as :func:`start_server` does, without waiting for it: ``(process, url)``.  Servers
    launched together start side by side (their imports overlap what the caller does meanwhile)."""
    port = free_port()
    if _cli_can_serve():
        cmd = [sys.executable, "-m", "calviz", "serve", "--no-show", "--port", str(port), *extra_args]
        url = f"http://127.0.0.1:{port}/"
    else:
        cmd = [
            sys.executable,
            "-m",
            "panel",
            "serve",
            str(REPO / "apps" / "calviz_app.py"),
            "--port",
            str(port),
            "--address",
            "127.0.0.1",
            "--allow-websocket-origin",
            f"127.0.0.1:{port}",
        ]
        url = f"http://127.0.0.1:{port}/calviz_app"
    log = open(cache_dir / "server.log", "wb")  # noqa: SIM115 - closed by stop_server
    proc = subprocess.Popen(cmd, cwd=REPO, env=_serve_env(cache_dir), stdout=log, stderr=subprocess.STDOUT)
    proc._calviz_log = log  # type: ignore[attr-defined]
    return proc, url


def wait_for_http(proc, url: str, log_path, *, timeout: float, name: str,
                  request_timeout: float | None = None) -> None:
    """Wait until ``url`` answers HTTP 200; a process that exits first, or a timeout, stops the process
    (:func:`stop_server`) and raises with the end of its log."""
    started = time.monotonic()
    while True:
        if proc.poll() is not None:
            stop_server(proc)
            raise RuntimeError(f"{name} exited early:\n{Path(log_path).read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=request_timeout or timeout) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() - started > timeout:
            stop_server(proc)
            raise RuntimeError(f"{name} did not answer within {timeout:.0f} s")
        time.sleep(0.3)


def stop_server(proc) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=20)
    log = getattr(proc, "_calviz_log", None)
    if log is not None:
        log.close()


@pytest.fixture(scope="session")
def served_app(tmp_path_factory):
    """URL of a calviz dashboard served in a subprocess, shared by every module of the run that uses it
    (killed at the end): each browser page is a session of its own, with its own data and widgets, so
    the modules need no server of their own — a start (imports, the kernels loaded, the worker
    processes, the first session's views) cost 25-45 s per module at CI's load.  Its tests run in one
    xdist worker (:data:`_SERVED_APP_GROUP`), so the run starts one server."""
    cache_dir = tmp_path_factory.mktemp("calviz-serve")
    proc, url = start_server(cache_dir)
    _SERVED_APP.append(proc)
    try:
        yield url
    finally:
        _SERVED_APP.remove(proc)
        stop_server(proc)


#: the process of :func:`served_app` while it runs
_SERVED_APP: list = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test of the served app reports the server's and its workers' thread stacks (a wait that
    ended in a timeout shows where the session was)."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.when == "call" and _SERVED_APP and "served_app" in item.fixturenames:
        report.sections.append(("the served app's threads", thread_stacks(_SERVED_APP[-1])))


@pytest.fixture(scope="session")
def local_cluster():
    """A LocalCluster of 2 single-threaded worker processes (1 GB each) on 127.0.0.1, without a dashboard
    (the scheduler's HTTP server, always started, on a free loopback port), shared by every module of a
    test process that uses Dask: starting one (a scheduler and two worker processes that import the
    engine) cost 8.5-11 CPU-s at load 23, a new client to a warm one 0.1 CPU-s."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       memory_limit="1GB", scheduler_port=0, dashboard_address="127.0.0.1:0",
                                       scheduler_kwargs={"dashboard": False})
    yield cluster
    cluster.close()


@pytest.fixture(scope="module")
def local_cluster_client(local_cluster):
    """A ``distributed.Client`` on :func:`local_cluster`; it is the default client (``dask.compute`` uses
    it) while the module runs, and dask's threads are again afterwards."""
    import distributed

    with distributed.Client(local_cluster) as c:
        yield c


def count_hold_depth(app, monkeypatch) -> list:
    """Wrap ``app._hold`` so that ``depth[0]`` is how many holds are open while a change runs: the tests
    that check a change of Bokeh models leaves inside the app's hold (as one patch) read it in their
    ``on_change`` callbacks."""
    import contextlib

    real, depth = app._hold, [0]

    @contextlib.contextmanager
    def hold():
        depth[0] += 1
        try:
            with real():
                yield
        finally:
            depth[0] -= 1

    monkeypatch.setattr(app, "_hold", hold)
    return depth


@pytest.fixture(scope="session")
def fixed_probability_classifier():
    """Factory of a fitted scikit-learn classifier whose input X *is* the (n, K) probability matrix:
    predict_proba returns X, decision_function its log-odds (binary: log p₁ − log p₀, so that Platt's
    sigmoid is fitted on the log-odds as Platt 1999 does; K > 2: log p_k, one-vs-rest) — the scikit-learn
    reference of calviz's Platt, isotonic and temperature maps."""
    import numpy as np
    from sklearn.base import BaseEstimator, ClassifierMixin

    from calviz._recalibration import LOG_FLOOR

    def make(n_classes: int):
        class FixedProbabilities(ClassifierMixin, BaseEstimator):
            def fit(self, X, y=None):
                self.classes_ = np.arange(n_classes)
                return self

            def predict_proba(self, X):
                return np.asarray(X, dtype=np.float64)

            def predict(self, X):
                return np.asarray(X).argmax(axis=1)

            def decision_function(self, X):
                logp = np.log(np.clip(np.asarray(X, dtype=np.float64), LOG_FLOOR, 1.0))
                return logp[:, 1] - logp[:, 0] if n_classes == 2 else logp

        return FixedProbabilities().fit(None)

    return make
