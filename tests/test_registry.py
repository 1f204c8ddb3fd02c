"""The view registry (calviz.analysis.views): every view has every piece, the surfaces derive their tables
from it, and no other module of the package keeps a table keyed by view names."""

from __future__ import annotations

import ast
import dataclasses
import pathlib

import numpy as np
import pytest

import calviz
from calviz import analysis, sampling
from calviz.analysis import AnalysisOptions, analyze
from calviz.analysis.options import OPTIONS
from calviz.analysis.views import REGISTRY, View, effective_target, view, view_names

ROOT = pathlib.Path(calviz.__file__).resolve().parent
NAMES = {record.name for record in REGISTRY}
OPTION_NAMES = {o.name for o in OPTIONS}
TARGET_KINDS = {"own", "diagram", "scalar", "full"}
SAMPLING_ERRORS = {"smce", "interval", "p-values"}


@pytest.mark.parametrize("record", REGISTRY, ids=lambda r: r.name)
def test_every_view_has_every_piece(record: View):
    assert record.name and record.name.isidentifier()
    assert callable(record.compute) and callable(record.applies) and callable(record.cost)
    assert record.reads and set(record.reads) <= OPTION_NAMES, record.reads
    assert len(set(record.reads)) == len(record.reads)
    assert record.targets.kind in TARGET_KINDS
    assert record.targets.why, f"{record.name}: say which targets it analyses as such and why not the others"
    assert record.label
    assert record.background in ("never", "always", "when_large")
    assert record.seconds_per_row > 0
    assert record.estimate_seconds(10_000, 3, AnalysisOptions()) > 0
    # a row policy: every row, or a subsample whose note states its sampling error
    assert (record.subsample is None) == (record.sampling_error == "")
    assert record.subsample is None or (record.subsample >= 2 and record.sampling_error in SAMPLING_ERRORS)
    # Dask: where it runs, or why it cannot
    assert (record.dask is None) != (record.not_on_dask is None), record.name
    assert record.dask in (None, "dask", "gathered", "dask_or_gathered")
    # the dashboard: a slot's view says what its progress line shows (on Dask every view is a job)
    if record.slot is not None:
        assert record.job_label, record.name
        assert record.stand_in is None or view(record.stand_in).in_background(0) is False
    if record.in_analysis:
        fields = {f.name for f in dataclasses.fields(analysis.Analysis)}
        assert record.results and set(record.results) <= fields
        assert record.slot is not None, f"{record.name}: the dashboard shows every view of the analysis"
    # a report section explains itself
    if record.title is not None:
        assert record.explanation and all(record.explanation), record.name
        # drawn as a figure or as a table, with a caption under it
        assert (record.figure is None) != (record.frame is None), record.name
        assert callable(record.caption), record.name
    assert record.frame is None or record.slot is not None, f"{record.name}: a table view has its card"


def test_stand_ins_and_slots_are_views():
    for record in REGISTRY:
        if record.stand_in is not None:
            assert record.stand_in in NAMES
    slots = [r.slot for r in REGISTRY if r.slot is not None]
    assert slots and set(slots) <= NAMES  # a slot is named after the view it shows


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(3), size=300)
    y = (p.cumsum(axis=1) < rng.random((300, 1))).sum(axis=1).clip(0, 2)
    return calviz.as_calibration_data(y, p)


@pytest.mark.parametrize("record", REGISTRY, ids=lambda r: r.name)
def test_every_compute_function_runs(record: View, small):
    options = AnalysisOptions(n_resamples=20, resampling="y_only")
    result = record.compute(small, options)
    assert result is not None
    if len(record.results) > 1:
        assert len(result) == len(record.results)


def test_derived_tables_follow_the_registry():
    from calviz.app.store import SLOTS, VIEW_INPUTS, ResultStore
    from calviz.plots import VIEW_EXPLANATIONS
    from calviz.present.report import VIEW_TITLES

    assert analysis.COMPUTE == {r.name: r.compute for r in REGISTRY}
    assert analysis.VIEWS == view_names(in_analysis=True)
    assert VIEW_INPUTS == {r.name: r.reads for r in REGISTRY}
    assert sampling.SAMPLED_ROWS == {r.name: r.subsample for r in REGISTRY if r.subsample}
    assert list(VIEW_TITLES) == [r.name for r in REGISTRY if r.title]
    assert VIEW_EXPLANATIONS == {r.name: r.explanation for r in REGISTRY if r.explanation}
    assert ResultStore.SLOTS == SLOTS and set(SLOTS) <= set(ResultStore.param)
    # the rule "top-k has no T-Cal" is stated once: in the T-Cal records
    assert "top-k has no T-Cal" in view("tcal").targets.why


def _old_effective_target(name, data, options):
    """The dashboard's cache-key target before the registry (a hand-written copy of its rules), the
    reference the registry's TargetRule must reproduce."""
    from calviz.analysis import resolve_target, scalar_reliability, scalar_target

    target = resolve_target(data, options)
    if name.startswith("tcal") and target in ("topk", "full"):
        return ("full",)
    if name in ("smooth", "smooth_curve", "distance", "classical", "decomposition", "smooth_summaries",
                "over_time", "corp", "corp_curve") or (
            name == "reliability" and scalar_reliability(data, options)):
        target = scalar_target(data, target)
    if target == "classwise":
        return (target, min(int(options.class_index), data.n_classes - 1))
    if target == "topk":
        return (target, min(int(options.top_k), data.n_classes))
    if target == "full" and name in ("interval", "bootstrap"):
        return ("topk", data.n_classes)
    return (target,)


def test_effective_target_reproduces_the_rules_it_replaced(small):
    binary = calviz.as_calibration_data(small.labels == 0, small.probs[:, 0])
    for data in (small, binary):
        for target in ("auto", "top1", "classwise", "topk", "full") + (("binary",) if data.is_binary else ()):
            for k, c in ((1, 0), (2, 1), (3, 2)):
                options = AnalysisOptions(target=target, top_k=k, class_index=c)
                for record in REGISTRY:
                    assert effective_target(record.name, data, options) == _old_effective_target(
                        record.name, data, options), (record.name, target, k, c, data.is_binary)


def test_plan_reproduces_the_slots_it_replaced(small):
    from calviz.app.store import ResultStore

    for target in ("auto", "topk", "full"):
        for resampling in ("analytic", "y_only"):
            for show_smooth in (True, False):
                options = AnalysisOptions(target=target, resampling=resampling)
                plan = ResultStore.plan(small, options, show_smooth=show_smooth)
                scalar = analysis.scalar_reliability(small, options)
                assert list(plan) == ["reliability", "smooth", "tcal", "interval", "bootstrap", "distance",
                                      "classical", "decomposition", "smooth_summaries", "over_time"]
                smooth = (plan["smooth"].final, plan["smooth"].stand_in)
                assert smooth == (("smooth", "smooth_curve") if show_smooth and scalar else (None, None))
                tcal = (plan["tcal"].final, plan["tcal"].stand_in)
                assert tcal == (("tcal_resampled", "tcal") if resampling != "analytic" else ("tcal", None))
                for slot in ("reliability", "interval", "bootstrap", "distance", "classical",
                             "decomposition", "smooth_summaries"):
                    assert (plan[slot].final, plan[slot].stand_in) == (slot, None)


def test_analyze_iterates_the_registry(small):
    result = analyze(small, n_resamples=20)
    computed = set(result.timings)
    assert computed == {r.name for r in REGISTRY if r.in_analysis and r.applies(small, result.options)}
    assert result.distance is not None and result.witness is not None
    assert set(result.to_dict()) >= {f for r in REGISTRY if r.in_analysis for f in r.results}


# -- no other module keeps a table keyed by view names -------------------------------------------------

#: tables that stay, each with the reason why it is not a table of views (none today)
ALLOWED: dict[tuple[str, str], str] = {}


def _strings(nodes):
    return [n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _owner_of(node) -> str | None:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return node.name
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
        node, ast.AnnAssign) else []
    for target in targets:
        if isinstance(target, ast.Name):
            return target.id
        if isinstance(target, ast.Attribute):
            return target.attr
    return None


def _view_names_compared(node) -> list[str]:
    """The view names an if/elif chain compares one value with (``if name == "tcal": … elif name == …``)."""
    found = []
    while isinstance(node, ast.If):
        test = node.test
        if isinstance(test, ast.Compare) and len(test.comparators) == 1:
            found += [v for v in _strings(test.comparators) if v in NAMES]
        node = node.orelse[0] if len(node.orelse) == 1 else None
    return found


def _view_tables(tree, owner=None, elifs=None):
    """(line, owner, names) of every dict with ≥ 3 view-name keys (a literal, or ``dict(name=…)``), every
    tuple/list/set of ≥ 3 strings that are all view names, and every if/elif chain or ``match`` that
    dispatches on ≥ 3 view names; ``owner``: the innermost name assigned, function or class it is in."""
    elifs = set() if elifs is None else elifs  # (an elif is its chain's: the chain is reported at its if)
    for node in ast.iter_child_nodes(tree):
        inner = _owner_of(node) or owner
        if isinstance(node, ast.Dict):
            keys = [k for k in _strings([k for k in node.keys if k is not None]) if k in NAMES]
            if len(keys) >= 3:
                yield node.lineno, inner, keys
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            keys = [k.arg for k in node.keywords if k.arg in NAMES]
            if len(keys) >= 3:
                yield node.lineno, inner, keys
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            values = _strings(node.elts)
            if len(values) == len(node.elts) >= 3 and set(values) <= NAMES:
                yield node.lineno, inner, values
        elif isinstance(node, ast.If) and id(node) not in elifs:
            compared = _view_names_compared(node)
            if len(compared) >= 3:
                yield node.lineno, inner, compared
        elif isinstance(node, ast.Match):
            cases = [c.pattern.value for c in node.cases if isinstance(c.pattern, ast.MatchValue)]
            values = [v for v in _strings(cases) if v in NAMES]
            if len(values) >= 3:
                yield node.lineno, inner, values
        if isinstance(node, ast.If) and len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            elifs.add(id(node.orelse[0]))
        yield from _view_tables(node, inner, elifs)


def _scanned_modules() -> dict[str, pathlib.Path]:
    """Every module of the package, by its path under calviz/ (subpackages included)."""
    return {path.relative_to(ROOT).as_posix(): path for path in sorted(ROOT.rglob("*.py"))}


def test_no_module_but_the_registry_keeps_a_table_of_views():
    modules = _scanned_modules()
    # every subpackage is scanned: the presentation package, the app's modules, the command line's
    assert {"present/text.py", "present/frames.py", "present/report.py", "app/over_time.py", "app/store.py",
            "cli.py", "cli_serve.py", "dask/_app.py"} <= set(modules)
    found = []
    for relative, path in modules.items():
        if relative == "analysis/views.py":
            continue
        for line, owner, names in _view_tables(ast.parse(path.read_text(encoding="utf-8"))):
            if (relative, owner) not in ALLOWED:
                found.append(f"calviz/{relative}:{line} ({owner}): {names}")
    assert not found, "tables of views outside calviz/analysis/views.py:\n" + "\n".join(found)


def test_the_scan_finds_a_table_of_views():
    tree = ast.parse('TABLE = {"reliability": 1, "tcal": 2, "distance": 3}\nLIST = ("smooth", "interval", '
                     '"bootstrap")\nOK = ("reliability", "inputs", "tcal")\n')
    assert [owner for _, owner, _ in _view_tables(tree)] == ["TABLE", "LIST"]
    # the other spellings of a table: dict(...) keywords, an if/elif dispatch, a match
    tree = ast.parse('KEYWORDS = dict(reliability=1, tcal=2, distance=3)\n'
                     'def title(name):\n'
                     '    if name == "reliability":\n        return "a"\n'
                     '    elif name == "tcal":\n        return "b"\n'
                     '    elif name == "interval":\n        return "c"\n'
                     '    return name\n'
                     'def label(name):\n'
                     '    match name:\n'
                     '        case "smooth":\n            return 1\n'
                     '        case "bootstrap":\n            return 2\n'
                     '        case "distance":\n            return 3\n'
                     'def fine(name):\n'
                     '    if name == "tcal":\n        return 1\n'
                     '    elif name == "interval":\n        return 2\n')
    assert [(owner, names) for _, owner, names in _view_tables(tree)] == [
        ("KEYWORDS", ["reliability", "tcal", "distance"]), ("title", ["reliability", "tcal", "interval"]),
        ("label", ["smooth", "bootstrap", "distance"])]
