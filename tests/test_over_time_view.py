"""The over-time registry view: data with a time column, its compute function, presentation, the app's
card (a click on a window draws its diagram), ``calviz check / report --time-column``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import calviz
from calviz._data import InputError
from calviz._params import InvalidParameterError
from calviz._timed import TimedData, auto_window, has_time, with_time
from calviz._windows import TimeColumn
from calviz.analysis import AnalysisOptions, analyze
from calviz.analysis.compute import compute_over_time
from calviz.present.over_time import (
    over_time_caption,
    over_time_frame,
    over_time_windows,
    window_diagram,
    window_label,
)

DAY = np.timedelta64(1, "D")


@pytest.fixture(scope="module")
def log():
    """Six days of a log, calibrated for three days, then y ~ Bernoulli(z²)."""
    rng = np.random.default_rng(3)
    n = 6000
    seconds = np.sort(rng.integers(0, 6 * 86400, n)).astype("timedelta64[s]")
    time = np.datetime64("2026-03-01") + seconds
    p = rng.uniform(0.02, 0.98, n)
    drift = time >= np.datetime64("2026-03-04")
    y = (rng.uniform(size=n) < np.where(drift, p ** 2, p)).astype(int)
    return y, p, time


@pytest.fixture(scope="module")
def timed(log):
    y, p, time = log
    return with_time((y, p), time, window="1D")


def test_with_time_validates_once_and_a_subsample_keeps_its_rows_times(log, timed):
    y, p, time = log
    assert has_time(timed) and not has_time(calviz.as_calibration_data(y, p))
    assert timed.time.kind == "datetime" and timed.n == y.shape[0]
    sub = timed.subsample(500, seed=1)
    rows = timed.subsample_rows(500, seed=1)
    assert isinstance(sub, TimedData) and sub.window == "1D"
    np.testing.assert_array_equal(sub.time.values, timed.time.values[rows])
    np.testing.assert_array_equal(sub.probs, p[rows])
    with pytest.raises(InputError, match="time"):
        with_time((y, p), time[:-1])
    bad = time.copy()
    bad[5] = np.datetime64("NaT")
    with pytest.raises(InputError, match="NaT"):
        with_time((y, p), bad)
    with pytest.raises(InvalidParameterError):
        with_time((y, p), time, window="3 apples")


def test_auto_window_gives_at_most_400_windows_of_100_rows_on_average():
    hours = np.datetime64("2026-01-01") + np.arange(0, 6 * 86400, 10).astype("timedelta64[s]")  # 51,840 rows
    column = TimeColumn(hours.astype("datetime64[ns]").view(np.int64), "datetime")
    assert auto_window(column) == "1h"  # 144 windows of 360 rows
    few = TimeColumn(column.values[::60], "datetime")  # 864 rows: 1h would hold 6 rows, 6h 36 → 1D
    assert auto_window(few) == "1D"
    assert auto_window(TimeColumn(np.repeat(np.arange(5), 200), "number")) is None  # 5 batches of 200
    assert auto_window(TimeColumn(np.arange(10_000), "number")) == "100 rows"
    assert auto_window(TimeColumn(np.arange(1_000_000), "number")) == "2500 rows"


def test_compute_over_time_is_the_engine_on_the_data_windows(log, timed):
    y, p, time = log
    options = AnalysisOptions(alpha=0.01, n_bins=10)
    result = compute_over_time(timed, options)
    direct = calviz.calibration_over_time(y, p, time=time, window="1D", alpha=0.01, n_bins=10)
    monitor = calviz.monitor_calibration(y, p, time=time, window="1D", alpha=0.01)
    assert result.windows.n_windows == 6
    for field in ("n", "ece", "ece_low", "ece_high", "observed_rate", "tcal_pvalue_adjusted"):
        np.testing.assert_array_equal(getattr(result.windows, field), getattr(direct, field))
    np.testing.assert_array_equal(result.monitor.log_evalues, monitor.log_evalues)
    assert result.monitor.alarm and result.monitor.alarm_index >= 3  # the drift starts in window 3


def test_without_a_time_column_the_rows_are_the_log_in_their_order():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=1000)
    y = (rng.uniform(size=1000) < p).astype(int)
    result = compute_over_time(calviz.as_calibration_data(y, p), AnalysisOptions())
    assert result.windows.window == "100 rows" and result.windows.n.tolist() == [100] * 10


def test_frames_and_caption_state_the_windows_and_the_alarm(timed):
    result = compute_over_time(timed, AnalysisOptions())
    columns = over_time_frame(result)
    assert columns["window"] == [f"2026-03-0{d}" for d in range(1, 7)]
    assert [int(v.replace(",", "")) for v in columns["n"]] == result.windows.n.tolist()
    table = over_time_windows(result)
    assert table["x"].dtype.kind == "M" and table["alarm"].tolist() == [
        i >= result.monitor.alarm_index for i in range(6)]
    np.testing.assert_allclose(np.log(table["evalue"]), result.monitor.log_evalues)
    diagram = window_diagram(result, 4)
    assert diagram["window"]["count"].sum() == result.windows.n[4]
    assert diagram["reference"]["count"].sum() == result.windows.n[0]
    caption = over_time_caption(result)
    assert caption.startswith("Alarm: the monitor's e-value reached 1/α = 20 in window "
                              f"{result.monitor.alarm_index + 1}")
    assert "6 windows (1D, 6,000 rows)" in caption and "Holm" in caption


def test_analyze_adds_the_view_for_timed_data_only(log, timed):
    y, p, _ = log
    with_ = analyze(timed, resampling="analytic", resampled=False)
    without = analyze((y, p), resampling="analytic", resampled=False)
    assert with_.over_time is not None and with_.over_time.windows.n_windows == 6
    assert without.over_time is None and "over_time" not in without.errors


def test_the_app_card_shows_the_windows_and_a_click_draws_that_window(timed):
    from calviz.app.page import CalvizApp

    app = CalvizApp(timed, resampling="analytic")
    app.refresh(inline=True)
    app.wait()
    card = app.over_time
    assert card.panel.visible
    assert list(card.source.data["n"]) == card.result.windows.n.tolist()
    assert card.selected == 5  # the newest window first
    assert "Alarm" in card.caption.text and card.alarm.visible and card.threshold.location == 20.0
    card.source.selected.indices = [2]  # what a click with the tap tool sends
    assert card.selected == 2
    assert card.diagram["window"].data["count"].sum() == card.result.windows.n[2]
    assert card.diagram["reference"].data["count"].sum() == card.result.windows.n[0]
    assert "2026-03-03" in card.diagram_title.text
    app.controls.dataset = app.controls.param.dataset.objects[1]  # data without a time column
    app.wait()
    assert not card.panel.visible


def test_check_and_report_read_the_time_column(tmp_path, log, capsys):
    from calviz.cli import main

    y, p, time = log
    path = tmp_path / "log.csv"
    pd.DataFrame({"ts": pd.to_datetime(time), "y_true": y, "y_prob": p}).to_csv(path, index=False)
    main(["check", str(path), "--time-column", "ts", "--time-window", "1D", "--resampling", "analytic",
          "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert summary["over_time"]["caption"].startswith("Alarm")
    assert summary["over_time"]["windows"]["n"] == [int(v) for v in np.bincount(
        ((time - np.datetime64("2026-03-01")) // DAY).astype(int))]
    out = tmp_path / "r.html"
    main(["report", str(path), "--time-column", "ts", "--resampling", "analytic", "-o", str(out)])
    page = out.read_text()
    assert "Calibration over time" in page and "per-window T-Cal" in page
    # the section's static figure: the ECE of each window with its interval, the e-process with the 1/α
    # line and the alarm window — an inline SVG, no script and nothing fetched (offline)
    section = page[page.index('id="calviz-over_time"'):]
    section = section[:section.index("</section>")]
    svg = section[section.index("<svg"):section.index("</svg>")]
    result = compute_over_time(with_time((y, p), time), AnalysisOptions())  # (the automatic window)
    assert svg.count("<circle") == result.windows.n_windows == 24
    assert svg.count('stroke="#c0392b" stroke-opacity') == int(result.windows.reject.sum())
    alarm = window_label(result.windows.start[result.monitor.alarm_index])
    assert "1/α = 20" in svg and f"alarm: {alarm}<" in svg and alarm.startswith("2026-03-0")
    assert "<script" not in svg and "http" not in svg.replace("http://www.w3.org/2000/svg", "")
    assert main(["check", str(path), "--time-column", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_appends_share_room_to_grow_without_overwriting_an_older_result(log):
    y, p, time = log
    a, b = 3000, 4500
    base = calviz.calibration_over_time(y[:a], p[:a], time=time[:a], window="1D")
    first = base.append(y[a:b], p[a:b], time=time[a:b])
    chained = first.append(y[b:], p[b:], time=time[b:])  # into the room the first append left
    branch = base.append(y[a:b], 1 - p[a:b], time=time[a:b])  # another append to the older result
    whole = calviz.calibration_over_time(y, p, time=time, window="1D")
    np.testing.assert_allclose(chained.ece, whole.ece, rtol=1e-12)
    np.testing.assert_array_equal(chained.tcal_pvalue, whole.tcal_pvalue)
    np.testing.assert_array_equal(first._log.z, p[:b])  # the branch did not overwrite its rows
    np.testing.assert_array_equal(chained._log.z, p)
    np.testing.assert_array_equal(branch._log.z[a:], 1 - p[a:b])


def test_an_upload_with_a_time_column_gets_the_over_time_card(log):
    from calviz.app.page import CalvizApp

    y, p, time = log
    frame = pd.DataFrame({"ts": pd.to_datetime(time), "y_true": y, "y_prob": p})
    content = frame.to_csv(index=False).encode()
    app = CalvizApp((y[:100], p[:100]))
    app.refresh(inline=True)
    app.wait()
    assert not app.over_time.panel.visible
    assert not app.load_file(content, "log.csv", time_column="nope")
    assert "log.csv" in app.status.alert.object and "nope" in app.status.alert.object
    assert app.load_file(content, "log.csv", time_column="ts")
    app.wait()
    assert has_time(app.data) and app.over_time.panel.visible
    assert app.over_time.result.windows.n.sum() == y.shape[0]
