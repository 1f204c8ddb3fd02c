"""One-pass kernels, the presorted view and the recalibration fits: this tree against a base tree and the
peers, in the same run.

    nice python benchmarks/bench_kernels.py --base /tmp/base --sizes 1000000 10000000 --recal-size 1000000
    nice python benchmarks/bench_kernels.py --speed --base /tmp/base --sizes 10000000 --rounds 3 \
        --out benchmarks/results/bench_kernels_speed.json

``--base`` is a checkout of an earlier commit (``git worktree add --detach /tmp/base d7293ed``); its calviz
is timed in a subprocess (``PYTHONPATH=<base>``) on the same data (same seed) right before this tree's,
size by size.  Peers (relplot, scikit-learn, probcal, netcal) are timed in this process.  Medians of
``--repeat`` runs after one warm-up run (JIT compilation excluded).  ns per row = time / n; the floor is
``np.copyto`` of the same bytes (the predictions and the labels).  The JSON goes to
benchmarks/results/bench_kernels.json and a Markdown table to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

K = 10


def median_ms(fn, repeat: int) -> float:
    fn()  # warm-up: JIT compilation, caches of the first call
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times) * 1e3)


def binary_data(n: int):
    rng = np.random.default_rng(0)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p ** 1.3).astype(np.int64)
    return p, y


def multiclass_data(n: int):
    """An over-confident K-class model: labels drawn from softmax(logits), predictions softmax(2 logits)."""
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(n, K))
    true = np.exp(logits - logits.max(axis=1, keepdims=True))
    true /= true.sum(axis=1, keepdims=True)
    labels = (rng.uniform(size=(n, 1)) > np.cumsum(true, axis=1)).sum(axis=1).clip(0, K - 1)
    probs = np.exp(2.0 * (logits - logits.max(axis=1, keepdims=True)))
    probs /= probs.sum(axis=1, keepdims=True)
    return probs, labels


def calviz_timings(n: int, repeat: int, recal_n: int) -> dict:
    """Timings of calviz functions that exist in the base and in this tree (ms)."""
    import calviz
    from calviz._data import CalibrationData

    out = _binary_timings(calviz, CalibrationData, *binary_data(n), repeat)
    out.update(_multiclass_timings(calviz, CalibrationData, *multiclass_data(n), repeat))
    if recal_n:
        out.update(recal_timings(recal_n, repeat))
    return out


def _binary_timings(calviz, CalibrationData, p, y, repeat: int) -> dict:
    return {
        "binned_ece binary": median_ms(lambda: calviz.binned_ece(y, p, n_bins=15), repeat),
        "binned_ece binary equal_mass": median_ms(
            lambda: calviz.binned_ece(y, p, n_bins=15, scheme="equal_mass"), repeat),
        "reliability binary": median_ms(lambda: calviz.reliability(y, p, n_bins=15), repeat),
        "top1 view binary": median_ms(lambda: CalibrationData(p, y).top1(), repeat),
    }


def _multiclass_timings(calviz, CalibrationData, probs, labels, repeat: int) -> dict:
    return {
        "top1 view K=10": median_ms(lambda: CalibrationData(probs, labels).top1(), repeat),
        "binned_ece top1 K=10": median_ms(lambda: calviz.binned_ece(labels, probs, n_bins=15), repeat),
        "reliability top1 K=10": median_ms(lambda: calviz.reliability(labels, probs, n_bins=15), repeat),
    }


def recal_timings(n: int, repeat: int) -> dict:
    """Fit + application of each map on the same n rows (the map alone), and ``recalibrate`` in full."""
    import calviz
    from calviz._recalibration import _fit_map

    p, y = binary_data(n)
    full = np.column_stack([1.0 - p, p])
    probs, labels = multiclass_data(n)
    out = {}
    for method in ("temperature", "platt", "isotonic"):
        out[f"recal map {method} binary"] = median_ms(
            lambda m=method: _fit_map(m, full, y, 15).transform(p), repeat)
        out[f"recalibrate() {method} binary"] = median_ms(
            lambda m=method: calviz.recalibrate(y, p, method=m), repeat)
    out["recal map temperature K=10"] = median_ms(
        lambda: _fit_map("temperature", probs, labels, 15).transform(probs), repeat)
    return out


def peer_timings(n: int, repeat: int) -> dict:
    """The peers on the binary data of size n (ms), and the memory-copy floors."""
    out = _binary_peer_timings(*binary_data(n), repeat)
    probs, labels = multiclass_data(n)
    dst_m, dst_l = np.empty_like(probs), np.empty_like(labels)
    out["floor copy K=10 (88 B/row)"] = median_ms(
        lambda: (np.copyto(dst_m, probs), np.copyto(dst_l, labels)), repeat)
    return out


def _binary_peer_timings(p, y, repeat: int) -> dict:
    out = {}
    dst_p, dst_y = np.empty_like(p), np.empty_like(y)
    out["floor copy binary (16 B/row)"] = median_ms(
        lambda: (np.copyto(dst_p, p), np.copyto(dst_y, y)), repeat)
    try:
        from relplot.metrics import binnedECE

        out["relplot binnedECE"] = median_ms(lambda: binnedECE(p, y, nbins=15), repeat)
    except ImportError:
        pass
    from sklearn.calibration import calibration_curve

    out["sklearn calibration_curve"] = median_ms(lambda: calibration_curve(y, p, n_bins=15), repeat)
    try:
        from probcal.metrics.binned import ece as probcal_ece

        out["probcal ece mass"] = median_ms(lambda: probcal_ece(y, p, n_bins=15, strategy="mass"), repeat)
        out["probcal ece width"] = median_ms(lambda: probcal_ece(y, p, n_bins=15, strategy="width"), repeat)
    except ImportError:
        pass
    return out


def presorted_timings(n: int, repeat: int) -> dict:
    import calviz
    from calviz._presorted import Presorted

    p, y = binary_data(n)
    data = calviz.as_calibration_data(y, p)
    out = {"presorted build binary": median_ms(lambda: Presorted.from_data(data), max(1, repeat // 2))}
    view = Presorted.from_data(data)
    for m in (15, 100, 1000):
        out[f"presorted reliability m={m} equal_width"] = median_ms(
            lambda m=m: view.reliability("equal_width", m), repeat)
        out[f"presorted reliability m={m} equal_mass"] = median_ms(
            lambda m=m: view.reliability("equal_mass", m), repeat)
    out["presorted interval m=15"] = median_ms(lambda: view.interval(15), repeat)
    out["presorted bytes/row"] = view.nbytes / view.n
    return out


def recal_peer_timings(n: int, repeat: int) -> tuple[dict, dict]:
    """(ms, max |peer − calviz| of the recalibrated probabilities) of the peers' fit + application."""
    from calviz._recalibration import LOG_FLOOR, _fit_map

    p, y = binary_data(n)
    full = np.column_stack([1.0 - p, p])
    score = np.log(np.clip(p, LOG_FLOOR, 1.0)) - np.log(np.clip(1.0 - p, LOG_FLOOR, 1.0))
    ours = {m: _fit_map(m, full, y, 15).transform(p) for m in ("temperature", "platt", "isotonic")}
    probs, labels = multiclass_data(n)
    ours_k = _fit_map("temperature", probs, labels, 15).transform(probs)
    times, diffs = {}, {}

    def run(name, fn, reference):
        try:
            times[name] = median_ms(fn, repeat)
            diffs[name] = float(np.max(np.abs(np.asarray(fn(), dtype=float).reshape(reference.shape)
                                              - reference)))
        except Exception as exc:  # a peer's API differs across versions: recorded, not fatal
            times[name] = float("nan")
            diffs[name] = f"{type(exc).__name__}: {exc}"[:120]

    from sklearn.calibration import _SigmoidCalibration
    from sklearn.isotonic import IsotonicRegression

    run("sklearn IsotonicRegression", lambda: IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1)
        .fit(score, y).predict(score), ours["isotonic"])
    run("sklearn _SigmoidCalibration (Platt)", lambda: _SigmoidCalibration().fit(score, y).predict(score),
        ours["platt"])
    try:
        import probcal

        run("probcal TemperatureCalibrator", lambda: probcal.TemperatureCalibrator().fit(p, y)
            .predict_proba(p), ours["temperature"])
        run("probcal PlattCalibrator", lambda: probcal.PlattCalibrator().fit(p, y).predict_proba(p),
            ours["platt"])
        run("probcal IsotonicCalibrator", lambda: probcal.IsotonicCalibrator().fit(p, y).predict_proba(p),
            ours["isotonic"])
    except ImportError:
        pass
    try:
        from netcal.binning import IsotonicRegression as NetcalIsotonic
        from netcal.scaling import LogisticCalibration, TemperatureScaling

        run("netcal TemperatureScaling binary", lambda: TemperatureScaling().fit(p, y).transform(p),
            ours["temperature"])
        run("netcal TemperatureScaling K=10",
            lambda: TemperatureScaling().fit(probs, labels).transform(probs), ours_k)
        run("netcal LogisticCalibration (Platt)", lambda: LogisticCalibration().fit(p, y).transform(p),
            ours["platt"])
        run("netcal IsotonicRegression", lambda: NetcalIsotonic().fit(p, y).transform(p), ours["isotonic"])
    except ImportError:
        pass
    return times, diffs


def speed_timings(n: int, repeat: int) -> dict:
    """ms of ``binned_ece``, ``reliability`` and the top-1 view at n rows on float64 and on narrow inputs
    (float32 predictions, int8 labels), and the memory floors of the same bytes: one ``np.copyto`` and one
    read pass (``np.sum``).  The top-1 view is timed bare (``CalibrationData(probs, labels).top1()`` on
    arrays taken as validated), from the raw arrays (``as_calibration_data(labels, probs).top1()``: the
    checks and the view) and inside the estimators (validation, view and sums from the raw arrays).  Run
    in a subprocess per tree (``--speed-worker``)."""
    import calviz
    from calviz._data import CalibrationData

    p, y = binary_data(n)
    p32, y8 = p.astype(np.float32), y.astype(np.int8)
    probs, labels = multiclass_data(n)
    probs32 = probs.astype(np.float32)
    probs32 /= probs32.sum(axis=1, keepdims=True)
    labels8 = labels.astype(np.int8)
    out = {}
    for kind, (pp, yy, mm, ll) in {"f64": (p, y, probs, labels), "f32": (p32, y8, probs32, labels8)}.items():
        out.update(_estimator_timings(calviz, kind, pp, yy, mm, ll, repeat))
    out["top1 view K=10 f64 (validated)"] = median_ms(lambda: CalibrationData(probs, labels).top1(), repeat)
    for kind, (mm, ll) in {"f64": (probs, labels), "f32": (probs32, labels8)}.items():
        out[f"top1 view K=10 {kind} (from arrays)"] = median_ms(
            lambda m=mm, lab=ll: calviz.as_calibration_data(lab, m).top1(), repeat)
    floors = {"binary f64 (16 B/row)": (p, y), "binary f32+int8 (5 B/row)": (p32, y8),
              "K=10 f64 (88 B/row)": (probs, labels), "K=10 f32+int8 (41 B/row)": (probs32, labels8)}
    for label, arrays in floors.items():
        copies = [np.empty_like(a) for a in arrays]
        out[f"floor copy {label}"] = median_ms(
            lambda a=arrays, c=copies: [np.copyto(d, s) for d, s in zip(c, a, strict=True)], repeat)
        out[f"floor read {label}"] = median_ms(lambda a=arrays: [s.sum() for s in a], repeat)
        del copies
    return out


def _estimator_timings(calviz, kind: str, p, y, probs, labels, repeat: int) -> dict:
    return {
        f"binned_ece binary {kind}": median_ms(lambda: calviz.binned_ece(y, p, n_bins=15), repeat),
        f"reliability binary {kind}": median_ms(lambda: calviz.reliability(y, p, n_bins=15), repeat),
        f"binned_ece top1 K=10 {kind}": median_ms(lambda: calviz.binned_ece(labels, probs, n_bins=15),
                                                  repeat),
        f"reliability top1 K=10 {kind}": median_ms(lambda: calviz.reliability(labels, probs, n_bins=15),
                                                   repeat),
    }


def speed_main(args) -> None:
    """This tree against ``--base`` at one n, each in its own subprocess, alternating base / new for
    ``--rounds`` rounds under each NUMBA_NUM_THREADS of ``--threads``; per path the median over rounds."""
    n = args.sizes[-1]
    here = str(Path(__file__).resolve().parents[1])
    report = {"cores": os.cpu_count(), "n": n, "repeat": args.repeat, "rounds": args.rounds,
              "load_start": _load(), "runs": []}
    for threads in args.threads:
        for r in range(args.rounds):
            for tree, root in (("base", args.base), ("new", here)):
                env = {**os.environ, "PYTHONPATH": root, "NUMBA_NUM_THREADS": str(threads)}
                cmd = [sys.executable, __file__, "--speed-worker", "--sizes", str(n), "--repeat",
                       str(args.repeat)]
                load = _load()
                out = json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True,
                                                text=True).stdout)
                report["runs"].append({"threads": threads, "round": r, "tree": tree, "load": load, "ms": out})
                print(f"threads {threads} round {r} {tree} done (load {load} -> {_load()})", file=sys.stderr)
                Path(args.out).parent.mkdir(parents=True, exist_ok=True)
                Path(args.out).write_text(json.dumps(report, indent=1))
    report["load_end"] = _load()
    Path(args.out).write_text(json.dumps(report, indent=1))
    print(speed_markdown(report))


def speed_markdown(report: dict) -> str:
    n = report["n"]
    lines = [f"n = {n:,}, cores {report['cores']}, load (1/5 min) {report['load_start']} at start, "
             f"{report.get('load_end')} at end; per run the median of {report['repeat']} after a warm-up, "
             f"then the median over {report['rounds']} alternating rounds (base, new, base, new, ...)"]
    for threads in sorted({r["threads"] for r in report["runs"]}, reverse=True):
        runs = [r for r in report["runs"] if r["threads"] == threads]
        lines += ["", f"NUMBA_NUM_THREADS={threads} (loads {', '.join(r['load'] for r in runs)})", "",
                  "| path | base ms | new ms | base/new | base ns/row | new ns/row | new ÷ read floor |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        new_ms = {name: float(np.median([r["ms"][name] for r in runs if r["tree"] == "new"]))
                  for name in runs[0]["ms"]}
        for name, m in new_ms.items():
            b = float(np.median([r["ms"][name] for r in runs if r["tree"] == "base"]))
            floor = new_ms.get(read_floor_of(name))
            lines.append(f"| {name} | {b:.1f} | {m:.1f} | {b / m:.2f}× | {b * 1e6 / n:.1f} "
                         f"| {m * 1e6 / n:.1f} | {f'{m / floor:.1f}' if floor else ''} |")
    return "\n".join(lines)


def read_floor_of(name: str) -> str | None:
    """The read floor (one ``np.sum`` of the same arrays) of a timed path of :func:`speed_timings`."""
    if name.startswith("floor"):
        return None
    narrow = name.endswith("f32") or " f32 " in name
    if "binary" in name:
        return "floor read binary f32+int8 (5 B/row)" if narrow else "floor read binary f64 (16 B/row)"
    return "floor read K=10 f32+int8 (41 B/row)" if narrow else "floor read K=10 f64 (88 B/row)"


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f}/{five:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--recal-size", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--base", type=str, default=None, help="checkout of the base commit")
    parser.add_argument("--recal-only", action="store_true", help="only the recalibration fits")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--speed", action="store_true",
                        help="binned_ece, reliability and the top-1 view at the last size: base vs new "
                             "in alternating subprocesses, with the memory floors")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of --speed")
    parser.add_argument("--threads", type=int, nargs="+", default=[2, 1], help="NUMBA_NUM_THREADS of --speed")
    parser.add_argument("--speed-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--table", type=str, default=None,
                        help="print the --speed table of an earlier run's JSON (its --out) and stop")
    parser.add_argument("--out", type=str, default="benchmarks/results/bench_kernels.json")
    args = parser.parse_args()
    if args.table:
        print(speed_markdown(json.loads(Path(args.table).read_text())))
        return
    if args.speed_worker:
        print(json.dumps(speed_timings(args.sizes[-1], args.repeat)))
        return
    if args.speed:
        speed_main(args)
        return
    if args.worker:  # calviz timings only, as JSON (run under the base's PYTHONPATH)
        if args.recal_only:
            print(json.dumps({"recal": recal_timings(args.recal_size, args.repeat)}))
            return
        res = {str(n): calviz_timings(n, args.repeat, args.recal_size if n == args.sizes[0] else 0)
               for n in args.sizes}
        print(json.dumps(res))
        return
    if args.recal_only:
        recal_main(args)
        return
    import numba

    report = {"cores": os.cpu_count(), "numba_threads": numba.get_num_threads(), "load_start": _load(),
              "repeat": args.repeat, "sizes": {}}
    for n in args.sizes:
        entry = {}
        recal = args.recal_size if n == args.sizes[0] else 0
        if args.base:
            env = {**os.environ, "PYTHONPATH": args.base}
            cmd = [sys.executable, __file__, "--worker", "--sizes", str(n), "--repeat", str(args.repeat),
                   "--recal-size", str(recal)]
            entry["base"] = json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True,
                                                      text=True).stdout)[str(n)]
        entry["load_before_new"] = _load()
        entry["new"] = calviz_timings(n, args.repeat, recal)
        entry["presorted"] = presorted_timings(n, args.repeat)
        entry["peers"] = peer_timings(n, args.repeat)
        if recal:
            entry["recal_peers"], entry["recal_peer_diff"] = recal_peer_timings(recal, args.repeat)
        report["sizes"][str(n)] = entry
        print(f"n = {n} done (load {_load()})", file=sys.stderr)
    report["load_end"] = _load()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1))
    print(markdown(report))


def recal_main(args) -> None:
    """Recalibration fits only (n = ``--recal-size`` rows): base, this tree and the peers."""
    n = args.recal_size
    report = {"cores": os.cpu_count(), "load_start": _load(), "repeat": args.repeat, "n": n}
    if args.base:
        env = {**os.environ, "PYTHONPATH": args.base}
        cmd = [sys.executable, __file__, "--worker", "--recal-only", "--repeat", str(args.repeat),
               "--recal-size", str(n)]
        report["base"] = json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True,
                                                   text=True).stdout)["recal"]
    report["new"] = recal_timings(n, args.repeat)
    report["peers"], report["peer_diff"] = recal_peer_timings(n, args.repeat)
    report["load_end"] = _load()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1))
    lines = [f"n = {n:,} rows (fit + application on the same rows), cores {report['cores']}, load "
             f"{report['load_start']} at start, {report['load_end']} at end; medians of {args.repeat}", "",
             "| calviz | base ms | new ms | base/new |", "|---|---:|---:|---:|"]
    for name, ms in report["new"].items():
        b = report.get("base", {}).get(name)
        row = f"| {name} | {b:.1f} | {ms:.1f} | {b / ms:.2f}× |" if b else f"| {name} | | {ms:.1f} | |"
        lines.append(row)
    lines += ["", "| peer (fit + apply) | ms | max abs diff vs calviz |", "|---|---:|---|"]
    for name, ms in report["peers"].items():
        d = report["peer_diff"][name]
        lines.append(f"| {name} | {ms:.1f} | {d if isinstance(d, str) else f'{d:.1e}'} |")
    print("\n".join(lines))


def markdown(report: dict) -> str:
    lines = [f"cores {report['cores']}, numba threads {report['numba_threads']}, load (1/5 min) "
             f"{report['load_start']} at start, {report['load_end']} at end; medians of {report['repeat']}"]
    for n, entry in report["sizes"].items():
        n_int = int(n)
        lines += ["", f"n = {n_int:,}", "", "| function | base ms | new ms | base/new | new ns/row |",
                  "|---|---:|---:|---:|---:|"]
        base = entry.get("base", {})
        for name, ms in entry["new"].items():
            b = base.get(name)
            ratio = f"{b / ms:.2f}×" if b else ""
            lines.append(f"| {name} | {b:.1f} | {ms:.1f} | {ratio} | {ms * 1e6 / n_int:.1f} |" if b else
                         f"| {name} | | {ms:.1f} | | {ms * 1e6 / n_int:.1f} |")
        lines += ["", "| presorted / peer / floor | ms | ns/row |", "|---|---:|---:|"]
        for name, ms in {**entry["presorted"], **entry["peers"]}.items():
            if "bytes" in name:
                lines.append(f"| {name} | {ms:.2f} | |")
            else:
                lines.append(f"| {name} | {ms:.2f} | {ms * 1e6 / n_int:.1f} |")
        if "recal_peers" in entry:
            lines += ["", "| recalibration peer (fit + apply) | ms | max abs diff vs calviz |",
                      "|---|---:|---|"]
            for name, ms in entry["recal_peers"].items():
                d = entry["recal_peer_diff"][name]
                lines.append(f"| {name} | {ms:.1f} | {d if isinstance(d, str) else f'{d:.1e}'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
