"""``calviz serve LOG --time-column ts --watch``: the over-time view's update when one day is appended.

    nice python benchmarks/bench_watch_append.py [--n 10000000] [--day 100000] [--repeats 5]
                                                 [--layouts directory csv parquet]

The dashboard in-process (``CalvizApp``, no browser, no server): a prediction log of ``--n`` rows over 365
days (binary predictions, rows in time order) is watched with the command line's own reader
(``calviz.cli_serve._watched_log``), its over-time view computed and drawn; then, ``--repeats`` times, one
more day of ``--day`` rows is appended to the log on disk and the page's watch step runs
(:func:`calviz.app.watch.poll`): the watcher reads what is new, the over-time result takes the new rows'
merged sums (:meth:`calviz.analysis.compute.OverTime.append`) and the card patches its figures' sources.
Timed from the look at the log until the card has drawn the grown log (checked: its windows hold every
row); the page's other views, which a served page computes on the next tick of its event loop (after the
card's patches have been sent), are not part of it.

Layouts: *directory* — a directory of Parquet files gaining one file per day; *csv* — one CSV file that
grows by appended lines; *parquet* — one Parquet file rewritten with one more row group per day (its
earlier row groups unchanged).  Wall and process CPU seconds (all threads) per step, medians over the
steady-state appends (the first append of a freshly read log copies it once into arrays with room to grow,
and is reported apart).

Results: benchmarks/results/bench_watch_append.md (and .json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DAYS = 365
TARGET_S = 0.25


def _table(rng, first_second, seconds, rows):
    import pyarrow as pa

    offsets = np.sort(rng.integers(first_second, first_second + seconds, rows))
    ts = np.datetime64("2025-01-01") + offsets.astype("timedelta64[s]")
    p = rng.uniform(size=rows)
    y = (rng.uniform(size=rows) < p).astype(np.int64)
    return pa.table({"ts": ts, "y_true": y, "y_prob": p})


class _Log:
    """A log on disk in one of the layouts, written a day at a time."""

    def __init__(self, layout: str, root: Path):
        self.layout, self.root, self.tables = layout, root, []
        names = {"directory": "log", "csv": "log.csv", "parquet": "log.parquet"}
        self.path = root / names[layout]
        if layout == "directory":
            self.path.mkdir()

    def add(self, table) -> None:
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq

        self.tables.append(table)
        if self.layout == "directory":
            pq.write_table(table, self.path / f"part-{len(self.tables):05d}.parquet")
        elif self.layout == "csv":
            options = pacsv.WriteOptions(include_header=len(self.tables) == 1)
            with open(self.path, "ab") as f:
                pacsv.write_csv(table, f, write_options=options)
        else:  # the whole file rewritten with one more row group (Parquet files cannot be appended to)
            with pq.ParquetWriter(self.path, self.tables[0].schema) as writer:
                for t in self.tables:
                    writer.write_table(t, row_group_size=max(t.num_rows, 1))


def run_layout(layout: str, n: int, day: int, repeats: int) -> dict:
    import calviz.app.watch as watch
    from calviz.analysis.compute import compute_over_time
    from calviz.app.page import CalvizApp
    from calviz.cli import build_parser
    from calviz.cli_serve import _watched_log

    rng = np.random.default_rng(11)
    with tempfile.TemporaryDirectory(prefix="bench-watch-") as tmp:
        log = _Log(layout, Path(tmp))
        base = n - day * (repeats + 1)
        log.add(_table(rng, 0, (DAYS - repeats - 1) * 86400, base))
        args = build_parser().parse_args(["serve", str(log.path), "--time-column", "ts", "--watch"])
        t0 = time.perf_counter()
        data, watcher = _watched_log(args)
        first_read = time.perf_counter() - t0
        app = CalvizApp(data, resampling="analytic")
        options = app.controls.options(data.n)
        t0 = time.perf_counter()
        app.store.seed("over_time", data, options, compute_over_time(data, options), show=True)
        first_compute = time.perf_counter() - t0
        app.store.inputs = (data, options)
        # a served page refreshes its other views on the next tick: here they are left out (not timed)
        later: list = []
        app._schedule = later.append
        steps = []
        for k in range(repeats + 1):
            log.add(_table(rng, (DAYS - repeats - 1 + k) * 86400, 86400, day))
            drawn = {}
            draw = app.over_time.draw

            def timed_draw(draw=draw, drawn=drawn):
                c = time.perf_counter()
                draw()
                drawn["s"] = drawn.get("s", 0.0) + time.perf_counter() - c

            app.over_time.draw = timed_draw
            w0, c0 = time.perf_counter(), time.process_time()
            read = watcher.poll
            r = {}

            def timed_read(read=read, r=r):
                c = time.perf_counter()
                out = read()
                r["s"] = time.perf_counter() - c
                return out

            watcher.poll = timed_read
            changed = watch.poll(app, watcher)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            del watcher.poll, app.over_time.draw
            assert changed and len(later) == 1, ("the growth was not merged into the shown view",
                                                 changed, later, app.status.alert.object)
            later.clear()
            new = watcher.data
            shown = app.over_time.source.data
            assert int(np.sum(shown["n"])) == new.n == base + (k + 1) * day, "the card misses rows"
            # the next tick's data change, without the other views' refresh: the controls follow the data
            app.loaded[app.controls.dataset] = new
            app._set_data(new, refresh=False)
            steps.append(dict(wall_s=wall, cpu_s=cpu, read_s=r["s"], draw_s=drawn.get("s", 0.0),
                              merge_s=wall - r["s"] - drawn.get("s", 0.0), windows=len(shown["n"])))
            print(layout, steps[-1], flush=True)
    steady = steps[1:]
    out = {k: float(np.median([s[k] for s in steady])) for k in ("wall_s", "cpu_s", "read_s", "draw_s",
                                                                  "merge_s")}
    out.update(layout=layout, n=n, day=day, repeats=repeats, first=steps[0], steps=steps,
               first_read_s=first_read, first_compute_s=first_compute, windows=steps[-1]["windows"])
    return out


def write(results: dict) -> None:
    rows = results["layouts"]
    lines = ["# bench_watch_append — appending one day to a watched log updates the over-time view", "",
             f"Command: `{results['command']}` ({results['when']}) · `os.cpu_count()` = {os.cpu_count()} · "
             f"Python {platform.python_version()} · 1-minute load average {results['load_start']:.1f} at the "
             f"start, {results['load_end']:.1f} at the end (a shared 2-core machine; CPU = the process's CPU "
             "seconds over the step, all threads: the load-independent number).", "",
             f"The dashboard in-process (no browser): a log of {rows[0]['n']:,} rows over {DAYS} days is "
             f"watched with the command line's reader and its over-time view drawn ({rows[0]['windows']} "
             f"daily windows); then one day of {rows[0]['day']:,} rows is appended on disk and the page's "
             "watch step runs: *read* = the watcher reads what is new (the new file, the appended CSV "
             "lines, the new row group) into the log's arrays with room to grow; *merge* = the over-time "
             "result takes the new rows' merged sums (the open window's statistics and T-Cal, the new "
             "windows, Holm, the e-process continued); *draw* = the card patches its sources (changed "
             "cells and new windows) and draws the newest window's diagram. The page's other views follow "
             "on the next tick of a served page's event loop and are not timed. Medians of "
             f"{rows[0]['repeats']} steady-state appends (the first append after the first look copies "
             "the log once into arrays with room to grow: *first append*).", "",
             f"| layout | wall s (target < {TARGET_S}) | CPU s | read s | merge s | draw s | first append "
             "wall s | first look: read s / over-time view s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ok = "✅" if r["wall_s"] < TARGET_S else "❌"
        lines.append(f"| {r['layout']} | **{r['wall_s']:.3f}** {ok} | {r['cpu_s']:.3f} | {r['read_s']:.3f} | "
                     f"{r['merge_s']:.3f} | {r['draw_s']:.3f} | {r['first']['wall_s']:.3f} | "
                     f"{r['first_read_s']:.1f} / {r['first_compute_s']:.1f} |")
    steps = "; ".join(f"{r['layout']}: " + ", ".join(f"{s['wall_s']:.3f}" for s in r["steps"]) for r in rows)
    lines += ["", f"Every step (wall s, the first append first): {steps}.", ""]
    (RESULTS / "bench_watch_append.md").write_text("\n".join(lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--day", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5, help="steady-state appends (after the first)")
    parser.add_argument("--layouts", nargs="*", default=["directory", "csv", "parquet"],
                        choices=["directory", "csv", "parquet"])
    args = parser.parse_args()
    load0 = os.getloadavg()[0]
    layouts = [run_layout(layout, args.n, args.day, args.repeats) for layout in args.layouts]
    results = dict(layouts=layouts, load_start=load0, load_end=os.getloadavg()[0],
                   when=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   command="nice python benchmarks/bench_watch_append.py " + " ".join(
                       f"--{k} {v}" if not isinstance(v, list) else f"--{k} {' '.join(v)}"
                       for k, v in vars(args).items()))
    (RESULTS / "bench_watch_append.json").write_text(json.dumps(results, indent=1, default=float))
    write(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
