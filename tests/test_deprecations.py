"""Names deprecated for one release: the old module paths, the plumbing that left the top-level namespace,
and options that became keyword-only.  Each old spelling warns (``DeprecationWarning`` that names what to
use instead, pointed at the caller's line) and gives the same result as the new one."""

from __future__ import annotations

import contextlib
import importlib
import json
import pathlib
import re
import sys
import types
import warnings

import numpy as np
import pytest

import calviz
from calviz._binning import assign_bins
from calviz._intervals import interval_from_sums
from calviz._sums import bin_sums

RENAMED = sorted(calviz._RENAMED_MODULES)
CALLABLE = ("tcal", "report", "dashboard")

rng = np.random.default_rng(7)
P = rng.uniform(0.02, 0.98, size=400)
Y = (rng.uniform(size=400) < P**1.3).astype(int)


@contextlib.contextmanager
def old_paths_forgotten():
    """Earlier imports of the old paths (and what they bound on the package) forgotten before and after."""
    saved = {name: vars(calviz).get(name) for name in RENAMED}

    def forget():
        for name in RENAMED:
            sys.modules.pop(f"calviz.{name}", None)
            vars(calviz).pop(name, None)

    forget()
    try:
        yield
    finally:
        forget()
        vars(calviz).update({name: value for name, value in saved.items()
                             if value is not None and not isinstance(value, types.ModuleType)})


@pytest.fixture
def fresh_old_paths():
    """Forget earlier imports of the old paths (and what they bound on the package) around a test."""
    with old_paths_forgotten():
        yield


def _import_old(name):
    with pytest.warns(DeprecationWarning, match=rf"the module calviz\.{name} is deprecated") as caught:
        module = importlib.import_module(f"calviz.{name}")
    return module, caught


# -- old module paths ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", RENAMED)
def test_old_module_path_warns_and_forwards(name, fresh_old_paths):
    old, caught = _import_old(name)
    private = importlib.import_module(f"calviz.{calviz._RENAMED_MODULES[name]}")
    message = str(caught[0].message)
    assert "removed in the next release" in message
    public = [n for n, module in calviz._EXPORTS.items() if module == private.__name__]
    assert ("calviz." in message.split("; ")[1]) if public else (private.__name__ in message)
    for attribute in [n for n in vars(private) if not n.startswith("__")][:50]:
        assert getattr(old, attribute) is getattr(private, attribute)
    assert set(dir(old)) == set(dir(private))
    # no module anywhere had its class swapped
    assert type(private) is types.ModuleType


def test_from_old_path_import_gives_the_same_objects(fresh_old_paths):
    with pytest.warns(DeprecationWarning, match=r"calviz\.ece is deprecated.*calviz\.\w+"):
        from calviz.ece import binned_ece
    with pytest.warns(DeprecationWarning, match=r"calviz\.tcal is deprecated"):
        from calviz.tcal import adaptive_tcal
    assert binned_ece is calviz.binned_ece and adaptive_tcal is calviz.adaptive_tcal
    old = binned_ece(Y, P, n_bins=10)
    assert old.to_dict() == calviz.binned_ece(Y, P, n_bins=10).to_dict()


def test_warning_points_at_the_import_statement(fresh_old_paths):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import calviz.smooth  # noqa: F401
        _ = calviz.distance
    ours = [w for w in caught if "is deprecated" in str(w.message)]
    assert [w.filename for w in ours] == [__file__, __file__]
    assert all(issubclass(w.category, DeprecationWarning) for w in ours)


def test_attribute_access_to_an_old_module_warns(fresh_old_paths):
    with pytest.warns(DeprecationWarning, match=r"calviz\.intervals is deprecated.*calviz\.ece_interval"):
        old = calviz.intervals
    assert old.ece_interval is calviz.ece_interval


def test_monkeypatching_through_the_old_path_reaches_the_implementation(fresh_old_paths, monkeypatch):
    old, _ = _import_old("ece")
    private = importlib.import_module("calviz._ece")
    marker = object()
    monkeypatch.setattr(old, "binned_ece", marker)
    assert private.binned_ece is marker
    monkeypatch.undo()
    assert private.binned_ece is not marker


def test_the_monkeypatch_test_after_an_earlier_import_of_the_old_path_in_the_process():
    """The test above, run as pytest runs it — its fixtures' set-up, the patch through the old path, pytest's
    ``monkeypatch.undo``, the fixtures' tear-down (``monkeypatch``'s first) — after the old path was imported
    earlier in the same process and kept (as another test of the same worker, or a user's module, would), two
    times in a row: ``undo`` was reported to delete ``calviz._ece.binned_ece`` in that order.  The
    implementation keeps its function, and the earlier module and the package still reach it."""
    private = importlib.import_module("calviz._ece")
    original = private.binned_ece
    expected = original(Y, P, n_bins=10).to_dict()
    try:
        for _ in range(2):
            with old_paths_forgotten():  # (this test's own: it leaves the process's imports as it found them)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    earlier = importlib.import_module("calviz.ece")  # imported first, and kept
                with old_paths_forgotten():  # the test's fixtures: fresh_old_paths, then monkeypatch
                    monkeypatch = pytest.MonkeyPatch()
                    try:
                        test_monkeypatching_through_the_old_path_reaches_the_implementation(None, monkeypatch)
                    finally:
                        monkeypatch.undo()
                assert vars(private).get("binned_ece") is original, "undo deleted or lost the implementation"
                assert earlier.binned_ece is original and calviz.binned_ece is original
                assert calviz.binned_ece(Y, P, n_bins=10).to_dict() == expected
    finally:
        private.binned_ece = original  # (whatever happened above: never leave the engine without it)


@pytest.mark.parametrize("earlier", ["kept", "forgotten"])
def test_monkeypatching_after_an_earlier_import_of_the_old_path_restores_the_implementation(
        earlier, fresh_old_paths):
    """The old path imported earlier in the same process (another test, a user's module), then patched and
    restored through it — and through a fresh import — twice: ``undo`` puts the implementation's function
    back and never deletes it, and the earlier old module still reads the implementation."""
    private = importlib.import_module("calviz._ece")
    original = private.binned_ece
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        earlier_module = importlib.import_module("calviz.ece")
        if earlier == "forgotten":  # as the fixture above does: the next import makes a new old module
            sys.modules.pop("calviz.ece", None)
            vars(calviz).pop("ece", None)
        fresh = importlib.import_module("calviz.ece")
    try:
        for _ in range(2):
            for old in (earlier_module, fresh):
                patch = pytest.MonkeyPatch()
                marker = object()
                patch.setattr(old, "binned_ece", marker)
                assert private.binned_ece is marker and earlier_module.binned_ece is marker
                patch.undo()
                assert vars(private).get("binned_ece") is original, "undo deleted or lost the implementation"
                assert earlier_module.binned_ece is original and fresh.binned_ece is original
        assert calviz.binned_ece is original
    finally:
        private.binned_ece = original  # (whatever happened above: never leave the engine without it)


@pytest.mark.parametrize("name", CALLABLE)
def test_modules_named_like_their_function_stay_callable(name, fresh_old_paths, monkeypatch):
    """``import calviz.tcal`` binds the old module to ``calviz.tcal``; calling it still calls the function."""
    assert isinstance(getattr(calviz, name), types.FunctionType)  # the function, without any old import
    old, _ = _import_old(name)
    assert getattr(calviz, name) is old  # what the import system binds on the package
    private = importlib.import_module(f"calviz.{calviz._RENAMED_MODULES[name]}")
    calls = []
    monkeypatch.setattr(private, name, lambda *args, **kwargs: calls.append((args, kwargs)) or "result")
    assert old(1, 2, key=3) == "result" and calls == [((1, 2), {"key": 3})]


def test_old_tcal_module_call_equals_the_function(fresh_old_paths):
    old, _ = _import_old("tcal")
    assert old(Y, P, n_bins=8).to_dict() == calviz._tcal.tcal(Y, P, n_bins=8).to_dict()


def test_old_module_without_a_function_of_its_name_is_not_callable(fresh_old_paths):
    old, _ = _import_old("ece")
    with pytest.raises(TypeError, match="not callable"):
        old(Y, P)


# -- plumbing that left the top-level namespace ---------------------------------------------------------
@pytest.mark.parametrize("name", sorted(calviz._DEPRECATED_NAMES))
def test_plumbing_names_warn_and_name_the_replacement(name):
    module, instead = calviz._DEPRECATED_NAMES[name]
    assert name not in calviz.__all__ and name not in dir(calviz)
    with pytest.warns(DeprecationWarning, match=rf"calviz\.{name} is deprecated") as caught:
        value = getattr(calviz, name)
    assert instead in str(caught[0].message) and caught[0].filename == __file__
    assert value is getattr(importlib.import_module(module), name)


def test_plumbing_old_calls_give_the_same_results():
    with pytest.warns(DeprecationWarning):
        old = calviz.interval_from_sums(calviz.bin_sums(calviz.assign_bins(P, n_bins=10), P, Y), n_bins=10)
    new = interval_from_sums(bin_sums(assign_bins(P, n_bins=10), P, Y), n_bins=10)
    assert old.to_dict() == new.to_dict()
    with pytest.warns(DeprecationWarning, match="use calviz.ece_interval"):
        ece_ci = calviz.ece_ci
    with pytest.warns(DeprecationWarning, match="ece_ci is deprecated; use calviz.ece_interval"):
        old = ece_ci(Y, P, n_bins=10)
    assert old.to_dict() == calviz.ece_interval(Y, P, n_bins=10).to_dict()


def test_top_level_namespace_is_what_users_call():
    assert set(calviz.__all__) == set(calviz._EXPORTS) | {"__version__"}
    assert not set(calviz._DEPRECATED_NAMES) & set(calviz.__all__)
    plumbing = {"BinSums", "Bins", "assign_bins", "bin_sums", "interval_from_sums", "ece_ci"}
    assert set(calviz._DEPRECATED_NAMES) == plumbing
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in calviz.__all__:
            getattr(calviz, name)
        for name in calviz._SUBMODULES:
            assert isinstance(getattr(calviz, name), types.ModuleType)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = calviz.no_such_name


def test_no_module_swaps_its_class():
    package = pathlib.Path(calviz.__file__).parent
    offenders = [str(path) for path in package.rglob("*.py")
                 if ".__class__ =" in path.read_text(encoding="utf-8")]
    assert not offenders


# -- options that became keyword-only ----------------------------------------------------------------------
def test_report_path_by_position_warns_and_writes_the_same_file(tmp_path):
    with pytest.warns(DeprecationWarning, match=r"passing path of report by position is deprecated.*path="):
        old = calviz.report(Y, P, tmp_path / "old.html", n_bins=8, resampling="analytic")
    new = calviz.report(Y, P, path=tmp_path / "new.html", n_bins=8, resampling="analytic")
    assert old == tmp_path / "old.html" and new == tmp_path / "new.html"
    assert _without_run_details(old.read_text()) == _without_run_details(new.read_text())


def _without_run_details(report_html):
    """A report's text without what differs between two runs of the same analysis.

    That is the footer's run time, the minute the report was generated (two reports can straddle one), and
    the ids Bokeh and the embed give each document and model (they count up within the process, so even their
    lengths differ).
    """
    report_html = re.sub(r"<details><summary>Computed in .*?</details>", "", report_html, flags=re.S)
    report_html = re.sub(r"\b\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\b", "<generated>", report_html)
    report_html = re.sub(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", "<uuid>", report_html)
    return re.sub(r"\bp\d+(?=\\?\")", "<model id>", report_html)


def test_from_logits_labels_by_position_warn_and_give_the_same_data():
    logits = rng.normal(size=(50, 3))
    labels = rng.integers(0, 3, size=50)
    with pytest.warns(DeprecationWarning, match=r"y_true of from_logits by position.*y_true="):
        old = calviz.from_logits(logits, labels)
    new = calviz.from_logits(logits, y_true=labels)
    np.testing.assert_array_equal(old.probs, new.probs)
    np.testing.assert_array_equal(old.labels, new.labels)


def test_rintce_width_and_smce_test_eps_by_position_warn_and_agree():
    with pytest.warns(DeprecationWarning, match="width of rintce by position"):
        old = calviz.rintce(Y, P, 0.1)
    assert old.to_dict() == calviz.rintce(Y, P, width=0.1).to_dict()
    with pytest.warns(DeprecationWarning, match="eps0, eps1 of smce_test by position"):
        old = calviz.smce_test(Y, P, 0.01, 0.1)
    assert old.to_dict() == calviz.smce_test(Y, P, eps0=0.01, eps1=0.1).to_dict()


def test_keyword_only_shims_refuse_extra_or_doubled_arguments():
    with pytest.raises(TypeError, match="positional arguments"):
        calviz.from_logits([0.0, 1.0], [0, 1], "extra")
    with pytest.raises(TypeError, match="multiple values"):
        calviz.from_logits([0.0, 1.0], [0, 1], y_true=[0, 1])


def test_input_error_is_named_by_its_public_path():
    import pickle

    with pytest.raises(calviz.InputError) as caught:
        calviz.binned_ece([0, 1], [0.2, 1.3])
    assert type(caught.value).__module__ == "calviz"
    assert type(pickle.loads(pickle.dumps(caught.value))) is calviz.InputError


# -- the old calviz.dask helpers -------------------------------------------------------------------------
def test_old_dask_helpers_warn_and_equal_the_bin_sums_methods():
    cdask = pytest.importorskip("calviz.dask")
    from calviz._sums import BinSums, dyadic_keys

    fine = BinSums.of(P, Y.astype(float), dyadic_keys(P, 5), compensated=True)
    with pytest.warns(DeprecationWarning, match=r"calviz\.dask\.coarsen is deprecated.*BinSums\.coarsen"):
        old = cdask.coarsen(fine, 2)
    new = fine.coarsen(2)
    assert np.array_equal(old.keys, new.keys) and old.terms() == pytest.approx(new.terms(), rel=0, abs=0)
    with pytest.warns(DeprecationWarning, match=r"calviz\.dask\.third_cumulant is deprecated") as caught:
        kappa = cdask.third_cumulant(fine)
    assert caught[0].filename == __file__
    assert kappa == fine.terms()[4]


def test_ignored_options_of_the_distributed_functions_warn_and_change_nothing():
    cdask = pytest.importorskip("calviz.dask")
    with pytest.warns(DeprecationWarning, match="max_cells option of calviz.dask.resampled_tcal") as caught:
        old = cdask.resampled_tcal(Y, P, n_resamples=300, seed=2, max_cells=64)
    assert caught[0].filename == __file__
    new = cdask.resampled_tcal(Y, P, n_resamples=300, seed=2)
    assert json.dumps(old.to_dict(), default=str) == json.dumps(new.to_dict(), default=str)  # NaN == NaN
    estimate = cdask.subsample_measure("smce", Y, P, size=50, seed=1)
    with pytest.warns(DeprecationWarning, match=r"use \.level") as caught:
        assert estimate.confidence == estimate.level == 0.95
    assert caught[0].filename == __file__
