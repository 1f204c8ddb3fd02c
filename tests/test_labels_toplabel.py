"""Top-label ECE against MAPIE and a direct sum, the equal-width unweighted ACE against a direct sum, and
class names / pos_label at the data boundary (scikit-learn's convention)."""

from __future__ import annotations

import numpy as np
import pytest

import calviz


def _multiclass(seed, n, k=4, decimals=None):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(k), size=n)
    if decimals is not None:  # ties and confidences on bin edges
        probs = np.round(probs, decimals)
        probs[:, -1] = 1.0 - probs[:, :-1].sum(axis=1)
        probs = np.clip(probs, 0, 1)
        probs /= probs.sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(k, p=row ** 2 / (row ** 2).sum()) for row in probs])
    return labels, probs


def slow_top_label_ece(labels, probs, m, w=None):
    """Direct sum with calviz's bins [i/m, (i+1)/m), last closed."""
    w = np.ones(len(labels)) if w is None else np.asarray(w, float)
    pred = probs.argmax(axis=1)
    conf = probs.max(axis=1)
    per_class = []
    for c in np.unique(pred):
        rows = pred == c
        ids = np.minimum(np.floor(conf[rows] * m).astype(int), m - 1)
        ids = np.array([min(i + 1, m - 1) if x >= (i + 1) / m else (i - 1 if x < i / m else i)
                        for i, x in zip(ids, conf[rows], strict=True)])
        total, ww = 0.0, w[rows]
        yy, zz = (labels[rows] == c).astype(float), conf[rows]
        for b in np.unique(ids):
            s = ids == b
            total += abs((ww[s] * (yy[s] - zz[s])).sum())
        per_class.append(total / ww.sum())
    return float(np.mean(per_class))


@pytest.mark.parametrize("n_bins", [5, 10, 15])
def test_top_label_ece_equals_mapie(n_bins):
    mapie = pytest.importorskip("mapie.metrics.calibration")
    labels, probs = _multiclass(n_bins, 2000)
    ours = calviz.top_label_ece(labels, probs, n_bins=n_bins)
    # MAPIE's uniform split with num_bins = m + 1 points gives the m bins (i/m, (i+1)/m]
    assert ours.value == pytest.approx(mapie.top_label_ece(labels, probs, num_bins=n_bins + 1), abs=1e-12)
    assert ours.estimator == "top_label" and ours.target == "top1"


@pytest.mark.parametrize("weighted", [False, True])
def test_top_label_ece_direct_sum_with_ties(weighted):
    labels, probs = _multiclass(3, 600, k=3, decimals=1)
    w = np.random.default_rng(0).integers(1, 4, size=600) if weighted else None
    got = calviz.top_label_ece(labels, probs, n_bins=10, sample_weight=w).value
    assert got == pytest.approx(slow_top_label_ece(labels, probs, 10, w), abs=1e-12)
    if weighted:
        repeated = calviz.top_label_ece(np.repeat(labels, w), np.repeat(probs, w, axis=0), n_bins=10)
        assert got == pytest.approx(repeated.value, abs=1e-12)


def test_top_label_ece_binary_and_n_two():
    assert calviz.top_label_ece([1, 0], [0.8, 0.3], n_bins=10).value == pytest.approx((0.2 + 0.3) / 2)


def test_equal_width_ace_direct_sum():
    labels, probs = _multiclass(5, 800, k=3, decimals=2)
    m = 10
    per_class = []
    for c in range(3):
        z, y = probs[:, c], (labels == c).astype(float)
        ids = np.array([min(int(x * m), m - 1) for x in z])
        ids = np.array([i - 1 if x < i / m else (i + 1 if i + 1 < m and x >= (i + 1) / m else i)
                        for i, x in zip(ids, z, strict=True)])
        per_class.append(np.mean([abs(y[ids == b].mean() - z[ids == b].mean()) for b in np.unique(ids)]))
    got = calviz.ace(labels, probs, n_bins=m, scheme="equal_width")
    assert got.value == pytest.approx(np.mean(per_class), abs=1e-12) and got.scheme == "equal_width"


def test_pos_label_and_class_names():
    p = np.array([0.2, 0.7, 0.9, 0.4])
    named = calviz.as_calibration_data(["no", "yes", "yes", "no"], p, pos_label="yes")
    np.testing.assert_array_equal(named.labels, [0, 1, 1, 0])
    flipped = calviz.as_calibration_data(["no", "yes", "yes", "no"], 1 - p, pos_label="no")
    np.testing.assert_array_equal(flipped.labels, [1, 0, 0, 1])
    assert calviz.binned_ece(named).value == calviz.binned_ece([0, 1, 1, 0], p).value
    np.testing.assert_array_equal(calviz.as_calibration_data([-1, 1, 1, -1], p, pos_label=1).labels,
                                  [0, 1, 1, 0])
    probs = np.array([[0.2, 0.5, 0.3], [0.6, 0.2, 0.2], [0.1, 0.1, 0.8]])
    names = calviz.as_calibration_data(np.array(["dog", "cat", "eel"], dtype=object), probs)
    np.testing.assert_array_equal(names.labels, [1, 0, 2])  # sorted: cat, dog, eel


@pytest.mark.parametrize("y, p, options, message", [
    (["no", "yes"], [0.2, 0.7], {}, r"strings, the labels \{'no', 'yes'\}; pass pos_label="),
    (["a", "b", "c"], [0.2, 0.7, 0.1], {"pos_label": "a"}, "3 labels"),
    (["no", "yes"], [0.2, 0.7], {"pos_label": "maybe"}, r"pos_label='maybe' is not one of the labels"),
    (["a", "b"], [[0.2, 0.8], [0.6, 0.4]], {"pos_label": "a"}, "pos_label is for binary"),
    (["a", "b"], [[0.2, 0.5, 0.3], [0.6, 0.2, 0.2]], {}, r"2 class names \{'a', 'b'\} but y_prob has 3"),
])
def test_label_errors_show_the_labels_as_given(y, p, options, message):
    with pytest.raises(calviz.InputError, match=message):
        calviz.as_calibration_data(y, p, **options)


@pytest.mark.filterwarnings("ignore")
def test_equal_width_ace_equals_netcal():
    """netcal's ACE (equal-width bins, unweighted mean over the non-empty ones, top-1 for K classes), on
    continuous predictions: a prediction exactly on a bin edge (e.g. 0.1 of 10 bins) is binned by each
    library's own edge rule, and the two rules differ (measured: 0.08613 vs 0.08602 on 2-decimal
    predictions)."""
    netcal = pytest.importorskip("netcal.metrics")
    rng = np.random.default_rng(0)
    p = rng.uniform(size=2000)
    y = (rng.random(2000) < p ** 1.4).astype(int)
    assert calviz.ace(y, p, n_bins=10, scheme="equal_width", target="binary").value == pytest.approx(
        netcal.ACE(bins=10).measure(p, y), rel=1e-12)
    probs = rng.dirichlet(np.ones(3), size=2000)
    labels = np.array([rng.choice(3, p=row) for row in probs])
    assert calviz.ace(labels, probs, n_bins=10, scheme="equal_width", target="top1").value == pytest.approx(
        netcal.ACE(bins=10).measure(probs, labels), rel=1e-12)
