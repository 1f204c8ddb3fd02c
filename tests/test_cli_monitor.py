"""``calviz monitor``: the alarm state and per-window table of a prediction log, exit 1 on an alarm, 0
without, 2 on bad input with one line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import calviz
from calviz.cli import main


def _log(path, *, drift: bool, n=6000, days=6, fmt="parquet", tz=None):
    rng = np.random.default_rng(11)
    seconds = np.sort(rng.integers(0, days * 86400, n))
    ts = pd.Timestamp("2026-04-01", tz=tz) + pd.to_timedelta(seconds, unit="s")
    p = rng.uniform(0.05, 0.95, size=n)
    truth = np.where((seconds >= 3 * 86400) & drift, np.clip(p + 0.15, 0, 1), p)
    y = (rng.uniform(size=n) < truth).astype(int)
    frame = pd.DataFrame({"ts": ts, "y_true": y, "y_prob": p})
    if fmt == "parquet":
        frame.to_parquet(path)
    else:
        frame.to_csv(path, index=False)
    return y, p, ts


def test_alarm_exits_1_and_the_json_matches_the_api(tmp_path, capsys):
    path = tmp_path / "log.parquet"
    y, p, ts = _log(path, drift=True)
    assert main(["monitor", str(path), "--time-column", "ts", "--window", "1D", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    monitor = calviz.monitor_calibration(y, p, time=ts.to_numpy(), window="1D")
    over = calviz.calibration_over_time(y, p, time=ts.to_numpy(), window="1D")
    assert out["alarm"] and out["alarm_index"] == monitor.alarm_index >= 3
    assert [w["n"] for w in out["windows"]] == over.n.tolist()
    assert [w["ece"] for w in out["windows"]] == pytest.approx(over.ece.tolist())
    assert [w["log_evalue"] for w in out["windows"]] == pytest.approx(monitor.log_evalues.tolist())
    assert out["windows"][0]["start"] == "2026-04-01T00:00:00" and out["correction"] == "holm"


def test_no_alarm_exits_0_and_prints_the_table(tmp_path, capsys):
    path = tmp_path / "log.csv"
    _log(path, drift=False, fmt="csv", tz="UTC")
    assert main(["monitor", str(path), "--time-column", "ts", "--window", "1D"]) == 0
    out = capsys.readouterr().out
    assert "no alarm" in out and "2026-04-06T00:00:00" in out and out.count("\n") == 3 + 1 + 6


def test_numeric_batches_and_row_windows(tmp_path, capsys):
    path = tmp_path / "batches.csv"
    rng = np.random.default_rng(3)
    p = rng.uniform(size=900)
    pd.DataFrame({"batch": np.repeat([1, 2, 3], 300), "y_true": (rng.uniform(size=900) < p).astype(int),
                  "y_prob": p}).to_csv(path, index=False)
    assert main(["monitor", str(path), "--time-column", "batch", "--window", "each", "--json"]) == 0
    assert [w["n"] for w in json.loads(capsys.readouterr().out)["windows"]] == [300, 300, 300]
    assert main(["monitor", str(path), "--time-column", "batch", "--window", "200 rows", "--json"]) == 0
    assert [w["n"] for w in json.loads(capsys.readouterr().out)["windows"]] == [200, 200, 200, 200, 100]


@pytest.mark.parametrize("args, message", [
    (["--time-column", "nope"], "no time column 'nope'"),
    (["--time-column", "ts", "--alpha", "2"], "'alpha' parameter"),
    (["--time-column", "ts", "--window", "1M"], "'window' parameter"),
    (["--time-column", "y_prob", "--window", "1D"], "is a duration, but time is not datetimes"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, args, message):
    path = tmp_path / "log.parquet"
    _log(path, drift=False, n=500)
    assert main(["monitor", str(path), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_missing_time_values_and_missing_file(tmp_path, capsys):
    path = tmp_path / "gaps.csv"
    path.write_text("ts,y_true,y_prob\n2026-01-01,1,0.8\n,0,0.3\n2026-01-02,1,0.6\n")
    assert main(["monitor", str(path), "--time-column", "ts"]) == 2
    assert "NaT" in capsys.readouterr().err
    assert main(["monitor", str(tmp_path / "none.parquet"), "--time-column", "ts"]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["fixed", "expanding"])
def test_the_output_is_that_of_the_two_public_calls(tmp_path, capsys, mode):
    # the command computes the monitor from the over-time result's sorted windows: the same numbers
    from calviz.cli_monitor import _print_text, monitor_summary

    path = tmp_path / "log.parquet"
    y, p, ts = _log(path, drift=True)
    over = calviz.calibration_over_time(y, p, time=ts.to_numpy(), window="1D", mode=mode)
    monitor = calviz.monitor_calibration(y, p, time=ts.to_numpy(), window="1D")
    expected = monitor_summary(over, monitor, file=str(path))
    args = ["monitor", str(path), "--time-column", "ts", "--window", "1D", "--mode", mode]
    assert main([*args, "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(expected))
    assert main(args) == 1
    printed = capsys.readouterr().out
    _print_text(expected)
    assert printed == capsys.readouterr().out


@pytest.mark.parametrize("cells", [
    ["2026-01-01 00:00:03", "2026-01-02 10:00:00", "2026-01-02 10:00:00"],  # timestamps, ties
    ["2026-01-01", "2026-01-03", "2026-01-02"],  # dates
    ["2026-01-01T05:00:00+02:00", "2026-01-01T05:00:00Z", "2026-01-01T04:00:00-01:00"],  # offsets: UTC
    ["2026-01-01T05:00:00.123", "2026-01-01T05:00:01.5", "2026-01-01T05:00:01"],
    ["3", "1", "-2"], ["0.5", "1e3", "2"], ["b7", "a", "b7"],
])
def test_a_csv_time_column_reads_as_pandas_reads_it(tmp_path, cells):
    # Arrow parses ISO 8601 text and numbers; the values are those of pandas' reading (other text: pandas)
    from calviz._windows import as_time
    from calviz.cli_monitor import _maybe_datetimes, read_time_column

    path = tmp_path / "log.csv"
    path.write_text("ts,y_true\n" + "".join(f"{c},1\n" for c in cells))
    read = as_time(read_time_column(str(path), "ts", len(cells)), len(cells))
    frame = pd.read_csv(path)["ts"]
    text = pd.api.types.is_string_dtype(frame.dtype) or frame.dtype == object
    expected = as_time(_maybe_datetimes(frame) if text else frame, len(cells))
    assert read.kind == expected.kind and np.array_equal(read.values, expected.values)


@pytest.mark.parametrize("unit, tz", [("s", None), ("ms", None), ("us", "Europe/Paris"), ("ns", "UTC")])
def test_a_parquet_time_column_reads_as_pandas_reads_it(tmp_path, unit, tz):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from calviz._windows import as_time
    from calviz.cli_monitor import read_time_column

    values = np.array(["2026-03-29T00:30:00", "2026-03-29T03:30:00", "2026-03-29T03:30:00"],
                      dtype="datetime64[s]")  # (ties; Paris changes its clocks at 01:00 UTC that day)
    path = tmp_path / "log.parquet"
    column = pa.array(values, type=pa.timestamp(unit, tz=tz))
    pq.write_table(pa.table({"ts": column, "y_true": [0, 1, 1]}), path)
    read = as_time(read_time_column(str(path), "ts", 3), 3)
    expected = as_time(pq.read_table(path).column("ts").to_pandas(), 3)
    assert read.kind == expected.kind == "datetime" and np.array_equal(read.values, expected.values)
