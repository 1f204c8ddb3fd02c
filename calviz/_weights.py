"""Sample weights: validated once at the public boundary, and the weighted per-bin sums.

A weight w_i ≥ 0 multiplies row i in every sum an estimator forms (a row of integer weight k counts as k
copies of the row); the weights must be finite, not all zero, and one per row.  The functions that take
``sample_weight`` are listed in :data:`calviz._params.WEIGHTED_FUNCTIONS`; every other public function
refuses the argument with a message naming them.
"""

from __future__ import annotations

import numpy as np

from calviz._errors import InputError

__all__ = ["check_sample_weight", "with_weights", "weighted_bin_sums", "weighted_equal_mass_edges",
           "weighted_bins", "weighted_plugin"]


def check_sample_weight(sample_weight, n: int, caller: str | None = None, *,
                        name: str = "sample_weight") -> np.ndarray | None:
    """``sample_weight`` as a contiguous float64 array of length n (None stays None); ``name`` is what
    the messages call the weights (a file's weight column).

    Raises
    ------
    InputError
        Weights that are not one real number per row (wrong length, not 1-D, text), negative, NaN or
        infinite, or all zero.
    """
    if sample_weight is None:
        return None
    where = f" of {caller}" if caller else ""
    try:
        arr = np.asarray(sample_weight)
    except Exception as exc:  # ragged nesting, exotic objects
        raise InputError(f"{name}{where} could not be read as a numeric array ({exc})") from None
    if arr.dtype.kind not in "biuf":
        raise InputError(f"{name}{where} must be real numbers; got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise InputError(f"{name}{where} must be 1-D (one weight per row); got shape {arr.shape}")
    if arr.shape[0] != n:
        raise InputError(f"{name}{where} has {arr.shape[0]} entries but the data have {n} rows; "
                         "one weight per row is needed")
    w = np.ascontiguousarray(arr, dtype=np.float64)
    finite = np.isfinite(w)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise InputError(f"{name}{where} must be finite; row {i} has {float(w[i])!r}")
    if n and w.min() < 0:
        i = int(np.flatnonzero(w < 0)[0])
        raise InputError(f"{name}{where} must be non-negative; row {i} has {float(w[i])!r}")
    if not w.sum() > 0:
        raise InputError(f"{name}{where}: the weights are all zero; at least one row must have positive "
                         "weight")
    return w


def with_weights(data, weights, *, name: str = "sample_weight"):
    """``data`` (a :class:`calviz.CalibrationData`, also one with a time column) carrying its sample
    weights, validated once (:func:`check_sample_weight`); the views whose engine functions take weights
    read them (``View.weighted``), the others analyse the rows unweighted."""
    import copy

    from calviz._data import CalibrationData, _readonly_view

    w = _readonly_view(check_sample_weight(weights, data.n, name=name))
    weighted = copy.copy(data)  # (every kind of data: a time column, a matrix kept on disk)
    object.__setattr__(weighted, "weights", w)
    # the cached views of the rows stay valid; the cached subsamples are of unweighted rows
    object.__setattr__(weighted, "_cache", {key: value for key, value in data._cache.items()
                                            if not isinstance(value, CalibrationData)})
    return weighted


def weighted_bin_sums(ids: np.ndarray, n_bins: int, z: np.ndarray, y: np.ndarray, w: np.ndarray):
    """(W_b, Σ_b w z, Σ_b w y) of dense bin ids ``ids`` in [0, n_bins): (B,), (B, k), (B, k) arrays
    (k = 1 for scalar views)."""
    z2 = z.reshape(z.shape[0], -1)
    y2 = np.asarray(y, dtype=np.float64).reshape(z2.shape[0], -1)
    weight = np.bincount(ids, weights=w, minlength=n_bins)
    z_sum = np.stack([np.bincount(ids, weights=w * z2[:, j], minlength=n_bins) for j in range(z2.shape[1])],
                     axis=1)
    y_sum = np.stack([np.bincount(ids, weights=w * y2[:, j], minlength=n_bins) for j in range(y2.shape[1])],
                     axis=1)
    return weight, z_sum, y_sum


def weighted_equal_mass_edges(z: np.ndarray, w: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-mass edges of weighted predictions: the edges :func:`calviz._binning.equal_mass_edges` gives
    the sample in which row i is repeated w_i times (integer weights), and their natural extension to
    real weights.  The interior edge j is the prediction at which the cumulative weight of the sorted
    predictions first exceeds round(j W / m), W = Σ w; ties are never split, duplicates dropped."""
    keep = w > 0
    zs, ws = z[keep], w[keep]
    order = np.argsort(zs, kind="stable")
    zs, cum = zs[order], np.cumsum(ws[order])
    total = cum[-1]
    if n_bins >= total:
        ranks = np.arange(1, int(np.ceil(total)), dtype=np.float64)
    else:
        ranks = np.round(np.arange(1, n_bins) * (total / n_bins))
    ranks = ranks[(ranks > 0) & (ranks < total)]
    interior = np.unique(zs[np.minimum(np.searchsorted(cum, ranks, side="right"), zs.shape[0] - 1)])
    interior = interior[interior > 0.0]
    return np.concatenate([[0.0], interior, [1.0]])


def weighted_bins(z: np.ndarray, w: np.ndarray, n_bins: int, scheme: str):
    """(dense ids, number of non-empty bins, bins of the partition, 1-D edges or None) of weighted
    predictions: equal-mass edges by weight (:func:`weighted_equal_mass_edges`), every other scheme as
    unweighted (:func:`calviz._binning.assign_bins`; its bins do not depend on the rows' frequencies)."""
    from calviz._binning import assign_bins, equal_mass_ids

    if scheme == "equal_mass" and z.ndim == 1:
        edges = weighted_equal_mass_edges(z, w, n_bins)
        keys, ids = np.unique(equal_mass_ids(z, edges), return_inverse=True)
        return ids.astype(np.int64), int(keys.shape[0]), int(edges.shape[0] - 1), edges, keys
    bins = assign_bins(z, n_bins=n_bins, scheme=scheme)
    return bins.ids, bins.n_nonempty, bins.n_bins_total, bins.edges, bins.keys


def weighted_plugin(weight: np.ndarray, z_sum: np.ndarray, y_sum: np.ndarray, statistic: str) -> float:
    """The plug-in ECE of weighted bin sums: ``plugin_l1`` Σ_b ‖Y_b − Z_b‖₁ / W, ``plugin_l2``
    (Σ_b ‖Y_b − Z_b‖² / W_b / W)^½, ``max`` max_b ‖Y_b − Z_b‖_∞ / W_b over the bins of positive weight."""
    occupied = weight > 0
    r, W_b = (y_sum - z_sum)[occupied], weight[occupied]
    total = W_b.sum()
    if statistic == "plugin_l1":
        return float(np.abs(r).sum() / total)
    if statistic == "plugin_l2":
        return float(np.sqrt(((r * r).sum(axis=1) / W_b).sum() / total))
    return float((np.abs(r).max(axis=1) / W_b).max())
