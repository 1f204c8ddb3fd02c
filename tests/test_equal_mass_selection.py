"""Equal-mass bins without a sort: the radix selection of the order statistics at the edge ranks and the
table-driven bin sums, against sort- and searchsorted-based references on inputs with ties, duplicates,
values on the edges, −0.0, n = 1 and 2, and inputs concentrated enough to need every histogram pass;
and the radix sort of the T-Cal keys and of the cumulative tests' two groups against ``np.sort``."""

from __future__ import annotations

import numpy as np
import pytest

import calviz
from calviz._binning import equal_mass_edges, order_statistics
from calviz._ece import equal_mass_sums
from calviz._kernels.classical import edge_bin_sums
from calviz._kernels.sorting import radix_sort_keys, sort_unit_values_by_label


def _reference_edges(z, m):
    """The sort-based equal-mass edges (the interior edge j is the sorted value at rank round(j n / m);
    duplicates and edges at 0 dropped)."""
    z = np.asarray(z, dtype=np.float64)
    n = z.shape[0]
    if n == 0:
        return np.array([0.0, 1.0])
    ranks = np.arange(1, n) if m >= n else np.round(np.arange(1, m) * (n / m)).astype(np.int64)
    ranks = ranks[(ranks > 0) & (ranks < n)]
    interior = np.unique(np.sort(z)[ranks])
    return np.concatenate([[0.0], interior[interior > 0.0], [1.0]])


def _reference_sums(z, y, inner_edges):
    """Per-bin count, Σz, Σy by searchsorted and a sequential loop in row order."""
    bins = np.searchsorted(inner_edges, z, side="right")
    m = inner_edges.shape[0]
    count, z_sum, y_sum = np.zeros(m + 1, dtype=np.int64), np.zeros(m + 1), np.zeros(m + 1)
    for b, v, w in zip(bins.tolist(), z.tolist(), y.tolist(), strict=True):
        count[b] += 1
        z_sum[b] += v
        y_sum[b] += w
    return count, z_sum, y_sum


def _random_values(rng, n, kind):
    if kind == "uniform":
        return rng.uniform(size=n)
    if kind == "few values":
        return rng.choice([0.0, 0.25, 0.5, 1.0], size=n)
    if kind == "rounded":
        return np.round(rng.uniform(size=n), 2)
    if kind == "tiny":
        return rng.uniform(size=n) ** 30  # many binades
    if kind == "constant":
        return np.full(n, rng.uniform())
    if kind == "signed zeros":
        return rng.choice([-0.0, 0.0, 0.5, 1.0], size=n)
    raise ValueError(kind)


KINDS = ["uniform", "few values", "rounded", "tiny", "constant", "signed zeros"]


@pytest.mark.parametrize("kind", KINDS)
def test_order_statistics_equal_the_sorted_values(kind):
    rng = np.random.default_rng(KINDS.index(kind))
    for _ in range(300):
        n = int(rng.integers(1, 200))
        z = _random_values(rng, n, kind)
        ranks = np.sort(rng.integers(0, n, size=int(rng.integers(1, 20))))  # repeated ranks too
        np.testing.assert_array_equal(order_statistics(z, ranks), np.sort(z)[ranks])
    z = _random_values(rng, 2, kind)
    np.testing.assert_array_equal(order_statistics(z, [0, 1]), np.sort(z))
    np.testing.assert_array_equal(order_statistics(np.array([0.3]), [0]), [0.3])


@pytest.mark.parametrize("values", [
    "spread", "one top bucket", "ties in one bucket", "half tied", "binades"])
def test_order_statistics_need_every_pass_on_concentrated_values(values):
    """Hundreds of thousands of keys sharing their high bits: several histogram passes before the few
    keys left are sorted (and, for exact ties, all 62 bits)."""
    rng = np.random.default_rng(5)
    n = 700_000
    z = {"spread": rng.uniform(size=n),
         "one top bucket": 0.5 + rng.uniform(size=n) * 1e-9,
         "ties in one bucket": 0.5 + rng.integers(0, 3, size=n) * 2.0**-52,
         "half tied": np.concatenate([np.full(n // 2, 0.3), rng.uniform(size=n - n // 2)]),
         "binades": rng.uniform(size=n) ** 40}[values]
    ranks = np.round(np.arange(1, 15) * (n / 15)).astype(np.int64)
    for r in (ranks, np.array([0, n - 1]), np.array([n // 2, n // 2])):
        np.testing.assert_array_equal(order_statistics(z, r), np.sort(z)[r])


@pytest.mark.parametrize("kind", KINDS)
def test_equal_mass_edges_equal_the_sort_based_edges(kind):
    rng = np.random.default_rng(10 + KINDS.index(kind))
    for _ in range(200):
        n = int(rng.integers(1, 120))
        z = _random_values(rng, n, kind)
        for m in (1, 2, 3, 10, 15, int(rng.integers(1, 150))):
            np.testing.assert_array_equal(equal_mass_edges(z, m), _reference_edges(z, m))


def test_edge_bin_sums_equal_searchsorted_and_a_sequential_sum():
    rng = np.random.default_rng(20)
    for trial in range(600):
        n = int(rng.integers(1, 150))
        z = _random_values(rng, n, KINDS[trial % len(KINDS)])
        y = (rng.uniform(size=n) < 0.5).astype(np.float64)
        # edges from the values themselves (values on edges), others, and ones sharing a value's top
        # bits (the buckets searched value by value)
        pool = np.concatenate([z, rng.uniform(size=4), np.nextafter(z, 1.0), [0.5, 1.0, 5e-324]])
        inner = np.unique(rng.choice(pool, size=int(rng.integers(0, 20))))
        inner = np.ascontiguousarray(inner[inner > 0.0])
        got = edge_bin_sums(z, y, inner, -1)  # (every argument, as calviz calls it: one numba signature)
        for a, b in zip(got, _reference_sums(z, y, inner), strict=True):
            np.testing.assert_array_equal(a, b)
        labels = rng.integers(0, 3, size=n)
        by_label = edge_bin_sums(z, labels, inner, 1)
        by_indicator = edge_bin_sums(z, (labels == 1).astype(np.float64), inner, -1)
        for a, b in zip(by_label, by_indicator, strict=True):
            np.testing.assert_array_equal(a, b)


def test_equal_mass_sums_of_a_class_equal_its_one_vs_rest_view():
    rng = np.random.default_rng(30)
    probs = rng.dirichlet([0.5, 0.5, 0.5], size=500)
    probs[:100] = np.round(probs[:100], 1)
    probs[:100] /= probs[:100].sum(axis=1, keepdims=True)
    labels = rng.integers(0, 3, size=500)
    data = calviz.as_calibration_data(labels, probs)
    for c in range(3):
        z, y = data.classwise(c)
        for a, b in zip(equal_mass_sums(probs[:, c], labels, 7, label=c), equal_mass_sums(z, y, 7),
                        strict=True):
            np.testing.assert_array_equal(a, b)


def test_ace_equals_the_sort_based_definition():
    """ACE over the classes: the unweighted mean over non-empty bins and classes of |ȳ − z̄|, with the
    sort-based edges and searchsorted bins (ties in the predictions included)."""
    rng = np.random.default_rng(40)
    for trial in range(20):
        n, k = int(rng.integers(2, 300)), int(rng.integers(2, 5))
        probs = rng.dirichlet(np.full(k, 0.6), size=n)
        if trial % 2:
            probs = np.round(probs, 1) + 1e-3
            probs /= probs.sum(axis=1, keepdims=True)
        labels = rng.integers(0, k, size=n)
        per_class = []
        for c in range(k):
            edges = _reference_edges(probs[:, c], 10)
            count, z_sum, y_sum = _reference_sums(probs[:, c], (labels == c).astype(float), edges[1:-1])
            keep = count > 0
            per_class.append(np.abs((y_sum[keep] - z_sum[keep]) / count[keep]).mean())
        assert calviz.ace(labels, probs, n_bins=10).value == float(np.mean(per_class))


@pytest.mark.parametrize("kind", KINDS)
def test_radix_sort_equals_np_sort(kind):
    rng = np.random.default_rng(50 + KINDS.index(kind))
    for n in [0, 1, 2, 3, *rng.integers(4, 3000, size=30).tolist()]:
        z = _random_values(rng, n, kind)
        y = rng.integers(0, 2, size=n)
        # the T-Cal keys: the bits of z with the label appended (ties in z ordered by the label)
        keys = ((z.view(np.int64) & 0x7FFFFFFFFFFFFFFF) << 1) | y
        np.testing.assert_array_equal(radix_sort_keys(keys.copy()), np.sort(keys))
        for labels in (y, y.astype(np.float64)):
            events, others = sort_unit_values_by_label(z, labels)
            np.testing.assert_array_equal(events, np.sort(z[labels == 1]))
            np.testing.assert_array_equal(others, np.sort(z[labels != 1]))
    big = rng.integers(0, 2**63 - 1, size=5000)  # every digit in use, the top one included
    np.testing.assert_array_equal(radix_sort_keys(big.copy()), np.sort(big))


def test_top1_of_rows_equals_argmax_take_and_compare():
    from calviz._kernels.views import top1_of_rows

    rng = np.random.default_rng(60)
    for trial in range(200):
        n, k = int(rng.integers(1, 80)), int(rng.integers(2, 7))
        probs = rng.dirichlet(np.full(k, 0.5), size=n)
        if trial % 2:  # ties in the maximum: the lowest index wins
            probs = np.round(probs, 1)
        labels = rng.integers(0, k, size=n)
        pred = probs.argmax(axis=1)
        for matrix in (probs, np.asfortranarray(probs), probs[::-1][::-1]):
            conf, correct = top1_of_rows(matrix, labels)
            np.testing.assert_array_equal(conf, np.take_along_axis(probs, pred[:, None], axis=1)[:, 0])
            np.testing.assert_array_equal(correct, (pred == labels).astype(np.float64))


def test_threaded_logistic_sums_equal_the_sequential_sums_bit_for_bit():
    """The Cox test's sums on all threads: the terms computed in parallel, added in row order by one
    thread, so every one of the six sums is the same double (blocks of 2^16 rows, a ragged last one)."""
    from calviz._kernels.classical import clipped_logit, logistic_sums, logistic_sums_threaded

    rng = np.random.default_rng(70)
    for n in (1, 2, 1000, 3 * (1 << 16) + 17):
        z = rng.uniform(size=n)
        z[: n // 10] = np.round(z[: n // 10], 1)  # ties, and 0 and 1 clipped
        labels = (rng.uniform(size=n) < z).astype(np.int64)
        x = clipped_logit(z, 1e-12)
        for y in (labels, labels.astype(np.float64)):
            for a, b in ((0.0, 1.0), (0.4, 0.6), (-30.0, 8.0)):
                assert logistic_sums_threaded(x, y, a, b) == logistic_sums(x, y, a, b)


def test_count_runs_stops_past_its_limit_and_is_exact_below():
    from calviz._kernels.sorting import count_runs

    rng = np.random.default_rng(80)
    for trial in range(300):
        n = int(rng.integers(0, 200))
        z = np.sort(_random_values(rng, n, KINDS[trial % len(KINDS)]))
        runs = 0 if n == 0 else 1 + int(np.count_nonzero(z[1:] != z[:-1]))  # −0.0 == 0.0 here too
        for limit in (1, 3, 20, 10_000):
            got = count_runs(z, limit)
            assert got == runs if runs <= limit else got == limit + 1


def test_ace_with_the_classes_on_threads_equals_the_sort_based_definition():
    """From ``PARALLEL_MIN_ROWS`` rows the classes' sums run on threads: the same ACE, to the last bit."""
    from calviz._threads import PARALLEL_MIN_ROWS

    rng = np.random.default_rng(41)
    n, k = PARALLEL_MIN_ROWS + 17, 3
    probs = rng.dirichlet(np.full(k, 0.6), size=n)
    probs[: n // 2] = np.round(probs[: n // 2], 2) + 1e-3  # ties, on the edges among them
    probs /= probs.sum(axis=1, keepdims=True)
    labels = rng.integers(0, k, size=n)
    per_class = []
    for c in range(k):
        edges = _reference_edges(probs[:, c], 15)
        bins = np.searchsorted(edges[1:-1], probs[:, c], side="right")
        count = np.bincount(bins, minlength=edges.shape[0] - 1)
        keep = count > 0
        z_sum, y_sum = _reference_sums(probs[:, c], (labels == c).astype(float), edges[1:-1])[1:]
        per_class.append(np.abs((y_sum[keep] - z_sum[keep]) / count[keep]).mean())
    assert calviz.ace(labels, probs, n_bins=15).value == float(np.mean(per_class))
