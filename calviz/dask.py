"""calviz on Dask: the bin-sum estimators, T-Cal and the Laplace kCE on data larger than memory.

Install with ``pip install "calviz[dask]"``.  Every function here keeps the name, the signature and the
frozen result object of its in-memory counterpart; the data may be

* dask arrays ``(y_true, y_prob)`` (``y_prob`` 1-D binary or (n, K); row chunks are paired by position
  and each pair's lengths are checked),
* a dask DataFrame, or a Parquet path / glob / directory (read with ``dask.dataframe.read_parquet``), with
  column names given by ``y_true=``/``y_prob=`` keywords of :func:`from_dataframe` /
  :func:`from_parquet` (or detected: ``y_true`` + ``y_prob``, ``y_true`` + ``p_0..p_{K-1}``, or
  ``correct`` + ``confidence``),
* a :class:`DaskCalibrationData` made by one of those two functions.

How it works.  The binned estimators only need the per-bin
sufficient statistics :class:`calviz.ece.BinSums`.  Each partition is validated (the same
:class:`calviz.data.InputError` messages as in memory, naming the partition and the row) and turned into
its BinSums by the in-memory kernel :func:`calviz.ece.binned_sums`; the partial BinSums are merged by a
``dask.delayed`` tree reduction (fan-in ``split_every``), and the merged BinSums go through the *same*
finalisers as in memory (:mod:`calviz.ece`, :func:`calviz.intervals.interval_from_sums`).  So the
distributed numbers equal the in-memory ones up to floating-point summation order (≈ 1e-15 relative).

T^d at all dyadic scales at once (T-Cal): each partition bins at the finest scale 2^B only, the coarser
scales come from adding pairs of nested bins (key >> 1) — one pass over the data for all B scales.

If any partition is bad (NaN, a probability outside [0, 1], a label out of range, rows not summing to
one, mismatched lengths), the whole computation raises :class:`calviz.data.InputError`: the message is the
in-memory one with the global row and the partition named; no partial result is ever returned.

Also here: :func:`adaptive_tcal` (analytic / threshold critical values from per-scale BinSums, or — when
the merged sums of the fine scales would not fit — exactly via a global sort and a per-partition scan),
:func:`resampled_tcal` (Y-only resampling per partition with independent ``SeedSequence`` streams),
:func:`laplace_kce` (exact: global sort + exponential sums carried across partition boundaries),
:func:`smce` / :func:`sintce` / :func:`lower_dce` on a seeded uniform subsample with the sampling error
reported (Błasiok et al. 2023, §9), and :func:`analyze_parquet`, the one entry point for ``calviz check`` and
the dashboard.

Limits (documented, not silent): equal-mass and distinct-value binning need the whole sample and are
refused; the bootstrap interval is refused (use the asymptotic interval); merged BinSums hold one row per
non-empty bin; resampled T-Cal tests only the scales whose dense resample × bin arrays fit ``max_cells``;
smCE / SintCE / dCE_lower are subsample estimates with a stated error, never the full-data value.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import importlib
import math
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import dask
import numpy as np
from dask.delayed import Delayed, delayed

from calviz import analysis as _analysis
from calviz._results import ResultMixin
from calviz.analysis import resolve_target, scalar_target
from calviz.binning import check_n_bins, equal_width_edges
from calviz.data import CalibrationData, InputError, as_calibration_data, check_alpha, check_unique_columns
from calviz.ece import (
    BinSums,
    ECEResult,
    ReliabilityData,
    bin_sums,
    binned_sums,
    debiased_ece_sq,
    plugin_ece_l1,
    plugin_ece_sq,
    plugin_mce,
    reliability_from_sums,
    unbiased_ece_sq,
)
from calviz.intervals import ECEInterval, interval_from_sums

#: the module: the attribute ``calviz.tcal`` is the public function of the same name
_tcal = importlib.import_module("calviz.tcal")

__all__ = [
    "DaskCalibrationData",
    "PartitionInputError",
    "from_dask",
    "from_dataframe",
    "from_parquet",
    "as_dask_data",
    "partition_sums",
    "binned_ece",
    "debiased_ece",
    "unbiased_ece",
    "mce",
    "multiscale_debiased_ece",
    "ece_interval",
    "reliability",
    "scale_sums",
    "adaptive_tcal",
    "resampled_tcal",
    "laplace_kce",
    "uniform_subsample",
    "subsample_measure",
    "SubsampleEstimate",
    "smce",
    "sintce",
    "lower_dce",
    "analyze_parquet",
    "multi_reliability",
    "compute_view",
    "DistributedSource",
    "open_source",
    "get_client",
]

#: fan-in of the tree reductions (how many partial results one task merges)
SPLIT_EVERY = 8


# ------------------------------------------------------------------------------------------------
# distributed input
# ------------------------------------------------------------------------------------------------
class PartitionInputError(InputError):
    """Bad input found in one partition: the in-memory message plus the partition index and the row
    inside that partition.  Raised on a worker; the client turns it into an :class:`InputError` whose
    message also gives the global row (see :func:`_compute`)."""

    def __init__(self, message: str, partition: int, local_row: int | None, row_offset: int | None):
        super().__init__(message)
        self.message = message
        self.partition = int(partition)
        self.local_row = None if local_row is None else int(local_row)
        self.row_offset = None if row_offset is None else int(row_offset)

    def __reduce__(self):  # exceptions pickle their args only; keep all four fields across processes
        return (type(self), (self.message, self.partition, self.local_row, self.row_offset))

    def __str__(self) -> str:
        return _locate(self.message, self.partition, self.row_offset)


_ROW = re.compile(r"\brow (\d+)")


def _locate(message: str, partition: int, row_offset: int | None) -> str:
    """Rewrite the in-memory message ("... at row 17") to name the global row and the partition."""

    def repl(match: re.Match) -> str:
        local = int(match.group(1))
        if row_offset is None:
            return f"row {local} of partition {partition}"
        return f"row {row_offset + local} (partition {partition}, row {local} within it)"

    located, count = _ROW.subn(repl, message, count=1)
    return located if count else f"{message} (in partition {partition})"


@dataclass(frozen=True, repr=False)
class DaskCalibrationData:
    """Lazily evaluated, partitioned (y_true, y_prob) data.

    ``parts``: one ``dask.delayed`` object per partition evaluating to a tuple ``(y_true, y_prob)`` of
    numpy arrays (not yet validated); ``lengths``: rows per partition when known without reading the data
    (dask arrays), else ``None``; ``n_classes``: K (2 for 1-D binary ``y_prob``); ``is_binary``: 1-D
    ``y_prob``; ``source``: a description for messages.
    """

    parts: tuple
    lengths: tuple | None
    n_classes: int
    is_binary: bool
    source: str

    @property
    def npartitions(self) -> int:
        return len(self.parts)

    def __repr__(self) -> str:
        kind = "binary" if self.is_binary else f"{self.n_classes}-class"
        n = "unknown" if self.lengths is None else str(sum(self.lengths))
        return f"DaskCalibrationData({self.source}, {kind}, npartitions={self.npartitions}, n={n})"

    def row_offsets(self) -> list[int]:
        """First global row of every partition (reads the partition lengths if they are not known)."""
        lengths = self.lengths
        if lengths is None:
            lengths = dask.compute(*[delayed(_part_length)(p) for p in self.parts])
        return [0] + list(np.cumsum(lengths, dtype=np.int64)[:-1].tolist()) if lengths else []


def _part_length(part) -> int:
    y_true, _ = part
    return int(np.shape(y_true)[0])


def _column_values(frame, columns: str | list[str]) -> np.ndarray:
    """Numeric columns as float64 with missing values as NaN (so the validation reports them instead of
    a pandas conversion error); any other column (text, booleans) as it is, for the in-memory rules to
    refuse or accept with their own messages."""
    import pandas as pd

    selected = frame[columns]
    dtypes = [selected.dtype] if isinstance(columns, str) else list(selected.dtypes)
    if all(pd.api.types.is_numeric_dtype(d) and not pd.api.types.is_bool_dtype(d) for d in dtypes):
        return selected.to_numpy(dtype=np.float64, na_value=np.nan)
    return selected.to_numpy(dtype=object, na_value=None) if any(
        not pd.api.types.is_bool_dtype(d) for d in dtypes) else selected.to_numpy(dtype=bool)


def _frame_part(frame, label: str, probs: str | list[str]):
    """(y_true, y_prob) numpy arrays of one pandas partition."""
    return _column_values(frame, label), _column_values(frame, probs)


def _detect_columns(columns: Sequence[str], y_true: str | None, y_prob,
                    prob_prefix: str | None = None) -> tuple[str, str | list[str]]:
    cols = list(columns)
    if prob_prefix is not None and y_prob is None:
        pattern = re.compile(re.escape(prob_prefix) + r"(\d+)")
        found = sorted((int(m.group(1)), c) for c in cols if (m := pattern.fullmatch(c)))
        if [k for k, _ in found] != list(range(len(found))) or len(found) < 2:
            raise InputError(f"probability columns {prob_prefix}0..{prob_prefix}K-1 not found in columns "
                             f"{cols}")
        y_prob = [c for _, c in found]
    if y_true is None:
        y_true = next((c for c in ("y_true", "label", "correct") if c in cols), None)
        if y_true is None:
            raise InputError(f"no label column found (looked for y_true, label, correct) in columns {cols}")
    elif y_true not in cols:
        raise InputError(f"label column {y_true!r} not found in columns {cols}")
    if y_prob is None:
        if "y_prob" in cols:
            y_prob = "y_prob"
        elif "confidence" in cols:
            y_prob = "confidence"
        else:
            probs = [c for c in cols if re.fullmatch(r"p_\d+", c)]
            if not probs:
                raise InputError(
                    f"no probability columns found (looked for y_prob, confidence, p_0..p_K-1) in {cols}")
            probs.sort(key=lambda c: int(c[2:]))
            if [int(c[2:]) for c in probs] != list(range(len(probs))):
                raise InputError(f"probability columns must be p_0..p_{len(probs) - 1}; got {probs}")
            y_prob = probs
    missing = [c for c in ([y_prob] if isinstance(y_prob, str) else list(y_prob)) if c not in cols]
    if missing:
        raise InputError(f"probability column(s) {missing} not found in columns {cols}")
    return y_true, (y_prob if isinstance(y_prob, str) else list(y_prob))


def from_dataframe(frame, *, y_true: str | None = None, y_prob: str | Sequence[str] | None = None,
                   prob_prefix: str | None = None, source: str = "dask dataframe") -> DaskCalibrationData:
    """Wrap a dask DataFrame: ``y_true`` names the label column, ``y_prob`` one column (binary P(y=1)
    or confidence) or the K probability columns, or ``prob_prefix`` the prefix of columns
    ``<prefix>0..<prefix>K-1`` (detected when all are ``None``, see the module docstring)."""
    check_unique_columns(list(frame.columns))
    label, probs = _detect_columns(frame.columns, y_true, y_prob, prob_prefix)
    frame = frame[[label] + ([probs] if isinstance(probs, str) else probs)]
    parts = tuple(delayed(_frame_part, pure=True)(p, label, probs) for p in frame.to_delayed())
    is_binary = isinstance(probs, str)
    if not is_binary and len(probs) == 1:
        raise InputError("y_prob has a single column (a single class); pass the binary column by name")
    return DaskCalibrationData(parts, None, 2 if is_binary else len(probs), is_binary, source)


def from_parquet(path, *, y_true: str | None = None, y_prob: str | Sequence[str] | None = None,
                 prob_prefix: str | None = None, **read_parquet_kwargs) -> DaskCalibrationData:
    """Lazily read a Parquet file, directory, glob or list of files with ``dask.dataframe.read_parquet``
    (only the needed columns are read).  Column names as in :func:`from_dataframe`."""
    import dask.dataframe as dd

    path = [os.fspath(p) for p in path] if isinstance(path, (list, tuple)) else os.fspath(path)
    paths = [path] if isinstance(path, str) else path
    missing = [p for p in paths if "://" not in p and not set("*?[") & set(p) and not os.path.exists(p)]
    if missing:
        raise InputError(f"{missing[0]}: no such file or directory")
    try:
        frame = dd.read_parquet(path, **read_parquet_kwargs)
    except (FileNotFoundError, OSError, ValueError) as exc:
        raise InputError(f"could not read Parquet data at {path!r}: {exc}") from None
    return from_dataframe(frame, y_true=y_true, y_prob=y_prob, prob_prefix=prob_prefix,
                          source=f"parquet {path!r}")


def from_dask(y_true, y_prob) -> DaskCalibrationData:
    """Pair dask arrays (or dask Series) ``y_true`` (n,) or one-hot (n, K) and ``y_prob`` (n,) or (n, K)
    partition by partition.  With known chunk sizes ``y_true`` is rechunked to ``y_prob``'s rows;
    otherwise the partitions are paired by position and each pair's lengths are checked."""
    import dask.array as da

    y_true = _as_dask_array(y_true, "y_true")
    y_prob = _as_dask_array(y_prob, "y_prob")
    if y_true.ndim not in (1, 2):
        raise InputError(f"y_true must be 1-D labels or a 2-D one-hot array; got shape {y_true.shape}")
    if y_prob.ndim not in (1, 2):
        raise InputError(f"y_prob must be 1-D (binary) or 2-D (n, K); got {y_prob.ndim} dimensions")
    if y_prob.ndim == 2:
        if y_prob.shape[1] == 1:
            raise InputError("y_prob has a single column (a single class); pass binary P(y=1) as 1-D")
        y_prob = y_prob.rechunk({1: -1})
    if y_true.ndim == 2:
        y_true = y_true.rechunk({1: -1})
    known = not any(math.isnan(c) for c in y_prob.chunks[0] + y_true.chunks[0])
    if known:
        if y_true.shape[0] != y_prob.shape[0]:
            raise InputError(
                f"y_true has {y_true.shape[0]} rows but y_prob has {y_prob.shape[0]}; lengths must match")
        if y_true.chunks[0] != y_prob.chunks[0]:
            y_true = y_true.rechunk({0: y_prob.chunks[0]})
        lengths = tuple(int(c) for c in y_prob.chunks[0])
    else:
        if y_true.numblocks[0] != y_prob.numblocks[0]:
            raise InputError(
                "y_true and y_prob have unknown chunk sizes and different numbers of partitions "
                f"({y_true.numblocks[0]} vs {y_prob.numblocks[0]}); use to_dask_array(lengths=True)")
        lengths = None
    t_blocks = y_true.to_delayed().reshape(-1)
    p_blocks = y_prob.to_delayed().reshape(-1)
    parts = tuple(delayed(tuple, pure=True)([t, p]) for t, p in zip(t_blocks, p_blocks, strict=True))
    del da
    is_binary = y_prob.ndim == 1
    return DaskCalibrationData(parts, lengths, 2 if is_binary else int(y_prob.shape[1]), is_binary,
                               "dask arrays")


def _as_dask_array(x, name: str):
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(x, da.Array):
        return x
    if isinstance(x, dd.Series):
        return x.to_dask_array()
    if isinstance(x, dd.DataFrame):
        return x.to_dask_array()
    try:
        arr = np.asarray(x)
    except Exception as exc:
        raise InputError(f"{name} could not be read as an array: {exc}") from None
    return da.from_array(arr, chunks=(max(1, arr.shape[0] // 4),) + arr.shape[1:] if arr.ndim else -1)


def as_dask_data(y_true, y_prob=None, **columns) -> DaskCalibrationData:
    """Any supported distributed input → :class:`DaskCalibrationData` (see the module docstring).

    ``columns`` (``y_true_column=``, ``y_prob_columns=``) name the columns of a dask DataFrame or
    Parquet source."""
    import dask.dataframe as dd

    label = columns.pop("y_true_column", None)
    probs = columns.pop("y_prob_columns", None)
    if columns:
        raise InputError(f"unknown keyword(s) {sorted(columns)}")
    if isinstance(y_true, DaskCalibrationData):
        _only_one(y_prob)
        return y_true
    if isinstance(y_true, (str, os.PathLike)):
        _only_one(y_prob)
        return from_parquet(y_true, y_true=label, y_prob=probs)
    if isinstance(y_true, dd.DataFrame):
        _only_one(y_prob)
        return from_dataframe(y_true, y_true=label, y_prob=probs)
    if y_prob is None:
        raise InputError("y_prob is required (or pass a dask DataFrame / Parquet path as the only argument)")
    return from_dask(y_true, y_prob)


def _only_one(y_prob) -> None:
    if y_prob is not None:
        raise InputError("pass either a dataset (DataFrame, Parquet path) or (y_true, y_prob), not both; "
                         "name the columns with y_true_column= / y_prob_columns=")


# ------------------------------------------------------------------------------------------------
# per-partition work (runs on the workers)
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _View:
    """What a partition turns into: the calibration target (resolved on the client) and its options."""

    target: str
    top_k: int = 1
    class_index: int = 0


def _validate_partition(part, index: int, row_offset: int | None) -> CalibrationData:
    """The in-memory validation of one partition (no minimum size: partitions may be empty); an
    :class:`InputError` is re-raised naming the partition."""
    y_true, y_prob = part
    try:
        return as_calibration_data(y_true, y_prob, min_samples=0)
    except InputError as exc:
        match = _ROW.search(str(exc))
        local = int(match.group(1)) if match else None
        raise PartitionInputError(str(exc), index, local, row_offset) from None


def _partition_view(part, index: int, row_offset: int | None, view: _View) -> tuple[np.ndarray, np.ndarray]:
    data = _validate_partition(part, index, row_offset)
    try:
        return data.view(view.target, top_k=view.top_k, class_index=view.class_index)
    except InputError as exc:
        raise PartitionInputError(str(exc), index, None, row_offset) from None


def _partition_sums(part, index, row_offset, view: _View, n_bins: int, scheme: str):
    """(BinSums, total number of bins, scheme) of one partition, by the in-memory kernel."""
    z, y = _partition_view(part, index, row_offset, view)
    sums, _, total, scheme = binned_sums(z, y, n_bins=n_bins, scheme=scheme, target=view.target)
    return sums, total, scheme


def _merge_sums(*partials):
    """Tree-reduction step: merge (BinSums, total, scheme) triples (same binning)."""
    sums, total, scheme = partials[0]
    for other, _, _ in partials[1:]:
        sums = sums.merge(other)
    return sums, total, scheme


def _tree_reduce(items: Sequence[Delayed], combine, split_every: int = SPLIT_EVERY) -> Delayed:
    """A ``dask.delayed`` reduction tree of fan-in ``split_every`` (depth ⌈log_split_every(P)⌉)."""
    items = list(items)
    if not items:
        raise InputError("the data has no partitions")
    if isinstance(split_every, (bool, np.bool_)) or not isinstance(split_every, (int, np.integer)) or (
            split_every < 2):
        raise InputError(f"split_every must be an integer of at least 2; got {split_every!r}")
    while len(items) > 1:
        items = [delayed(combine, pure=True)(*items[i:i + split_every])
                 for i in range(0, len(items), split_every)]
    return items[0]


def _compute(data: DaskCalibrationData, *graphs, client=None):
    """``dask.compute`` on the current scheduler (the default distributed Client when one exists, or
    ``client``); a bad partition becomes an :class:`InputError` naming the global row and the partition.
    Either everything is computed or an exception is raised — never a partial result."""
    with _partition_errors(data):
        if client is not None:
            return tuple(client.compute(list(graphs), sync=True))
        return dask.compute(*graphs)


@contextlib.contextmanager
def _partition_errors(data: DaskCalibrationData):
    """Turn a :class:`PartitionInputError` from a worker into the client-side :class:`InputError`."""
    try:
        yield
    except PartitionInputError as exc:
        offset = exc.row_offset
        if offset is None:
            try:
                offset = data.row_offsets()[exc.partition]
            except Exception:  # the lengths could not be read: name the partition and its local row
                offset = None
        raise InputError(_locate(exc.message, exc.partition, offset)) from None


def _parts_with_offsets(data: DaskCalibrationData):
    offsets = data.row_offsets() if data.lengths is not None else [None] * data.npartitions
    return list(enumerate(zip(data.parts, offsets, strict=True)))


# ------------------------------------------------------------------------------------------------
# target resolution (the same rules as calviz.ece.prepare_view, decided on the client)
# ------------------------------------------------------------------------------------------------
def _resolve_view(data: DaskCalibrationData, target: str, top_k: int, class_index: int) -> _View:
    if isinstance(top_k, (bool, np.bool_)) or not isinstance(top_k, (int, np.integer)):
        raise InputError(f"top_k must be an integer; got {top_k!r}")
    if target == "auto":
        if top_k == 1:
            target = "binary" if data.is_binary else "top1"
        else:
            target = "topk"
    if target not in ("binary", "top1", "topk", "classwise", "full"):
        raise InputError(f"unknown calibration target {target!r}; use 'auto', 'binary', 'top1', 'topk', "
                         "'classwise' or 'full'")
    if target == "binary" and not data.is_binary:
        raise InputError("the binary view needs 1-D y_prob; use top1() or classwise() for multiclass")
    if target == "topk" and not 1 <= int(top_k) <= data.n_classes:
        raise InputError(f"top_k must be in 1..{data.n_classes}; got {top_k}")
    if target == "classwise" and not 0 <= int(class_index) < data.n_classes:
        raise InputError(f"class_index must be in 0..{data.n_classes - 1}; got {class_index}")
    return _View(target, int(top_k), int(class_index))


def _check_scheme(scheme: str) -> None:
    if scheme in ("equal_mass", "distinct"):
        raise InputError(
            f"scheme {scheme!r} depends on the whole sample (global quantiles / distinct values) and is not "
            "available on Dask; use 'equal_width' (or 'grid' / 'simplex' for multi-dimensional targets)")


def _check_n(n: int, min_samples: int = 2) -> None:
    if n < min_samples:
        raise InputError(f"need at least {min_samples} samples; got {n}")


# ------------------------------------------------------------------------------------------------
# sufficient statistics
# ------------------------------------------------------------------------------------------------
def partition_sums(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", target: str = "auto",
    top_k: int = 1, class_index: int = 0, split_every: int = SPLIT_EVERY, client=None, **columns,
) -> tuple[BinSums, int, str, str]:
    """The merged :class:`calviz.ece.BinSums` of distributed data: one task per partition (validate,
    view, bin, sum — :func:`calviz.ece.binned_sums`), then a tree of :meth:`BinSums.merge`.

    Returns (sums, total number of bins, scheme, resolved target)."""
    data = as_dask_data(y_true, y_prob, **columns)
    m = check_n_bins(n_bins)
    _check_scheme(scheme)
    view = _resolve_view(data, target, top_k, class_index)
    parts = [delayed(_partition_sums, pure=True)(part, i, off, view, m, scheme)
             for i, (part, off) in _parts_with_offsets(data)]
    (sums, total, scheme_used), = _compute(data, _tree_reduce(parts, _merge_sums, split_every), client=client)
    _check_n(sums.n_total)
    return sums, total, scheme_used, view.target


# ------------------------------------------------------------------------------------------------
# binned ECE estimators (calviz.ece)
# ------------------------------------------------------------------------------------------------
def _estimate(y_true, y_prob, finaliser, statistic, squared, *, n_bins, scheme, target, top_k, class_index,
              split_every, client, columns, post=None) -> ECEResult:
    sums, total, scheme, target = partition_sums(
        y_true, y_prob, n_bins=n_bins, scheme=scheme, target=target, top_k=top_k, class_index=class_index,
        split_every=split_every, client=client, **columns)
    value = finaliser(sums)
    if post is not None:
        value = post(value)
    return ECEResult(float(value), statistic, squared, int(sums.n_total), check_n_bins(n_bins), total,
                     sums.n_nonempty, scheme, target)


def binned_ece(
    y_true, y_prob=None, *, n_bins: int = 15, p: int = 1, scheme: str = "equal_width", target: str = "auto",
    top_k: int = 1, class_index: int = 0, split_every: int = SPLIT_EVERY, client=None, **columns,
) -> ECEResult:
    """Distributed :func:`calviz.binned_ece` (plug-in ℓ1 / ℓ2 binned ECE); same
    arguments and result, plus ``split_every`` (tree fan-in), ``client`` (a ``distributed.Client``; the
    default scheduler otherwise) and column names for DataFrame / Parquet input."""
    common = dict(n_bins=n_bins, scheme=scheme, target=target, top_k=top_k, class_index=class_index,
                  split_every=split_every, client=client, columns=columns)
    if p == 1 and not isinstance(p, bool):
        return _estimate(y_true, y_prob, plugin_ece_l1, "plugin_l1", False, **common)
    if p == 2:
        return _estimate(y_true, y_prob, plugin_ece_sq, "plugin_l2", False, post=np.sqrt, **common)
    if p == "max":
        return _estimate(y_true, y_prob, plugin_mce, "max", False, **common)
    raise InputError(f"p must be 1, 2 or 'max'; got {p!r}")


def debiased_ece(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", target: str = "auto",
    top_k: int = 1, class_index: int = 0, split_every: int = SPLIT_EVERY, client=None, **columns,
) -> ECEResult:
    """Distributed :func:`calviz.debiased_ece`: T^d = (1/n) Σ_b (1/N_b) Σ_{j≠l∈I_b} ⟨v_j, v_l⟩
    (Lee et al. 2023, eq. 6), from the merged BinSums."""
    return _estimate(y_true, y_prob, debiased_ece_sq, "debiased_l2_sq", True, n_bins=n_bins, scheme=scheme,
                     target=target, top_k=top_k, class_index=class_index, split_every=split_every,
                     client=client, columns=columns)


def unbiased_ece(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", target: str = "auto",
    top_k: int = 1, class_index: int = 0, split_every: int = SPLIT_EVERY, client=None, **columns,
) -> ECEResult:
    """Distributed :func:`calviz.unbiased_ece` (Sun et al. 2024, eq. 4)."""
    return _estimate(y_true, y_prob, unbiased_ece_sq, "unbiased_l2_sq", True, n_bins=n_bins, scheme=scheme,
                     target=target, top_k=top_k, class_index=class_index, split_every=split_every,
                     client=client, columns=columns)


def mce(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", target: str = "auto",
    top_k: int = 1, class_index: int = 0, split_every: int = SPLIT_EVERY, client=None, **columns,
) -> ECEResult:
    """Distributed :func:`calviz.mce` (the largest |ȳ_b − z̄_b| over non-empty bins) from the merged
    BinSums.  The adaptive calibration error (:func:`calviz.ace`) needs global quantiles and is not
    offered on Dask."""
    return binned_ece(y_true, y_prob, n_bins=n_bins, p="max", scheme=scheme, target=target, top_k=top_k,
                      class_index=class_index, split_every=split_every, client=client, **columns)


def ece_interval(
    y_true, y_prob=None, *, n_bins: int = 15, alpha: float = 0.1, top_k: int = 1, method: str = "asymptotic",
    n_resamples: int = 1000, seed=None, target: str = "auto", class_index: int = 0,
    split_every: int = SPLIT_EVERY, client=None, **columns,
) -> ECEInterval:
    """Distributed :func:`calviz.ece_interval` — the asymptotic Sun et al. (2024) interval from
    the merged BinSums via :func:`calviz.intervals.interval_from_sums`.  ``method="bootstrap"`` (pairs
    resampled over the whole sample) is not offered on Dask; ``n_resamples``/``seed`` are accepted for
    signature compatibility only."""
    alpha = check_alpha(alpha)
    m = check_n_bins(n_bins)
    if method != "asymptotic":
        raise InputError(f"calviz.dask.ece_interval offers method='asymptotic' only; got {method!r}")
    data = as_dask_data(y_true, y_prob, **columns)
    view = _resolve_view(data, target, top_k, class_index)
    if view.target == "full":
        raise InputError("ece_interval bins the sorted top-k vector; use top_k=K for full calibration")
    sums, _, _, target = partition_sums(data, n_bins=m, scheme="equal_width", target=view.target,
                                        top_k=view.top_k, class_index=view.class_index,
                                        split_every=split_every, client=client)
    return interval_from_sums(sums, alpha, n_bins=m, target=target)


def reliability(
    y_true, y_prob=None, *, n_bins: int = 15, scheme: str = "equal_width", alpha: float = 0.1,
    interval: str = "wilson", target: str = "auto", class_index: int = 0,
    split_every: int = SPLIT_EVERY, client=None, **columns,
) -> ReliabilityData:
    """Distributed :func:`calviz.reliability` (equal-width bins only: equal-mass edges need global
    quantiles)."""
    alpha = check_alpha(alpha)
    if interval not in ("wilson", "jeffreys"):
        raise InputError(f"interval must be 'wilson' or 'jeffreys'; got {interval!r}")
    if scheme != "equal_width":
        _check_scheme(scheme)
        raise InputError(f"reliability needs scheme 'equal_width' on Dask; got {scheme!r}")
    data = as_dask_data(y_true, y_prob, **columns)
    view = _resolve_view(data, target, 1, class_index)
    if view.target not in ("binary", "top1", "classwise"):
        raise InputError(f"reliability diagrams need a scalar target; got {view.target!r}")
    m = check_n_bins(n_bins)
    sums, _, _, target = partition_sums(data, n_bins=m, scheme="equal_width", target=view.target,
                                        class_index=view.class_index, split_every=split_every, client=client)
    return reliability_from_sums(sums, equal_width_edges(m), alpha=alpha, interval=interval, n_bins=m,
                                 scheme="equal_width", target=target)


def _partition_marginals(part, index, row_offset, target: str, top_k: int, n_bins: int):
    """Per-rank (``topk``) or per-class (``full``; binary data: class 1 only) scalar BinSums of one
    partition on m equal-width bins, and the number of positives of each pair."""
    data = _validate_partition(part, index, row_offset)
    if target == "topk":
        z, y = data.topk(top_k)
        pairs = [(np.ascontiguousarray(z[:, r]), y[:, r]) for r in range(top_k)]
    else:
        pairs = [data.classwise(c) for c in ([1] if data.is_binary else range(data.n_classes))]
    sums = tuple(binned_sums(zc, yc, n_bins=n_bins, scheme="equal_width", target="binary")[0]
                 for zc, yc in pairs)
    return sums, np.array([int(yc.sum()) for _, yc in pairs], dtype=np.int64)


def _merge_marginals(*partials):
    sums, positives = partials[0]
    for other, more in partials[1:]:
        sums = tuple(a.merge(b) for a, b in zip(sums, other, strict=True))
        positives = positives + more
    return sums, positives


def multi_reliability(
    y_true, y_prob=None, *, target: str = "topk", top_k: int = 2, n_bins: int = 15, alpha: float = 0.1,
    interval: str = "wilson", split_every: int = SPLIT_EVERY, client=None, **columns,
):
    """Distributed :class:`calviz.analysis.MultiReliability`: one reliability diagram per rank of the top-k
    vector (``target="topk"``) or per class (``"full"``), all from one pass over the data (equal-width
    bins).  Panel choice as in memory (:func:`calviz.analysis.multi_reliability_panels`)."""
    alpha = check_alpha(alpha)
    if interval not in ("wilson", "jeffreys"):
        raise InputError(f"interval must be 'wilson' or 'jeffreys'; got {interval!r}")
    if target not in ("topk", "full"):
        raise InputError(f"per-rank / per-class reliability needs target 'topk' or 'full'; got {target!r}")
    data = as_dask_data(y_true, y_prob, **columns)
    m = check_n_bins(n_bins)
    k = 0
    if target == "topk":  # k > K is read as K, as in memory
        k = _resolve_view(data, "topk", min(int(top_k), data.n_classes), 0).top_k
    parts = [delayed(_partition_marginals, pure=True)(part, i, off, target, k, m)
             for i, (part, off) in _parts_with_offsets(data)]
    (sums, positives), = _compute(data, _tree_reduce(parts, _merge_marginals, split_every), client=client)
    n = int(sums[0].n_total)
    _check_n(n)
    kind, index, labels, omitted = _analysis.multi_reliability_panels(
        target, n_classes=data.n_classes, is_binary=data.is_binary, top_k=k, support=positives)
    # sums are per rank 1..k, or per class 0..K−1 (binary: class 1 only)
    rows = index - 1 if kind == "rank" else (np.zeros(1, dtype=np.int64) if data.is_binary else index)
    edges = equal_width_edges(m)
    panels = tuple(reliability_from_sums(sums[r], edges, alpha=alpha, interval=interval, n_bins=m,
                                         scheme="equal_width", target="binary") for r in rows)
    return _analysis.MultiReliability(target=target, kind=kind, index=index, labels=labels, panels=panels,
                                      positives=positives[rows], n=n, n_classes=data.n_classes,
                                      n_omitted=int(omitted))


# ------------------------------------------------------------------------------------------------
# all dyadic scales at once
# ------------------------------------------------------------------------------------------------
def dyadic_keys(z: np.ndarray, level: int) -> np.ndarray:
    """Equal-width bin keys at scale 2^level (level ≤ 62): min(⌊2^level z⌋, 2^level − 1).  Multiplying by a
    power of two is exact and the edges i/2^level are exact, so this is
    :func:`calviz.binning.equal_width_ids` without its 2^40 bound (as in the T-Cal kernels)."""
    top = (1 << int(level)) - 1
    return np.minimum((z * float(2 ** int(level))).astype(np.int64), top)


def coarsen(sums: BinSums, shift: int = 1) -> BinSums:
    """BinSums of the nested coarser equal-width binning: bin i at scale 2^b is the union of bins
    2i, 2i+1 at scale 2^{b+1} (the edges i/2^b are exact in floating point, so the float bin rule of
    :func:`calviz.binning.equal_width_ids` nests exactly: key_b = key_{b+shift} >> shift)."""
    if sums.n_nonempty == 0 or shift == 0:
        return sums
    parent = sums.keys >> shift
    starts = np.flatnonzero(np.r_[True, parent[1:] != parent[:-1]])
    arrays = {name: np.add.reduceat(getattr(sums, name), starts, axis=0)
              for name in ("count", "resid_sum", "resid_sq_sum", "resid_outer_sum", "z_sum", "y_sum",
                           "null_cov_sum", "null_cov_sq_trace")}
    return BinSums(keys=parent[starts], n_total=sums.n_total, **arrays)


def third_cumulant(sums: BinSums, third) -> float:
    """Exact third cumulant of T^d given the predictions (scalar target, bins with N_b ≥ 2) from the
    :class:`calviz.tcal.MomentSums` of the scale (``third``; ``sums`` gives n) — kept for callers of
    ``scale_sums(..., third_moments=True)``; the formula lives in :func:`calviz._kernels.tcal._bin_terms`."""
    return float(third.terms(sums.n_total)[4])


def _scale_moment_sums(z, y, view: _View, exponents: tuple[int, ...]):
    """:class:`calviz.tcal.MomentSums` of one sample at the dyadic scales 2^b, b in ``exponents``
    (ascending): 1-D targets bin once at the finest scale and coarsen; full calibration bins the simplex
    cells of every scale."""
    MomentSums = _tcal.MomentSums
    if z.ndim == 1:
        out = [MomentSums.of(z, y, dyadic_keys(z, exponents[-1]))]
        for b_fine, b in zip(exponents[::-1], exponents[-2::-1], strict=False):
            out.append(out[-1].coarsen(b_fine - b))
        return tuple(out[::-1])
    from calviz.binning import simplex_cell_keys

    return tuple(MomentSums.of(z, y, simplex_cell_keys(z, 2 ** b)) for b in exponents)


def _partition_moment_sums(part, index, row_offset, view: _View, exponents: tuple[int, ...]):
    z, y = _partition_view(part, index, row_offset, view)
    return _scale_moment_sums(z, y, view, exponents)


def _merge_moment_sums(*partials):
    merged = list(partials[0])
    for other in partials[1:]:
        merged = [a.merge(b) for a, b in zip(merged, other, strict=True)]
    return tuple(merged)


def _partition_scale_sums(part, index, row_offset, view: _View, exponents: tuple[int, ...], third: bool):
    """Per-partition (BinSums, MomentSums or None) at every dyadic scale 2^b, b in ``exponents`` (ascending).

    1-D targets: one binning pass at the finest scale, the others by :func:`coarsen`.  Multi-dimensional
    targets (simplex cells) are binned once per scale."""
    z, y = _partition_view(part, index, row_offset, view)
    return _partition_scale_sums_of(z, y, view, exponents, third)


def _partition_scale_sums_of(z, y, view: _View, exponents: tuple[int, ...], third: bool):
    moments = _scale_moment_sums(z, y, view, exponents) if third else (None,) * len(exponents)
    if z.ndim == 1:
        # sparse keys at the finest scale (the fused kernel of binned_sums allocates all 2^B bins)
        out = [bin_sums(dyadic_keys(z, exponents[-1]), z, y)]
        for b_fine, b in zip(exponents[::-1], exponents[-2::-1], strict=False):
            out.append(coarsen(out[-1], b_fine - b))
        return tuple(zip(out[::-1], moments, strict=True))
    return tuple((binned_sums(z, y, n_bins=2 ** b, scheme="equal_width", target=view.target)[0], m)
                 for b, m in zip(exponents, moments, strict=True))


def _merge_scale_sums(*partials):
    merged = list(partials[0])
    for other in partials[1:]:
        merged = [(a.merge(b), None if ta is None else ta.merge(tb))
                  for (a, ta), (b, tb) in zip(merged, other, strict=True)]
    return tuple(merged)


def scale_sums(
    y_true, y_prob=None, *, exponents: Sequence[int], target: str = "auto", class_index: int = 0,
    third_moments: bool = False, split_every: int = SPLIT_EVERY, client=None, **columns,
) -> tuple[tuple, str]:
    """Merged BinSums at the dyadic scales 2^b for b in ``exponents`` — one pass over the data.

    Returns (per-scale BinSums, resolved target); with ``third_moments`` the first item holds
    (BinSums, :class:`calviz.tcal.MomentSums`) pairs (the compensated sums of the analytic T-Cal)."""
    data = as_dask_data(y_true, y_prob, **columns)
    view = _resolve_view(data, target, 1, class_index)
    exps = tuple(sorted(int(b) for b in exponents))
    if not exps or exps[0] < 0 or exps[-1] > 62:
        raise InputError(f"exponents must be integers in 0..62; got {exponents!r}")
    parts = [delayed(_partition_scale_sums, pure=True)(part, i, off, view, exps, bool(third_moments))
             for i, (part, off) in _parts_with_offsets(data)]
    (merged,), = (_compute(data, _tree_reduce(parts, _merge_scale_sums, split_every), client=client),)
    _check_n(merged[0][0].n_total)
    if third_moments:
        return merged, view.target
    return tuple(s for s, _ in merged), view.target


def multiscale_debiased_ece(
    y_true, y_prob=None, *, exponents: Sequence[int], target: str = "auto", class_index: int = 0,
    split_every: int = SPLIT_EVERY, client=None, **columns,
) -> tuple[ECEResult, ...]:
    """T^d (Lee et al. 2023, eq. 6) at every dyadic scale m = 2^b, b in ``exponents``, in one pass: each
    result equals ``calviz.debiased_ece(y_true, y_prob, n_bins=2**b)`` (binary/top-1/classwise: equal-width
    bins; full: the simplex partition)."""
    sums, target = scale_sums(y_true, y_prob, exponents=exponents, target=target, class_index=class_index,
                              split_every=split_every, client=client, **columns)
    exps = sorted(int(b) for b in exponents)
    out = []
    for b, s in zip(exps, sums, strict=True):
        total = 2 ** b if s.dim == 1 else None
        if total is None:
            K = s.dim
            total = (2 ** b) ** (K - 1)
        out.append(ECEResult(debiased_ece_sq(s), "debiased_l2_sq", True, int(s.n_total), 2 ** b, total,
                             s.n_nonempty, "equal_width" if s.dim == 1 else "simplex", target))
    return tuple(out)


# ------------------------------------------------------------------------------------------------
# adaptive T-Cal (calviz.tcal)
# ------------------------------------------------------------------------------------------------
#: default cap on Σ_b (rows of the merged MomentSums of scale b) for distributed T-Cal: bounds the memory
#: of a partial result (≈ 128 bytes per row for 1-D targets — key, count and 7 double-double sums — so
#: 2^21 rows ≈ 270 MB)
TCAL_MAX_BINS = 2**21


def _partition_profile(part, index, row_offset, view: _View, max_values: int):
    """(rows, distinct values, their counts and label sums) of a 1-D view; values None when there are
    more than ``max_values`` distinct predictions (then the data is not a discrete predictor)."""
    z, y = _partition_view(part, index, row_offset, view)
    n = int(z.shape[0])
    if z.ndim != 1:
        return n, None, None, None
    values, inverse = np.unique(z, return_inverse=True)
    if values.shape[0] > max_values:
        return n, None, None, None
    counts = np.bincount(inverse, minlength=values.shape[0]).astype(np.int64)
    successes = np.bincount(inverse, weights=y, minlength=values.shape[0])
    return n, values, counts, successes


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


def adaptive_tcal(
    y_true, y_prob=None, *, alpha: float = 0.05, resampling: str = "analytic", n_resamples: int | None = None,
    combine: str = "bonferroni", target: str = "auto", class_index: int | None = None,
    discrete: bool | None = None, seed=None, max_bins: int = TCAL_MAX_BINS, sort_fine_scales: bool = True,
    split_every: int = 4, client=None, **columns,
):
    """Distributed :func:`calviz.adaptive_tcal` (Lee et al. 2023, Algorithm 2) with ``resampling="analytic"``
    (scaled chi-square critical values) — the default here, since resampling costs
    O(N n) — or ``"threshold"``; ``"y_only"`` runs :func:`resampled_tcal`.

    Pass 1: n and, for 1-D targets, the distinct predictions (discrete-predictor detection, App. B.4, the
    same rule as in memory).  Pass 2, either

    * bin sums: the :class:`calviz.tcal.MomentSums` of every dyadic scale 2^1..2^B in one pass
      (per-partition finest-scale sums, coarser scales by adding nested bins), merged in a tree — used
      while the merged sums fit: the merged sums of scale b have min(n, 2^{b(K−1)}) rows and the running
      total over the scales must stay ≤ ``max_bins``; or
    * sorted scan (1-D targets, when the sums would not fit and ``sort_fine_scales``): a global sort of
      the predictions (``dask.dataframe.sort_values``); in each sorted partition the bins of every scale
      are contiguous, the bins strictly inside a partition are finalised there, and the first/last bin of
      each partition (which may continue in the neighbours) are merged by key on the client.  Memory
      O(rows of a partition); every scale is tested.

    Both use the per-point features, the per-bin formula and the double-double (compensated) sums of the
    in-memory kernel (:func:`calviz._kernels.tcal.analytic_terms`; T^d, Var₀, Σ tr A_b, Σ tr A_b² and, for
    1-D targets, the exact third cumulant) and finish with ``calviz.tcal._analytic_result``, so the inputs
    of the p-value formula do not depend on how the data were partitioned and the result equals the
    in-memory test even for p-values far in the tail (bit-identical up to rare 1-ulp ties).
    For ``target="full"`` (simplex cells, no 1-D order) scales beyond ``max_bins`` are
    omitted instead (a warning says so and ``reason`` records it; Bonferroni over the scales tested keeps
    the level).  ``target="classwise"`` needs an explicit ``class_index``.
    """
    import warnings

    alpha = check_alpha(alpha)
    if resampling == "y_only":
        return resampled_tcal(y_true, y_prob, alpha=alpha, n_resamples=n_resamples, target=target,
                              class_index=class_index, seed=seed, split_every=split_every, client=client,
                              **columns)
    if resampling not in ("analytic", "threshold"):
        raise InputError(f"calviz.dask.adaptive_tcal offers resampling 'analytic', 'threshold' or 'y_only'; "
                         f"got {resampling!r}")
    if combine != "bonferroni":
        raise InputError("combine='max' needs resampling; calviz.dask.adaptive_tcal combines by Bonferroni")
    if discrete not in (None, True, False):
        raise InputError(f"discrete must be None, True or False; got {discrete!r}")
    _tcal._check_choice(target, _tcal._TARGETS, "target")
    if target == "classwise" and class_index is None:
        raise InputError("calviz.dask.adaptive_tcal needs class_index for target='classwise'")
    data = as_dask_data(y_true, y_prob, **columns)
    view = _resolve_view(data, target, 1, 0 if class_index is None else class_index)
    full = view.target == "full"
    K = data.n_classes if full else 2

    # pass 1: n and the discrete-predictor summary
    parts = [delayed(_partition_profile, pure=True)(part, i, off, view, _tcal.DISCRETE_MAX_VALUES)
             for i, (part, off) in _parts_with_offsets(data)]
    (n, values, counts, successes), = _compute(data, _tree_reduce(parts, _merge_profiles, split_every),
                                               client=client)
    _check_n(n)
    if not full and discrete is not False:
        looks_discrete = values is not None and counts.min() >= _tcal.DISCRETE_MIN_COUNT
        if looks_discrete or discrete:
            if values is None:
                raise InputError(f"discrete=True: the predictions take more than {_tcal.DISCRETE_MAX_VALUES}"
                                 " distinct values; the distributed binomial test is limited to that many")
            # the exact binomial test only needs (value, count, successes): rebuild a sample with them
            z = np.repeat(values, counts)
            y = np.concatenate([np.r_[np.ones(int(round(s))), np.zeros(int(c - round(s)))]
                                for c, s in zip(counts, successes, strict=True)])
            if looks_discrete:
                return _tcal._binomial_test(z, y, alpha, view.target, K, values, counts)
            return _tcal._binomial_test(z, y, alpha, view.target, K, why="discrete=True: exact binomial test "
                                        "per distinct value (App. B.4), Bonferroni over the values")

    B_paper, levels = _tcal.dyadic_scales(n, K)
    if full:
        while levels >= 1 and (K - 1) * levels + math.log2(math.factorial(K - 1)) >= 63:
            levels -= 1
    if levels < 1:
        raise InputError(
            f"n = {n} is too small for even one dyadic scale with K = {K} classes (scale 2 has 2^{K - 1} "
            f"bins > n²); use target='top1' or 'classwise', or more samples")
    kept, rows = 0, 0
    for b in range(1, levels + 1):
        rows += min(n, 2 ** (b * (K - 1)))
        if rows > max_bins:
            break
        kept = b
    kind_text = "full K-class calibration on the simplex partition" if full else f"{view.target} calibration"
    if kept < levels and not full and sort_fine_scales:
        # the merged bin sums of every scale would not fit: exact terms of all scales by a global sort
        terms = _scan_tcal_terms(data, view, levels, n, client)
        scales = tuple(2**b for b in range(1, levels + 1))
        scale_text = f"{levels} dyadic scales 2..2^{levels}" + (
            f" (Algorithm 2's B = {B_paper}; finer scales capped)" if levels < B_paper else "")
        t = terms[:, 0]
        if resampling == "analytic":
            reason = f"{kind_text}; {scale_text}; scaled chi-square critical values, Bonferroni"
            return _tcal._analytic_result(t, terms[:, 1:].T, scales, alpha, n, K, view.target,
                                          "adaptive T-Cal", reason)
        return _threshold_result(t, scales, alpha, n, K, full, view.target,
                                 f"{kind_text}; {scale_text}; Theorem 3 Chebyshev thresholds at α/B")
    if kept < 1:
        raise InputError(f"max_bins = {max_bins} is too small for even the coarsest scale")
    exponents = tuple(range(1, kept + 1))
    parts = [delayed(_partition_moment_sums, pure=True)(part, i, off, view, exponents)
             for i, (part, off) in _parts_with_offsets(data)]
    (merged,), = (_compute(data, _tree_reduce(parts, _merge_moment_sums, split_every), client=client),)
    terms = np.array([m.terms(n) for m in merged])  # (scales, 5): T^d, Var₀, Σ tr A, Σ tr A², κ₃
    scales = tuple(2**b for b in exponents)
    scale_text = f"{kept} dyadic scales 2..2^{kept}"
    if kept < levels:
        note = (f"scales 2^{kept + 1}..2^{levels} omitted on Dask (merged bin sums would exceed max_bins = "
                f"{max_bins} rows); Bonferroni over the {kept} scales tested")
        warnings.warn(f"calviz.dask.adaptive_tcal: {note}", stacklevel=2)
        scale_text += f" ({note})"
    elif levels < B_paper:
        scale_text += f" (Algorithm 2's B = {B_paper}; finer scales capped)"
    t = terms[:, 0]
    if resampling == "analytic":
        # as in memory: the exact third cumulant for 1-D targets, Satterthwaite for full calibration
        moments = terms[:, 1:4].T if full else terms[:, 1:].T
        return _tcal._analytic_result(t, moments, scales, alpha, n, K, view.target, "adaptive T-Cal",
                                      f"{kind_text}; {scale_text}; scaled chi-square critical values, "
                                      "Bonferroni")
    return _threshold_result(t, scales, alpha, n, K, full, view.target,
                             f"{kind_text}; {scale_text}; Theorem 3 Chebyshev thresholds at α/B")


def _threshold_result(t, scales, alpha, n, K, full, target, reason):
    """Adaptive T-Cal with the Theorem 3 Chebyshev thresholds at α/B (as calviz.tcal.adaptive_tcal)."""
    B = len(scales)
    p = np.array([_tcal._chebyshev_pvalue(ti, m, n, K, not full) for ti, m in zip(t, scales, strict=True)])
    crit = np.array([_tcal.chebyshev_threshold(m, n, K, alpha / B, scalar=not full) for m in scales])
    padj = float(min(1.0, B * p.min()))
    return _tcal.TCalResult(bool(np.any(t >= crit)), padj, alpha, scales, t, crit, p, "threshold",
                            "bonferroni", n, K, 0, 0.0, "adaptive T-Cal", reason, target)


def _partition_scan_tcal(frame, levels: int, n: int):
    """One sorted partition (a contiguous run of the globally sorted 1-D predictions): per scale 2^b,
    b = 1..levels, the double-double T-Cal terms (hi, lo) of its interior bins and the
    :class:`calviz.tcal.MomentSums` of its first and last bins (which may continue in the neighbouring
    partitions) — one pass of the in-memory scan kernel (:func:`calviz._kernels.tcal.scan_terms`).
    Memory O(rows of the partition)."""
    from calviz._kernels import tcal as kernels

    MomentSums = _tcal.MomentSums
    z, y = _sorted_arrays(frame)
    if z.shape[0] == 0:
        return [(np.zeros(5), np.zeros(5))] * levels, [MomentSums.empty()] * levels
    split = kernels.dyadic_split_levels(z, levels)
    out_hi, out_lo, first_n, first_hi, first_lo, last_n, last_hi, last_lo = kernels.scan_terms(
        split, levels, z.reshape(-1, 1), y, kernels.SCALAR, int(n), True)
    k_first, k_last = dyadic_keys(z[[0, -1]], levels)
    interior, edges = [], []
    for b in range(1, levels + 1):
        lev = b - 1
        keys = np.array([k_first >> (levels - b), k_last >> (levels - b)], dtype=np.int64)
        rows = 2 if last_n[lev] > 0 else 1
        edges.append(MomentSums(keys[:rows], np.array([first_n[lev], last_n[lev]])[:rows],
                                np.vstack([first_hi[lev], last_hi[lev]])[:rows],
                                np.vstack([first_lo[lev], last_lo[lev]])[:rows]))
        interior.append((out_hi[:, lev].copy(), out_lo[:, lev].copy()))
    return interior, edges


def _scan_tcal_terms(data: DaskCalibrationData, view: _View, levels: int, n: int, client) -> np.ndarray:
    """(levels, 5) T-Cal terms of every scale via a global sort: interior bins of each sorted partition
    are final; the edge bins of all partitions are merged by key and then finalised; all totals are
    double-double, so the result does not depend on where the partitions were cut."""
    from calviz._kernels.tcal import add_terms

    with _partition_errors(data):
        ordered = sorted_view(data, view)
        parts = [delayed(_partition_scan_tcal, pure=True)(frame, levels, n) for frame in ordered.to_delayed()]
        results = _compute(data, *parts, client=client)
    terms = np.zeros((levels, 5))
    for b in range(levels):
        edge = None
        hi, lo = np.zeros(5), np.zeros(5)
        for interior, edges in results:
            hi, lo = add_terms(hi, lo, *interior[b])
            edge = edges[b] if edge is None else edge.merge(edges[b])
        if edge is not None:
            hi, lo = add_terms(hi, lo, *edge.partial_terms(n))
        terms[b] = _tcal.finish_terms(hi, lo, n)
    return terms


#: default cap on n_resamples × 2^b_max (cells of the dense resampled per-bin arrays of one partition)
RESAMPLE_MAX_CELLS = 2**22


def _partition_resampled(part, index, row_offset, view: _View, exponents: tuple[int, ...], n_resamples: int,
                         seed_seq):
    """Observed BinSums at every scale and the Y-only resampled per-bin sums (S*, Q*) of one partition at
    the finest scale 2^b_max (dense: n_resamples × 2^b_max)."""
    from calviz._kernels.dask_scan import y_only_bin_sums

    z, y = _partition_view(part, index, row_offset, view)
    observed = _partition_scale_sums_of(z, y, view, exponents, third=False)
    m = 2 ** exponents[-1]
    ids = dyadic_keys(z, exponents[-1])
    seed = int(np.random.SeedSequence(seed_seq.entropy, spawn_key=seed_seq.spawn_key).generate_state(1)[0])
    S, Q = y_only_bin_sums(ids, np.ascontiguousarray(z, dtype=np.float64), m, n_resamples, seed)
    return observed, S, Q


def _merge_resampled(*partials):
    observed = _merge_scale_sums(*[p[0] for p in partials])
    S = partials[0][1].copy()
    Q = partials[0][2].copy()
    for _, s, q in partials[1:]:
        S += s
        Q += q
    return observed, S, Q


def resampled_tcal(
    y_true, y_prob=None, *, alpha: float = 0.05, n_resamples: int | None = None, target: str = "auto",
    class_index: int | None = None, seed=None, max_cells: int = RESAMPLE_MAX_CELLS,
    split_every: int = SPLIT_EVERY, client=None, **columns,
):
    """Adaptive T-Cal with Y-only resampled critical values (Lee et al. 2023, App. C.3) on Dask, for 1-D
    targets.

    Every partition draws y* ~ Ber(z) for its own rows, ``n_resamples`` times, with its own child of
    ``numpy.random.SeedSequence(seed)`` (independent streams, reproducible for a given partitioning), and
    sums the resampled residuals per bin at the finest scale 2^b_max; partitions add up in a tree and the
    coarser scales come from adding nested bins.  T*_b = (1/n) Σ_bins (S*² − Q*)/N_b, the per-scale
    p-value is (1 + #{T*_b ≥ T_b})/(N + 1) and scales combine by Bonferroni, as in
    :func:`calviz.adaptive_tcal` (``resampling="y_only"``) — the same test, with a different random stream,
    so the numbers agree with the in-memory ones in distribution, not digit for digit.

    Limits (documented): work O(N n) (each resample touches every row); the resampled per-bin sums are
    dense arrays of N × 2^b_max cells per partial result, so only the scales with N · 2^b ≤ ``max_cells``
    are tested (Bonferroni over those; ``reason`` says which); no discrete-predictor binomial test here
    (use :func:`adaptive_tcal`, which detects it).
    """
    import warnings

    alpha = check_alpha(alpha)
    data = as_dask_data(y_true, y_prob, **columns)
    if target == "classwise" and class_index is None:
        raise InputError("calviz.dask.resampled_tcal needs class_index for target='classwise'")
    view = _resolve_view(data, target, 1, 0 if class_index is None else class_index)
    if view.target not in ("binary", "top1", "classwise"):
        raise InputError("resampled T-Cal on Dask is available for 1-D targets (binary, top1, classwise); "
                         "use resampling='analytic' for target='full'")
    entropy = _seed_entropy(seed)
    items = _parts_with_offsets(data)
    counts = _compute(data, *[delayed(_partition_count, pure=True)(part, i, off, view)
                              for i, (part, off) in items], client=client)
    n = int(sum(c[0] for c in counts))
    _check_n(n)
    _, levels = _tcal.dyadic_scales(n, 2)
    if levels < 1:
        raise InputError(f"n = {n} is too small for even one dyadic scale")
    N = _tcal._default_resamples(levels, alpha, "bonferroni") if n_resamples is None else \
        _tcal._check_n_resamples(n_resamples)
    kept = 0
    for b in range(1, levels + 1):
        if N * 2**b > max_cells:
            break
        kept = b
    if kept < 1:
        raise InputError(f"max_cells = {max_cells} is too small for {N} resamples at the coarsest scale")
    exps = tuple(range(1, kept + 1))
    floor = kept / (N + 1)
    if floor > alpha:
        warnings.warn(f"n_resamples = {N} is too few: the smallest attainable p-value is {floor:.3g} > "
                      f"alpha = {alpha:g} (Bonferroni over {kept} scales); use n_resamples ≥ "
                      f"{math.ceil(kept / alpha)}", stacklevel=2)
    part_seqs = np.random.SeedSequence(entropy).spawn(len(items))
    tasks = [delayed(_partition_resampled, pure=True)(part, i, off, view, exps, N, part_seqs[i])
             for i, (part, off) in items]
    (observed, S, Q), = _compute(data, _tree_reduce(tasks, _merge_resampled, split_every), client=client)
    t_obs = np.array([debiased_ece_sq(s) for s, _ in observed])
    boot = np.empty((N, kept))
    for j in range(kept - 1, -1, -1):  # finest first; coarser scales add pairs of nested bins
        m = 2 ** exps[j]
        if S.shape[1] != m:
            S = S.reshape(N, m, -1).sum(axis=2)
            Q = Q.reshape(N, m, -1).sum(axis=2)
        counts_b = np.zeros(m)
        sums_b = observed[j][0]
        counts_b[sums_b.keys] = sums_b.count
        live = counts_b > 0
        boot[:, j] = ((S[:, live] ** 2 - Q[:, live]) / counts_b[live]).sum(axis=1) / n
    # p-values, critical values and the Bonferroni decision as in calviz.tcal.adaptive_tcal
    sd = np.sqrt(np.concatenate([boot, t_obs[None, :]]).var(axis=0))
    tol = _tcal._TIE_RTOL * (np.abs(t_obs) + sd)
    exceed = (boot >= (t_obs - tol)[None, :]).sum(axis=0)
    p = (1.0 + exceed) / (N + 1.0)
    jth = math.floor(alpha * (N + 1) / kept + 1e-12) - 1
    crit = np.full(kept, np.inf) if jth < 0 else -np.sort(-boot, axis=0)[min(jth, N - 1)]
    padj = float(min(1.0, kept * p.min()))
    scale_text = f"{kept} dyadic scales 2..2^{kept}"
    if kept < levels:
        scale_text += (f" (scales 2^{kept + 1}..2^{levels} omitted on Dask: {N} resamples × 2^b cells would "
                       f"exceed max_cells = {max_cells}; Bonferroni over the {kept} scales tested)")
    reason = (f"{view.target} calibration; {scale_text}; y-only resampling ({N} resamples, drawn per "
              f"partition with independent SeedSequence streams), bonferroni")
    scales = tuple(2**b for b in exps)
    return _tcal.TCalResult(bool(p.min() <= alpha / kept), padj, alpha, scales, t_obs, crit, p, "y_only",
                            "bonferroni", n, 2, N, float(min(1.0, floor)), "adaptive T-Cal", reason,
                            view.target)


# ------------------------------------------------------------------------------------------------
# Laplace kernel calibration error: global sort + scan across partitions
# ------------------------------------------------------------------------------------------------
def _scalar_view(data: DaskCalibrationData, target: str, class_index: int) -> _View:
    view = _resolve_view(data, target, 1, class_index)
    if view.target not in ("binary", "top1", "classwise"):
        raise InputError(
            f"target {view.target!r} is multi-dimensional; the distance measures are defined for scalar "
            "predictions: use target='top1' (confidence) or target='classwise' with class_index")
    return view


def _partition_view_frame(part, index, row_offset, view: _View):
    import pandas as pd

    z, y = _partition_view(part, index, row_offset, view)
    return pd.DataFrame({"v": z, "y": y})


def sorted_view(data: DaskCalibrationData, view: _View):
    """The scalar view as a dask DataFrame with columns v (prediction) and y (label), globally sorted by v
    (``sort_values``: sampled quantiles, a shuffle, then sorted partitions)."""
    import dask.dataframe as dd
    import pandas as pd

    frames = [delayed(_partition_view_frame, pure=True)(part, i, off, view)
              for i, (part, off) in _parts_with_offsets(data)]
    meta = pd.DataFrame({"v": np.empty(0), "y": np.empty(0)})
    return dd.from_delayed(frames, meta=meta, verify_meta=False).sort_values("v")


def _sorted_arrays(frame) -> tuple[np.ndarray, np.ndarray]:
    v = np.ascontiguousarray(frame["v"].to_numpy(dtype=np.float64))
    y = np.ascontiguousarray(frame["y"].to_numpy(dtype=np.float64))
    if v.shape[0] > 1 and np.any(v[1:] < v[:-1]):  # pragma: no cover - sort_values guarantees order
        raise RuntimeError("partition of the sorted data is not sorted")
    return v, y


def _run_summary(frame, inv_h: float):
    from calviz._kernels.dask_scan import laplace_run_summary

    v, y = _sorted_arrays(frame)
    total, tail, head = laplace_run_summary(v, np.ascontiguousarray(y - v), inv_h)
    first = float(v[0]) if v.shape[0] else np.nan
    last = float(v[-1]) if v.shape[0] else np.nan
    return int(v.shape[0]), first, last, float(total), float(tail), float(head)


def _combine_runs(summaries, inv_h: float) -> tuple[int, float]:
    """Prefix combination of the per-run summaries: the left sum carried into run p is
    C_p = e^{−(v_first,p − v_last,p−1)/h} (C_{p−1} e^{−(v_last,p−1 − v_first,p−1)/h} + tail_{p−1}), and
    the cross terms between run p and all earlier runs are 2 C_p head_p (every factor ≤ 1)."""
    n = 0
    total = 0.0
    comp = 0.0
    carry = 0.0  # left sum at the last point of the previous non-empty run
    prev_last = None
    for count, first, last, run_total, tail, head in summaries:
        if count == 0:
            continue
        n += count
        into = 0.0 if prev_last is None else carry * math.exp(-(first - prev_last) * inv_h)
        for term in (run_total, 2.0 * into * head):
            t = total + term
            comp += (total - t) + term if abs(total) >= abs(term) else (term - t) + total
            total = t
        carry = into * math.exp(-(last - first) * inv_h) + tail
        prev_last = last
    return n, total + comp


def laplace_kce(
    y_true, y_prob=None, *, bandwidth: float = 1.0, squared: bool = False, target: str = "auto",
    class_index: int = 0, client=None, **columns,
):
    """Distributed :func:`calviz.laplace_kce`, exact (Błasiok et al. 2023, Sec. 8):
    kCE² = (1/n²) Σ_{i,j} r_i r_j e^{−|v_i − v_j|/h}, r = y − v.

    Pass 1: a global sort of (v, y) by v (``dask.dataframe`` ``sort_values``).  Pass 2: every sorted
    partition (a contiguous run) returns its own double sum, its left sum at its last point ("tail") and
    its residuals discounted to its first point ("head") (:mod:`calviz._kernels.dask_scan`); the client
    carries the exponential sums across partition boundaries (:func:`_combine_runs`).  O(n log n) work,
    O(P) data on the client."""
    distance = importlib.import_module("calviz.distance")
    h = distance._positive(bandwidth, "bandwidth")
    data = as_dask_data(y_true, y_prob, **columns)
    view = _scalar_view(data, target, class_index)
    inv_h = 1.0 / h
    with _partition_errors(data):
        ordered = sorted_view(data, view)
        runs = [delayed(_run_summary, pure=True)(frame, inv_h) for frame in ordered.to_delayed()]
        summaries = _compute(data, *runs, client=client)
    n, total = _combine_runs(summaries, inv_h)
    _check_n(n)
    sq = max(total / (float(n) * float(n)), 0.0)
    return distance.KCEResult(sq if squared else math.sqrt(sq), h, bool(squared), n, view.target)


# ------------------------------------------------------------------------------------------------
# smCE, SintCE, dCE_lower on a uniform subsample, with the sampling error (Błasiok et al. 2023, §9)
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class SubsampleEstimate(ResultMixin):
    """A distance-to-calibration measure computed on a uniform subsample of the distributed data.

    ``value``: the measure of the subsample (``result`` holds the in-memory result object computed on it);
    [``low``, ``high``]: where the measure of the *full data* lies with probability ≥ ``confidence`` over
    the draw of the subsample, by the bound named in ``bound`` (Błasiok et al. 2023, §9 with explicit
    constants, see :func:`subsample_measure`); ``error_bound`` = max(value − low, high − value);
    ``sample_size`` rows drawn uniformly *with replacement* (i.i.d. from the empirical distribution of the
    ``n`` rows) with ``seed``.  A statement about the sampling error only: the full-data value is itself an
    empirical quantity.
    """

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


def _partition_count(part, index, row_offset, view: _View):
    z, y = _partition_view(part, index, row_offset, view)
    return int(z.shape[0]), float(np.sum(y))


def _partition_draw(part, index, row_offset, view: _View, size: int, seed_seq):
    z, y = _partition_view(part, index, row_offset, view)
    if size == 0:
        return np.empty(0), np.empty(0)
    idx = np.random.default_rng(seed_seq).integers(0, z.shape[0], size=size)
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


def uniform_subsample(
    y_true, y_prob=None, *, size: int, seed=None, target: str = "auto", class_index: int = 0, client=None,
    **columns,
) -> tuple[np.ndarray, np.ndarray, int, float, int]:
    """``size`` rows drawn uniformly with replacement from the scalar view of distributed data.

    Pass 1 counts the rows of every partition (and the labels); the draws are allocated to partitions by
    one multinomial draw; each partition draws its rows with its own child of
    ``numpy.random.SeedSequence(seed)`` (reproducible, independent of the scheduler).  Returns
    (z, y, n, fraction of label 1 in the full data, seed)."""
    k = int(size)
    if isinstance(size, bool) or k != size or k < 2:
        raise InputError(f"size must be an integer >= 2; got {size!r}")
    entropy = _seed_entropy(seed)
    data = as_dask_data(y_true, y_prob, **columns)
    view = _scalar_view(data, target, class_index)
    items = _parts_with_offsets(data)
    counts = _compute(data, *[delayed(_partition_count, pure=True)(part, i, off, view)
                              for i, (part, off) in items], client=client)
    lengths = np.array([c[0] for c in counts], dtype=np.int64)
    n = int(lengths.sum())
    _check_n(n)
    positive = float(sum(c[1] for c in counts)) / n
    alloc_seq, *part_seqs = np.random.SeedSequence(entropy).spawn(len(items) + 1)
    if k >= n:  # the "subsample" would be as large as the data: take every row once (exact, no error)
        rows = _compute(data, *[delayed(_partition_view, pure=True)(part, i, off, view)
                                for i, (part, off) in items], client=client)
        return (np.concatenate([r[0] for r in rows]), np.concatenate([r[1] for r in rows]), n, positive,
                entropy, True)
    draws = np.random.default_rng(alloc_seq).multinomial(k, lengths / n)
    tasks = [delayed(_partition_draw, pure=True)(part, i, off, view, int(draws[i]), part_seqs[i])
             for i, (part, off) in items]
    picked = _compute(data, *tasks, client=client)
    z = np.concatenate([p[0] for p in picked])
    y = np.concatenate([p[1] for p in picked])
    return z, y, n, positive, entropy, False


def subsample_measure(
    measure: str, y_true, y_prob=None, *, size: int = 200_000, delta: float = 0.05, seed=None,
    target: str = "auto", class_index: int = 0, client=None, measure_options: dict | None = None, **columns,
) -> SubsampleEstimate:
    """smCE / SintCE / dCE_lower (``measure`` = "smce", "sintce", "lower_dce") of distributed data on a
    uniform subsample S of k = ``size`` rows (with replacement), with a 1 − δ bound on the sampling error
    |measure(S) − measure(full data)|.  These measures need the whole sorted sample in one place; the
    subsample is computed in memory by :mod:`calviz.distance`.

    Bounds (Błasiok et al. 2023, §9: Thm 9.5 / Cor. 9.9 for smCE, Thm 9.10 with Lemmas 9.11-9.14 for
    dCE_lower — the paper states rates; the constants below follow the same proofs with explicit
    inequalities). P is the full data, π its fraction of label 1, k_y the subsample's rows with label y:

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
    distance = importlib.import_module("calviz.distance")
    d = check_alpha(delta, "delta")
    z, y, n, pi, entropy, complete = uniform_subsample(y_true, y_prob, size=size, seed=seed, target=target,
                                                       class_index=class_index, client=client, **columns)
    k = int(z.shape[0])
    labels = y.astype(np.int64)
    options = dict(measure_options or {})
    view_target = _scalar_view(as_dask_data(y_true, y_prob, **columns), target, class_index).target
    if measure == "smce":
        res = distance.smce(labels, z, **options)
        value = float(res.value)
        err = 2.0 * (1.0 + math.sqrt(pi * (1.0 - pi))) / math.sqrt(k) + math.sqrt(2.0 * math.log(1.0 / d) / k)
        low, high = max(value - err, 0.0), value + err
        bound = ("|smCE(S) − smCE(P)| ≤ 2(1+√(π(1−π)))/√k + √(2 ln(1/δ)/k) (Błasiok et al. 2023, "
                 "Thm 9.5 / Cor 9.9 route: 2-Lipschitz class ⇒ W₁, McDiarmid)")
    elif measure == "lower_dce":
        res = distance.lower_dce(labels, z, **options)
        value = float(res.value)
        k1 = int(labels.sum())
        k0 = k - k1
        err = 2.0 * math.sqrt(math.log(6.0 / d) / (2.0 * k))
        for p_y, k_y in ((1.0 - pi, k0), (pi, k1)):
            if p_y > 0:
                err += math.inf if k_y == 0 else p_y * (0.5 / math.sqrt(k_y) + math.sqrt(math.log(3.0 / d)
                                                                                       / (2.0 * k_y)))
        err += float(res.error_bound)
        low, high = max(value - err, 0.0), value + err
        bound = ("|dCE(S) − dCE(P)| ≤ Σ_y π_y W₁(μ_y, μ̂_y) + 2|π̂ − π| (Błasiok et al. 2023, "
                 "Lemmas 9.11-9.14) + the LP grid error 2ε")
    elif measure == "sintce":
        res = distance.sintce(labels, z, **options)
        value = float(res.value)
        widths = np.asarray(res.widths, dtype=np.float64)
        rint = np.asarray(res.rintce_values, dtype=np.float64)
        L = max(int(widths.shape[0]), 1)
        dev = (np.sqrt((np.ceil(1.0 / widths) + 1.0) / k) + math.sqrt(2.0 * math.log(L / d) / k))
        high = float(np.min(rint + widths + dev))
        low = max(float(min(np.min(rint + widths - dev), rint[-1] - dev[-1])), 0.0)
        err = max(value - low, high - value)
        bound = ("RintCE_S(ε) ± [√((⌈1/ε⌉+1)/k) + √(2 ln(L/δ)/k)] per width (union over L widths), "
                 "monotone in the width (Błasiok et al. 2023, Def. 6.10; §9-style bound)")
    else:
        raise InputError(f"measure must be 'smce', 'sintce' or 'lower_dce'; got {measure!r}")
    if complete:  # every row was used: the value is the full-data value
        low, high = (float(res.lower), float(res.upper)) if measure == "lower_dce" else (value, value)
        err = float(res.error_bound) if measure == "lower_dce" else 0.0
        bound = "all rows used (no subsampling)" + ("; LP grid error only" if measure == "lower_dce" else "")
    result = dataclasses.replace(res, target=view_target) if hasattr(res, "target") else res
    return SubsampleEstimate(measure, value, float(low), float(high), float(err), 1.0 - d, k, n, entropy,
                             bound, view_target, result)


def smce(y_true, y_prob=None, *, size: int = 200_000, delta: float = 0.05, seed=None, target: str = "auto",
         class_index: int = 0, client=None, **columns) -> SubsampleEstimate:
    """smCE of distributed data on a uniform subsample with its sampling error (see
    :func:`subsample_measure`)."""
    return subsample_measure("smce", y_true, y_prob, size=size, delta=delta, seed=seed, target=target,
                             class_index=class_index, client=client, **columns)


def sintce(y_true, y_prob=None, *, size: int = 200_000, delta: float = 0.05, seed=None, target: str = "auto",
           class_index: int = 0, client=None, **columns) -> SubsampleEstimate:
    """SintCE of distributed data on a uniform subsample with its sampling error (see
    :func:`subsample_measure`)."""
    return subsample_measure("sintce", y_true, y_prob, size=size, delta=delta, seed=seed, target=target,
                             class_index=class_index, client=client, **columns)


def lower_dce(y_true, y_prob=None, *, size: int = 200_000, delta: float = 0.05, grid_step: float = 1e-3,
              seed=None, target: str = "auto", class_index: int = 0, client=None,
              **columns) -> SubsampleEstimate:
    """dCE_lower of distributed data on a uniform subsample with its sampling error (see
    :func:`subsample_measure`)."""
    return subsample_measure("lower_dce", y_true, y_prob, size=size, delta=delta, seed=seed, target=target,
                             class_index=class_index, client=client, measure_options={"grid_step": grid_step},
                             **columns)


# ------------------------------------------------------------------------------------------------
# one entry point for the CLI (`calviz check`) and the dashboard
# ------------------------------------------------------------------------------------------------
def _partition_summary(part, index, row_offset):
    """(rows, correct predictions, sum of confidences) with the definitions of
    :class:`calviz.analysis.DataSummary` (binary: predicted class 1 iff p ≥ 0.5, confidence max(p, 1−p))."""
    data = _validate_partition(part, index, row_offset)
    if data.n == 0:
        return 0, 0.0, 0.0
    if data.is_binary:
        pred = (data.probs >= 0.5).astype(np.int64)
        conf = np.maximum(data.probs, 1.0 - data.probs)
        return data.n, float(np.sum(pred == data.labels)), float(np.sum(conf))
    conf, correct = data.top1()
    return data.n, float(correct.sum()), float(conf.sum())


@contextlib.contextmanager
def _scheduler(scheduler):
    """None: the current dask scheduler (a default distributed Client if one exists); "local": a temporary
    2-process LocalCluster; an address "tcp://host:port": a Client to that scheduler; a Client: itself."""
    if scheduler is None:
        yield None
        return
    import distributed

    if isinstance(scheduler, distributed.Client):
        yield scheduler
        return
    if scheduler == "local":
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
            yield c
        return
    if not isinstance(scheduler, str):
        raise InputError(f"scheduler must be None, 'local', an address like 'tcp://host:8786' or a Client; "
                         f"got {scheduler!r}")
    try:
        client = distributed.Client(scheduler, timeout="10s")
    except OSError as exc:
        raise InputError(f"could not connect to the Dask scheduler at {scheduler!r}: {exc}") from None
    with client:
        yield client


#: persistent clients of :func:`get_client` (one per scheduler address; "local" = one LocalCluster)
_CLIENTS: dict = {}
_CLIENTS_LOCK = threading.Lock()


def get_client(scheduler: str):
    """A long-lived ``distributed.Client`` for ``scheduler`` (``"local"``: one 2-process LocalCluster for
    this Python process, created at first use; ``"tcp://host:port"``: a connection to that scheduler),
    shared by every caller in the process — the dashboard's sessions share the connection, not any
    state.  The client is not made dask's default scheduler; calviz passes it explicitly."""
    import distributed

    if not isinstance(scheduler, str) or not scheduler:
        raise InputError(f"scheduler must be 'local' or an address like 'tcp://host:8786'; got {scheduler!r}")
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(scheduler)
        if client is not None and client.status in ("running", "connecting"):
            return client
        try:
            if scheduler == "local":
                cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                                   dashboard_address=None)
                client = distributed.Client(cluster, set_as_default=False)
            else:
                client = distributed.Client(scheduler, timeout="10s", set_as_default=False)
        except OSError as exc:
            raise InputError(f"could not connect to the Dask scheduler at {scheduler!r}: {exc}") from None
        if not _CLIENTS:
            atexit.register(_close_clients)
        _CLIENTS[scheduler] = client
        return client


def _close_clients() -> None:
    """Close the clients (and the LocalCluster) of :func:`get_client` before the interpreter exits, so the
    workers stop cleanly instead of being killed mid-task."""
    with _CLIENTS_LOCK:
        for client in _CLIENTS.values():
            cluster = getattr(client, "cluster", None)
            with contextlib.suppress(Exception):
                client.close()
            if cluster is not None:
                with contextlib.suppress(Exception):
                    cluster.close()
        _CLIENTS.clear()


#: views computed on all rows of distributed data, and the ones that need the whole sample in memory
DASK_VIEWS = ("reliability", "tcal", "tcal_resampled", "interval", "distance")
_NOT_ON_DASK = {
    "smooth": "the smooth diagram needs the whole sample in one process",
    "smooth_curve": "the smooth diagram needs the whole sample in one process",
    "bootstrap": "the bootstrap resamples the whole sample; the asymptotic interval is computed instead",
    "classical": "the classical tests and the ACE sort the whole sample",
}


def _targets(data: DaskCalibrationData, options) -> tuple[str, str, int]:
    """(target, scalar target, class index) with the in-memory rules of
    :func:`calviz.analysis.resolve_target` / :func:`calviz.analysis.analysis_view`."""
    target = resolve_target(data, options)
    return target, scalar_target(data, target), min(int(options.class_index), data.n_classes - 1)


def compute_view(view: str, data: DaskCalibrationData, options, *, client=None,
                 distance_sample: int = 200_000):
    """One view of :mod:`calviz.analysis` (same name, same result object) computed on distributed data.

    Returns ``(result, note)``: ``note`` (or None) says how the result differs from the in-memory one —
    equal-width bins instead of equal-mass, or distance measures from a uniform subsample of
    ``distance_sample`` rows with their sampling error (Błasiok et al. 2023, §9).  Raises :class:`InputError`
    for a view that is not available on Dask (:data:`_NOT_ON_DASK`) or refuses the input."""
    if view in _NOT_ON_DASK:
        raise InputError(f"not available on Dask: {_NOT_ON_DASK[view]}")
    target, scalar_target, class_index = _targets(data, options)
    if view == "reliability":
        note = None
        if options.scheme != "equal_width":
            note = "equal-mass bins need global quantiles; equal-width bins are used on Dask"
        if not _analysis.scalar_reliability(data, options):  # one diagram per rank / per class
            return multi_reliability(data, target=target, top_k=int(options.top_k),
                                     n_bins=int(options.n_bins), alpha=options.alpha, client=client), note
        return reliability(data, n_bins=int(options.n_bins), alpha=options.alpha, target=scalar_target,
                           class_index=class_index, client=client), note
    tcal_target = target if target in ("binary", "top1", "classwise", "full") else "full"
    tcal_class = class_index if tcal_target == "classwise" else None
    if view == "tcal":
        return adaptive_tcal(data, alpha=options.alpha, resampling="analytic", target=tcal_target,
                             class_index=tcal_class, client=client), None
    if view == "tcal_resampled":
        if options.resampling != "y_only" or tcal_target == "full":
            raise InputError(f"resampling {options.resampling!r} for the {tcal_target} target is not "
                             "available on Dask (y_only is, for 1-D targets); the analytic test is shown")
        # as in memory, options.n_resamples is for the bootstrap views: T-Cal's own default count
        # max(999, ⌈2B/α⌉) keeps a rejection possible at every n (500 resamples cannot reach α/B at B ≥ 26)
        return resampled_tcal(data, alpha=options.alpha, n_resamples=None,
                              target=tcal_target, class_index=tcal_class, seed=int(options.seed),
                              client=client), None
    if view == "interval":
        if target in ("topk", "full"):
            k = data.n_classes if target == "full" else min(int(options.top_k), data.n_classes)
            return ece_interval(data, n_bins=int(options.n_bins), alpha=options.alpha, top_k=k,
                                client=client), None
        return ece_interval(data, n_bins=int(options.n_bins), alpha=options.alpha, target=scalar_target,
                            class_index=class_index, client=client), None
    if view == "distance":
        distance = importlib.import_module("calviz.distance")
        size = int(options.n) if options.n is not None else int(distance_sample)
        z, y, n_all, _, entropy, complete = uniform_subsample(
            data, size=size, seed=int(options.seed), target=scalar_target, class_index=class_index,
            client=client)
        bounds = distance.distance_bounds(y.astype(np.int64), z)
        if complete:
            return (bounds, None), None
        k = int(z.shape[0])
        pi = float(np.mean(y))
        smce_err = (2.0 * (1.0 + math.sqrt(pi * (1.0 - pi))) / math.sqrt(k)
                    + math.sqrt(2.0 * math.log(20.0) / k))
        note = (f"distance measures computed on a uniform subsample of {k:,} of {n_all:,} rows (with "
                f"replacement, seed {entropy}); e.g. smCE sampling error ≤ {smce_err:.3g} with probability "
                "0.95 (Błasiok et al. 2023, §9; see calviz.dask.subsample_measure for smCE, SintCE, "
                "dCE_lower bounds)")
        return (bounds, None), note
    raise InputError(f"unknown view {view!r}")


def _summary_counts(data: DaskCalibrationData, client) -> tuple[int, float, float]:
    """(rows, correct predictions, sum of confidences) over all partitions — one pass that also validates
    every partition."""
    summaries = _compute(data, *[delayed(_partition_summary, pure=True)(part, i, off)
                                 for i, (part, off) in _parts_with_offsets(data)], client=client)
    n = sum(s[0] for s in summaries)
    _check_n(n)
    return n, sum(s[1] for s in summaries), sum(s[2] for s in summaries)


@dataclass(frozen=True, repr=False)
class DistributedSource:
    """Distributed predictions the dashboard and :func:`analyze_parquet` analyse in place: the data, the
    client that computes on it and the counts of one validating pass (so ``n`` is known).

    Every view of :mod:`calviz.analysis` goes through :meth:`compute_view` (:func:`compute_view`); the
    views that need the whole sample in memory (smooth diagram, bootstrap interval) are refused with the
    reason, and the distance measures use a uniform subsample whose sampling error is stated."""

    data: DaskCalibrationData
    client: Any
    scheduler: str
    n: int
    correct: float
    confidence_sum: float
    distance_sample: int = 200_000
    #: the dashboard's cache keys and the report use this like CalibrationData's
    distributed = True

    @property
    def n_classes(self) -> int:
        return self.data.n_classes

    @property
    def is_binary(self) -> bool:
        return self.data.is_binary

    @property
    def source(self) -> str:
        return self.data.source

    def __repr__(self) -> str:
        kind = "binary" if self.is_binary else f"{self.n_classes}-class"
        return (f"DistributedSource({self.source}, {kind}, n={self.n:,}, npartitions={self.data.npartitions},"
                f" scheduler={self.scheduler!r})")

    def compute_view(self, view: str, options):
        """``(result, note)`` of one analysis view on all rows (see :func:`compute_view`)."""
        return compute_view(view, self.data, options, client=self.client,
                            distance_sample=self.distance_sample)

    def data_summary(self, options):
        """The :class:`calviz.analysis.DataSummary` of all rows."""
        return _analysis.DataSummary(
            n=self.n, n_total=self.n, n_classes=self.n_classes, is_binary=self.is_binary,
            target=_targets(self.data, options)[0], accuracy=self.correct / self.n,
            mean_confidence=self.confidence_sum / self.n)


def _open_data(path, y_true, y_prob, prob_prefix) -> DaskCalibrationData:
    """A Parquet path (file, directory, glob, list) or any input of :func:`as_dask_data`."""
    if isinstance(path, DaskCalibrationData):
        return path
    if isinstance(path, (str, os.PathLike, list, tuple)):
        return from_parquet(path, y_true=y_true, y_prob=y_prob, prob_prefix=prob_prefix)
    return as_dask_data(path, y_true_column=y_true, y_prob_columns=y_prob)


def open_source(path, *, scheduler: str | None = None, y_true: str | None = None,
                y_prob: str | Sequence[str] | None = None, prob_prefix: str | None = None,
                distance_sample: int = 200_000, client=None) -> DistributedSource:
    """Open distributed predictions for the dashboard: a Parquet file / directory / glob (or any input of
    :func:`as_dask_data`) on the scheduler ``scheduler`` ("local" — the default — or "tcp://host:port", see
    :func:`get_client`; or pass a ``distributed.Client`` as ``client``).  Reads the schema, then validates
    every partition in one pass (an :class:`InputError` names the partition and row of the first bad value)
    and counts the rows."""
    data = _open_data(path, y_true, y_prob, prob_prefix)
    if client is None:
        scheduler = scheduler or "local"
        client = get_client(scheduler)
    n, correct, confidence = _summary_counts(data, client)
    name = scheduler or str(getattr(client, "scheduler", None) and client.scheduler.address)
    return DistributedSource(data, client, name, n, correct, confidence, int(distance_sample))


def analyze_parquet(
    path, *, scheduler=None, y_true: str | None = None, y_prob: str | Sequence[str] | None = None,
    prob_prefix: str | None = None, options=None, distance_sample: int = 200_000, **option_values,
):
    """Analyse a Parquet file / directory / glob (or any input of :func:`as_dask_data`) on Dask and return
    a :class:`calviz.analysis.Analysis` — the object the dashboard, the report and ``calviz check`` read.

    ``scheduler``: None (current dask scheduler), ``"local"`` (temporary 2-process LocalCluster), a
    scheduler address ``"tcp://host:8786"`` or a ``distributed.Client``.  ``y_true`` / ``y_prob``: column
    names (detected when None).  ``options``: a :class:`calviz.analysis.AnalysisOptions` (keywords override
    its fields).  Computed on all rows (:func:`compute_view`): reliability, analytic adaptive T-Cal, the
    Sun et al. (2024) interval (one or two passes each).  The distance bounds (smCE, dCE_lower, SintCE, kCE,
    ...) need the whole sorted sample: they are computed on a uniform subsample of ``distance_sample`` rows
    (or ``options.n``) — said in ``errors["distance_note"]`` with the sampling errors of
    :func:`subsample_measure`.  ``options.resampling == "y_only"`` adds :func:`resampled_tcal` (1-D
    targets) as ``tcal_resampled``.  Not available on Dask (``None`` with the reason in ``errors``): the
    smooth diagram, the bootstrap interval, consistency resampling.  ``prob_prefix``: probability columns
    ``<prefix>0..<prefix>K-1``.
    """
    import time

    opts = options or _analysis.AnalysisOptions()
    if option_values:
        opts = opts.replace(**option_values)
    data = _open_data(path, y_true, y_prob, prob_prefix)
    results: dict[str, Any] = {}
    timings: dict[str, float] = {}
    errors: dict[str, str] = {}

    with _scheduler(scheduler) as client:
        t0 = time.perf_counter()
        n, correct, confidence = _summary_counts(data, client)
        source = DistributedSource(data, client, "client", n, correct, confidence, int(distance_sample))
        summary = source.data_summary(opts)
        timings["summary"] = time.perf_counter() - t0
        # (the views Dask cannot compute — smooth, bootstrap, classical — are run too: they report why)
        views = [v for v in (*DASK_VIEWS, "smooth", "bootstrap", "classical")
                 if v != "tcal_resampled" or opts.resampling != "analytic"]
        for view in views:
            result, seconds, message = _analysis.run_view(view, source, opts)
            timings[view] = seconds
            if message:
                errors[view if result is None else f"{view}_note"] = message
            if view == "distance":
                results["distance"], results["witness"] = result if result is not None else (None, None)
            else:
                results[view] = result
    return _analysis.Analysis(options=opts, summary=summary, timings=timings, errors=errors, **results)
