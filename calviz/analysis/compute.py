"""The compute functions of the views: thin calls into the engine, one per view.

Each turns ``(data, options)`` into the engine's own result objects with plain keyword calls into
``calviz.ece``, ``calviz.intervals``, ``calviz.tcal``, ``calviz.distance``, ``calviz.smooth`` and
``calviz.classical``.  They take data validated once (:func:`calviz.analysis.run.analyze` validates at the
public boundary) or a distributed backend (:class:`DistributedBackend`), whose estimators they call instead
of the in-memory ones.  The registry (:mod:`calviz.analysis.views`) points to them.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

import numpy as np

from calviz._classical import ClassicalTests, classical_tests
from calviz._data import CalibrationData, InputError, as_calibration_data
from calviz._distance import distance_bounds, smce_witness
from calviz._ece import reliability
from calviz._intervals import ece_interval
from calviz._params import BOOLEAN, NoneOr, Options, validate_params
from calviz._results import ResultMixin
from calviz._smooth import smooth_reliability
from calviz._tcal import adaptive_tcal
from calviz.analysis.options import RESAMPLINGS, AnalysisOptions
from calviz.targets import SCALAR_TARGETS, TARGETS, analysis_target, resolve, simplex_cells


class DistributedBackend(abc.ABC):
    """The one interface of distributed data (``calviz.dask.DistributedSource``) to the analysis.

    A backend is analysed in place: the compute functions call its :attr:`estimators` (the distributed
    twins of the in-memory estimators, same signatures and results) instead of the in-memory ones,
    :func:`calviz.analysis.run_view` asks it for each view (:meth:`compute_view`), and the dashboard asks
    which rows a view computes in memory (:meth:`gathered`).  ``n``, ``n_classes`` and ``is_binary`` are
    those of :class:`calviz.CalibrationData`.
    """

    #: tells every surface the data live on a cluster
    distributed = True

    @property
    @abc.abstractmethod
    def estimators(self):
        """Namespace of the distributed twins: ``reliability``, ``multi_reliability``, ``adaptive_tcal``,
        ``ece_interval``."""

    @abc.abstractmethod
    def compute_view(self, view: str, options):
        """``(result, note)`` of one view of the registry."""

    @abc.abstractmethod
    def gathered(self, view: str, options):
        """``(rows, n, note)`` when ``view`` is computed in memory on rows gathered from the cluster, else
        None."""

    @abc.abstractmethod
    def data_summary(self, options):
        """The :class:`calviz.analysis.DataSummary` of the rows analysed."""


def check_options_fit(data: CalibrationData, options: AnalysisOptions, caller: str = "analyze") -> None:
    """Refuse a class or a k that the data do not have.

    :func:`analysis_target` clips ``class_index`` to K − 1 and ``top_k`` to K, for the dashboard, whose
    controls follow the data loaded; a caller who names class 7 of a 4-class model (``analyze``, the
    command line) must get this message, not the numbers of class 3.

    Parameters
    ----------
    data : CalibrationData or DistributedSource
        The predictions (``n_classes`` and ``is_binary`` are read).
    options : AnalysisOptions
        ``target``, ``class_index`` and ``top_k`` are checked.
    caller : str, default "analyze"
        The function named in the message.

    Returns
    -------
    None
        The options fit the data.

    Raises
    ------
    InvalidParameterError
        ``class_index`` outside [0, K − 1] for the classwise target, or ``top_k`` outside [1, K] for the
        topk target of multiclass data.

    References
    ----------
    .. [1] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024 (the top-1-to-k target).

    Examples
    --------
    >>> from calviz.analysis import AnalysisOptions, check_options_fit
    >>> from calviz.datasets import load_dataset
    >>> data = load_dataset("digits-gnb")                 # 10 classes
    >>> check_options_fit(data, AnalysisOptions(target="classwise", class_index=9))
    >>> try:
    ...     check_options_fit(data, AnalysisOptions(target="classwise", class_index=12))
    ... except ValueError as error:                       # InvalidParameterError is a ValueError
    ...     print(error)
    The 'class_index' parameter of analyze must be an int in [0, 9]; got 12.
    """
    # (topk of binary data is the full 2-vector, with no k to check: analysis_target)
    if options.target == "classwise" or (options.target == "topk" and not data.is_binary):
        resolve(data, options.target, options.top_k, options.class_index, caller=caller)


def resolve_target(data: CalibrationData, options: AnalysisOptions) -> str:
    """The name of the calibration target these options analyse (:func:`analysis_target`).

    ``auto`` → binary/top1; ``topk`` of binary data → ``full`` (the sorted top-2 vector of a binary
    model is its full probability vector).  The target names are those of top-1 [1]_, top-1-to-k [2]_
    and full [3]_ calibration.

    Parameters
    ----------
    data : CalibrationData
        The (prepared) predictions.
    options : AnalysisOptions
        ``target``, ``top_k`` and ``class_index`` are read.

    Returns
    -------
    str
        One of ``"binary"``, ``"top1"``, ``"topk"``, ``"classwise"``, ``"full"``.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger. On calibration of modern neural networks.
       *ICML*, 2017.
    .. [2] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024.
    .. [3] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.

    Examples
    --------
    >>> from calviz.analysis import AnalysisOptions, resolve_target
    >>> from calviz.datasets import load_dataset
    >>> digits = load_dataset("digits-gnb")              # 10 classes
    >>> cancer = load_dataset("breast-cancer-gnb")       # binary: 1-D P(y = 1)
    >>> resolve_target(digits, AnalysisOptions()), resolve_target(digits, AnalysisOptions(top_k=3))
    ('top1', 'top1')
    >>> resolve_target(cancer, AnalysisOptions()), resolve_target(cancer, AnalysisOptions(target="topk"))
    ('binary', 'full')
    """
    return _target(data, options).name


@validate_params({"target": Options(TARGETS)})
def scalar_target(data: CalibrationData, target: str) -> str:
    """The scalar target a resolved target is shown through.

    ``topk``/``full`` → top-1 (binary for binary data); scalar targets are themselves.  The top-1
    (confidence) reduction [1]_ is the scalar view of the top-1-to-k [2]_ and full [3]_ targets.

    Parameters
    ----------
    data : CalibrationData
        The predictions the target was resolved for.
    target : str
        A resolved target name (e.g. from :func:`resolve_target`).

    Returns
    -------
    str
        ``"binary"``, ``"top1"`` or ``"classwise"``.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger. On calibration of modern neural networks.
       *ICML*, 2017.
    .. [2] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024.
    .. [3] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.

    Examples
    --------
    >>> from calviz.analysis import scalar_target
    >>> from calviz.datasets import load_dataset
    >>> digits, cancer = load_dataset("digits-gnb"), load_dataset("breast-cancer-gnb")
    >>> scalar_target(digits, "topk"), scalar_target(cancer, "full"), scalar_target(digits, "classwise")
    ('top1', 'binary', 'classwise')
    """
    if target in SCALAR_TARGETS:
        return target
    return _resolved(data, "auto").name


def scalar_reliability(data: CalibrationData, options: AnalysisOptions) -> bool:
    """Whether the reliability view of these options is one scalar diagram.

    One scalar diagram: binary, top-1, classwise — the smooth curve [1]_ and the smCE witness [2]_
    belong to it — rather than one curve per rank (``topk``) or one panel per class (``full``).  Binary
    data: always (full calibration of a binary model *is* the binary diagram; ``topk`` resolves to
    ``full`` there).

    Parameters
    ----------
    data : CalibrationData
        The (prepared) predictions.
    options : AnalysisOptions
        ``target`` is read.

    Returns
    -------
    bool
        True for one scalar diagram (then :func:`compute_reliability` returns ``ReliabilityData``),
        False for a :class:`MultiReliability`.

    References
    ----------
    .. [1] J. Błasiok and P. Nakkiran. Smooth ECE: Principled reliability diagrams via kernel smoothing.
       arXiv preprint, 2023.
    .. [2] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.

    Examples
    --------
    >>> from calviz.analysis import AnalysisOptions, scalar_reliability
    >>> from calviz.datasets import load_dataset
    >>> digits, cancer = load_dataset("digits-gnb"), load_dataset("breast-cancer-gnb")
    >>> scalar_reliability(digits, AnalysisOptions(target="top1"))
    True
    >>> scalar_reliability(digits, AnalysisOptions(target="topk"))     # one curve per rank
    False
    >>> scalar_reliability(cancer, AnalysisOptions(target="topk"))     # binary data: always one diagram
    True
    """
    return data.is_binary or resolve_target(data, options) not in ("topk", "full")


def _resolved(data, name: str, top_k: int = 1, class_index: int = 0):
    """:func:`calviz.targets.resolve` of a target name, once per data: the resolved target is cached on
    validated data (``CalibrationData._cache``), so the views of one analysis share it."""
    if not isinstance(data, CalibrationData):
        return resolve(data, name, top_k, class_index)
    key = ("resolved", name, int(top_k), int(class_index))
    target = data._cache.get(key)
    if target is None:
        target = data._cache[key] = resolve(data, name, top_k, class_index)
    return target


def _target(data, options: AnalysisOptions, *, scalar: bool = False):
    """:func:`calviz.targets.analysis_target` of ``options``, once per data (cached as :func:`_resolved`)."""
    if not isinstance(data, CalibrationData):
        return analysis_target(data, options, scalar=scalar)
    key = ("analysis_target", options.target, int(options.top_k), int(options.class_index), bool(scalar))
    target = data._cache.get(key)
    if target is None:
        if scalar and _target(data, options).is_scalar:  # a scalar target is its own scalar view
            target = _target(data, options)
        else:
            target = analysis_target(data, options, scalar=scalar)
        data._cache[key] = target
    return target


def _estimator(data, name: str):
    """The function ``name`` that computes on ``data``: the in-memory one, or the distributed twin of a
    :class:`DistributedBackend` (its ``estimators``), so one compute function serves both."""
    if isinstance(data, DistributedBackend):
        return getattr(data.estimators, name)
    return {"reliability": reliability, "adaptive_tcal": adaptive_tcal, "ece_interval": ece_interval}[name]


def is_distributed(data) -> bool:
    """Whether ``data`` is distributed data, whose views Dask computes on all rows.

    Distributed data (a :class:`DistributedBackend`: ``calviz.dask.DistributedSource``, with the Dask
    extra): every view is computed by Dask on all rows, by the distributed twins of the estimators;
    in-memory data never is.

    Parameters
    ----------
    data : CalibrationData or DistributedSource
        The data of an analysis.

    Returns
    -------
    bool
        True for distributed data.

    Examples
    --------
    >>> from calviz.analysis import is_distributed
    >>> from calviz.datasets import load_dataset
    >>> is_distributed(load_dataset("digits-gnb"))
    False
    """
    return isinstance(data, DistributedBackend)


def prepare(data: CalibrationData, options: AnalysisOptions) -> CalibrationData:
    """The data the views analyse: the subsample of ``options.n`` rows (seeded), or all rows.

    Distributed data (``calviz.dask.DistributedSource``) is analysed in place, on all rows.  The
    subsample is drawn uniformly without replacement from ``options.seed`` and cached on ``data``, so
    every view of one analysis sees the same rows.  The estimators of the views assume i.i.d.
    (prediction, label) pairs; a uniform subsample of an i.i.d. sample is again i.i.d., so
    their guarantees hold on it (at the precision of ``n`` rows).

    Parameters
    ----------
    data : CalibrationData or DistributedSource
        The predictions (validated again by :func:`calviz.as_calibration_data`).
    options : AnalysisOptions
        ``n`` and ``seed`` are read.

    Returns
    -------
    CalibrationData or DistributedSource
        The subsample, or ``data`` itself (``options.n`` None or at least the number of rows).

    Examples
    --------
    >>> from calviz.analysis import AnalysisOptions, prepare
    >>> from calviz.datasets import load_dataset
    >>> data = load_dataset("digits-gnb")                 # 719 rows
    >>> options = AnalysisOptions(n=200, seed=1)
    >>> rows = prepare(data, options)
    >>> rows.n, prepare(data, options) is rows, prepare(data, AnalysisOptions()) is data
    (200, True, True)
    """
    if is_distributed(data):
        return data
    if not isinstance(data, CalibrationData):  # (validated data is used as it is: validated once)
        data = as_calibration_data(data)
    if options.n is not None and options.n < data.n:
        key = ("subsample", int(options.n), int(options.seed))
        cached = data._cache.get(key)
        if cached is None:
            cached = data.subsample(int(options.n), seed=int(options.seed))
            data._cache[key] = cached
        return cached
    return data


@validate_params({"scalar": BOOLEAN})
def analysis_view(data: CalibrationData, options: AnalysisOptions, *, scalar: bool = True):
    """(z, y) arrays for the chosen target.

    ``scalar=True`` (distance family, smooth curve, the scalar reliability diagram — all defined for
    scalar predictions): ``topk`` and ``full`` fall back to the top-1 confidence view, which is what the
    real-data experiments of the papers use [1]_ [2]_ (the reliability view of ``topk``/``full`` on
    multi-class data is :func:`compute_multi_reliability` instead).  Returns ``(z, y, target_used)``.
    ``scalar=False`` gives the vector targets' own arrays: the sorted top-k probabilities [3]_ or the
    whole probability vector.

    Parameters
    ----------
    data : CalibrationData
        The (prepared) predictions.
    options : AnalysisOptions
        ``target``, ``top_k`` and ``class_index`` are read.
    scalar : bool, default True
        Reduce ``topk``/``full`` to the top-1 (binary) view.

    Returns
    -------
    z : ndarray of shape (n,) or (n, k)
        Predictions of the target.
    y : ndarray of shape (n,) or (n, k)
        Their label indicators.
    target_used : str
        The resolved target of ``z`` and ``y``.

    References
    ----------
    .. [1] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.
    .. [2] J. Błasiok and P. Nakkiran. Smooth ECE: Principled reliability diagrams via kernel smoothing.
       arXiv preprint, 2023.
    .. [3] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024.

    Examples
    --------
    >>> from calviz.analysis import AnalysisOptions, analysis_view
    >>> from calviz.datasets import load_dataset
    >>> data = load_dataset("digits-gnb")
    >>> options = AnalysisOptions(target="topk", top_k=3)
    >>> z, y, used = analysis_view(data, options)
    >>> z.shape, used
    ((719,), 'top1')
    >>> z, y, used = analysis_view(data, options, scalar=False)
    >>> z.shape, y.shape, used
    ((719, 3), (719, 3), 'topk')
    """
    target = _target(data, options, scalar=scalar)
    z, y = target.view(data)
    return z, y, target.name


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
                   scheme=options.scheme, alpha=options.alpha)


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
    common = dict(n_bins=int(options.n_bins), scheme=options.scheme, alpha=options.alpha)
    support = np.bincount(data.labels, minlength=data.n_classes)
    kind, index, labels, omitted = multi_reliability_panels(
        target, n_classes=data.n_classes, is_binary=data.is_binary, top_k=int(options.top_k), support=support
    )
    panels, positives = [], []
    if kind == "rank":
        z, y = data.topk(int(index.size))
        for r in range(index.size):
            yr = y[:, r].astype(np.int64)
            panels.append(reliability(yr, np.ascontiguousarray(z[:, r]), **common))
            positives.append(int(yr.sum()))
    else:
        for c in index:
            zc, yc = data.classwise(int(c))
            panels.append(reliability(yc.astype(np.int64), zc, **common))
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
def compute_tcal(data: CalibrationData, options: AnalysisOptions, resampling: str | None = None):
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
    >>> p = rng.uniform(size=300)                             # predicted P(y = 1)
    >>> y = (rng.uniform(size=300) < p ** 1.5).astype(int)    # outcomes: the model is over-confident
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
    return test(data, target=target.name, class_index=target.class_index, alpha=options.alpha,
                resampling=resampling, seed=int(options.seed))


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
    if target.name == "topk":  # the sorted top-k vector (k = 1: the top-1 confidence)
        target = _resolved(data, "auto", top_k=target.top_k)
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
    data = prepare(data, options)
    target = _target(data, options, scalar=True)
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
    data = prepare(data, options)
    return smooth_reliability(
        data,
        target=_target(data, options, scalar=True),
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
    sample = prepare(data, options)
    target = _target(sample, options, scalar=True)
    return classical_tests(sample, alpha=options.alpha, target=target.name, class_index=target.class_index,
                           measures=True, n_bins=options.n_bins)

