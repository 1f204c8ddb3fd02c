"""The calibration target: which reduction of the predictions is tested for calibration.

Every estimator, the analysis layer and the distributed drivers decide the target here, once, with
:func:`resolve`, and read the (z, y) arrays of the decision with :meth:`Target.view`.

Targets (for n predictions of K classes):

* ``binary``: z = P(y = 1) of 1-D binary input, y ∈ {0, 1}.
* ``top1``: the confidence z = max_k p_k and y = 1{argmax_k p_k = label} (Guo, Pleiss, Sun and
  Weinberger, 2017).
* ``topk``: the k largest probabilities sorted decreasingly, (n, k), and their label indicators
  (top-1-to-k calibration; Sun, Chaudhari, Barnett and Dobriban, 2024).
* ``classwise``: one-vs-rest for one class c, z = p_c and y = 1{label = c}.
* ``full``: the whole probability vector (n, K) and the one-hot labels, E[y | z] = z.
* ``auto``: ``binary`` for 1-D input, ``top1`` for (n, K) input, ``topk`` when ``top_k > 1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from calviz._errors import InputError
from calviz._kernels.binning import topk_view_kernel
from calviz._params import BOOLEAN, InvalidParameterError, check_int_in, parameter_message, validate_params

if TYPE_CHECKING:  # (a type only: the data module resolves its views here)
    from calviz._data import CalibrationData

__all__ = ["TARGETS", "SCALAR_TARGETS", "TargetName", "Target", "resolve", "topk_view", "simplex_cells"]

#: Every target name a user may pass (``auto`` is resolved to one of the others).
TARGETS = ("auto", "binary", "top1", "topk", "classwise", "full")
#: The resolved targets whose view is one scalar prediction per sample.
SCALAR_TARGETS = ("binary", "top1", "classwise")

TargetName = Literal["auto", "binary", "top1", "topk", "classwise", "full"]


@dataclass(frozen=True)
class Target:
    """A resolved calibration target of a sample with ``n_classes`` classes.

    ``name`` is never ``auto``; ``top_k`` matters for ``topk`` and ``class_index`` for ``classwise``
    (both are validated against ``n_classes`` by :func:`resolve`, which is how targets are made).
    ``str(target)`` is its name; :meth:`view` gives the (z, y) arrays the estimators test.

    Attributes
    ----------
    name : {"binary", "top1", "topk", "classwise", "full"}
        The resolved target (never ``auto``).
    n_classes : int
        Classes K of the sample it was resolved for (2 for binary input).
    top_k : int
        k of the ``topk`` target (1 for every other target).
    class_index : int
        The class c of the ``classwise`` target (0 for every other target).

    Examples
    --------
    >>> from calviz.datasets import load_dataset
    >>> from calviz.targets import resolve
    >>> data = load_dataset("digits-gnb")                 # 719 predictions of 10 classes
    >>> target = resolve(data, "topk", top_k=3)
    >>> target.name, target.n_classes, target.top_k, target.is_scalar
    ('topk', 10, 3, False)
    >>> z, y = target.view(data)                           # sorted top-3 probabilities, label indicators
    >>> z.shape, y.shape
    ((719, 3), (719, 3))
    """

    name: str
    n_classes: int
    top_k: int = 1
    class_index: int = 0

    @property
    def is_scalar(self) -> bool:
        """Whether the view is one scalar prediction per sample (``binary``, ``top1``, ``classwise``)."""
        return self.name in SCALAR_TARGETS

    def __str__(self) -> str:
        return self.name

    def view(self, data: CalibrationData, *, integer_labels: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The (z, y) arrays of this target.

        Scalar targets give (n,) arrays; ``topk`` the (n, k) sorted top-k probabilities and their label
        indicators; ``full`` the (n, K) probabilities and one-hot labels.  y is float64, except that
        ``integer_labels=True`` returns the validated int64 labels themselves for the binary target (no
        float copy: the kernels accept either)."""
        if self.name == "binary":
            if integer_labels and data.is_binary:
                return data.probs, data.labels
            return data.binary()
        if self.name == "top1":
            return data.top1()
        if self.name == "topk":
            return topk_view(data, self.top_k)
        if self.name == "classwise":
            return data.classwise(self.class_index)
        return data.full_probs(), data.onehot()


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _refuse(name: str, value, rule: str, caller: str | None):
    return InvalidParameterError(parameter_message(name, caller, rule, value))


def resolve(
    data: CalibrationData,
    target: TargetName | Target = "auto",
    top_k: int = 1,
    class_index: int = 0,
    *,
    allowed: tuple[str, ...] = TARGETS,
    caller: str | None = None,
) -> Target:
    """Decide the calibration target of validated ``data``.

    ``auto`` becomes ``binary`` (1-D input) or ``top1`` ((n, K) input) when ``top_k == 1`` and ``topk``
    when ``top_k > 1``.  ``top_k`` must be an integer (in 1..K for ``topk``); ``class_index`` an integer
    in 0..K−1 for ``classwise``.  ``allowed`` lists the target names the caller accepts (``auto`` is
    checked by name, then the resolved target again); errors name the parameter and ``caller``.
    A :class:`Target` is accepted and checked against ``data``.

    The targets are those of the calibration literature: top-1 (confidence) calibration [1]_, top-1-to-k
    calibration of the sorted top-k vector [2]_, and classwise and full (canonical) calibration [3]_.

    Parameters
    ----------
    data : CalibrationData
        Validated predictions (:func:`calviz.as_calibration_data`).
    target : {"auto", "binary", "top1", "topk", "classwise", "full"} or Target, default "auto"
        The target asked for.
    top_k : int, default 1
        k of the ``topk`` target; ``auto`` with ``top_k > 1`` means ``topk``.
    class_index : int, default 0
        The class of the ``classwise`` target.
    allowed : tuple of str, default TARGETS
        The target names the caller accepts.
    caller : str, optional
        The public function named in error messages.

    Returns
    -------
    Target
        The resolved target: never ``auto``, with ``top_k`` and ``class_index`` checked against the
        number of classes.

    Raises
    ------
    InvalidParameterError
        A target name, ``top_k`` or ``class_index`` out of range, or a target not in ``allowed``.
    InputError
        ``binary`` asked of multi-class (n, K) predictions.

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
    >>> from calviz.datasets import load_dataset
    >>> from calviz.targets import resolve
    >>> data = load_dataset("digits-gnb")                 # 10-class predictions
    >>> resolve(data).name, resolve(data, top_k=2).name
    ('top1', 'topk')
    >>> resolve(data, "classwise", class_index=3)
    Target(name='classwise', n_classes=10, top_k=1, class_index=3)
    >>> try:
    ...     resolve(data, "classwise", class_index=10, caller="binned_ece")
    ... except ValueError as error:                       # InvalidParameterError is a ValueError
    ...     print(error)
    The 'class_index' parameter of binned_ece must be an int in [0, 9]; got 10.
    """
    K = data.n_classes
    if isinstance(target, Target):
        target, top_k, class_index = target.name, target.top_k, target.class_index
    if not isinstance(target, str) or target not in TARGETS or target not in allowed:
        names = "{" + ", ".join(repr(t) for t in allowed) + "}"
        raise _refuse("target", target, f"a str among {names}", caller)
    if not _is_int(top_k):
        raise _refuse("top_k", top_k, "an int in [1, inf)", caller)
    name = target
    if name == "auto":
        if top_k == 1:
            name = "binary" if data.is_binary else "top1"
        else:
            name = "topk"
        if name not in allowed:
            what = "topk" if name == "topk" else "scalar"
            raise _refuse("target", target, f"resolvable here; 'auto' means {what!r} for this input", caller)
    if name == "topk" and not 1 <= top_k <= K:
        raise _refuse("top_k", top_k, f"an int in [1, {K}] (the number of classes)", caller)
    if name == "classwise" and not (_is_int(class_index) and 0 <= class_index < K):
        raise _refuse("class_index", class_index, f"an int in [0, {K - 1}]", caller)
    if name == "binary" and not data.is_binary:
        raise InputError(f"the binary target needs binary predictions (1-D P(y = 1)); these have {K} "
                         "classes: use the top1, classwise, topk or full target")
    k = int(top_k) if name == "topk" else 1
    return Target(name, K, k, int(class_index) if name == "classwise" else 0)


#: the key of the resolved targets in a CalibrationData's cache (:func:`resolve_once`)
_RESOLVED = "resolved targets"


def _memo_key(target, top_k, class_index):
    """The key of a :func:`resolve` call in the memo of :func:`resolve_once`, or None (not memoised: an
    argument :func:`resolve` would refuse or read differently, e.g. ``top_k=1.0``).  ``top_k`` counts only
    for ``auto`` and ``topk`` and ``class_index`` only for ``classwise``, as in :func:`resolve`."""
    if isinstance(target, Target):
        return target
    if not isinstance(target, str) or not _is_int(top_k):
        return None
    if target == "classwise":
        return (target, 1, int(class_index)) if _is_int(class_index) else None
    return (target, int(top_k) if target in ("auto", "topk") else 1, 0)


def resolve_once(
    data: CalibrationData,
    target: TargetName | Target = "auto",
    top_k: int = 1,
    class_index: int = 0,
    *,
    allowed: tuple[str, ...] = TARGETS,
    caller: str | None = None,
) -> Target:
    """:func:`resolve`, run once per validated data and target: the estimators' entry.

    An outer call resolves the target (``calviz.analyze``, an estimator calling another) and hands the
    :class:`Target` — or the same name, ``top_k`` and ``class_index`` — down to the estimators it calls;
    they find it in the data's memo and do not resolve it again (validate once at the outermost call, as
    scikit-learn's ``prefer_skip_nested_validation``).  The memo lives on the validated
    :class:`~calviz.CalibrationData` and holds only what :func:`resolve` returned for these very data, and
    an entry is used only where the caller allows both the target asked for and the one it resolved to:
    the result and every error are :func:`resolve`'s.

    Parameters
    ----------
    data, target, top_k, class_index, allowed, caller
        As :func:`resolve`.

    Returns
    -------
    Target
        ``resolve(data, target, top_k, class_index, allowed=allowed, caller=caller)``.

    Examples
    --------
    >>> import calviz
    >>> from calviz.targets import resolve_once
    >>> data = calviz.as_calibration_data([0, 2, 1], [[0.5, 0.2, 0.3], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3]])
    >>> top1 = resolve_once(data, "auto")               # resolved once …
    >>> resolve_once(data, "top1") is top1, resolve_once(data, top1) is top1   # … then found again
    (True, True)
    """
    cache = getattr(data, "_cache", None)
    key = _memo_key(target, top_k, class_index) if isinstance(cache, dict) else None
    if key is None:
        return resolve(data, target, top_k, class_index, allowed=allowed, caller=caller)
    memo = cache.setdefault(_RESOLVED, {})
    found = memo.get(key)
    asked = target.name if isinstance(target, Target) else target
    if found is not None and asked in allowed and found.name in allowed:
        return found
    found = resolve(data, target, top_k, class_index, allowed=allowed, caller=caller)
    # (the same target asked for by its resolved name, or as the Target itself: resolve returns it again)
    for same in (key, found, (found.name, found.top_k, found.class_index)):
        memo.setdefault(same, found)
    return found


@validate_params({"scalar": BOOLEAN})
def analysis_target(data: CalibrationData, options, *, scalar: bool = False) -> Target:
    """The calibration target an :class:`calviz.analysis.AnalysisOptions` analyses (by :func:`resolve`).

    ``auto`` is binary/top-1 whatever ``top_k`` says (``top_k`` belongs to the ``topk`` target);
    ``topk`` of a binary model is the full 2-vector; ``top_k`` and ``class_index`` beyond the number of
    classes are clipped to it.  ``scalar=True``: ``topk``/``full`` are shown through their top-1 (binary
    for binary data) reduction, the view of the estimators defined for scalar predictions.

    The targets are top-1 (confidence) calibration [1]_, top-1-to-k calibration [2]_ and classwise and
    full calibration [3]_.

    Parameters
    ----------
    data : CalibrationData
        The (prepared) predictions.
    options : calviz.analysis.AnalysisOptions
        ``target``, ``top_k`` and ``class_index`` are read.
    scalar : bool, default False
        Reduce the vector targets (``topk``, ``full``) to their top-1 (binary) view.

    Returns
    -------
    Target
        The resolved target (never ``auto``).

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
    >>> from calviz.analysis import AnalysisOptions, analysis_target
    >>> from calviz.datasets import load_dataset
    >>> data = load_dataset("digits-gnb")                 # 10 classes
    >>> options = AnalysisOptions(target="topk", top_k=3)
    >>> analysis_target(data, options)
    Target(name='topk', n_classes=10, top_k=3, class_index=0)
    >>> analysis_target(data, options, scalar=True).name
    'top1'
    >>> analysis_target(data, AnalysisOptions(target="classwise", class_index=12)).class_index  # clipped
    9
    """
    name = options.target
    if data.is_binary and name == "topk":
        name = "full"  # top-2 of a binary model is the full 2-vector
    if scalar and name in ("topk", "full"):
        name = "auto"
    K = data.n_classes
    return resolve_once(data, name, top_k=min(int(options.top_k), K) if name == "topk" else 1,
                        class_index=min(int(options.class_index), K - 1))


def simplex_cells(target: str | None, n_classes: int | None, bins_per_axis: int = 1) -> int | None:
    """The cells of full calibration's simplex partition, or None where bins are not counted per axis.

    Full calibration of K > 2 classes bins the probability vector on the equal-volume partition of the
    simplex (Lee et al. (2023), Sec. 3): m bins per axis are m^(K−1) cells, so a bin count means bins
    *per axis* there and the displays say so.  Every other target (binary full calibration included)
    has m bins.

    Parameters
    ----------
    target : str or None
        A resolved target's name.
    n_classes : int or None
        K.
    bins_per_axis : int, default 1
        m.

    Returns
    -------
    int or None
        m^(K−1), or None for a target binned on m bins.

    Examples
    --------
    >>> from calviz.targets import simplex_cells
    >>> simplex_cells("full", 10, 2), simplex_cells("full", 2, 15), simplex_cells("top1", 10, 15)
    (512, None, None)
    """
    if target != "full" or n_classes is None or int(n_classes) <= 2:
        return None
    return int(bins_per_axis) ** (int(n_classes) - 1)


def topk_view(data: CalibrationData, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The sorted top-k probabilities of each row and their label indicators, by a partial sort.

    Same arrays as ``data.topk(k)`` (sorted top-k probabilities, ties to the lower class index, and
    their label indicators) from a jitted O(n K k) partial sort instead of a full row argsort.

    Parameters
    ----------
    data : CalibrationData
        Validated predictions of K classes.
    k : int
        Probabilities kept per row, 1 ≤ k ≤ K.

    Returns
    -------
    z : ndarray of shape (n, k)
        Each row's k largest probabilities, decreasing.
    y : ndarray of shape (n, k)
        y[i, r] = 1 when the true class of row i is its (r + 1)-th ranked class, else 0 (float64).

    Raises
    ------
    InputError
        ``k`` outside 1..K.

    Examples
    --------
    >>> import numpy as np
    >>> from calviz.datasets import load_dataset
    >>> from calviz.targets import topk_view
    >>> data = load_dataset("digits-gnb")
    >>> z, y = topk_view(data, 2)
    >>> z.shape, bool(np.all(z[:, 0] >= z[:, 1]))
    ((719, 2), True)
    >>> y.sum(axis=0)                                     # true class ranked first, second
    array([651.,  42.])
    >>> all(np.array_equal(a, b) for a, b in zip((z, y), data.topk(2)))
    True
    """
    k = check_int_in(k, "k", 1, data.n_classes, "topk_view", " (the number of classes)")
    return topk_view_kernel(np.ascontiguousarray(data.full_probs()), data.labels, k)
