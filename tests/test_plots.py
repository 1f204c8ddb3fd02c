"""calviz.plots: result objects → HoloViews elements (right elements, right counts, right colours)."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pytest

from calviz import plots
from calviz._data import as_calibration_data
from calviz.analysis import (
    MAX_CLASS_PANELS,
    AnalysisOptions,
    MultiReliability,
    compute_bootstrap_interval,
    compute_distance,
    compute_interval,
    compute_reliability,
    compute_smooth,
    compute_tcal,
)


@pytest.fixture(scope="module")
def miscalibrated():
    rng = np.random.default_rng(3)
    p = rng.uniform(0.02, 0.98, 3000)
    y = (rng.random(p.size) < p**2).astype(int)  # overconfident: P(y=1 | p) = p²
    return as_calibration_data(y, p)


@pytest.fixture(scope="module")
def calibrated():
    rng = np.random.default_rng(4)
    p = rng.uniform(0, 1, 3000)
    return as_calibration_data((rng.random(p.size) < p).astype(int), p)


def _rendered(element):
    return hv.render(element, backend="bokeh")


def test_reliability_plot_bars_hist_and_colours(miscalibrated):
    options = AnalysisOptions(n_bins=12, alpha=0.05)
    rel = compute_reliability(miscalibrated, options)
    layout = plots.reliability_plot(rel)
    assert isinstance(layout, hv.Layout) and len(layout) == 2  # diagram + histogram
    main, hist = layout.values()
    bars = main.get(0)
    assert isinstance(bars, hv.Rectangles)
    nonempty = int((rel.counts > 0).sum())
    assert len(bars) == nonempty
    assert len(hist) == 12  # one histogram bar per bin, empty or not
    np.testing.assert_array_equal(hist.dimension_values("count"), rel.counts)
    # colour = does the per-bin interval cover the mean confidence (the diagonal)?
    sel = rel.counts > 0
    covered = (rel.low[sel] <= rel.mean_confidence[sel]) & (rel.mean_confidence[sel] <= rel.high[sel])
    colours = bars.dimension_values("color")
    assert list(colours) == [plots.CALIBRATED if c else plots.MISCALIBRATED for c in covered]
    assert (colours == plots.MISCALIBRATED).sum() >= 6  # p² is far from the diagonal in the middle
    diagonal = main.get(1)
    assert isinstance(diagonal, hv.Curve) and list(diagonal.dimension_values(1)) == [0.0, 1.0]
    errs = main.get(2)
    assert isinstance(errs, hv.ErrorBars) and len(errs) == nonempty
    _rendered(layout)


def test_reliability_plot_bin_count_follows_n_bins(calibrated):
    for m in (5, 17, 40):
        rel = compute_reliability(calibrated, AnalysisOptions(n_bins=m))
        parts = plots.reliability_elements(rel)
        assert len(parts["hist"]) == m
        assert len(parts["main"].get(0)) == int((rel.counts > 0).sum())


def test_reliability_with_smooth_curve_and_witness(miscalibrated):
    options = AnalysisOptions(n_bins=10)
    rel = compute_reliability(miscalibrated, options)
    smooth = compute_smooth(miscalibrated, options)
    _, witness = compute_distance(miscalibrated, options)
    layout = plots.reliability_plot(rel, smooth=smooth, witness=witness)
    assert len(layout) == 3
    main = list(layout.values())[0]
    curve = main.get(5)
    assert isinstance(curve, hv.Curve) and len(curve) == len(smooth.grid)
    band = main.get(4)
    assert isinstance(band, hv.Area)
    lo, hi = band.dimension_values("y"), band.dimension_values("y2")
    shown = np.isfinite(lo)  # the curve is left out where the predictions' density is ~0
    assert shown.sum() > len(lo) // 3
    assert np.all(lo[shown] <= hi[shown] + 1e-12)
    wit = list(layout.values())[2]
    assert isinstance(wit, hv.Curve)
    w = wit.dimension_values(1)
    assert len(w) == min(miscalibrated.n, 2000) and np.all(np.abs(w) <= 1 + 1e-9)
    _rendered(layout)


def test_reliability_elements_keep_their_structure_when_inputs_are_missing(miscalibrated):
    """A live view streams new results into the same figures: layer types never change."""
    rel = compute_reliability(miscalibrated, AnalysisOptions())
    full = plots.reliability_elements(rel, smooth=compute_smooth(miscalibrated, AnalysisOptions()))
    bare = plots.reliability_elements(None)
    for key in ("main", "hist", "witness"):
        assert type(full[key]) is type(bare[key])
    assert [type(x) for x in full["main"]] == [type(x) for x in bare["main"]]
    assert "not available" in bare["main"].opts.get().kwargs["title"]
    _rendered(hv.Layout(list(bare.values())))


def test_tcal_plot_points_per_scale_and_rejected_highlighted(miscalibrated, calibrated):
    res = compute_tcal(miscalibrated, AnalysisOptions(alpha=0.05), resampling="analytic")
    overlay = plots.tcal_plot(res)
    points = overlay.get(3)
    # the axis shows the scales with at most n bins (plots.tcal_shown_scales)
    rejected = np.asarray(res.statistics) >= np.asarray(res.critical_values)
    shown = np.asarray(res.n_bins) <= res.n
    assert not shown.all() and plots.tcal_frame(res)["hidden"] == int((~shown).sum())
    assert isinstance(points, hv.Points) and len(points) == shown.sum()
    np.testing.assert_allclose(points.dimension_values("bins"), np.asarray(res.n_bins, float)[shown])
    rejected = rejected[shown]
    assert list(points.dimension_values("color")) == [
        plots.MISCALIBRATED if r else plots.CALIBRATED for r in rejected
    ]
    assert res.reject and rejected.any()
    opts = overlay.opts.get().kwargs
    assert opts["logx"] is True
    assert "REJECT" in opts["title"] and "adjusted p" in opts["title"]
    ok = compute_tcal(calibrated, AnalysisOptions(alpha=0.05), resampling="analytic")
    assert "not rejected" in plots.tcal_caption(ok)
    _rendered(overlay)
    _rendered(plots.tcal_plot(None))


def test_long_default_titles_break_between_clauses():
    """A Bokeh title does not wrap (a long one is cut at the figure's edge): the default titles of the
    T-Cal and interval plots break after "; ", keeping each clause whole."""
    text = "a" * 50 + "; " + "b" * 30 + "; " + "c" * 10 + "; " + "d" * 90
    assert plots._title_lines(text) == "a" * 50 + ";\n" + "b" * 30 + "; " + "c" * 10 + ";\n" + "d" * 90
    assert plots._title_lines(text).replace(";\n", "; ") == text
    assert plots._title_lines("short; clauses") == "short; clauses"


def test_interval_plot_two_rows_and_regime_caption(miscalibrated, calibrated):
    options = AnalysisOptions(n_bins=10, alpha=0.1, n_resamples=50)
    asym = compute_interval(miscalibrated, options)
    boot = compute_bootstrap_interval(miscalibrated, options)
    overlay = plots.interval_plot(asym, boot)
    segs = overlay.get(1)
    assert len(segs) == 2
    np.testing.assert_allclose(segs.dimension_values("low"), [asym.low, boot.low])
    np.testing.assert_allclose(segs.dimension_values("high"), [asym.high, boot.high])
    assert segs.dimension_values("color")[0] == plots.MISCALIBRATED  # excludes 0
    assert "90%" in overlay.opts.get().kwargs["title"]
    # bootstrap still running: same two rows, the second one empty
    pending = plots.interval_plot(asym, None, pending="bootstrap running…")
    assert len(pending.get(1)) == 2 and np.isnan(pending.get(1).dimension_values("low")[1])
    cal = compute_interval(calibrated, options)
    caption = plots.interval_caption(cal)
    assert "90% interval" in caption and plots.BOOTSTRAP_NOTE in caption
    assert "T₊" not in caption and "z₂" not in caption  # plain words; the case rule is in the details
    if cal.low == 0:
        assert "Consistent with calibration" in caption
        details = plots.interval_details(cal)
        assert "lower end is 0" in details or "max(T₊ − z₁ s, 0)" in details
    _rendered(overlay)
    _rendered(pending)


def test_interval_caption_says_miscalibrated_whenever_the_interval_excludes_0():
    """In the "near" case (the estimate within two of its standard errors of 0) the lower end may or may
    not be 0: the caption follows the lower end, not the case name (it said "close to calibrated" of
    [0.0596, 0.1151])."""
    from calviz._intervals import ECEInterval

    def near(low):
        return ECEInterval(estimate=0.0893, low=low, high=0.1151, estimate_sq=0.0893**2, low_sq=low**2,
                           high_sq=0.1151**2, statistic=0.0893**2, se=0.003, null_sd=0.0001, level=0.95,
                           alpha=0.05, n=719, n_bins=15, n_nonempty=9, method="asymptotic",
                           regime="near: T+ < 2 z1 s, L = max(T+ - z1 s, 0)", target="top1", n_classes=10)

    caption = plots.interval_caption(near(0.0596))
    assert caption.split(". ")[1].startswith("Miscalibrated: the interval excludes 0"), caption
    assert "Consistent with calibration" in plots.interval_caption(near(0.0))


def test_distance_plot_every_measure_with_inequality(miscalibrated):
    bounds, _ = compute_distance(miscalibrated, AnalysisOptions())
    overlay = plots.distance_plot(bounds)
    pts = overlay.get(1)
    rows = plots.distance_measures(bounds)
    assert len(pts) == len(rows) == len(bounds.measures)
    assert all(r["inequality"] for r in rows)  # the inequality behind each bound, shown in hover
    band = overlay.get(2)
    np.testing.assert_allclose(
        [band.dimension_values("low")[0], band.dimension_values("high")[0]], [bounds.lower, bounds.upper]
    )
    assert "dCE" in band.dimension_values("lower_from")[0] or band.dimension_values("lower_from")[0]
    caption = plots.distance_caption(bounds)
    assert "empirical distribution" in caption and "Gaussian" in caption
    yticks = overlay.opts.get().kwargs["yticks"]
    assert (0.0, "dCE (implied)") in yticks
    # a size, not a test: the implied interval is never in a verdict colour (it excludes 0 even for a
    # calibrated sample)
    assert band.dimension_values("color")[0] == plots.ESTIMATE
    _rendered(overlay)
    empty = plots.distance_plot(None)
    assert len(empty.get(1)) == 5
    _rendered(empty)


def test_format_pvalue():
    assert plots.format_pvalue(0.0) == "< 0.0001"
    assert plots.format_pvalue(0.04) == "0.0400"
    assert plots.format_pvalue(None) == "—"


# -- vector targets: per-rank (topk) and per-class (full) reliability --------------------------------


@pytest.fixture(scope="module")
def ties_and_edges():
    """K = 4 rows with tied probabilities (rank order: lower class first) and values exactly on the
    equal-width edges i/5, plus random rows so that most bins hold several samples."""
    fixed = np.array(
        [
            [0.4, 0.4, 0.2, 0.0],  # tie for rank 1/2: class 0 ranks first
            [0.4, 0.4, 0.2, 0.0],
            [0.25, 0.25, 0.25, 0.25],  # four-way tie
            [0.25, 0.25, 0.25, 0.25],
            [0.6, 0.2, 0.2, 0.0],  # 0.6 and 0.2 are bin edges for m = 5
            [0.2, 0.6, 0.0, 0.2],
            [0.0, 0.0, 0.2, 0.8],
            [1.0, 0.0, 0.0, 0.0],  # 1.0: the last (closed) bin
            [0.0, 0.4, 0.6, 0.0],
        ]
    )
    fixed_labels = np.array([1, 0, 3, 2, 2, 0, 3, 0, 1])
    rng = np.random.default_rng(11)
    logits = rng.normal(size=(300, 4)) * 1.5
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(4, p=row) for row in probs])
    return as_calibration_data(np.concatenate([fixed_labels, labels]), np.vstack([fixed, probs]))


def _direct_bins(z, y, m):
    """Equal-width bins [i/m, (i+1)/m) (last closed; a value on the float edge i/m goes to bin i),
    computed with plain numpy: counts, mean confidence and frequency per bin (NaN when empty)."""
    ids = np.searchsorted(np.arange(1, m) / m, z, side="right")
    counts = np.bincount(ids, minlength=m)
    with np.errstate(invalid="ignore", divide="ignore"):
        conf = np.bincount(ids, weights=z, minlength=m) / counts
        freq = np.bincount(ids, weights=y, minlength=m) / counts
    return counts, conf, freq


def test_topk_reliability_per_rank_matches_numpy(ties_and_edges):
    data, m, k = ties_and_edges, 5, 3
    rel = compute_reliability(data, AnalysisOptions(target="topk", top_k=k, n_bins=m, alpha=0.1))
    assert isinstance(rel, MultiReliability) and rel.kind == "rank" and len(rel) == k
    assert rel.labels == ("rank 1 (top-1)", "rank 2", "rank 3")
    # the r-th ranked class, ties to the lower class index (stable sort of -p)
    order = np.argsort(-data.probs, axis=1, kind="stable")
    assert list(order[0, :2]) == [0, 1] and list(order[2]) == [0, 1, 2, 3]
    for r in range(k):
        z = data.probs[np.arange(data.n), order[:, r]]
        y = (order[:, r] == data.labels).astype(float)
        counts, conf, freq = _direct_bins(z, y, m)
        panel = rel.panels[r]
        np.testing.assert_array_equal(panel.counts, counts)
        np.testing.assert_allclose(panel.mean_confidence, conf, equal_nan=True)
        np.testing.assert_allclose(panel.observed_frequency, freq, equal_nan=True)
        assert rel.positives[r] == int(y.sum())
        assert panel.level == pytest.approx(0.9)
        sel = counts > 0
        assert np.all((panel.low[sel] <= freq[sel] + 1e-12) & (freq[sel] <= panel.high[sel] + 1e-12))
    # the tied rows: row 0 has label 1, which ranks second; row 1 has label 0, which ranks first
    z2, y2 = data.topk(2)
    assert list(y2[0]) == [0.0, 1.0] and list(y2[1]) == [1.0, 0.0]
    # rank 1 is the top-1 diagram
    top1 = compute_reliability(data, AnalysisOptions(target="top1", n_bins=m, alpha=0.1))
    np.testing.assert_allclose(rel.panels[0].observed_frequency, top1.observed_frequency, equal_nan=True)


def test_full_reliability_per_class_matches_numpy(ties_and_edges):
    data, m = ties_and_edges, 5
    rel = compute_reliability(data, AnalysisOptions(target="full", n_bins=m, scheme="equal_width"))
    assert isinstance(rel, MultiReliability) and rel.kind == "class" and len(rel) == 4
    assert list(rel.index) == [0, 1, 2, 3] and rel.n_omitted == 0
    for i, c in enumerate(rel.index):
        z, y = data.probs[:, c], (data.labels == c).astype(float)
        counts, conf, freq = _direct_bins(z, y, m)
        np.testing.assert_array_equal(rel.panels[i].counts, counts)
        np.testing.assert_allclose(rel.panels[i].mean_confidence, conf, equal_nan=True)
        np.testing.assert_allclose(rel.panels[i].observed_frequency, freq, equal_nan=True)
        assert rel.positives[i] == int(y.sum())


def test_full_reliability_with_many_classes_keeps_the_largest_classes():
    rng = np.random.default_rng(2)
    K = MAX_CLASS_PANELS + 3
    weights = np.linspace(1.0, 3.0, K)
    labels = rng.choice(K, size=4000, p=weights / weights.sum())
    probs = rng.dirichlet(np.ones(K), size=labels.size)
    data = as_calibration_data(labels, probs)
    rel = compute_reliability(data, AnalysisOptions(target="full"))
    support = np.bincount(labels, minlength=K)
    expected = np.sort(np.argsort(-support, kind="stable")[:MAX_CLASS_PANELS])
    assert list(rel.index) == list(expected) and rel.n_omitted == 3
    assert "Showing the 10 classes with the most samples" in plots.reliability_caption(rel)
    assert len(plots.class_reliability_elements(rel)) == MAX_CLASS_PANELS


def test_rank_elements_one_curve_per_rank(ties_and_edges):
    rel = compute_reliability(ties_and_edges, AnalysisOptions(target="topk", top_k=3, n_bins=5))
    parts = plots.rank_reliability_elements(rel)
    curves = [el for el in parts["main"] if isinstance(el, hv.Curve) and el.label]
    assert [c.label for c in curves] == ["rank 1 (top-1)", "rank 2", "rank 3"]
    # markers and whiskers of all ranks: one element each, a row per non-empty bin, coloured by rank
    (marks,) = [el for el in parts["main"] if isinstance(el, hv.Scatter)]
    (whiskers,) = [el for el in parts["main"] if isinstance(el, hv.Segments)]
    ranks = marks.dimension_values("rank")
    for r, panel in enumerate(rel.panels, start=1):
        sel = panel.counts > 0
        mine = ranks == rel.labels[r - 1]
        assert mine.sum() == sel.sum()
        np.testing.assert_allclose(marks.dimension_values("frequency")[mine], panel.observed_frequency[sel])
        np.testing.assert_allclose(whiskers.dimension_values("low")[mine], panel.low[sel])
        np.testing.assert_allclose(whiskers.dimension_values("high")[mine], panel.high[sel])
        assert set(marks.dimension_values("color")[mine]) == {plots.rank_colour(r)}
        assert curves[r - 1].opts.get().kwargs["color"] == plots.rank_colour(r)
    assert len({plots.rank_colour(r) for r in (1, 2, 3)}) == 3
    (hist,) = list(parts["hist"])
    assert len(hist) == 3 * 5  # every bin of every rank
    np.testing.assert_array_equal(
        hist.dimension_values("count"), np.concatenate([panel.counts for panel in rel.panels])
    )
    layout = plots.reliability_view(rel)
    assert len(layout) == 2  # diagram + histograms; no smooth curve or witness panel
    _rendered(layout)


def test_class_elements_one_panel_per_class(ties_and_edges):
    rel = compute_reliability(ties_and_edges, AnalysisOptions(target="full", n_bins=6))
    panels = plots.class_reliability_elements(rel)
    assert list(panels) == ["class 0", "class 1", "class 2", "class 3"]
    for i, overlay in enumerate(panels.values()):
        bars = overlay.get(0)
        assert len(bars) == int((rel.panels[i].counts > 0).sum())
        assert set(bars.dimension_values("panel")) == {f"class {i}"}
        assert isinstance(overlay.get(1), hv.Curve)  # the diagonal
        assert overlay.opts.get().kwargs["title"].startswith(f"class {i} · ")
    layout = plots.reliability_view(rel, smooth=object(), witness=object())  # scalar-only extras ignored
    assert len(layout) == 4
    _rendered(layout)
    assert plots.class_grid_columns(4) == 2 and plots.class_grid_columns(10) == 3
    assert plots.class_grid_columns(10, max_cols=5) == 5 and plots.class_grid_columns(2) == 2


def test_binary_topk_and_full_keep_the_binary_diagram(miscalibrated):
    for target in ("topk", "full"):
        rel = compute_reliability(miscalibrated, AnalysisOptions(target=target, n_bins=10))
        assert not plots.is_multi(rel)
        binary = compute_reliability(miscalibrated, AnalysisOptions(target="binary", n_bins=10))
        np.testing.assert_array_equal(rel.counts, binary.counts)


def test_tcal_view_says_why_no_critical_value_is_drawn_and_what_full_scales_count():
    """A sequential y-only test that accepts stops before estimating critical values (all inf): the
    caption says so instead of promising a dashed line; full calibration of K classes counts bins per
    axis (the scale of 4 bins per axis has 4^(K−1) cells)."""
    import calviz

    rng = np.random.default_rng(0)
    p = rng.uniform(size=2000)
    y = (rng.uniform(size=2000) < p).astype(int)
    accepted = calviz.adaptive_tcal(y, p, seed=0)
    assert accepted.decision == "accept" and not np.isfinite(accepted.critical_values).any()
    assert "no critical values are drawn" in plots.tcal_caption(accepted)
    analytic = calviz.adaptive_tcal(y, p, resampling="analytic")
    assert "no critical values" not in plots.tcal_caption(analytic)
    P = rng.dirichlet(np.ones(4), size=500)
    full = calviz.adaptive_tcal(rng.integers(0, 4, 500), P, target="full", resampling="analytic")
    label = plots.tcal_xlabel(False, full)
    assert label == "bins per axis m (m³ simplex cells; log scale)"
    assert "dashed" not in plots.tcal_marks(accepted)  # (no dashed line is drawn)
    assert "; dashed: its critical value;" in plots.tcal_marks(analytic)
    assert plots.tcal_xlabel(False, analytic) == "number of bins at each dyadic scale (log scale)"
