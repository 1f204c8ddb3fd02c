"""Adaptive T-Cal on Dask: the sample interface of :func:`calviz._tcal_decision.adaptive` over
partitions, so the scale plan, the discrete-predictor test and every decision rule (analytic, threshold,
y-only resampling with the sequential rule and its Chernoff shortcut) are the in-memory ones."""

from __future__ import annotations

import dataclasses
import warnings

import dask
import numpy as np
from dask.delayed import delayed

from calviz import _tcal as tcal
from calviz._data import InputError
from calviz._kernels import tcal as _k
from calviz._kernels.dask_scan import y_only_log_mgf_partition, y_only_partition
from calviz._params import BOOLEAN, POSITIVE_INT, validate_params
from calviz._sums import dyadic_keys, finish_terms
from calviz._tcal_decision import adaptive, check_options
from calviz.dask._data import SPLIT_EVERY, check_n, compute, map_reduce, partition_errors
from calviz.dask._estimators import dyadic_sums, sorted_arrays, sorted_view
from calviz.dask._twin import inherited, twin
from calviz.targets import resolve

#: default cap on Σ_b (rows of the merged sums of scale b) for the analytic test: bounds the memory of a
#: partial result (≈ 200 bytes per row for 1-D targets, so 2^21 rows ≈ 400 MB); beyond it the 1-D targets
#: use the global sort + scan, full calibration omits the finer scales
TCAL_MAX_BINS = 2**21


def _partition_profile(z, y, limit: int):
    """(rows, distinct values, their counts and label sums) of a 1-D view; values None when there are
    more than ``limit`` distinct predictions."""
    values, inverse = np.unique(z, return_inverse=True) if z.ndim == 1 else (z, None)
    if inverse is None or values.shape[0] > limit:
        return int(z.shape[0]), None, None, None
    return (int(z.shape[0]), values, np.bincount(inverse, minlength=values.shape[0]).astype(np.int64),
            np.bincount(inverse, weights=y, minlength=values.shape[0]))


def _merge_profiles(*profiles):
    n = sum(p[0] for p in profiles)
    if any(p[1] is None for p in profiles):
        return n, None, None, None
    values = np.unique(np.concatenate([p[1] for p in profiles]))
    counts = np.zeros(values.shape[0], np.int64)
    successes = np.zeros(values.shape[0])
    for _, v, c, s in profiles:
        idx = np.searchsorted(values, v)
        counts[idx] += c
        successes[idx] += s
    return n, values, counts, successes


def _sorted_part(frame, levels: int):
    """(z, y, split levels) of one sorted partition (a contiguous run of the sorted predictions)."""
    z, y = sorted_arrays(frame)
    return z, y, _k.dyadic_split_levels(z, levels)


def _run_edges(sorted_part, levels: int):
    """(rows, first and last prediction, (first_n, last_n)) of one sorted partition: the sizes (levels,) of
    its first and last bin of every scale (last_n = 0 where the scale has a single bin in the partition);
    (0, None, None) when it is empty."""
    z, _, split = sorted_part
    rows = z.shape[0]
    if rows == 0:
        return 0, None, None
    scale = np.arange(1, levels + 1)
    # a bin of scale 2^b ends between rows i and i + 1 iff split[i] ≤ b: the first such i is where the
    # running minimum of split falls to b, the last one where its minimum from the end stops being ≤ b
    first_end = np.searchsorted(-np.minimum.accumulate(split), -scale)
    cut_after = np.searchsorted(np.minimum.accumulate(split[::-1])[::-1], scale, side="right")
    first_n = np.where(first_end < rows - 1, first_end + 1, rows)
    last_n = np.where(cut_after > 0, rows - cut_after, 0)
    return rows, z[[0, -1]], (first_n, last_n)


def _edge_keys(ends, levels: int, lev: int) -> np.ndarray:
    """Keys at scale 2^(lev + 1) of the bins of a partition's first and last prediction ``ends``."""
    return dyadic_keys(ends, levels) >> (levels - 1 - lev)


def _edge_bins(results, levels: int, lev: int, first, last):
    """(key, count, sums) of the first and last bin at scale ``lev`` of every partition, where they hold
    points (a bin cut by partition boundaries appears once per piece, consecutively, with one key);
    ``first(out)`` / ``last(out)`` pick (counts, *sums) from a partition's kernel output."""
    for ends, out in results:
        keys = _edge_keys(ends, levels, lev)
        for key, (count, *sums) in zip(keys.tolist(), (first(out), last(out)), strict=True):
            if count[lev] > 0:
                yield key, count[lev], sums


def _on_sorted(sorted_part, levels: int, resample: tuple | None, n: int):
    """(first and last prediction, kernel output) of one non-empty sorted partition: per scale the
    double-double T-Cal terms of the bins inside it and the compensated sums of its first and last bin (one
    pass of the in-memory scan kernel), or with ``resample`` = (base, start, count, global offset) the
    y-only resampled statistics of :func:`calviz._kernels.dask_scan.y_only_partition`."""
    z, y, split = sorted_part
    if z.shape[0] == 0:
        return None
    if resample is None:
        return z[[0, -1]], _k.scan_terms(split, levels, z.reshape(-1, 1), y, _k.SCALAR, int(n), True)
    return z[[0, -1]], y_only_partition(split, levels, z, *resample)


def _log_mgf_on_sorted(sorted_part, level: int, thetas, first_size: int, last_size: int):
    """(interior, edge) of :func:`calviz._kernels.dask_scan.y_only_log_mgf_partition` for one non-empty
    sorted partition whose first and last bin at scale 2^level hold first_size and last_size points in
    the whole sample."""
    z, _, split = sorted_part
    return y_only_log_mgf_partition(split, level, z, thetas, first_size, last_size)


class DaskSample:
    """The sample of :func:`calviz._tcal_decision.adaptive` on partitions (see its module docstring).

    Pass 1 (at construction) counts the rows and, for 1-D targets, the distinct predictions.  The
    analytic terms come from merged compensated BinSums of all scales while they fit ``max_bins`` rows,
    else (1-D targets) from a global sort and a scan of every sorted partition whose edge bins are merged
    by key; the sorted partitions are kept in the cluster's memory while a resampled test runs.  Y-only
    resample r draws, for the point at global sorted position g, the g-th number of the in-memory stream
    r (:func:`calviz._kernels.dask_scan.y_only_partition`), so the resampled statistics — and the
    p-values and decisions — are those of :func:`calviz.adaptive_tcal` with the same seed.  The Chernoff
    bound that settles clear rejections without resampling (:meth:`y_only_log_mgf_bounds`) is the
    in-memory one, summed over the sorted partitions."""

    def __init__(self, data, view, *, client, split_every, max_bins, sort_fine_scales, discrete):
        from calviz._tcal_decision import DISCRETE_FORCED_MAX, DISCRETE_MAX_VALUES

        self.data, self.view, self.client, self.split_every = data, view, client, split_every
        self.max_bins, self.sort_fine_scales = int(max_bins), bool(sort_fine_scales)
        self.target = view.name
        self.K = data.n_classes if view.name == "full" else 2
        limit = DISCRETE_FORCED_MAX if discrete else DISCRETE_MAX_VALUES
        self.n, *summary = map_reduce(data, _partition_profile, limit, target=view, combine=_merge_profiles,
                                      split_every=split_every, client=client)
        check_n(self.n)
        self._distinct = None if summary[0] is None else tuple(summary)
        self._sorted = None
        self._terms = {}

    def distinct(self, limit):
        if self._distinct is None or self._distinct[0].shape[0] > limit:
            return None
        return self._distinct

    def _sorted_parts(self, levels: int):
        if self._sorted is None or self._sorted[0] != levels:
            with partition_errors(self.data, self.client):
                ordered = sorted_view(self.data, self.view)
                parts = [delayed(_sorted_part, pure=True)(f, levels) for f in ordered.to_delayed()]
                # kept in the cluster's memory while the test runs (several passes: scan, resamples)
                parts = list(dask.persist(*parts) if self.client is None else self.client.persist(parts))
            runs = compute(self.data, *[delayed(_run_edges)(p, levels) for p in parts], client=self.client)
            offsets = np.concatenate(([0], np.cumsum([r[0] for r in runs])[:-1])).astype(np.int64)
            self._sorted = levels, parts, offsets, [r[1:] for r in runs]
        return self._sorted[1:]

    def scan_terms(self, levels: int) -> np.ndarray:
        """(5, levels) T-Cal terms of every scale by the sorted scan (1-D targets): interior bins are final
        in their partition, edge bins are merged by key, all totals double-double (cached by
        :meth:`analytic_terms`)."""
        parts, _, _ = self._sorted_parts(levels)
        results = [r for r in compute(self.data, *[delayed(_on_sorted)(p, levels, None, self.n)
                                                    for p in parts], client=self.client) if r is not None]
        terms = np.zeros((5, levels))
        for lev in range(levels):
            hi, lo = np.zeros(5), np.zeros(5)
            edge = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty((0, 7)), np.empty((0, 7)))
            for _, (out_hi, out_lo, *_) in results:
                hi, lo = _k.add_terms(hi, lo, out_hi[:, lev].copy(), out_lo[:, lev].copy())
            for key, count, (e_hi, e_lo) in _edge_bins(results, levels, lev, lambda o: o[2:5],
                                                        lambda o: o[5:]):
                edge = _k.merge_features(*edge, np.array([key]), np.array([count]), e_hi[lev:lev + 1],
                                         e_lo[lev:lev + 1])
            e_hi, e_lo = _k.features_terms(*edge[1:], self.n, _k.SCALAR, 2, 0, len(edge[0]))
            terms[:, lev] = finish_terms(*_k.add_terms(hi, lo, e_hi, e_lo), self.n)
        return terms

    def analytic_terms(self, levels: int):
        if levels not in self._terms:
            self._terms[levels] = self._analytic_terms(levels)
        return self._terms[levels]

    def _analytic_terms(self, levels: int):
        full = self.target == "full"
        kept, rows = 0, 0
        for b in range(1, levels + 1):
            rows += min(self.n, 2 ** (b * (self.K - 1)))
            if rows > self.max_bins:
                break
            kept = b
        if kept < levels and not full and self.sort_fine_scales:
            return self.scan_terms(levels), ""
        if kept < 1:
            raise InputError(f"max_bins = {self.max_bins} is too small for even the coarsest scale")
        merged = map_reduce(self.data, dyadic_sums, tuple(range(1, kept + 1)), True, target=self.view,
                            split_every=self.split_every, client=self.client)
        note = "" if kept == levels else (
            f"scales 2^{kept + 1}..2^{levels} omitted on Dask (merged bin sums would exceed max_bins = "
            f"{self.max_bins} rows); Bonferroni over the {kept} scales tested")
        return np.array([m.terms(self.n) for m in merged]).T, note

    def observed(self, levels: int) -> np.ndarray:
        terms, note = self.analytic_terms(levels)
        if note:
            raise InputError(f"{note}: use resampling='analytic'")
        return terms[0]

    def null_variance(self, levels: int) -> np.ndarray:
        return self.analytic_terms(levels)[0][1]

    def resample(self, levels: int, source: int, base, start: int, count: int) -> np.ndarray:
        parts, offsets, _ = self._sorted_parts(levels)
        tasks = [delayed(_on_sorted)(p, levels, (base, start, count, int(off)), self.n)
                 for p, off in zip(parts, offsets, strict=True)]
        results = [r for r in compute(self.data, *tasks, client=self.client) if r is not None]
        out = sum(r[1][0] for r in results)
        for lev in range(levels):
            keys, counts, sums = zip(*_edge_bins(results, levels, lev, lambda o: (o[5], o[1], o[2]),
                                                 lambda o: (o[6], o[3], o[4])), strict=True)
            starts = np.flatnonzero(np.r_[True, np.diff(keys) != 0])  # the edge bins in key order
            N = np.add.reduceat(np.array(counts, dtype=np.float64), starts)
            S = np.add.reduceat(np.array([s[:, lev] for s, _ in sums]), starts, axis=0)
            Q = np.add.reduceat(np.array([q[:, lev] for _, q in sums]), starts, axis=0)
            big = N >= 2
            out[:, lev] += ((S[big] ** 2 - Q[big]) / N[big, None]).sum(axis=0)
        return out / self.n

    def y_only_log_mgf_bounds(self, levels: int, level: int, thetas) -> np.ndarray | None:
        """The bounds of :func:`calviz._kernels.tcal.y_only_log_mgf_bounds` at scale 2^level (the Chernoff
        certificate of the sequential rule; None for full calibration), from the sorted partitions: the
        bins inside a partition are bounded there; a bin holding a partition's first or last point may
        continue in its neighbours, so its size in the whole sample (the sum of its pieces' sizes from
        the sort) fixes λ = θ/size, each piece returns its sums (C, D, V) and their totals are bounded
        here."""
        if self.target == "full":
            return None
        parts, _, edges = self._sorted_parts(levels)
        lev = level - 1
        runs = [(part, edge) for part, edge in zip(parts, edges, strict=True) if edge[0] is not None]
        sizes = {}  # by key, the sizes of the bins holding a partition's first or last point
        for key, count, _ in _edge_bins([edge for _, edge in runs], levels, lev, lambda o: (o[0],),
                                        lambda o: (o[1],)):
            sizes[key] = sizes.get(key, 0) + int(count)
        tasks = [delayed(_log_mgf_on_sorted)(part, level, thetas,
                                             *(sizes[key] for key in _edge_keys(ends, levels, lev).tolist()))
                 for part, (ends, _) in runs]
        results = compute(self.data, *tasks, client=self.client)
        total = sum(interior for interior, _ in results)
        pieces = [(ends, (*counts, edge))
                  for (_, (ends, counts)), (_, edge) in zip(runs, results, strict=True)]
        sums = {}
        for key, _, (piece,) in _edge_bins(pieces, levels, lev, lambda o: (o[0], o[2][:, 0]),
                                           lambda o: (o[1], o[2][:, 1])):
            sums[key] = sums.get(key, 0.0) + piece
        for key, piece in sums.items():
            if sizes[key] >= 2:
                total = total + _k.log_mgf_bin_bound(*piece.T, thetas / sizes[key])
        return total


@twin(tcal.adaptive_tcal, example=", seed=0", extra={
    "max_bins": (TCAL_MAX_BINS, POSITIVE_INT, "int, default 2**21\n        Rows of merged bin sums the "
                 "analytic test may hold; beyond them 1-D targets use a global sort and scan, full "
                 "calibration omits the finer scales."),
    "sort_fine_scales": (True, BOOLEAN, "bool, default True\n        Whether 1-D targets may use the sort."),
})
def adaptive_tcal(data, options, *, max_bins, sort_fine_scales, split_every=SPLIT_EVERY, client=None):
    """Y-only resampling with a fixed ``seed`` gives the in-memory p-values: resample r draws, for the point
    at global sorted position g, the g-th number of the in-memory stream r.  Not on Dask (refused):
    consistency resampling, y-only resampling of the full target, ``classwise`` without ``class_index``."""
    o = options
    checked = ("alpha", "resampling", "n_resamples", "max_resamples", "resampling_risk", "combine", "target",
               "discrete")
    alpha, n_resamples, max_resamples, risk = check_options(**{k: o[k] for k in checked})
    if o["resampling"] == "consistency":
        raise InputError("consistency resampling draws predictions from the whole sample and is not "
                         "available on Dask; use resampling='y_only' or 'analytic'")
    if o["target"] == "classwise" and o["class_index"] is None:
        raise InputError("calviz.dask.adaptive_tcal needs class_index for target='classwise'")
    view = resolve(data, o["target"], 1, o["class_index"] or 0, caller="adaptive_tcal")
    if o["resampling"] == "y_only" and view.name == "full":
        tested = "" if o["target"] == "full" else " (T-Cal tests it through the full probability vector)"
        raise InputError("y-only resampling on Dask is available for 1-D targets (binary, top1, classwise); "
                         f"use resampling='analytic' for target={o['target']!r}{tested}")
    sample = DaskSample(data, view, client=client, split_every=split_every, max_bins=max_bins,
                        sort_fine_scales=sort_fine_scales, discrete=o["discrete"])
    fields = adaptive(sample, alpha=alpha, resampling=o["resampling"], n_resamples=n_resamples,
                      max_resamples=max_resamples, risk=risk, combine=o["combine"], discrete=o["discrete"],
                      seed=o["seed"], work_limit=tcal.MAX_RESAMPLE_WORK, time_budget=o["time_budget"])
    result = tcal.TCalResult(*fields)
    return dataclasses.replace(result, n_classes=data.n_classes)


@validate_params(inherited(tcal.adaptive_tcal, "alpha", "n_resamples", "class_index", "seed"))
def resampled_tcal(y_true, y_prob=None, *, alpha: float = 0.05, n_resamples: int | None = None,
                   target: str = "auto", class_index: int | None = None, seed=None,
                   max_cells: int | None = None, split_every: int = SPLIT_EVERY, client=None, **columns):
    """Y-only resampled T-Cal on Dask: :func:`adaptive_tcal` with ``resampling="y_only"``.

    The adaptive test of Lee et al. [1]_ at every dyadic number of bins, with the null distribution of
    each scale's T^d estimated by redrawing the labels from the predictions (y ~ Bernoulli(z)).  With a
    fixed ``seed`` the resampled statistics — and so the p-values and the decision — are those of
    :func:`calviz.adaptive_tcal` on the same data.  1-D targets only (binary, top1, classwise).

    Parameters
    ----------
    y_true, y_prob, alpha, n_resamples, target, class_index, seed, split_every, client, **columns
        As for :func:`adaptive_tcal`.
    max_cells : int, optional
        Deprecated and ignored (every scale is tested); passing it warns.

    Returns
    -------
    calviz.TCalResult
        The decision, the p-value and the statistics of every scale.

    References
    ----------
    .. [1] D. Lee, X. Huang, H. Hassani and E. Dobriban. T-Cal: An optimal test for the calibration of
       predictive models. *Journal of Machine Learning Research* 24, 2023.

    Examples
    --------
    >>> import numpy as np, dask.array as da, calviz, calviz.dask
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> Y, P = da.from_array(y, chunks=700), da.from_array(p, chunks=700)
    >>> result = calviz.dask.resampled_tcal(Y, P, seed=0)
    >>> in_memory = calviz.adaptive_tcal(y, p, resampling="y_only", seed=0)
    >>> result.reject, in_memory.reject, bool(np.isclose(result.pvalue, in_memory.pvalue))
    (True, True, True)
    """
    if max_cells is not None:
        warnings.warn("the max_cells option of calviz.dask.resampled_tcal is deprecated and ignored (every "
                      "scale is tested); it will be removed in the next release", DeprecationWarning,
                      stacklevel=3)  # the caller's line, past validate_params's wrapper
    return adaptive_tcal(y_true, y_prob, alpha=alpha, resampling="y_only", n_resamples=n_resamples,
                         target=target, class_index=class_index, seed=seed, split_every=split_every,
                         client=client, **columns)
