"""The dashboard's "draw more" for an undecided resampled T-Cal: the sequential test run on from the same
seed with a ten times larger cap, off the UI thread, its result shown in the T-Cal card."""

from __future__ import annotations

import numpy as np

import calviz
from calviz._tcal_decision import FIRST_BATCH
from calviz.app.draw_more import draw_more, more_resamples


def _data():
    rng = np.random.default_rng(3)  # undecided after 128 resamples, settled (accept) within 1280
    p = rng.uniform(0.05, 0.95, 600)
    y = (rng.uniform(size=600) < p ** 1.15).astype(int)
    return calviz.as_calibration_data(y, p)


def test_draw_more_settles_an_undecided_test_in_the_card():
    from calviz.app.page import CalvizApp

    data = _data()
    app = CalvizApp(data, resampling="y_only")
    app.refresh(inline=True)
    app.wait()
    options = app.controls.options(data.n)
    undecided = draw_more(data, options, FIRST_BATCH)  # what a test stopped at a cap of 128 shows
    assert undecided.decision == "undecided" and undecided.n_resamples == FIRST_BATCH
    assert more_resamples(undecided) == 10 * FIRST_BATCH
    app.store.seed("tcal_resampled", data, options, undecided)
    button = app.draw_more.button
    assert app.store.tcal.result is undecided and button.visible and not button.disabled
    assert "1,280" in button.label
    button.clicks += 1  # a click
    assert app.draw_more.done.wait(120)
    shown = app.store.tcal.result
    assert shown is not undecided and shown.max_resamples == 10 * FIRST_BATCH
    direct = calviz.adaptive_tcal(data, resampling="y_only", seed=int(options.seed),
                                  max_resamples=10 * FIRST_BATCH)
    assert shown.decision == direct.decision == "accept" and shown.pvalue == direct.pvalue
    assert not button.visible  # settled: nothing more to draw
    assert app.store.calls.get("tcal_resampled") == 1  # (the click's result was put in, not recomputed)
