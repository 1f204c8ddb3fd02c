"""One-pass kernels, the presorted view and the recalibration fits: this tree against a base tree and the
peers, in the same run.

    nice python benchmarks/bench_kernels.py --base /tmp/base --sizes 1000000 10000000 --recal-size 1000000

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
    parser.add_argument("--out", type=str, default="benchmarks/results/bench_kernels.json")
    args = parser.parse_args()
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
