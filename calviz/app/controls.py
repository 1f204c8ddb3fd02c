"""The dashboard's controls: parameters only, generated from the option schema (the sidebar's widgets are
generated from them)."""

from __future__ import annotations

import param

from calviz._params import BOOLEAN, AnyOf, Interval, Options, check_keywords
from calviz._smooth import MIN_BANDWIDTH
from calviz.analysis import OPTIONS, TARGETS, AnalysisOptions, Option
from calviz.present.labels import method_name

__all__ = ["Controls", "parameter_of"]

_SCHEMA = {o.name: o for o in OPTIONS}


class _Automatic:
    """The bandwidth slider's 0: the automatic bandwidth."""

    def __str__(self) -> str:
        return "0 (automatic)"

    def accepts(self, value) -> bool:
        return Interval(float, 0, 0).accepts(value)


#: the widget's value that stands for the option's None (the bandwidth's 0: automatic; the subsample's
#: size is the data's rows, set by :meth:`Controls.fit_to`)
_NONE_AS = {"bandwidth": 0.0}


def parameter_of(o: Option) -> param.Parameter:
    """The control of one option of the schema: its default, its bounds (the API's: what the option
    accepts), a slider's soft range, its choices in words."""
    doc = o.help[:1].upper() + o.help[1:]
    if o.widget == "checkbox":
        return param.Boolean(default=o.default, doc=doc)
    if o.choices is not None:
        words = o.choice_labels or (tuple(method_name(c) for c in o.choices) if o.name == "resampling"
                                    else None)
        objects = dict(zip(words, o.choices, strict=True)) if words else list(o.choices)
        return param.Selector(default=o.default, objects=objects, doc=doc)
    low, high = o.bounds
    kind = param.Integer if o.annotation.startswith("int") else param.Number
    if o.data_dependent:  # bounds for the data: Controls.fit_to
        default = low if o.default is None else o.default
        return kind(default=default, bounds=(low, max(default, low + 1)), doc=doc)
    default = _NONE_AS.get(o.name, o.default) if o.default is None else o.default
    if o.name in _NONE_AS:
        low = _NONE_AS[o.name]
    rule = getattr(o.constraint, "inner", o.constraint)
    closed = getattr(rule, "closed", "both")
    extra = {"step": o.step} if o.step is not None and kind is param.Number else {}
    return kind(default=default, bounds=(low, high), softbounds=o.soft_range, doc=doc,
                inclusive_bounds=(closed in ("both", "left"), closed in ("both", "right")), **extra)


class Controls(param.Parameterized):
    """What the user chose.  :meth:`options` turns it into the analysis layer's ``AnalysisOptions``.

    One parameter per option of the schema (:data:`calviz.analysis.OPTIONS`, :func:`parameter_of`), plus
    the dataset and whether the smooth curve is shown."""

    dataset = param.Selector(default=None, objects=[], doc="Embedded dataset or uploaded file")
    show_smooth = param.Boolean(default=True, doc="Overlay the smooth reliability curve")
    locals().update({o.name: parameter_of(o) for o in OPTIONS})

    #: the parameters that change what is computed (``dataset`` changes the data instead)
    ANALYSIS = (*(o.name for o in OPTIONS), "show_smooth")

    #: the parameters whose bounds follow the data (:meth:`fit_to`): a value given with the data is checked
    #: and set once the data is loaded
    DATA_DEPENDENT = tuple(o.name for o in OPTIONS if o.data_dependent)

    @classmethod
    def rule(cls, parameter: param.Parameter):
        """The calviz constraint that says what ``parameter`` accepts (its type, bounds or choices), for
        the uniform message of :func:`calviz._params.check_param`."""
        if isinstance(parameter, param.Boolean):
            return BOOLEAN
        if isinstance(parameter, param.Selector):
            return Options(tuple(parameter.objects))
        low, high = parameter.bounds or (None, None)
        if parameter.name == "bandwidth":  # 0 stands for automatic; else the smooth diagram's own range
            return AnyOf(_Automatic(), Interval(float, MIN_BANDWIDTH, high))
        if parameter.name in cls.DATA_DEPENDENT:  # the bounds of the data loaded
            return Interval(int if isinstance(parameter, param.Integer) else float, low, high)
        return getattr(_SCHEMA[parameter.name].constraint, "inner", _SCHEMA[parameter.name].constraint)

    def check(self, values: dict, caller: str) -> dict:
        """``values`` if every key is a control and every value is one this control accepts now, else the
        uniform message naming ``caller`` (an unknown keyword: a TypeError listing the controls)."""
        # dataset: its choices are the datasets offered, and loading names a wrong one
        rules = {"dataset": None, **{name: self.rule(self.param[name]) for name in self.ANALYSIS}}
        return check_keywords(values, rules, caller, "controls")

    def options(self, n_rows: int) -> AnalysisOptions:
        """The options of these choices for data of ``n_rows`` rows (``n`` ≥ all rows: no subsample)."""
        values = {}
        for o in OPTIONS:
            value = getattr(self, o.name)
            if o.name == "n":
                value = None if value >= n_rows else int(value)
            elif o.name in _NONE_AS:
                value = None if value == _NONE_AS[o.name] else float(value)
            elif isinstance(value, bool) or o.choices is not None:
                pass
            else:
                value = int(value) if o.annotation.startswith("int") else float(value)
            values[o.name] = value
        return AnalysisOptions(**values)

    def fit_to(self, n_rows: int, n_classes: int, is_binary: bool = True) -> dict:
        """Bounds of the data-dependent parameters for new data; returns the values to set with them
        (all rows, a class / k that exists, and a target the data have: "binary" is offered for 1-D
        P(y = 1) only)."""
        self.param.class_index.bounds = (0, n_classes - 1)
        self.param.top_k.bounds = (1, max(2, n_classes))
        # (the subsample's smallest size is the option's: what the API accepts, the slider accepts)
        self.param.n.bounds = (min(n_rows, _SCHEMA["n"].bounds[0]), n_rows)
        targets = [t for t in TARGETS if is_binary or t != "binary"]
        self.param.target.objects = targets
        return {
            "n": n_rows,
            "class_index": min(self.class_index, n_classes - 1),
            "top_k": min(max(self.top_k, 1), n_classes),
            "target": self.target if self.target in targets else "auto",
        }
