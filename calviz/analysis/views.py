"""The view registry: one frozen :class:`View` record per view of the analysis.

A *view* is one computation the surfaces show — the reliability diagram, T-Cal, the ECE interval, … .
Its record says everything the rest of calviz needs to know about it: its compute function, the option
fields it reads (the dashboard's cache key is derived from them), which targets it analyses as such and
why not the others, which rows it reads (all, or a stated uniform subsample and its sampling error), what
it costs and when the dashboard computes it off its UI thread, its title and explanation, its job label,
and whether it runs on Dask or why not.  The dashboard's store, the report, ``calviz check``,
:func:`calviz.analysis.analyze`, the subsample policy (:mod:`calviz.sampling`) and the Dask analysis
iterate :data:`REGISTRY`; none of them keeps its own list of views.

How to add a view
-----------------
1. Write its compute function in :mod:`calviz.analysis.compute`: ``compute_x(data, options)`` calling the
   engine (an estimator of ``calviz._*`` plus its kernel, exported from ``calviz``), nothing else.
2. Add one :class:`View` record to :data:`REGISTRY` below, in the order the surfaces show it: fill every
   field (``tests/test_registry.py`` fails while a piece is missing); ``slot`` gives it a card slot of
   the dashboard's store, ``title`` a section of the static report, ``in_check`` a line of
   ``calviz check``.
3. Give it its sentences and frame in the presentation layer (its caption and its drawing table) and, if
   it runs on Dask, its distributed twin (``calviz.dask``) under the same name in the backend's
   ``estimators``.
:class:`calviz.analysis.Analysis` gains a field per name of ``results`` automatically.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from calviz.analysis import compute as _compute
from calviz.analysis import data as _data
from calviz.analysis.options import OPTIONS, AnalysisOptions
from calviz.present import text as _text
from calviz.present.over_time import over_time_caption, over_time_frame
from calviz.present.smooth_summaries import ici_caption, ici_frame
from calviz.present.verification import decomposition_frame, decomposition_text

__all__ = ["View", "TargetRule", "REGISTRY", "view", "view_names", "effective_target", "shown_result",
           "card_title", "unweighted_views", "LARGE_ROWS", "TYPICAL_TCAL_RESAMPLES", "SMOOTH_BAND_SECONDS"]

#: rows from which the dashboard computes a ``background="when_large"`` view off its UI thread
LARGE_ROWS = 1_000_000
#: resamples the cost model assumes for the sequential T-Cal rule (it stops sooner when the decision is
#: clear, later when the p-value is close to α)
TYPICAL_TCAL_RESAMPLES = 2000
#: seconds of the smooth curve's band: it resamples the O(G) grid aggregates, not the rows
SMOOTH_BAND_SECONDS = 4.0
#: seconds per row of a one-pass view the cost model has no measurement for
ONE_PASS_SECONDS_PER_ROW = 1e-7


@dataclass(frozen=True)
class TargetRule:
    """How a view treats the calibration targets.

    ``kind``:

    * ``"own"`` — every target as such (the vector targets ``topk`` / ``full`` too);
    * ``"diagram"`` — as ``own``, but one scalar diagram wherever there is one
      (:func:`calviz.analysis.scalar_reliability`: scalar targets, and every target of binary data);
    * ``"scalar"`` — scalar targets as such; ``topk`` and ``full`` through their top-1 (binary) reduction;
    * ``"full"`` — scalar targets as such; ``topk`` and ``full`` are tested for full calibration.

    ``full_as_topk``: the view's ``full`` result is its top-K one (the ECE interval bins the sorted
    K-vector), so the two share a cache entry.  ``why`` says why the targets not analysed as such are not.
    """

    kind: Literal["own", "diagram", "scalar", "full"]
    why: str = ""
    full_as_topk: bool = False


def _always(data, options) -> bool:
    return True


def _scalar_diagram(data, options) -> bool:
    # (the smooth curve overlays the binned diagram: the CORP mode draws its own curve and band)
    return _data.scalar_reliability(data, options) and options.scheme != "corp"


def _binned_diagram(data, options) -> bool:
    return options.scheme != "corp"


def _corp_diagram(data, options) -> bool:
    return options.scheme == "corp"


def _resampled_tcal_asked(data, options) -> bool:
    return options.resampling != "analytic"


def _has_time(data, options) -> bool:
    return getattr(data, "time", None) is not None


def _one_pass(seconds: float, n_classes: int, options) -> float:
    return seconds


@dataclass(frozen=True)
class View:
    """One view of the analysis: everything the surfaces need to compute, cache, schedule and show it.

    Attributes
    ----------
    name : str
        The view's name (``Analysis.errors`` and ``timings`` keys, the cache keys' first element).
    compute : callable
        ``compute(data, options)`` → the engine's result (:mod:`calviz.analysis.compute`).
    reads : tuple of str
        The option fields the result depends on (besides the data): the dashboard's cache key.
    targets : TargetRule
        Which targets it analyses as such, and why not the others.
    results : tuple of str
        The :class:`calviz.analysis.Analysis` fields its result fills (two: a pair is split).
    label : str
        Its name in words (the report's compute times).
    applies : callable
        ``applies(data, options)``: whether the analysis computes it for these inputs.
    resampled : bool
        Its cost is resampling: ``analyze(resampled=False)`` skips it.
    in_analysis : bool
        :func:`calviz.analysis.analyze` computes it (False: a fast stand-in of another view only).
    in_check : bool
        ``calviz check`` computes it.
    subsample : int or None
        Rows above which it runs on a uniform subsample of this many rows (``calviz.sampling``); None:
        always every row (one pass per change).
    sampling_error : str
        What the subsample's note states about its sampling error.
    seconds_per_row : float
        Measured cost per row (per resample for resampling views), one core of a 2-core x86-64 machine at
        2·10⁵ rows (benchmarks/bench_bigdata.py).
    cost : callable
        ``cost(seconds_per_row × rows, n_classes, options)`` → expected seconds.
    background : {"never", "always", "when_large"}
        When the dashboard computes it off its UI thread (``when_large``: from :data:`LARGE_ROWS` rows).
    slot : str or None
        The dashboard store's slot it answers (None: none of its own).
    stand_in : str or None
        The fast view the slot shows while this one runs in the background.
    overlay : bool
        The slot draws over another card: left empty (no message) where the view does not apply.
    job_label : str or None
        What the dashboard's progress line says while it runs in the background.
    title : str or None
        Its section title in the static report (None: no section of its own).
    explanation : (str, str) or None
        One plain sentence on what it shows, and the mathematics behind it (the app's cards and the
        report's sections).
    figure : callable or None
        ``figure(analysis)`` → its figure in the static report, a HoloViews element drawn from the
        :class:`calviz.analysis.Analysis` (:mod:`calviz.plots`, imported when drawn); the dashboard card
        of a view with a figure is numbered.  None: drawn as a table (``frame``) or no figure.
    frame : callable or None
        ``frame(result)`` → its display columns (column name → values, :mod:`calviz.present.frames`): the
        view is drawn as a table — the report's section, one generic dashboard card, ``calviz check``.
    caption : callable or None
        ``caption(result)`` → the sentences under its figure or table (:mod:`calviz.present.text`): what
        the marks mean and what this result says; ``result`` is the one :func:`shown_result` picks.
    marks : str or None
        What its figure's marks mean, in one sentence (:mod:`calviz.present.text`).
    sorted_answer : callable or None
        ``sorted_answer(presorted, options)`` → its result from the target's sorted view (a
        :class:`calviz._presorted.Presorted`: scalar targets, every row), equal to ``compute`` to 1e−12
        without a pass over the rows (the dashboard answers bins, scheme and α changes with it); None:
        computed from the rows.
    card_title : str or None
        The dashboard card's title where it differs from ``title`` (:func:`card_title`).
    dask : {"dask", "gathered", "dask_or_gathered"} or None
        On distributed data: on Dask on all rows; in memory on rows gathered from the cluster;
        on Dask when the distributed twin can draw the resamples, else gathered; None: not on Dask.
    not_on_dask : str or None
        Why it is not available on Dask (with ``dask=None``).
    redecided_by : tuple of str
        The fields of ``reads`` that only re-decide a resampled view (α: the quantiles of its resamples, or
        where the sequential T-Cal stops): a change of them alone is answered by ``redecide`` from the
        resamples of its result at other values, not by resampling again (the dashboard's store keeps
        those).
    redecide : callable or None
        ``redecide(result, data, options)`` → the view's result at ``options`` from ``result``, its result
        at other values of ``redecided_by`` (carrying its resamples), equal to ``compute`` to 1e−12.
    redecide_reads_rows : bool
        ``redecide`` reads the rows too (the sequential T-Cal: the observed statistics, and resamples
        beyond the stored ones when the new α needs more), so the dashboard runs it as the view's job;
        False: from the resamples alone, milliseconds, on the session's thread.
    weighted : bool
        Its compute function passes the data's sample weights (``CalibrationData.weights``, a file's
        weight column) to engine functions that take them (:data:`calviz._params.WEIGHTED_FUNCTIONS`);
        False: it analyses the rows unweighted, and the surfaces say so (:func:`unweighted_views`).
    """

    name: str
    compute: Callable[[Any, AnalysisOptions], Any]
    reads: tuple[str, ...]
    targets: TargetRule
    label: str
    results: tuple[str, ...] = ()
    applies: Callable[[Any, AnalysisOptions], bool] = _always
    resampled: bool = False
    in_analysis: bool = True
    in_check: bool = False
    subsample: int | None = None
    sampling_error: str = ""
    seconds_per_row: float = ONE_PASS_SECONDS_PER_ROW
    cost: Callable[[float, int, Any], float] = _one_pass
    background: Literal["never", "always", "when_large"] = "never"
    slot: str | None = None
    stand_in: str | None = None
    overlay: bool = False
    job_label: str | None = None
    title: str | None = None
    explanation: tuple[str, str] | None = None
    dask: Literal["dask", "gathered", "dask_or_gathered"] | None = "dask"
    not_on_dask: str | None = None
    figure: Callable[[Any], Any] | None = None
    frame: Callable[[Any], dict[str, list]] | None = None
    caption: Callable[[Any], str] | None = None
    marks: str | None = None
    card_title: str | None = None
    sorted_answer: Callable[[Any, AnalysisOptions], Any] | None = None
    redecided_by: tuple[str, ...] = ()
    redecide: Callable[[Any, Any, AnalysisOptions], Any] | None = None
    redecide_reads_rows: bool = False
    weighted: bool = False

    def __post_init__(self):
        if not self.results and self.in_analysis:
            object.__setattr__(self, "results", (self.name,))

    def estimate_seconds(self, rows: int, n_classes: int, options) -> float:
        """Rough duration of this view on ``rows`` rows, for a progress message (not a promise)."""
        return self.cost(self.seconds_per_row * rows, n_classes, options)

    def in_background(self, rows: int) -> bool:
        """Whether the dashboard computes it off its UI thread for in-memory data of ``rows`` rows."""
        return self.background == "always" or (self.background == "when_large" and rows >= LARGE_ROWS)


_SCALAR_WHY = ("defined for scalar predictions: the top-k and full targets are shown through their top-1 "
               "(binary) reduction")


def _plots():
    """:mod:`calviz.plots`, imported when a figure is drawn: the registry does not import HoloViews."""
    from calviz import plots

    return plots


_DRAWN_EVERY_CHANGE = "not off the UI thread: one pass, milliseconds at 10⁵ rows"

#: every view, in the order the surfaces show them
REGISTRY: tuple[View, ...] = (
    View(
        "reliability", _compute.compute_reliability,
        weighted=True,
        reads=("target", "class_index", "top_k", "n", "scheme", "n_bins", "alpha"),
        sorted_answer=lambda view, options: view.reliability(options.scheme, int(options.n_bins),
                                                             alpha=options.alpha),
        targets=TargetRule("diagram", why="binary, top-1 and classwise: one diagram; top-k: one curve per "
                                          "rank; full: one panel per class"),
        label="reliability diagram", applies=_binned_diagram, slot="reliability",
        job_label="reliability on Dask",
        title="Reliability diagram",
        # scalar targets: the diagram with its smooth curve and witness; topk: one curve per rank; full: one
        # panel per class (5 columns fit the report's width)
        # the CORP mode (scheme "corp"): its isotonic curve and consistency band in the diagram's place
        figure=lambda analysis: _plots().corp_plot(analysis.corp, height=400) if analysis.corp is not None
        else _plots().reliability_view(analysis.reliability, smooth=analysis.smooth, witness=analysis.witness,
                                       height=400, max_cols=5),
        caption=_text.reliability_section_caption, marks=_text.RELIABILITY_MARKS,
        explanation=(
            "How often the model is right, against how sure it says it is: a calibrated model's bars follow "
            "the dashed diagonal.",
            "Per bin b: mean predicted probability z̄_b (x) and observed frequency ȳ_b (y), with a per-bin "
            "interval at level 1 − α. Blue: a kernel regression of y on the prediction (SmoothECE, Błasiok "
            "and Nakkiran 2023) with a pointwise band. Red panel: the witness w(v) of the smooth calibration "
            "error smCE = max over 1-Lipschitz w: [0, 1] → [−1, 1] of E[(y − v) w(v)] (Błasiok, Gopalan, Hu "
            "and Nakkiran 2023, Def. 7.2): it is near ±1 where outcomes are above or below the predictions. "
            "The CORP mode (no bins; Dimitriadis, Gneiting and Jordan 2021, eq. 2): the isotonic "
            "(pool-adjacent-violators) regression of the outcomes on the predictions, tied predictions "
            "pooled — the optimally binned diagram — with its consistency band at level 1 − α (outcomes "
            "redrawn as Bernoulli(prediction), refitted; the α/2 and 1 − α/2 quantiles at each "
            "prediction, their Sec. 2.2).",
        ),
    ),
    View(
        "corp", _compute.compute_corp,
        weighted=True,
        # no bins: a change of n_bins reuses it; α re-reads the quantiles of its stored resamples
        reads=("target", "class_index", "n", "alpha", "n_resamples", "seed"),
        redecided_by=("alpha",), redecide=_compute.redecide_corp,
        targets=TargetRule("scalar", why="the isotonic curve of a scalar prediction: " + _SCALAR_WHY),
        label="CORP reliability diagram", applies=_corp_diagram, in_check=True,
        # the band: n_resamples label resamples, each O(n) on the rows sorted once (measured 1.6·10⁻⁸ s
        # per row and resample at 10⁵ continuous predictions, benchmarks/bench_corp.py)
        seconds_per_row=1.6e-8,
        cost=lambda seconds, n_classes, options: seconds * max(int(options.n_resamples), 1),
        background="always", slot="reliability", stand_in="corp_curve", job_label="CORP consistency band",
        # every row gathered into one process: the isotonic fit sorts the whole sample (equal to in memory)
        dask="gathered",
    ),
    View(
        "corp_curve", lambda data, options: _compute.compute_corp(data, options, band=False),
        weighted=True,
        reads=("target", "class_index", "n"),
        targets=TargetRule("scalar", why="the isotonic curve of a scalar prediction: " + _SCALAR_WHY),
        label="CORP reliability curve (no band)", applies=_corp_diagram, in_analysis=False,
        seconds_per_row=1.5e-7,
        # every row gathered into one process: the isotonic fit sorts the whole sample (equal to in memory)
        dask="gathered",
    ),
    View(
        "smooth", _compute.compute_smooth,
        reads=("target", "class_index", "n", "kernel", "bandwidth", "alpha", "n_resamples", "seed"),
        redecided_by=("alpha",), redecide=_compute.redecide_smooth,
        targets=TargetRule("scalar", why=_SCALAR_WHY), label="smooth curve", applies=_scalar_diagram,
        seconds_per_row=1e-7, cost=lambda seconds, n_classes, options: seconds + SMOOTH_BAND_SECONDS,
        background="always", slot="smooth", stand_in="smooth_curve", overlay=True, job_label="smooth band",
        dask=None, not_on_dask="the smooth diagram needs the whole sample in one process",
    ),
    View(
        "smooth_curve", lambda data, options: _compute.compute_smooth(data, options, band=False),
        reads=("target", "class_index", "n", "kernel", "bandwidth"),
        targets=TargetRule("scalar", why=_SCALAR_WHY), label="smooth curve (no band)",
        applies=_scalar_diagram, in_analysis=False,
        dask=None, not_on_dask="the smooth diagram needs the whole sample in one process",
    ),
    View(
        "tcal", lambda data, options: _compute.compute_tcal(data, options, resampling="analytic"),
        reads=("target", "class_index", "n", "alpha"),
        targets=TargetRule("full", why="top-k has no T-Cal: the top-k and full targets are tested for full "
                                       "calibration on the simplex partition"),
        label="T-Cal (analytic)", in_check=True, seconds_per_row=3e-7, background="when_large",
        sorted_answer=lambda view, options: view.tcal(options.alpha),
        slot="tcal", job_label="T-Cal", title="Multi-scale T-Cal",
        figure=lambda analysis: _plots().tcal_plot(shown_result(analysis, "tcal")),
        caption=_text.tcal_section_caption, marks=_text.tcal_marks(None),
        explanation=(
            "A test of \"the model is calibrated\": it compares the calibration error measured with 2, 4, 8, "
            "… bins against what chance alone would give, and rejects if any bin count shows too much error.",
            "Adaptive T-Cal (Lee, Huang, Hassani and Dobriban, JMLR 2023, eq. 7 and Algorithm 2): at each "
            "dyadic scale m = 2^b the debiased estimator T^d of ℓ2-ECE² (their eq. 6, the plug-in estimator "
            "minus its bias) is compared with its critical value at level α/B (Bonferroni over B scales); "
            "critical values are analytic (scaled chi-square), or from resampling labels from the "
            "predictions "
            "(Y-only or consistency resampling, their App. C.3).",
        ),
    ),
    View(
        "tcal_resampled", _compute.compute_tcal,
        reads=("target", "class_index", "n", "alpha", "resampling", "seed", "all_rows"),
        # α moves where the sequential rule stops: its stored resamples are reused, more drawn if needed
        redecided_by=("alpha",), redecide=_compute.redecide_tcal, redecide_reads_rows=True,
        targets=TargetRule("full", why="top-k has no T-Cal: the top-k and full targets are tested for full "
                                       "calibration on the simplex partition"),
        label="T-Cal (resampled)", applies=_resampled_tcal_asked, resampled=True, in_check=True,
        subsample=200_000, sampling_error="p-values",
        seconds_per_row=2.5e-8,
        cost=lambda seconds, n_classes, options: seconds * TYPICAL_TCAL_RESAMPLES,
        background="always", slot="tcal", stand_in="tcal", job_label="T-Cal", dask="dask_or_gathered",
    ),
    View(
        "interval", _compute.compute_interval,
        reads=("target", "class_index", "top_k", "n", "n_bins", "alpha"),
        targets=TargetRule("own", why="top-k bins the sorted top-k vector; full the probability vector on "
                                      "the simplex partition (its top-K interval)", full_as_topk=True),
        label="ECE interval", in_check=True, slot="interval", job_label="interval on Dask",
        sorted_answer=lambda view, options: view.interval(int(options.n_bins), options.alpha),
        title="ECE with confidence interval",
        figure=lambda analysis: _plots().interval_plot(analysis.interval, analysis.bootstrap),
        caption=_text.interval_section_caption, marks=_text.INTERVAL_MARKS,
        explanation=(
            "How large the calibration error is, with a confidence interval: an interval that excludes 0 "
            "means the model is miscalibrated.",
            "The ℓ2 expected calibration error with m equal-width bins, estimated by the within-bin unbiased "
            "statistic T (Sun, Chaudhari, Barnett and Dobriban 2024, eq. 4). Its interval (their Algorithm "
            "1) "
            "is asymptotically valid: with z₁ = Φ⁻¹(1 − α), z₂ = Φ⁻¹(1 − α/2), T₊ = max(T, 0) and standard "
            "error s, the upper end is T₊ + z₂ s and the lower end T₊ − z₂ s, T₊/2 or max(T₊ − z₁ s, 0) "
            "depending on T₊/s, and 0 when T₊ is below z₁ times the exact null standard deviation. Beside "
            "it: "
            "the percentile bootstrap of the same statistic T.",
        ),
    ),
    View(
        "bootstrap", _compute.compute_bootstrap_interval,
        reads=("target", "class_index", "top_k", "n", "n_bins", "alpha", "n_resamples", "seed", "all_rows"),
        redecided_by=("alpha",), redecide=_compute.redecide_bootstrap,
        targets=TargetRule("own", why="as the ECE interval", full_as_topk=True),
        label="bootstrap interval", resampled=True, subsample=50_000, sampling_error="interval",
        seconds_per_row=1.5e-7, cost=lambda seconds, n_classes, options: seconds * int(options.n_resamples),
        background="always", slot="bootstrap", job_label="bootstrap interval", dask="gathered",
    ),
    View(
        "distance", _compute.compute_distance,
        # the Laplace kCE has the fixed bandwidth 1: the bandwidth option is the smooth curve's alone
        reads=("target", "class_index", "n", "all_rows"),
        targets=TargetRule("scalar", why=_SCALAR_WHY), label="distance bounds",
        results=("distance", "witness"),
        in_check=True, subsample=200_000, sampling_error="smce", seconds_per_row=3.5e-6,
        background="always", slot="distance", job_label="distance bounds",
        title="Distance-to-calibration bounds", dask="gathered",
        figure=lambda analysis: _plots().distance_plot(analysis.distance),
        caption=_text.distance_caption, card_title="Distance to calibration",
        explanation=(
            "How far the predictions are from the nearest perfectly calibrated ones, bounded from below and "
            "above by several calibration measures.",
            "The distance to calibration dCE (Błasiok, Gopalan, Hu and Nakkiran, STOC 2023) is the smallest "
            "expected change of the predictions that makes them calibrated. It is bounded by measures "
            "computed from the sample: the lower distance dCE_lower (a linear program, their Lemma 7.10), "
            "the "
            "smooth calibration error smCE (dCE_lower/5 ≤ smCE ≤ 2·dCE_lower, their Thm 7.3; computed in "
            "nearly-linear time as in Hu, Jambulapati, Tian and Yang 2024), the interval calibration error "
            "SintCE (SintCE ≤ 6√dCE_lower, their Thm 6.11), the Laplace-kernel calibration error kCE "
            "(Sec. 8) and the binned ECE plus the bin width (≥ dCE, eq. (5) and Thm 6.2).",
        ),
    ),
    View(
        "classical", _compute.compute_classical,
        # weighted: Spiegelhalter, Hosmer–Lemeshow, MCE, ACE; Cox, KS and Kuiper are then listed as not
        # computed (no weighted form)
        weighted=True,
        # α only re-decides from the stored p-values: the view reads it from the inputs, nothing is recomputed
        reads=("target", "class_index", "n", "n_bins"),
        targets=TargetRule("scalar", why=_SCALAR_WHY), label="other tests", in_check=True,
        seconds_per_row=1e-6,
        # the ACE is one pass per class
        cost=lambda seconds, n_classes, options: seconds * max(int(n_classes), 2) / 2,
        background="always", slot="classical", job_label="classical tests",
        dask=None, not_on_dask="the classical tests and the ACE sort the whole sample",
        explanation=(
            "Older calibration tests and error measures, for comparison with T-Cal.",
            "Spiegelhalter's z-test (1986), Hosmer and Lemeshow's χ² test (1980), Cox's logistic "
            "recalibration "
            "test (1958) and the Kolmogorov-Smirnov and Kuiper tests of cumulative differences "
            "(Arrieta-Ibarra et al. 2022), all asymptotic and conditional on the predictions. MCE: the "
            "largest gap between observed frequency and mean prediction over equal-width bins; ACE: the "
            "average gap over equal-mass bins.",
        ),
    ),
    View(
        "decomposition", _compute.compute_decomposition,
        weighted=True,
        # no bins, no α, no resampling: a change of n_bins or α reuses the cached result
        reads=("target", "class_index", "n"),
        targets=TargetRule("scalar", why="the Brier score of a scalar prediction: " + _SCALAR_WHY),
        label="score decomposition", in_check=True,
        # all rows: one sort and one isotonic (PAV) fit, O(n log n); measured 1.2·10⁻⁷ s/row at 2·10⁵ rows
        seconds_per_row=1.5e-7, background="when_large", slot="decomposition",
        job_label="score decomposition", title="Score decomposition",
        frame=decomposition_frame, caption=decomposition_text,
        # every row gathered into one process: the isotonic fit sorts the whole sample (equal to in memory)
        dask="gathered",
        explanation=(
            "Where the Brier score goes: the part the model loses to miscalibration (what recalibrating it "
            "would gain), minus what it gains by discriminating, plus the uncertainty of the outcomes.",
            "CORP decomposition (Dimitriadis, Gneiting and Jordan 2021, eq. 4): with the isotonic (PAV) "
            "recalibration ẑ of the predictions and the climatology ȳ, the mean Brier score "
            "S̄ = MCB − DSC + UNC, where MCB = S̄(z) − S̄(ẑ) ≥ 0, DSC = S̄(ȳ) − S̄(ẑ) ≥ 0 and UNC = S̄(ȳ).",
        ),
    ),
    View(
        "smooth_summaries", _compute.compute_ici,
        # the smooth curve's options: no bins, no α, no resampling (a change of those reuses the result)
        reads=("target", "class_index", "n", "kernel", "bandwidth"),
        targets=TargetRule("scalar", why="the smooth curve of a scalar prediction: " + _SCALAR_WHY),
        label="smooth-curve summaries", in_check=True,
        # the curve on a 4001-point grid, its interpolation at every prediction and one partial sort
        # (measured 6.2·10⁻⁷ s/row at 2·10⁵ rows, 2 cores at load 11.5); always off the dashboard's UI
        # thread: its own bandwidth search is ≈ 100 ms at 10⁵ rows, which an n or target change would wait for
        seconds_per_row=6e-7, background="always", slot="smooth_summaries",
        job_label="ICI, E50, E90, Emax",
        title="Smooth-curve summaries (ICI)", card_title="ICI, E50, E90, Emax",
        frame=ici_frame, caption=ici_caption,
        dask=None, not_on_dask="the smooth curve needs the whole sample in one process",
        explanation=(
            "How far the predictions are from the smooth calibration curve: on average (ICI), for half of "
            "them (E50), for 90% (E90) and at most (Emax) — the summaries clinical modellers report.",
            "Austin and Steyerberg (2019, Statistics in Medicine, Sec. 2): with f̂ a smooth estimate of "
            "E[y | z] and d_i = |f̂(z_i) − z_i|, ICI = (1/n) Σ d_i, E50 and E90 the median and 90th "
            "percentile of the d_i and Emax their maximum. They smooth with LOESS; calviz uses its own "
            "smooth curve, the Nadaraya–Watson kernel regression of the reliability diagram (Błasiok and "
            "Nakkiran 2023; bandwidth the SmoothECE fixed point unless set), which follows the curve "
            "more closely at the edges where LOESS over three quarters of the data flattens it.",
        ),
    ),
    View(
        "over_time", _compute.compute_over_time,
        # the window is the data's (its time column's): a change of α or of the bins recomputes the windows
        reads=("n", "alpha", "n_bins"),
        targets=TargetRule("scalar", why="over time: binary predictions, or the top-1 (confidence) reduction "
                                         "of K-class ones"),
        label="calibration over time", applies=_has_time, in_check=True,
        # a table in the report and calviz check; the dashboard draws its own card (calviz.app.over_time)
        frame=over_time_frame, caption=over_time_caption,
        # one sort and the windows' sums, plus one analytic T-Cal per window (measured ~1e-6 s/row at 10⁶)
        seconds_per_row=1e-6, background="when_large", slot="over_time", job_label="calibration over time",
        title="Calibration over time",
        dask=None,
        not_on_dask="the view's T-Cal per window needs each window's rows in one process; the other window "
                    "statistics of a partitioned log: calviz.dask.calibration_over_time",
        explanation=(
            "Whether the model stays calibrated as the log grows: per time window the calibration error "
            "with its interval, the mean prediction against the observed rate, and a monitor that may be "
            "checked after every window and alarms when the evidence against calibration is strong.",
            "Per window: the binned ℓ2 ECE with the interval of Sun, Chaudhari, Barnett and Dobriban (2024, "
            "Algorithm 1), the mean prediction and the observed rate (Wilson interval), and the analytic "
            "adaptive T-Cal p-value (Lee, Huang, Hassani and Dobriban 2023) Holm-corrected over the "
            "windows. Monitor: an e-process E_k, the average of betting (plug-in likelihood-ratio) test "
            "martingales Π (1 + λ_i (y_i − z_i)) whose bets λ_i are fixed from earlier windows (Waudby-Smith "
            "and Ramdas 2024; Ramdas, Grünwald, Vovk and Shafer 2023); by Ville's inequality "
            "P(E ever ≥ 1/α) ≤ α under calibration, so its alarm is valid however often it is read.",
        ),
    ),
)

_BY_NAME = {record.name: record for record in REGISTRY}
_OPTION_NAMES = frozenset(o.name for o in OPTIONS)


def view(name: str) -> View:
    """The record of view ``name``; a KeyError lists the views."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no view {name!r}; the views are {', '.join(_BY_NAME)}") from None


def view_names(**where) -> tuple[str, ...]:
    """Names of the views whose fields equal ``where`` (e.g. ``view_names(in_analysis=True)``), in order."""
    return tuple(r.name for r in REGISTRY if all(getattr(r, k) == v for k, v in where.items()))


def unweighted_views(data, options: AnalysisOptions, names=None) -> tuple[str, ...]:
    """The labels of the views (of ``names``, default every view) that apply to ``data`` but analyse its
    rows unweighted although it carries sample weights (``View.weighted`` False); () for unweighted data.
    Stand-ins of another view (``in_analysis`` False) are not listed twice."""
    if getattr(data, "weights", None) is None:
        return ()
    names = view_names() if names is None else tuple(names)
    return tuple(r.label for r in REGISTRY
                 if r.name in names and r.in_analysis and not r.weighted and r.applies(data, options))


def effective_target(name: str, data, options: AnalysisOptions) -> tuple:
    """What view ``name`` actually runs on, as a hashable tuple: ``("top1",)``, ``("classwise", c)``,
    ``("topk", k)``, ``("full",)`` …  ``auto`` is resolved, ``class_index`` counts only for
    ``classwise`` and ``top_k`` only for views that read the top-k vector (the record's
    :class:`TargetRule`), so e.g. switching ``auto`` → ``top1`` or moving k while the target is ``full``
    reuses every cached result."""
    rule = view(name).targets
    target = _data.resolve_target(data, options)
    if rule.kind == "full" and target in ("topk", "full"):
        return ("full",)
    if rule.kind == "scalar" or (rule.kind == "diagram" and _data.scalar_reliability(data, options)):
        target = _data.scalar_target(data, target)
    if target == "classwise":
        return (target, min(int(options.class_index), data.n_classes - 1))
    if target == "topk":
        return (target, min(int(options.top_k), data.n_classes))
    if target == "full" and rule.full_as_topk:
        return ("topk", data.n_classes)
    return (target,)


def shown_result(analysis, name: str):
    """The result view ``name``'s section shows: that of the view it stands in for (e.g. the resampled
    T-Cal for ``"tcal"``) where the analysis computed it, else its own (None: not computed)."""
    for record in REGISTRY:
        if record.stand_in == name and getattr(analysis, record.name, None) is not None:
            return getattr(analysis, record.name)
    if getattr(analysis, name, None) is None:  # another mode of its slot answered (e.g. the CORP diagram)
        for record in REGISTRY:
            if record.slot == name and record.name != name and record.in_analysis:
                if (result := getattr(analysis, record.name, None)) is not None:
                    return result
    return getattr(analysis, name, None)


def card_title(name: str) -> str:
    """The title of view ``name``'s dashboard card: the views with a figure are numbered in the order the
    surfaces show them (``"1 · Reliability diagram"``), the others are titled only."""
    record = view(name)
    title = record.card_title or record.title or record.label
    drawn = [r.name for r in REGISTRY if r.figure is not None]
    return f"{drawn.index(name) + 1} · {title}" if name in drawn else title
