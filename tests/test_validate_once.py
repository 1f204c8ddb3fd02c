"""Validate once: one calviz.analyze on the default dataset validates the predictions once and resolves
the analysis' target once; the views get the validated CalibrationData (and, where the estimator takes
one, the resolved Target)."""

from __future__ import annotations

import collections
import sys

from calviz._data import CalibrationData
from calviz.datasets import DEFAULT_DATASET, load_dataset


def _count(monkeypatch, function, module_prefix="calviz"):
    """Replace ``function`` wherever a calviz module holds it; returns the list of calls (args, caller
    module)."""
    calls = []

    def counting(*args, **kwargs):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        calls.append((args, kwargs, caller))
        return function(*args, **kwargs)

    for name, module in list(sys.modules.items()):
        if name.startswith(module_prefix) and module is not None:
            for attribute, value in list(vars(module).items()):
                if value is function:
                    monkeypatch.setattr(module, attribute, counting)
    return calls


def test_analyze_validates_once_and_resolves_each_target_once(monkeypatch):
    import calviz._data
    import calviz.analysis
    import calviz.targets

    data = load_dataset(DEFAULT_DATASET)
    y, p = data.labels, data.probs
    validations = _count(monkeypatch, calviz._data.as_calibration_data)
    resolutions = _count(monkeypatch, calviz.targets.resolve)
    result = calviz.analyze((y, p), n_resamples=50)
    assert not result.errors, result.errors
    # the arrays are validated once; every later call is handed the validated CalibrationData
    validating = [args for args, _, _ in validations if not isinstance(args[0], CalibrationData)]
    assert len(validating) == 1, validations
    # the analysis layer resolves its target once (names → Target); the views receive that Target
    by_analysis = collections.Counter(args[1] for args, _, caller in resolutions
                                      if caller.startswith(("calviz.analysis", "calviz.targets"))
                                      and isinstance(args[1], str))
    assert by_analysis and max(by_analysis.values()) == 1, by_analysis
