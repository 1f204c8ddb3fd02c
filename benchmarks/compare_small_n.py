"""Level of calviz.compare's test of equal calibration at small n, by simulation.

Two equally miscalibrated binary models of the same examples: z ~ U(0, 1), y ~ Bernoulli(z), model a
predicts z + 0.05 and model b z − 0.05 (clipped to [0, 1]), so θ_a = θ_b and H₀ holds.  The paired
statistic and its standard error are those of ``calviz.compare`` (``paired_difference``, 15 equal-width
bins); the test rejects when the two-sided normal p-value is ≤ α = 0.05.  The rejection rate is reported
with its Monte Carlo standard error √(0.05·0.95/R).

A second table does the same for 3-class models through ``calviz.compare`` (top-1 and classwise views):
two features x₁, x₂ uniform on 30 values, labels drawn from Q(x₁, x₂) = softmax(A_{x₁} + A_{x₂}) (A with
N(0, 1.5²) entries, symmetric in x₁ and x₂), model a predicts the temperature-1.5 softening of
E[Q | x₁] and model b the same of E[Q | x₂] — equally calibrated by symmetry.  It also reports the ratio of
the standard deviation of D over the simulations to the root mean square of the reported standard error.

Run: ``python benchmarks/compare_small_n.py`` (``--reps 4000``, ``--seed 99``).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy import stats

from calviz._comparison import paired_difference


def rejection_rate(n: int, reps: int, rng: np.random.Generator, n_bins: int = 15,
                   alpha: float = 0.05) -> float:
    rejected = 0
    for _ in range(reps):
        z = rng.uniform(size=n)
        y = (rng.uniform(size=n) < z).astype(float)
        d = paired_difference(np.clip(z + 0.05, 0, 1), y, np.clip(z - 0.05, 0, 1), y, n_bins=n_bins)
        rejected += d.se > 0 and 2 * stats.norm.sf(abs(d.difference / d.se)) <= alpha
    return rejected / reps


def _softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def multiclass_rates(n: int, reps: int, rng: np.random.Generator, target: str, class_index: int = 0,
                     alpha: float = 0.05) -> tuple[float, float]:
    """(rejection rate, sd of D / rms of its standard error) of the two symmetric 3-class models."""
    import calviz

    design = np.random.default_rng(5)
    A = 1.5 * design.normal(size=(30, 3))
    Q = _softmax(A[:, None, :] + A[None, :, :])
    model = _softmax(np.log(Q.mean(axis=1)) / 1.5)  # E[Q | one feature], softened by temperature 1.5
    rejected, differences, ses = 0, [], []
    for _ in range(reps):
        x1, x2 = rng.integers(0, 30, n), rng.integers(0, 30, n)
        y = (Q[x1, x2].cumsum(axis=1) < rng.uniform(size=(n, 1))).sum(axis=1)
        result = calviz.compare(y, model[x1], model[x2], target=target, class_index=class_index, tcal=False,
                                alpha=alpha)
        rejected += result.reject
        differences.append(result.difference)
        ses.append(result.se)
    return rejected / reps, float(np.std(differences) / np.sqrt(np.mean(np.square(ses))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=99)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    print("| n | rejection rate at α = 0.05 | Monte Carlo s.e. |\n|---|---|---|")
    for n in (100, 300):
        print(f"| {n} | {rejection_rate(n, args.reps, rng):.3f} | {np.sqrt(0.05 * 0.95 / args.reps):.4f} |")
    print("\n| 3-class view | n | rejection rate at α = 0.05 | sd(D) / rms(se) |\n|---|---|---|---|")
    for target, class_index in (("top1", 0), ("classwise", 1)):
        for n in (200, 500, 2000):
            rate, ratio = multiclass_rates(n, args.reps, rng, target, class_index)
            view = target if target == "top1" else f"classwise, class {class_index}"
            print(f"| {view} | {n} | {rate:.3f} | {ratio:.3f} |")
    print(f"\n{args.reps} data sets per row, seed {args.seed}, os.cpu_count() = {os.cpu_count()}, "
          f"wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
