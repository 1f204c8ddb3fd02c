"""calviz against every peer that computes the same thing, at each size in one run, alternating call by
call (the peer table of BENCHMARKS.md).

    nice python benchmarks/bench_peers.py --sizes 1000000 10000000 --recal-sizes 1000000 --repeat 5 --cap 20

Per row and size: one warm-up call of calviz and of each peer (JIT compilation, first-call caches; its
output is kept for the comparison of results), then ``--repeat`` rounds, each calling calviz and then every
peer once, so that a change of the machine's load hits every side; medians, the fastest peer, and the
ratio calviz / fastest peer (< 1: calviz faster).  A peer whose warm-up call takes longer than ``--cap``
seconds is not repeated (its one call is reported); a peer whose time at the previous size, scaled by the
size ratio, exceeds the cap is skipped at the next size and the table says so.  The recalibration rows
run only at ``--recal-sizes`` (default 10⁶: at 10⁷ the peers' fits take minutes a call, and the whole table
must fit in about ten minutes on a quiet machine).

The recalibration rows time the map alone — its fit and its application to the same rows, which is what
every peer does — and give the largest difference between the peer's recalibrated probabilities and
calviz's; ``recalibrate()`` (validation, the random split, the fit on one half and the application to the
other, the copies of the result) is timed in a row of its own.  Data: ``bench_kernels.binary_data`` and
``multiclass_data`` (the same seeds).  The JSON goes to ``--out``, a Markdown table to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from bench_kernels import binary_data, multiclass_data


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f}/{five:.1f}"


def _call(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _max_diff(peer_out, ours) -> float | None:
    if ours is None:
        return None
    try:
        a = np.asarray(peer_out, dtype=float)
        return float(np.max(np.abs(a.reshape(np.shape(ours)) - ours)))
    except Exception:  # a peer returns something else (a tuple of arrays, a float): no comparison
        return None


def rows(n: int, recal: bool = True) -> list[tuple[str, object, dict, bool]]:
    """(row name, calviz call, {peer name: call}, compare outputs?) at n rows; the recalibration rows
    only when ``recal``."""
    import calviz
    from calviz._recalibration import LOG_FLOOR, _fit_map

    p, y = binary_data(n)
    out = []
    peers: dict = {}
    try:
        from relplot.metrics import binnedECE

        peers["relplot binnedECE"] = lambda: binnedECE(p, y, nbins=15)
    except ImportError:
        pass
    probcal = _optional("probcal")
    if probcal is not None:
        from probcal.metrics.binned import ece as probcal_ece

        peers["probcal ece width"] = lambda: probcal_ece(y, p, n_bins=15, strategy="width")
    out.append(("binned_ece equal width", lambda: calviz.binned_ece(y, p, n_bins=15), peers, False))
    if probcal is not None:
        out.append(("binned_ece equal mass", lambda: calviz.binned_ece(y, p, n_bins=15, scheme="equal_mass"),
                    {"probcal ece mass": lambda: probcal_ece(y, p, n_bins=15, strategy="mass")}, False))
    from sklearn.calibration import _SigmoidCalibration, calibration_curve
    from sklearn.isotonic import IsotonicRegression

    out.append(("reliability", lambda: calviz.reliability(y, p, n_bins=15),
                {"scikit-learn calibration_curve": lambda: calibration_curve(y, p, n_bins=15)}, False))
    dst_p, dst_y = np.empty_like(p), np.empty_like(y)
    out.append(("floor: copy of p + y (16 B/row)", lambda: (np.copyto(dst_p, p), np.copyto(dst_y, y)), {},
                False))
    if not recal:
        return out
    full = np.column_stack([1.0 - p, p])
    score = np.log(np.clip(p, LOG_FLOOR, 1.0)) - np.log(np.clip(1.0 - p, LOG_FLOOR, 1.0))
    probs, labels = multiclass_data(n)
    netcal = _optional("netcal")
    if netcal is not None:
        from netcal.binning import IsotonicRegression as NetcalIsotonic
        from netcal.scaling import LogisticCalibration, TemperatureScaling
    temperature = {}
    if netcal is not None:
        temperature["netcal TemperatureScaling"] = lambda: TemperatureScaling().fit(p, y).transform(p)
    if probcal is not None:
        temperature["probcal TemperatureCalibrator"] = \
            lambda: probcal.TemperatureCalibrator().fit(p, y).predict_proba(p)
    out.append(("temperature map binary (fit + apply)",
                lambda: _fit_map("temperature", full, y, 15).transform(p), temperature, True))
    if netcal is not None:
        out.append(("temperature map K = 10 (fit + apply)",
                    lambda: _fit_map("temperature", probs, labels, 15).transform(probs),
                    {"netcal TemperatureScaling": lambda: TemperatureScaling().fit(probs, labels)
                     .transform(probs)}, True))
    platt = {"scikit-learn _SigmoidCalibration": lambda: _SigmoidCalibration().fit(score, y).predict(score)}
    if netcal is not None:
        platt["netcal LogisticCalibration"] = lambda: LogisticCalibration().fit(p, y).transform(p)
    if probcal is not None:
        platt["probcal PlattCalibrator"] = lambda: probcal.PlattCalibrator().fit(p, y).predict_proba(p)
    out.append(("Platt map (fit + apply)", lambda: _fit_map("platt", full, y, 15).transform(p), platt, True))
    isotonic = {"scikit-learn IsotonicRegression": lambda: IsotonicRegression(
        out_of_bounds="clip", y_min=0, y_max=1).fit(score, y).predict(score)}
    if netcal is not None:
        isotonic["netcal IsotonicRegression"] = lambda: NetcalIsotonic().fit(p, y).transform(p)
    if probcal is not None:
        isotonic["probcal IsotonicCalibrator"] = \
            lambda: probcal.IsotonicCalibrator().fit(p, y).predict_proba(p)
    out.append(("isotonic map (fit + apply)", lambda: _fit_map("isotonic", full, y, 15).transform(p),
                isotonic, True))
    for method in ("temperature", "platt", "isotonic"):
        out.append((f"recalibrate() {method}, binary (split, fit on half, apply to half)",
                    lambda m=method: calviz.recalibrate(y, p, method=m), {}, False))
    return out


def _optional(name: str):
    try:
        return __import__(name)
    except ImportError:
        return None


def run_row(name, ours, peers: dict, compare: bool, repeat: int, cap: float, skip: dict) -> dict:
    """Warm-ups, then ``repeat`` alternating rounds; ``skip``: {peer: reason} not to be called at all."""
    entry = {"load_start": _load(), "peers": {}}
    t_ours, out_ours = _call(ours)
    reference = np.asarray(out_ours, dtype=float) if compare else None
    del out_ours
    times = {"calviz": []}
    active = []
    for peer, fn in peers.items():
        if peer in skip:
            entry["peers"][peer] = {"skipped": skip[peer]}
            continue
        t_warm, out = _call(fn)
        info = {"warm-up s": t_warm, "max abs diff": _max_diff(out, reference) if compare else None}
        del out
        if t_warm > cap:
            info.update({"ms": t_warm * 1e3, "calls": 1, "note": f"one call: {t_warm:.1f} s > cap {cap:g} s"})
        else:
            active.append(peer)
            times[peer] = []
        entry["peers"][peer] = info
    for _ in range(repeat):
        times["calviz"].append(_call(ours)[0])
        for peer in active:
            times[peer].append(_call(peers[peer])[0])
    entry["calviz ms"] = float(np.median(times["calviz"]) * 1e3)
    for peer in active:
        entry["peers"][peer].update({"ms": float(np.median(times[peer]) * 1e3), "calls": repeat})
    timed = {peer: info["ms"] for peer, info in entry["peers"].items() if "ms" in info}
    if timed:
        fastest = min(timed, key=timed.get)
        entry["fastest peer"] = fastest
        entry["calviz / fastest peer"] = entry["calviz ms"] / timed[fastest]
    elif skip:  # every peer skipped: each would take longer than the cap, so the ratio is below this
        entry["calviz / fastest peer below"] = entry["calviz ms"] / (cap * 1e3)
    entry["load_end"] = _load()
    print(f"  {name}: {json.dumps({k: v for k, v in entry.items() if k != 'peers'})}", file=sys.stderr,
          flush=True)
    return entry


def markdown(report: dict) -> str:
    lines = [f"cores {report['cores']}, numba threads {report['numba_threads']}, repeat {report['repeat']}, "
             f"cap {report['cap']:g} s, load (1/5 min) {report['load_start']} at start, "
             f"{report.get('load_end')} at end, {report.get('seconds', float('nan')) / 60:.1f} min in all; "
             f"command: {report.get('command', '')}"]
    for n, table in report["sizes"].items():
        lines += ["", f"n = {int(n):,}", "",
                  "| row | calviz ms | fastest peer | peer ms | calviz / peer | other peers ms | load |",
                  "|---|---:|---|---:|---:|---|---|"]
        for name, e in table.items():
            fastest = e.get("fastest peer")
            others = []
            for peer, info in e["peers"].items():
                if peer == fastest:
                    continue
                if "skipped" in info:
                    others.append(f"{peer}: skipped ({info['skipped']})")
                else:
                    note = f" ({info['note']})" if "note" in info else ""
                    others.append(f"{peer} {info['ms']:.1f}{note}")
            peer_ms = f"{e['peers'][fastest]['ms']:.1f}" if fastest else ""
            ratio = f"{e['calviz / fastest peer']:.2f}×" if fastest else ""
            if "calviz / fastest peer below" in e:
                ratio = f"< {e['calviz / fastest peer below']:.2f}× (peers skipped)"
            if fastest and "note" in e["peers"][fastest]:
                peer_ms += f" ({e['peers'][fastest]['note']})"
            lines.append(f"| {name} | {e['calviz ms']:.1f} | {fastest or ''} | {peer_ms} | {ratio} | "
                         f"{'; '.join(others)} | {e['load_start']}→{e['load_end']} |")
        diffs = [(name, peer, info["max abs diff"]) for name, e in table.items()
                 for peer, info in e["peers"].items() if info.get("max abs diff") is not None]
        if diffs:
            lines += ["", "| recalibration row | peer | max abs diff of the probabilities vs calviz |",
                      "|---|---|---:|"]
            lines += [f"| {name} | {peer} | {d:.1e} |" for name, peer, d in diffs]
    return "\n".join(lines)


def main() -> None:
    import numba

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--recal-sizes", type=int, nargs="*", default=[1_000_000],
                        help="sizes with the recalibration rows (see above)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cap", type=float, default=60.0, help="seconds per peer call (see above)")
    parser.add_argument("--only", nargs="+", default=None, help="rows whose name contains one of these")
    parser.add_argument("--out", type=str,
                        default=str(Path(__file__).resolve().parent / "results" / "bench_peers.json"))
    args = parser.parse_args()
    report = {"cores": os.cpu_count(), "numba_threads": numba.get_num_threads(), "repeat": args.repeat,
              "cap": args.cap, "load_start": _load(), "command": " ".join(sys.argv), "sizes": {}}
    began = time.perf_counter()
    previous: dict = {}  # (row, peer) -> (n, ms) at the last size
    for n in sorted(args.sizes):
        print(f"n = {n} (load {_load()})", file=sys.stderr, flush=True)
        table = {}
        for name, ours, peers, compare in rows(n, recal=n in args.recal_sizes):
            if args.only and not any(word in name for word in args.only):
                continue
            skip = {}
            for peer in peers:
                if (name, peer) in previous:
                    n0, ms0 = previous[(name, peer)]
                    predicted = ms0 / 1e3 * n / n0
                    if predicted > args.cap:
                        skip[peer] = (f"{ms0 / 1e3:.1f} s at n = {n0:,}: about {predicted:.0f} s > cap "
                                      f"{args.cap:g} s")
            table[name] = run_row(name, ours, peers, compare, args.repeat, args.cap, skip)
            for peer, info in table[name]["peers"].items():
                if "ms" in info:  # (a skipped peer keeps its last measured size)
                    previous[(name, peer)] = (n, info["ms"])
            report["sizes"][str(n)] = table
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(report, indent=1))
    report["load_end"] = _load()
    report["seconds"] = time.perf_counter() - began
    Path(args.out).write_text(json.dumps(report, indent=1))
    print(markdown(report))


if __name__ == "__main__":
    main()
