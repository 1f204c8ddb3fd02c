"""``calviz serve``: the dashboard on a Panel server, one fresh app per browser session.

The server listens on 127.0.0.1 unless an address is given; SIGTERM and Ctrl+C stop it, its worker
processes and a local Dask cluster within seconds (exit status 0).  The shared helpers (reading the
input, the weight column, the stop on signals) are the command line's (:mod:`calviz.cli`).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

__all__ = ["add_serve_parser", "cmd_serve", "session_factory", "websocket_origins", "free_port"]


def add_serve_parser(sub, formatter_class, add_file_options, add_weight_option) -> None:
    """Register the ``serve`` subcommand on the ``calviz`` subparsers."""
    from calviz.cli_monitor import add_time_options

    serve = sub.add_parser("serve", formatter_class=formatter_class,
                           help="open the interactive dashboard in a browser",
                           description="Serve the calviz dashboard (one fresh app per browser session).")
    serve.add_argument("file", nargs="?", help="predictions file (CSV, Parquet, NPZ, NPY) or a Parquet "
                                                "directory (analysed on Dask); default: the embedded dataset")
    serve.add_argument("--dataset", metavar="NAME", help="embedded dataset (`calviz datasets`)")
    serve.add_argument("--port", type=int, default=5006, help="port (0: any free port; default 5006)")
    serve.add_argument("--address", default="127.0.0.1",
                       help="interface to bind (default 127.0.0.1: only this machine can connect)")
    serve.add_argument("--show", dest="show", action="store_true", default=True,
                       help="open a browser tab (default)")
    serve.add_argument("--no-show", dest="show", action="store_false",
                       help="do not open a browser (by default the app opens in one)")
    serve.add_argument("--scheduler",
                       help="analyse FILE (Parquet file or directory) on Dask without loading it: a "
                            "scheduler address (tcp://host:8786) or 'local' (default for a directory)")
    serve.add_argument("--data-root", metavar="DIR",
                       help="offer a box that opens Parquet files or directories under DIR on Dask "
                            "(only with a loopback --address: it reads files on this machine)")
    serve.add_argument("--workers", type=int, metavar="N",
                       help="worker processes computing the sessions' background jobs, shared fairly by "
                            "every session (default: one per core, at most 8)")
    serve.add_argument("--job-memory", type=float, metavar="GB",
                       help="memory one background job may allocate besides the shared data; a job "
                            "needing more is stopped with a message (default: half of the machine's "
                            "memory shared by the workers, at least 1 GB)")
    add_file_options(serve)
    add_time_options(serve)
    add_weight_option(serve)
    serve.add_argument("--watch", action="store_true",
                       help="follow FILE (a log file, or a directory of Parquet files) as it grows: the "
                            "views refresh with the new rows (needs --time-column)")
    serve.add_argument("--watch-period", type=float, default=1.0, metavar="S",
                       help="seconds between two looks at the watched log (default 1)")


_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def websocket_origins(address: str, port: int) -> list[str]:
    """Browser origins allowed to open the app's websocket: the local names of this machine on this
    port, plus the bound address when it is not a local one (any host name when listening on every
    interface: the user asked to be reachable).  Pages from other origins cannot drive the app."""
    origins = [f"localhost:{port}", f"127.0.0.1:{port}"]
    if address in ("0.0.0.0", "::", ""):
        origins.append(f"*:{port}")
    elif address not in _LOCAL_HOSTS:
        origins.append(f"{address}:{port}")
    return origins


def free_port(address: str) -> int:
    """A port the OS reports free on ``address`` (for ``--port 0``): the websocket origin allowlist needs
    the concrete port before the server starts."""
    import socket

    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def session_factory(data=None, dataset: str | None = None, watcher=None, watch_period: float = 1.0,
                    **app_params):
    """A function building a fresh dashboard per browser session (sessions never share state).

    ``data``: predictions already read and validated by the CLI (with its column options) — immutable,
    so every session may start from the same object; ``dataset``: an embedded dataset to open on;
    ``watcher``: a :class:`calviz.app.watch.LogWatcher` each session follows (its own fork of it)."""

    from calviz.app.page import create_app

    params = dict(app_params) if dataset is None else {"dataset": dataset, **app_params}

    def new_session():
        page = create_app(data=data, **params)
        if watcher is not None:
            from calviz.app.watch import follow

            follow(page.app, watcher.fork(), watch_period)
        return page

    return new_session


def _watched_log(args):
    """``serve --watch``: the log's first look and its watcher (a file, or a directory of Parquet files)."""
    from calviz._data import InputError
    from calviz.app.watch import LogWatcher
    from calviz.cli import CLIError, load_input
    from calviz.cli_monitor import with_time_column

    if args.file is None or args.time_column is None:
        raise CLIError("--watch needs FILE (a log file or a directory of Parquet files) and --time-column")
    if args.scheduler:
        raise CLIError("--watch reads the log in this process; it does not take --scheduler")
    if not Path(args.file).exists():
        raise CLIError(f"{args.file}: no such file")
    if not args.watch_period > 0:
        raise CLIError(f"--watch-period must be a positive number of seconds; got {args.watch_period}")

    def read(path: str):
        return with_time_column(load_input(path, args), argparse.Namespace(**{**vars(args), "file": path}))

    watcher = LogWatcher(args.file, read)
    try:
        return watcher.poll(), watcher
    except InputError as exc:
        raise CLIError(str(exc)) from None


def cmd_serve(args) -> int:
    from calviz.cli import (
        EXIT_OK,
        CLIError,
        _on_dask,
        _refuse_weights_on_dask,
        load_input,
        with_weight_column,
    )
    from calviz.cli_monitor import with_time_column

    # a stop ends the process within seconds, before every pool has released its locks: multiprocessing's
    # resource tracker (started later, with this environment) then frees them, as is its job, and need not
    # print a warning about it on the user's terminal
    os.environ["PYTHONWARNINGS"] = ",".join(
        w for w in (os.environ.get("PYTHONWARNINGS"), "ignore:resource_tracker:UserWarning") if w)
    dataset = args.dataset
    if args.file is not None and dataset is not None:
        raise CLIError("pass either FILE or --dataset, not both")
    if dataset is not None:
        from calviz._data import InputError
        from calviz.datasets import dataset_info

        try:
            dataset_info(dataset)
        except InputError as exc:
            raise CLIError(str(exc)) from None
    if not 0 <= args.port <= 65535:
        raise CLIError(f"--port must be in 0..65535; got {args.port}")

    if args.scheduler and args.file is None:
        raise CLIError("--scheduler needs FILE (a Parquet file or directory)")
    watcher = None
    # fail fast, before Panel loads
    if args.watch or (args.file is not None and (args.scheduler or Path(args.file).is_dir())):
        _refuse_weights_on_dask(args)
    if args.watch:
        data, watcher = _watched_log(args)
    elif args.file is not None and (args.scheduler or Path(args.file).is_dir()):
        data = _on_dask(args, "open_source")  # validated in one pass, not loaded
    else:
        data = (with_weight_column(with_time_column(load_input(args.file, args), args), args)
                if args.file is not None else None)
    # paths typed into the app are read on this machine: only under a folder the user named, and only
    # when nobody else can connect
    data_root = None
    if args.data_root is not None:
        if not _is_loopback(args.address):
            raise CLIError("--data-root needs a loopback --address (it reads files on this machine)")
        data_root = Path(args.data_root).resolve()
        if not data_root.is_dir():
            raise CLIError(f"--data-root {args.data_root}: not a directory")
    if args.workers is not None and args.workers < 1:
        raise CLIError(f"--workers must be at least 1; got {args.workers}")
    if args.job_memory is not None and not 0 < args.job_memory < float("inf"):
        raise CLIError(f"--job-memory must be a positive number of GB; got {args.job_memory}")
    from calviz.app import workers

    workers.configure(workers=args.workers,
                      job_memory=None if args.job_memory is None else int(args.job_memory * 2**30))
    # the worker processes map the server's one copy of the data instead of receiving it per job
    data = workers.share_data(data)
    from calviz.app.precomputed import precompute_first_views

    # (large data: the first page's views start computing now)
    precompute_first_views(data, then=lambda s: print(f"first views computed in {s:.1f} s", flush=True))
    new_session = session_factory(data, dataset, data_root=data_root, watcher=watcher,
                                  watch_period=args.watch_period)

    import panel as pn

    from calviz.app.page import say_preparing_first
    from calviz.app.sources import WEBSOCKET_LIMIT_BYTES
    try:
        port = args.port or free_port(args.address)
        server = pn.serve(
            {"/": new_session}, port=port, address=args.address,
            websocket_origin=websocket_origins(args.address, port), show=False, start=False,
            title="calviz", verbose=False, websocket_max_message_size=WEBSOCKET_LIMIT_BYTES,
        )
    except OSError as exc:
        raise CLIError(f"cannot listen on {args.address}:{args.port}: {exc.strerror or exc}") from None
    # the spare worker process (the first session's background jobs) starts loading — on a first run
    # compiling — every kernel as soon as the first page has been sent, while the browser loads it (earlier,
    # it would slow the session build on 2 cores); this process loads its own kernels when the page has
    # loaded (CalvizApp.start), since they hold its GIL.
    say_preparing_first(server, then=workers.start_spare_worker)
    host = f"[{args.address}]" if ":" in args.address else args.address
    url = f"http://{host}:{server.port}/"
    print(f"calviz dashboard at {url}  (Ctrl+C to stop)", flush=True)
    server.start()
    # the page says "preparing" until the views arrive
    if args.show:
        server.io_loop.add_callback(_open_browser, url)
    # SIGTERM (a service manager, `kill`) and Ctrl+C stop the event loop, so the worker processes and a
    # local Dask cluster are shut down instead of being orphaned; a second signal meanwhile is ignored
    def stop(*_):
        for each in (signal.SIGINT, signal.SIGTERM):
            signal.signal(each, signal.SIG_IGN)
        server.io_loop.add_callback_from_signal(server.io_loop.stop)
        # the worker processes stop now, mid-job, not when the loop has stopped: the loop stops after the
        # callback it runs now (a session's change: seconds on large data), and a job finishing meanwhile
        # is work nobody will see (from a thread: this handler may have interrupted one holding the pool)
        threading.Thread(target=workers.shutdown_workers, name="calviz-stop-workers", daemon=True).start()
        threading.Thread(target=_exit_after_grace, name="calviz-stop", daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.io_loop.start()
    except KeyboardInterrupt:  # (a Ctrl+C before the handler above was installed)
        pass
    finally:
        _stop_serving(server)
    _exit_now()
    return EXIT_OK  # (not reached)


def _exit_now() -> None:
    """End the stopped server's process now, status 0: the server has stopped listening and its worker
    processes and shared files are gone, and nothing it holds needs saving; returning instead would make
    the interpreter's exit wait for every thread still computing a view (a thread pool's threads are
    joined at exit: seconds at 10⁷ rows) and tear down the modules of a large heap."""
    import multiprocessing
    import time

    from calviz.cli import EXIT_OK

    # the worker processes, already sent their stop, are reaped (briefly): none is left a zombie meanwhile,
    # and their time counts as the server's, as a service manager accounts it
    reap_until = time.monotonic() + REAP_S
    for child in multiprocessing.active_children():
        child.join(max(0.0, reap_until - time.monotonic()))
    _say_stopped()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(EXIT_OK)


#: s: at most this long for the stopped worker processes to end before the server's process exits
REAP_S = 0.5


_STOPPED_SAID = threading.Lock()


def _say_stopped() -> None:
    """Print "calviz: stopped" once: the stop's end and the grace thread's exit (:func:`_exit_after_grace`)
    may both get there on a loaded machine."""
    if _STOPPED_SAID.acquire(blocking=False):
        print("calviz: stopped", file=sys.stderr, flush=True)


#: s: a stopping server waits this long for a Dask cluster to close, then kills its workers and exits
STOP_GRACE_S = 2.0


def _exit_after_grace() -> None:
    """A stop that has not ended after :data:`STOP_WAIT_S` (the event loop's thread still busy): stop the
    worker processes and exit now, status 0."""
    import time

    time.sleep(STOP_WAIT_S)
    import multiprocessing

    from calviz.app import workers

    # no lock is taken here (the thread the stop waits on may hold one): the worker processes and a local
    # Dask cluster's are killed (they hold nothing that must be saved), the shared files deleted
    for child in multiprocessing.active_children():
        child.kill()
    workers.release_shared_files()
    _exit_now()


#: s: a stop asked for by a signal ends this long after it, whatever the event loop's thread is doing
#: (well under the 5 s a service manager is promised: at 10⁷ rows the kernel's teardown of the process's
#: gigabytes and the threads' exit took seconds more on a busy machine)
STOP_WAIT_S = 2.5


def _stop_serving(server) -> None:
    """Stop listening, stop the worker processes (also mid-job) and close the Dask clients; if they do not
    close within :data:`STOP_GRACE_S`, exit now (status 0: the stop was asked for) instead of waiting on
    the cluster."""
    from calviz.app import workers

    server.stop()
    workers.shutdown_workers()
    if "calviz.dask._app" in sys.modules:  # (only when a Dask source was opened)
        from calviz.dask._app import close_clients

        if not close_clients(STOP_GRACE_S):
            _exit_now()


def _is_loopback(address: str) -> bool:
    import ipaddress

    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _open_browser(url: str) -> None:
    import webbrowser

    try:
        webbrowser.open_new_tab(url)
    except Exception:  # no browser on this machine: the printed URL is enough
        pass
