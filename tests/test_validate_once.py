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


@pytest.mark.parametrize("target", ["auto", "classwise"])
def test_analyze_validates_once_and_resolves_each_target_once(monkeypatch, target):
    data = load_dataset(DEFAULT_DATASET)
    y, p = np.array(data.labels), np.array(data.probs)
    validations = _count(monkeypatch, calviz._data.as_calibration_data)
    resolutions = _count(monkeypatch, calviz.targets.resolve)
    result = calviz.analyze((y, p), n_resamples=50, target=target, class_index=1)
    assert not result.errors, result.errors
    assert set(result.timings) >= {"reliability", "tcal", "interval", "distance", "classical"}
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
