"""Seconds from SIGTERM (or SIGINT) to the exit of ``calviz serve FILE``, at several points of a session, on
a loaded machine; the exit status; a ``py-spy dump`` of a server still running after ``--dump-after`` s.

    nice python benchmarks/bench_stop.py --busy 2 --repeat 2            # the 10^7 x 10 Parquet file

Points (each on a fresh server; every one waits on an event, then signals at once):

* ``start``: the server prints its URL (the start's sorting and first views are computing);
* ``page``: a Chromium tab has loaded the page (its first views are being sent);
* ``change``: the page shows its four views; bins, α and the target are changed and the signal follows the
  last change at once (the changes' views and jobs in flight);
* ``idle``: after the change sequence, every view drawn and no job running.

``--cli-delays S ...``: also ``calviz check FILE`` and ``calviz report FILE -o OUT`` signalled S seconds after
their start (no event to wait on: a fixed delay); whether a file was left behind is reported.

``--busy N`` runs N ``nice`` busy loops for the whole run (the load of a shared machine), stopped at the end.
The file is benchmarks/bench_dashboard.py's 10^7 x 10 Parquet file (made once in ``--cache``).  Prints one
line per stop and a Markdown table at the end."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_dashboard import (  # noqa: E402
    CHROMIUM_ARGS,
    JS_FOUR_VIEWS,
    JS_HIST,
    JS_IDLE,
    REPO,
    _set,
    _text,
    large_file,
)

POINTS = ("start", "page", "change", "idle")
WAIT_MS = 900_000


def _serve(path: Path, workdir: Path) -> tuple[subprocess.Popen, str, Path]:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    log = workdir / f"server-{port}.log"
    env = dict(os.environ, PYTHONPATH=str(REPO), CALVIZ_CACHE_DIR=str(workdir / "datasets"))
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "calviz", "serve", str(path), "--no-show", "--port",
                                 str(port)], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    return proc, f"http://127.0.0.1:{port}/", log


def _wait_log(proc, log: Path, text: str, timeout: float = 900.0) -> None:
    end = time.monotonic() + timeout
    while text not in log.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > end:
            raise RuntimeError(f"no {text!r} in the server's output:\n{log.read_text()[-2000:]}")
        time.sleep(0.05)


def _changes(page) -> None:
    for title, value in (("bins (m)", 20), ("level α", 0.1), ("calibration target", "classwise"),
                         ("bins (m)", 12)):
        _set(page, title, value)


def _stop(proc, sig: int, dump_after: float, dump_to: Path) -> tuple[float, int, bool]:
    """Signal, then poll until the process ends; (seconds, exit status, whether a dump was taken)."""
    proc.send_signal(sig)
    sent = time.monotonic()
    dumped, next_dump = False, dump_after
    while proc.poll() is None:
        if time.monotonic() - sent > next_dump:
            dumped, next_dump = True, next_dump + 1.0
            with open(dump_to, "ab") as out:
                out.write(f"--- {time.monotonic() - sent:.1f} s after the signal\n".encode())
                out.flush()
                subprocess.run(["py-spy", "dump", "--pid", str(proc.pid)], stdout=out,
                               stderr=subprocess.STDOUT, timeout=60, check=False)
        time.sleep(0.01)
    return time.monotonic() - sent, proc.returncode, dumped


def one_stop(point: str, sig: int, path: Path, workdir: Path, browser, args) -> dict:
    proc, url, log = _serve(path, workdir)
    page = None
    try:
        _wait_log(proc, log, "calviz dashboard at")
        if point != "start":
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(url, timeout=WAIT_MS, wait_until="load")
            if point in ("change", "idle"):
                page.wait_for_function(JS_FOUR_VIEWS, timeout=WAIT_MS, polling=250)
                _changes(page)
            if point == "idle":
                page.wait_for_function(f"() => ({JS_HIST})().includes(12) && ({_text('classwise · ')})"
                                       f" && ({JS_IDLE})()", timeout=WAIT_MS, polling=250)
        load = os.getloadavg()[0]
        seconds, status, dumped = _stop(proc, sig, args.dump_after, workdir / "dumps.txt")
        tail = log.read_text(errors="replace")
        return {"point": point, "signal": signal.Signals(sig).name, "load": load, "seconds": seconds,
                "status": status, "traceback": "Traceback" in tail, "dumped": dumped}
    finally:
        if page is not None:
            page.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def one_cli_stop(command: str, delay: float, sig: int, path: Path, workdir: Path, args) -> dict:
    out = workdir / "out"
    out.mkdir(exist_ok=True)
    extra = ["-o", str(out / "report.html")] if command == "report" else []
    env = dict(os.environ, PYTHONPATH=str(REPO), CALVIZ_CACHE_DIR=str(workdir / "datasets"))
    proc = subprocess.Popen([sys.executable, "-m", "calviz", command, str(path), *extra], cwd=workdir,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(delay)
        if proc.poll() is not None:
            raise RuntimeError(f"calviz {command} ended before the signal: {proc.stderr.read()}")
        load = os.getloadavg()[0]
        seconds, status, dumped = _stop(proc, sig, args.dump_after, workdir / "dumps.txt")
        stderr = proc.stderr.read()
        left = sorted(p.name for p in out.iterdir())
        for each in out.iterdir():
            each.unlink()
        return {"point": f"{command} at {delay:g} s", "signal": signal.Signals(sig).name, "load": load,
                "seconds": seconds, "status": status, "traceback": "Traceback" in stderr, "dumped": dumped,
                "files left": left, "stderr": stderr.strip()[-200:]}
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "calviz-bench")
    parser.add_argument("--points", nargs="*", choices=POINTS, default=list(POINTS))
    parser.add_argument("--signals", nargs="+", choices=("SIGTERM", "SIGINT"), default=["SIGTERM"])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--cli-delays", type=float, nargs="*", default=[],
                        help="s after the start of `calviz check` / `report` (default: none)")
    parser.add_argument("--busy", type=int, default=0, help="busy loops run meanwhile (default 0)")
    parser.add_argument("--dump-after", type=float, default=4.0,
                        help="s after the signal: py-spy dump of a server still running (into WORKDIR)")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    path = large_file(args.rows, args.cache)
    busy = [subprocess.Popen(["nice", sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="calviz-bench-stop-") as tmp, sync_playwright() as p:
            workdir = Path(tmp)
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            for _ in range(args.repeat):
                for name in args.signals:
                    for point in args.points:
                        row = one_stop(point, getattr(signal, name), path, workdir, browser, args)
                        rows.append(row)
                        print(row, flush=True)
                    for command in ("check", "report"):
                        for delay in args.cli_delays:
                            row = one_cli_stop(command, delay, getattr(signal, name), path, workdir, args)
                            rows.append(row)
                            print(row, flush=True)
            dumps = workdir / "dumps.txt"
            if dumps.exists():
                print(dumps.read_text())
    finally:
        for each in busy:
            each.kill()
            each.wait()
    print(f"\n{args.rows:,} rows x 10 classes, {args.busy} busy loop(s), {os.cpu_count()} cores\n")
    print("| signal | point | load (1 min) | s to exit | exit status | traceback | files left |")
    print("|---|---|---:|---:|---:|---|---|")
    for r in rows:
        print(f"| {r['signal']} | {r['point']} | {r['load']:.1f} | {r['seconds']:.2f} | {r['status']} | "
              f"{'yes' if r['traceback'] else 'no'} | {', '.join(r.get('files left', [])) or '—'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
