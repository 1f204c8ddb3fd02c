"""``calviz serve --watch`` without a browser: the log watcher (a file, a directory of Parquet files whose
changed files alone are read again) and the app's poll, which puts the grown log's over-time result in the
store by merging the new rows' sums instead of recomputing the windows."""

from __future__ import annotations

import numpy as np
import pandas as pd

import calviz
from calviz._timed import with_time
from calviz.app.watch import LogWatcher, concat_timed, poll
from calviz.cli_monitor import read_time_column


def _day(rng, day: int, n: int = 300) -> pd.DataFrame:
    seconds = np.sort(rng.integers(0, 86400, n))
    time = pd.Timestamp("2026-05-01") + pd.Timedelta(days=day) + pd.to_timedelta(seconds, unit="s")
    p = rng.uniform(0.05, 0.95, n)
    return pd.DataFrame({"ts": time, "y_true": (rng.uniform(size=n) < p).astype(int), "y_prob": p})


def _reader(reads: list):
    def read(path: str):
        reads.append(path)
        frame = pd.read_parquet(path)
        data = calviz.as_calibration_data(frame["y_true"].to_numpy(), frame["y_prob"].to_numpy())
        return with_time(data, read_time_column(path, "ts", data.n), window="1D")
    return read


def test_a_directory_is_read_again_only_where_a_file_changed(tmp_path):
    rng = np.random.default_rng(2)
    days = [_day(rng, d) for d in range(3)]
    for d in range(2):
        days[d].to_parquet(tmp_path / f"part-{d}.parquet")
    reads: list = []
    watcher = LogWatcher(tmp_path, _reader(reads))
    first = watcher.poll()
    assert first.n == 600 and len(reads) == 2 and first.window == "1D"
    assert watcher.poll() is None and len(reads) == 2  # unchanged: nothing read
    days[2].to_parquet(tmp_path / "part-2.parquet")
    grown = watcher.poll()
    assert grown.n == 900 and reads[2:] == [str(tmp_path / "part-2.parquet")]
    np.testing.assert_array_equal(grown.probs, np.concatenate([d["y_prob"].to_numpy() for d in days]))
    np.testing.assert_array_equal(grown.time.show(grown.time.values),
                                  np.concatenate([d["ts"].to_numpy() for d in days]))


def test_concat_timed_unites_batch_ids():
    a = with_time(([0, 1, 1], [0.2, 0.7, 0.9]), np.array(["b", "a", "b"]))
    b = with_time(([1, 0], [0.6, 0.1]), np.array(["c", "a"]))
    both = concat_timed([a, b])
    assert both.time.show(both.time.values).tolist() == ["b", "a", "b", "c", "a"]


def test_poll_merges_the_new_rows_into_the_shown_result(tmp_path):
    from calviz.app.page import CalvizApp

    rng = np.random.default_rng(4)
    log = tmp_path / "log.parquet"
    days = [_day(rng, d) for d in range(4)]
    pd.concat(days[:3]).to_parquet(log)
    watcher = LogWatcher(log, _reader([]))
    app = CalvizApp(watcher.poll(), resampling="analytic")
    app.refresh(inline=True)
    app.wait()
    assert app.store.calls["over_time"] == 1
    assert not poll(app, watcher)  # unchanged
    pd.concat(days).to_parquet(log)
    assert poll(app, watcher)
    app.wait()
    shown = app.store.over_time.result
    assert app.store.calls["over_time"] == 1  # merged into the previous result, not recomputed
    assert shown.windows.n.tolist() == [300] * 4 and app.over_time.selected == 3
    whole = pd.concat(days)
    direct = calviz.calibration_over_time(whole["y_true"], whole["y_prob"], time=whole["ts"], window="1D")
    np.testing.assert_allclose(shown.windows.ece, direct.ece, rtol=1e-12)
    np.testing.assert_array_equal(shown.windows.tcal_pvalue, direct.tcal_pvalue)
    monitor = calviz.monitor_calibration(whole["y_true"], whole["y_prob"], time=whole["ts"], window="1D")
    np.testing.assert_allclose(shown.monitor.log_evalues, monitor.log_evalues, rtol=1e-12, atol=1e-12)


def _any_reader(reads: list):
    def read(path: str):
        reads.append(path)
        frame = pd.read_parquet(path) if path.endswith(".parquet") else pd.read_csv(path, parse_dates=["ts"])
        data = calviz.as_calibration_data(frame["y_true"].to_numpy(), frame["y_prob"].to_numpy())
        return with_time(data, frame["ts"].to_numpy(), window="1D")
    return read


def _same_rows(data, frames):
    whole = pd.concat(frames)
    np.testing.assert_array_equal(data.probs, whole["y_prob"].to_numpy())
    np.testing.assert_array_equal(data.labels, whole["y_true"].to_numpy())
    np.testing.assert_array_equal(data.time.show(data.time.values), whole["ts"].to_numpy())


def test_a_growing_csv_file_is_read_from_its_previous_end(tmp_path):
    rng = np.random.default_rng(6)
    days = [_day(rng, d, n=200) for d in range(4)]
    log = tmp_path / "log.csv"
    days[0].to_csv(log, index=False)
    reads: list = []
    watcher = LogWatcher(log, _any_reader(reads))
    first = watcher.poll()
    for d in (1, 2):
        with open(log, "a") as f:
            days[d].to_csv(f, index=False, header=False)
        grown = watcher.poll()
        assert grown.n == 200 * (d + 1) and reads[-1] != str(log)  # only the appended bytes were read
        _same_rows(grown, days[:d + 1])
    _same_rows(first, days[:1])  # an earlier look's data are untouched by the appends after them
    days[3].to_csv(log, index=False)  # rewritten, not grown: read whole again
    assert watcher.poll().n == 200 and reads[-1] == str(log)


def test_a_growing_parquet_file_is_read_from_its_new_row_groups(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(7)
    days = [_day(rng, d, n=150) for d in range(3)]
    log = tmp_path / "log.parquet"

    def write(k):  # the log rewritten with one row group per day (as a writer that appends would)
        with pq.ParquetWriter(log, pa.Table.from_pandas(days[0], preserve_index=False).schema) as w:
            for frame in days[:k]:
                w.write_table(pa.Table.from_pandas(frame, preserve_index=False))

    write(1)
    reads: list = []
    watcher = LogWatcher(log, _any_reader(reads))
    watcher.poll()
    fork = watcher.fork()
    write(3)
    grown = watcher.poll()
    assert grown.n == 450 and reads[-1] != str(log)
    _same_rows(grown, days)
    # another session's watcher at the earlier look: its own rows, the shared arrays left as they are
    again = fork.poll()
    _same_rows(again, days)
    _same_rows(grown, days)


def test_the_over_time_card_patches_its_windows_in_place(monkeypatch):
    from bokeh.models import ColumnDataSource

    from calviz.app.over_time import _patch_rows

    source = ColumnDataSource({})
    table = {"n": np.array([3, 4]), "ece": np.array([0.1, np.nan]), "label": np.array(["a", "b"])}
    _patch_rows(source, table)
    grown = {"n": np.array([3, 6, 2]), "ece": np.array([0.1, 0.2, np.nan]),
             "label": np.array(["a", "b", "c"])}
    sent = []
    for method in ("patch", "stream"):
        original = getattr(ColumnDataSource, method)
        monkeypatch.setattr(ColumnDataSource, method, lambda self, data, *a, m=method, f=original: (
            sent.append((m, data)), f(self, data)))
    _patch_rows(source, grown)
    assert sent[0] == ("patch", {"n": [(1, 6)], "ece": [(1, 0.2)]})
    assert sent[1][0] == "stream" and sent[1][1]["n"].tolist() == [2] and len(sent) == 2
    for k, v in grown.items():
        np.testing.assert_array_equal(source.data[k], v)
    assert table["n"].tolist() == [3, 4]  # (the table drawn first is not written into)


def test_a_new_file_before_the_known_ones_reads_the_whole_directory_again(tmp_path):
    rng = np.random.default_rng(9)
    days = [_day(rng, d, n=100) for d in range(3)]
    days[1].to_parquet(tmp_path / "part-1.parquet")
    days[2].to_parquet(tmp_path / "part-2.parquet")
    reads: list = []
    watcher = LogWatcher(tmp_path, _reader(reads))
    watcher.poll()
    days[0].to_parquet(tmp_path / "part-0.parquet")  # rows in the middle of the log, by the files' order
    grown = watcher.poll()
    assert sorted(reads[2:]) == [str(tmp_path / f"part-{d}.parquet") for d in range(3)]
    _same_rows(grown, days)
