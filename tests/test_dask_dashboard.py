"""The dashboard on distributed data: a Parquet directory opened on a real LocalCluster (2 worker processes)
is analysed in place — every view equals the in-memory one on the same rows, widget changes recompute on
Dask, the views Dask cannot compute say so, and a bad path or a bad partition leaves the app working on
its previous data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

import calviz  # noqa: E402
import calviz.dask as cdask  # noqa: E402
from calviz import _ece as ece  # noqa: E402
from calviz import _intervals as intervals  # noqa: E402
from calviz._dashboard import CalvizApp  # noqa: E402
from calviz.analysis import AnalysisOptions, analyze  # noqa: E402

#: rows per Parquet file: uneven, with empty files
SIZES = (0, 700, 1, 0, 1800, 499)


@pytest.fixture(scope="module")
def client(local_cluster):
    """A client of the test process's shared cluster (conftest), not the default one: the dashboard is
    given it explicitly, and dask's threads stay the default."""
    with distributed.Client(local_cluster, set_as_default=False) as c:
        yield c


def _predictions(n, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    p[:30] = np.arange(30) % 16 / 15.0  # on bin edges, 0 and 1
    y = (rng.random(n) < p**1.4).astype(np.int64)  # overconfident at the top
    return y, p


def _write(directory, y, p, sizes=SIZES):
    directory.mkdir()
    start = 0
    for i, size in enumerate(sizes):
        frame = pd.DataFrame({"y_true": y[start:start + size], "y_prob": p[start:start + size]})
        frame.to_parquet(directory / f"part.{i:03d}.parquet", index=False)
        start += size
    return directory


def _close(a, b, rtol=1e-12, atol=0.0):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rtol, atol=atol)


def test_dashboard_views_on_dask_equal_in_memory(client, tmp_path, monkeypatch):
    from calviz.app import store as store_module

    in_worker = []  # the views computed in the session's worker process (not on its event-loop thread)
    run_remote = store_module._run_remote

    def recorded(view, *args, **kwargs):
        in_worker.append(view)
        return run_remote(view, *args, **kwargs)

    monkeypatch.setattr(store_module, "_run_remote", recorded)
    y, p = _predictions(sum(SIZES))
    source = cdask.open_source(_write(tmp_path / "preds", y, p), client=client)
    assert source.n == y.size and source.n_classes == 2 and source.distributed
    app = CalvizApp(source, n_bins=12, resampling="analytic")
    app.start()
    app.wait(120)
    assert app.controls.dataset == "your data (Dask)"
    assert "on <b>Dask</b>" in app.status.text.object and f"of {y.size:,}" in app.status.text.object
    options = app.controls.options(source.n)
    assert options.n is None  # all rows: the subsample slider is off for distributed data
    rel = app.store.cached("reliability", source, options)
    want_rel = ece.reliability(y, p, n_bins=12, alpha=options.alpha)
    np.testing.assert_array_equal(rel.counts, want_rel.counts)
    _close(rel.observed_frequency, want_rel.observed_frequency)
    _close(rel.mean_confidence, want_rel.mean_confidence)
    tcal = app.store.cached("tcal", source, options)
    want_tcal = calviz.adaptive_tcal(y, p, resampling="analytic")
    assert tcal.reject == want_tcal.reject and tcal.n_bins == want_tcal.n_bins
    _close(tcal.statistics, want_tcal.statistics, atol=1e-15)
    _close(tcal.pvalues, want_tcal.pvalues, rtol=1e-10)
    interval = app.store.cached("interval", source, options)
    want_interval = intervals.ece_interval(y, p, n_bins=12, alpha=options.alpha)
    _close([interval.estimate, interval.low, interval.high],
           [want_interval.estimate, want_interval.low, want_interval.high], rtol=1e-9)
    # the distance bounds: 3000 rows < the subsample size, so computed on every row, exactly
    bounds = app.store.cached("distance", source, options)[0]
    want_bounds = analyze((y, p), AnalysisOptions(), views=("distance",)).distance
    _close([bounds.lower, bounds.upper], [want_bounds.lower, want_bounds.upper], rtol=1e-9)
    assert "REJECT" in app.views[1].note.object
    assert "not available there" in app.views[0].note.object  # the smooth curve needs memory
    # the bootstrap interval: 3000 rows < its subsample size, so computed in memory on every row gathered
    want_boot = analyze((y, p), options, views=("bootstrap",)).bootstrap
    boot = app.store.bootstrap.result
    assert boot is not None and app.store.bootstrap.error is None, app.store.bootstrap.error
    _close([boot.estimate, boot.low, boot.high], [want_boot.estimate, want_boot.low, want_boot.high])

    # a widget change recomputes on Dask (background job, then the view's updater runs again)
    app.controls.n_bins = 7
    app.wait(120)
    rel7 = app.store.reliability.result
    assert rel7 is not None and rel7.counts.size == 7
    np.testing.assert_array_equal(rel7.counts, ece.reliability(y, p, n_bins=7).counts)
    # the background jobs: the bootstrap's gathered rows went to the session's worker process (a numba
    # kernel on the event-loop thread would stall the page); the reliability diagram ran on Dask
    assert "bootstrap" in in_worker and "reliability" not in in_worker, in_worker


def test_open_dask_from_the_app_and_bad_inputs(client, tmp_path):
    y, p = _predictions(3000, seed=1)
    good = _write(tmp_path / "good", y, p)
    bad_p = p.copy()
    bad_p[700 + 1 + 5] = np.nan  # file 4, local row 5 → global row 706
    bad = _write(tmp_path / "bad", y, bad_p)
    app = CalvizApp(datasets=["scenario-tcal_p0"], resampling="analytic")
    app.start()
    n_before = app.data.n

    assert not app.open_dask(tmp_path / "missing", scheduler=client.scheduler.address)
    assert app.status.alert.visible and "missing" in app.status.alert.object
    assert app.data.n == n_before  # nothing the user loaded is lost

    assert not app.open_dask(bad, scheduler=client.scheduler.address)
    assert "row 706" in app.status.alert.object and "partition" in app.status.alert.object
    assert app.data.n == n_before
    app.controls.n_bins = 9  # the app keeps answering
    assert app.store.reliability.result.counts.size <= 9

    assert app.open_dask(good, scheduler=client.scheduler.address)
    app.wait(120)
    assert not app.status.alert.visible
    assert app.controls.dataset.startswith("dask: ") and app.data.n == 3000
    tcal = app.store.cached("tcal", app.data, app.controls.options(app.data.n))
    _close(tcal.statistics, calviz.adaptive_tcal(y, p, resampling="analytic").statistics, atol=1e-15)
    # back to in-memory data: the subsample slider works again
    app.controls.dataset = "scenario-tcal_p0"
    assert app.data.n == n_before and not getattr(app.data, "distributed", False)


def test_analyze_parquet_notes_and_report(client, tmp_path):
    """The Analysis of distributed data renders as the static report, with the notes on what Dask could not
    compute."""
    from calviz.present.report import render_analysis

    y, p = _predictions(4000, seed=2)
    path = _write(tmp_path / "preds", y, p, sizes=(1000, 0, 3000))
    result = cdask.analyze_parquet(path, scheduler=client, distance_sample=500, scheme="equal_mass")
    assert "equal-width" in result.errors["reliability"]
    assert "subsample of 500 of 4,000 rows" in result.errors["distance"]
    assert result.distance is not None and result.reliability is not None  # notes, not failures
    html = render_analysis(result, title="dask report")
    assert "subsample of 500" in html and "Bokeh" in html


def test_topk_and_full_views_on_dask(client, tmp_path):
    """topk / full on distributed multi-class data: one diagram per rank / per class, as in memory."""
    from calviz.present.report import render_analysis

    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.full(4, 0.6), size=2500)
    labels = np.array([rng.choice(4, p=row**1.5 / (row**1.5).sum()) for row in probs])
    directory = tmp_path / "multi"
    directory.mkdir()
    frame = pd.DataFrame({"y_true": labels, **{f"p_{c}": probs[:, c] for c in range(4)}})
    for i, (a, b) in enumerate([(0, 900), (900, 900), (900, 2500)]):
        frame.iloc[a:b].to_parquet(directory / f"part.{i}.parquet", index=False)
    result = cdask.analyze_parquet(directory, scheduler=client, target="topk", top_k=3)
    rel = result.reliability
    assert rel.kind == "rank" and rel.labels == ("rank 1 (top-1)", "rank 2", "rank 3")
    want = analyze((labels, probs), AnalysisOptions(target="topk", top_k=3), views=("reliability",))
    for a, b in zip(rel.panels, want.reliability.panels, strict=True):
        np.testing.assert_array_equal(a.counts, b.counts)
        _close(a.observed_frequency, b.observed_frequency)
    assert "Top-3 calibration: one curve per rank" in render_analysis(result)
    app = CalvizApp(cdask.open_source(directory, client=client), target="full")
    app.start()
    app.wait(120)
    full = app.store.reliability.result
    assert full.kind == "class" and len(full.panels) == 4
    np.testing.assert_array_equal(full.positives, np.bincount(labels, minlength=4))


def test_all_rows_and_the_view_subsample_as_in_memory(client, tmp_path, monkeypatch):
    """The views that cost more than a pass (distance measures, resampled T-Cal) use the rows the in-memory
    analysis uses — the same uniform subsample for the same seed, with the same note — and every row with
    ``all_rows=True``; the user subsample ``n`` gives the in-memory result too."""
    import json

    from calviz import sampling
    from calviz._data import as_calibration_data
    from calviz.analysis import run_view

    monkeypatch.setitem(sampling.SAMPLED_ROWS, "distance", 500)  # (2·10⁵ rows by default)
    monkeypatch.setitem(sampling.SAMPLED_ROWS, "tcal_resampled", 800)
    y, p = _predictions(3000, seed=4)
    source = cdask.open_source(_write(tmp_path / "preds", y, p), client=client, distance_sample=500)
    memory = as_calibration_data(y, p)
    for options in (AnalysisOptions(seed=3), AnalysisOptions(seed=3, all_rows=True),
                    AnalysisOptions(seed=5, n=1000)):
        for view in ("distance", "tcal_resampled"):
            got, note = source.compute_view(view, options)
            want, _, want_note = run_view(view, memory, options)
            assert note == want_note, (view, options)
            assert (note is None) == options.all_rows
            if view == "distance":
                assert json.dumps(got[0].to_dict(), default=str) == json.dumps(want[0].to_dict(), default=str)
                continue
            assert got.n == want.n == (3000 if options.all_rows else 800)
            assert got.n_resamples == want.n_resamples and got.decision == want.decision
            # (the same resampled p-values; where the sequential rule settles without resampling the
            # analytic ones, which agree up to summation order)
            np.testing.assert_allclose(got.pvalues, want.pvalues, rtol=1e-12, atol=0)
    summary = analyze(source, AnalysisOptions(n=1000, seed=5), views=("reliability",))
    want = analyze((y, p), AnalysisOptions(n=1000, seed=5), views=("reliability",))
    assert summary.summary == want.summary
    np.testing.assert_array_equal(summary.reliability.counts, want.reliability.counts)


def _multiclass_parts(directory, bad_row=None):
    """Two Parquet files of 4-class predictions (y_true, p_0..p_3); ``bad_row`` (global) gets p_1 = 1.7."""
    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.ones(4), size=600)
    frame = pd.DataFrame({"y_true": rng.integers(0, 4, size=600),
                          **{f"p_{k}": probs[:, k] for k in range(4)}})
    if bad_row is not None:
        frame.loc[bad_row, "p_1"] = 1.7
    directory.mkdir()
    frame.iloc[:400].to_parquet(directory / "part-0.parquet", index=False)
    frame.iloc[400:].to_parquet(directory / "part-1.parquet", index=False)
    return frame


def test_a_bad_partition_is_one_line_on_the_local_cluster(tmp_path):
    """`calviz check DIR` on its own local cluster: bad data is the one-line refusal (exit 2) naming the
    file's column as the in-memory reader does — not also the workers' "Compute Failed" log and traceback
    on the same terminal, nor a warning that the dashboard port 8787 is taken."""
    import contextlib
    import socket
    import subprocess
    import sys

    frame = _multiclass_parts(tmp_path / "bad", bad_row=410)
    frame.to_parquet(tmp_path / "whole.parquet", index=False)
    with contextlib.ExitStack() as stack:  # dask's default dashboard port taken (by another cluster)
        with contextlib.suppress(OSError):
            stack.enter_context(socket.create_server(("", 8787)))
        run = subprocess.run([sys.executable, "-m", "calviz", "check", str(tmp_path / "bad"), "--resampling",
                              "analytic"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and run.stdout == ""
    # (no negative value in the row: probabilities that do not add up to 1, which the message says to rescale)
    row_sum = float(frame.loc[410, ["p_0", "p_1", "p_2", "p_3"]].to_numpy(dtype=float).sum())
    assert run.stderr.splitlines() == [
        f"calviz check: error: {tmp_path / 'bad'}: probabilities must lie in [0, 1]; row 410 (partition 1, "
        f"row 10 within it), column 'p_1' has 1.7 (its row sums to {row_sum!r}). Add --renormalize to "
        "rescale rows."]
    with pytest.raises(calviz.InputError) as in_memory:
        calviz.read_predictions(tmp_path / "whole.parquet")
    assert "row 410, column 'p_1' has 1.7" in str(in_memory.value)


def test_the_refusal_filter_drops_only_refusals():
    """The filter the local cluster's workers get: a task's PartitionInputError is not logged; any other
    task failure and any other record still are."""
    import logging

    from calviz.dask._app import _not_a_refusal

    def record(msg, *args):
        return logging.LogRecord("distributed.worker", logging.ERROR, __file__, 1, msg, args, None)

    failed = "Compute Failed\nKey: %s\nState: %s\nTask: %s\nException: %r\nTraceback: %r\n"
    refusal = "PartitionInputError('y_prob must lie in [0, 1]; row 3 has 1.5')"
    assert not _not_a_refusal(record(failed, "k", "executing", "task", refusal, "tb"))
    assert _not_a_refusal(record(failed, "k", "executing", "task", "ZeroDivisionError('x')", "tb"))
    assert _not_a_refusal(record("Worker %s: %s", "w", refusal))


def test_the_lost_scheduler_filter_drops_only_the_heartbeats_failure():
    """The other filter the local cluster's workers get: a heartbeat that found the scheduler gone (calviz
    stopping, the scheduler in its process) is not logged; the worker's other records still are."""
    import logging

    from calviz.dask._app import _not_a_lost_scheduler

    def record(msg):
        return logging.LogRecord("distributed.worker", logging.ERROR, __file__, 1, msg, (), None)

    assert not _not_a_lost_scheduler(record("Failed to communicate with scheduler during heartbeat."))
    assert _not_a_lost_scheduler(record("Compute Failed\nKey: %s"))
    assert _not_a_lost_scheduler(record("Heartbeat to scheduler failed"))


@pytest.mark.parametrize("where", ["threads", "cluster"])
def test_dask_messages_name_the_files_columns(client, tmp_path, where):
    """A bad value in Parquet or DataFrame data analysed on Dask: the message names the file's columns as
    the in-memory reader does ("column 'p_1'", "'score'", "'label'"), with the global row."""
    import dataclasses

    import dask.dataframe as dd

    kwargs = {"client": client} if where == "cluster" else {}
    frame = _multiclass_parts(tmp_path / "bad", bad_row=410)
    with pytest.raises(calviz.InputError) as info:
        cdask.binned_ece(cdask.from_parquet(tmp_path / "bad"), **kwargs)
    # (a row above 1 without a negative value: the rescale hint, as the in-memory reader gives it)
    assert str(info.value).startswith("probabilities must lie in [0, 1]; row 410 (partition 1, row 10 within "
                                      "it), column 'p_1' has 1.7 (its row sums to ")
    frame.to_csv(tmp_path / "whole.csv", index=False)
    with pytest.raises(calviz.InputError) as in_memory:
        calviz.read_predictions(tmp_path / "whole.csv")
    assert str(in_memory.value).startswith("whole.csv: probabilities must lie in [0, 1]; row 410, "
                                           "column 'p_1' has 1.7 (its row sums to ")
    assert str(in_memory.value).split("has 1.7", 1)[1] == str(info.value).split("has 1.7", 1)[1]
    table = pd.DataFrame({"label": [0, 1, 1, 0], "score": [0.2, 0.9, 1.5, 0.4]})
    data = cdask.from_dataframe(dd.from_pandas(table, npartitions=2), y_true="label", y_prob="score")
    assert data.columns == {"y_true": "label", "y_prob": ["score"]}
    same = dataclasses.replace(data, columns=None)  # the columns only name things: data stay hashable, equal
    assert hash(same) == hash(data) and same == data
    with pytest.raises(calviz.InputError, match=r"^'score' must lie in \[0, 1\]; row 2 \(partition 1, "):
        cdask.binned_ece(data, **kwargs)
    table["score"] = [0.2, 0.9, 0.5, 0.4]
    table["label"] = [0, 1, 2, 0]
    data = cdask.from_dataframe(dd.from_pandas(table, npartitions=2), y_true="label", y_prob="score")
    with pytest.raises(calviz.InputError, match=r"^'label' must be"):
        cdask.binned_ece(data, **kwargs)


def test_parquet_directory_without_parquet_files(tmp_path):
    """A directory with no Parquet files says so (not dask's "An error occurred while calling the
    read_parquet method"); an unreadable file gives the reader's own message."""
    empty = tmp_path / "empty"
    empty.mkdir()
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("not data")
    for directory in (empty, other):
        with pytest.raises(calviz.InputError) as info:
            cdask.from_parquet(directory)
        assert str(info.value) == ("no Parquet files (*.parquet, *.pq, *.parq) in the directory "
                                   f"{str(directory)!r}")
    nested = tmp_path / "nested"
    (nested / "year=2024").mkdir(parents=True)
    pd.DataFrame({"y_true": [0, 1], "y_prob": [0.2, 0.8]}).to_parquet(nested / "year=2024" / "a.parquet")
    assert cdask.from_parquet(nested).npartitions == 1  # a Parquet file at any depth is read
    bare = tmp_path / "bare"
    bare.mkdir()
    pd.DataFrame({"y_true": [0, 1], "y_prob": [0.2, 0.8]}).to_parquet(bare / "part0")  # no extension
    with pytest.raises(calviz.InputError, match="no Parquet files"):
        cdask.from_parquet(bare)
    assert cdask.from_parquet(bare, parquet_file_extension=None).npartitions == 1  # dask's option: as given
    (tmp_path / "corrupt").mkdir()
    (tmp_path / "corrupt" / "x.parquet").write_bytes(b"not parquet")
    with pytest.raises(calviz.InputError) as info:
        cdask.from_parquet(tmp_path / "corrupt")
    assert "could not read Parquet data" in str(info.value) and "magic bytes" in str(info.value)
    assert "An error occurred while calling" not in str(info.value)


def test_confidence_and_correct_columns_are_summarised_as_in_memory(client, tmp_path):
    """Parquet (confidence, correct) columns on the cluster are the top-1 reduction, as in memory: accuracy
    is the fraction correct and the mean confidence the mean of the confidences (below 0.5 here), on all
    rows and on a user subsample (the partitions were validated as binary P(y = 1) data)."""
    rng = np.random.default_rng(11)
    confidence = rng.uniform(0.1, 0.6, size=3000)
    correct = (rng.uniform(size=3000) < 0.8).astype(np.int64)
    directory = tmp_path / "top1"
    directory.mkdir()
    for i, rows in enumerate((slice(0, 1200), slice(1200, 1200), slice(1200, 3000))):
        frame = pd.DataFrame({"confidence": confidence[rows], "correct": correct[rows]})
        frame.to_parquet(directory / f"part.{i}.parquet", index=False)
    in_memory = calviz.read_predictions(directory / "part.2.parquet")
    assert in_memory.confidence_form
    for options in ({"resampling": "analytic"}, {"resampling": "analytic", "n": 500}):
        on_dask = cdask.analyze_parquet(directory, scheduler=client, **options)
        whole = analyze((correct, confidence), **options).summary  # the arrays: binary data
        marked = calviz.as_calibration_data(correct, confidence, confidence_form=True)
        top1 = analyze(marked, **options).summary
        assert on_dask.summary.accuracy == pytest.approx(top1.accuracy, abs=1e-12)
        assert on_dask.summary.mean_confidence == pytest.approx(top1.mean_confidence, abs=1e-12)
        assert top1.mean_confidence != pytest.approx(whole.mean_confidence)
    assert cdask.as_dask_data(in_memory).confidence_form



def test_named_confidence_columns_on_dask_and_the_command_line(tmp_path):
    """Named confidence columns (--confidence / --correct) mark the distributed data as the confidence
    form, as in memory: the command line passed them to Dask as y_prob / y_true, a binary P(y = 1)."""
    import json

    from calviz.cli import main

    rng = np.random.default_rng(12)
    frame = pd.DataFrame({"conf": rng.uniform(0.1, 0.6, size=400), "ok": (rng.uniform(size=400) < 0.8) * 1})
    directory = tmp_path / "named"
    directory.mkdir()
    frame.to_parquet(directory / "part.0.parquet", index=False)
    assert cdask.from_parquet(directory, confidence="conf", correct="ok").confidence_form
    assert not cdask.from_parquet(directory, y_true="ok", y_prob="conf").confidence_form
    with pytest.raises(calviz.InputError, match=r"missing column\(s\) \['correct'\] of the confidence form"):
        cdask.from_parquet(directory, confidence="conf")
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", str(directory), "--confidence", "conf", "--correct", "ok", "--json",
                     "--resampling", "analytic"])
    assert code == 0
    summary = json.loads(out.getvalue())["summary"]
    assert summary["accuracy"] == pytest.approx(frame["ok"].mean())
    assert summary["mean_confidence"] == pytest.approx(frame["conf"].mean())
