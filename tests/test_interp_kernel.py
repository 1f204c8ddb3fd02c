"""The grid interpolation kernel behind the smooth-curve summaries equals ``np.interp`` to the last bit."""

from __future__ import annotations

import numpy as np
import pytest

import calviz
from calviz._kernels.smooth import interp


def _queries(rng, xp, n):
    """Random points in and beyond [xp[0], xp[-1]], the grid points themselves, their float neighbours,
    the ends, duplicates."""
    parts = [rng.uniform(xp[0] - 0.1, xp[-1] + 0.1, n), rng.choice(xp, n), xp,
             np.nextafter(xp, -np.inf), np.nextafter(xp, np.inf), [xp[0], xp[-1], 0.0, 1.0]]
    x = np.concatenate([np.asarray(p, dtype=float) for p in parts])
    return x[rng.permutation(x.shape[0])]


@pytest.mark.parametrize("grid", ["even", "uneven", "two points", "shifted"])
def test_equals_numpy_bit_for_bit(grid):
    rng = np.random.default_rng(len(grid))
    xp = {"even": np.linspace(0.0, 1.0, 4001), "uneven": np.sort(rng.uniform(size=300)),
          "two points": np.array([0.25, 0.75]), "shifted": np.linspace(-3.0, 7.0, 1001) ** 3}[grid]
    xp = np.unique(xp)
    fp = np.cumsum(rng.normal(size=xp.shape[0]))
    x = _queries(rng, xp, 140_000)  # above the threaded kernel's row threshold: chunks on threads
    np.testing.assert_array_equal(interp(x, xp, fp), np.interp(x, xp, fp))
    for n in (0, 1, 2):
        np.testing.assert_array_equal(interp(x[:n], xp, fp), np.interp(x[:n], xp, fp))


def test_non_finite_values_and_fallbacks():
    xp = np.linspace(0.0, 1.0, 11)
    fp = np.arange(11.0)
    fp[3], fp[4], fp[7] = np.inf, np.inf, np.nan  # numpy's NaN fall-backs between equal infinities
    x = np.concatenate([np.linspace(-0.5, 1.5, 2001), xp])
    np.testing.assert_array_equal(interp(x, xp, fp), np.interp(x, xp, fp))
    repeated = np.array([0.0, 0.5, 0.5, 1.0])  # not strictly increasing: numpy's own interpolation
    np.testing.assert_array_equal(interp(x, repeated, np.arange(4.0)), np.interp(x, repeated, np.arange(4.0)))


def test_ici_unchanged_by_the_kernel():
    rng = np.random.default_rng(5)
    p = np.round(rng.uniform(size=20_000), 3)  # ties, and predictions on the 4001-point grid
    y = (rng.uniform(size=p.shape[0]) < p**1.4).astype(int)
    r = calviz.ici(y, p)
    curve = calviz.smooth_reliability(y, p, n_resamples=0, grid_size=4001)
    d = np.abs(np.interp(p, curve.grid, curve.curve) - p)
    e50, e90 = np.quantile(d, [0.5, 0.9])
    assert (r.ici, r.e50, r.e90, r.emax) == (d.mean(), e50, e90, d.max())
