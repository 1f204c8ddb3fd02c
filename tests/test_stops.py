"""Stopping calviz's long-running commands: `calviz serve` (with and without a local Dask cluster) and
`calviz report` end on SIGTERM and Ctrl+C (SIGINT to the process group, as a terminal sends it) with
exit status 0, one line and no traceback, leave no file behind, and every server calviz starts listens
on the loopback interface only.

Signals are sent after an event (the server printed its URL; the report created its temporary file);
the waits are hang guards, not speed requirements."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
HANG_GUARD_S = 300  # a loaded 2-core machine starts a server (imports, a Dask cluster) in tens of seconds


def _env(tmp_path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env  # (the run's dataset cache: conftest's dataset_cache)


def _start(tmp_path, *args) -> subprocess.Popen:
    """``calviz ARGS`` in its own process group (so a group SIGINT reaches it and its children only)."""
    return subprocess.Popen([sys.executable, "-m", "calviz", *args], cwd=tmp_path, env=_env(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _wait_for_url(proc) -> str:
    for line in proc.stdout:  # blocks until the server prints (the event), or exits
        if "dashboard at" in line:
            return line.split("dashboard at", 1)[1].split()[0]
    proc.wait(timeout=HANG_GUARD_S)
    raise AssertionError(f"the server exited first: {proc.stderr.read()}")


def _send(proc, how: str) -> None:
    if how == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal does: the whole foreground group
    else:
        proc.send_signal(signal.SIGTERM)


def _finish(proc) -> tuple[int, str]:
    try:
        code = proc.wait(timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise AssertionError("did not stop") from None
    return code, proc.stderr.read()


def _listening(pid: int) -> list[tuple[str, int, int]]:
    """(address, port, pid) of every listening TCP socket of process ``pid`` and its descendants."""
    psutil = pytest.importorskip("psutil")
    root = psutil.Process(pid)
    found = []
    for process in [root, *root.children(recursive=True)]:
        try:
            connections = process.net_connections(kind="inet")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        found += [(c.laddr.ip, c.laddr.port, process.pid)
                  for c in connections if c.status == psutil.CONN_LISTEN]
    return found


@pytest.mark.parametrize("how", ["sigterm", "ctrl-c"])
def test_serve_stops_cleanly(tmp_path, how):
    import urllib.request

    proc = _start(tmp_path, "serve", "--no-show", "--port", "0")
    url = _wait_for_url(proc)
    with urllib.request.urlopen(url, timeout=HANG_GUARD_S) as response:  # a session, the spare worker
        assert response.status == 200
    assert all(address == "127.0.0.1" for address, _, _ in _listening(proc.pid)), _listening(proc.pid)
    _send(proc, how)
    code, stderr = _finish(proc)
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    assert stderr.strip().splitlines()[-1:] == ["calviz: stopped"], stderr


@pytest.fixture(scope="module")
def parquet_dir(tmp_path_factory):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("distributed")
    directory = tmp_path_factory.mktemp("dask-preds") / "preds"
    directory.mkdir()
    rng = np.random.default_rng(5)
    for i in range(2):
        p = rng.random(3000)
        y = (rng.random(3000) < p**1.5).astype(np.int64)
        pd.DataFrame({"y_true": y, "y_prob": p}).to_parquet(directory / f"part.{i}.parquet", index=False)
    return directory


@pytest.mark.parametrize("how", ["sigterm", "ctrl-c"])
def test_serve_on_a_local_cluster_listens_on_loopback_only_and_stops_cleanly(tmp_path, parquet_dir, how):
    proc = _start(tmp_path, "serve", str(parquet_dir), "--scheduler", "local", "--no-show", "--port", "0")
    try:
        _wait_for_url(proc)  # (the cluster is started before: the data is validated on it first)
        listening = _listening(proc.pid)
        # the page, the scheduler, its HTTP server and the workers (one process group, several processes)
        assert len(listening) >= 3 and len({pid for _, _, pid in listening}) >= 2, listening
        assert all(address == "127.0.0.1" for address, _, _ in listening), listening
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    _send(proc, how)
    code, stderr = _finish(proc)
    assert code == 0, stderr
    assert "Traceback" not in stderr and "WARNING" not in stderr, stderr


def test_a_scheduler_address_that_is_no_address_is_one_line_and_no_traceback(tmp_path, parquet_dir):
    proc = _start(tmp_path, "serve", str(parquet_dir), "--scheduler", "not-a-url", "--no-show")
    code, stderr = _finish(proc)
    assert code == 2
    assert stderr.strip().splitlines() == [stderr.strip()] and "not-a-url" in stderr, stderr


def test_report_stopped_mid_computation_leaves_no_file(tmp_path):
    rng = np.random.default_rng(6)
    n = 300_000  # (reading, analysing and rendering it takes seconds after its temporary file exists)
    p = rng.random(n)
    y = (rng.random(n) < p).astype(int)
    source = tmp_path / "preds.csv"
    np.savetxt(source, np.column_stack([y, p]), delimiter=",", header="y_true,y_prob", comments="",
               fmt=["%d", "%.6f"])
    out = tmp_path / "out" / "report.html"
    out.parent.mkdir()
    proc = _start(tmp_path, "report", str(source), "-o", str(out))
    deadline = time.monotonic() + HANG_GUARD_S
    while not list(out.parent.glob("*.partial")):  # the event: the report is being computed
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "no temporary file appeared"
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    code, stderr = _finish(proc)
    assert code == 0, stderr
    assert stderr.strip() == "calviz report: stopped", stderr
    assert list(out.parent.iterdir()) == []  # neither the report nor its temporary file


_STOP_INSIDE_A_STRING_EXEC = """
import os, signal, sys
from calviz import cli

def report(args):  # cmd_report's stop, with the signals sent at the two moments that broke it
    cli._stop_on_signals()
    try:
        # a string exec (as dataclasses and namedtuple run): an exact KeyboardInterrupt ending one made
        # `python -m` exit by SIGINT after main returned 0
        exec("os.kill(os.getpid(), signal.SIGTERM)\\nwhile True: pass", {"os": os, "signal": signal})
    finally:  # the cleanup (a temporary file removed) while a second SIGTERM and a Ctrl+C arrive
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # (bytecodes: a handler still armed runs here)
            pass

cli.cmd_report = report
sys.exit(cli.main(["report", "in.csv", "-o", "out.html"]))
"""


def test_a_stop_inside_a_string_exec_and_signals_during_cleanup_exit_0_with_one_line(tmp_path):
    (tmp_path / "stop_in_exec.py").write_text(_STOP_INSIDE_A_STRING_EXEC)
    proc = subprocess.run([sys.executable, "-m", "stop_in_exec"], cwd=tmp_path, env=_env(tmp_path),
                          capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert (proc.returncode, proc.stderr.strip()) == (0, "calviz report: stopped"), proc.stderr


_STOP_DURING_CHECK = """
import os, signal, sys
from calviz import cli

def check(args):  # a check computing when SIGTERM comes: main has installed the commands' stop
    os.kill(os.getpid(), signal.SIGTERM)
    while True:
        pass

cli.cmd_check = check
sys.exit(cli.main(["check", "in.csv"]))
"""

_STOP_WHILE_STARTING = """
import os, runpy, signal, sys, types

def main():  # SIGTERM while `python -m calviz` still imports its command line: main not yet running
    os.kill(os.getpid(), signal.SIGTERM)
    while True:
        pass

sys.modules["calviz.cli"] = types.SimpleNamespace(main=main)
sys.argv = ["calviz", "check", "in.csv"]
runpy.run_module("calviz", run_name="__main__")
"""


# the same through the `calviz` script pyproject.toml declares: its entry point is what a terminal's Ctrl+C
# meets first, before any of calviz's command line is imported
_STOP_WHILE_THE_SCRIPT_STARTS = _STOP_WHILE_STARTING.replace(
    'runpy.run_module("calviz", run_name="__main__")',
    f'import importlib, tomllib\n'
    f'with open({str(REPO / "pyproject.toml")!r}, "rb") as f:\n'
    f'    module, function = tomllib.load(f)["project"]["scripts"]["calviz"].split(":")\n'
    f'sys.exit(getattr(importlib.import_module(module), function)())')


@pytest.mark.parametrize("script", [_STOP_DURING_CHECK, _STOP_WHILE_STARTING, _STOP_WHILE_THE_SCRIPT_STARTS],
                         ids=["check", "starting", "script starting"])
def test_sigterm_stops_any_command_with_status_0_and_one_line(tmp_path, script):
    (tmp_path / "stop_check.py").write_text(script)
    proc = subprocess.run([sys.executable, "-m", "stop_check"], cwd=tmp_path, env=_env(tmp_path),
                          capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert (proc.returncode, proc.stderr.strip()) == (0, "calviz check: stopped"), proc.stderr


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_report_refuses_a_device_node_or_fifo_as_output(tmp_path):
    from calviz import cli

    fifo = tmp_path / "pipe.html"
    os.mkfifo(fifo)
    for target in ("/dev/null", str(fifo)):
        with pytest.raises(cli.CLIError, match="not a regular file"):
            cli.check_output_path(Path(target))
    assert Path("/dev/null").is_char_device() and fifo.is_fifo()


def test_atomic_text_writes_whole_files_through_symlinks_and_refuses_other_targets(tmp_path):
    from calviz._files import atomic_text

    real = tmp_path / "real.html"
    real.write_text("old")
    link = tmp_path / "link.html"
    link.symlink_to(real)
    with atomic_text(link) as handle:
        handle.write("new")
    assert link.is_symlink() and real.read_text() == "new"
    with pytest.raises(KeyboardInterrupt), atomic_text(real) as handle:
        handle.write("half")
        raise KeyboardInterrupt
    assert real.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.html", "real.html"]
    with pytest.raises(OSError, match="not a regular file"), atomic_text("/dev/null"):
        pass
