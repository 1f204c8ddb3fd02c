"""The one option schema (calviz.analysis.options): the API, the command line's flags and the dashboard's
controls take their defaults and bounds from it, so they agree on every option."""

from __future__ import annotations

import math

import pytest

from calviz.analysis import OPTIONS, AnalysisOptions
from calviz.analysis.options import option
from calviz.cli import CLIError, build_parser, options_from_args

param = pytest.importorskip("param")
from calviz.app.controls import Controls  # noqa: E402

ROWS = 10_000  # rows of the data the controls are fitted to (the data-dependent bounds)


def _api_accepts(name, value) -> bool:
    return option(name).constraint.accepts(value)


def _cli_accepts(o, value) -> bool:
    argv = ["check", "x.csv", o.cli_flag, repr(value)]
    if o.name == "class_index":
        argv += ["--target", "classwise"]
    if o.name == "top_k":
        argv += ["--target", "topk"]
    try:
        options = options_from_args(build_parser().parse_args(argv))
    except CLIError:
        return False
    assert getattr(options, o.name) == value
    return True


def _app_accepts(controls, name, value) -> bool:
    if name == "bandwidth" and value is None:
        value = 0.0  # the slider's 0 stands for automatic
    return Controls.rule(controls.param[name]).accepts(value)


def _edges(o):
    """Values at and just beyond the option's bounds."""
    low, high = o.bounds
    integer = o.annotation.startswith("int")
    values = []
    for bound, outward in ((low, -1), (high, +1)):
        if bound is None:
            continue
        values.append(bound)
        if integer:
            values.append(bound + outward)
        else:
            values.append(math.nextafter(bound, outward * math.inf))
            values.append(bound * (2.0 if outward > 0 else 0.5) if bound else outward * 1e-3)
    inside = o.default if o.default is not None else (low + 1 if integer else low * 2)
    return [inside, *values]


@pytest.fixture()
def controls():
    controls = Controls()
    controls.param.update(**controls.fit_to(ROWS, n_classes=ROWS, is_binary=False))
    return controls


@pytest.mark.parametrize("o", OPTIONS, ids=lambda o: o.name)
def test_defaults_agree(o, controls):
    api = getattr(AnalysisOptions(), o.name)
    assert api == o.default
    cli = getattr(options_from_args(build_parser().parse_args(["check", "x.csv"])), o.name)
    assert cli == api, f"{o.cli_flag}: default {cli!r}, the API's {api!r}"
    if not o.data_dependent:
        app = getattr(Controls().options(ROWS), o.name)
        assert app == api, f"the {o.label!r} control: default {app!r}, the API's {api!r}"


@pytest.mark.parametrize("o", [o for o in OPTIONS if o.choices is None and o.widget != "checkbox"],
                         ids=lambda o: o.name)
def test_bounds_agree(o, controls):
    """At each bound and just beyond it, the API, the flag and the control accept the same values (the
    data-dependent ones — a class, k, the subsample — within the bounds of the data loaded: there the API
    refuses what the data do not have, ``check_options_fit``)."""
    for value in _edges(o):
        api = _api_accepts(o.name, value)
        if o.data_dependent and value is not None and value > ROWS:
            continue  # (beyond the data: the control's bounds, and check_options_fit for the API)
        assert _cli_accepts(o, value) == api, (o.cli_flag, value, api)
        assert _app_accepts(controls, o.name, value) == api, (o.name, value, api)
    soft = o.soft_range
    if soft is not None:  # a slider's range lies within what the option accepts
        low, high = o.bounds
        assert (low is None or soft[0] >= low or o.name == "bandwidth") and (high is None or soft[1] <= high)


@pytest.mark.parametrize("o", [o for o in OPTIONS if o.choices is not None], ids=lambda o: o.name)
def test_choices_agree(o, controls):
    objects = controls.param[o.name].objects
    values = list(objects.values()) if isinstance(objects, dict) else list(objects)
    if o.name == "target":  # (binary only for 1-D data: fit_to offers the targets the data have)
        assert set(values) <= set(o.choices)
    else:
        assert values == list(o.choices)
    action = next(a for a in build_parser()._subparsers._group_actions[0].choices["check"]._actions
                  if o.cli_flag in a.option_strings)
    assert tuple(action.choices) == o.choices


def test_every_field_is_declared_once():
    import dataclasses

    assert [f.name for f in dataclasses.fields(AnalysisOptions)] == [o.name for o in OPTIONS]
    assert AnalysisOptions.parameter_constraints == {o.name: o.constraint for o in OPTIONS}
    assert set(Controls.ANALYSIS) == {o.name for o in OPTIONS} | {"show_smooth"}
