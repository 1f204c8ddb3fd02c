"""Thin map/reduce drivers of the binned estimators, the Laplace kCE and the subsample measures.

Every driver validates its options by running the in-memory function on the two-row schema sample of
the data (:meth:`DaskCalibrationData.schema`: same messages, same resolved target and binning), maps one
task per partition to the :class:`calviz.BinSums` of its rows, merges them in a tree and hands the
merged sums to the in-memory finaliser that builds the result."""

from __future__ import annotations

import dataclasses
import importlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from dask.delayed import delayed

from calviz import _ece as ece
from calviz import _intervals as intervals
from calviz._binning import simplex_cell_keys
from calviz._data import InputError, check_alpha
from calviz._kernels.dask_scan import laplace_run_summary
from calviz._results import ResultMixin
from calviz._sums import BinSums, dyadic_keys
from calviz.dask._data import (
    SPLIT_EVERY,
    View,
    as_dask_data,
    check_n,
    compute,
    map_partitions,
    partition_errors,
    partition_view,
    resolve_view,
    tree_reduce,
    validate,
)

distance = importlib.import_module("calviz._distance")


def _partition_sums(part, index, row_offset, view: View, n_bins: int, scheme: str):
    z, y = partition_view(part, index, row_offset, view)
    return ece.binned_sums(z, y, n_bins=n_bins, scheme=scheme, target=view.target)[0]


def _merge(*partials):
    """Tree step: merge BinSums, or tuples of BinSums position by position."""
    if isinstance(partials[0], BinSums):
        out = partials[0]
        for other in partials[1:]:
            out = out.merge(other)
        return out
    return tuple(_merge(*group) for group in zip(*partials, strict=True))


def _refuse_global(scheme: str) -> None:
    if scheme in ("equal_mass", "distinct"):
        raise InputError(
            f"scheme {scheme!r} depends on the whole sample (global quantiles / distinct values) and is not "
            "available on Dask; use 'equal_width' (or 'grid' / 'simplex' for multi-dimensional targets)")


def merged_sums(data, view: View, n_bins: int, scheme: str, split_every: int, client) -> BinSums:
    """The BinSums of all rows: one task per partition, then a tree of :meth:`BinSums.merge`."""
    _refuse_global(scheme)
    parts = map_partitions(data, _partition_sums, view, n_bins, scheme)
    sums, = compute(data, tree_reduce(parts, _merge, split_every), client=client)
    check_n(sums.n_total)
    return sums


def partition_sums(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", target: str = "auto",
    top_k: int = 1, class_index: int = 0, split_every: int = SPLIT_EVERY, client=None, **columns,
) -> tuple[BinSums, int, str, str]:
    """The merged :class:`calviz.BinSums` of distributed data: (sums, total number of bins, scheme,
    resolved target)."""
    data = as_dask_data(y_true, y_prob, **columns)
    _refuse_global(scheme)
    schema = ece.debiased_ece(*data.schema(), n_bins=n_bins, scheme=scheme, target=target, top_k=top_k,
                              class_index=class_index)
    view = View(schema.target, top_k, class_index)
    sums = merged_sums(data, view, schema.n_bins, schema.scheme, split_every, client)
    return sums, schema.n_bins_total, schema.scheme, schema.target


def _ece(statistic: str, y_true, y_prob, options: dict, split_every, client, columns) -> ece.ECEResult:
    data = as_dask_data(y_true, y_prob, **columns)
    _refuse_global(options.get("scheme", "equal_width"))
    schema = getattr(ece, statistic)(*data.schema(), **options)
    view = View(schema.target, options.get("top_k", 1), options.get("class_index", 0))
    sums = merged_sums(data, view, schema.n_bins, schema.scheme, split_every, client)
    return ece.ece_from_sums(sums, schema.estimator, n_bins=schema.n_bins, n_bins_total=schema.n_bins_total,
                             scheme=schema.scheme, target=schema.target, n_classes=schema.n_classes)


def binned_ece(y_true, y_prob=None, *, n_bins: int = 15, p: int = 1, scheme: str = "equal_width",
               target: str = "auto", top_k: int = 1, class_index: int = 0, split_every: int = SPLIT_EVERY,
               client=None, **columns) -> ece.ECEResult:
    """:func:`calviz.binned_ece` on Dask: same arguments and result, plus ``split_every`` (tree fan-in),
    ``client`` (a ``distributed.Client``; the current scheduler otherwise) and ``y_true_column`` /
    ``y_prob_columns`` for DataFrame and Parquet input.  Equal-width bins only (``equal_mass`` and
    ``distinct`` need the whole sample)."""
    return _ece("binned_ece", y_true, y_prob, dict(n_bins=n_bins, p=p, scheme=scheme, target=target,
                top_k=top_k, class_index=class_index), split_every, client, columns)


def debiased_ece(y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", target: str = "auto",
                 top_k: int = 1, class_index: int = 0, split_every: int = SPLIT_EVERY, client=None,
                 **columns) -> ece.ECEResult:
    """:func:`calviz.debiased_ece` (T^d) on Dask (see :func:`binned_ece`)."""
    return _ece("debiased_ece", y_true, y_prob, dict(n_bins=n_bins, scheme=scheme, target=target,
                top_k=top_k, class_index=class_index), split_every, client, columns)


def unbiased_ece(y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", target: str = "auto",
                 top_k: int = 1, class_index: int = 0, split_every: int = SPLIT_EVERY, client=None,
                 **columns) -> ece.ECEResult:
    """:func:`calviz.unbiased_ece` on Dask (see :func:`binned_ece`)."""
    return _ece("unbiased_ece", y_true, y_prob, dict(n_bins=n_bins, scheme=scheme, target=target,
                top_k=top_k, class_index=class_index), split_every, client, columns)


def mce(y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", target: str = "auto",
        top_k: int = 1, class_index: int = 0, split_every: int = SPLIT_EVERY, client=None,
        **columns) -> ece.ECEResult:
    """:func:`calviz.mce` on Dask (see :func:`binned_ece`)."""
    return _ece("mce", y_true, y_prob, dict(n_bins=n_bins, scheme=scheme, target=target, top_k=top_k,
                class_index=class_index), split_every, client, columns)


def ece_interval(y_true, y_prob=None, *, n_bins: int = 15, alpha: float = 0.1, top_k: int = 1,
                 method: str = "asymptotic", n_resamples: int = 1000, seed=None, target: str = "auto",
                 class_index: int = 0, split_every: int = SPLIT_EVERY, client=None,
                 **columns) -> intervals.ECEInterval:
    """:func:`calviz.ece_interval` on Dask: the asymptotic interval from the merged BinSums
    (:func:`calviz.intervals.interval_from_sums`).  ``method="bootstrap"`` resamples pairs over the whole
    sample and is not offered."""
    if method != "asymptotic":
        raise InputError(f"calviz.dask.ece_interval offers method='asymptotic' only; got {method!r}")
    data = as_dask_data(y_true, y_prob, **columns)
    schema = intervals.ece_interval(*data.schema(), n_bins=n_bins, alpha=alpha, top_k=top_k, target=target,
                                    class_index=class_index)
    sums = merged_sums(data, View(schema.target, top_k, class_index), schema.n_bins, "equal_width",
                       split_every, client)
    return intervals.interval_from_sums(sums, schema.alpha, n_bins=schema.n_bins, target=schema.target,
                                        n_classes=schema.n_classes)


def reliability(y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", alpha: float = 0.1,
                interval: str = "wilson", target: str = "auto", class_index: int = 0,
                split_every: int = SPLIT_EVERY, client=None, **columns) -> ece.ReliabilityData:
    """:func:`calviz.reliability` on Dask (equal-width bins: equal-mass edges need global quantiles)."""
    data = as_dask_data(y_true, y_prob, **columns)
    _refuse_global(scheme)
    schema = ece.reliability(*data.schema(), n_bins=n_bins, scheme=scheme, alpha=alpha, interval=interval,
                             target=target, class_index=class_index)
    sums = merged_sums(data, View(schema.target, 1, class_index), schema.n_bins, scheme, split_every, client)
    return ece.reliability_from_sums(sums, schema.edges, alpha=alpha, interval=interval, n_bins=schema.n_bins,
                                     scheme=scheme, target=schema.target, n_classes=schema.n_classes)


def _partition_marginals(part, index, row_offset, target: str, top_k: int, n_bins: int):
    """Per-rank (``topk``) or per-class (``full``; binary data: class 1 only) scalar BinSums of one
    partition on m equal-width bins."""
    data = validate(part, index, row_offset)
    if target == "topk":
        z, y = ece.topk_view(data, top_k)
        pairs = [(np.ascontiguousarray(z[:, r]), y[:, r]) for r in range(top_k)]
    else:
        pairs = [data.classwise(c) for c in ([1] if data.is_binary else range(data.n_classes))]
    return tuple(ece.binned_sums(zc, yc, n_bins=n_bins, scheme="equal_width")[0] for zc, yc in pairs)


def multi_reliability(y_true, y_prob=None, *, target: str = "topk", top_k: int = 2, n_bins: int = 15,
                      alpha: float = 0.1, interval: str = "wilson", split_every: int = SPLIT_EVERY,
                      client=None, **columns):
    """:class:`calviz.analysis.MultiReliability` on Dask: one reliability diagram per rank of the top-k
    vector (``target="topk"``) or per class (``"full"``), all from one pass over the data (equal-width
    bins); panels chosen as in memory (:func:`calviz.analysis.multi_reliability_panels`)."""
    from calviz import analysis

    alpha = check_alpha(alpha)
    if target not in ("topk", "full"):
        raise InputError(f"per-rank / per-class reliability needs target 'topk' or 'full'; got {target!r}")
    data = as_dask_data(y_true, y_prob, **columns)
    k = resolve_view(data, "topk", min(int(top_k), data.n_classes)).top_k if target == "topk" else 0
    schema = ece.reliability(*data.schema(), n_bins=n_bins, alpha=alpha, interval=interval)
    parts = map_partitions(data, _partition_marginals, target, k, schema.n_bins)
    sums, = compute(data, tree_reduce(parts, _merge, split_every), client=client)
    n = int(sums[0].n_total)
    check_n(n)
    positives = np.array([int(round(float(s.y_sum.sum()))) for s in sums], dtype=np.int64)
    kind, index, labels, omitted = analysis.multi_reliability_panels(
        target, n_classes=data.n_classes, is_binary=data.is_binary, top_k=k, support=positives)
    # sums are per rank 1..k, or per class 0..K−1 (binary: class 1 only)
    rows = index - 1 if kind == "rank" else (np.zeros(1, dtype=np.int64) if data.is_binary else index)
    panels = tuple(ece.reliability_from_sums(sums[r], schema.edges, alpha=alpha, interval=interval,
                                             n_bins=schema.n_bins, scheme="equal_width", target="binary")
                   for r in rows)
    return analysis.MultiReliability(target=target, kind=kind, index=index, labels=labels, panels=panels,
                                     positives=positives[rows], n=n, n_classes=data.n_classes,
                                     n_omitted=int(omitted))


# ------------------------------------------------------------------------------------------------
# all dyadic scales at once
# ------------------------------------------------------------------------------------------------
def dyadic_sums(z, y, exponents: tuple[int, ...], *, compensated: bool = False) -> tuple[BinSums, ...]:
    """BinSums of one sample at the dyadic scales 2^b, b in ``exponents`` (ascending): 1-D targets bin once
    at the finest scale and :meth:`~calviz.BinSums.coarsen`; full calibration bins the simplex cells of
    every scale."""
    if z.ndim == 1:
        out = [BinSums.of(z, y, dyadic_keys(z, exponents[-1]), compensated=compensated)]
        for b_fine, b in zip(exponents[::-1], exponents[-2::-1], strict=False):
            out.append(out[-1].coarsen(b_fine - b))
        return tuple(out[::-1])
    return tuple(BinSums.of(z, y, simplex_cell_keys(z, 2**b), compensated=compensated) for b in exponents)


def _partition_dyadic(part, index, row_offset, view: View, exponents, compensated: bool):
    z, y = partition_view(part, index, row_offset, view)
    return dyadic_sums(z, y, exponents, compensated=compensated)


def scale_sums(y_true, y_prob=None, *, exponents: Sequence[int], target: str = "auto", class_index: int = 0,
               third_moments: bool = False, split_every: int = SPLIT_EVERY, client=None,
               **columns) -> tuple[tuple, str]:
    """Merged BinSums at the dyadic scales 2^b for b in ``exponents`` — one pass over the data.  Returns
    (per-scale BinSums, resolved target); ``third_moments=True`` adds the compensated sums of the analytic
    T-Cal test (:meth:`calviz.BinSums.terms`)."""
    data = as_dask_data(y_true, y_prob, **columns)
    exps = tuple(sorted(int(b) for b in exponents))
    if not exps or exps[0] < 0 or exps[-1] > 62:
        raise InputError(f"exponents must be integers in 0..62; got {exponents!r}")
    return dyadic_merged(data, resolve_view(data, target, 1, class_index), exps, bool(third_moments),
                         split_every, client), resolve_view(data, target, 1, class_index).target


def dyadic_merged(data, view: View, exps: tuple[int, ...], compensated: bool, split_every, client):
    parts = map_partitions(data, _partition_dyadic, view, exps, compensated)
    merged, = compute(data, tree_reduce(parts, _merge, split_every), client=client)
    check_n(merged[0].n_total)
    return merged


def multiscale_debiased_ece(y_true, y_prob=None, *, exponents: Sequence[int], target: str = "auto",
                            class_index: int = 0, split_every: int = SPLIT_EVERY, client=None,
                            **columns) -> tuple[ece.ECEResult, ...]:
    """T^d at every dyadic scale m = 2^b, b in ``exponents``, in one pass: each result equals
    ``calviz.debiased_ece(y_true, y_prob, n_bins=2**b)`` (equal-width bins; full: the simplex partition)."""
    data = as_dask_data(y_true, y_prob, **columns)
    sums, target = scale_sums(data, exponents=exponents, target=target, class_index=class_index,
                              split_every=split_every, client=client)
    return tuple(ece.ece_from_sums(s, "debiased_l2_sq", n_bins=2**b, n_bins_total=(2**b) ** max(s.dim - 1, 1),
                                   scheme="equal_width" if s.dim == 1 else "simplex", target=target,
                                   n_classes=data.n_classes)
                 for b, s in zip(sorted(int(b) for b in exponents), sums, strict=True))


# ------------------------------------------------------------------------------------------------
# the Laplace kernel calibration error: global sort + exponential sums carried across partitions
# ------------------------------------------------------------------------------------------------
def _partition_frame(part, index, row_offset, view: View):
    import pandas as pd

    z, y = partition_view(part, index, row_offset, view)
    return pd.DataFrame({"v": z, "y": np.asarray(y, dtype=np.float64)})


def sorted_view(data, view: View):
    """The scalar view as a dask DataFrame with columns v (prediction) and y (label), globally sorted by v
    (``sort_values``: sampled quantiles, a shuffle, then sorted partitions; equal values share a
    partition)."""
    import dask.dataframe as dd
    import pandas as pd

    frames = map_partitions(data, _partition_frame, view)
    meta = pd.DataFrame({"v": np.empty(0), "y": np.empty(0)})
    return dd.from_delayed(frames, meta=meta, verify_meta=False).sort_values("v")


def sorted_arrays(frame) -> tuple[np.ndarray, np.ndarray]:
    """(v, y) of one sorted partition, ties ordered by the label (the order of the in-memory sort)."""
    v = frame["v"].to_numpy(dtype=np.float64)
    y = frame["y"].to_numpy(dtype=np.float64)
    order = np.lexsort((y, v))
    return np.ascontiguousarray(v[order]), np.ascontiguousarray(y[order])


def _run_summary(frame, inv_h: float):
    v, y = sorted_arrays(frame)
    total, tail, head = laplace_run_summary(v, np.ascontiguousarray(y - v), inv_h)
    first, last = (float(v[0]), float(v[-1])) if v.shape[0] else (np.nan, np.nan)
    return int(v.shape[0]), first, last, float(total), float(tail), float(head)


def _combine_runs(summaries, inv_h: float) -> tuple[int, float]:
    """Prefix combination of the per-run summaries: the left sum carried into run p is
    C_p = e^{−(v_first,p − v_last,p−1)/h} (C_{p−1} e^{−(v_last,p−1 − v_first,p−1)/h} + tail_{p−1}), and
    the cross terms between run p and all earlier runs are 2 C_p head_p (every factor ≤ 1)."""
    n, total, comp, carry, prev_last = 0, 0.0, 0.0, 0.0, None
    for count, first, last, run_total, tail, head in summaries:
        if count == 0:
            continue
        n += count
        into = 0.0 if prev_last is None else carry * math.exp(-(first - prev_last) * inv_h)
        for term in (run_total, 2.0 * into * head):  # Neumaier-compensated sum
            t = total + term
            comp += (total - t) + term if abs(total) >= abs(term) else (term - t) + total
            total = t
        carry = into * math.exp(-(last - first) * inv_h) + tail
        prev_last = last
    return n, total + comp


def laplace_kce(y_true, y_prob=None, *, bandwidth: float = 1.0, squared: bool = False, target: str = "auto",
                class_index: int = 0, client=None, **columns):
    """:func:`calviz.laplace_kce` on Dask, exact: kCE² = (1/n²) Σ_{i,j} r_i r_j e^{−|v_i − v_j|/h}, r = y − v
    (Błasiok, Gopalan, Hu and Nakkiran, 2023, Sec. 8).  A global sort of (v, y), then every sorted
    partition returns its own double sum, its left sum at its last point and its residuals discounted to
    its first point (:mod:`calviz._kernels.dask_scan`); the client carries the exponential sums across
    partition boundaries.  O(n log n) work, O(P) data on the client."""
    data = as_dask_data(y_true, y_prob, **columns)
    schema = distance.laplace_kce(*data.schema(), bandwidth=bandwidth, squared=squared, target=target,
                                  class_index=class_index)
    inv_h = 1.0 / schema.bandwidth
    with partition_errors(data, client):
        ordered = sorted_view(data, View(schema.target, 1, class_index))
        runs = [delayed(_run_summary, pure=True)(frame, inv_h) for frame in ordered.to_delayed()]
        summaries = compute(data, *runs, client=client)
    n, total = _combine_runs(summaries, inv_h)
    check_n(n)
    sq = max(total / (float(n) * float(n)), 0.0)
    return dataclasses.replace(schema, value=sq if squared else math.sqrt(sq), n=n)


# ------------------------------------------------------------------------------------------------
# smCE, SintCE, dCE_lower on a uniform subsample, with the sampling error
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class SubsampleEstimate(ResultMixin):
    """A distance-to-calibration measure computed on a uniform subsample of the distributed data.

    ``value``: the measure of the subsample (``result`` holds the in-memory result object computed on it);
    [``low``, ``high``]: where the measure of the *full data* lies with probability ≥ ``confidence`` over
    the draw of the subsample, by the bound named in ``bound`` (see :func:`subsample_measure`);
    ``error_bound`` = max(value − low, high − value); ``sample_size`` rows drawn uniformly *with
    replacement* from the ``n`` rows with ``seed``.  A statement about the sampling error only: the
    full-data value is itself an empirical quantity."""

    measure: str
    value: float
    low: float
    high: float
    error_bound: float
    confidence: float
    sample_size: int
    n: int
    seed: int
    bound: str
    target: str
    result: Any = dataclasses.field(default=None, repr=False)

    def __float__(self) -> float:
        return float(self.value)


def _partition_count(part, index, row_offset, view: View):
    z, y = partition_view(part, index, row_offset, view)
    return int(z.shape[0]), float(np.sum(y))


def _partition_draw(part, index, row_offset, view: View, sizes, seed_seqs):
    z, y = partition_view(part, index, row_offset, view)
    if sizes[index] == 0:
        return np.empty(0), np.empty(0)
    idx = np.random.default_rng(seed_seqs[index]).integers(0, z.shape[0], size=int(sizes[index]))
    return z[idx], y[idx]


def _seed_entropy(seed) -> int:
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63 - 1))
    if seed is None:
        return int(np.random.SeedSequence().entropy % (2**63))
    try:
        return int(np.random.SeedSequence(seed).entropy)
    except (TypeError, ValueError):
        raise InputError(f"seed must be None, an integer or a numpy Generator; got {seed!r}") from None


def uniform_subsample(y_true, y_prob=None, *, size: int, seed=None, target: str = "auto",
                      class_index: int = 0, client=None, **columns):
    """``size`` rows drawn uniformly with replacement from the scalar view of distributed data.

    Pass 1 counts the rows of every partition (and the labels); the draws are allocated to partitions by
    one multinomial draw; each partition draws its rows with its own child of
    ``numpy.random.SeedSequence(seed)``.  Returns (z, y, n, fraction of label 1, seed entropy, whether all
    rows were taken because ``size`` ≥ n)."""
    k = int(size)
    if isinstance(size, bool) or k != size or k < 2:
        raise InputError(f"size must be an integer >= 2; got {size!r}")
    entropy = _seed_entropy(seed)
    data = as_dask_data(y_true, y_prob, **columns)
    view = View(distance.smce(*data.schema(), target=target, class_index=class_index).target, 1, class_index)
    counts = compute(data, *map_partitions(data, _partition_count, view), client=client)
    lengths = np.array([c[0] for c in counts], dtype=np.int64)
    n = int(lengths.sum())
    check_n(n)
    positive = float(sum(c[1] for c in counts)) / n
    if k >= n:  # the "subsample" would be as large as the data: take every row once (exact, no error)
        rows = compute(data, *map_partitions(data, partition_view, view), client=client)
        return (np.concatenate([r[0] for r in rows]), np.concatenate([r[1] for r in rows]), n, positive,
                entropy, True)
    alloc_seq, *part_seqs = np.random.SeedSequence(entropy).spawn(data.npartitions + 1)
    draws = np.random.default_rng(alloc_seq).multinomial(k, lengths / n)
    picked = compute(data, *map_partitions(data, _partition_draw, view, draws, part_seqs), client=client)
    return (np.concatenate([p[0] for p in picked]), np.concatenate([p[1] for p in picked]), n, positive,
            entropy, False)


def smce_sampling_error(k: int, positive_rate: float, delta: float) -> float:
    """Bound, holding with probability ≥ 1 − δ, on |smCE(S) − smCE(P)| for a uniform sample S of k rows of
    P with a fraction π of label 1 (see :func:`subsample_measure`)."""
    pi = positive_rate
    return 2.0 * (1.0 + math.sqrt(pi * (1.0 - pi))) / math.sqrt(k) + math.sqrt(2.0 * math.log(1 / delta) / k)


def subsample_measure(
    measure: str, y_true, y_prob=None, *, size: int = 200_000, delta: float = 0.05, seed=None,
    target: str = "auto", class_index: int = 0, client=None, measure_options: dict | None = None, **columns,
) -> SubsampleEstimate:
    """smCE / SintCE / dCE_lower (``measure`` = "smce", "sintce", "lower_dce") of distributed data on a
    uniform subsample S of k = ``size`` rows (with replacement), with a 1 − δ bound on the sampling error
    |measure(S) − measure(full data)|.  These measures need the whole sorted sample in one place; the
    subsample is computed in memory by :mod:`calviz.distance`.

    Bounds (Błasiok, Gopalan, Hu and Nakkiran, 2023, "A unifying theory of distance from calibration",
    Sec. 9: Thm 9.5 / Cor. 9.9 for smCE, Thm 9.10 with Lemmas 9.11-9.14 for dCE_lower —
    the paper states rates; the constants below follow the same proofs with explicit inequalities).
    P is the full data, π its fraction of label 1, k_y the subsample's rows with label y:

    * smCE.  ŵ(v, y) = w(v)(y − v) is 2-Lipschitz on the line embedding (v, y) ↦ v + 2y (slope ≤ |w'| + |w|
      within a label, |ŵ| ≤ 1 across labels, which are ≥ 1 apart), so |smCE(S) − smCE(P)| ≤ Δ :=
      sup_w |E_S ŵ − E_P ŵ| ≤ 2 W₁(S, P); E W₁ ≤ ∫ √(F(1−F)/k) ≤ (1 + √(π(1−π)))/√k; Δ has bounded
      differences 2/k (McDiarmid).  Error ≤ 2(1 + √(π(1−π)))/√k + √(2 ln(1/δ)/k).
    * dCE_lower.  dCE_lower is 1-Lipschitz in W₁ for couplings that keep the label, and changes by ≤ 2ε
      when the label proportion moves by ε with the conditionals kept (Lemma 9.11); as in Lemma 9.12,
      |dCE(S) − dCE(P)| ≤ Σ_y π_y W₁(μ_y, μ̂_y) + 2|π̂ − π|.  Given k_y, E W₁(μ_y, μ̂_y) ≤ 1/(2√k_y) and
      McDiarmid adds √(ln(3/δ)/(2k_y)); Hoeffding gives |π̂ − π| ≤ √(ln(6/δ)/(2k)) (union bound, δ/3
      each).  The LP's own grid error (``result.error_bound``) is added.
    * SintCE.  For a width ε, |RintCE_S(ε) − RintCE_P(ε)| ≤ E_r Σ_j |S_j − P_j| whose mean is ≤ Σ_j √(p_j/k)
      ≤ √((⌈1/ε⌉ + 1)/k) (Cauchy-Schwarz) with bounded differences 2/k: d(ε) = √((⌈1/ε⌉+1)/k) +
      √(2 ln(L/δ)/k), union over the L widths evaluated.  Then SintCE(P) ≤ min_ε [RintCE_S(ε) + ε + d(ε)]
      and, RintCE(2^−j) being nondecreasing in j, SintCE(P) ≥ min(min_ε [RintCE_S(ε) + ε − d(ε)],
      RintCE_S(ε_L) − d(ε_L)) (ε_L the finest width evaluated).
    """
    d = check_alpha(delta, "delta")
    if measure not in ("smce", "sintce", "lower_dce"):
        raise InputError(f"measure must be 'smce', 'sintce' or 'lower_dce'; got {measure!r}")
    z, y, n, pi, entropy, complete = uniform_subsample(y_true, y_prob, size=size, seed=seed, target=target,
                                                       class_index=class_index, client=client, **columns)
    k = int(z.shape[0])
    labels = y.astype(np.int64)
    options = dict(measure_options or {})
    view_target = distance.smce(*as_dask_data(y_true, y_prob, **columns).schema(), target=target,
                                class_index=class_index).target
    res = getattr(distance, measure)(labels, z, **options)
    value = float(res.value)
    if measure == "smce":
        err = smce_sampling_error(k, pi, d)
        low, high = max(value - err, 0.0), value + err
        bound = ("|smCE(S) − smCE(P)| ≤ 2(1+√(π(1−π)))/√k + √(2 ln(1/δ)/k) (Błasiok et al. 2023, Thm 9.5 / "
                 "Cor 9.9 route: 2-Lipschitz class ⇒ W₁, McDiarmid)")
    elif measure == "lower_dce":
        k1 = int(labels.sum())
        k0 = k - k1
        err = 2.0 * math.sqrt(math.log(6.0 / d) / (2.0 * k))
        for p_y, k_y in ((1.0 - pi, k0), (pi, k1)):
            if p_y > 0:
                err += math.inf if k_y == 0 else p_y * (0.5 / math.sqrt(k_y) + math.sqrt(math.log(3.0 / d)
                                                                                       / (2.0 * k_y)))
        err += float(res.error_bound)
        low, high = max(value - err, 0.0), value + err
        bound = ("|dCE(S) − dCE(P)| ≤ Σ_y π_y W₁(μ_y, μ̂_y) + 2|π̂ − π| (Błasiok et al. 2023, Lemmas "
                 "9.11-9.14) + the LP grid error 2ε")
    else:
        widths = np.asarray(res.widths, dtype=np.float64)
        rint = np.asarray(res.rintce_values, dtype=np.float64)
        L = max(int(widths.shape[0]), 1)
        dev = (np.sqrt((np.ceil(1.0 / widths) + 1.0) / k) + math.sqrt(2.0 * math.log(L / d) / k))
        high = float(np.min(rint + widths + dev))
        low = max(float(min(np.min(rint + widths - dev), rint[-1] - dev[-1])), 0.0)
        err = max(value - low, high - value)
        bound = ("RintCE_S(ε) ± [√((⌈1/ε⌉+1)/k) + √(2 ln(L/δ)/k)] per width (union over L widths), "
                 "monotone in the width (Błasiok et al. 2023, Def. 6.10; §9-style bound)")
    if complete:  # every row was used: the value is the full-data value
        low, high = (float(res.lower), float(res.upper)) if measure == "lower_dce" else (value, value)
        err = float(res.error_bound) if measure == "lower_dce" else 0.0
        bound = "all rows used (no subsampling)" + ("; LP grid error only" if measure == "lower_dce" else "")
    result = dataclasses.replace(res, target=view_target) if hasattr(res, "target") else res
    return SubsampleEstimate(measure, value, float(low), float(high), float(err), 1.0 - d, k, n, entropy,
                             bound, view_target, result)


def _in_memory_type(measure: str, y_true, y_prob, size, seed, target, class_index, client, columns,
                    options: dict):
    """The in-memory result of ``measure`` on a uniform subsample of ``size`` rows (all rows — the exact
    full-data value — when ``size`` ≥ n); its ``n`` is the number of rows used."""
    est = subsample_measure(measure, y_true, y_prob, size=size, seed=seed, target=target,
                            class_index=class_index, client=client, measure_options=options, **columns)
    return est.result


def smce(y_true, y_prob=None, *, target: str = "auto", class_index: int = 0, size: int = 200_000, seed=None,
         client=None, **columns):
    """:func:`calviz.smce` on Dask, the same result type: computed on all rows when there are at most
    ``size`` of them, else on a uniform subsample of ``size`` rows (``n`` says how many were used; the
    sampling error is bounded by :func:`subsample_measure`)."""
    return _in_memory_type("smce", y_true, y_prob, size, seed, target, class_index, client, columns, {})


def sintce(y_true, y_prob=None, *, target: str = "auto", class_index: int = 0, size: int = 200_000, seed=None,
           client=None, **columns):
    """:func:`calviz.sintce` on Dask, the same result type (rows used as in :func:`smce`)."""
    return _in_memory_type("sintce", y_true, y_prob, size, seed, target, class_index, client, columns, {})


def lower_dce(y_true, y_prob=None, *, grid_step: float = 1e-3, target: str = "auto", class_index: int = 0,
              size: int = 200_000, seed=None, client=None, **columns):
    """:func:`calviz.lower_dce` on Dask, the same result type (rows used as in :func:`smce`)."""
    return _in_memory_type("lower_dce", y_true, y_prob, size, seed, target, class_index, client, columns,
                           {"grid_step": grid_step})
