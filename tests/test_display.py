"""What the dashboard's views draw after a sequence of changes (a notebook session, no browser): the
T-Cal caption follows the target, equal-mass bars span the predictions made, the T-Cal axis stops near the
sample size, the status line speaks in words, the overall verdict is stated once, the comparison verdict's
colour says whether the news is good.  The served page's layout (legends, ticks, cut titles and tables,
accessible names) is checked in Chromium by tests/test_screenshots.py."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

from calviz.app.page import CalvizApp
from calviz.datasets import load_dataset
from calviz.present import frames


@pytest.fixture(scope="module")
def binary_app():
    app = CalvizApp(load_dataset("breast-cancer-gnb"), n_resamples=50, resampling="analytic")
    app.start()
    app.wait()
    return app


def test_equal_mass_bars_start_at_the_smallest_prediction(binary_app):
    app = binary_app
    app.controls.scheme = "equal_mass"
    app.wait()
    bars = app.views[0].sources["bars"].data
    rel = app.store.reliability.result
    assert rel.scheme == "equal_mass" and rel.value_range is not None
    low, high = rel.value_range
    assert low == pytest.approx(float(np.min(app.data.probs)))  # (binary target: P(y = 1))
    assert low > 0 and bars["x0"][0] == pytest.approx(low) and bars["x1"][-1] == pytest.approx(high)
    app.controls.scheme = "equal_width"
    app.wait()
    assert app.views[0].sources["bars"].data["x0"][0] == 0  # equal-width bins are [0, 1/m), …: drawn so


def test_tcal_axis_stops_near_the_sample_size_and_status_speaks_in_words(binary_app):
    app = binary_app
    view = app.views[1]
    result = app.store.tcal.result
    assert max(result.n_bins) > 10_000  # tested up to 16,384 bins for 228 rows
    assert view.figure.x_range.end <= 1.5 * result.n  # drawn up to n bins
    hidden = frames.tcal_frame(result)["hidden"]
    assert hidden > 0 and f"{hidden} finer scales" in html.unescape(view.note.object)
    app.controls.n_bins = 12  # a change computed now: the status line says how long it took
    app.wait()
    status = re.sub(r"<[^>]+>", "", html.unescape(app.status.text.object))
    took = status.split("last update")[1]
    assert "_" not in took and "tcal" not in took, status
    assert re.search(r"\d+(\.\d)? (ms|s|min)", took), status


def test_overall_verdict_is_shown_once_with_its_reasons(binary_app):
    text = html.unescape(binary_app.verdict.text.object)
    assert "Miscalibrated" in text and "T-Cal rejects" in text and "the ECE interval includes 0" in text
    assert "why the methods disagree" in text and "not that the model is calibrated" in text
    assert frames.MISCALIBRATED in text


def test_tcal_caption_follows_the_target():
    app = CalvizApp(load_dataset("tabular-gnb"), n=2000, n_resamples=50, resampling="analytic")
    app.start()
    app.wait()
    for target, top_k_words in (("topk", True), ("full", False), ("topk", True), ("auto", False)):
        app.controls.target = target
        app.wait()
        note = app.views[1].note.object
        assert ("no top-k form" in note) is top_k_words, (target, note)


def test_comparison_verdict_colour_says_whether_the_news_is_good(binary_app):
    from types import SimpleNamespace

    from calviz.app.comparison_view import verdict_colour

    def outcome(mode, better, reject=True):
        comparison = SimpleNamespace(names=("before", "after"), better=better, reject=reject)
        return SimpleNamespace(mode=mode, groups=None, comparison=comparison)

    assert verdict_colour(outcome("recalibration", "after")) == frames.CALIBRATED
    assert verdict_colour(outcome("recalibration", "before")) == frames.MISCALIBRATED
    assert verdict_colour(outcome("recalibration", None, reject=False)) == frames.NEUTRAL
    assert verdict_colour(outcome("models", "after")) == frames.NEUTRAL
    groups = SimpleNamespace(mode="groups", groups=SimpleNamespace(rejected=("north",)), comparison=None)
    assert verdict_colour(groups) == frames.MISCALIBRATED


def test_comparison_tcal_ticks_never_crowd():
    from calviz.app.comparison_view import log_ticks

    assert log_ticks(1.33, 24_576) == [10, 100, 1000, 10_000]  # four decades: the powers of 10
    assert log_ticks(40, 96) == [50]  # within a decade: 1, 2, 5 × 10^k (not 40, 50, …, 90)
    assert log_ticks(1.3, 19) == [2, 5, 10]
