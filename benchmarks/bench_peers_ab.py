"""calviz against its fastest peer, alternating run by run in one process (A/B), for the comparisons a
loaded machine leaves uncertain when each side is timed minutes apart (``bench_kernels.py``).

    nice python benchmarks/bench_peers_ab.py --repeat 5

Per pair: calviz and the peer run alternately ``--repeat`` times after one warm-up each, so a change of the
machine's load hits both; medians and the ratio calviz / peer (< 1: calviz faster).  Data as in
``bench_kernels.py`` (the same seeds).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from bench_kernels import binary_data, multiclass_data


def _ab(ours, peer, repeat: int) -> dict:
    ours(), peer()  # warm-up
    times = {"calviz": [], "peer": []}
    for _ in range(repeat):
        for name, fn in (("calviz", ours), ("peer", peer)):
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    out = {f"{name} ms": float(np.median(t) * 1e3) for name, t in times.items()}
    out["calviz / peer"] = out["calviz ms"] / out["peer ms"]
    out["load"] = os.getloadavg()[:2]
    return out


def main() -> None:
    import calviz
    from calviz._recalibration import _fit_map

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="+", default=None)
    args = parser.parse_args()
    from netcal.binning import IsotonicRegression as NetcalIsotonic
    from netcal.scaling import TemperatureScaling
    from probcal.metrics.binned import ece as probcal_ece
    from relplot.metrics import binnedECE

    p6, y6 = binary_data(1_000_000)
    full6 = np.column_stack([1.0 - p6, p6])
    pairs = {
        "binned_ece equal width vs relplot binnedECE, 10^6": (
            lambda: calviz.binned_ece(y6, p6, n_bins=15), lambda: binnedECE(p6, y6, nbins=15)),
        "isotonic map (fit + apply) vs netcal IsotonicRegression, 10^6": (
            lambda: _fit_map("isotonic", full6, y6, 15).transform(p6),
            lambda: NetcalIsotonic().fit(p6, y6).transform(p6)),
        "temperature map binary vs netcal TemperatureScaling, 10^6": (
            lambda: _fit_map("temperature", full6, y6, 15).transform(p6),
            lambda: TemperatureScaling().fit(p6, y6).transform(p6)),
    }
    report = {"cores": os.cpu_count(), "repeat": args.repeat, "pairs": {}}
    for name, (ours, peer) in pairs.items():
        if args.only and not any(word in name for word in args.only):
            continue
        report["pairs"][name] = _ab(ours, peer, args.repeat)
        print(name, report["pairs"][name], flush=True)
    if not args.only or any(word in "equal mass 10^7" for word in args.only):
        p7, y7 = binary_data(10_000_000)
        name = "binned_ece equal mass vs probcal ece mass, 10^7"
        report["pairs"][name] = _ab(lambda: calviz.binned_ece(y7, p7, n_bins=15, scheme="equal_mass"),
                                    lambda: probcal_ece(y7, p7, n_bins=15, strategy="mass"), args.repeat)
        print(name, report["pairs"][name], flush=True)
        del p7, y7
    if not args.only or any(word in "K=10" for word in args.only):
        probs, labels = multiclass_data(1_000_000)
        name = "temperature map K=10 vs netcal TemperatureScaling, 10^6"
        report["pairs"][name] = _ab(lambda: _fit_map("temperature", probs, labels, 15).transform(probs),
                                    lambda: TemperatureScaling().fit(probs, labels).transform(probs),
                                    max(2, args.repeat // 2))
        print(name, report["pairs"][name], flush=True)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
