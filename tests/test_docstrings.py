"""The public API's docstrings: numpydoc sections, full references, and examples that run.

Every public function — everything in ``calviz.__all__`` and the public functions of the modules in
``MODULES`` — has a one-line summary, Parameters (when it takes any), Returns and Examples; the estimators
and tests also cite their papers in a References section.  Every result class lists its attributes.  The
Examples are run here with :mod:`doctest` (pytest collects only ``tests/``, so the doctests in ``calviz/``
run through this file).  README's Python examples run too.
"""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import inspect
import pathlib
import re
import warnings

import numpy as np
import pytest

import calviz

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: modules whose public functions (defined there, name without a leading underscore) are documented
MODULES = ["calviz.plots", "calviz.present.report", "calviz.present.text", "calviz.present.frames",
           "calviz.present.verdict", "calviz.present.progress", "calviz.present.over_time",
           "calviz.present.verification",
           "calviz.present.labels", "calviz.present.comparisons", "calviz._notebook", "calviz.datasets",
           "calviz._recalibration", "calviz._comparison", "calviz._classical", "calviz.io",
           "calviz._distance_results", "calviz._brownian"]

#: public submodules: every name in their ``__all__`` (functions and result classes) is documented
SUBMODULES = ["calviz.dask", "calviz.analysis", "calviz.targets", "calviz.sampling"]

#: modules whose functions compute a statistic from a paper: they must cite it
CITING_MODULES = {"calviz._ece", "calviz._intervals", "calviz._tcal", "calviz._distance", "calviz._smooth",
                  "calviz._classical", "calviz._comparison", "calviz._recalibration", "calviz.analysis"}
#: functions of those modules that compute nothing from a paper (plumbing)
NO_PAPER = {"check_same_examples", "calibrated_classifier", "softmax", "ece_ci", "bin_sums", "is_distributed",
            "prepare", "with_option_values"}
#: functions of the public submodules that compute a statistic from a paper (the distributed twins of the
#: estimators cite through their in-memory documentation)
CITING_FUNCTIONS = {f"calviz.dask.{name}" for name in (
    "partition_sums", "multiscale_debiased_ece", "scale_sums", "resampled_tcal", "subsample_measure",
    "multi_reliability", "analyze_parquet")} | {"calviz.sampling.smce_sampling_error",
                                                "calviz.sampling.subsample_interval"}


def _public():
    found = {}
    for name in calviz.__all__:
        if name == "__version__":
            continue
        module = calviz._EXPORTS[name]
        found[f"{module}.{name}"] = (module, name, vars(importlib.import_module(module))[name])
    # deprecated in the namespace for one release, still documented
    for name, (module, _) in calviz._DEPRECATED_NAMES.items():
        found[f"{module}.{name}"] = (module, name, getattr(importlib.import_module(module), name))
    for module in MODULES:
        for name, obj in vars(importlib.import_module(module)).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module:
                continue
            if inspect.isfunction(obj) or inspect.isclass(obj):
                found.setdefault(f"{module}.{name}", (module, name, obj))
    for module in SUBMODULES:
        try:
            loaded = importlib.import_module(module)
        except ImportError:  # calviz.dask without the dask extra
            continue
        for name in loaded.__all__:
            obj = getattr(loaded, name)
            if inspect.isfunction(obj) or (inspect.isclass(obj) and (
                    dataclasses.is_dataclass(obj) or issubclass(obj, Exception))):
                found.setdefault(f"{module}.{name}", (module, name, obj))
    # the result objects the public functions return, wherever they are defined
    for module in sorted(set(calviz._EXPORTS.values()) | set(MODULES)):
        for name, obj in vars(importlib.import_module(module)).items():
            if not name.startswith("_") and dataclasses.is_dataclass(obj) and obj.__module__ == module:
                found.setdefault(f"{module}.{name}", (module, name, obj))
    return found


PUBLIC = _public()
FUNCTIONS = sorted(key for key, (_, _, obj) in PUBLIC.items() if inspect.isfunction(obj))
CLASSES = sorted(key for key, (_, _, obj) in PUBLIC.items() if inspect.isclass(obj))


def _sections(doc: str) -> set[str]:
    return set(re.findall(r"^ *(\w[\w ]*)\n *-{3,}$", doc, flags=re.M))


def _takes_parameters(function) -> bool:
    return bool(_parameter_names(function))


def _parameter_names(function) -> list[str]:
    return [p.name for p in inspect.signature(function).parameters.values() if p.name not in ("self", "cls")]


def _documented_parameters(doc: str, section: str = "Parameters") -> set[str]:
    """Names in a Parameters-like section: its unindented lines, ``name : type`` or ``a, b : type``."""
    header = f"{section}\n{'-' * len(section)}\n"
    if header not in doc:
        return set()
    section = re.split(r"\n\n\w[\w ]*\n-{3,}\n", doc.split(header, 1)[1])[0]
    names = set()
    for line in section.splitlines():
        if line and not line.startswith(" "):
            names.update(name.strip().lstrip("*") for name in line.split(" : ")[0].split(","))
    return names


def test_every_public_function_is_listed():
    assert len(FUNCTIONS) > 100 and len(CLASSES) > 15
    assert "calviz._ece.binned_ece" in FUNCTIONS and "calviz.plots.reliability_plot" in FUNCTIONS


@pytest.mark.parametrize("key", FUNCTIONS)
def test_function_docstring_sections(key):
    module, name, function = PUBLIC[key]
    doc = inspect.getdoc(function) or ""
    summary = doc.split("\n\n")[0]
    assert summary and "\n" not in summary.strip(), f"{key}: the summary is not one line"
    sections = _sections(doc)
    needed = {"Returns", "Examples"} | ({"Parameters"} if _takes_parameters(function) else set())
    if (module in CITING_MODULES and name not in NO_PAPER) or key in CITING_FUNCTIONS:
        needed.add("References")
    assert needed <= sections, f"{key}: missing {sorted(needed - sections)}"
    documented = _documented_parameters(doc) | _documented_parameters(doc, "Other Parameters")
    undocumented = [p for p in _parameter_names(function) if p not in documented]
    assert not undocumented, f"{key}: parameters not in the Parameters section: {undocumented}"
    if "References" in sections:
        # full citations: numbered, with authors and a year
        refs = doc.split("References\n----------\n")[1].split("\n\n")[0]
        assert ".. [1]" in refs and re.search(r"(19|20)\d\d", refs), f"{key}: references without a year"


@pytest.mark.parametrize("key", CLASSES)
def test_class_docstring_lists_attributes(key):
    _, _, cls = PUBLIC[key]
    doc = inspect.getdoc(cls) or ""
    summary = doc.split("\n\n")[0]
    assert summary and "\n" not in summary.strip(), f"{key}: the summary is not one line"
    if issubclass(cls, Exception):
        return
    assert "Attributes" in _sections(doc) or "Parameters" in _sections(doc), f"{key}: no Attributes section"
    if dataclasses.is_dataclass(cls):
        listed = _documented_parameters(doc, "Attributes") | _documented_parameters(doc)
        missing = [f.name for f in dataclasses.fields(cls)
                   if not f.name.startswith("_") and f.name not in listed]
        assert not missing, f"{key}: fields not in the Attributes section: {missing}"


def _doctest_flags() -> int:
    """The doctest flags of the project's pytest configuration: ``pytest --doctest-modules calviz`` runs the
    examples with these, and so does this file (one configuration, so both agree on every example)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    names = config["tool"]["pytest"]["ini_options"].get("doctest_optionflags", [])
    flags = 0
    for flag in names.split() if isinstance(names, str) else names:
        flags |= doctest.OPTIONFLAGS_BY_NAME[flag]
    return flags


def test_doctest_flags_are_the_projects():
    """The examples wrap long outputs: without NORMALIZE_WHITESPACE in the project's configuration,
    ``pytest --doctest-modules calviz`` failed on them while this file's runner passed them."""
    assert _doctest_flags() & doctest.NORMALIZE_WHITESPACE and _doctest_flags() & doctest.ELLIPSIS


def _run_examples(obj, name, module):
    tests = doctest.DocTestFinder(recurse=False).find(obj, name, module=module, globs={})
    examples = [e for t in tests for e in t.examples]
    runner = doctest.DocTestRunner(optionflags=_doctest_flags())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        state = np.get_printoptions()
        try:
            for test in tests:
                runner.run(test)
        finally:
            np.set_printoptions(**state)
    return examples, runner.failures


@pytest.mark.parametrize("key", FUNCTIONS)
def test_function_examples_run(key):
    module, name, function = PUBLIC[key]
    examples, failures = _run_examples(function, name, importlib.import_module(module))
    assert examples, f"{key}: no runnable example"
    assert failures == 0, f"{key}: {failures} example(s) failed (run with -s for the diff)"


@pytest.mark.parametrize("key", CLASSES)
def test_class_examples_run(key):
    module, name, cls = PUBLIC[key]
    _, failures = _run_examples(cls, name, importlib.import_module(module))
    assert failures == 0, f"{key}: {failures} example(s) failed (run with -s for the diff)"


def test_no_internal_file_names_in_the_package():
    """Users read the package source too: papers are cited by authors and year, never by a file name that
    only the authors have."""
    offending = []
    for path in sorted((ROOT / "calviz").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"seed[ -]?00\d|estimators\.md|product\.md", line, flags=re.I):
                offending.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offending, "\n".join(offending)


def _readme_python_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_python_examples_run(tmp_path, monkeypatch):
    """README's Python blocks, in order, in one namespace (as a reader pastes them into one notebook).
    The Dask block needs a Parquet directory and the Dask extra: it is run by tests/test_dask*.py's own
    examples, not here.  Names a block leaves to the reader (``region``, ``y_true``, ``y_prob``) are given."""
    blocks = [b for b in _readme_python_blocks() if "calviz.dask" not in b]
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)
    from calviz.datasets import load_dataset

    data = load_dataset("digits-gnb")
    namespace = {"region": np.arange(data.n) % 3, "y_true": data.labels, "y_prob": data.probs}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for block in blocks:
            exec(compile(block, "README.md", "exec"), namespace)
    # README shows only current names: no deprecation warning raised by a README line itself (calviz warns at
    # the caller's line; other libraries' internal warnings point into their own files)
    deprecated = [str(w.message) for w in caught
                  if issubclass(w.category, DeprecationWarning) and w.filename == "README.md"]
    assert not deprecated, deprecated
