"""Two T-Cal checks by simulation: the analytic test on calibrated confident models, and classwise T-Cal
over all classes (class_index=None, the default sequential y-only rule) on 10-class models.

1. Level of ``adaptive_tcal(resampling="analytic")`` at α = 0.05 when predictions sit near 0 or 1:
   binary z ~ Beta(0.2, 0.4), y ~ Bernoulli(z), n = 50 and 200; softmax of 10 classes (logits 6·N(0, 1)),
   labels drawn from the rows, classwise target of class 0, n = 200.  Where the κ₃-matched χ²_ν has ν < 1
   the p-value is floored by Cantelli's bound; ``--no-floor`` runs the same data without it (the former
   behaviour) for comparison.
2. Classwise over all classes: model = softmax(g / T), labels from softmax(g), g ~ 2·N(0, I₁₀), n = 200;
   T = 0.5 (over-confident: power) and T = 1 (calibrated: level), decisions counted.

Every rate is reported with its Monte Carlo standard error √(r(1 − r)/R) (at least that of 0.05).

Run: ``python benchmarks/tcal_confident.py [--reps 300]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import calviz
from calviz import _tcal_decision


def _softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _draw(rng: np.random.Generator, probs: np.ndarray) -> np.ndarray:
    return (probs.cumsum(axis=1) < rng.uniform(size=(probs.shape[0], 1))).sum(axis=1)


def _se(rate: float, reps: int) -> float:
    return float(np.sqrt(max(rate * (1 - rate), 0.05 * 0.95) / reps))


def analytic_level(reps: int) -> list[tuple[str, float]]:
    cases = {
        "binary, z ~ Beta(0.2, 0.4), n = 50": lambda r: (lambda z: ((r.random(50) < z).astype(int), z, {}))(
            r.beta(0.2, 0.4, 50)),
        "binary, z ~ Beta(0.2, 0.4), n = 200": lambda r: (lambda z: ((r.random(200) < z).astype(int), z, {}))(
            r.beta(0.2, 0.4, 200)),
        "softmax of 10 classes, classwise class 0, n = 200": lambda r: (
            lambda p: (_draw(r, p), p, {"target": "classwise", "class_index": 0}))(
            _softmax(6.0 * r.normal(size=(200, 10)))),
    }
    out = []
    for name, make in cases.items():
        rng = np.random.default_rng(11)
        rejected = 0
        for _ in range(reps):
            y, z, options = make(rng)
            rejected += calviz.adaptive_tcal(y, z, resampling="analytic", **options).reject
        out.append((name, rejected / reps))
    return out


def classwise_all(reps: int) -> list[tuple[float, dict]]:
    out = []
    for temperature in (0.5, 1.0):
        rng = np.random.default_rng(7)
        decisions: dict = {}
        for seed in range(reps):
            g = 2.0 * rng.normal(size=(200, 10))
            y = _draw(rng, _softmax(g))
            result = calviz.adaptive_tcal(y, _softmax(g / temperature), target="classwise", seed=seed)
            decisions[result.decision] = decisions.get(result.decision, 0) + 1
        out.append((temperature, decisions))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--no-floor", action="store_true",
                        help="the analytic test without the Cantelli floor")
    args = parser.parse_args()
    if args.no_floor:
        _tcal_decision.MIN_CHI2_DF = 0.0
    start = time.perf_counter()
    print(f"| analytic T-Cal, calibrated ({'no floor' if args.no_floor else 'Cantelli floor'}) | "
          "rejection rate at α = 0.05 | MC s.e. |\n|---|---|---|")
    for name, rate in analytic_level(args.reps):
        print(f"| {name} | {rate:.3f} | {_se(rate, args.reps):.3f} |")
    if not args.no_floor:
        print("\n| classwise over 10 classes, n = 200 | reject | accept | undecided |\n|---|---|---|---|")
        for temperature, d in classwise_all(args.reps):
            kind = "over-confident (T = 0.5)" if temperature < 1 else "calibrated (T = 1)"
            print(f"| {kind} | {d.get('reject', 0)}/{args.reps} | {d.get('accept', 0)}/{args.reps} | "
                  f"{d.get('undecided', 0)}/{args.reps} |")
    print(f"\n{args.reps} data sets per row; os.cpu_count() = {os.cpu_count()}; "
          f"wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
