"""The options of the analysis layer's entry points are refused with the library's one message.

``AnalysisOptions`` declares its fields' constraints once (``parameter_constraints``); ``analyze``,
``report`` and ``calviz.dask.analyze_parquet`` check their keyword options against them naming themselves,
and their own plain options (``views``, ``resampled``, ``path``, ``title``, …) with ``validate_params``::

    The 'n_bins' parameter of analyze must be an int in [1, 1000000]; got 0.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re

import numpy as np
import pytest

import calviz
from calviz import analysis
from calviz._data import InputError
from calviz._params import Boolean, Instance, Interval, ListOf, NoneOr, Options
from calviz.analysis import VIEWS, AnalysisOptions, analyze
from calviz.present.report import render_analysis, render_report, report_output

_rng = np.random.default_rng(3)
P = _rng.uniform(0.02, 0.98, size=200)
Y = (_rng.random(200) < P).astype(np.int64)
DATA = calviz.as_calibration_data(Y, P)
CONSTRAINTS = AnalysisOptions.parameter_constraints
FIELDS = [f.name for f in dataclasses.fields(AnalysisOptions)]


def _message(param: str, caller: str) -> str:
    return rf"^The '{param}' parameter of {re.escape(caller)} must be .+; got .+\.$"


def _refused(call, param: str, caller: str):
    with pytest.raises(InputError, match=_message(param, caller)) as info:
        call()
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
    return str(info.value)


# -- bad and good values of a constraint ----------------------------------------------------------
def _bad_values(constraint) -> list:
    """Wrong type, just outside the range, a str for a number or a list, a bool for a number, NaN."""
    inner = constraint.inner if isinstance(constraint, NoneOr) else constraint
    bad = [] if isinstance(constraint, NoneOr) else [None]
    if isinstance(inner, Interval):
        bad += [True, "3", float("nan"), [1]]
        if inner.kind is int:
            bad += [2.5, float(inner.low if inner.low is not None else 0) + 1.0,  # an integral float too
                    float("inf")]
        else:
            bad += [float("inf"), np.float64("nan")]
        if inner.low is not None:
            bad.append(inner.low - 1 if inner.kind is int else -1e-9 + inner.low)
            if inner.closed in ("neither", "right"):
                bad.append(inner.low)
        if inner.high is not None:
            bad.append(inner.high + 1 if inner.kind is int else inner.high + 1e-9)
            if inner.closed in ("neither", "left"):
                bad.append(inner.high)
    elif isinstance(inner, Options):
        bad += [inner.values[0].upper() + "?", 1, True, list(inner.values[:1])]
    elif isinstance(inner, Boolean):
        bad += [1, 0, 1.0, "yes", "False", float("nan")]
    elif isinstance(inner, Instance):
        bad += [3, 2.5, True, float("nan"), b"bytes", ["a"]]
    elif isinstance(inner, ListOf):
        bad += ["tcal", "reliability", ["bogus"], [1], ("tcal", "bogus"), {"tcal": 1}, np.array(["tcal"]),
                True, float("nan")]
    else:  # pragma: no cover - a new kind of constraint needs bad values here
        raise AssertionError(f"no bad values for {constraint!r}")
    return bad


def _good_values(constraint) -> list:
    """Edge values of each range, numpy scalars, every option."""
    inner = constraint.inner if isinstance(constraint, NoneOr) else constraint
    good = [None] if isinstance(constraint, NoneOr) else []
    if isinstance(inner, Interval):
        low = 0 if inner.low is None else inner.low
        if inner.kind is int:
            good += [low, low + 1, np.int64(low + 7), 10**6 if inner.high is None else inner.high]
        else:
            edge = low if inner.closed in ("both", "left") else low + 1e-9
            good += [edge, np.float64(0.5 if inner.high == 1 else 0.25)]
            if inner.high is not None:
                good.append(inner.high if inner.closed in ("both", "right") else inner.high - 1e-9)
            else:
                good.append(3)  # an int for a float
    elif isinstance(inner, Options):
        good += list(inner.values)
    elif isinstance(inner, Boolean):
        good += [True, False, np.bool_(True)]
    return good


# (a field without a constraint fails test_parameter_constraints_cover_every_field, not the collection)
BAD_FIELDS = [(name, bad) for name in FIELDS if name in CONSTRAINTS for bad in _bad_values(CONSTRAINTS[name])]
GOOD_FIELDS = [(name, good) for name in FIELDS if name in CONSTRAINTS
               for good in _good_values(CONSTRAINTS[name])]
_ids = [f"{name}={value!r}" for name, value in BAD_FIELDS]


# -- AnalysisOptions ------------------------------------------------------------------------------
def test_parameter_constraints_cover_every_field():
    """A new field without a constraint fails here (and would be unchecked otherwise)."""
    assert list(CONSTRAINTS) == FIELDS
    assert "parameter_constraints" not in FIELDS  # a class attribute, not a field
    for name in FIELDS:
        assert hasattr(CONSTRAINTS[name], "accepts") and str(CONSTRAINTS[name])


def test_defaults_satisfy_the_constraints():
    defaults = AnalysisOptions()
    for name in FIELDS:
        assert CONSTRAINTS[name].accepts(getattr(defaults, name)), name


def test_constraints_are_the_estimators_own():
    """The same meaning, the same constraint (and so the same words) as the estimators' — the views'
    engines', so a value the options accept is one every view computes with."""
    alpha = calviz.adaptive_tcal.parameter_constraints["alpha"]  # the level T-Cal divides by
    assert str(CONSTRAINTS["alpha"]) == str(alpha) == "a float in [1e-300, 1)"
    assert str(CONSTRAINTS["n_bins"]) == str(calviz.reliability.parameter_constraints["n_bins"])
    assert str(CONSTRAINTS["n_bins"]) == "an int in [1, 1000000]"
    assert str(CONSTRAINTS["target"]) == str(Options(calviz.targets.TARGETS))
    assert str(CONSTRAINTS["seed"]) == "an int in [0, inf)"
    assert str(CONSTRAINTS["n"]) == "an int in [2, inf) or None"
    assert str(CONSTRAINTS["bandwidth"]) == str(calviz.smooth_reliability.parameter_constraints["bandwidth"])
    assert str(CONSTRAINTS["bandwidth"]) == "a float in [0.0001, 10] or None"
    assert str(CONSTRAINTS["n_resamples"]) == str(calviz.ece_interval.parameter_constraints["n_resamples"])
    assert str(CONSTRAINTS["all_rows"]) == "a bool"


@pytest.mark.parametrize("name, bad", BAD_FIELDS, ids=_ids)
def test_analysis_options_refuse_with_the_uniform_message(name, bad):
    _refused(lambda: AnalysisOptions(**{name: bad}), name, "AnalysisOptions")
    _refused(lambda: AnalysisOptions().replace(**{name: bad}), name, "AnalysisOptions")


@pytest.mark.parametrize("name, good", GOOD_FIELDS, ids=[f"{n}={v!r}" for n, v in GOOD_FIELDS])
def test_analysis_options_accept_good_values(name, good):
    options = AnalysisOptions(**{name: good})
    assert getattr(options, name) is good or getattr(options, name) == good
    hash(options)  # still a hashable value


def test_documented_example_message():
    with pytest.raises(InputError) as info:
        AnalysisOptions(n_bins=0)
    assert str(info.value) == ("The 'n_bins' parameter of AnalysisOptions must be an int in [1, 1000000]; "
                               "got 0.")


# -- analyze --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, bad", BAD_FIELDS, ids=_ids)
def test_analyze_option_values_refused_naming_analyze(name, bad):
    _refused(lambda: analyze(DATA, **{name: bad}), name, "analyze")


def test_analyze_checks_options_before_reading_the_file(tmp_path):
    _refused(lambda: analyze(tmp_path / "absent.csv", n_bins=0), "n_bins", "analyze")


ANALYZE_BAD = ([("resampled", bad) for bad in _bad_values(Boolean())]
               + [("views", bad) for bad in _bad_values(NoneOr(ListOf(Options(VIEWS))))]
               + [("views", ("smooth_curve",))]  # a COMPUTE key but no result of an Analysis
               + [("options", bad) for bad in (3, "auto", {"n_bins": 10}, AnalysisOptions)])


@pytest.mark.parametrize("name, bad", ANALYZE_BAD, ids=[f"{n}={v!r}" for n, v in ANALYZE_BAD])
def test_analyze_plain_options_refused(name, bad):
    _refused(lambda: analyze(DATA, **{name: bad}), name, "analyze")


def test_views_message_names_the_allowed_views_and_a_str_is_not_iterated():
    text = _refused(lambda: analyze(DATA, views="tcal"), "views", "analyze")
    assert text.endswith("got 'tcal'.")
    for view in VIEWS:
        assert repr(view) in text
    assert set(VIEWS) == {"reliability", "smooth", "tcal", "tcal_resampled", "interval", "bootstrap",
                          "distance", "classical", "decomposition", "over_time", "corp", "smooth_summaries"}


@pytest.mark.parametrize("views", [None, (), ["reliability"], ("reliability", "tcal"), {"tcal"},
                                   frozenset({"interval"})])
def test_analyze_accepts_good_views(views):
    result = analyze(DATA, views=views, resampled=False, resampling="analytic")
    wanted = set(views) if views else {"reliability", "smooth", "tcal", "interval", "distance", "classical",
                                       "decomposition", "smooth_summaries"}
    assert {v for v in VIEWS if getattr(result, v) is not None} == wanted


@pytest.mark.parametrize("resampled", [True, False, np.bool_(False)])
def test_analyze_accepts_good_resampled(resampled):
    result = analyze(DATA, views=("interval",), resampled=resampled)
    assert result.interval is not None


def test_analyze_accepts_edge_values_of_every_option():
    edges = dict(target="binary", class_index=0, top_k=1, n=2, scheme="equal_mass", n_bins=1,
                 kernel="logit_gaussian", bandwidth=1e-4, alpha=1e-300, resampling="threshold", n_resamples=2,
                 seed=np.int64(0), all_rows=np.bool_(True))
    assert set(edges) == set(FIELDS)
    result = analyze(DATA, AnalysisOptions(), views=("reliability",), **edges)
    assert result.options == AnalysisOptions(**edges)
    assert analyze(DATA, None, views=("reliability",)).options == AnalysisOptions()


@pytest.mark.parametrize("caller, call", [
    ("analyze", lambda: analyze(DATA, views=("reliability",), nbins=10)),
    ("report", lambda: calviz.report(Y, P, path="unused.html", nbins=10)),
])
def test_unknown_keyword_is_a_type_error_naming_the_entry_point(caller, call):
    with pytest.raises(TypeError, match=rf"^{caller}\(\) got an unexpected keyword argument 'nbins'; "
                                        r"the analysis options are target, class_index"):
        call()


# -- report ---------------------------------------------------------------------------------------
REPORT_BAD = ([("path", bad) for bad in _bad_values(Instance(str))]
              + [("title", bad) for bad in _bad_values(Instance(str)) + [pathlib.Path("t")]])


@pytest.mark.parametrize("name, bad", REPORT_BAD, ids=[f"{n}={v!r}" for n, v in REPORT_BAD])
def test_report_refuses_bad_path_and_title(name, bad, tmp_path):
    kwargs = {"path": tmp_path / "r.html", name: bad}
    _refused(lambda: calviz.report(Y, P, **kwargs), name, "report")
    assert not list(tmp_path.iterdir())  # refused before anything is written


@pytest.mark.parametrize("name, bad", BAD_FIELDS, ids=_ids)
def test_report_option_values_refused_naming_report(name, bad, tmp_path):
    _refused(lambda: calviz.report(Y, P, path=tmp_path / "r.html", **{name: bad}), name, "report")
    assert not list(tmp_path.iterdir())


def test_report_accepts_path_str_and_path_like_and_any_title(tmp_path):
    written = calviz.report(Y, P, path=str(tmp_path / "a.html"), title="", resampling="analytic", n_bins=1)
    assert written == tmp_path / "a.html" and written.stat().st_size > 10_000
    written = calviz.report(DATA, path=tmp_path / "b.html", title="my <model>", resampling="analytic")
    assert "my &lt;model&gt;" in written.read_text(encoding="utf-8")


def test_report_positional_path_still_works_with_a_deprecation_warning(tmp_path):
    with pytest.warns(DeprecationWarning, match="path"):
        written = calviz.report(Y, P, str(tmp_path / "c.html"), resampling="analytic")
    assert written.exists()
    with pytest.warns(DeprecationWarning, match="path"):
        _refused(lambda: calviz.report(Y, P, 3), "path", "report")


RENDER_BAD = ([("options", bad) for bad in (3, {"n_bins": 10}, "auto")]
              + [(name, bad) for name in ("title", "extra_sections") for bad in _bad_values(Instance(str))]
              + [("source", bad) for bad in (3, pathlib.Path("preds.csv"), b"preds.csv")]
              + [("resampled", bad) for bad in _bad_values(Boolean())]
              + [("analysis", bad) for bad in (3, {"tcal": None}, AnalysisOptions())])


@pytest.mark.parametrize("name, bad", RENDER_BAD, ids=[f"{n}={v!r}" for n, v in RENDER_BAD])
def test_render_report_refuses_bad_options(name, bad):
    _refused(lambda: render_report(DATA, **{name: bad}), name, "render_report")


@pytest.mark.parametrize("name, bad", [(n, b) for n, b in RENDER_BAD
                                       if n in ("title", "source", "extra_sections")])
def test_render_analysis_refuses_bad_options(name, bad):
    result = analyze(DATA, views=("reliability",))
    _refused(lambda: render_analysis(result, **{name: bad}), name, "render_analysis")


def test_render_report_accepts_good_options():
    result = analyze(DATA, resampled=False, resampling="analytic")
    html = render_report(DATA, None, title="", source=None, resampled=np.bool_(False), analysis=result,
                         extra_sections="")
    assert html.startswith("<!DOCTYPE html>")
    assert "preds.csv" in render_analysis(result, title="t", source="/data/preds.csv")


@pytest.mark.parametrize("bad", [3, None, b"r.html", 2.5, ["r.html"]])
def test_report_output_refuses_a_non_path(bad):
    _refused(lambda: report_output(bad), "path", "report_output")


# -- the other public functions of calviz.analysis with plain options ------------------------------
OPTIONS = AnalysisOptions()
OTHER = (
    [("analysis_target", "scalar", bad, lambda b: analysis.analysis_target(DATA, OPTIONS, scalar=b))
     for bad in _bad_values(Boolean())]
    + [("analysis_view", "scalar", bad, lambda b: analysis.analysis_view(DATA, OPTIONS, scalar=b))
       for bad in _bad_values(Boolean())]
    + [("compute_smooth", "band", bad, lambda b: analysis.compute_smooth(DATA, OPTIONS, band=b))
       for bad in _bad_values(Boolean())]
    + [("compute_tcal", "resampling", bad, lambda b: analysis.compute_tcal(DATA, OPTIONS, resampling=b))
       for bad in _bad_values(NoneOr(Options(analysis.RESAMPLINGS)))]
    + [("scalar_target", "target", bad, lambda b: analysis.scalar_target(DATA, b))
       for bad in _bad_values(Options(calviz.targets.TARGETS))]
)


@pytest.mark.parametrize("caller, name, bad, call", OTHER, ids=[f"{c}-{n}={b!r}" for c, n, b, _ in OTHER])
def test_analysis_functions_refuse_bad_plain_options(caller, name, bad, call):
    _refused(lambda: call(bad), name, caller)


def test_analysis_functions_accept_good_plain_options():
    assert analysis.analysis_target(DATA, OPTIONS, scalar=np.bool_(True)).name == "binary"
    assert analysis.analysis_view(DATA, OPTIONS, scalar=False)[2] == "binary"
    assert analysis.compute_smooth(DATA, OPTIONS, band=False).n_resamples == 0
    assert analysis.compute_tcal(DATA, OPTIONS, resampling="analytic").method == "analytic"
    analytic = OPTIONS.replace(resampling="analytic")
    assert analysis.compute_tcal(DATA, analytic, resampling=None).method == "analytic"
    assert [analysis.scalar_target(DATA, t) for t in ("auto", "topk", "full", "classwise")] == [
        "binary", "binary", "binary", "classwise"]


# -- calviz.dask.analyze_parquet ------------------------------------------------------------------
@pytest.mark.parametrize("name, bad", [(n, b) for n, b in BAD_FIELDS if n in ("n_bins", "alpha", "views")]
                         + [("options", 3)])
def test_analyze_parquet_checks_options_before_opening_the_data(name, bad, tmp_path):
    cdask = pytest.importorskip("calviz.dask")
    absent = tmp_path / "absent.parquet"
    _refused(lambda: cdask.analyze_parquet(absent, **{name: bad}), name, "analyze_parquet")


# -- what the app and the command line build ------------------------------------------------------
def test_dashboard_controls_build_int_options():
    """The app's widgets hold ints (param.Integer refuses floats); ``Controls.options`` converts anyway."""
    from calviz.app.controls import Controls

    controls = Controls()
    controls.fit_to(100, 2)
    controls.param.update(n_bins=np.int64(20), seed=3, n=50, bandwidth=0.1, alpha=0.1)
    options = controls.options(100)
    assert options == AnalysisOptions(n=50, n_bins=20, seed=3, bandwidth=0.1, alpha=0.1)
    assert type(options.n_bins) is int and type(options.n) is int
    assert controls.options(50).n is None and Controls(bandwidth=0.0).options(10).bandwidth is None


@pytest.mark.parametrize("flag, value, rule", [
    ("--n-bins", "0", "an int in [1, 1000000]"), ("--subsample", "1", "an int in [2, inf)"),
    ("--alpha", "nan", "a float in [1e-300, 1)"), ("--bandwidth", "-1", "a float in [0.0001, 10]")])
def test_cli_names_the_flag_with_the_options_rule(flag, value, rule, capsys):
    """The command line states the rule of AnalysisOptions, naming the flag the user typed."""
    from calviz import cli

    assert cli.main(["check", "dataset:breast-cancer-gnb", flag, value]) == cli.EXIT_INPUT
    err = capsys.readouterr().err
    assert f"{flag} must be {rule}; got " in err
    assert "AnalysisOptions" not in err and "Traceback" not in err
