"""The smooth-curve summaries of Austin and Steyerberg (2019): ICI, E50, E90 and Emax."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calviz._ece import prepare_view
from calviz._kernels.smooth import interp
from calviz._params import validate_params
from calviz._results import ResultMixin
from calviz._smooth import _SMOOTH, Kernel, smooth_reliability
from calviz.targets import SCALAR_TARGETS

__all__ = ["ICIResult", "ici"]

#: grid of the smooth curve, interpolated linearly at the predictions (spacing 2.5·10⁻⁴: the
#: interpolation error is below 10⁻⁶ for the bandwidths calviz uses)
ICI_GRID_SIZE = 4001


@dataclass(frozen=True, repr=False)
class ICIResult(ResultMixin):
    """ICI, E50, E90 and Emax of the smooth calibration curve, returned by :func:`ici`.

    Attributes
    ----------
    ici : float
        Integrated calibration index: the mean of |f̂(z_i) − z_i| over the predictions (also
        ``statistic``).
    e50, e90 : float
        Median and 90th percentile of |f̂(z_i) − z_i|.
    emax : float
        Its maximum.
    bandwidth : float
        σ of the kernel smoother f̂.
    kernel : str
        The smoothing kernel.
    n, target, n_classes : int, str, int
        The sample.
    """

    ici: float
    e50: float
    e90: float
    emax: float
    bandwidth: float
    kernel: str
    n: int
    target: str
    n_classes: int | None = None

    @property
    def statistic(self) -> float:
        """The ICI."""
        return float(self.ici)


@validate_params(_SMOOTH)
def ici(
    y_true, y_prob=None, *, bandwidth: float | None = None, kernel: Kernel = "reflected_gaussian",
    target: str = "auto", class_index: int = 0,
) -> ICIResult:
    """Integrated calibration index and the E50, E90 and Emax of a smooth calibration curve.

    With f̂ a smooth estimate of the calibration curve E[y | z] and d_i = |f̂(z_i) − z_i| at each of the
    n predictions (Austin and Steyerberg [1]_, Sec. 2): ICI = (1/n) Σ_i d_i, E50 and E90 the median and
    90th percentile of the d_i and Emax their maximum.  Austin and Steyerberg smooth with LOESS; calviz
    uses its own smoother, the Nadaraya–Watson kernel curve of :func:`smooth_reliability`
    (reflected Gaussian kernel, bandwidth the SmoothECE fixed point σ* = smECE(σ*) of Błasiok and
    Nakkiran [2]_ unless given), evaluated on a grid of 4001 points and interpolated at the predictions.
    The two smoothers estimate the same curve and differ by their bias and variance: local-linear LOESS
    with span 0.75 smooths over three quarters of the data and flattens curvature; the kernel at σ*
    follows the curve more closely at the edges, with more noise where predictions are sparse.  On
    smooth miscalibration their ICIs agree to about 0.01; Emax, a maximum at the sparse edges, differs
    most (measured at n = 4000 on p^0.7, p^1.5 and p²: ICI within 0.011, E50 and E90 within 0.03).

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample.
    bandwidth : float, optional
        σ of the smoother; default the SmoothECE fixed point.
    kernel : {"reflected_gaussian", "logit_gaussian"}, default "reflected_gaussian"
        The smoothing kernel (:func:`smooth_reliability`).
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar view.
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    ICIResult
        ``ici``, ``e50``, ``e90``, ``emax`` and the smoother's ``bandwidth``.

    References
    ----------
    .. [1] P. C. Austin and E. W. Steyerberg. The Integrated Calibration Index (ICI) and related metrics
       for quantifying the calibration of logistic regression models. *Statistics in Medicine* 38(21),
       4051–4065, 2019.
    .. [2] J. Błasiok and P. Nakkiran. Smooth ECE: Principled reliability diagrams via kernel smoothing.
       arXiv preprint, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # over-confident
    >>> r = calviz.ici(y, p)
    >>> round(r.ici, 3), round(r.e50, 3), round(r.e90, 3), round(r.emax, 3)
    (0.101, 0.106, 0.146, 0.148)
    """
    data, name, z, _ = prepare_view(y_true, y_prob, target=target, class_index=class_index,
                                    allowed=("auto", *SCALAR_TARGETS), caller="ici")
    # the curve of the same predictions z: the target as asked (a resolved Target carries its class)
    curve = smooth_reliability(data, bandwidth=bandwidth, kernel=kernel, n_resamples=0,
                               grid_size=ICI_GRID_SIZE, target=target, class_index=class_index)
    distance = np.abs(interp(z, curve.grid, curve.curve) - z)
    e50, e90 = np.quantile(distance, [0.5, 0.9])
    return ICIResult(float(distance.mean()), float(e50), float(e90), float(distance.max()),
                     float(curve.bandwidth), curve.kernel, data.n, name, data.n_classes)
