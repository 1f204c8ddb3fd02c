"""The dashboard's controls: parameters only (the sidebar's widgets are generated from them)."""

from __future__ import annotations

import param

from calviz._params import BOOLEAN, AnyOf, Interval, Options, check_keywords
from calviz._smooth import MIN_BANDWIDTH
from calviz.analysis import RESAMPLINGS, TARGETS, AnalysisOptions
from calviz.present.labels import method_name

__all__ = ["Controls"]


class _Automatic:
    """The bandwidth slider's 0: the automatic bandwidth."""

    def __str__(self) -> str:
        return "0 (automatic)"

    def accepts(self, value) -> bool:
        return Interval(float, 0, 0).accepts(value)


class Controls(param.Parameterized):
    """What the user chose.  :meth:`options` turns it into the analysis layer's ``AnalysisOptions``."""

    dataset = param.Selector(default=None, objects=[], doc="Embedded dataset or uploaded file")
    target = param.Selector(
        default="auto",
        objects=list(TARGETS),
        doc="Calibration target: auto = binary for binary data, top-1 otherwise",
    )
    class_index = param.Integer(default=0, bounds=(0, 1), doc="Class for the classwise (one-vs-rest) view")
    top_k = param.Integer(default=2, bounds=(1, 2), doc="k for top-1-to-k calibration")
    n = param.Integer(default=2, bounds=(2, 2), doc="Subsample size (all rows by default)")
    # choices shown by what they are (label → value: the value is the API keyword)
    scheme = param.Selector(
        default="equal_width", objects={"equal width": "equal_width", "equal mass": "equal_mass"},
        doc="Binning scheme",
    )
    n_bins = param.Integer(default=15, bounds=(2, 100), doc="Number of bins (per axis)")
    show_smooth = param.Boolean(default=True, doc="Overlay the smooth reliability curve")
    kernel = param.Selector(
        default="reflected_gaussian",
        objects={"reflected Gaussian": "reflected_gaussian", "logit Gaussian": "logit_gaussian"},
        doc="Kernel of the smooth reliability curve",
    )
    bandwidth = param.Number(
        default=0.0,
        bounds=(0.0, 0.5),
        step=0.005,
        doc="Bandwidth of the smooth reliability curve (0 = automatic); the kCE keeps bandwidth 1",
    )
    alpha = param.Number(default=0.05, bounds=(0.001, 0.5), step=0.001, doc="Level α (1 − confidence)")
    resampling = param.Selector(default=AnalysisOptions().resampling,
                                objects={method_name(r): r for r in RESAMPLINGS},
                                doc="Critical values of T-Cal")
    n_resamples = param.Integer(default=500, bounds=(20, 5000), doc="Number of resamples")
    seed = param.Integer(default=0, bounds=(0, None), doc="Random seed (subsample and resampling)")
    all_rows = param.Boolean(
        default=False,
        doc="Compute the distance bounds, bootstrap interval and resampled T-Cal on every row (slow on large "
            "data) instead of a stated uniform subsample",
    )

    #: the parameters that change what is computed (``dataset`` changes the data instead)
    ANALYSIS = (
        "target",
        "class_index",
        "top_k",
        "n",
        "scheme",
        "n_bins",
        "show_smooth",
        "kernel",
        "bandwidth",
        "alpha",
        "resampling",
        "n_resamples",
        "seed",
        "all_rows",
    )

    #: the parameters whose bounds follow the data (:meth:`fit_to`): a value given with the data is checked
    #: and set once the data is loaded
    DATA_DEPENDENT = ("class_index", "top_k", "n")

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
        return Interval(int if isinstance(parameter, param.Integer) else float, low, high)

    def check(self, values: dict, caller: str) -> dict:
        """``values`` if every key is a control and every value is one this control accepts now, else the
        uniform message naming ``caller`` (an unknown keyword: a TypeError listing the controls)."""
        # dataset: its choices are the datasets offered, and loading names a wrong one
        rules = {"dataset": None, **{name: self.rule(self.param[name]) for name in self.ANALYSIS}}
        return check_keywords(values, rules, caller, "controls")

    def options(self, n_rows: int) -> AnalysisOptions:
        """The options of these choices for data of ``n_rows`` rows (``n`` ≥ all rows: no subsample)."""
        return AnalysisOptions(
            target=self.target,
            class_index=int(self.class_index),
            top_k=int(self.top_k),
            n=None if self.n >= n_rows else int(self.n),
            scheme=self.scheme,
            n_bins=int(self.n_bins),
            kernel=self.kernel,
            bandwidth=None if not self.bandwidth else float(self.bandwidth),
            alpha=float(self.alpha),
            resampling=self.resampling,
            n_resamples=int(self.n_resamples),
            seed=int(self.seed),
            all_rows=bool(self.all_rows),
        )

    def fit_to(self, n_rows: int, n_classes: int, is_binary: bool = True) -> dict:
        """Bounds of the data-dependent parameters for new data; returns the values to set with them
        (all rows, a class / k that exists, and a target the data have: "binary" is offered for 1-D
        P(y = 1) only)."""
        self.param.class_index.bounds = (0, n_classes - 1)
        self.param.top_k.bounds = (1, max(2, n_classes))
        self.param.n.bounds = (min(n_rows, 20), n_rows)
        targets = [t for t in TARGETS if is_binary or t != "binary"]
        self.param.target.objects = targets
        return {
            "n": n_rows,
            "class_index": min(self.class_index, n_classes - 1),
            "top_k": min(max(self.top_k, 1), n_classes),
            "target": self.target if self.target in targets else "auto",
        }
