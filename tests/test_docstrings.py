"""The public functions' docstrings: numpydoc sections, full references, and examples that run."""

from __future__ import annotations

import doctest
import importlib

import pytest

#: the most used public functions (module, name)
DOCUMENTED = [
    ("calviz.ece", "binned_ece"),
    ("calviz.tcal", "adaptive_tcal"),
    ("calviz.intervals", "ece_interval"),
    ("calviz.distance", "smce"),
    ("calviz.analysis", "analyze"),
]


@pytest.mark.parametrize(("module", "name"), DOCUMENTED)
def test_docstring_sections_and_examples(module, name):
    function = getattr(importlib.import_module(module), name)
    doc = function.__doc__ or ""
    for section in ("Parameters", "Returns", "References", "Examples"):
        assert f"\n    {section}\n    {'-' * len(section)}\n" in doc, f"{name}: no {section} section"
    # references by authors and year, never an internal file name
    assert ".. [1]" in doc and "seed 00" not in doc.lower() and "estimators.md" not in doc
    tests = doctest.DocTestFinder().find(function, name, globs={})
    assert tests and tests[0].examples, f"{name}: no runnable example"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{name}: {runner.failures} example(s) failed (run with -s for the diff)"
