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
from typing import Literal

import numpy as np

from calviz._data import CalibrationData, InputError
from calviz._kernels.binning import topk_view_kernel

__all__ = ["TARGETS", "SCALAR_TARGETS", "TargetName", "Target", "resolve", "topk_view"]

#: Every target name a user may pass (``auto`` is resolved to one of the others).
TARGETS = ("auto", "binary", "top1", "topk", "classwise", "full")
#: The resolved targets whose view is one scalar prediction per sample.
SCALAR_TARGETS = ("binary", "top1", "classwise")

TargetName = Literal["auto", "binary", "top1", "topk", "classwise", "full"]


@dataclass(frozen=True)
class Target:
    """A resolved calibration target of a sample with ``n_classes`` classes.

    ``name`` is never ``auto``; ``top_k`` matters for ``topk`` and ``class_index`` for ``classwise``
    (both are validated against ``n_classes`` by :func:`resolve`)."""

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
    from calviz._params import InvalidParameterError, parameter_message

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
        raise InputError("the binary view needs 1-D y_prob; use top1() or classwise() for multiclass")
    k = int(top_k) if name == "topk" else 1
    return Target(name, K, k, int(class_index) if name == "classwise" else 0)


def topk_view(data: CalibrationData, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Same arrays as ``data.topk(k)`` (sorted top-k probabilities, ties to the lower class index, and
    their label indicators) from a jitted O(n K k) partial sort instead of a full row argsort."""
    k = int(k)
    if not 1 <= k <= data.n_classes:
        raise InputError(f"top_k must be in 1..{data.n_classes}; got {k}")
    return topk_view_kernel(np.ascontiguousarray(data.full_probs()), data.labels, k)
