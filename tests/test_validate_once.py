"""Validate once: one calviz.analyze on the default dataset validates the predictions once and resolves its
target once; the engine's estimators, handed the validated CalibrationData and the resolved target, do not
validate or resolve them again (calviz._data.validate_once, calviz.targets.resolve_once) — and a direct
call of an estimator keeps every check and every message."""

from __future__ import annotations

import collections
import sys

import numpy as np
import pytest

import calviz
import calviz._data
import calviz.analysis
import calviz.targets
from calviz._data import CalibrationData, validate_once
from calviz._params import InvalidParameterError
from calviz.datasets import DEFAULT_DATASET, load_dataset
from calviz.targets import Target, resolve, resolve_once


def _count(monkeypatch, function):
    """Replace ``function`` wherever a calviz module holds it — the module that defines it and every
    module that imported it — by a counting wrapper; returns the list of calls (args, kwargs, caller)."""
    calls = []

    def counting(*args, **kwargs):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        calls.append((args, kwargs, caller))
        return function(*args, **kwargs)

    patched = 0
    for name, module in list(sys.modules.items()):
        if (name == "calviz" or name.startswith("calviz.")) and module is not None:
            for attribute, value in list(vars(module).items()):
                if value is function:
                    monkeypatch.setattr(module, attribute, counting)
                    patched += 1
    assert patched  # where it is defined, and every module that imported it
    return calls


def _target_name(target) -> str:
    return target.name if isinstance(target, Target) else target


def _resolved_as(args, kwargs) -> tuple:
    """The target a :func:`resolve` call asks for: its name, k and class (a Target: its own)."""
    target = args[1] if len(args) > 1 else kwargs.get("target", "auto")
    if isinstance(target, Target):
        return target.name, target.top_k, target.class_index
    top_k = args[2] if len(args) > 2 else kwargs.get("top_k", 1)
    class_index = args[3] if len(args) > 3 else kwargs.get("class_index", 0)
    return target, top_k, class_index


@pytest.mark.parametrize("target", ["auto", "classwise", "topk", "full"])
def test_analyze_validates_once_and_resolves_each_target_once(monkeypatch, target):
    """Also for the vector targets: their per-rank / per-class reliability panels, intervals and T-Cal are
    computed from the one validated data (the panels' pairs are cut from it, not validated again)."""
    data = load_dataset(DEFAULT_DATASET)
    assert data.n_classes == 4  # (top-k and full are vector targets of these data)
    y, p = np.array(data.labels), np.array(data.probs)
    validations = _count(monkeypatch, calviz._data.as_calibration_data)
    resolutions = _count(monkeypatch, calviz.targets.resolve)
    # (the vector targets' resampled T-Cal on the simplex takes about a minute on these data; it validates
    # and resolves as their analytic test does)
    resampling = {} if target in ("auto", "classwise") else {"resampling": "analytic"}
    result = calviz.analyze((y, p), n_resamples=50, target=target, class_index=1, top_k=3, **resampling)
    assert not result.errors, result.errors
    assert set(result.timings) >= {"reliability", "tcal", "interval", "distance", "classical"}
    if target in ("topk", "full"):  # the panels of a vector target
        assert len(result.reliability) == {"topk": 3, "full": 4}[target]
    # each target asked for (name, k, class) is resolved once
    per_target = collections.Counter(_resolved_as(args, kwargs) for args, kwargs, _ in resolutions)
    assert per_target and max(per_target.values()) == 1, per_target
    # the arrays are validated once, in the whole package; every later call is handed the validated data
    assert len(validations) == 1, [(type(a[0]).__name__, caller) for a, _, caller in validations]
    assert not isinstance(validations[0][0][0], CalibrationData)
    # each target is resolved once (the analysis resolves it; the views get the Target, or its name, from
    # the validated data's memo)
    per_name = collections.Counter(_target_name(args[1]) for args, _, _ in resolutions)
    assert per_name and max(per_name.values()) == 1, per_name


def test_validated_data_is_used_as_it_is_and_arrays_are_validated(monkeypatch):
    data = calviz.as_calibration_data([0, 1, 1], [0.2, 0.9, 0.6])
    validations = _count(monkeypatch, calviz._data.as_calibration_data)
    assert validate_once(data) is data and not validations
    # the cases as_calibration_data itself decides: arrays, two arguments, too few rows
    with pytest.raises(calviz.InputError, match="not both"):
        validate_once(data, [0.1, 0.2, 0.3])
    with pytest.raises(calviz.InputError, match="at least 4 samples"):
        validate_once(data, min_samples=4)
    with pytest.raises(calviz.InputError, match=r"\[0, 1\]"):
        validate_once([0, 1], [0.2, 1.3])
    assert len(validations) == 3


def test_a_direct_call_keeps_every_check_and_message():
    """The memo of resolved targets never changes what resolve returns or refuses."""
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), size=200)
    y = rng.integers(0, 3, size=200)
    data = calviz.as_calibration_data(y, p)
    calviz.analyze(data, resampled=False, target="topk", top_k=2)  # fills the memo of these data
    scalar = ("auto", "binary", "top1", "classwise")
    for target in ["auto", "top1", "topk", "full", "classwise", "binary",
                   resolve(data, "topk", 2), resolve(data, "classwise", class_index=2)]:
        for top_k, class_index in ((1, 0), (2, 2), (5, 7), (1.0, 0), (True, 1)):
            for allowed in (calviz.targets.TARGETS, scalar):
                outcomes = []
                for function in (resolve, resolve_once, resolve_once):  # the second resolve_once: memoised
                    try:
                        outcomes.append(function(data, target, top_k, class_index, allowed=allowed,
                                                 caller="binned_ece"))
                    except (calviz.InputError, ValueError) as error:
                        outcomes.append((type(error), str(error)))
                assert outcomes[0] == outcomes[1] == outcomes[2], (target, top_k, class_index, allowed)
    # a Target of other data (3 classes → 4) is resolved again, for these data
    other = calviz.as_calibration_data(rng.integers(0, 4, size=50), rng.dirichlet(np.ones(4), size=50))
    assert resolve_once(other, resolve(data, "top1")) == resolve(other, "top1")
    # an estimator refuses a target it does not allow after the analysis resolved it
    with pytest.raises(InvalidParameterError, match="classical_tests"):
        calviz.classical_tests(data, target=resolve(data, "topk", 2))


def test_the_engine_computes_the_same_numbers_from_the_memo():
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(4), size=300)
    y = rng.integers(0, 4, size=300)
    data = calviz.as_calibration_data(y, p)
    fresh = calviz.binned_ece(y, p, target="classwise", class_index=3).value
    target = resolve_once(data, "classwise", class_index=3)
    assert calviz.binned_ece(data, target=target).value == fresh
    assert calviz.binned_ece(data, target="classwise", class_index=3).value == fresh
    # a Target names its class: every measure of the classical tests is of that class
    by_name = calviz.classical_tests(y, p, target="classwise", class_index=3, measures=True)
    by_target = calviz.classical_tests(data, target=target, measures=True)
    assert by_target.measures["mce"].value == by_name.measures["mce"].value
    assert by_target.to_dict() == by_name.to_dict()


@pytest.mark.parametrize("weighted", [False, True])
def test_the_vector_targets_panels_equal_the_engines_diagram_of_each_pair(weighted):
    """The per-rank and per-class panels, computed from the validated data's views without validating them
    again, are calviz.reliability of each (z, y) pair passed as arrays (ties, a bin edge, weights)."""
    from calviz._weights import with_weights
    from calviz.analysis import AnalysisOptions, compute_multi_reliability

    rng = np.random.default_rng(4)
    # duplicated rows (ties) and rows on the bin edges of 4 and 10 bins
    p = np.vstack([np.repeat(rng.dirichlet(np.ones(4), size=95), 4, axis=0),
                   np.tile([[0.5, 0.25, 0.25, 0.0], [0.5, 0.5, 0.0, 0.0]], (10, 1))])
    y = rng.integers(0, 4, size=p.shape[0])
    data = calviz.as_calibration_data(y, p)
    w = rng.integers(0, 3, size=data.n).astype(float) if weighted else None
    data = with_weights(data, w) if weighted else data
    for options in (AnalysisOptions(target="topk", top_k=3, n_bins=10),
                    AnalysisOptions(target="full", n_bins=4, scheme="equal_mass"),
                    AnalysisOptions(target="full", n_bins=4)):
        shown = compute_multi_reliability(data, options)
        if options.target == "topk":
            z, labels = data.topk(3)
            pairs = [(z[:, r], labels[:, r]) for r in range(3)]
        else:
            pairs = [data.classwise(c) for c in range(4)]
        for panel, (z, labels) in zip(shown.panels, pairs, strict=True):
            expected = calviz.reliability(labels.astype(np.int64), np.array(z), n_bins=options.n_bins,
                                          scheme=options.scheme, alpha=options.alpha, sample_weight=w)
            np.testing.assert_equal(panel.to_dict(), expected.to_dict())  # (empty bins: NaN == NaN)
