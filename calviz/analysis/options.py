"""The one option schema: every analysis option declared once.

Each :class:`Option` states an option's type, default, constraint (its bounds or choices, the engine's own
where the meaning is the same), its documentation, its command-line flag and its dashboard widget.
:class:`AnalysisOptions` is generated from :data:`OPTIONS`; the command line's flags
(:func:`add_arguments`, :func:`values_from_arguments`) and the dashboard's controls
(``calviz.app.controls``) are generated from the same records, so their defaults and bounds agree by
construction.  A widget may show a *soft* range (a slider's ends) inside the constraint, but accepts
every value the constraint accepts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from calviz._ece import reliability
from calviz._intervals import ece_interval
from calviz._params import (
    BOOLEAN,
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    Interval,
    NoneOr,
    Options,
    check_keywords,
    check_param,
)
from calviz._smooth import smooth_reliability
from calviz._tcal import adaptive_tcal
from calviz.targets import TARGETS

__all__ = ["Option", "OPTIONS", "AnalysisOptions", "with_option_values", "option", "add_arguments",
           "values_from_arguments", "SCHEMES", "KERNELS", "RESAMPLINGS"]

#: the reliability diagram's modes: two binnings, and CORP's isotonic recalibration curve (no bins)
SCHEMES = ("equal_width", "equal_mass", "corp")
KERNELS = ("reflected_gaussian", "logit_gaussian")
RESAMPLINGS = ("analytic", "y_only", "consistency", "threshold")


@dataclass(frozen=True)
class Option:
    """One analysis option, declared once.

    Attributes
    ----------
    name : str
        The field of :class:`AnalysisOptions` (and the API keyword).
    annotation : str
        Its type, as written in the signature.
    default : object
        The default value.
    constraint : calviz._params constraint
        What the API accepts (``AnalysisOptions.parameter_constraints[name]``).
    doc : str
        The numpydoc description of :class:`AnalysisOptions`.
    help : str
        The command line's help text.
    flag : str
        The command-line flag.
    widget : {"select", "radio", "int_slider", "float_slider", "int_input", "checkbox"}
        The dashboard's widget kind.
    label : str
        The widget's label.
    choice_labels : tuple of str, optional
        For a choice: the words the dashboard shows for each of ``constraint``'s options, in order.
    soft_range : (low, high), optional
        A slider's ends, inside the constraint (a value typed beyond them is accepted up to the constraint).
    step : float, optional
        A slider's step.
    data_dependent : bool
        The bounds follow the data (a class, k, the subsample size): the dashboard sets them per dataset,
        the command line omits a default so that a flag given for another target is refused.
    metavar : str, optional
        The command line's metavar.
    """

    name: str
    annotation: str
    default: Any
    constraint: Any
    doc: str
    help: str
    widget: str
    label: str
    flag: str | None = None
    choice_labels: tuple[str, ...] | None = None
    soft_range: tuple | None = None
    step: float | None = None
    data_dependent: bool = False
    metavar: str | None = None

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def bounds(self) -> tuple:
        """``(low, high)`` of an interval constraint (``None`` for an open end), else ``(None, None)``."""
        rule = getattr(self.constraint, "inner", self.constraint)
        return (getattr(rule, "low", None), getattr(rule, "high", None))

    @property
    def choices(self) -> tuple | None:
        rule = getattr(self.constraint, "inner", self.constraint)
        return tuple(rule.values) if isinstance(rule, Options) else None

    def choice_label(self, value) -> str:
        """How ``value`` (one of :attr:`choices`) is shown: its ``choice_labels`` entry, else itself."""
        if self.choice_labels and self.choices and value in self.choices:
            return self.choice_labels[self.choices.index(value)]
        return str(value)


#: every analysis option, in the order of :class:`AnalysisOptions`'s fields
OPTIONS: tuple[Option, ...] = (
    Option("target", "TargetName", "auto", Options(TARGETS),
           doc="``auto``: binary data → ``binary``, multi-class → ``top1``; ``classwise`` is one-vs-rest for "
               "``class_index``; ``topk`` is top-1-to-``top_k`` calibration (Sun et al. 2024).",
           help="calibration target (auto: binary for 1-D, top-1 for K classes)",
           widget="select", label="calibration target"),
    Option("class_index", "int", 0, NON_NEGATIVE_INT, doc="The class of the ``classwise`` target.",
           help="class for --target classwise", widget="int_slider", label="class (classwise)",
           data_dependent=True, metavar="C"),
    Option("top_k", "int", 2, POSITIVE_INT, doc="k of the ``topk`` target.", help="k for --target topk",
           widget="int_slider", label="k (top-1-to-k)", data_dependent=True, metavar="K"),
    Option("n", "int | None", None, NoneOr(Interval(int, 2, None)),
           doc="Analyse a uniform subsample of this many rows (None: all rows; drawn with ``seed``).",
           help="analyse a uniform subsample of N rows (drawn with --seed; default: all rows)",
           widget="int_slider", label="sample size n (subsample)", flag="--subsample", data_dependent=True,
           metavar="N"),
    Option("scheme", 'Literal["equal_width", "equal_mass", "corp"]', "equal_width", Options(SCHEMES),
           doc="Bins of the reliability diagram; ``corp``: the CORP diagram instead (the isotonic "
               "recalibration curve with its consistency band, no bins; Dimitriadis, Gneiting and Jordan "
               "2021).",
           help="binning scheme of the reliability diagram (corp: the isotonic CORP curve with its "
                "consistency band from --n-resamples label resamples)", widget="radio",
           label="Binning scheme",
           choice_labels=("equal width", "equal mass", "CORP (isotonic)")),
    Option("n_bins", "int", 15, reliability.parameter_constraints["n_bins"],
           doc="Bins of the reliability diagram and the ECE interval (at most 10⁶, as for "
               ":func:`calviz.reliability`).",
           help="bins of ECE and diagram", widget="int_slider", label="bins (m)", soft_range=(2, 100)),
    Option("kernel", 'Literal["reflected_gaussian", "logit_gaussian"]', "reflected_gaussian",
           Options(KERNELS),
           doc="Kernel of the smooth reliability diagram.", help="kernel of the smooth diagram",
           widget="select", label="kernel", choice_labels=("reflected Gaussian", "logit Gaussian")),
    Option("bandwidth", "float | None", None, smooth_reliability.parameter_constraints["bandwidth"],
           doc="Bandwidth of the smooth diagram, in [1e-4, 10] as for :func:`calviz.smooth_reliability`; "
               "None: automatic (smECE(σ) = σ; the Laplace kCE keeps bandwidth 1).",
           help="bandwidth (default: auto)", widget="float_slider",
           label="smooth-curve bandwidth (0 = automatic)", soft_range=(0.0, 0.5), step=0.005),
    Option("alpha", "float", 0.05, adaptive_tcal.parameter_constraints["alpha"],
           doc="Level of the tests, in [1e-300, 1) as for :func:`calviz.adaptive_tcal`.",
           help="level α of tests and intervals", widget="float_slider", label="level α",
           soft_range=(0.001, 0.5), step=0.001),
    Option("resampling", 'Literal["analytic", "y_only", "consistency", "threshold"]', "y_only",
           Options(RESAMPLINGS), doc="T-Cal's critical values.",
           help="how T-Cal's critical values are obtained",
           widget="select", label="T-Cal critical values"),
    Option("n_resamples", "int", 500, ece_interval.parameter_constraints["n_resamples"],
           doc="Resamples of the bootstrap views, in [2, 100000] as for :func:`calviz.ece_interval`.",
           help="resamples of the bootstrap ECE interval and the smooth diagram's band (T-Cal resamples "
                "until its decision is settled)",
           widget="int_input", label="bootstrap resamples", soft_range=(20, 5000), step=100),
    Option("seed", "int", 0, NON_NEGATIVE_INT, doc="Seed of every random choice.",
           help="seed of every random step", widget="int_input", label="seed"),
    Option("all_rows", "bool", False, BOOLEAN,
           doc="Run the views that cost more than one pass per change (distance family, bootstrap interval, "
               "resampled T-Cal) on every row instead of a stated uniform subsample (``calviz.sampling``).",
           help="run the distance bounds, the bootstrap interval and the resampled T-Cal on every row",
           widget="checkbox", label="all rows"),
)

_BY_NAME = {o.name: o for o in OPTIONS}


def option(name: str) -> Option:
    """The declaration of option ``name`` (a KeyError names the options declared)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no analysis option {name!r}; the options are {', '.join(_BY_NAME)}") from None


_DOC = '''Everything a user can choose for an analysis, as one immutable (hashable) value.

    Generated from the option schema (:data:`calviz.analysis.options.OPTIONS`).

    Parameters
    ----------
{parameters}

    Raises
    ------
    InvalidParameterError
        A field outside its range or of the wrong type (an :class:`calviz.InputError`, both a
        ValueError and a TypeError), with the library's one message, e.g. "The 'n_bins' parameter of
        AnalysisOptions must be an int in [1, 1000000]; got 0."  The constraints are
        ``AnalysisOptions.parameter_constraints`` (field → constraint); counts are ints (numpy integers
        too), never floats or bools.

    Notes
    -----
    The parameters are attributes under the same names; ``to_dict()`` gives them as a dict and
    ``replace(**changes)`` a modified copy (checked again).

    Examples
    --------
    >>> from calviz.analysis import AnalysisOptions
    >>> options = AnalysisOptions(n_bins=10, alpha=0.1)
    >>> options.n_bins, options.target, options == AnalysisOptions(alpha=0.1, n_bins=10)
    (10, 'auto', True)
    '''


def _parameter_doc(o: Option) -> str:
    kind = ("{" + ", ".join(f'"{c}"' for c in o.choices) + "}") if o.choices else o.annotation.replace(
        " | None", " or None")
    default = f'"{o.default}"' if isinstance(o.default, str) else repr(o.default)
    return f"    {o.name} : {kind}, default {default}\n        {o.doc}"


class _Methods:
    #: field → constraint (:mod:`calviz._params`), the estimators' own where the meaning is the same: the
    #: engine's (reliability's n_bins, smooth_reliability's bandwidth, adaptive_tcal's alpha, ece_interval's
    #: n_resamples), so a value accepted here is one every view computes with
    parameter_constraints: ClassVar[dict] = {o.name: o.constraint for o in OPTIONS}

    def __post_init__(self):
        for name, constraint in self.parameter_constraints.items():
            check_param(getattr(self, name), name, constraint, "AnalysisOptions")

    def replace(self, **changes) -> AnalysisOptions:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


AnalysisOptions = dataclasses.make_dataclass(
    "AnalysisOptions",
    [(o.name, o.annotation, dataclasses.field(default=o.default)) for o in OPTIONS],
    bases=(_Methods,),
    frozen=True,
    namespace={"__module__": __name__,
               "__doc__": _DOC.format(parameters="\n".join(_parameter_doc(o) for o in OPTIONS))},
)
AnalysisOptions.__qualname__ = "AnalysisOptions"


def with_option_values(options: AnalysisOptions | None, values: dict, caller: str) -> AnalysisOptions:
    """``options`` with the fields in ``values`` replaced, each checked as the entry point ``caller`` must.

    The keyword options of an entry point (``analyze(data, n_bins=10)``, ``calviz.report``,
    ``calviz.dask.analyze_parquet``) are checked against ``AnalysisOptions.parameter_constraints`` before
    any data is read, with the uniform message naming that entry point.

    Parameters
    ----------
    options : AnalysisOptions or None
        The starting options (None: the defaults).
    values : dict
        Field name → value; an unknown name or a bad value is an :class:`calviz.InputError`.
    caller : str
        The entry point the messages name.

    Returns
    -------
    AnalysisOptions

    Examples
    --------
    >>> import calviz
    >>> from calviz.analysis import with_option_values
    >>> with_option_values(None, {"n_bins": 10}, "analyze").n_bins
    10
    >>> try:
    ...     with_option_values(None, {"n_bins": 0}, "analyze")
    ... except calviz.InputError as error:
    ...     print(error)
    The 'n_bins' parameter of analyze must be an int in [1, 1000000]; got 0.
    """
    options = options or AnalysisOptions()
    if not values:
        return options
    return options.replace(**check_keywords(values, AnalysisOptions.parameter_constraints, caller,
                                            "analysis options"))


# -- the command line's flags, from the schema --------------------------------------------------------

_CLI_TYPES = {"int": int, "float": float, "int | None": int, "float | None": float}


def add_arguments(group, *, extra_help: dict | None = None) -> None:
    """Add one flag per option to an ``argparse`` group: its type (or choices), default and help from
    the schema.  Data-dependent options get no default (:func:`values_from_arguments` fills it in);
    ``extra_help`` appends words to an option's help (e.g. the subsample sizes)."""
    extra_help = extra_help or {}
    for o in OPTIONS:
        help_text = o.help + extra_help.get(o.name, "")
        if o.widget == "checkbox":
            group.add_argument(o.cli_flag, dest=o.name, action="store_true", help=help_text)
            continue
        kwargs: dict = {"dest": o.name, "help": help_text}
        if o.choices:
            kwargs["choices"] = o.choices
        else:
            kwargs["type"] = _CLI_TYPES[o.annotation]
        if o.metavar:
            kwargs["metavar"] = o.metavar
        if o.data_dependent and o.default is not None:
            kwargs["help"] = f"{help_text} (default {o.default})"
        else:
            kwargs["default"] = o.default
        group.add_argument(o.cli_flag, **kwargs)


def values_from_arguments(args) -> dict:
    """The option values of parsed flags (:func:`add_arguments`): an omitted data-dependent flag takes the
    option's default."""
    values = {}
    for o in OPTIONS:
        value = getattr(args, o.name, None)
        values[o.name] = o.default if value is None else value
    values["all_rows"] = bool(values["all_rows"])
    return values
