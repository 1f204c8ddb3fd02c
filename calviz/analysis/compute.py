"""The compute functions of the views: thin calls into the engine, one per view.

Each turns ``(data, options)`` into the engine's own result objects with plain keyword calls into
``calviz.ece``, ``calviz.intervals``, ``calviz.tcal``, ``calviz.distance``, ``calviz.smooth`` and
``calviz.classical``.  They take data validated once (:func:`calviz.analysis.run.analyze` validates at the
public boundary) or a distributed backend (:class:`DistributedBackend`), whose estimators they call instead
of the in-memory ones.  The registry (:mod:`calviz.analysis.views`) points to them.
"""
# (the data helpers are re-exported here: ``calviz.analysis.compute.prepare`` etc.)

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calviz._binning import check_n_bins
from calviz._classical import ClassicalTests, classical_tests
from calviz._corp import (
    CORPReliability,
    ScoreDecomposition,
    bands_at_alpha,
    corp_reliability,
    score_decomposition,
)
from calviz._data import CalibrationData, InputError
from calviz._distance import distance_bounds, smce_witness
from calviz._ece import reliability, reliability_of_view
from calviz._ici import ICIResult, ici
from calviz._intervals import bootstrap_at_alpha, ece_interval
from calviz._monitor import CalibrationMonitor, monitor_of_over_time
from calviz._params import BOOLEAN, NoneOr, Options, validate_params
from calviz._results import ResultMixin
from calviz._smooth import band_at_alpha, smooth_reliability
from calviz._tcal import adaptive_tcal
from calviz._windows import CalibrationOverTime, calibration_over_time
from calviz.analysis.data import (
    DistributedBackend,
    _resolved,
    _target,
    is_distributed,
    prepare,
    resolve_target,
    scalar_reliability,
)
from calviz.analysis.options import RESAMPLINGS, AnalysisOptions
from calviz.targets import simplex_cells


def _estimator(data, name: str):
    """The function ``name`` that computes on ``data``: the in-memory one, or the distributed twin of a
    :class:`DistributedBackend` (its ``estimators``), so one compute function serves both."""
    if isinstance(data, DistributedBackend):
        return getattr(data.estimators, name)
    return {"reliability": reliability, "adaptive_tcal": adaptive_tcal, "ece_interval": ece_interval}[name]


def _weighted(data) -> dict:
    """``sample_weight=`` of the data's weights for an engine function that takes them (``View.weighted``);
    nothing for unweighted data (the distributed twins take no weights)."""
    weights = getattr(data, "weights", None)
    return {} if weights is None else {"sample_weight": weights}


def _scalar_sample(data, options: AnalysisOptions):
    """(the rows a view analyses, its scalar target): :func:`prepare` and the options' target through its
    top-1 reduction, resolved once — the inputs of every view defined for scalar predictions."""
    sample = prepare(data, options)
    return sample, _target(sample, options, scalar=True)


#: ``full`` targets with more classes than this show the reliability panels of this many classes (those
#: with the most samples); a grid of more small panels is not readable in the dashboard's card
MAX_CLASS_PANELS = 10


@dataclass(frozen=True, repr=False)
class MultiReliability(ResultMixin):
    """Reliability data of a vector target: one scalar ``ReliabilityData`` per rank or per class.

    ``kind == "rank"`` (target ``topk``, Sun et al. (2024)): sort each prediction
    decreasingly, z_(1) ≥ … ≥ z_(k), and let y_(r) = 1{the true class is the r-th ranked class}.  The
    top-1-to-k vector is calibrated iff E[y_top-k | z_top-k] = z_top-k; taking conditional expectations
    given z_(r) alone (tower property), each rank's marginal must then be calibrated:
    E[y_(r) | z_(r)] = z_(r), r = 1..k.  Panel r is the reliability data (:func:`calviz.reliability`) of
    the pair (z_(r), y_(r)) — per bin b: count N_b, mean confidence mean_{j∈I_b} z_(r),j, observed frequency
    mean_{j∈I_b} y_(r),j and its interval at level 1 − α.  Rank 1 is the top-1 (confidence) diagram.

    ``kind == "class"`` (target ``full``): full calibration E[y | z] = z implies every class marginal is
    calibrated, P(y = c | z_c) = z_c (the classwise one-vs-rest pair (z_c, 1{y = c})); one panel per
    class.  With more than :data:`MAX_CLASS_PANELS` classes only that many are computed — the classes with
    the most samples (ties: lower index), shown in class order; ``n_omitted`` counts the others.

    Marginal calibration is necessary, not sufficient: panels that all follow the diagonal do not prove
    the vector target calibrated (T-Cal and the interval test the vector itself).

    Attributes
    ----------
    target : {"topk", "full"}
        The vector target.
    kind : {"rank", "class"}
        One panel per rank or per class.
    index : ndarray
        Ranks 1..k or class indices.
    labels : tuple of str
        Legend / panel titles.
    panels : tuple of ReliabilityData
        One per rank / class.
    positives : ndarray
        Per panel: samples whose true class is that rank / class.
    n : int
        Sample size.
    n_classes : int
        Classes of the input.
    n_omitted : int
        Classes not shown.
    """

    target: str
    kind: str
    index: np.ndarray
    labels: tuple
    panels: tuple
    positives: np.ndarray
    n: int
    n_classes: int
    n_omitted: int = 0

    def __len__(self) -> int:
        return len(self.panels)


def compute_reliability(data: CalibrationData, options: AnalysisOptions):
    """Reliability data for the target (``calviz.ece.reliability`` on scalar pairs).

    Scalar targets (binary, top-1, classwise): one ``ReliabilityData`` — per bin the count, mean
    confidence and observed frequency of the reliability diagram [1]_ with its Wilson interval [2]_ at
    level 1 − ``options.alpha``.  ``topk`` and ``full``: a :class:`MultiReliability` (one diagram per
    rank / per class), see :func:`compute_multi_reliability`.

    Parameters
    ----------
    data : CalibrationData or DistributedSource
        The predictions (subsampled first by :func:`prepare` when ``options.n`` is set).
    options : AnalysisOptions
        Target, ``n_bins``, ``scheme`` and ``alpha``.

    Returns
    -------
    ReliabilityData or MultiReliability
        The reliability view (see :func:`scalar_reliability`).

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger. On calibration of modern neural networks.
       *ICML*, 2017.
    .. [2] L. D. Brown, T. T. Cai and A. DasGupta. Interval estimation for a binomial proportion.
       *Statistical Science* 16(2), 101–133, 2001.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.analysis import AnalysisOptions, compute_reliability
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=300)                             # predicted P(y = 1)
    >>> y = (rng.uniform(size=300) < p ** 1.5).astype(int)    # outcomes: the model is over-confident
    >>> data = calviz.as_calibration_data(y, p)
    >>> rel = compute_reliability(data, AnalysisOptions(n_bins=5))
    >>> rel.counts.tolist(), rel.level, rel.target
    ([58, 44, 62, 57, 79], 0.95, 'binary')
    >>> np.round(rel.observed_frequency - rel.mean_confidence, 3)
    array([-0.082, -0.202, -0.128, -0.214, -0.004])
    """
    data = prepare(data, options)
    if not scalar_reliability(data, options):
        return compute_multi_reliability(data, options)
    diagram = _estimator(data, "reliability")
    return diagram(data, target=_target(data, options, scalar=True), n_bins=int(options.n_bins),
                   scheme=options.scheme, alpha=options.alpha, **_weighted(data))


def compute_multi_reliability(data: CalibrationData, options: AnalysisOptions) -> MultiReliability:
    """Per-rank (``topk``) or per-class (``full``) reliability data of a vector target.

    Per rank for ``topk`` (k = ``options.top_k``) [1]_, per class for ``full`` [2]_: one
    ``calviz.ece.reliability`` call per rank / class on its scalar pair, with the options' binning and
    α.  (Binary data get the binary diagram from :func:`compute_reliability`; here ``full`` on binary data
    gives the single class-1 panel, which is that diagram.)  Each panel is a necessary condition of the
    vector target's calibration (see :class:`MultiReliability`).

    Parameters
    ----------
    data : CalibrationData or DistributedSource
        The predictions (subsampled first by :func:`prepare` when ``options.n`` is set).
    options : AnalysisOptions
        ``target`` (``topk`` or ``full``), ``top_k``, ``n_bins``, ``scheme`` and ``alpha``.

    Returns
    -------
    MultiReliability
        One ``ReliabilityData`` per rank or per class (at most :data:`MAX_CLASS_PANELS` classes).

    Raises
    ------
    InputError
        The options' target resolves to a scalar target.

    References
    ----------
    .. [1] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024.
    .. [2] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.

    Examples
    --------
    >>> from calviz.analysis import AnalysisOptions, compute_multi_reliability
    >>> from calviz.datasets import load_dataset
    >>> data = load_dataset("digits-gnb")                 # 10 classes
    >>> ranks = compute_multi_reliability(data, AnalysisOptions(target="topk", top_k=3))
    >>> ranks.kind, ranks.labels
    ('rank', ('rank 1 (top-1)', 'rank 2', 'rank 3'))
    >>> ranks.positives.tolist()                          # true class ranked 1st, 2nd, 3rd
    [651, 42, 16]
    >>> classes = compute_multi_reliability(data, AnalysisOptions(target="full"))
    >>> classes.kind, len(classes), classes.n_omitted
    ('class', 10, 0)
    """
    data = prepare(data, options)
    target = resolve_target(data, options)
    if target not in ("topk", "full"):
        raise InputError(f"per-rank / per-class reliability needs target 'topk' or 'full'; got {target!r}")
    if is_distributed(data):  # one pass over the partitions for all panels
        return _estimator(data, "multi_reliability")(data, target=target, top_k=int(options.top_k),
                                                     n_bins=int(options.n_bins), alpha=options.alpha)
    # each panel is the binary diagram of one rank's / one class's pair, cut from the data validated once:
    # the pairs are handed to the engine as they are, not validated again
    common = dict(w=getattr(data, "weights", None), n_bins=check_n_bins(int(options.n_bins)),
                  scheme=options.scheme, alpha=options.alpha, target="binary", n_classes=2)
    support = np.bincount(data.labels, minlength=data.n_classes)
    kind, index, labels, omitted = multi_reliability_panels(
        target, n_classes=data.n_classes, is_binary=data.is_binary, top_k=int(options.top_k), support=support
    )
    panels, positives = [], []
    if kind == "rank":
        z, y = data.topk(int(index.size))
        for r in range(index.size):
            yr = np.ascontiguousarray(y[:, r])
            panels.append(reliability_of_view(np.ascontiguousarray(z[:, r]), yr, **common))
            positives.append(int(yr.sum()))
    else:
        for c in index:
            zc, yc = data.classwise(int(c))
            panels.append(reliability_of_view(zc, yc, **common))
            positives.append(int(support[c]))
    return MultiReliability(
        target=target,
        kind=kind,
        index=index,
        labels=labels,
        panels=tuple(panels),
        positives=np.asarray(positives, dtype=np.int64),
        n=data.n,
        n_classes=data.n_classes,
        n_omitted=int(omitted),
    )


def multi_reliability_panels(
    target: str, *, n_classes: int, is_binary: bool, top_k: int, support: np.ndarray
) -> tuple[str, np.ndarray, tuple, int]:
    """The panels of a :class:`MultiReliability`: ``(kind, index, labels, n_omitted)``.

    ``topk``: ranks 1..min(k, K) [1]_.  ``full``: every class [2]_, or for K > :data:`MAX_CLASS_PANELS`
    the classes with the largest ``support`` (samples per class; ties: lower index) in class order;
    binary data: the class-1 panel only (P(y = 0 | z) is its mirror image).  Shared by the in-memory and
    Dask engines.

    Parameters
    ----------
    target : {"topk", "full"}
        The vector target (any other name is treated as ``full``).
    n_classes : int
        Classes K.
    is_binary : bool
        Whether the predictions are 1-D P(y = 1).
    top_k : int
        k of the ``topk`` target.
    support : ndarray of shape (K,)
        Samples per class (read only for ``full`` with more than :data:`MAX_CLASS_PANELS` classes).

    Returns
    -------
    kind : {"rank", "class"}
        One panel per rank or per class.
    index : ndarray of int64
        Ranks 1..k or class indices, increasing.
    labels : tuple of str
        Panel titles.
    n_omitted : int
        Classes without a panel.

    References
    ----------
    .. [1] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024.
    .. [2] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from calviz.analysis import multi_reliability_panels
    >>> kind, index, labels, omitted = multi_reliability_panels(
    ...     "topk", n_classes=10, is_binary=False, top_k=3, support=np.ones(10))
    >>> kind, index.tolist(), labels
    ('rank', [1, 2, 3], ('rank 1 (top-1)', 'rank 2', 'rank 3'))
    >>> kind, index, labels, omitted = multi_reliability_panels(     # 12 classes: the 10 largest
    ...     "full", n_classes=12, is_binary=False, top_k=2, support=np.arange(12))
    >>> kind, index.tolist(), omitted
    ('class', [2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 2)
    """
    if target == "topk":
        index = np.arange(1, min(int(top_k), n_classes) + 1, dtype=np.int64)
        return "rank", index, tuple("rank 1 (top-1)" if r == 1 else f"rank {r}" for r in index), 0
    if is_binary:
        index = np.array([1], dtype=np.int64)
    elif n_classes > MAX_CLASS_PANELS:
        index = np.sort(np.argsort(-np.asarray(support), kind="stable")[:MAX_CLASS_PANELS]).astype(np.int64)
    else:
        index = np.arange(n_classes, dtype=np.int64)
    omitted = 0 if is_binary else n_classes - index.size
    return "class", index, tuple(f"class {c}" for c in index), omitted


@validate_params({"resampling": NoneOr(Options(RESAMPLINGS))})
def compute_tcal(data: CalibrationData, options: AnalysisOptions, resampling: str | None = None,
                 max_resamples: int | None = None, reuse=None):
    """Adaptive multi-scale T-Cal (``calviz.tcal.adaptive_tcal``).

    ``resampling=None`` uses ``options.resampling``; the dashboard first calls it with ``"analytic"``
    (instant) and then, off the UI thread, with the user's resampling type.  Resampled critical values
    use the library's sequential rule (``n_resamples=None``: resample until the decision is settled with
    resampling risk ≤ 10⁻³, or say undecided at the cap) — the one decision rule of the library, the
    report, ``calviz check`` and the dashboard; ``options.n_resamples`` is for the bootstrap views.

    T-Cal [1]_ tests the null hypothesis of calibration with the debiased ℓ2-ECE statistic at every dyadic
    number of bins.  Vector targets (``topk``, ``full``) are tested for full calibration on the simplex
    partition (top-k has no T-Cal).

    Parameters
    ----------
    data : CalibrationData or DistributedSource
        The predictions (subsampled first by :func:`prepare` when ``options.n`` is set).
    options : AnalysisOptions
        Target, ``alpha``, ``resampling`` and ``seed``.
    resampling : {"analytic", "y_only", "consistency", "threshold"}, optional
        Overrides ``options.resampling``.
    max_resamples : int, optional
        The cap of the sequential rule (default: the library's; the dashboard's "draw more" raises it for
        an undecided test).
    reuse : TCalResult, optional
        An earlier resampled result on the same rows, resampling and seed (e.g. at another α): its
        resamples are reused and only those beyond them drawn (``adaptive_tcal``'s ``reuse``); the result
        is the same.

    Returns
    -------
    TCalResult
        The decision (``reject``, ``decision``), the p-value and the per-scale statistics.

    References
    ----------
    .. [1] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=3000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=3000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> data = calviz.as_calibration_data(y, p)
    >>> from calviz.analysis import AnalysisOptions, compute_tcal
    >>> result = compute_tcal(data, AnalysisOptions(), resampling="analytic")
    >>> result.reject, result.method, result.pvalue < 0.001
    (True, 'analytic', True)
    """
    data = prepare(data, options)
    resampling = options.resampling if resampling is None else resampling
    target = _target(data, options)
    if not target.is_scalar:  # full calibration on the simplex partition (top-k has no T-Cal: use full)
        target = _resolved(data, "full")
    test = _estimator(data, "adaptive_tcal")
    more = {} if max_resamples is None else {"max_resamples": int(max_resamples)}
    if reuse is not None:  # (in memory only: the distributed twin draws its own)
        more["reuse"] = reuse
    return test(data, target=target.name, class_index=target.class_index, alpha=options.alpha,
                resampling=resampling, seed=int(options.seed), **more)


# -- the resampled views at another α: from the resamples of their result (``View.redecide``) ------------
def redecide_tcal(result, data: CalibrationData, options: AnalysisOptions):
    """The resampled T-Cal at ``options.alpha`` from ``result`` (the same view at another α): the rows it
    was computed on (:func:`calviz.sampling.sample_for_view`), its resamples reused and only those beyond
    them drawn — equal to :func:`compute_tcal` on those rows."""
    from calviz import sampling

    rows, _ = sampling.sample_for_view("tcal_resampled", prepare(data, options), options)
    return compute_tcal(rows, options, reuse=result)


def redecide_bootstrap(result, data, options: AnalysisOptions):
    """The bootstrap interval at ``options.alpha`` from the resamples of ``result`` (no data read)."""
    return bootstrap_at_alpha(result, options.alpha)


def redecide_smooth(result, data, options: AnalysisOptions):
    """The smooth diagram's band at ``options.alpha`` from the resampled curves of ``result``."""
    return band_at_alpha(result, options.alpha)


def redecide_corp(result, data, options: AnalysisOptions):
    """The CORP diagram's band at ``options.alpha`` from the resampled curves of ``result``."""
    return bands_at_alpha(result, options.alpha)


#: rows per cell, on average, that the full target's interval keeps (:func:`interval_bins`)
ROWS_PER_CELL = 10


def interval_bins(n: int, target: str, n_classes: int, n_bins: int) -> int:
    """Bins per axis of the ECE interval: ``n_bins``, or for full calibration of K > 2 classes the largest
    m ≤ ``n_bins`` (at least 2) whose m^(K−1) simplex cells hold :data:`ROWS_PER_CELL` rows on average.

    A cell of one row adds nothing to Sun et al.'s statistic, so with most rows alone in their cells it is
    biased far below the binned ECE² and the interval misses it (15 bins per axis for 10 classes are 15⁹
    cells: 719 rows gave [0, 0.16] beside T-Cal's p < 10⁻⁴; 2 per axis, 512 cells: [0.08, 0.14]).

    Parameters
    ----------
    n : int
        Rows analysed.
    target : str
        The resolved target's name.
    n_classes : int
        K.
    n_bins : int
        The bins per axis asked for (``AnalysisOptions.n_bins``).

    Returns
    -------
    int
        The bins per axis of the interval.

    Examples
    --------
    >>> from calviz.analysis import interval_bins
    >>> interval_bins(719, "full", 10, 15), interval_bins(12_000, "full", 4, 15)
    (2, 10)
    >>> interval_bins(719, "top1", 10, 15)
    15
    """
    if simplex_cells(target, n_classes) is None:
        return n_bins
    m = 2
    while m < n_bins and ROWS_PER_CELL * simplex_cells(target, n_classes, m + 1) <= n:
        m += 1
    return m


def _interval(data: CalibrationData, options: AnalysisOptions, method: str):
    data = prepare(data, options)
    target = _target(data, options)
    if target.name == "topk" and target.top_k == 1:  # the sorted top-1 "vector" is the top-1 confidence
        target = _resolved(data, "auto")  # (k > 1: the sorted top-k vector, the target itself)
    n_bins = interval_bins(data.n, target.name, data.n_classes, int(options.n_bins))
    interval = _estimator(data, "ece_interval")
    return interval(data, target=target, n_bins=n_bins, alpha=options.alpha, method=method,
                    n_resamples=int(options.n_resamples), seed=int(options.seed))


def compute_interval(data: CalibrationData, options: AnalysisOptions):
    """The asymptotic confidence interval of Sun et al. (2024) for the ℓ2-ECE.

    Computed by ``calviz.intervals.ece_interval`` [1]_ with ``options.n_bins`` equal-width bins at level
    1 − ``options.alpha``.  ``topk`` bins the sorted top-k vector (k = ``options.top_k``), ``full`` the
    probability vector on the equal-volume simplex partition, as T-Cal does, with fewer bins per axis
    when the cells would be too sparse (:func:`interval_bins`).

    Parameters
    ----------
    data : CalibrationData or DistributedSource
        The predictions (subsampled first by :func:`prepare` when ``options.n`` is set).
    options : AnalysisOptions
        Target, ``n_bins`` and ``alpha``.

    Returns
    -------
    ECEInterval
        The estimate and the interval on the ECE scale (``estimate``, ``low``, ``high``) and squared.

    References
    ----------
    .. [1] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=300)                             # predicted P(y = 1)
    >>> y = (rng.uniform(size=300) < p ** 1.5).astype(int)    # outcomes: the model is over-confident
    >>> data = calviz.as_calibration_data(y, p)
    >>> from calviz.analysis import AnalysisOptions, compute_interval
    >>> interval = compute_interval(data, AnalysisOptions(n_bins=10))
    >>> round(interval.estimate, 3), round(interval.low, 3), round(interval.high, 3), interval.method
    (0.126, 0.067, 0.172, 'asymptotic')
    """
    return _interval(data, options, "asymptotic")


def compute_bootstrap_interval(data: CalibrationData, options: AnalysisOptions):
    """The percentile-bootstrap interval for the ℓ2-ECE (the baseline Sun et al. 2024 compare to).

    The same quantity as :func:`compute_interval` [1]_; the interval is the percentile bootstrap [2]_
    of ``options.n_resamples`` resamples of the (prediction, label) pairs, seeded by ``options.seed``.

    Parameters
    ----------
    data : CalibrationData or DistributedSource
        The predictions (subsampled first by :func:`prepare` when ``options.n`` is set).
    options : AnalysisOptions
        Target, ``n_bins``, ``alpha``, ``n_resamples`` and ``seed``.

    Returns
    -------
    ECEInterval
        ``method == "bootstrap"``; ``regime`` states the resamples.

    References
    ----------
    .. [1] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024.
    .. [2] B. Efron. Bootstrap methods: another look at the jackknife. *The Annals of Statistics* 7(1),
       1–26, 1979.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=300)                             # predicted P(y = 1)
    >>> y = (rng.uniform(size=300) < p ** 1.5).astype(int)    # outcomes: the model is over-confident
    >>> data = calviz.as_calibration_data(y, p)
    >>> from calviz.analysis import AnalysisOptions, compute_bootstrap_interval
    >>> interval = compute_bootstrap_interval(data, AnalysisOptions(n_bins=10, n_resamples=100))
    >>> round(interval.estimate, 3), round(interval.low, 3), round(interval.high, 3)
    (0.126, 0.097, 0.19)
    >>> interval.regime
    'percentile bootstrap, 100 resamples of pairs'
    """
    return _interval(data, options, "bootstrap")


def compute_distance(data: CalibrationData, options: AnalysisOptions):
    """Every distance-to-calibration measure and the bounds they imply (``calviz.distance``).

    Returns ``(bounds, witness)``: the ``DistanceBounds`` and the smCE witness.  The kCE in the bounds
    uses the Laplace kernel with bandwidth 1 whatever ``options.bandwidth`` says (that option is the
    smooth curve's): with a data-dependent bandwidth it would no longer be the consistent estimator of
    Błasiok et al. (2023) [1]_, Thm 8.5.  Computed on the scalar (top-1 / binary) view of vector targets.

    Parameters
    ----------
    data : CalibrationData
        The predictions (subsampled first by :func:`prepare` when ``options.n`` is set).
    options : AnalysisOptions
        The target is read.

    Returns
    -------
    bounds : DistanceBounds
        smCE, dCE_lower, SintCE, the Laplace kCE, binned ECEs and the bounds on the distance to
        calibration they imply (``lower``, ``upper``).
    witness : SmCEWitness
        The smCE witness function at each prediction.

    References
    ----------
    .. [1] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=300)                             # predicted P(y = 1)
    >>> y = (rng.uniform(size=300) < p ** 1.5).astype(int)    # outcomes: the model is over-confident
    >>> data = calviz.as_calibration_data(y, p)
    >>> from calviz.analysis import AnalysisOptions, compute_distance
    >>> bounds, witness = compute_distance(data, AnalysisOptions())
    >>> round(bounds.lower, 3), round(bounds.upper, 3), round(bounds.smce, 3)
    (0.112, 0.17, 0.114)
    >>> witness.witness.shape
    (300,)
    """
    data, target = _scalar_sample(data, options)
    return distance_bounds(data, target=target), smce_witness(data, target=target)


@validate_params({"band": BOOLEAN})
def compute_smooth(data: CalibrationData, options: AnalysisOptions, *, band: bool = True):
    """Smooth reliability curve with a pointwise resampled band (``calviz.smooth.smooth_reliability``).

    ``band=False`` computes the curve alone (no resampling; the dashboard shows it at once and the
    banded version when its background computation finishes).

    The curve is the kernel-smoothed reliability diagram of Błasiok and Nakkiran [1]_ with the options'
    kernel and bandwidth (automatic: the fixed point smECE(σ) = σ); the band uses min(``n_resamples``,
    200) resamples.  Computed on the scalar (top-1 / binary) view of vector targets.

    Parameters
    ----------
    data : CalibrationData
        The predictions (subsampled first by :func:`prepare` when ``options.n`` is set).
    options : AnalysisOptions
        Target, ``kernel``, ``bandwidth``, ``alpha``, ``n_resamples`` and ``seed``.
    band : bool, default True
        Compute the pointwise band too.

    Returns
    -------
    SmoothReliability
        The curve on a grid, its band (NaN without one), the density and smECE.

    References
    ----------
    .. [1] J. Błasiok and P. Nakkiran. Smooth ECE: Principled reliability diagrams via kernel smoothing.
       arXiv preprint, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=300)                             # predicted P(y = 1)
    >>> y = (rng.uniform(size=300) < p ** 1.5).astype(int)    # outcomes: the model is over-confident
    >>> data = calviz.as_calibration_data(y, p)
    >>> from calviz.analysis import AnalysisOptions, compute_smooth
    >>> smooth = compute_smooth(data, AnalysisOptions(n_resamples=50))
    >>> round(smooth.smooth_ece, 3), smooth.n_resamples, bool(np.all(smooth.band_low <= smooth.band_high))
    (0.114, 50, True)
    >>> compute_smooth(data, AnalysisOptions(), band=False).n_resamples
    0
    """
    data, target = _scalar_sample(data, options)
    return smooth_reliability(
        data,
        target=target,
        bandwidth=options.bandwidth,
        kernel=options.kernel,
        alpha=options.alpha,
        n_resamples=min(int(options.n_resamples), 200) if band else 0,
        seed=int(options.seed),
    )


def compute_classical(data: CalibrationData, options: AnalysisOptions) -> ClassicalTests:
    """The classical tests and measures for what an :class:`AnalysisOptions` analyses.

    The same (sub)sample, α, number of bins and class; ``topk`` / ``full`` targets are shown through
    their top-1 (binary data: binary) reduction, as the scalar views of the analysis are.  The command
    line, the report and the dashboard make this one call.  Not on Dask: it sorts the whole sample.

    Parameters
    ----------
    data : CalibrationData
        Validated predictions.
    options : AnalysisOptions
        The analysis' options.

    Returns
    -------
    ClassicalTests
        As :func:`calviz.classical_tests` with ``measures=True``.

    References
    ----------
    .. [1] D. J. Spiegelhalter. Probabilistic prediction in patient management and clinical trials.
       *Statistics in Medicine* 5(5), 421–433, 1986.
    .. [2] D. W. Hosmer and S. Lemeshow. Goodness of fit tests for the multiple logistic regression model.
       *Communications in Statistics – Theory and Methods* 9(10), 1043–1069, 1980.
    .. [3] D. R. Cox. Two further applications of a model for binary regression. *Biometrika* 45(3/4),
       562–565, 1958.
    .. [4] I. Arrieta-Ibarra, P. Gujral, J. Tannen, M. Tygert and C. Xu. Metrics of calibration for
       probabilistic predictions. *Journal of Machine Learning Research* 23(351), 2022.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> from calviz.analysis import AnalysisOptions, compute_classical
    >>> res = compute_classical(calviz.as_calibration_data(y, p), AnalysisOptions(n_bins=10))
    >>> len(res.tests), sorted(res.measures)
    (5, ['ace', 'mce'])
    """
    sample, target = _scalar_sample(data, options)
    # weighted data: Spiegelhalter, Hosmer–Lemeshow, MCE and ACE weighted; the tests without a weighted
    # form are listed as not computed (classical_tests says why)
    return classical_tests(sample, alpha=options.alpha, target=target, measures=True, n_bins=options.n_bins,
                           **_weighted(sample))



def compute_decomposition(data: CalibrationData, options: AnalysisOptions) -> ScoreDecomposition:
    """The CORP decomposition of the mean Brier score, S̄ = MCB − DSC + UNC (``calviz.score_decomposition``).

    The Brier score only: it is finite for every prediction (the log loss of a prediction of exactly 0 or 1
    with the other label is infinite, and so would be its miscalibration).  On the same (sub)sample and
    scalar target as the other scalar views (``topk`` / ``full`` through their top-1 reduction); no bins,
    no α, no resampling: one sort and one isotonic fit.  Not on Dask: the isotonic fit needs the whole
    sample sorted in one process.

    Parameters
    ----------
    data : CalibrationData
        Validated predictions.
    options : AnalysisOptions
        The target (and ``n``, the subsample) is read.

    Returns
    -------
    ScoreDecomposition
        ``mean_score``, ``mcb``, ``dsc``, ``unc`` of the Brier score.

    References
    ----------
    .. [1] T. Dimitriadis, T. Gneiting and A. I. Jordan. Stable reliability diagrams for probabilistic
       classifiers. *Proceedings of the National Academy of Sciences* 118(8), e2016191118, 2021.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> from calviz.analysis import AnalysisOptions
    >>> from calviz.analysis.compute import compute_decomposition
    >>> res = compute_decomposition(calviz.as_calibration_data(y, p), AnalysisOptions())
    >>> bool(abs(res.mean_score - (res.mcb - res.dsc + res.unc)) < 1e-12)
    True
    """
    sample, target = _scalar_sample(data, options)
    return score_decomposition(sample, score="brier", target=target, **_weighted(sample))


def compute_ici(data: CalibrationData, options: AnalysisOptions) -> ICIResult:
    """ICI, E50, E90 and Emax of the smooth calibration curve the reliability diagram draws.

    :func:`calviz.ici` with the options' kernel and bandwidth (automatic: the SmoothECE fixed point), on
    the same (sub)sample and scalar target as the other scalar views (``topk`` / ``full`` through their
    top-1 reduction).  The smoother is calviz's kernel (Nadaraya–Watson) curve, not the LOESS of Austin
    and Steyerberg [1]_ (:func:`calviz.ici` explains the difference).  Unweighted: the smooth curve takes
    no sample weights.  Not on Dask: the smooth curve needs the whole sample in one process.

    Parameters
    ----------
    data : CalibrationData
        Validated predictions.
    options : AnalysisOptions
        The target, ``kernel``, ``bandwidth`` (and ``n``, the subsample) are read.

    Returns
    -------
    ICIResult
        ``ici``, ``e50``, ``e90``, ``emax`` and the smoother's ``bandwidth``.

    References
    ----------
    .. [1] P. C. Austin and E. W. Steyerberg. The Integrated Calibration Index (ICI) and related metrics
       for quantifying the calibration of logistic regression models. *Statistics in Medicine* 38(21),
       4051–4065, 2019.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> from calviz.analysis import AnalysisOptions
    >>> from calviz.analysis.compute import compute_ici
    >>> round(compute_ici(calviz.as_calibration_data(y, p), AnalysisOptions()).ici, 3)
    0.101
    """
    sample, target = _scalar_sample(data, options)
    return ici(sample, target=target, kernel=options.kernel, bandwidth=options.bandwidth)


#: the band the CORP reliability view draws: the consistency band of the CORP diagram (where a calibrated
#: model's curve would fall; the bootstrap confidence band stays an API option of corp_reliability)
CORP_VIEW_BANDS = ("consistency",)


def compute_corp(data: CalibrationData, options: AnalysisOptions, *, band: bool = True) -> CORPReliability:
    """The CORP reliability diagram (``calviz.corp_reliability``): the reliability diagram's
    ``scheme="corp"`` mode.

    The isotonic (PAV) recalibration of the scalar target's predictions — optimally binned by the data,
    no bin count — with its pointwise consistency band at level 1 − α from ``options.n_resamples`` label
    resamples drawn with ``options.seed`` [1]_.  ``band=False``: the curve alone (one sort and one fit, the
    fast stand-in the dashboard draws while the band is resampled).  ``topk`` / ``full`` through their top-1
    reduction.

    Parameters
    ----------
    data : CalibrationData
        Validated predictions.
    options : AnalysisOptions
        The target, ``n``, ``alpha``, ``n_resamples`` and ``seed`` are read.
    band : bool, default True
        Resample the consistency band.

    Returns
    -------
    CORPReliability
        The curve ``(x, recalibrated)``, the band at ``band_x`` and the Brier score's MCB/DSC/UNC.

    References
    ----------
    .. [1] T. Dimitriadis, T. Gneiting and A. I. Jordan. Stable reliability diagrams for probabilistic
       classifiers. *Proceedings of the National Academy of Sciences* 118(8), e2016191118, 2021.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.analysis import AnalysisOptions
    >>> from calviz.analysis.compute import compute_corp
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> corp = compute_corp(calviz.as_calibration_data(y, p), AnalysisOptions(scheme="corp", n_resamples=100))
    >>> corp.n_resamples, corp.consistency_low.shape == corp.band_x.shape, corp.confidence_low is None
    (100, True, True)
    """
    sample = prepare(data, options)
    target = _target(sample, options, scalar=True)
    return corp_reliability(sample, target=target.name, class_index=target.class_index, alpha=options.alpha,
                            n_resamples=int(options.n_resamples) if band else 0, bands=CORP_VIEW_BANDS,
                            seed=int(options.seed), **_weighted(sample))


@dataclass(frozen=True, repr=False)
class OverTime(ResultMixin):
    """The over-time view's result: the per-window statistics and the anytime-valid monitor of one log.

    Attributes
    ----------
    windows : CalibrationOverTime
        Per window: ECE with its interval, mean prediction and observed rate with intervals, T-Cal's
        analytic p-value Holm-corrected over the windows (:func:`calviz.calibration_over_time`).
    monitor : CalibrationMonitor
        The e-process after every window and its alarm (:func:`calviz.monitor_calibration`).
    """

    windows: CalibrationOverTime
    monitor: CalibrationMonitor

    def append(self, y_true, y_prob=None, *, time) -> OverTime:
        """Both results with rows appended to the log: the new rows' sums are merged
        (:meth:`calviz.CalibrationOverTime.append`, :meth:`calviz.CalibrationMonitor.append`)."""
        return OverTime(self.windows.append(y_true, y_prob, time=time),
                        self.monitor.append(y_true, y_prob, time=time))


def compute_over_time(data: CalibrationData, options: AnalysisOptions) -> OverTime:
    """Calibration of a prediction log over time (data with a time column, :class:`calviz._timed.TimedData`).

    The log is cut into the data's windows (``"auto"``: :func:`calviz._timed.auto_window`); per window
    :func:`calviz.calibration_over_time` (fixed windows, the first as the reference window) and, after
    every window, the e-process of :func:`calviz.monitor_calibration` at level ``alpha``.  Binary
    predictions as such; K-class predictions through their top-1 (confidence) reduction.

    Parameters
    ----------
    data : TimedData
        Validated predictions with their time column (other data: the rows in their order).
    options : AnalysisOptions
        ``alpha`` and ``n_bins`` are read (and ``n``, the subsample: it keeps its rows' times).

    Returns
    -------
    OverTime
        ``windows`` and ``monitor``.

    References
    ----------
    .. [1] I. Waudby-Smith and A. Ramdas. Estimating means of bounded random variables by betting.
       *Journal of the Royal Statistical Society, Series B* 86(1), 1–27, 2024.
    """
    from calviz._timed import TimedData, has_time

    if not has_time(data):  # (the registry applies the view to data with a time column only)
        data = TimedData.in_row_order(data)
    window = data.over_time_window()
    target = "binary" if data.is_binary else "top1"
    time = data.time.show(data.time.values)  # (datetimes, numbers or batch ids, as the user's column)
    windows = calibration_over_time(data, time=time, window=window, alpha=float(options.alpha),
                                    n_bins=int(options.n_bins), target=target)
    monitor = monitor_of_over_time(windows)  # (the same log, validated, sorted and cut once)
    return OverTime(windows, monitor)
