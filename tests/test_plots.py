"""calviz.plots: result objects → HoloViews elements (right elements, right counts, right colours)."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pytest

from calviz import plots
from calviz.analysis import (
    AnalysisOptions,
    compute_bootstrap_interval,
    compute_distance,
    compute_interval,
    compute_reliability,
    compute_smooth,
    compute_tcal,
)
from calviz.data import as_calibration_data


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
    assert isinstance(points, hv.Points) and len(points) == len(res.n_bins)
    np.testing.assert_allclose(points.dimension_values("bins"), np.asarray(res.n_bins, float))
    rejected = np.asarray(res.statistics) >= np.asarray(res.critical_values)
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
    assert "90% interval" in caption and "Regime" in caption
    if cal.low == 0:
        assert "consistent with a calibrated model" in caption or "max(T₊ − z₁ s, 0)" in caption
    _rendered(overlay)
    _rendered(pending)


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
    _rendered(overlay)
    empty = plots.distance_plot(None)
    assert len(empty.get(1)) == 5
    _rendered(empty)


def test_format_pvalue():
    assert plots.format_pvalue(0.0) == "< 0.0001"
    assert plots.format_pvalue(0.04) == "0.0400"
    assert plots.format_pvalue(None) == "—"
