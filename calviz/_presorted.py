"""A scalar calibration view sorted once, from which every 1-D binned statistic follows without a pass
over the data.

:class:`Presorted` holds the predictions of one scalar target (binary, top-1 or one class against the
rest) sorted once, their 0/1 labels in the same order and double-double prefix sums of the per-point
features every ``block`` positions (:mod:`calviz._kernels.presorted`).  Every 1-D binning of calviz is
monotone in the prediction, so each bin is a contiguous run of the sorted view whose ends are found by
binary search, and its sums — count, Σy, Σz, Σ(y − z), Σ(y − z)², Σz(1 − z), Σ(z(1 − z))² and the third
moments of T-Cal — come from the prefix sums and at most two partial blocks.  A query for m bins costs
O(min(m, n)·(log n + block)), independent of n for a fixed m: the reliability diagram, the plug-in,
debiased, unbiased and Kumar ECE, the MCE, the ACE and the ECE interval of any bin count and scheme
(equal width, equal mass, distinct values) are finalised from a :class:`calviz._sums.BinSums` built that
way, by the same finalisers as the direct estimators; T-Cal's analytic terms at every dyadic scale are one
O(n) scan of the sorted view (no second sort), cached.

The bin sums are double-double, i.e. the sums of the features rounded once, so they equal the direct
estimators' (which add in row order in plain double precision) to their rounding, ~1e−15 relative; the
null variances use s = z(1 − z) (exact for z ≥ ½) as the T-Cal kernels do.

Memory: 8 bytes (sorted prediction) + 1 byte (label) + 2·9·8/``block`` bytes (prefix sums; 2.25 at the
default block of 64) = 11.25 bytes per row, held; the build needs 8 more bytes per row for its sort.
"""

from __future__ import annotations

import numpy as np

from calviz._binning import (
    MAX_EDGE_TABLE,
    check_n_bins,
    equal_mass_edges_from,
    equal_mass_ranks,
    equal_width_edges,
)
from calviz._data import CalibrationData, InputError, as_calibration_data, check_alpha
from calviz._ece import (
    MAX_RELIABILITY_BINS,
    ECEResult,
    ReliabilityData,
    binned_statistic,
    drawn_range,
    ece_from_sums,
    reliability_from_sums,
)
from calviz._intervals import ECEInterval, interval_from_sums
from calviz._kernels import presorted as _kp
from calviz._kernels import tcal as _kt
from calviz._kernels.sorting import count_runs
from calviz._params import INTERVAL_ALPHA
from calviz._small_n import label_log_probability
from calviz._sums import BinSums
from calviz.targets import SCALAR_TARGETS, resolve

__all__ = ["Presorted", "BinTable", "ClasswiseACE", "BootstrapBins", "SCHEMES", "ACE_TABLE_BINS"]

#: the 1-D binning schemes a :class:`Presorted` answers
SCHEMES = ("equal_width", "equal_mass", "distinct")
#: positions between two stored prefix sums
DEFAULT_BLOCK = 64
#: bin counts 1..ACE_TABLE_BINS a :class:`ClasswiseACE` answers (the dashboard's bins slider)
ACE_TABLE_BINS = 100


class Presorted:
    """One scalar calibration view sorted once, answering every 1-D binned statistic exactly.

    Build with :meth:`from_data`; the queries (:meth:`bin_sums`, :meth:`binned_ece`, :meth:`estimate`,
    :meth:`reliability`, :meth:`interval`, :meth:`ace`, :meth:`tcal_terms`) never read all the data
    again, except :meth:`tcal_terms` (one scan, cached per number of scales).

    Attributes
    ----------
    z : ndarray of shape (n,)
        The predictions sorted increasingly (float64, read-only).
    y : ndarray of shape (n,)
        Their 0/1 labels (uint8, read-only), ties of z ordered by y.
    target : str
        "binary", "top1" or "classwise".
    class_index : int
        The class of the ``classwise`` target (0 otherwise).
    n_classes : int
        Classes of the data.
    block : int
        Positions between two stored prefix sums.

    Notes
    -----
    Memory: ``nbytes`` = 9 + 144/``block`` bytes per row (11.25 at the default block of 64).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz._presorted import Presorted
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> view = Presorted.from_data(calviz.as_calibration_data(y, p))
    >>> bool(np.isclose(view.binned_ece(n_bins=10).value, calviz.binned_ece(y, p, n_bins=10).value))
    True
    """

    def __init__(self, z: np.ndarray, y: np.ndarray, *, target: str, class_index: int, n_classes: int,
                 block: int = DEFAULT_BLOCK):
        self.z = z
        self.y = y
        self.target = target
        self.class_index = int(class_index)
        self.n_classes = int(n_classes)
        self.block = int(block)
        self._hi, self._lo = _kp.block_prefix(z, y, self.block)
        for arr in (self.z, self.y, self._hi, self._lo):
            arr.flags.writeable = False
        self._tcal: dict[int, np.ndarray] = {}
        self._log_label_probability: float | None = None

    @classmethod
    def from_data(cls, data, target: str = "auto", *, class_index: int = 0,
                  block: int = DEFAULT_BLOCK) -> Presorted:
        """Sort the scalar view ``target`` of validated data (a :class:`CalibrationData`, or anything
        :func:`calviz.as_calibration_data` accepts) once and build its prefix sums: O(n), one radix sort.

        ``target``: "auto" (binary data: P(y = 1); multiclass: the top-1 confidence), "binary", "top1" or
        "classwise" (P(y = ``class_index``) against the rest).  The top-1 view is read from the
        probability matrix in the same pass that builds the sort keys (not materialised)."""
        if not isinstance(data, CalibrationData):
            data = as_calibration_data(data)
        if isinstance(block, (bool, np.bool_)) or not isinstance(block, (int, np.integer)) or block < 1:
            raise InputError(f"block must be a positive integer; got {block!r}")
        resolved = resolve(data, target, 1, class_index, allowed=("auto", *SCALAR_TARGETS),
                           caller="Presorted.from_data")
        name = resolved.name
        if name == "binary":
            z, y = _kp.sort_scalar(data.probs, data.labels, -1)
        elif name == "top1":
            if data.is_binary or data.confidence_form:
                conf, correct = data.top1()
                z, y = _kp.sort_scalar(conf, correct, -1)
            else:
                z, y = _kp.sort_top1(data.probs, data.labels)
        else:  # classwise: one class against the rest, the indicator read from the labels
            c = resolved.class_index
            z, y = _kp.sort_scalar(np.ascontiguousarray(data._class_probs(c)), data.labels, c)
        return cls(z, y, target=name, class_index=resolved.class_index, n_classes=data.n_classes,
                   block=int(block))

    # -- size ----------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return int(self.z.shape[0])

    @property
    def nbytes(self) -> int:
        """Bytes held: sorted predictions, labels and prefix sums."""
        return int(self.z.nbytes + self.y.nbytes + self._hi.nbytes + self._lo.nbytes)

    def __repr__(self) -> str:
        return (f"Presorted(n={self.n}, target={self.target!r}, {self.nbytes / max(self.n, 1):.2f} bytes "
                f"per row)")

    # -- bins ----------------------------------------------------------------------------------
    def runs(self, scheme: str = "equal_width", n_bins: int = 15):
        """(keys, starts, edges, n_bins_total) of the non-empty bins: bin keys[j] (its index among the
        bins of the scheme) holds the sorted positions starts[j]..starts[j+1]−1.  ``edges``: the bin edges
        (None for more than ``MAX_EDGE_TABLE`` equal-width bins; the distinct values for "distinct")."""
        m = check_n_bins(n_bins)
        if scheme == "equal_width":
            keys, starts = _kp.equal_width_runs(self.z, m)
            return keys, starts, (equal_width_edges(m) if m <= MAX_EDGE_TABLE else None), m
        if scheme == "equal_mass":
            edges = equal_mass_edges_from(self.z[equal_mass_ranks(self.n, m)])
            keys, starts = _kp.edge_runs(self.z, np.ascontiguousarray(edges[1:-1]))
            return keys, starts, edges, int(edges.shape[0] - 1)
        if scheme == "distinct":
            keys, starts = _kp.distinct_runs(self.z)
            return keys, starts, self.z[starts[:-1]].copy(), int(keys.shape[0])
        raise InputError(f"unknown binning scheme {scheme!r} for a scalar view; use one of {SCHEMES}")

    def bin_sums(self, scheme: str = "equal_width", n_bins: int = 15, *,
                 compensated: bool = False) -> BinSums:
        """The :class:`~calviz._sums.BinSums` of the non-empty bins (as :func:`calviz._sums.bin_sums` of the
        same binning gives from the unsorted data); ``compensated`` also keeps the double-double T-Cal
        features (:meth:`BinSums.terms`)."""
        keys, starts, _, _ = self.runs(scheme, n_bins)
        return self._sums(keys, starts, compensated)

    def _sums(self, keys, starts, compensated: bool = False) -> BinSums:
        count, hi, lo = _kp.run_sums(self.z, self.y, self._hi, self._lo, self.block, starts)
        return _bin_sums(keys, count, hi, lo if compensated else None, self.n)

    # -- statistics ------------------------------------------------------------------------------
    def estimate(self, statistic: str, n_bins: int = 15, scheme: str = "equal_width") -> ECEResult:
        """The :class:`~calviz.ECEResult` of a binned estimator by its label ("plugin_l1", "plugin_l2",
        "max", "debiased_l2_sq", "unbiased_l2_sq", "kumar_l2_sq"), as :func:`calviz.binned_ece`,
        :func:`calviz.debiased_ece`, :func:`calviz.unbiased_ece`, :func:`calviz.kumar_debiased_ece` and
        :func:`calviz.mce` give for this target."""
        keys, starts, _, total = self.runs(scheme, n_bins)
        m = total if scheme == "distinct" else check_n_bins(n_bins)
        return ece_from_sums(self._sums(keys, starts), statistic, n_bins=m, n_bins_total=total,
                             scheme=scheme, target=self.target, n_classes=self.n_classes)

    def binned_ece(self, n_bins: int = 15, p=1, scheme: str = "equal_width") -> ECEResult:
        """:func:`calviz.binned_ece` of this view (p = 1, 2 or "max")."""
        return self.estimate(binned_statistic(p), n_bins, scheme)

    def mce(self, n_bins: int = 15, scheme: str = "equal_width") -> ECEResult:
        """:func:`calviz.mce` of this view."""
        return self.estimate("max", n_bins, scheme)

    def ace(self, n_bins: int = 15) -> ECEResult:
        """:func:`calviz.ace` of this view (its ``target="binary"`` / ``"top1"``; the classwise ACE is the
        mean of this over the K one-vs-rest views)."""
        m = check_n_bins(n_bins)
        keys, starts, edges, total = self.runs("equal_mass", m)
        sums = self._sums(keys, starts)
        value = float(np.abs((sums.y_sum[:, 0] - sums.z_sum[:, 0]) / sums.count).mean())
        return ECEResult(value, "ace", False, self.n, m, total, sums.n_nonempty, "equal_mass", self.target,
                         self.n_classes)

    def reliability(self, scheme: str = "equal_width", n_bins: int = 15, *, alpha: float = INTERVAL_ALPHA,
                    interval: str = "wilson") -> ReliabilityData:
        """:func:`calviz.reliability` of this view."""
        m = check_n_bins(n_bins)
        if m > MAX_RELIABILITY_BINS:
            raise InputError(f"n_bins = {m} is too many for reliability data "
                             f"(at most {MAX_RELIABILITY_BINS:,})")
        if scheme not in ("equal_width", "equal_mass"):
            raise InputError(f"reliability data use scheme 'equal_width' or 'equal_mass'; got {scheme!r}")
        alpha = check_alpha(alpha)
        keys, starts, edges, _ = self.runs(scheme, m)
        return reliability_from_sums(self._sums(keys, starts), edges, alpha=alpha, interval=interval,
                                     n_bins=m, scheme=scheme, target=self.target, n_classes=self.n_classes,
                                     value_range=drawn_range(self.z, scheme, is_sorted=True))

    def bin_table(self, max_bins: int = ACE_TABLE_BINS) -> BinTable:
        """The :class:`BinTable` of this view: its reliability diagrams and ECE intervals of every bin count
        1..``max_bins`` in both schemes, kept without the sorted view."""
        return BinTable.from_presorted(self, max_bins)

    def interval(self, n_bins: int = 15, alpha: float = INTERVAL_ALPHA) -> ECEInterval:
        """:func:`calviz.ece_interval` (asymptotic) of this view: the statistic T, its standard errors and
        the interval, from equal-width bins."""
        m = check_n_bins(n_bins)
        return interval_from_sums(self.bin_sums("equal_width", m), alpha, n_bins=m, target=self.target,
                                  n_classes=self.n_classes)

    def tcal_terms(self, max_level: int) -> np.ndarray:
        """(5, max_level): per dyadic scale 2^b, b = 1..max_level, T-Cal's T^d, Var₀(T^d | Z), Σ tr A_b,
        Σ tr A_b² and the third cumulant — :func:`calviz._kernels.tcal.analytic_terms` on this sorted
        view (the analytic test's order: same numbers), one O(n) scan, cached per ``max_level``."""
        levels = int(max_level)
        if not 1 <= levels <= 62:
            raise InputError(f"max_level must be in 1..62; got {max_level!r}")
        if levels not in self._tcal:
            split = _kt.dyadic_split_levels(self.z, levels)
            self._tcal[levels] = _kt.analytic_terms(split, levels, self.z.reshape(-1, 1), self.y, _kt.SCALAR)
        return self._tcal[levels].copy()

    def tcal(self, alpha: float = 0.05):
        """:func:`calviz.adaptive_tcal` with ``resampling="analytic"`` of this view (the same result: the
        discrete predictors' binomial test, the analytic terms of :meth:`tcal_terms`, the floor at the
        probability of the observed labels), from the sorted view: after the first call (one scan, cached)
        a change of ``alpha`` only re-decides."""
        from calviz._results import with_classes
        from calviz._tcal import TCalResult, _floor_at_labels
        from calviz._tcal_decision import RESAMPLING_RISK, adaptive

        alpha = check_alpha(alpha)
        sample = _SortedSample(self)
        result = TCalResult(*adaptive(sample, alpha=alpha, resampling="analytic", n_resamples=None,
                                      max_resamples=None, risk=RESAMPLING_RISK, combine="bonferroni",
                                      discrete=None, seed=None, time_budget=None))
        return with_classes(_floor_at_labels(result, sample.label_log_probability()), self.n_classes)

    def __getstate__(self):
        return dict(self.__dict__)

    def __setstate__(self, state):
        self.__dict__.update(state)
        for arr in (self.z, self.y, self._hi, self._lo):
            arr.flags.writeable = False


def _bin_sums(keys, count, hi, lo, n_total: int) -> BinSums:
    """:class:`BinSums` from the double-double run sums of :func:`calviz._kernels.presorted.run_sums`
    (``lo`` given: the compensated T-Cal features kept too)."""
    B = count.shape[0]
    q = hi[:, 1].copy()
    return BinSums(
        keys=keys, count=count, resid_sum=hi[:, 0:1].copy(), resid_sq_sum=q,
        resid_outer_sum=q.reshape(B, 1, 1).copy(), z_sum=hi[:, _kp.Z_SUM:_kp.Z_SUM + 1].copy(),
        y_sum=hi[:, _kp.Y_SUM:_kp.Y_SUM + 1].copy(), null_cov_sum=hi[:, 2].reshape(B, 1, 1).copy(),
        null_cov_sq_trace=hi[:, 3].copy(), n_total=int(n_total),
        hi=hi[:, :7].copy() if lo is not None else None, lo=lo[:, :7].copy() if lo is not None else None,
    )


class BinTable:
    """The bin sums of one scalar view for every bin count 1..``max_bins`` in both 1-D schemes (equal width,
    equal mass), taken once from its :class:`Presorted` view: every reliability diagram and ECE interval of
    those bin counts, at any α, without the sorted view (a few hundred kB instead of 11.25 bytes per row).

    Its answers are the sorted view's own (the same run sums, finalised by the same functions), hence equal
    to the direct estimators to their rounding.  Memory: 80 bytes per bin, Σ_m m = 5,050 bins per scheme
    at ``max_bins`` = 100 (0.8 MB per view).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz._presorted import Presorted
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> table = Presorted.from_data(calviz.as_calibration_data(y, p)).bin_table(max_bins=20)
    >>> direct = calviz.reliability(y, p, n_bins=12, scheme="equal_mass")
    >>> bool(np.allclose(table.reliability("equal_mass", 12).frequency, direct.frequency, rtol=1e-12))
    True
    """

    def __init__(self, *, target: str, class_index: int, n_classes: int, n: int, max_bins: int,
                 value_range: tuple[float, float] | None, runs: dict):
        self.target, self.class_index, self.n_classes = target, int(class_index), int(n_classes)
        self.n, self.max_bins, self.value_range = int(n), int(max_bins), value_range
        self._runs = runs  # scheme → (offsets, keys, count, hi, totals, edge offsets, edges)

    @classmethod
    def from_presorted(cls, view: Presorted, max_bins: int = ACE_TABLE_BINS) -> BinTable:
        top = check_n_bins(max_bins)
        runs = {}
        for scheme in ("equal_width", "equal_mass"):
            offsets, edge_offsets, keys, count, hi, totals, edges = [0], [0], [], [], [], [], []
            for m in range(1, top + 1):
                k, starts, e, total = view.runs(scheme, m)
                c, h, _ = _kp.run_sums(view.z, view.y, view._hi, view._lo, view.block, starts)
                keys.append(np.asarray(k, dtype=np.int64))
                count.append(c)
                hi.append(h)
                totals.append(total)
                offsets.append(offsets[-1] + c.shape[0])
                if scheme == "equal_mass":
                    edges.append(np.asarray(e, dtype=np.float64))
                    edge_offsets.append(edge_offsets[-1] + edges[-1].shape[0])
            runs[scheme] = (np.asarray(offsets, dtype=np.int64), np.concatenate(keys), np.concatenate(count),
                            np.concatenate(hi), np.asarray(totals, dtype=np.int64),
                            np.asarray(edge_offsets, dtype=np.int64),
                            np.concatenate(edges) if edges else np.empty(0))
        value_range = (float(view.z[0]), float(view.z[-1])) if view.n else None
        return cls(target=view.target, class_index=view.class_index, n_classes=view.n_classes, n=view.n,
                   max_bins=top, value_range=value_range, runs=runs)

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for arrays in self._runs.values() for a in arrays))

    def __repr__(self) -> str:
        return (f"BinTable(n={self.n}, target={self.target!r}, class_index={self.class_index}, "
                f"bins 1..{self.max_bins})")

    def has(self, n_bins) -> bool:
        """Whether ``n_bins`` is one of the table's bin counts."""
        return 1 <= int(n_bins) <= self.max_bins

    def _bins(self, scheme: str, m: int):
        offsets, keys, count, hi, totals, edge_offsets, edges = self._runs[scheme]
        a, b = offsets[m - 1], offsets[m]
        sums = _bin_sums(keys[a:b].copy(), count[a:b].copy(), hi[a:b], None, self.n)
        if scheme == "equal_mass":
            edge = edges[edge_offsets[m - 1]:edge_offsets[m]].copy()
        else:
            edge = equal_width_edges(m) if m <= MAX_EDGE_TABLE else None
        return sums, edge, int(totals[m - 1])

    def _bin_count(self, n_bins) -> int:
        m = check_n_bins(n_bins)
        if m > self.max_bins:
            raise InputError(f"n_bins = {m} is not in this table (1..{self.max_bins})")
        return m

    def reliability(self, scheme: str = "equal_width", n_bins: int = 15, *, alpha: float = INTERVAL_ALPHA,
                    interval: str = "wilson") -> ReliabilityData:
        """:meth:`Presorted.reliability` (equal to it) for a bin count of the table."""
        m = self._bin_count(n_bins)
        if scheme not in ("equal_width", "equal_mass"):
            raise InputError(f"reliability data use scheme 'equal_width' or 'equal_mass'; got {scheme!r}")
        alpha = check_alpha(alpha)
        sums, edges, _ = self._bins(scheme, m)
        return reliability_from_sums(sums, edges, alpha=alpha, interval=interval, n_bins=m, scheme=scheme,
                                     target=self.target, n_classes=self.n_classes,
                                     value_range=self.value_range if scheme == "equal_mass" else None)

    def interval(self, n_bins: int = 15, alpha: float = INTERVAL_ALPHA) -> ECEInterval:
        """:meth:`Presorted.interval` (equal to it) for a bin count of the table."""
        m = self._bin_count(n_bins)
        sums, _, _ = self._bins("equal_width", m)
        return interval_from_sums(sums, alpha, n_bins=m, target=self.target, n_classes=self.n_classes)


class _SortedSample:
    """The sample protocol of :func:`calviz._tcal_decision.adaptive` on a :class:`Presorted` view (the
    analytic branch only): its sorted predictions and labels, its cached analytic terms."""

    def __init__(self, view: Presorted):
        self.view = view
        self.n, self.K, self.target, self.full = view.n, 2, view.target, False
        self.z = view.z

    def distinct(self, limit):
        z = self.z
        if count_runs(z, limit) > limit:
            return None
        starts = np.flatnonzero(np.concatenate(([True], z[1:] != z[:-1])))
        if starts.shape[0] > limit:
            return None
        positives = np.add.reduceat(self.view.y, starts, dtype=np.int64).astype(np.float64)
        return z[starts], np.diff(np.append(starts, z.shape[0])), positives

    def analytic_terms(self, levels):
        return self.view.tcal_terms(levels), ""

    def label_log_probability(self) -> float:
        view = self.view
        if view._log_label_probability is None:
            view._log_label_probability = label_log_probability(view.z, view.y)
        return view._log_label_probability


class ClasswiseACE:
    """The classwise ACE of every bin count 1..``max_bins`` of one dataset, from each class's sorted view.

    :func:`calviz.ace` with ``target="classwise"`` (Nixon et al. 2019, §4.1) is
    ACE = (1/K) Σ_c mean_b |ȳ_{c,b} − z̄_{c,b}| over each class's non-empty equal-mass bins.  Each class's
    equal-mass bins are contiguous runs of its sorted view (:meth:`Presorted.runs`), so once a class is
    sorted its per-bin sums for m bins cost O(m (log n + block)): the table of every m ≤ ``max_bins`` for
    all K classes costs K sorts and K·max_bins²/2 binary searches, after which any bin count is a lookup.
    The classes are sorted one at a time and not kept (K sorted views of 10⁷ rows would hold K · 112 MB);
    what is kept of each is its :class:`BinTable` (:attr:`tables`): the classwise reliability diagram and
    ECE interval of every class and bin count, so a class's first visit is answered without a pass.

    Memory: 3 · 8 · K · ``max_bins`` bytes for the ACE, and ≈ 0.9 MB per class for its :class:`BinTable`
    at ``max_bins`` = 100 (9 MB for K = 10), whatever n.

    Attributes
    ----------
    per_class : ndarray of shape (K, max_bins)
        ``per_class[c, m − 1]``: mean over the non-empty bins of |ȳ − z̄| of class c with m bins.
    nonempty, total : ndarray of shape (K, max_bins)
        The non-empty bins and the bins formed (ties are never split).
    tables : tuple of BinTable
        Per class, the bin sums of every bin count in both schemes.
    n, n_classes : int

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz._presorted import ClasswiseACE
    >>> rng = np.random.default_rng(0)
    >>> probs = rng.dirichlet(np.ones(3), size=2000)
    >>> labels = rng.integers(0, 3, size=2000)
    >>> table = ClasswiseACE.from_data(calviz.as_calibration_data(labels, probs), max_bins=20)
    >>> bool(np.isclose(table.ace(12).value, calviz.ace(labels, probs, n_bins=12).value, rtol=1e-12))
    True
    """

    def __init__(self, per_class: np.ndarray, nonempty: np.ndarray, total: np.ndarray, *, n: int,
                 n_classes: int, tables: tuple[BinTable, ...] = ()):
        self.per_class, self.nonempty, self.total = per_class, nonempty, total
        self.n, self.n_classes = int(n), int(n_classes)
        self.tables = tables

    @classmethod
    def from_data(cls, data, *, max_bins: int = ACE_TABLE_BINS) -> ClasswiseACE:
        """The table of validated, unweighted data (a :class:`CalibrationData`, or anything
        :func:`calviz.as_calibration_data` accepts): one sort per class."""
        if not isinstance(data, CalibrationData):
            data = as_calibration_data(data)
        if data.weights is not None:
            raise InputError("ClasswiseACE is for unweighted data (weighted bins are not runs of one sort)")
        top = check_n_bins(max_bins)
        K = int(data.n_classes)
        per_class = np.empty((K, top))
        nonempty = np.empty((K, top), dtype=np.int64)
        total = np.empty((K, top), dtype=np.int64)
        tables = []
        for c in range(K):
            view = Presorted.from_data(data, "classwise", class_index=c)
            tables.append(view.bin_table(top))
            del view
            for m in range(1, top + 1):
                sums, _, n_total = tables[c]._bins("equal_mass", m)
                per_class[c, m - 1] = float(np.abs((sums.y_sum[:, 0] - sums.z_sum[:, 0]) / sums.count).mean())
                nonempty[c, m - 1] = sums.count.shape[0]
                total[c, m - 1] = n_total
        return cls(per_class, nonempty, total, n=data.n, n_classes=K, tables=tuple(tables))

    @property
    def max_bins(self) -> int:
        return int(self.per_class.shape[1])

    @property
    def nbytes(self) -> int:
        """Bytes of the ACE table (the classes' :class:`BinTable`: :attr:`tables_nbytes`)."""
        return int(self.per_class.nbytes + self.nonempty.nbytes + self.total.nbytes)

    @property
    def tables_nbytes(self) -> int:
        """Bytes of the classes' :class:`BinTable`."""
        return int(sum(table.nbytes for table in self.tables))

    def table(self, class_index: int) -> BinTable | None:
        """Class ``class_index``'s :class:`BinTable` (its classwise reliability diagrams and ECE intervals of
        every bin count of the table), or None (a table built without them)."""
        c = int(class_index)
        return self.tables[c] if 0 <= c < len(self.tables) else None

    def ace(self, n_bins: int) -> ECEResult | None:
        """:func:`calviz.ace` (``target="classwise"``, equal-mass bins) with ``n_bins`` bins; None above
        :attr:`max_bins`."""
        m = check_n_bins(n_bins)
        if m > self.max_bins:
            return None
        j = m - 1
        return ECEResult(float(np.mean([float(v) for v in self.per_class[:, j]])), "ace", False, self.n, m,
                         int(self.total[:, j].sum()), int(self.nonempty[:, j].sum()), "equal_mass",
                         "classwise", self.n_classes)

    def __repr__(self) -> str:
        return f"ClasswiseACE(n={self.n}, n_classes={self.n_classes}, bins 1..{self.max_bins})"


class BootstrapBins:
    """The percentile bootstrap's replicates of Sun et al.'s T for every equal-width bin count 1..``max_bins``
    of one scalar view, drawn once.

    :func:`calviz.ece_interval` with ``method="bootstrap"`` resamples the (z, y) pairs with a seeded
    generator (Efron 1979); the rows drawn depend on the seed and n only, not on the bins, so one set of
    draws serves every bin count: each draw is added to its *atom* (the rows that share a bin under every
    bin count 1..``max_bins``: at most ~3·max_bins² of them) and each bin count sums its atoms
    (:func:`calviz._kernels.presorted.bootstrap_unbiased_table`).  The replicates equal the direct
    kernel's to the rounding of the bin sums (differences of prefix sums over the atoms), ~1e−15 relative
    to the largest.

    Cost: ``n_resamples`` × (n draws + atoms + Σ bins) additions, about one direct bootstrap's;
    memory 8 · ``max_bins`` · ``n_resamples`` bytes (0.4 MB for 100 bin counts of 500 resamples).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz._presorted import BootstrapBins
    >>> rng = np.random.default_rng(0)
    >>> z = rng.uniform(size=3000)
    >>> y = (rng.uniform(size=3000) < z ** 1.3).astype(np.int64)
    >>> table = BootstrapBins(z, y, n_resamples=200, seed=3, max_bins=20)
    >>> direct = calviz.ece_interval(y, z, n_bins=12, method="bootstrap", n_resamples=200, seed=3)
    >>> bool(np.allclose(table.replicates(12), direct._draws.statistics, rtol=1e-12, atol=1e-15))
    True
    """

    def __init__(self, z: np.ndarray, y: np.ndarray, *, n_resamples: int, seed,
                 max_bins: int = ACE_TABLE_BINS):
        from calviz._kernels.presorted import bootstrap_unbiased_table
        from calviz._params import kernel_seed

        z = np.ascontiguousarray(z, dtype=np.float64).reshape(-1)
        top = check_n_bins(max_bins)
        order = np.argsort(z, kind="stable")
        ordered = np.ascontiguousarray(z[order])
        # each bin count's bins are runs of the sorted predictions; the atoms are the runs between any two
        # consecutive bin starts of any bin count
        runs = [_kp.equal_width_runs(ordered, m)[1] for m in range(1, top + 1)]
        bounds = np.unique(np.concatenate(runs))
        atom = np.empty(z.shape[0], dtype=np.int64)
        atom[order] = np.searchsorted(bounds, np.arange(z.shape[0]), side="right") - 1
        starts = [np.searchsorted(bounds, r) for r in runs]
        offsets = np.concatenate(([0], np.cumsum([r.shape[0] for r in starts])))
        v = np.ascontiguousarray(np.asarray(y, dtype=np.float64).reshape(-1) - z)
        self.n_atoms = int(bounds.shape[0] - 1)
        self.table = bootstrap_unbiased_table(atom, self.n_atoms, np.concatenate(starts).astype(np.int64),
                                              offsets.astype(np.int64), v, int(n_resamples),
                                              kernel_seed(seed, high=2**31 - 1))
        self.table.flags.writeable = False

    @property
    def max_bins(self) -> int:
        return int(self.table.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.table.nbytes)

    def replicates(self, n_bins: int) -> np.ndarray | None:
        """The replicates of T with ``n_bins`` equal-width bins (None above :attr:`max_bins`)."""
        m = check_n_bins(n_bins)
        return None if m > self.max_bins else self.table[m - 1]
