"""Map/reduce drivers of the binned estimators, the Laplace kCE and the subsample measures: per partition
the mergeable :class:`calviz.BinSums` (or a run summary), merged in a tree and finished by the in-memory
finalisers; the options are checked and the target and bins resolved by the in-memory function."""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from dask.delayed import delayed

from calviz import _distance as distance
from calviz import _ece as ece
from calviz import _intervals as intervals
from calviz._binning import simplex_cell_keys
from calviz._data import InputError
from calviz._kernels.dask_scan import laplace_run_summary
from calviz._params import BOOLEAN, NON_NEGATIVE_INT, SEED, UNIT_OPEN, Interval, Options, validate_params
from calviz._results import HasInterval, ResultMixin, ValueStatistic
from calviz._sums import BinSums, dyadic_keys
from calviz.dask._data import (
    SPLIT_EVERY,
    as_dask_data,
    check_n,
    compute,
    gather,
    map_partitions,
    map_reduce,
    partition_errors,
)
from calviz.dask._twin import CLIENT_RULE, inherited, twin
from calviz.sampling import subsample_interval
from calviz.targets import SCALAR_TARGETS, TARGETS, Target, resolve


def _binned_sums(z, y, n_bins: int, scheme: str, target: str) -> BinSums:
    return ece.binned_sums(z, y, n_bins=n_bins, scheme=scheme, target=target)[0]


def resolved_sums(in_memory, data, options: dict, split_every: int, client):
    """(the merged BinSums of all rows, the schema result): the in-memory function on the two-row schema
    sample checks the options and resolves the bins, :func:`calviz.targets.resolve` the target."""
    schema = in_memory(*data.schema(), **options)
    scheme = getattr(schema, "scheme", "equal_width")
    if scheme in ("equal_mass", "distinct"):
        raise InputError(f"scheme {scheme!r} depends on the whole sample (global quantiles / distinct "
                         "values) and is not available on Dask; use 'equal_width' (or 'grid' / 'simplex' "
                         "for multi-dimensional targets)")
    target = resolve(data, options["target"], options.get("top_k", 1), options.get("class_index", 0))
    sums = map_reduce(data, _binned_sums, schema.n_bins, scheme, target.name, target=target,
                      split_every=split_every, client=client)
    check_n(sums.n_total)
    return sums, schema


def _binned(in_memory, finish, note: str):
    """The twin of an estimator finished from merged BinSums (:func:`resolved_sums`) by
    ``finish(sums, schema, options)``."""

    def driver(data, options, *, split_every=SPLIT_EVERY, client=None):
        if options.get("method", "asymptotic") != "asymptotic":
            raise InputError(f"calviz.dask.{in_memory.__name__} offers method='asymptotic' only (the "
                             f"bootstrap resamples the whole sample); got {options['method']!r}")
        return finish(*resolved_sums(in_memory, data, options, split_every, client), options)

    driver.__doc__ = note
    return twin(in_memory)(driver)


_NOTE = """Equal-width bins (and the simplex partition of the full target) only: equal-mass and distinct-value
bins need the whole sample."""


def _ece_result(sums, schema, options):
    return ece.ece_from_sums(sums, schema.estimator, n_bins=schema.n_bins, n_bins_total=schema.n_bins_total,
                             scheme=schema.scheme, target=schema.target, n_classes=schema.n_classes)


binned_ece = _binned(ece.binned_ece, _ece_result, _NOTE)
debiased_ece = _binned(ece.debiased_ece, _ece_result, _NOTE)
unbiased_ece = _binned(ece.unbiased_ece, _ece_result, _NOTE)
mce = _binned(ece.mce, _ece_result, _NOTE)
reliability = _binned(ece.reliability, lambda sums, schema, options: ece.reliability_from_sums(
    sums, schema.edges, alpha=options["alpha"], interval=options["interval"], n_bins=schema.n_bins,
    scheme=options["scheme"], target=schema.target, n_classes=schema.n_classes), _NOTE)
ece_interval = _binned(intervals.ece_interval, lambda sums, schema, options: intervals.interval_from_sums(
    sums, schema.alpha, n_bins=schema.n_bins, target=schema.target, n_classes=schema.n_classes),
    """The asymptotic interval of Sun, Chaudhari, Barnett and Dobriban (2024) from the merged BinSums
    (:func:`calviz.intervals.interval_from_sums`); ``method="bootstrap"`` resamples the whole sample and is
    refused.""")


@validate_params(inherited(ece.debiased_ece, "n_bins", "scheme", target=Options(TARGETS),
                           top_k=Interval(int, 1, None), class_index=NON_NEGATIVE_INT))
def partition_sums(y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width",
                   target: str = "auto", top_k: int = 1, class_index: int = 0, split_every: int = SPLIT_EVERY,
                   client=None, **columns) -> tuple[BinSums, int, str, str]:
    """The merged per-bin sums (:class:`calviz.dask.BinSums`) of distributed data, in one pass.

    Every binned estimator is a function of these sums — T^d of Lee et al. [1]_ is
    (1/n) Σ_b (‖S_b‖² − Q_b) / N_b — so they are what a caller keeps to finish several estimators, or to
    merge with the sums of more data (:meth:`BinSums.merge`), without reading the data again.  The bins
    are those of :func:`calviz.debiased_ece` with the same options.

    Parameters
    ----------
    y_true, y_prob, n_bins, scheme, target, top_k, class_index
        As for :func:`calviz.debiased_ece` (equal-width bins, or the simplex partition of the full target:
        equal-mass and distinct-value bins need the whole sample and are refused).
    split_every, client, **columns
        As for :func:`binned_ece`.

    Returns
    -------
    (BinSums, int, str, str)
        The sums (non-empty bins only), the total number of bins, the scheme and the resolved target.

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
    >>> sums, n_bins_total, scheme, target = calviz.dask.partition_sums(Y, P, n_bins=10)
    >>> sums.n_total, n_bins_total, scheme, target
    (2000, 10, 'equal_width', 'binary')
    >>> sums.count.tolist() == np.histogram(p, bins=10, range=(0, 1))[0].tolist()
    True
    >>> S, Q, N = sums.resid_sum[:, 0], sums.resid_sq_sum, sums.count        # T^d from the sums
    >>> t_d = np.sum((S ** 2 - Q) / N) / sums.n_total
    >>> bool(np.isclose(t_d, calviz.debiased_ece(y, p, n_bins=10).value, rtol=1e-12))
    True
    """
    options = dict(n_bins=n_bins, scheme=scheme, target=target, top_k=top_k, class_index=class_index)
    data = as_dask_data(y_true, y_prob, **columns)
    resolve(data, target, top_k, class_index, caller="partition_sums")  # (messages naming this function)
    sums, schema = resolved_sums(ece.debiased_ece, data, options, split_every, client)
    return sums, schema.n_bins_total, schema.scheme, schema.target


def _partition_marginals(data, target: str, top_k: int, n_bins: int):
    """Per-rank (``topk``) or per-class (``full``; binary data: class 1) scalar BinSums of one partition."""
    if target == "topk":
        z, y = Target("topk", data.n_classes, top_k).view(data)
        pairs = [(np.ascontiguousarray(z[:, r]), y[:, r]) for r in range(top_k)]
    else:
        pairs = [data.classwise(c) for c in ([1] if data.is_binary else range(data.n_classes))]
    return tuple(ece.binned_sums(zc, yc, n_bins=n_bins)[0] for zc, yc in pairs)


@validate_params(inherited(ece.reliability, "n_bins", "alpha", "interval", target=Options(("topk", "full")),
                           top_k=Interval(int, 1, None)))
def multi_reliability(y_true, y_prob=None, *, target: str = "topk", top_k: int = 2, n_bins: int = 15,
                      alpha: float = 0.1, interval: str = "wilson", split_every: int = SPLIT_EVERY,
                      client=None, **columns):
    """One reliability diagram per rank of the top-k vector or per class, in one pass over the data.

    The distributed :func:`calviz.analysis.compute_multi_reliability`: the panels are chosen by
    :func:`calviz.analysis.multi_reliability_panels` and each is :func:`calviz.reliability` of its scalar
    pair (the rank's confidence and whether the label is that rank, or one-vs-rest for a class) on
    equal-width bins.  A calibrated top-k vector has calibrated rank marginals (Sun et al. [1]_), so a
    panel off the diagonal shows miscalibration at that rank.

    Parameters
    ----------
    y_true, y_prob
        Distributed predictions (see :func:`as_dask_data`).
    target : {"topk", "full"}, default "topk"
        One panel per rank 1..k or per class.
    top_k : int, default 2
        k of the ``topk`` target (clipped to the number of classes).
    n_bins, alpha, interval
        As for :func:`calviz.reliability`.
    split_every, client, **columns
        As for :func:`binned_ece`.

    Returns
    -------
    calviz.analysis.MultiReliability
        The panels, their labels and the number of positives per panel.

    References
    ----------
    .. [1] Y. Sun, P. Chaudhari, I. J. Barnett and E. Dobriban. A confidence interval for the expected
       calibration error. arXiv preprint, 2024.

    Examples
    --------
    >>> import numpy as np, dask.array as da, calviz, calviz.dask
    >>> from calviz.analysis import AnalysisOptions, compute_multi_reliability
    >>> rng = np.random.default_rng(0)
    >>> probs = rng.dirichlet(np.ones(3), size=1500)
    >>> labels = (probs.cumsum(axis=1) < rng.uniform(size=(1500, 1))).sum(axis=1)   # calibrated draws
    >>> L, P = da.from_array(labels, chunks=500), da.from_array(probs, chunks=(500, 3))
    >>> panels = calviz.dask.multi_reliability(L, P, target="topk", top_k=2, n_bins=10)
    >>> panels.kind, panels.labels, panels.positives.tolist()
    ('rank', ('rank 1 (top-1)', 'rank 2'), [923, 408])
    >>> in_memory = compute_multi_reliability(calviz.as_calibration_data(labels, probs),
    ...                                       AnalysisOptions(target="topk", top_k=2, n_bins=10, alpha=0.1))
    >>> all(np.array_equal(a.counts, b.counts)                    # (empty bins: NaN frequencies)
    ...     and np.allclose(a.observed_frequency, b.observed_frequency, equal_nan=True)
    ...     for a, b in zip(panels.panels, in_memory.panels))
    True
    >>> calviz.dask.multi_reliability(L, P, target="full", n_bins=10).labels
    ('class 0', 'class 1', 'class 2')
    """
    from calviz import analysis

    data = as_dask_data(y_true, y_prob, **columns)
    if data.is_binary:  # the sorted top-2 vector of a binary model is its full vector (analysis_target)
        target = "full"
    k = resolve(data, "topk", min(int(top_k), data.n_classes)).top_k if target == "topk" else 0
    schema = ece.reliability(*data.schema(), n_bins=n_bins, alpha=alpha, interval=interval)
    sums = map_reduce(data, _partition_marginals, target, k, schema.n_bins, split_every=split_every,
                      client=client)
    n = int(sums[0].n_total)
    check_n(n)
    positives = np.array([int(round(float(s.y_sum.sum()))) for s in sums], dtype=np.int64)
    kind, index, labels, omitted = analysis.multi_reliability_panels(
        target, n_classes=data.n_classes, is_binary=data.is_binary, top_k=k, support=positives)
    rows = index - 1 if kind == "rank" else (np.zeros(1, dtype=np.int64) if data.is_binary else index)
    panels = tuple(ece.reliability_from_sums(sums[r], schema.edges, alpha=alpha, interval=interval,
                                             n_bins=schema.n_bins, target="binary", n_classes=2)
                   for r in rows)
    return analysis.MultiReliability(target=target, kind=kind, index=index, labels=labels, panels=panels,
                                     positives=positives[rows], n=n, n_classes=data.n_classes,
                                     n_omitted=int(omitted))


def dyadic_sums(z, y, exponents: tuple[int, ...], compensated: bool = False) -> tuple[BinSums, ...]:
    """BinSums of one sample at the dyadic scales 2^b, b in ``exponents`` (ascending): 1-D targets bin once
    at the finest scale and coarsen; full calibration bins the simplex cells of every scale."""
    if z.ndim == 1:
        out = [BinSums.of(z, y, dyadic_keys(z, exponents[-1]), compensated=compensated)]
        for b_fine, b in zip(exponents[::-1], exponents[-2::-1], strict=False):
            out.append(out[-1].coarsen(b_fine - b))
        return tuple(out[::-1])
    return tuple(BinSums.of(z, y, simplex_cell_keys(z, 2**b), compensated=compensated) for b in exponents)


class _Exponents:
    """The b of the dyadic scales 2^b: a non-empty sequence of ints in [0, 62] (2^62 bins still fit the
    int64 keys)."""

    def __str__(self) -> str:
        return "a non-empty sequence of ints in [0, 62]"

    def accepts(self, value) -> bool:
        if isinstance(value, str) or not hasattr(value, "__iter__"):
            return False
        values = list(value)
        return bool(values) and all(Interval(int, 0, 62).accepts(b) for b in values)


#: the targets of the dyadic scales: 1-D views on equal-width bins, or the full vector on the simplex
#: partition (top-k has no dyadic scales: T-Cal tests it through the full vector)
_SCALE_TARGETS = Options(("auto", *SCALAR_TARGETS, "full"))


@validate_params(inherited(ece.debiased_ece, exponents=_Exponents(), target=_SCALE_TARGETS,
                           class_index=NON_NEGATIVE_INT, third_moments=BOOLEAN))
def scale_sums(y_true, y_prob=None, *, exponents: Sequence[int], target: str = "auto", class_index: int = 0,
               third_moments: bool = False, split_every: int = SPLIT_EVERY, client=None,
               **columns) -> tuple[tuple, str]:
    """Merged BinSums at the dyadic scales m = 2^b, b in ``exponents``, in one pass over the data.

    The scales of adaptive T-Cal (Lee et al. [1]_): 1-D targets are binned once per partition at the
    finest scale and coarsened (equal-width bins of width 2^−b), full calibration bins the simplex cells of
    every scale.  ``BinSums.terms()`` of a scale gives T^d there and, with ``third_moments``, the null
    variance and third cumulant of the analytic test.

    Parameters
    ----------
    exponents : sequence of int
        The b of the scales, each in 0..62.
    third_moments : bool, default False
        Add the compensated sums of the analytic T-Cal test (:meth:`calviz.dask.BinSums.terms`).
    y_true, y_prob, target, class_index, split_every, client, **columns
        As for :func:`debiased_ece`.

    Returns
    -------
    (tuple of BinSums, str)
        The sums per scale (ascending b) and the resolved target.

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
    >>> sums, target = calviz.dask.scale_sums(Y, P, exponents=[3, 1, 2], third_moments=True)
    >>> [len(s.keys) for s in sums], target, sums[0].compensated
    ([2, 4, 8], 'binary', True)
    >>> bool(np.isclose(sums[2].terms()[0], calviz.debiased_ece(y, p, n_bins=8).value, rtol=1e-12))
    True
    """
    data = as_dask_data(y_true, y_prob, **columns)
    exps = tuple(sorted(int(b) for b in exponents))
    resolved = resolve(data, target, 1, class_index, caller="scale_sums")
    merged = map_reduce(data, dyadic_sums, exps, bool(third_moments), target=resolved,
                        split_every=split_every, client=client)
    check_n(merged[0].n_total)
    return merged, resolved.name


@validate_params(inherited(ece.debiased_ece, exponents=_Exponents(), target=_SCALE_TARGETS,
                           class_index=NON_NEGATIVE_INT))
def multiscale_debiased_ece(y_true, y_prob=None, *, exponents: Sequence[int], target: str = "auto",
                            class_index: int = 0, split_every: int = SPLIT_EVERY, client=None,
                            **columns) -> tuple[ece.ECEResult, ...]:
    """The debiased ECE T^d at every dyadic scale m = 2^b, in one pass over the data.

    T^d is the statistic of T-Cal (Lee et al. [1]_): the plug-in squared ℓ2 ECE with each bin's diagonal
    terms removed, so that it has mean 0 for a calibrated model.  Its value across scales shows at which
    resolution the miscalibration appears; :func:`adaptive_tcal` tests all of them.

    Parameters
    ----------
    y_true, y_prob, exponents, target, class_index, split_every, client, **columns
        As for :func:`scale_sums`.

    Returns
    -------
    tuple of calviz.ECEResult
        One per scale, in ascending b; each equals ``calviz.debiased_ece(y_true, y_prob, n_bins=2**b)``
        (equal-width bins; full calibration: the simplex partition).

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
    >>> results = calviz.dask.multiscale_debiased_ece(Y, P, exponents=[1, 2, 3])
    >>> [r.n_bins for r in results], [round(r.value, 4) for r in results]
    ([2, 4, 8], [0.0098, 0.0119, 0.0118])
    >>> all(np.isclose(r.value, calviz.debiased_ece(y, p, n_bins=2 ** b).value, rtol=1e-12)
    ...     for b, r in zip([1, 2, 3], results))
    True
    """
    data = as_dask_data(y_true, y_prob, **columns)
    resolve(data, target, 1, class_index, caller="multiscale_debiased_ece")  # (messages naming it)
    sums, target = scale_sums(data, exponents=exponents, target=target, class_index=class_index,
                              split_every=split_every, client=client)
    return tuple(ece.ece_from_sums(s, "debiased_l2_sq", n_bins=2**b, n_bins_total=(2**b) ** max(s.dim - 1, 1),
                                   scheme="equal_width" if s.dim == 1 else "simplex", target=target,
                                   n_classes=data.n_classes)
                 for b, s in zip(sorted(int(b) for b in exponents), sums, strict=True))


def _frame(z, y):
    import pandas as pd

    return pd.DataFrame({"v": z, "y": np.asarray(y, dtype=np.float64)})


def sorted_view(data, target: Target):
    """The scalar view as a dask DataFrame (columns v, y) sorted by v (``sort_values``: sampled quantiles,
    a shuffle, sorted partitions; equal values share a partition)."""
    import dask.dataframe as dd
    import pandas as pd

    meta = pd.DataFrame({"v": np.empty(0), "y": np.empty(0)})
    frames = map_partitions(data, _frame, target=target)
    return dd.from_delayed(frames, meta=meta, verify_meta=False).sort_values("v")


def sorted_arrays(frame) -> tuple[np.ndarray, np.ndarray]:
    """(v, y) of one sorted partition, ties ordered by the label (the order of the in-memory sort)."""
    v, y = frame["v"].to_numpy(dtype=np.float64), frame["y"].to_numpy(dtype=np.float64)
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
        carry, prev_last = into * math.exp(-(last - first) * inv_h) + tail, last
    return n, total + comp


@twin(distance.laplace_kce, example=", bandwidth=0.5")
def laplace_kce(data, options, *, split_every=SPLIT_EVERY, client=None):
    """Exact: a global sort of (v, y); every sorted partition returns its own double sum
    Σ r_i r_j e^{−|v_i − v_j|/h} (r = y − v), its left sum at its last point and its residuals discounted to
    its first point (:func:`calviz._kernels.dask_scan.laplace_run_summary`); the client carries the
    exponential sums across partition boundaries.  O(n log n) work, O(P) data on the client."""
    schema = distance.laplace_kce(*data.schema(), **options)
    inv_h = 1.0 / schema.bandwidth
    with partition_errors(data, client):
        ordered = sorted_view(data, resolve(data, options["target"], 1, options["class_index"]))
        summaries = compute(data, *[delayed(_run_summary, pure=True)(f, inv_h) for f in ordered.to_delayed()],
                            client=client)
    n, total = _combine_runs(summaries, inv_h)
    check_n(n)
    sq = max(total / (float(n) * float(n)), 0.0)
    return dataclasses.replace(schema, value=sq if options["squared"] else math.sqrt(sq), n=n)


@dataclass(frozen=True, repr=False)
class SubsampleEstimate(ValueStatistic, HasInterval, ResultMixin):
    """A distance-to-calibration measure of a uniform subsample of distributed data, with its error bound.

    The result of :func:`subsample_measure`.  ``float(estimate)`` and ``statistic`` are ``value``;
    ``confidence_interval()`` is (``low``, ``high``).

    Attributes
    ----------
    measure : {"smce", "sintce", "lower_dce"}
        The measure.
    value : float
        The measure of the subsample (of all rows when ``sample_size == n``).
    low, high : float
        Where the measure of the *full data* lies with probability ≥ ``level`` over the draw, by the
        bound named in ``bound`` (:func:`calviz.sampling.subsample_interval`); both equal ``value`` when
        every row was used.
    error_bound : float
        max(value − low, high − value).
    level : float
        1 − δ.
    sample_size : int
        Rows drawn without replacement.
    n : int
        Rows of the data.
    seed : None, int or numpy.random.Generator
        The subsample's seed.
    bound : str
        The deviation bound used, in words.
    target : str
        The resolved calibration target.
    n_classes : int
        Classes of the input.
    result : object
        The in-memory result of the measure on the subsample (that of :func:`calviz.smce`, for example).
    """

    measure: str
    value: float
    low: float
    high: float
    error_bound: float
    level: float
    sample_size: int
    n: int
    seed: Any
    bound: str
    target: str
    n_classes: int
    result: Any = dataclasses.field(default=None, repr=False)

    def __float__(self) -> float:
        return float(self.value)

    @property
    def confidence(self) -> float:
        """Deprecated: ``level``."""
        warnings.warn("SubsampleEstimate.confidence is deprecated; use .level", DeprecationWarning,
                      stacklevel=2)
        return self.level


_SUBSAMPLE_RULES = {"size": Interval(int, 2, None), "seed": SEED, "class_index": NON_NEGATIVE_INT,
                    "client": CLIENT_RULE}


@validate_params(_SUBSAMPLE_RULES)
def uniform_subsample(y_true, y_prob=None, *, size: int, seed=None, target: str = "auto",
                      class_index: int = 0, client=None, **columns):
    """A uniform subsample of the scalar view of distributed data, without replacement.

    The rows are those :meth:`calviz.CalibrationData.subsample` keeps with the same ``seed`` (every row
    when ``size`` ≥ n): the same global row indices, taken partition by partition, so a distributed
    analysis and an in-memory one of the same data look at the same rows.  The pass that counts the rows
    also counts the label-1 rows of the whole view.

    Parameters
    ----------
    y_true, y_prob, client, **columns
        Distributed predictions (see :func:`as_dask_data`) and where to compute, as for
        :func:`binned_ece`.
    size : int
        Rows of the subsample, at least 2.
    seed : None, int or numpy.random.Generator, optional
        The subsample's seed.
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar view (as for :func:`calviz.smce`).
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    (z, y, n, float, seed, bool)
        The subsample's view, the number of rows of the data, the fraction of label 1 in the data's view,
        the seed and whether every row was taken.

    Examples
    --------
    >>> import numpy as np, dask.array as da, calviz, calviz.dask
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> Y, P = da.from_array(y, chunks=700), da.from_array(p, chunks=700)
    >>> z, labels, n, positive, seed, whole = calviz.dask.uniform_subsample(Y, P, size=500, seed=0)
    >>> z.shape, n, round(positive, 4), whole
    ((500,), 2000, 0.399, False)
    >>> bool(np.array_equal(z, calviz.as_calibration_data(y, p).subsample(500, seed=0).probs))
    True
    """
    rows, n, (positive, view) = _subsample("uniform_subsample", y_true, y_prob, size, seed, target,
                                           class_index, client, columns)
    z, y = view.view(rows)
    return z, y, n, positive, seed, rows.n == n


def _subsample(caller: str, y_true, y_prob, size, seed, target, class_index, client, columns):
    data = as_dask_data(y_true, y_prob, **columns)
    # the scalar targets of the distance measures, checked on the client before any partition is read
    view = resolve(data, target, 1, class_index, allowed=("auto", *SCALAR_TARGETS), caller=caller)
    rows, n, positives = gather(data, size, seed, client=client, view=view)
    return rows, n, (positives / n, view)


@validate_params({**_SUBSAMPLE_RULES, "measure": Options(("smce", "sintce", "lower_dce")),
                  "delta": UNIT_OPEN})
def subsample_measure(measure: str, y_true, y_prob=None, *, size: int = 200_000, delta: float = 0.05,
                      seed=None, target: str = "auto", class_index: int = 0, client=None,
                      measure_options: dict | None = None, **columns) -> SubsampleEstimate:
    """smCE, SintCE or dCE_lower of distributed data on a uniform subsample, with its sampling error.

    These measures need the whole sorted sample in one process: they are computed in memory on the
    k = ``size`` rows of :func:`uniform_subsample`, and :func:`calviz.sampling.subsample_interval` bounds,
    with probability ≥ 1 − δ, where the measure of all rows lies (Błasiok et al. [1]_, Sec. 9).

    Parameters
    ----------
    measure : {"smce", "sintce", "lower_dce"}
        The measure: :func:`calviz.smce`, :func:`calviz.sintce` or :func:`calviz.lower_dce`.
    y_true, y_prob, target, class_index, client, **columns
        As for :func:`smce`.
    size : int, default 200000
        Rows of the subsample (all rows when there are at most this many: the exact value).
    delta : float, default 0.05
        The bound holds with probability ≥ 1 − δ.
    seed : None, int or numpy.random.Generator
        The subsample's seed.
    measure_options : dict, optional
        Keywords of the measure (e.g. ``grid_step`` of dCE_lower).

    Returns
    -------
    SubsampleEstimate
        The measure of the subsample, the interval for the measure of all rows and the in-memory result.

    References
    ----------
    .. [1] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.

    Examples
    --------
    >>> import numpy as np, dask.array as da, calviz, calviz.dask
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> Y, P = da.from_array(y, chunks=700), da.from_array(p, chunks=700)
    >>> estimate = calviz.dask.subsample_measure("smce", Y, P, size=500, seed=0)
    >>> estimate.sample_size, estimate.n, estimate.level, estimate.low <= estimate.value <= estimate.high
    (500, 2000, 0.95, True)

    With at most ``size`` rows every row is used and the value is exact:

    >>> exact = calviz.dask.subsample_measure("smce", Y, P)
    >>> exact.sample_size, bool(np.isclose(exact.value, calviz.smce(y, p).value)), exact.error_bound
    (2000, True, 0.0)
    """
    d = float(delta)
    rows, n, (pi, view) = _subsample("subsample_measure", y_true, y_prob, size, seed, target, class_index,
                                     client, columns)
    res = getattr(distance, measure)(rows, target=view, **(measure_options or {}))
    positives = int(view.view(rows)[1].sum())
    low, high, bound = subsample_interval(measure, res, n=n, positives=positives, positive_fraction=pi,
                                          confidence=1.0 - d)
    value = float(res.value)
    return SubsampleEstimate(measure, value, low, high, float(max(value - low, high - value)), 1.0 - d,
                             rows.n, n, seed, bound, view.name, rows.n_classes, res)


_SUBSAMPLE = {
    "size": (200_000, _SUBSAMPLE_RULES["size"], "int, default 200000\n        Rows used: all of them when "
             "there are at most ``size``, else a uniform subsample of ``size`` rows "
             "(:func:`subsample_measure` bounds its sampling error)."),
    "seed": (None, SEED, "None, int or numpy.random.Generator\n        The subsample's seed."),
}


def _measured(in_memory):
    def driver(data, options, *, size, seed, split_every=SPLIT_EVERY, client=None):
        """Computed in memory on all rows when there are at most ``size``, else on a uniform subsample of
        ``size`` rows (``n`` says how many were used)."""
        common = {k: options.pop(k) for k in ("target", "class_index")}
        # class_index as in memory: checked for the classwise target, naming this function, else ignored
        resolve(data, common["target"], 1, common["class_index"], allowed=("auto", *SCALAR_TARGETS),
                caller=in_memory.__name__)
        if common["target"] != "classwise":
            common["class_index"] = 0
        return subsample_measure(in_memory.__name__, data, size=size, seed=seed, client=client,
                                 measure_options=options, **common).result

    return twin(in_memory, extra=_SUBSAMPLE)(driver)


smce, sintce, lower_dce = (_measured(f) for f in (distance.smce, distance.sintce, distance.lower_dce))
