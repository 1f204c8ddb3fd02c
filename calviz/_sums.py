"""The one mergeable sufficient-statistics type of calviz and the finalisers that read it.

A :class:`BinSums` holds, per non-empty bin of a binning, the sums from which every binned estimator
follows (count, Σv, Σ‖v‖², Σvvᵀ, Σz, Σy, ΣΣ(z), Σtr(Σ(z)²), with v = y − z and Σ(z) = diag(z) − zzᵀ)
and, optionally, the *compensated* per-point features of the analytic T-Cal test (double-double sums,
value hi + lo, of the rows of :func:`calviz._kernels.tcal._point_features`).  BinSums of disjoint samples
binned alike :meth:`~BinSums.merge` into the BinSums of their union, and nested equal-width bins
:meth:`~BinSums.coarsen` into the coarser ones — so the same finalisers serve one array in memory and the
partial sums of a cluster (:mod:`calviz.dask`), and the two agree up to floating-point summation order
(the compensated sums agree to the last bit up to rare 1-ulp ties, which the far tail of an analytic
p-value needs).

Finalisers (plain functions of a BinSums): :func:`plugin_ece_l1`, :func:`plugin_ece_sq`,
:func:`plugin_mce`, :func:`debiased_ece_sq` (T^d of Lee, Huang, Hassani and Dobriban, 2023, eq. 6),
:func:`unbiased_ece_sq`, :func:`kumar_ece_sq`, :func:`miscalibrated_variance`,
:func:`null_variance`, :func:`reliability_rows`, :func:`null_moments_from_sums` and
:meth:`BinSums.terms` (T^d and its exact null moments from the compensated sums).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from calviz._binning import Bins, dense_ids, equal_width_bounds
from calviz._data import InputError
from calviz._kernels import tcal as _k
from calviz._kernels.ece import bin_sums_1d_kernel, bin_sums_kernel, equal_width_1d_acc, split_equal_width_acc
from calviz._kernels.fused import COUNT, Y_SUM, Z_SUM, binary_first_order_rows, top1_first_order_rows
from calviz._results import ResultMixin
from calviz._threads import map_chunks


@dataclass(frozen=True, repr=False)
class BinSums(ResultMixin):
    """Mergeable per-bin sufficient statistics of B non-empty bins for k-dimensional predictions.

    Every binned estimator of calviz is a function of these sums, and the sums of disjoint chunks of data
    merge (:meth:`merge`) into the sums of their union, so a distributed computation gives the in-memory
    numbers.  With v = y − z and Σ(z) = diag(z) − z zᵀ (the multinomial covariance of y given z):

    Attributes
    ----------
    keys : ndarray of shape (B,)
        int64 sorted bin keys.
    count : ndarray of shape (B,)
        N_b.
    resid_sum : ndarray of shape (B, k)
        S_b = Σ v.
    resid_sq_sum : ndarray of shape (B,)
        Q_b = Σ ‖v‖².
    resid_outer_sum : ndarray of shape (B, k, k)
        O_b = Σ v vᵀ.
    z_sum, y_sum : ndarray of shape (B, k)
        Σ z and Σ y.
    null_cov_sum : ndarray of shape (B, k, k)
        C_b = Σ_j Σ(z_j).
    null_cov_sq_trace : ndarray of shape (B,)
        D_b = Σ_j tr(Σ(z_j)²).
    n_total : int
        Σ_b N_b.
    hi, lo : ndarray of shape (B, d) or None
        Optional compensated (double-double) sums of the per-point features of the analytic T-Cal test
        (``compensated=True`` in :meth:`of`): scalar targets [Σv, Σv², Σs, Σs², Σs³, Σμ₃, Σμ₃²] with
        s = z(1 − z), μ₃ = s(1 − 2z); full calibration [Σv (K), Σ‖v‖², ΣΣ(z) (K×K), Σ tr Σ(z)²];
        :meth:`terms` reads them.

    Notes
    -----
    Binary / 1-D data has k = 1 (the arrays keep their 2-D / 3-D shapes).
    """

    keys: np.ndarray
    count: np.ndarray
    resid_sum: np.ndarray
    resid_sq_sum: np.ndarray
    resid_outer_sum: np.ndarray
    z_sum: np.ndarray
    y_sum: np.ndarray
    null_cov_sum: np.ndarray
    null_cov_sq_trace: np.ndarray
    n_total: int
    hi: np.ndarray | None = None
    lo: np.ndarray | None = None

    def __post_init__(self):
        B = self.keys.shape[0]
        if self.keys.ndim != 1 or any(getattr(self, f).shape[0] != B for f in _ARRAY_FIELDS):
            raise InputError("BinSums arrays must all have one row per key")
        if B > 1 and not np.all(self.keys[1:] > self.keys[:-1]):
            raise InputError("BinSums keys must be strictly increasing (sorted, unique)")
        if (self.hi is None) != (self.lo is None) or (self.hi is not None and self.hi.shape[0] != B):
            raise InputError("BinSums compensated sums hi, lo must both be given, one row per key")

    @property
    def n_nonempty(self) -> int:
        return int(self.keys.shape[0])

    @property
    def dim(self) -> int:
        """k, the dimension of the predictions."""
        return int(self.resid_sum.shape[1])

    @property
    def compensated(self) -> bool:
        """Whether the compensated T-Cal features (hi, lo) are held."""
        return self.hi is not None

    @classmethod
    def empty(cls, dim: int = 1, *, compensated: bool = False) -> BinSums:
        """The BinSums of no data (neutral element of :meth:`merge`)."""
        k = int(dim)
        d = _k.n_features(_k.SCALAR if k == 1 else _k.VECTOR, k) if compensated else 0
        hi = np.empty((0, d)) if compensated else None
        return cls(
            np.empty(0, np.int64), np.empty(0, np.int64), np.empty((0, k)), np.empty(0),
            np.empty((0, k, k)), np.empty((0, k)), np.empty((0, k)), np.empty((0, k, k)), np.empty(0), 0,
            hi, None if hi is None else hi.copy(),
        )

    @classmethod
    def of(cls, z, y, keys, *, compensated: bool = False) -> BinSums:
        """Per-bin sums of one validated sample: z (n,) or (n, k), y the label indicators of the same
        shape (one-hot for k > 1), ``keys`` (n,) int64 bin keys of any size."""
        z = np.ascontiguousarray(z, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.float64)
        if z.shape[0] == 0:
            return cls.empty(1 if z.ndim == 1 else z.shape[1], compensated=compensated)
        ids, unique = dense_ids(np.ascontiguousarray(keys, dtype=np.int64))
        sums = bin_sums(ids, z, y, keys=unique)
        if not compensated:
            return sums
        if z.ndim == 1:
            kind, z2, labels = _k.SCALAR, z.reshape(-1, 1), y
        else:
            kind, z2, labels = _k.VECTOR, z, np.ascontiguousarray(y.argmax(axis=1), dtype=np.float64)
        _, hi, lo = _k.bin_features(ids, unique.shape[0], z2, labels, kind)
        return cls(**{**sums._arrays(), "keys": sums.keys, "n_total": sums.n_total, "hi": hi, "lo": lo})

    def _arrays(self) -> dict:
        return {name: getattr(self, name) for name in _ARRAY_FIELDS}

    def merge(self, other: BinSums) -> BinSums:
        """BinSums of the union of two disjoint samples binned with the same scheme (keys united,
        sums added; compensated sums in double-double)."""
        if self.dim != other.dim:
            raise InputError(f"cannot merge BinSums of dimension {self.dim} and {other.dim}")
        if self.n_nonempty == 0 or other.n_nonempty == 0:
            keep, add = (other, self) if self.n_nonempty == 0 else (self, other)
            return keep if add.n_total == 0 else _replace_total(keep, keep.n_total + add.n_total)
        if self.compensated != other.compensated:
            raise InputError("cannot merge compensated with plain BinSums")
        keys = np.union1d(self.keys, other.keys).astype(np.int64)
        ia = np.searchsorted(keys, self.keys)
        ib = np.searchsorted(keys, other.keys)
        arrays = {}
        for name in _ARRAY_FIELDS:
            a, b = getattr(self, name), getattr(other, name)
            out = np.zeros((keys.shape[0],) + a.shape[1:], dtype=a.dtype)
            out[ia] += a  # keys are unique within each side, so fancy-index += is safe
            out[ib] += b
            arrays[name] = out
        hi = lo = None
        if self.compensated:
            _, _, hi, lo = _k.merge_features(self.keys, self.count, self.hi, self.lo,
                                             other.keys, other.count, other.hi, other.lo)
        return BinSums(keys=keys, n_total=int(self.n_total + other.n_total), hi=hi, lo=lo, **arrays)

    def coarsen(self, shift: int = 1) -> BinSums:
        """BinSums of the nested coarser equal-width binning: bin i at scale 2^b is the union of bins
        2i, 2i+1 at scale 2^{b+1} (the edges i/2^b are exact in floating point, so the bin rule of
        :func:`calviz.binning.equal_width_ids` nests exactly: key_b = key_{b+shift} >> shift)."""
        if self.n_nonempty == 0 or shift == 0:
            return self
        parent = self.keys >> shift
        starts = np.flatnonzero(np.r_[True, parent[1:] != parent[:-1]])
        arrays = {name: np.add.reduceat(getattr(self, name), starts, axis=0) for name in _ARRAY_FIELDS}
        hi = lo = None
        if self.compensated:
            _, _, hi, lo = _k.group_features(self.keys, self.count, self.hi, self.lo, int(shift))
        return BinSums(keys=parent[starts], n_total=self.n_total, hi=hi, lo=lo, **arrays)

    def partial_terms(self, n: int, start: int = 0, stop: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Double-double totals (hi, lo) of [Σ_b (‖S_b‖² − Q_b)/N_b, Var₀, Σ tr A_b, Σ tr A_b², κ₃] over the
        bins start..stop−1 with N_b ≥ 2, n the global sample size (needs the compensated sums); add
        pieces with :func:`calviz._kernels.tcal.add_terms`, finish with :func:`finish_terms`."""
        if not self.compensated:
            raise InputError("T-Cal terms need compensated BinSums (BinSums.of(..., compensated=True))")
        stop = self.n_nonempty if stop is None else int(stop)
        kind, K = (_k.SCALAR, 2) if self.dim == 1 else (_k.VECTOR, self.dim)
        return _k.features_terms(self.count, self.hi, self.lo, int(n), kind, K, int(start), stop)

    def terms(self, n: int | None = None) -> np.ndarray:
        """[T^d, Var₀(T^d | Z), Σ_b tr A_b, Σ_b tr A_b², κ₃ (0 for full calibration)] of this scale, n the
        sample size (default: these sums' own)."""
        n = self.n_total if n is None else int(n)
        return finish_terms(*self.partial_terms(n), n)


def _replace_total(sums: BinSums, n_total: int) -> BinSums:
    return BinSums(keys=sums.keys, n_total=int(n_total), hi=sums.hi, lo=sums.lo, **sums._arrays())


class MomentSums(BinSums):
    """Deprecated name of compensated :class:`BinSums` (``MomentSums.of(z, y, keys)`` is
    ``BinSums.of(z, y, keys, compensated=True)``)."""

    @classmethod
    def of(cls, z, y, keys, *, compensated: bool = True) -> BinSums:
        y = np.asarray(y)
        if np.asarray(z).ndim == 2 and y.ndim == 1:  # class ids, as the old MomentSums took them
            y = np.eye(np.asarray(z).shape[1])[y.astype(np.int64)]
        return BinSums.of(z, y, keys, compensated=True)

    @classmethod
    def empty(cls, K: int = 2, full: bool = False) -> BinSums:
        return BinSums.empty(int(K) if full else 1, compensated=True)


_ARRAY_FIELDS = ("count", "resid_sum", "resid_sq_sum", "resid_outer_sum", "z_sum", "y_sum",
                 "null_cov_sum", "null_cov_sq_trace")


def finish_terms(hi: np.ndarray, lo: np.ndarray, n: int) -> np.ndarray:
    """[T^d, Var₀, Σ tr A_b, Σ tr A_b², κ₃] from double-double totals (as the in-memory kernel finishes)."""
    return _k.finish_terms(np.asarray(hi, dtype=np.float64).reshape(-1, 1),
                           np.asarray(lo, dtype=np.float64).reshape(-1, 1), int(n))[:, 0]


def dyadic_keys(z: np.ndarray, level: int) -> np.ndarray:
    """Equal-width bin keys at scale 2^level (level ≤ 62): min(⌊2^level z⌋, 2^level − 1).  Multiplying by a
    power of two is exact and the edges i/2^level are exact, so this is
    :func:`calviz.binning.equal_width_ids` without its 2^40 bound (as in the T-Cal kernels)."""
    top = (1 << int(level)) - 1
    return np.minimum((np.asarray(z) * float(2 ** int(level))).astype(np.int64), top)


def _from_1d(keys, count, resid_sum, resid_sq, z_sum, y_sum, null_cov, null_cov_sq) -> BinSums:
    B = keys.shape[0]
    return BinSums(
        keys=keys, count=count, resid_sum=resid_sum.reshape(B, 1), resid_sq_sum=resid_sq,
        resid_outer_sum=resid_sq.reshape(B, 1, 1).copy(), z_sum=z_sum.reshape(B, 1),
        y_sum=y_sum.reshape(B, 1), null_cov_sum=null_cov.reshape(B, 1, 1), null_cov_sq_trace=null_cov_sq,
        n_total=int(count.sum()),
    )


def bin_sums(bins, z, y, *, keys: np.ndarray | None = None) -> BinSums:
    """Per-bin sufficient statistics of (z, y) for a binning, in one jitted O(n k²) pass.

    Parameters
    ----------
    bins : Bins or ndarray of int64
        A :class:`~calviz.binning.Bins`, or per-sample bin keys (any integers; they are compressed to
        dense ids here) — or, with ``keys``, the dense ids themselves.
    z : ndarray of shape (n,) or (n, k)
        Predictions (validated, float64).
    y : ndarray of shape (n,) or (n, k)
        Label indicators (float64).
    keys : ndarray, optional
        The sorted unique keys when ``bins`` holds dense ids.

    Returns
    -------
    BinSums
        The sums of the non-empty bins.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> z = np.array([0.1, 0.2, 0.8, 0.9])
    >>> y = np.array([0.0, 1.0, 1.0, 1.0])
    >>> from calviz._binning import assign_bins
    >>> from calviz._sums import bin_sums
    >>> sums = bin_sums(assign_bins(z, n_bins=2), z, y)
    >>> sums.count.tolist(), sums.resid_sum.ravel().round(2).tolist()
    ([2, 2], [0.7, 0.3])
    """
    if isinstance(bins, Bins):
        ids, keys = bins.ids, bins.keys
    elif keys is None:
        ids, keys = dense_ids(bins)
    else:
        ids = bins
    z = np.ascontiguousarray(z, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    if z.shape != y.shape or z.ndim not in (1, 2) or z.shape[0] != ids.shape[0]:
        raise InputError(f"z {z.shape}, y {y.shape} and bins ({ids.shape[0]},) must have matching shapes")
    B = keys.shape[0]
    if z.ndim == 1:
        return _from_1d(keys, *bin_sums_1d_kernel(ids, B, z, y))
    count, rs, rq, ro, zs, ys, nc, nq = bin_sums_kernel(ids, B, z, y)
    return BinSums(keys, count, rs, rq, ro, zs, ys, nc, nq, int(z.shape[0]))


def equal_width_1d_sums(z: np.ndarray, y: np.ndarray, m: int) -> BinSums:
    """Fused fast path for 1-D equal-width bins: no id array, no sort; keys are the bin indices.  Large
    inputs are summed in row chunks on several threads (:func:`calviz._threads.map_chunks`; the chunks
    depend on n only, so the sums do not depend on the threads)."""
    lower, upper = equal_width_bounds(m)
    parts = map_chunks(lambda start, stop: equal_width_1d_acc(z, y, m, lower, upper, start, stop), z.shape[0])
    acc = parts[0]
    for part in parts[1:]:
        acc += part
    count, rs, rq, zs, ys, nc, nq = split_equal_width_acc(acc)
    keep = np.flatnonzero(count)
    return _from_1d(keep.astype(np.int64), count[keep], rs[keep], rq[keep], zs[keep], ys[keep],
                    nc[keep], nq[keep])


def _first_order_from_parts(parts: list) -> tuple[BinSums, bool]:
    """The BinSums of the chunks' (count, Σz, Σy table, valid) of :mod:`calviz._kernels.fused`, merged
    in chunk order (as :func:`equal_width_1d_sums`: the sums do not depend on the threads), and whether
    every chunk was valid.  Only count, Σz, Σy and Σv = Σy − Σz are filled; the second-order sums (Σv²,
    ΣΣ(z), Σ tr Σ(z)²) are NaN, so such BinSums reach only the finalisers of the plug-in ECEs, the MCE
    and the reliability data (they are never returned to users)."""
    acc, ok = parts[0]
    for more_acc, more_ok in parts[1:]:
        acc += more_acc
        ok &= more_ok
    keep = np.flatnonzero(acc[:, COUNT])
    count = acc[keep, COUNT].astype(np.int64)
    z_sum = acc[keep, Z_SUM]
    y_sum = acc[keep, Y_SUM]
    nan = np.full(keep.shape[0], np.nan)
    return _from_1d(keep.astype(np.int64), count, y_sum - z_sum, nan, z_sum, y_sum, nan, nan), bool(ok)


def equal_width_first_order_sums(z: np.ndarray, y: np.ndarray, m: int) -> BinSums:
    """:func:`equal_width_1d_sums` of a validated scalar view (z in [0, 1], y in {0, 1}, any real dtypes)
    for the estimators that read only count, Σz, Σy and Σv (the plug-in ECEs, the MCE, the reliability
    data): one threaded pass that adds up those alone
    (:func:`calviz._kernels.fused.binary_first_order_rows`), about half the work of the seven sums."""
    lower, upper = equal_width_bounds(m)
    sums, ok = _first_order_from_parts(map_chunks(
        lambda start, stop: binary_first_order_rows(z, y, m, lower, upper, start, stop), z.shape[0]))
    return sums if ok else equal_width_1d_sums(z, y, m)


def checked_first_order_sums(probs: np.ndarray, labels: np.ndarray, m: int, row_sum_limit: float
                             ) -> BinSums | None:
    """First-order equal-width sums (as :func:`equal_width_first_order_sums`) of unvalidated arrays, read
    once and checked in the same threaded pass: binary P(y = 1) (n,) with 0/1 labels, or an (n, K)
    probability matrix with class ids, reduced to its top-1 view on the way
    (:mod:`calviz._kernels.fused`).  None when a value fails a check of
    :func:`calviz.as_calibration_data` (range, row sum beyond ``row_sum_limit``, label): the caller
    then takes the validating path, which words the message."""
    lower, upper = equal_width_bounds(m)
    if probs.ndim == 1:
        def kernel(start, stop):
            return binary_first_order_rows(probs, labels, m, lower, upper, start, stop)
    else:
        def kernel(start, stop):
            return top1_first_order_rows(probs, labels, m, lower, upper, row_sum_limit, start, stop)
    sums, ok = _first_order_from_parts(map_chunks(kernel, labels.shape[0]))
    return sums if ok else None


# ------------------------------------------------------------------------------------------------
# finalisers: plain functions of BinSums
# ------------------------------------------------------------------------------------------------
def _s_sq(s: BinSums) -> np.ndarray:
    return np.einsum("ba,ba->b", s.resid_sum, s.resid_sum)


def _n(s: BinSums) -> int:
    if s.n_total <= 0:
        raise InputError("no samples: the BinSums are empty")
    return s.n_total


def plugin_ece_l1(s: BinSums) -> float:
    """Plug-in ℓ1 ECE Σ_b (N_b/n) ‖S_b/N_b‖₁ = (1/n) Σ_b ‖S_b‖₁ (Guo, Pleiss, Sun and Weinberger, 2017)."""
    return float(np.abs(s.resid_sum).sum() / _n(s))


def plugin_mce(s: BinSums) -> float:
    """Maximum calibration error max_b ‖S_b/N_b‖_∞ over the non-empty bins: the largest
    |mean(y) − mean(z)| of any bin (and coordinate, for vector targets); Naeini, Cooper & Hauskrecht
    (2015)."""
    _n(s)
    return float(np.abs(s.resid_sum / s.count[:, None]).max())


def plugin_ece_sq(s: BinSums) -> float:
    """Plug-in ℓ2² ECE T^b = Σ_b (N_b/n) ‖S_b/N_b‖² (Lee, Huang, Hassani and Dobriban, 2023, Sec. 3)."""
    return float((_s_sq(s) / s.count).sum() / _n(s))


def debiased_ece_sq(s: BinSums) -> float:
    """Debiased plug-in estimator T^d = (1/n) Σ_b (‖S_b‖² − Σ_j‖v_j‖²)/N_b (Lee, Huang, Hassani and
    Dobriban, 2023, eq. 6) = (1/n) Σ_b (1/N_b) Σ_{j≠l∈I_b} ⟨v_j, v_l⟩; mean zero under calibration, can be
    negative."""
    return float(((_s_sq(s) - s.resid_sq_sum) / s.count).sum() / _n(s))


def unbiased_ece_sq(s: BinSums) -> float:
    """Within-bin unbiased estimator T = (1/n) Σ_{b: N_b≥2} (‖S_b‖² − Σ_j‖v_j‖²)/(N_b − 1)
    (Sun, Chaudhari, Barnett and Dobriban, 2024, eq. 4): unbiased for the binned
    ECE²_m = Σ_b P(B_b)‖E[V | Z∈B_b]‖²."""
    big = s.count >= 2
    num = _s_sq(s)[big] - s.resid_sq_sum[big]
    return float((num / (s.count[big] - 1)).sum() / _n(s))


def kumar_ece_sq(s: BinSums) -> float:
    """Kumar et al.'s debiased ℓ2² ECE (Lee, Huang, Hassani and Dobriban, 2023, App. C.1):
    Σ_b (N_b/n) [(ȳ_b − z̄_b)² − ā_b(1−ā_b)/(N_b−1)] with ā_b = ȳ_b the bin accuracy; bins with one point
    contribute 0 (as in Kumar et al.'s code).  Scalar predictions only."""
    if s.dim != 1:
        raise InputError("Kumar's debiased ECE is defined for scalar (binary / top-1) predictions")
    big = s.count >= 2
    nb = s.count[big].astype(np.float64)
    mean_resid = s.resid_sum[big, 0] / nb
    acc = s.y_sum[big, 0] / nb
    per_bin = mean_resid**2 - acc * (1.0 - acc) / (nb - 1.0)
    return float((nb * per_bin).sum() / _n(s))


def miscalibrated_variance(s: BinSums) -> float:
    """σ̂₁² = Σ_b p̂_b (4 ū_bᵀ M_b ū_b − 3‖ū_b‖⁴) − (Σ_b p̂_b ‖ū_b‖²)² (Sun, Chaudhari, Barnett and
    Dobriban, 2024), with p̂_b = N_b/n, ū_b = S_b/N_b, M_b = O_b/N_b.  May be negative in finite samples
    (the standard error uses max(σ̂₁², 0))."""
    n = _n(s)
    nb = s.count.astype(np.float64)
    u = s.resid_sum / nb[:, None]
    quad = np.einsum("ba,bac,bc->b", u, s.resid_outer_sum, u) / nb
    u2 = np.einsum("ba,ba->b", u, u)
    p = nb / n
    return float((p * (4.0 * quad - 3.0 * u2 * u2)).sum() - (p * u2).sum() ** 2)


def null_variance(s: BinSums, statistic: Literal["unbiased", "debiased"] = "unbiased") -> float:
    """Exact conditional null variance given the predictions (Sun, Chaudhari, Barnett and Dobriban, 2024).

    Under calibration E[v | z] = 0 and Cov(v | z) = Σ(z), so for
    T_w = (1/n) Σ_b w_b Σ_{j≠l∈I_b} ⟨v_j, v_l⟩:
    Var₀(T_w | Z) = (2/n²) Σ_b w_b² (tr(C_b²) − D_b),
    using Σ_{j≠l} tr(Σ_jΣ_l) = tr((Σ_jΣ_j)²) − Σ_j tr(Σ_j²).
    ``statistic="unbiased"``: w_b = 1/(N_b − 1) (the T of Sun et al. 2024, bins with N_b = 1 contribute 0);
    ``"debiased"``: w_b = 1/N_b (the T^d of Lee et al. 2023, used by T-Cal's analytic test).
    """
    n = _n(s)
    cross = np.einsum("bac,bca->b", s.null_cov_sum, s.null_cov_sum) - s.null_cov_sq_trace
    nb = s.count.astype(np.float64)
    if statistic == "unbiased":
        big = s.count >= 2
        w2 = np.zeros_like(nb)
        w2[big] = 1.0 / (nb[big] - 1.0) ** 2
    elif statistic == "debiased":
        w2 = 1.0 / nb**2
    else:
        raise InputError(f"statistic must be 'unbiased' or 'debiased'; got {statistic!r}")
    # cross is a sum of nonnegative terms tr(Σ_jΣ_l) (products of PSD matrices); clip round-off
    return float(2.0 * (w2 * np.maximum(cross, 0.0)).sum() / (n * n))


def reliability_rows(s: BinSums) -> dict[str, np.ndarray]:
    """Per non-empty bin: key, count, mean prediction z̄_b (B, k) and observed frequency ȳ_b (B, k)."""
    nb = s.count.astype(np.float64)[:, None]
    return {"key": s.keys, "count": s.count, "mean_confidence": s.z_sum / nb,
            "observed_frequency": s.y_sum / nb}


def null_moments_from_sums(sums: BinSums) -> tuple[float, float, float]:
    """(Var₀(T^d | Z), Σ_b tr A_b, Σ_b tr A_b²) of one scale's :class:`~calviz.ece.BinSums`, bins with
    N_b ≥ 2, A_b = C_b/(n N_b), C_b = Σ_{j∈b} Σ(z_j) — the per-bin formula of the
    in-memory test (:func:`calviz._kernels.tcal._bin_terms`) on the BinSums fields, summed over the bins
    in double-double.  (BinSums carry no third moments: the p-values from them are Satterthwaite's.)"""
    k = sums.dim
    B = sums.n_nonempty
    if k == 1:
        kind, K = _k.SCALAR, 2
        feats = np.zeros((B, 7))
        feats[:, 0] = sums.resid_sum[:, 0]
        feats[:, 2] = sums.null_cov_sum[:, 0, 0]
    else:
        kind, K = _k.VECTOR, k
        feats = np.zeros((B, k + 2 + k * k))
        feats[:, :k] = sums.resid_sum
        feats[:, k + 1:k + 1 + k * k] = sums.null_cov_sum.reshape(B, k * k)
    feats[:, k] = sums.resid_sq_sum  # Q (column 1 for k = 1)
    feats[:, -1 if k > 1 else 3] = sums.null_cov_sq_trace
    hi, lo = _k.features_terms(sums.count, feats, np.zeros_like(feats), int(sums.n_total), kind, K, 0, B)
    terms = _k.finish_terms(hi.reshape(-1, 1), lo.reshape(-1, 1), int(sums.n_total))[:, 0]
    return float(terms[1]), float(terms[2]), float(terms[3])
