"""Distributed input: dask arrays, dask DataFrames and Parquet as partitions of (y_true, y_prob), validated
partition by partition with the in-memory rules, and the map / tree-reduce / gather plumbing."""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import dask
import numpy as np
from dask.delayed import Delayed, delayed

from calviz._data import CalibrationData, InputError, as_calibration_data, check_unique_columns
from calviz._params import as_generator, check_n_classes
from calviz._sums import BinSums
from calviz.io import COLUMN_NAMES, is_confidence_form, name_columns, select_columns
from calviz.targets import Target

#: fan-in of the tree reductions (how many partial results one task merges)
SPLIT_EVERY = 8
_ROW = re.compile(r"\brow (\d+)")


class PartitionInputError(InputError):
    """Bad input in one partition: the in-memory message, the partition and the row inside it.

    Raised on a worker by the per-partition validation; the drivers catch it on the client and re-raise
    the :class:`calviz.InputError` of the first bad partition, naming the global row — so a user sees an
    ``InputError`` and never a partial result.

    Attributes
    ----------
    message : str
        The in-memory validation message (rows counted within the partition).
    partition : int
        The partition's index.
    local_row : int or None
        The bad row within the partition, when the message names one.
    row_offset : int or None
        The partition's first global row, when the partition lengths are known.

    Examples
    --------
    >>> import numpy as np, dask.array as da, calviz, calviz.dask
    >>> p = np.linspace(0.05, 0.95, 12)
    >>> p[9] = 1.5                                        # not a probability: row 9, in partition 2
    >>> y = (p > 0.5).astype(int)
    >>> try:
    ...     calviz.dask.binned_ece(da.from_array(y, chunks=4), da.from_array(p, chunks=4))
    ... except calviz.InputError as error:
    ...     print(error)
    y_prob must lie in [0, 1]; row 9 (partition 2, row 1 within it) has 1.5...
    """

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
    if count or f"partition {partition} " in message:
        return located
    return f"{message} (in partition {partition})"


@dataclass(frozen=True, repr=False)
class DaskCalibrationData:
    """Lazily evaluated, partitioned predictions (y_true, y_prob): the input of every distributed driver.

    Made by :func:`from_dask`, :func:`from_dataframe`, :func:`from_parquet` or :func:`as_dask_data`;
    nothing is read until a driver computes.  Each partition is validated by the in-memory rules of
    :func:`calviz.as_calibration_data` on the worker that reads it.

    Attributes
    ----------
    parts : tuple of dask.delayed.Delayed
        One per partition, evaluating to the numpy pair ``(y_true, y_prob)`` (not yet validated).
    lengths : tuple of int or None
        Rows per partition when known without reading the data (dask arrays of known chunk sizes).
    n_classes : int
        K (2 for 1-D binary ``y_prob``).
    is_binary : bool
        Whether ``y_prob`` is 1-D, P(y = 1).
    source : str
        A name for messages and the repr.
    columns : dict or None
        The table's columns ``{"y_true": label column, "y_prob": [probability columns]}``
        (:func:`from_dataframe`, :func:`from_parquet`): messages name them as the file readers do.  None
        for arrays.
    confidence_form : bool
        Whether the columns are ``confidence`` + ``correct`` (:attr:`calviz.CalibrationData.confidence_form`):
        every partition is validated with the mark.
    npartitions : int
        ``len(parts)``.

    Examples
    --------
    >>> import numpy as np, dask.array as da, calviz.dask
    >>> rng = np.random.default_rng(0)
    >>> probs = rng.dirichlet(np.ones(3), size=1000)
    >>> labels = rng.integers(0, 3, size=1000)
    >>> data = calviz.dask.from_dask(da.from_array(labels, chunks=400), da.from_array(probs, chunks=(400, 3)))
    >>> data
    DaskCalibrationData(dask arrays, 3-class, npartitions=3, n=1000)
    >>> data.lengths, data.n_classes, data.is_binary
    ((400, 400, 200), 3, False)
    """

    parts: tuple
    lengths: tuple | None
    n_classes: int
    is_binary: bool
    source: str
    columns: dict | None = field(default=None, compare=False)  # (from the parts: not compared, hashed)
    confidence_form: bool = False

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
        # a nullable boolean column with a missing value: 0/1 with NaN, for the validation to name the row
        if np.any(selected.isna().to_numpy()):
            return selected.to_numpy(dtype=np.float64, na_value=np.nan)
        return selected.to_numpy(dtype=bool)
    return selected.to_numpy(dtype=object, na_value=None)


def _frame_part(frame, label: str, probs):
    return _column_values(frame, label), _column_values(frame, probs)


def from_dataframe(frame, *, y_true: str | None = None, y_prob: str | Sequence[str] | None = None,
                   prob_prefix: str | None = None, confidence: str | None = None, correct: str | None = None,
                   source: str = "dask dataframe") -> DaskCalibrationData:
    """Distributed predictions from the columns of a dask DataFrame.

    Only the label and probability columns are kept; each partition of the frame becomes one partition
    of the data.  Numeric columns are read as float64 with missing values as NaN, so the per-partition
    validation names the row of a missing or out-of-range value.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        The predictions, one row per sample.
    y_true, y_prob, prob_prefix : str, optional
        The columns, found as by :func:`calviz.io.read_predictions` when omitted: ``y_true`` + ``y_prob``
        (binary), ``y_true`` + ``p_0..p_{K-1}``, or ``correct`` + ``confidence``.  A list as ``y_prob``
        names the K probability columns; ``prob_prefix`` replaces the ``p_`` of ``p_0..p_{K-1}``.
    confidence, correct : str, optional
        The columns of the confidence form (default "confidence" and "correct"); naming either means that
        form (:attr:`DaskCalibrationData.confidence_form`), as for :func:`calviz.io.read_predictions`.
    source : str, default "dask dataframe"
        A name for messages.

    Returns
    -------
    DaskCalibrationData
        Lazy: nothing is read until a driver computes (the number of rows is unknown until then).

    Examples
    --------
    >>> import numpy as np, pandas as pd, dask.dataframe as dd, calviz, calviz.dask
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> frame = dd.from_pandas(pd.DataFrame({"label": y, "score": p}), npartitions=3)
    >>> data = calviz.dask.from_dataframe(frame, y_true="label", y_prob="score")
    >>> data
    DaskCalibrationData(dask dataframe, binary, npartitions=3, n=unknown)
    >>> bool(np.isclose(calviz.dask.binned_ece(data).value, calviz.binned_ece(y, p).value, rtol=1e-12))
    True

    Multiclass columns ``p_0..p_{K-1}`` are found by their prefix:

    >>> probs = rng.dirichlet(np.ones(3), size=600)
    >>> table = pd.DataFrame({"target": rng.integers(0, 3, size=600),
    ...                       **{f"prob_{k}": probs[:, k] for k in range(3)}})
    >>> calviz.dask.from_dataframe(dd.from_pandas(table, npartitions=2), y_true="target", prob_prefix="prob_")
    DaskCalibrationData(dask dataframe, 3-class, npartitions=2, n=unknown)
    """
    found = list(frame.columns)
    check_unique_columns(found)
    given = {"y_true": y_true, "y_prob": y_prob, "prob_prefix": prob_prefix, "confidence": confidence,
             "correct": correct}
    names = {**COLUMN_NAMES, **{k: v for k, v in given.items() if v is not None}}
    label, probs = select_columns(found, names)
    probs = probs[0] if len(probs) == 1 else probs  # one column: binary P(y = 1) or the confidence
    frame = frame[[label] + ([probs] if isinstance(probs, str) else probs)]
    parts = tuple(delayed(_frame_part, pure=True)(p, label, probs) for p in frame.to_delayed())
    binary = isinstance(probs, str)
    columns = {"y_true": label, "y_prob": [probs] if binary else list(probs)}
    return DaskCalibrationData(parts, None, 2 if binary else len(probs), binary, source, columns,
                               is_confidence_form(columns, names))


def from_parquet(path, *, y_true: str | None = None, y_prob: str | Sequence[str] | None = None,
                 prob_prefix: str | None = None, confidence: str | None = None, correct: str | None = None,
                 **read_parquet_kwargs) -> DaskCalibrationData:
    """Distributed predictions in a Parquet file, directory, glob or list of files.

    The data are read lazily by ``dask.dataframe.read_parquet`` (only the needed columns, one partition
    per file or row group as dask chooses) and the columns are picked as by :func:`from_dataframe`.  A
    local path that does not exist, a local directory without Parquet files, or data that cannot be read,
    raise :class:`calviz.InputError`.

    Parameters
    ----------
    path : str, path-like or list of them
        A Parquet file, a directory of Parquet files, a glob, a list of files or a remote URL
        (``s3://...``, with the filesystem package installed).
    y_true, y_prob, prob_prefix, confidence, correct : str, optional
        The columns, as for :func:`from_dataframe`.
    **read_parquet_kwargs
        Passed to ``dask.dataframe.read_parquet`` (e.g. ``storage_options=``).

    Returns
    -------
    DaskCalibrationData
        Lazy: nothing is read until a driver computes.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np, pandas as pd, calviz, calviz.dask
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     for i in range(2):                              # two files: two partitions
    ...         rows = slice(1000 * i, 1000 * (i + 1))
    ...         part = pd.DataFrame({"y_true": y[rows], "y_prob": p[rows]})
    ...         part.to_parquet(os.path.join(directory, f"part-{i}.parquet"))
    ...     data = calviz.dask.from_parquet(directory)
    ...     on_dask = calviz.dask.debiased_ece(data, n_bins=10)
    >>> data.npartitions, data.is_binary
    (2, True)
    >>> bool(np.isclose(on_dask.value, calviz.debiased_ece(y, p, n_bins=10).value, rtol=1e-12))
    True
    """
    import dask.dataframe as dd

    path = [os.fspath(p) for p in path] if isinstance(path, (list, tuple)) else os.fspath(path)
    missing = [p for p in ([path] if isinstance(path, str) else path)
               if "://" not in p and not set("*?[") & set(p) and not os.path.exists(p)]
    if missing:
        raise InputError(f"{missing[0]}: no such file or directory")
    if "parquet_file_extension" not in read_parquet_kwargs:  # (dask's default: these extensions only)
        empty = [p for p in ([path] if isinstance(path, str) else path)
                 if "://" not in p and os.path.isdir(p) and not _has_parquet_files(p)]
        if empty:
            raise InputError(f"no Parquet files ({', '.join('*' + e for e in PARQUET_EXTENSIONS)}) in the "
                             f"directory {empty[0]!r}")
    try:
        frame = dd.read_parquet(path, **read_parquet_kwargs)
    except (FileNotFoundError, OSError, ValueError) as exc:
        # dask wraps the reader's error ("An error occurred while calling the read_parquet method ...
        # Original Message: ..."): the original says what is wrong
        raise InputError(f"could not read Parquet data at {path!r}: {exc.__cause__ or exc}") from None
    return from_dataframe(frame, y_true=y_true, y_prob=y_prob, prob_prefix=prob_prefix, confidence=confidence,
                          correct=correct, source=f"parquet {path!r}")


#: the file extensions ``dask.dataframe.read_parquet`` reads in a directory by default
PARQUET_EXTENSIONS = (".parquet", ".pq", ".parq")


def _has_parquet_files(directory: str) -> bool:
    """Whether a directory holds, at any depth, a file that ``dask.dataframe.read_parquet`` reads by
    default (:data:`PARQUET_EXTENSIONS`)."""
    return any(name.endswith(PARQUET_EXTENSIONS) for _, _, names in os.walk(directory) for name in names)


def from_dask(y_true, y_prob) -> DaskCalibrationData:
    """Distributed predictions from dask arrays (or Series), paired partition by partition.

    The partitions are the row chunks of ``y_prob`` (a 2-D ``y_prob`` is rechunked to whole rows).  Shapes
    are checked here; the values are validated partition by partition when a driver computes.

    Parameters
    ----------
    y_true : dask array of shape (n,) or (n, K), or dask Series
        Labels (0/1, or class indices 0..K−1) or one-hot rows.  With known chunk sizes rechunked to
        ``y_prob``'s rows, else paired with ``y_prob``'s chunks by position (each pair's lengths are
        checked by the validation).  A numpy array is split into about four chunks.
    y_prob : dask array of shape (n,) or (n, K), or dask Series
        Predicted P(y = 1), or one probability row per sample.

    Returns
    -------
    DaskCalibrationData
        With ``lengths`` when the chunk sizes are known.

    Examples
    --------
    >>> import numpy as np, dask.array as da, calviz, calviz.dask
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> data = calviz.dask.from_dask(da.from_array(y, chunks=500), da.from_array(p, chunks=700))
    >>> data                                                  # the labels follow y_prob's chunks
    DaskCalibrationData(dask arrays, binary, npartitions=3, n=2000)
    >>> data.lengths
    (700, 700, 600)
    >>> bool(np.isclose(calviz.dask.binned_ece(data).value, calviz.binned_ece(y, p).value, rtol=1e-12))
    True
    """
    y_true, y_prob = _as_dask_array(y_true, "y_true"), _as_dask_array(y_prob, "y_prob")
    if y_true.ndim not in (1, 2):
        raise InputError(f"y_true must be 1-D labels or a 2-D one-hot array; got shape {y_true.shape}")
    if y_prob.ndim not in (1, 2):
        raise InputError(f"y_prob must be 1-D (binary) or 2-D (n, K); got {y_prob.ndim} dimensions")
    if y_prob.ndim == 2 and y_prob.shape[1] == 1:
        raise InputError("y_prob has a single column (a single class); pass binary P(y=1) as 1-D")
    if y_prob.ndim == 2:
        check_n_classes(y_prob.shape[1])
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
    """Any supported input as :class:`DaskCalibrationData`: what every driver does with its data first.

    Parameters
    ----------
    y_true : array, CalibrationData, DataFrame, path, DaskCalibrationData or DistributedSource
        The labels (with ``y_prob``), or the whole dataset alone: a :class:`calviz.CalibrationData`, a
        dask DataFrame (:func:`from_dataframe`), a Parquet path (:func:`from_parquet`), the data of a
        :class:`DistributedSource`, or a :class:`DaskCalibrationData` (returned as it is).
    y_prob : dask or numpy array, optional
        The probabilities, with array labels only (:func:`from_dask`).
    **columns
        ``y_true_column=`` / ``y_prob_columns=``: the columns of a table (any other keyword is an
        :class:`calviz.InputError`).

    Returns
    -------
    DaskCalibrationData

    Examples
    --------
    >>> import numpy as np, calviz, calviz.dask
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)
    >>> data = calviz.dask.as_dask_data(y, p)                 # numpy arrays: about four chunks
    >>> data
    DaskCalibrationData(dask arrays, binary, npartitions=4, n=2000)
    >>> calviz.dask.as_dask_data(data) is data
    True
    >>> calviz.dask.as_dask_data(calviz.as_calibration_data(y, p)).lengths
    (500, 500, 500, 500)
    """
    import dask.dataframe as dd

    label, probs = columns.pop("y_true_column", None), columns.pop("y_prob_columns", None)
    if columns:
        raise InputError(f"unknown keyword(s) {sorted(columns)}")
    y_true = getattr(y_true, "data", y_true) if getattr(y_true, "distributed", False) else y_true
    table = isinstance(y_true, (str, os.PathLike, dd.DataFrame))
    if not table and (label is not None or probs is not None):
        raise InputError("y_true_column= / y_prob_columns= name the columns of a DataFrame or Parquet data; "
                         f"got {type(y_true).__name__} input, which has no columns")
    if table or isinstance(y_true, (DaskCalibrationData, CalibrationData)):
        if y_prob is not None:
            raise InputError("pass either a dataset (DataFrame, Parquet path) or (y_true, y_prob), not both; "
                             "name the columns with y_true_column= / y_prob_columns=")
        if isinstance(y_true, CalibrationData):
            return replace(from_dask(y_true.labels, y_true.probs), confidence_form=y_true.confidence_form)
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
def validate(part, index: int, row_offset: int | None, confidence_form: bool = False) -> CalibrationData:
    """The in-memory validation of one partition (which may be empty); errors name the partition."""
    rows = [len(column) if np.ndim(column) else 1 for column in part]
    if rows[0] != rows[1]:  # dask arrays of unknown chunk sizes, paired by position (from_dask)
        raise PartitionInputError(
            f"partition {index} has {rows[0]} rows of y_true but {rows[1]} of y_prob; with unknown chunk "
            "sizes the chunks of y_true and y_prob are paired by position and must have equal lengths (give "
            "the sizes, e.g. to_dask_array(lengths=True))", index, None, row_offset)
    try:
        return as_calibration_data(*part, min_samples=0, confidence_form=confidence_form)
    except InputError as exc:
        match = _ROW.search(str(exc))
        raise PartitionInputError(str(exc), index, match and int(match.group(1)), row_offset) from None


def _apply(func, part, index: int, row_offset: int | None, form: bool, target: Target | None, *args):
    data = validate(part, index, row_offset, form)
    return func(data, *args) if target is None else func(*target.view(data), *args)


def map_partitions(data: DaskCalibrationData, func, *args, target: Target | None = None) -> list[Delayed]:
    """One task per partition: ``func(rows, *args)`` of its validated rows (a :class:`CalibrationData`),
    or with ``target`` ``func(z, y, *args)`` of their view (:meth:`calviz.targets.Target.view`)."""
    offsets = data.row_offsets() if data.lengths is not None else [None] * data.npartitions
    return [delayed(_apply, pure=True)(func, part, i, off, data.confidence_form, target, *args)
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
    except KeyError as exc:  # a table whose later file lacks a column: the reader fails on the worker
        wanted = [] if data.columns is None else [data.columns["y_true"], *data.columns["y_prob"]]
        if not any(repr(name) in str(exc) for name in wanted):
            raise
        raise InputError(f"{data.source}: a file lacks a needed column ({exc.args[0]}); every file needs the "
                         f"columns {', '.join(map(repr, wanted))}") from None
    except PartitionInputError as exc:
        checks = [delayed(_error_of, pure=True)(part, i) for i, part in enumerate(data.parts[:exc.partition])]
        found = client.compute(checks, sync=True) if client is not None else dask.compute(*checks)
        exc = next((e for e in found if e is not None), exc)
        offset = exc.row_offset
        if offset is None:
            with contextlib.suppress(Exception):  # lengths unreadable: name the partition and its row
                offset = data.row_offsets()[exc.partition]
        message = exc.message if data.columns is None else name_columns(exc.message, data.columns)
        raise InputError(_locate(message, exc.partition, offset)) from None


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
    picked = compute(data, *[delayed(_apply, pure=True)(_take, part, i, int(bounds[i]), False, None, picks[i])
                             for i, part in enumerate(data.parts)], client=client)
    labels, probs = (np.concatenate(column) for column in zip(*picked, strict=True))
    return as_calibration_data(labels, probs, confidence_form=data.confidence_form), n, positives


def _count(rows: CalibrationData, view: Target | None) -> tuple[int, float]:
    return rows.n, (0.0 if view is None or rows.n == 0 else float(np.sum(view.view(rows)[1])))


def _take(rows: CalibrationData, picks):
    return (rows.labels, rows.probs) if picks is None else (rows.labels[picks], rows.probs[picks])
