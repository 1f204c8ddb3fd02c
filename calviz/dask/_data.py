"""Distributed input: dask arrays, dask DataFrames and Parquet as partitions of (y_true, y_prob), the
per-partition validation with the in-memory rules, and the map/reduce plumbing of the drivers."""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

import dask
import numpy as np
from dask.delayed import Delayed, delayed

from calviz._data import InputError, as_calibration_data, check_unique_columns
from calviz._ece import prepare_view, topk_view

#: fan-in of the tree reductions (how many partial results one task merges)
SPLIT_EVERY = 8


class PartitionInputError(InputError):
    """Bad input found in one partition: the in-memory message plus the partition index and the row
    inside that partition.  Raised on a worker; the client turns it into an :class:`InputError` whose
    message also gives the global row."""

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

    def schema(self):
        """A two-row in-memory sample of the same kind (binary or K classes): the in-memory rules resolve
        targets and options on it, on the client, before any partition is read."""
        if self.is_binary:
            return np.array([0, 1]), np.array([0.5, 0.5])
        return np.array([0, 1]), np.full((2, self.n_classes), 1.0 / self.n_classes)


def _part_length(part) -> int:
    return int(np.shape(part[0])[0])


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
        y_prob = next((c for c in ("y_prob", "confidence") if c in cols), None)
    if y_prob is None:
        probs = sorted((c for c in cols if re.fullmatch(r"p_\d+", c)), key=lambda c: int(c[2:]))
        if not probs:
            raise InputError("no probability columns found (looked for y_prob, confidence, p_0..p_K-1) in "
                             f"{cols}")
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
    ``<prefix>0..<prefix>K-1`` (detected when all are ``None``: ``y_true`` + ``y_prob``, ``y_true`` +
    ``p_0..p_{K-1}``, or ``correct`` + ``confidence``)."""
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
    lengths = None
    if not any(math.isnan(c) for c in y_prob.chunks[0] + y_true.chunks[0]):
        if y_true.shape[0] != y_prob.shape[0]:
            raise InputError(
                f"y_true has {y_true.shape[0]} rows but y_prob has {y_prob.shape[0]}; lengths must match")
        if y_true.chunks[0] != y_prob.chunks[0]:
            y_true = y_true.rechunk({0: y_prob.chunks[0]})
        lengths = tuple(int(c) for c in y_prob.chunks[0])
    elif y_true.numblocks[0] != y_prob.numblocks[0]:
        raise InputError(
            "y_true and y_prob have unknown chunk sizes and different numbers of partitions "
            f"({y_true.numblocks[0]} vs {y_prob.numblocks[0]}); use to_dask_array(lengths=True)")
    pairs = zip(y_true.to_delayed().reshape(-1), y_prob.to_delayed().reshape(-1), strict=True)
    parts = tuple(delayed(tuple, pure=True)([t, p]) for t, p in pairs)
    is_binary = y_prob.ndim == 1
    return DaskCalibrationData(parts, lengths, 2 if is_binary else int(y_prob.shape[1]), is_binary,
                               "dask arrays")


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
    """Any supported distributed input → :class:`DaskCalibrationData`: dask arrays ``(y_true, y_prob)``,
    a dask DataFrame or a Parquet path (alone), or a DaskCalibrationData.  ``columns``
    (``y_true_column=``, ``y_prob_columns=``) name the columns of a DataFrame or Parquet source."""
    import dask.dataframe as dd

    label = columns.pop("y_true_column", None)
    probs = columns.pop("y_prob_columns", None)
    if columns:
        raise InputError(f"unknown keyword(s) {sorted(columns)}")
    if isinstance(y_true, (DaskCalibrationData, str, os.PathLike, dd.DataFrame)):
        if y_prob is not None:
            raise InputError("pass either a dataset (DataFrame, Parquet path) or (y_true, y_prob), not both; "
                             "name the columns with y_true_column= / y_prob_columns=")
        if isinstance(y_true, DaskCalibrationData):
            return y_true
        if isinstance(y_true, dd.DataFrame):
            return from_dataframe(y_true, y_true=label, y_prob=probs)
        return from_parquet(y_true, y_true=label, y_prob=probs)
    if y_prob is None:
        raise InputError("y_prob is required (or pass a dask DataFrame / Parquet path as the only argument)")
    return from_dask(y_true, y_prob)


# ------------------------------------------------------------------------------------------------
# per-partition work (runs on the workers) and the reductions
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class View:
    """The calibration target of a computation, resolved on the client by the in-memory rules."""

    target: str
    top_k: int = 1
    class_index: int = 0


def resolve_view(data: DaskCalibrationData, target: str = "auto", top_k: int = 1,
                 class_index: int = 0) -> View:
    """The target as :func:`calviz.ece.prepare_view` resolves it for data of this kind (same messages)."""
    _, resolved, _, _ = prepare_view(*data.schema(), target=target, top_k=top_k, class_index=class_index)
    return View(resolved, int(top_k), int(class_index))


def validate(part, index: int, row_offset: int | None):
    """The in-memory validation of one partition (partitions may be empty); an :class:`InputError`
    names the partition."""
    try:
        return as_calibration_data(*part, min_samples=0)
    except InputError as exc:
        match = _ROW.search(str(exc))
        local = int(match.group(1)) if match else None
        raise PartitionInputError(str(exc), index, local, row_offset) from None


def partition_view(part, index: int, row_offset: int | None, view: View) -> tuple[np.ndarray, np.ndarray]:
    """(z, y) of one validated partition for the resolved target (the arrays of the in-memory
    :func:`calviz.ece.prepare_view`; a partition may have fewer than two rows)."""
    data = validate(part, index, row_offset)
    try:
        if view.target == "topk":
            return topk_view(data, view.top_k)
        return data.view(view.target, class_index=view.class_index)
    except InputError as exc:
        raise PartitionInputError(str(exc), index, None, row_offset) from None


def map_partitions(data: DaskCalibrationData, func, *args) -> list[Delayed]:
    """One task per partition: ``func(part, index, row_offset, *args)``."""
    offsets = data.row_offsets() if data.lengths is not None else [None] * data.npartitions
    return [delayed(func, pure=True)(part, i, off, *args)
            for i, (part, off) in enumerate(zip(data.parts, offsets, strict=True))]


def tree_reduce(items: Sequence[Delayed], combine, split_every: int = SPLIT_EVERY) -> Delayed:
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


def compute(data: DaskCalibrationData, *graphs, client=None):
    """``dask.compute`` on ``client`` (or the current scheduler); a bad partition becomes an
    :class:`InputError` naming the global row and the partition — never a partial result."""
    with partition_errors(data, client):
        if client is not None:
            return tuple(client.compute(list(graphs), sync=True))
        return dask.compute(*graphs)


def persist(graphs: list, client=None) -> list:
    """Keep the results of ``graphs`` in the cluster's memory for several computations."""
    return list(client.persist(graphs)) if client is not None else list(dask.persist(*graphs))


@contextlib.contextmanager
def partition_errors(data: DaskCalibrationData, client=None):
    """Turn a :class:`PartitionInputError` from a worker into the client-side :class:`InputError` — that of
    the first bad partition (which partition fails first on the cluster is a matter of scheduling)."""
    try:
        yield
    except PartitionInputError as exc:
        checks = map_partitions(DaskCalibrationData(data.parts[:exc.partition], data.lengths and
                                                    data.lengths[:exc.partition], 2, True, ""), _error_of)
        found = client.compute(checks, sync=True) if client is not None else dask.compute(*checks)
        exc = next((e for e in found if e is not None), exc)
        offset = exc.row_offset
        if offset is None:
            try:
                offset = data.row_offsets()[exc.partition]
            except Exception:  # the lengths could not be read: name the partition and its local row
                offset = None
        raise InputError(_locate(exc.message, exc.partition, offset)) from None


def _error_of(part, index, row_offset):
    try:
        validate(part, index, row_offset)
    except PartitionInputError as exc:
        return exc
    return None


def check_n(n: int, min_samples: int = 2) -> None:
    if n < min_samples:
        raise InputError(f"need at least {min_samples} samples; got {n}")
