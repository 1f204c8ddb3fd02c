"""Distributed input: dask arrays, dask DataFrames and Parquet as partitions of (y_true, y_prob), validated
partition by partition with the in-memory rules, and the map / tree-reduce / gather plumbing."""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

import dask
import numpy as np
from dask.delayed import Delayed, delayed

from calviz._data import CalibrationData, InputError, as_calibration_data, check_unique_columns
from calviz._params import as_generator
from calviz._sums import BinSums
from calviz.io import COLUMN_NAMES, select_columns
from calviz.targets import Target

#: fan-in of the tree reductions (how many partial results one task merges)
SPLIT_EVERY = 8
_ROW = re.compile(r"\brow (\d+)")


class PartitionInputError(InputError):
    """Bad input in one partition: the in-memory message, the partition and the row inside it (raised on a
    worker; the client re-raises it as an :class:`InputError` naming the global row)."""

    def __init__(self, message: str, partition: int, local_row: int | None, row_offset: int | None):
        super().__init__(message)
        self.message, self.partition, self.local_row, self.row_offset = (message, partition, local_row,
                                                                         row_offset)

    def __reduce__(self):  # exceptions pickle their args only; keep all four fields across processes
        return type(self), (self.message, self.partition, self.local_row, self.row_offset)

    def __str__(self) -> str:
        return _locate(self.message, self.partition, self.row_offset)


def _locate(message: str, partition: int, row_offset: int | None) -> str:
    """The in-memory message ("... row 17 ...") naming the global row and the partition."""

    def repl(match: re.Match) -> str:
        local = int(match.group(1))
        if row_offset is None:
            return f"row {local} of partition {partition}"
        return f"row {row_offset + local} (partition {partition}, row {local} within it)"

    located, count = _ROW.subn(repl, message, count=1)
    return located if count else f"{message} (in partition {partition})"


@dataclass(frozen=True, repr=False)
class DaskCalibrationData:
    """Lazily evaluated, partitioned (y_true, y_prob).

    ``parts``: one ``dask.delayed`` per partition evaluating to the numpy pair ``(y_true, y_prob)`` (not
    yet validated); ``lengths``: rows per partition when known without reading the data; ``n_classes``:
    K (2 for 1-D binary ``y_prob``); ``is_binary``: 1-D ``y_prob``; ``source``: a name for messages."""

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
        lengths = self.lengths or dask.compute(*[delayed(len)(part[0]) for part in self.parts])
        return np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)[:-1])).tolist() if self.parts else []

    def schema(self):
        """Two rows of the same kind (binary or K classes): the in-memory functions check the options and
        resolve the target and bins on them, on the client, before any partition is read."""
        if self.is_binary:
            return np.array([0, 1]), np.array([0.5, 0.5])
        return np.array([0, 1]), np.full((2, self.n_classes), 1.0 / self.n_classes)


def _column_values(frame, columns):
    """Numeric columns as float64 with missing values as NaN (the validation names them), anything else
    as it is, for the in-memory rules to refuse or accept with their own messages."""
    import pandas as pd

    selected = frame[columns]
    kinds = [selected.dtype] if isinstance(columns, str) else list(selected.dtypes)
    if all(pd.api.types.is_numeric_dtype(d) and not pd.api.types.is_bool_dtype(d) for d in kinds):
        return selected.to_numpy(dtype=np.float64, na_value=np.nan)
    if all(pd.api.types.is_bool_dtype(d) for d in kinds):
        return selected.to_numpy(dtype=bool)
    return selected.to_numpy(dtype=object, na_value=None)


def _frame_part(frame, label: str, probs):
    return _column_values(frame, label), _column_values(frame, probs)


def from_dataframe(frame, *, y_true: str | None = None, y_prob: str | Sequence[str] | None = None,
                   prob_prefix: str | None = None, source: str = "dask dataframe") -> DaskCalibrationData:
    """Distributed predictions from the columns of a dask DataFrame.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
    y_true, y_prob, prob_prefix : str, optional
        The columns, found as by :func:`calviz.io.read_predictions`: ``y_true`` + ``y_prob`` (binary),
        ``y_true`` + ``p_0..p_{K-1}``, or ``correct`` + ``confidence``.  A list as ``y_prob`` names the K
        probability columns.
    source : str
        A name for messages.

    Returns
    -------
    DaskCalibrationData
        Lazy: nothing is read until a driver computes.
    """
    found = list(frame.columns)
    check_unique_columns(found)
    given = {"y_true": y_true, "y_prob": y_prob, "prob_prefix": prob_prefix}
    names = {**COLUMN_NAMES, **{k: v for k, v in given.items() if v is not None}}
    label, probs = select_columns(found, names)
    probs = probs[0] if len(probs) == 1 else probs  # one column: binary P(y = 1) or the confidence
    frame = frame[[label] + ([probs] if isinstance(probs, str) else probs)]
    parts = tuple(delayed(_frame_part, pure=True)(p, label, probs) for p in frame.to_delayed())
    binary = isinstance(probs, str)
    return DaskCalibrationData(parts, None, 2 if binary else len(probs), binary, source)


def from_parquet(path, *, y_true: str | None = None, y_prob: str | Sequence[str] | None = None,
                 prob_prefix: str | None = None, **read_parquet_kwargs) -> DaskCalibrationData:
    """Distributed predictions in a Parquet file, directory, glob or list of files.

    Parameters
    ----------
    path : str, path or list
        Read lazily with ``dask.dataframe.read_parquet`` (only the needed columns).
    y_true, y_prob, prob_prefix : optional
        The columns, as for :func:`from_dataframe`.
    **read_parquet_kwargs
        Passed to ``dask.dataframe.read_parquet``.

    Returns
    -------
    DaskCalibrationData
    """
    import dask.dataframe as dd

    path = [os.fspath(p) for p in path] if isinstance(path, (list, tuple)) else os.fspath(path)
    missing = [p for p in ([path] if isinstance(path, str) else path)
               if "://" not in p and not set("*?[") & set(p) and not os.path.exists(p)]
    if missing:
        raise InputError(f"{missing[0]}: no such file or directory")
    try:
        frame = dd.read_parquet(path, **read_parquet_kwargs)
    except (FileNotFoundError, OSError, ValueError) as exc:
        raise InputError(f"could not read Parquet data at {path!r}: {exc}") from None
    return from_dataframe(frame, y_true=y_true, y_prob=y_prob, prob_prefix=prob_prefix,
                          source=f"parquet {path!r}")


def from_dask(y_true, y_prob) -> DaskCalibrationData:
    """Distributed predictions from dask arrays (or Series), paired partition by partition.

    Parameters
    ----------
    y_true : dask array, (n,) labels or (n, K) one-hot
        With known chunk sizes rechunked to ``y_prob``'s rows, else paired by position (each pair's
        lengths are checked by the validation).
    y_prob : dask array, (n,) or (n, K)

    Returns
    -------
    DaskCalibrationData
    """
    y_true, y_prob = _as_dask_array(y_true, "y_true"), _as_dask_array(y_prob, "y_prob")
    if y_true.ndim not in (1, 2):
        raise InputError(f"y_true must be 1-D labels or a 2-D one-hot array; got shape {y_true.shape}")
    if y_prob.ndim not in (1, 2):
        raise InputError(f"y_prob must be 1-D (binary) or 2-D (n, K); got {y_prob.ndim} dimensions")
    if y_prob.ndim == 2 and y_prob.shape[1] == 1:
        raise InputError("y_prob has a single column (a single class); pass binary P(y=1) as 1-D")
    y_prob, y_true = (a.rechunk({1: -1}) if a.ndim == 2 else a for a in (y_prob, y_true))
    lengths = None
    if not any(math.isnan(c) for c in y_prob.chunks[0] + y_true.chunks[0]):
        if y_true.shape[0] != y_prob.shape[0]:
            raise InputError(f"y_true has {y_true.shape[0]} rows but y_prob has {y_prob.shape[0]}; lengths "
                             "must match")
        y_true = y_true.rechunk({0: y_prob.chunks[0]})
        lengths = tuple(int(c) for c in y_prob.chunks[0])
    elif y_true.numblocks[0] != y_prob.numblocks[0]:
        raise InputError("y_true and y_prob have unknown chunk sizes and different numbers of partitions "
                         f"({y_true.numblocks[0]} vs {y_prob.numblocks[0]}); use to_dask_array(lengths=True)")
    pairs = zip(y_true.to_delayed().reshape(-1), y_prob.to_delayed().reshape(-1), strict=True)
    parts = tuple(delayed(tuple, pure=True)([t, p]) for t, p in pairs)
    binary = y_prob.ndim == 1
    return DaskCalibrationData(parts, lengths, 2 if binary else int(y_prob.shape[1]), binary, "dask arrays")


def _as_dask_array(x, name: str):
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(x, da.Array):
        return x
    if isinstance(x, (dd.Series, dd.DataFrame)):
        return x.to_dask_array()
    try:
        arr = np.asarray(x)
    except Exception as exc:
        raise InputError(f"{name} could not be read as an array: {exc}") from None
    return da.from_array(arr, chunks=(max(1, arr.shape[0] // 4),) + arr.shape[1:] if arr.ndim else -1)


def as_dask_data(y_true, y_prob=None, **columns) -> DaskCalibrationData:
    """Any supported input as :class:`DaskCalibrationData`.

    Parameters
    ----------
    y_true : dask or numpy array, CalibrationData, dask DataFrame, Parquet path, DaskCalibrationData or
        DistributedSource (all but the arrays alone, without ``y_prob``)
    y_prob : dask or numpy array, optional
    **columns
        ``y_true_column=`` / ``y_prob_columns=``: the columns of a table.

    Returns
    -------
    DaskCalibrationData
    """
    import dask.dataframe as dd

    label, probs = columns.pop("y_true_column", None), columns.pop("y_prob_columns", None)
    if columns:
        raise InputError(f"unknown keyword(s) {sorted(columns)}")
    y_true = getattr(y_true, "data", y_true) if getattr(y_true, "distributed", False) else y_true
    if isinstance(y_true, (DaskCalibrationData, str, os.PathLike, dd.DataFrame, CalibrationData)):
        if y_prob is not None:
            raise InputError("pass either a dataset (DataFrame, Parquet path) or (y_true, y_prob), not both; "
                             "name the columns with y_true_column= / y_prob_columns=")
        if isinstance(y_true, CalibrationData):
            return from_dask(y_true.labels, y_true.probs)
        if isinstance(y_true, DaskCalibrationData):
            return y_true
        if isinstance(y_true, dd.DataFrame):
            return from_dataframe(y_true, y_true=label, y_prob=probs)
        return from_parquet(y_true, y_true=label, y_prob=probs)
    if y_prob is None:
        raise InputError("y_prob is required (or pass a dask DataFrame / Parquet path as the only argument)")
    return from_dask(y_true, y_prob)


# ------------------------------------------------------------------------------------------------
# per-partition work (on the workers) and the reductions
# ------------------------------------------------------------------------------------------------
def validate(part, index: int, row_offset: int | None) -> CalibrationData:
    """The in-memory validation of one partition (which may be empty); errors name the partition."""
    try:
        return as_calibration_data(*part, min_samples=0)
    except InputError as exc:
        match = _ROW.search(str(exc))
        raise PartitionInputError(str(exc), index, match and int(match.group(1)), row_offset) from None


def _apply(func, part, index: int, row_offset: int | None, target: Target | None, *args):
    data = validate(part, index, row_offset)
    return func(data, *args) if target is None else func(*target.view(data), *args)


def map_partitions(data: DaskCalibrationData, func, *args, target: Target | None = None) -> list[Delayed]:
    """One task per partition: ``func(rows, *args)`` of its validated rows (a :class:`CalibrationData`),
    or with ``target`` ``func(z, y, *args)`` of their view (:meth:`calviz.targets.Target.view`)."""
    offsets = data.row_offsets() if data.lengths is not None else [None] * data.npartitions
    return [delayed(_apply, pure=True)(func, part, i, off, target, *args)
            for i, (part, off) in enumerate(zip(data.parts, offsets, strict=True))]


def merge(*partials):
    """Tree step: merge BinSums, or tuples of BinSums position by position."""
    if not isinstance(partials[0], BinSums):
        return tuple(merge(*group) for group in zip(*partials, strict=True))
    return functools.reduce(BinSums.merge, partials)


def tree_reduce(items: Sequence[Delayed], combine, split_every: int = SPLIT_EVERY) -> Delayed:
    """A reduction tree of fan-in ``split_every`` ≥ 2, checked by the public functions (depth
    ⌈log_split_every P⌉)."""
    items = list(items)
    if not items:
        raise InputError("the data has no partitions")
    while len(items) > 1:
        items = [delayed(combine, pure=True)(*items[i:i + split_every])
                 for i in range(0, len(items), split_every)]
    return items[0]


def map_reduce(data: DaskCalibrationData, func, *args, target: Target | None = None, combine=merge,
               split_every: int = SPLIT_EVERY, client=None):
    """The one distributed pass of the drivers: :func:`map_partitions`, then a tree of ``combine``
    (default :func:`merge` of BinSums)."""
    tasks = map_partitions(data, func, *args, target=target)
    return compute(data, tree_reduce(tasks, combine, split_every), client=client)[0]


def compute(data: DaskCalibrationData, *graphs, client=None):
    """``dask.compute`` on ``client`` (or the current scheduler); a bad partition raises the
    :class:`InputError` of the first bad partition — never a partial result."""
    with partition_errors(data, client):
        return dask.compute(*graphs) if client is None else tuple(client.compute(list(graphs), sync=True))


@contextlib.contextmanager
def partition_errors(data: DaskCalibrationData, client=None):
    """A :class:`PartitionInputError` from a worker as the client-side :class:`InputError` of the first bad
    partition (which one fails first on a cluster is a matter of scheduling)."""
    try:
        yield
    except PartitionInputError as exc:
        checks = [delayed(_error_of, pure=True)(part, i) for i, part in enumerate(data.parts[:exc.partition])]
        found = client.compute(checks, sync=True) if client is not None else dask.compute(*checks)
        exc = next((e for e in found if e is not None), exc)
        offset = exc.row_offset
        if offset is None:
            with contextlib.suppress(Exception):  # lengths unreadable: name the partition and its row
                offset = data.row_offsets()[exc.partition]
        raise InputError(_locate(exc.message, exc.partition, offset)) from None


def _error_of(part, index):
    try:
        validate(part, index, None)
    except PartitionInputError as exc:
        return exc
    return None


def check_n(n: int, min_samples: int = 2) -> None:
    if n < min_samples:
        raise InputError(f"need at least {min_samples} samples; got {n}")


def gather(data: DaskCalibrationData, size: int | None = None, seed=None, *, client=None,
           view: Target | None = None) -> tuple[CalibrationData, int, float]:
    """(rows, n, positives): the rows of ``data`` in one :class:`calviz.CalibrationData` — all n of them, or
    the uniform subsample of ``size`` rows without replacement that :meth:`calviz.CalibrationData.subsample`
    draws from the in-memory data with the same ``seed`` (the same global row indices, so the same rows) —
    and, with ``view``, the number of label-1 rows of all n rows' view (0 without), counted in the pass
    that counts the rows.  That pass is skipped when the partitions' lengths are known and no ``view``
    is given: the pass that takes the rows validates every partition."""
    if view is None and data.lengths is not None:
        lengths, positives = data.lengths, 0.0
    else:
        counts = compute(data, *map_partitions(data, _count, view), client=client)
        lengths, positives = [c[0] for c in counts], float(sum(c[1] for c in counts))
    bounds = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    n = int(bounds[-1])
    check_n(n)
    rows = None if size is None or size >= n else np.sort(
        as_generator(seed, "subsample").choice(n, size=int(size), replace=False))
    cuts = None if rows is None else np.searchsorted(rows, bounds)
    picks = [None if rows is None else rows[cuts[i]:cuts[i + 1]] - bounds[i] for i in range(data.npartitions)]
    picked = compute(data, *[delayed(_apply, pure=True)(_take, part, i, int(bounds[i]), None, picks[i])
                             for i, part in enumerate(data.parts)], client=client)
    labels, probs = (np.concatenate(column) for column in zip(*picked, strict=True))
    return as_calibration_data(labels, probs), n, positives


def _count(rows: CalibrationData, view: Target | None) -> tuple[int, float]:
    return rows.n, (0.0 if view is None or rows.n == 0 else float(np.sum(view.view(rows)[1])))


def _take(rows: CalibrationData, picks):
    return (rows.labels, rows.probs) if picks is None else (rows.labels[picks], rows.probs[picks])
