"""``calviz check`` with the subsampled views computed beside the all-rows views (two threads): the same
JSON, field for field, as the views computed one after another."""

import json
import threading

import numpy as np
import pytest

import calviz.analysis.run as run
from calviz import as_calibration_data
from calviz._results import strict_json
from calviz.analysis import AnalysisOptions
from calviz.analysis.views import view_names
from calviz.cli import check_summary


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    n, k = 3000, 4
    probs = rng.dirichlet(np.ones(k), size=n).round(2)  # ties and repeated rows
    probs /= probs.sum(axis=1, keepdims=True)
    labels = (rng.uniform(size=(n, 1)) > probs.cumsum(axis=1)).sum(axis=1).clip(0, k - 1)
    return as_calibration_data(labels, probs)


@pytest.fixture
def small_subsamples(monkeypatch):
    """Subsamples of a few hundred rows, so that the subsampled views run beside the others on 3000 rows."""
    import calviz.sampling as sampling

    monkeypatch.setitem(sampling.SAMPLED_ROWS, "distance", 700)


def test_overlapped_check_equals_the_sequential_one(data, small_subsamples, monkeypatch):
    options = AnalysisOptions(resampling="analytic", seed=3)
    sequential = json.dumps(check_summary(data, options), allow_nan=False)

    threads: dict[str, str] = {}
    run_view = run.run_view

    def recorded(name, rows, opts):
        threads[name] = threading.current_thread().name
        return run_view(name, rows, opts)

    monkeypatch.setattr(run, "run_view", recorded)
    monkeypatch.setattr(run, "OVERLAP_MIN_ROWS", 0)
    monkeypatch.setattr("numba.get_num_threads", lambda: 2)
    overlapped = json.dumps(check_summary(data, options), allow_nan=False)

    assert overlapped == sequential
    main = threading.main_thread().name
    beside = {name for name, thread in threads.items() if thread != main}
    assert "distance" in beside and "tcal" not in beside and "classical" not in beside


def test_run_views_returns_the_views_in_order_with_their_notes(data, small_subsamples):
    options = AnalysisOptions(seed=3)
    names = tuple(name for name in view_names(in_check=True) if run.view(name).applies(data, options))
    names = ("distance",) + names  # a view twice: each its own result, in its place
    one = run.run_views(names, data, options, overlap=False)
    two = run.run_views(names, data, options, overlap=True)
    assert [json.dumps(strict_json(r)) for r, _, _ in one] == [json.dumps(strict_json(r)) for r, _, _ in two]
    assert [e for _, _, e in one] == [e for _, _, e in two]
    assert one[0][2] and "700" in one[0][2]  # the distance view's note: it ran on the subsample
