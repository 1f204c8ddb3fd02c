"""The top-label ECE of Gupta and Ramdas (2022)."""

from __future__ import annotations

import numpy as np

from calviz._binning import check_n_bins
from calviz._data import validate_once
from calviz._ece import ECEResult, binned_sums
from calviz._params import POSITIVE_INT, Options, validate_params
from calviz._sums import plugin_ece_l1
from calviz._weights import check_sample_weight, weighted_bin_sums, weighted_bins, weighted_plugin

__all__ = ["top_label_ece"]


@validate_params({"n_bins": POSITIVE_INT, "scheme": Options(("equal_width", "equal_mass"))})
def top_label_ece(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", sample_weight=None,
) -> ECEResult:
    """Top-label ECE: the binned ECE of the top-1 confidence within each predicted class, averaged.

    With ĉ_i = argmax_k p_ik the predicted class (ties to the lowest index), z_i = max_k p_ik its
    confidence and the rows R_c = {i : ĉ_i = c} predicting class c (Gupta and Ramdas [1]_, Sec. 2,
    top-label calibration P(y = ĉ | z, ĉ) = z):

        TL-ECE = (1/|C|) Σ_{c ∈ C} Σ_b (N_{c,b}/|R_c|) |ȳ_{c,b} − z̄_{c,b}|,

    C the classes predicted at least once, b the bins of the confidences of R_c, ȳ the frequency of
    y = c.  This is MAPIE's ``top_label_ece`` with calviz's bins: ``n_bins`` bins [i/m, (i+1)/m) (MAPIE's
    ``num_bins = n_bins + 1`` uniform split gives the same bins closed on the right instead: the two
    differ only for confidences exactly on an edge i/m).  Binary predictions P(y = 1) are the two
    columns (1 − p, p).

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample.
    n_bins : int, default 15
        Bins of the confidences of each predicted class.
    scheme : {"equal_width", "equal_mass"}, default "equal_width"
        Bin edges (equal-mass edges per predicted class).
    sample_weight : array-like of shape (n,), optional
        Non-negative row weights (a row of integer weight k counts as k copies).

    Returns
    -------
    ECEResult
        ``value`` = the top-label ECE (``estimator="top_label"``, ``target="top1"``); ``n_nonempty`` and
        ``n_bins_total`` are summed over the predicted classes.

    References
    ----------
    .. [1] C. Gupta and A. Ramdas. Top-label calibration and multiclass-to-binary reductions. *ICLR*,
       2022.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> probs = rng.dirichlet([1.0, 1.0, 1.0], size=1500)     # 3 classes
    >>> labels = np.array([rng.choice(3, p=row ** 2 / (row ** 2).sum()) for row in probs])
    >>> round(calviz.top_label_ece(labels, probs, n_bins=10).value, 3)
    0.149
    """
    m = check_n_bins(n_bins)
    data = validate_once(y_true, y_prob)
    w = check_sample_weight(sample_weight, data.n, "top_label_ece")
    probs = data.full_probs()
    predicted = probs.argmax(axis=1)
    confidence = np.ascontiguousarray(probs[np.arange(data.n), predicted])
    correct = (data.labels == predicted).astype(np.float64)
    per_class, nonempty, total = [], 0, 0
    for c in np.unique(predicted):
        rows = predicted == c
        z, y = confidence[rows], correct[rows]
        if w is None:
            sums, _, n_total, _ = binned_sums(z, y, n_bins=m, scheme=scheme)
            per_class.append(plugin_ece_l1(sums))
            nonempty += sums.n_nonempty
        else:
            if not w[rows].sum() > 0:
                continue  # a class predicted only by rows of weight 0 is not predicted
            ids, occupied, n_total, _, _ = weighted_bins(z, w[rows], m, scheme)
            weight, z_sum, y_sum = weighted_bin_sums(ids, occupied, z, y, w[rows])
            per_class.append(weighted_plugin(weight, z_sum, y_sum, "plugin_l1"))
            nonempty += int((weight > 0).sum())
        total += n_total
    return ECEResult(float(np.mean(per_class)), "top_label", False, data.n, m, total, nonempty, scheme,
                     "top1", data.n_classes)
