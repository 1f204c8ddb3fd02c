"""The data the views analyse: validated once, subsampled (:func:`prepare`), with targets resolved once
(cached on the data), or a distributed backend (:class:`DistributedBackend`) analysed in place."""

from __future__ import annotations

import abc

from calviz._data import CalibrationData, as_calibration_data
from calviz._params import BOOLEAN, Options, validate_params
from calviz.analysis.options import AnalysisOptions
from calviz.targets import SCALAR_TARGETS, TARGETS, analysis_target, resolve_once


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
        resolve_once(data, options.target, options.top_k, options.class_index, caller=caller)


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
    """:func:`calviz.targets.resolve` of a target name, once per data (:func:`calviz.targets.resolve_once`:
    the resolved target is remembered by validated data, so the views of one analysis share it)."""
    return resolve_once(data, name, top_k, class_index)


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
