"""Embedded datasets: every dataset loads and validates, loads are deterministic, the cache works."""

from __future__ import annotations

import numpy as np
import pytest

from calviz import datasets
from calviz._data import CalibrationData, InputError


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory):
    """One cache directory for the module so each model is trained once per test process."""
    mp = pytest.MonkeyPatch()
    mp.setenv("CALVIZ_CACHE_DIR", str(tmp_path_factory.mktemp("calviz-cache")))
    yield
    mp.undo()


ALL_NAMES = [info.name for info in datasets.list_datasets()]
MODEL_NAMES = [info.name for info in datasets.list_datasets() if info.kind == "model"]
SCENARIO_NAMES = [info.name for info in datasets.list_datasets() if info.kind == "scenario"]


def test_listing_is_consistent():
    infos = datasets.list_datasets()
    names = [i.name for i in infos]
    assert len(names) == len(set(names)), "dataset names must be unique"
    assert datasets.DEFAULT_DATASET in names
    for info in infos:
        assert info.kind in ("model", "scenario")
        assert info.K >= 2 and info.n >= 2 and info.description
        assert datasets.dataset_info(info.name) == info
    # the families and recalibrations promised in the module docstring are all there
    for family in ("digits", "breast-cancer", "tabular"):
        for model in ("gnb", "logreg", "rf", "gnb-platt", "gnb-isotonic", "gnb-temperature",
                      "rf-platt", "rf-isotonic", "rf-temperature"):
            assert f"{family}-{model}" in names
    assert {i.K for i in infos if i.name.startswith("digits")} == {10}
    assert {i.K for i in infos if i.name.startswith("breast-cancer")} == {2}


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_model_dataset_loads_and_matches_info(name, module_cache):
    info = datasets.dataset_info(name)
    data = datasets.load_dataset(name)
    assert isinstance(data, CalibrationData)
    assert data.n == info.n and data.n_classes == info.K
    assert data.is_binary == (info.K == 2)
    # every class of the held-out split is present (stratified split)
    assert len(np.unique(data.labels)) == info.K
    again = datasets.load_dataset(name)
    np.testing.assert_array_equal(again.probs, data.probs)
    np.testing.assert_array_equal(again.labels, data.labels)


_NO_SCENARIOS = [pytest.param("none", marks=pytest.mark.skip(reason="calviz.synthetic has no scenarios"))]


@pytest.mark.parametrize("name", SCENARIO_NAMES or _NO_SCENARIOS)
def test_scenario_dataset_loads_deterministically(name):
    a = datasets.load_dataset(name, n=300, seed=1)
    b = datasets.load_dataset(name, n=300, seed=1)
    c = datasets.load_dataset(name, n=300, seed=2)
    assert a.n == 300 and a.n_classes == datasets.dataset_info(name).K
    np.testing.assert_array_equal(a.probs, b.probs)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert not (np.array_equal(a.probs, c.probs) and np.array_equal(a.labels, c.labels))


def test_subsample_is_deterministic_and_bounded(module_cache):
    a = datasets.load_dataset("digits-logreg", n=100, seed=3)
    b = datasets.load_dataset("digits-logreg", n=100, seed=3)
    c = datasets.load_dataset("digits-logreg", n=100, seed=4)
    assert a.n == 100
    np.testing.assert_array_equal(a.probs, b.probs)
    assert not np.array_equal(a.probs, c.probs)
    with pytest.raises(InputError, match="held-out rows"):
        datasets.load_dataset("digits-logreg", n=10**6)
    with pytest.raises(InputError, match=r"^The 'n' parameter of load_dataset must be an int in \[2, inf\)"):
        datasets.load_dataset("digits-logreg", n=1)


def test_unknown_name_lists_choices():
    with pytest.raises(InputError, match="unknown dataset 'nope'.*digits-gnb"):
        datasets.load_dataset("nope")


def test_cache_is_written_and_then_used(tmp_path, monkeypatch):
    monkeypatch.setenv("CALVIZ_CACHE_DIR", str(tmp_path))
    first = datasets.load_dataset("breast-cancer-logreg")
    files = list(tmp_path.rglob("*.npz"))
    assert [f.name for f in files] == ["breast-cancer-logreg.npz"]
    assert "sklearn" in files[0].parent.name and "calviz" in files[0].parent.name

    def refuse(*args, **kwargs):
        raise AssertionError("recomputed although the cache holds the predictions")

    monkeypatch.setattr(datasets, "_compute_model_predictions", refuse)
    second = datasets.load_dataset("breast-cancer-logreg")
    np.testing.assert_array_equal(first.probs, second.probs)
    np.testing.assert_array_equal(first.labels, second.labels)


def test_corrupt_cache_is_recomputed(tmp_path, monkeypatch):
    monkeypatch.setenv("CALVIZ_CACHE_DIR", str(tmp_path))
    good = datasets.load_dataset("breast-cancer-gnb")
    (path,) = tmp_path.rglob("*.npz")
    path.write_bytes(b"not an npz file")
    again = datasets.load_dataset("breast-cancer-gnb")
    np.testing.assert_array_equal(good.probs, again.probs)


def test_unwritable_cache_falls_back_to_recomputing(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("a cache directory cannot live under a regular file")
    monkeypatch.setenv("CALVIZ_CACHE_DIR", str(blocker / "cache"))
    data = datasets.load_dataset("breast-cancer-rf")
    assert data.n == datasets.dataset_info("breast-cancer-rf").n


def test_cache_dir_default(monkeypatch, tmp_path):
    monkeypatch.delenv("CALVIZ_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert datasets.cache_dir() == tmp_path / "calviz"


def test_models_are_miscalibrated_the_documented_way(module_cache):
    """Naive Bayes is overconfident (mean confidence well above accuracy) and temperature scaling
    brings the two together; this is what makes the default dataset a useful demonstration."""
    conf, correct = datasets.load_dataset("tabular-gnb").top1()
    assert conf.mean() - correct.mean() > 0.1
    conf, correct = datasets.load_dataset("tabular-gnb-temperature").top1()
    # n = 12 000: the standard error of the accuracy is about 0.004
    assert abs(conf.mean() - correct.mean()) < 0.03


def test_fit_temperature_recovers_the_true_temperature():
    rng = np.random.default_rng(0)
    n, k, true_t = 20_000, 5, 2.0
    logits = rng.normal(scale=3.0, size=(n, k))
    p = np.exp(logits / true_t)
    p /= p.sum(axis=1, keepdims=True)
    labels = (p.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    t = datasets.fit_temperature(logits, labels)
    # the MLE's standard error at this n is about 0.02; 0.1 is five of them
    assert abs(t - true_t) < 0.1, t
