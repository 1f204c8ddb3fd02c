"""Read predictions from CSV, Parquet, NPZ and NPY files (or uploaded bytes) into CalibrationData.

Layouts (column / array names configurable):

* **Tabular (CSV, Parquet)** — one row per sample, one of
  ``y_true`` + ``y_prob`` (binary: P(y = 1)),
  ``y_true`` + ``p_0`` … ``p_{K−1}`` (multiclass; the prefix is ``prob_prefix``), or
  ``confidence`` + ``correct`` (the top-1 / confidence form: read as binary data with y = correct).
  If both ``y_prob`` and ``p_*`` columns exist, ``y_prob`` wins.
* **NPZ** — one array per column, found as the tabular columns are: ``y_true`` + ``y_prob`` ((n,), or
  (n, K): the whole matrix in one array), ``y_true`` + ``p_0`` … ``p_{K−1}`` (each (n,)), or
  ``confidence`` + ``correct``.
* **NPY** — one 2-D array whose **first column is y_true** and whose remaining columns are the
  probabilities: (n, 2) = labels + P(y = 1) (binary), (n, 1 + K) with K ≥ 2 = labels + K class
  probabilities.

NPY/NPZ are always read with ``allow_pickle=False`` (a pickled array is refused: loading it could run
code).  Every problem is an :class:`calviz.InputError` that starts with the file name and names
the column and row: missing columns (listing those found), non-numeric or empty cells, empty files,
unknown formats, files over ``max_bytes``, and every rule of :func:`calviz.as_calibration_data`.
"""

from __future__ import annotations

import contextlib
import io as _io
import math
import os
import queue
import re
import tempfile
import threading
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from calviz._data import (
    CalibrationData,
    InputError,
    _readonly_view,
    as_calibration_data,
    cell_repr,
    check_unique_columns,
)
from calviz._params import BOOLEAN, NON_NEGATIVE_INT, STR, NoneOr, Options, validate_params

__all__ = ["read_predictions", "read_predictions_bytes", "write_predictions", "select_columns",
           "COLUMN_NAMES", "FileBackedData", "FORMATS", "DEFAULT_MAX_BYTES"]

#: Supported formats and the file extensions that select them.
FORMATS = {
    "csv": (".csv", ".txt", ".tsv"),
    "parquet": (".parquet", ".pq"),
    "npz": (".npz",),
    "npy": (".npy",),
}

#: the column (and array) names looked for by default (:func:`select_columns`)
COLUMN_NAMES = {"y_true": "y_true", "y_prob": "y_prob", "prob_prefix": "p_", "confidence": "confidence",
                "correct": "correct"}
#: Default size limit (bytes) of a file, or of the uncompressed arrays in an NPZ / columns in a Parquet file.
DEFAULT_MAX_BYTES = 2**31

_MAGIC = ((b"\x93NUMPY", "npy"), (b"PK\x03\x04", "npz"), (b"PAR1", "parquet"))


def _format_name(value: str) -> str:
    """A format name as given (any case, with or without a leading dot; an extension such as "pq" or
    "tsv" names its format) → one of :data:`FORMATS`, or the normalised text when it names none."""
    fmt = value.lower().lstrip(".")
    return {"pq": "parquet", "txt": "csv", "tsv": "csv"}.get(fmt, fmt)


class _Format(Options):
    """``format``: one of :data:`FORMATS`, spelt in any case or as an extension (".csv", "pq")."""

    def accepts(self, value) -> bool:
        return isinstance(value, str) and _format_name(value) in self.values


class _ProbColumns:
    """``y_prob``: one column name, or a non-empty list (or tuple) of the probability columns' names."""

    def __str__(self) -> str:
        return "a str or a non-empty list of str"

    def accepts(self, value) -> bool:
        if isinstance(value, str):
            return True
        return isinstance(value, (list, tuple)) and len(value) > 0 and all(isinstance(v, str) for v in value)


#: the options :func:`read_predictions` and :func:`read_predictions_bytes` share
_READ_OPTIONS = {
    "format": NoneOr(_Format(FORMATS)),
    "y_true": STR,
    "y_prob": _ProbColumns(),
    "prob_prefix": STR,
    "confidence": STR,
    "correct": STR,
    "renormalize": BOOLEAN,
    "max_bytes": NoneOr(NON_NEGATIVE_INT),
    "logits": BOOLEAN,
}


@validate_params({**_READ_OPTIONS, "keep_matrix": BOOLEAN})
def read_predictions(
    path_or_buffer,
    *,
    format: str | None = None,
    y_true: str = "y_true",
    y_prob: str | list[str] = "y_prob",
    prob_prefix: str = "p_",
    confidence: str = "confidence",
    correct: str = "correct",
    renormalize: bool = False,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    logits: bool = False,
    keep_matrix: bool = True,
) -> CalibrationData:
    """Read and validate predictions from a CSV, Parquet, NPZ or NPY file, ``bytes`` or a file object.

    Column / array names are configurable; the layouts are: tabular (CSV, Parquet) ``y_true`` +
    ``y_prob`` (binary: P(y = 1)), ``y_true`` + ``p_0`` … ``p_{K−1}`` (multiclass), or ``confidence`` +
    ``correct`` (read as binary data with y = correct); NPZ one array per column, found as the columns
    are (``y_prob`` may also be the whole (n, K) matrix); NPY one 2-D array whose first column is y_true
    and whose other columns are the probabilities.  NPY/NPZ are read with ``allow_pickle=False``.

    Parameters
    ----------
    path_or_buffer : str, path-like, bytes or binary file object
        The predictions.
    format : {"csv", "parquet", "npz", "npy"}, optional
        By default from the file extension (``.csv/.txt/.tsv``, ``.parquet/.pq``, ``.npz``, ``.npy``),
        else from the first bytes.  Case does not matter, and an extension (".csv", "pq") names its
        format.
    y_true, prob_prefix, confidence, correct : str
        Column / array names (defaults "y_true", "p_", "confidence", "correct").  Naming ``confidence`` or
        ``correct`` asks for the confidence form: it is read, or refused when one of its columns is missing.
    y_prob : str or list of str, default "y_prob"
        The binary P(y = 1) column, or a list naming the probability columns themselves.
    renormalize : bool, default False
        Rescale multiclass rows to sum to 1.
    max_bytes : int or None, default 2**31
        Bound (an int ≥ 0) on the file size and on the uncompressed size of NPZ arrays / Parquet
        columns (None: no limit).
    logits : bool, default False
        Read the probability columns as logits (a stable softmax per row, a sigmoid for one column).
    keep_matrix : bool, default True
        False (large multiclass CSV / Parquet files analysed for a scalar target: top-1 or one class
        against the rest): the file is read and validated a block of rows at a time and the (n, K)
        probability matrix is never held in memory — only the labels and the top-1 view (confidence,
        correct); each class's column goes to a temporary file and is read back when a one-vs-rest view
        needs it (:class:`FileBackedData`).  Every view gives the same numbers as with the whole matrix
        and every row is validated, with the same messages.  Other formats ignore it.

    Returns
    -------
    CalibrationData
        The validated predictions.

    Raises
    ------
    InputError
        Starting with the file name and naming the column and row: missing columns (listing those
        found), non-numeric or empty cells, empty files, unknown formats, files over ``max_bytes``, and
        every rule of :func:`calviz.as_calibration_data`.  An option of the wrong type or out of range
        is refused first, with the uniform parameter message (no file name).

    Examples
    --------
    >>> import io
    >>> import calviz
    >>> csv = b"y_true,p_0,p_1,p_2\\n0,0.7,0.2,0.1\\n2,0.1,0.3,0.6\\n1,0.2,0.5,0.3\\n"
    >>> data = calviz.read_predictions(io.BytesIO(csv), format="csv")
    >>> data.n, data.n_classes
    (3, 3)
    """
    names = {
        "y_true": y_true,
        "y_prob": y_prob,
        "prob_prefix": prob_prefix,
        "confidence": confidence,
        "correct": correct,
    }
    raw, label = _open(path_or_buffer, max_bytes)
    fmt = _resolve_format(format, label, raw)
    names["_label"] = label
    names["_blocks"] = not keep_matrix  # NPY / NPZ: read a block of rows at a time
    try:
        read = _READERS[fmt](raw, names, max_bytes)
        if isinstance(read, _Blocks):
            try:
                if not keep_matrix and read.n_prob_columns > 1:
                    try:
                        return _read_file_backed(read, renormalize, logits)
                    except InputError as exc:
                        raise _named(exc, read.columns) from None
                read = _whole_arrays(read)
            except _NotFast:  # the DataFrame reader reads it and names the offending cell
                read = read.fallback()
        y, p, columns = read
        return _validate(y, p, columns, renormalize, logits, is_confidence_form(columns, names))
    except InputError as exc:
        raise InputError(f"{label}: {exc}") from None


@validate_params(_READ_OPTIONS)
def read_predictions_bytes(
    data: bytes,
    filename: str,
    *,
    format: str | None = None,
    y_true: str = "y_true",
    y_prob: str | list[str] = "y_prob",
    prob_prefix: str = "p_",
    confidence: str = "confidence",
    correct: str = "correct",
    renormalize: bool = False,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    logits: bool = False,
) -> CalibrationData:
    """:func:`read_predictions` for an upload: the file's bytes and its name.

    Parameters
    ----------
    data : bytes
        The file's content.
    filename : str
        Its name: selects the format by extension and prefixes every error message.
    format, y_true, y_prob, prob_prefix, confidence, correct, renormalize, max_bytes, logits
        As for :func:`read_predictions`.

    Returns
    -------
    CalibrationData
        The validated predictions.

    Examples
    --------
    >>> from calviz.io import read_predictions_bytes
    >>> data = read_predictions_bytes(b"y_true,y_prob\\n0,0.2\\n1,0.9\\n1,0.6\\n", "upload.csv")
    >>> data.n, data.is_binary
    (3, True)
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InputError(f"{filename}: expected the file's bytes, got {type(data).__name__}")
    buffer = _io.BytesIO(bytes(data))
    buffer.name = str(filename)
    return read_predictions(
        buffer,
        format=format,
        y_true=y_true,
        y_prob=y_prob,
        prob_prefix=prob_prefix,
        confidence=confidence,
        correct=correct,
        renormalize=renormalize,
        max_bytes=max_bytes,
        logits=logits,
    )


@validate_params({"format": NoneOr(_Format(FORMATS)), "prob_prefix": STR})
def write_predictions(path, data, y_prob=None, *, format: str | None = None, prob_prefix: str = "p_") -> Path:
    """Write predictions in the layout :func:`read_predictions` reads back.

    Binary data is written as ``y_true`` + ``y_prob``, multiclass as ``y_true`` + ``p_0..p_{K−1}``
    (NPZ: arrays ``y_true``, ``y_prob``; NPY: labels in the first column).

    Parameters
    ----------
    path : str or path-like
        Where to write; the extension selects the format unless ``format`` is given.
    data : CalibrationData or array-like
        The predictions, or ``y_true`` (then pass ``y_prob``; both are validated).
    y_prob : array-like, optional
        Probabilities when ``data`` holds the labels.
    format : {"csv", "parquet", "npz", "npy"}, optional
        The file format (any case, or an extension such as ".csv" or "pq").
    prob_prefix : str, default "p_"
        Prefix of the multiclass probability columns.

    Returns
    -------
    pathlib.Path
        The path written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from calviz.io import read_predictions, write_predictions
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_predictions(pathlib.Path(tmp) / "preds.csv", [0, 1, 1], [0.2, 0.9, 0.6])
    ...     read_predictions(path).probs.tolist()
    [0.2, 0.9, 0.6]
    """
    cd = as_calibration_data(data, y_prob)
    path = Path(path)
    fmt = _resolve_format(format, path.name, b"")
    labels, probs = cd.labels, cd.probs
    if fmt == "npz":
        np.savez_compressed(path, y_true=labels, y_prob=probs)
        if path.suffix != ".npz":  # numpy appends .npz to names without it
            os.replace(str(path) + ".npz", path)
    elif fmt == "npy":
        np.save(path, np.column_stack([labels.astype(np.float64), probs]), allow_pickle=False)
        if path.suffix != ".npy":
            os.replace(str(path) + ".npy", path)
    else:
        import pandas as pd

        columns = {"y_true": labels}
        if cd.is_binary:
            columns["y_prob"] = probs
        else:
            columns.update({f"{prob_prefix}{k}": probs[:, k] for k in range(cd.n_classes)})
        frame = pd.DataFrame(columns)
        if fmt == "csv":
            frame.to_csv(path, index=False, float_format="%.17g")
        else:
            frame.to_parquet(path, index=False)
    return path


# -- opening and format detection -------------------------------------------------------------------
def _open(source, max_bytes) -> tuple[bytes | Path, str]:
    """(raw bytes or a Path, display name).  Size limits are checked before anything is parsed."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        label = path.name or str(path)
        if not path.exists():
            raise InputError(f"{label}: no such file ({path})")
        if path.is_dir():
            raise InputError(f"{label}: is a directory, expected a predictions file")
        size = path.stat().st_size
        _check_size(size, max_bytes, label)
        if size == 0:
            raise InputError(f"{label}: the file is empty")
        return path, label
    if isinstance(source, (bytes, bytearray, memoryview)):
        raw, label = bytes(source), "<bytes>"
    elif hasattr(source, "read"):
        label = Path(str(getattr(source, "name", "") or "<buffer>")).name
        raw = _read_limited(source, max_bytes, label)
        if isinstance(raw, str):
            raw = raw.encode()
    else:
        raise InputError(f"expected a path, bytes or a binary file object; got {type(source).__name__}")
    _check_size(len(raw), max_bytes, label)
    if len(raw) == 0:
        raise InputError(f"{label}: the file is empty")
    return raw, label


def _read_limited(stream: BinaryIO, max_bytes, label) -> bytes:
    if max_bytes is None:
        return stream.read()
    raw = stream.read(int(max_bytes) + 1)
    _check_size(len(raw), max_bytes, label)
    return raw


def _check_size(size: int, max_bytes, label: str) -> None:
    if max_bytes is not None and size > max_bytes:
        raise InputError(f"{label}: {size:,} bytes exceeds the size limit max_bytes={int(max_bytes):,}")


def _resolve_format(format, label: str, raw) -> str:
    if format is not None:  # checked by the public functions (validate_params)
        return _format_name(format)
    name = label.lower()
    for fmt, extensions in FORMATS.items():
        if name.endswith(extensions):
            return fmt
    head = raw[:8] if isinstance(raw, bytes) else _head(raw)
    for magic, fmt in _MAGIC:
        if head.startswith(magic):
            return fmt
    if not Path(label).suffix and _looks_like_text(raw):  # unnamed bytes / buffers: CSV is the text format
        return "csv"
    suffix = Path(label).suffix or "(none)"
    raise InputError(
        f"{label}: unknown format (extension {suffix}); use one of "
        f"{', '.join(e for exts in FORMATS.values() for e in exts)} or pass format="
    )


def _looks_like_text(raw) -> bool:
    sample = raw[:4096] if isinstance(raw, bytes) else b""
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return bool(sample) and b"\x00" not in sample


def _head(path: Path) -> bytes:
    with open(path, "rb") as f:
        return f.read(8)


def _last_byte(raw) -> bytes:
    if isinstance(raw, bytes):
        return raw[-1:]
    with open(raw, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1)


def _as_stream(raw):
    return _io.BytesIO(raw) if isinstance(raw, bytes) else open(raw, "rb")  # noqa: SIM115 (closed by caller)


# -- readers: each returns (y_true array, y_prob array, names of the probability columns) -------------
def _read_csv(raw, names, max_bytes):
    blocks = _csv_blocks(raw, names)
    if blocks is not None:
        return blocks
    return _read_csv_frame(raw, names)


def _csv_separator(names) -> str:
    return "\t" if names.get("_label", "").lower().endswith(".tsv") else ","


def _read_csv_frame(raw, names):
    """The whole CSV file through pandas (the reader of record: its messages name the line of a bad
    cell)."""
    import pandas as pd

    sep = _csv_separator(names)
    try:
        with _as_stream(raw) as stream:
            frame = pd.read_csv(stream, sep=sep, engine="c")
        with _as_stream(raw) as stream:
            header = pd.read_csv(stream, sep=sep, engine="c", header=None, nrows=1, dtype=str)
    except pd.errors.EmptyDataError:
        raise InputError("the file is empty (no header and no rows)") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"could not parse as CSV: {first}") from None
    check_unique_columns(header.iloc[0].tolist())  # pandas would rename a repeated name to "name.1"
    if len(frame) and _last_byte(raw) not in (b"\n", b"\r"):
        # a complete CSV ends its last row with a line break; without one the row may be cut short
        # ("0,0.35" cut to "0,0.3" still parses)
        raise InputError(
            f"the last line (line {len(frame) + 1}) does not end with a line break: the file may be cut "
            "mid-row (add a newline at the end if it is complete)"
        )
    return _from_frame(frame, names, header_lines=1)


def _read_parquet(raw, names, max_bytes):
    import pyarrow.parquet as pq

    try:
        with _as_stream(raw) as stream:
            meta = pq.ParquetFile(stream).metadata
    except Exception as exc:  # pyarrow's ArrowInvalid and friends
        raise InputError(f"not a readable Parquet file ({type(exc).__name__}: {exc})") from None
    check_unique_columns(meta.schema.names)
    uncompressed = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if max_bytes is not None and uncompressed > max_bytes:
        raise InputError(f"uncompressed size {uncompressed:,} bytes exceeds max_bytes={int(max_bytes):,}")
    try:
        blocks = _parquet_blocks(raw, meta, names)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"not a readable Parquet file ({type(exc).__name__}: {exc})") from None
    return blocks if blocks is not None else _read_parquet_frame(raw, names)


def _read_parquet_frame(raw, names):
    import pandas as pd

    try:
        with _as_stream(raw) as stream:
            frame = pd.read_parquet(stream, engine="pyarrow")
    except Exception as exc:
        raise InputError(f"not a readable Parquet file ({type(exc).__name__}: {exc})") from None
    return _from_frame(frame, names, header_lines=None)


# -- block readers: the needed columns of a CSV or Parquet file, a block of rows at a time ---------------
#: Rows per block of the Parquet block reader.
BLOCK_ROWS = 1 << 16
#: Bytes of text per block of the CSV block reader.
CSV_BLOCK_BYTES = 1 << 22


class _NotFast(Exception):
    """The block reader cannot read this file (a missing value, a type it does not read, text Arrow's
    parser refuses): the DataFrame reader reads it instead and names the offending cell."""


@dataclass(frozen=True)
class _Blocks:
    """A file read a block of rows at a time: ``batches()`` yields (labels, probabilities) numpy blocks
    (probabilities (rows,) or (rows, K), in the file's dtype, e.g. float32) and may raise
    :class:`_NotFast`; ``fallback()`` reads the whole file with the DataFrame reader instead."""

    columns: dict  # {"y_true": label column, "y_prob": [probability columns]}
    n: int  # rows the file declares (Parquet) or at most holds (CSV: its line breaks)
    batches: Callable[[], Iterator[tuple[np.ndarray, np.ndarray]]]
    fallback: Callable[[], tuple]
    width: int | None = None  # probability columns when not one per name (an NPZ's one (n, K) array)

    @property
    def n_prob_columns(self) -> int:
        return len(self.columns["y_prob"]) if self.width is None else self.width


def _arrow_block(batch) -> tuple[np.ndarray, np.ndarray]:
    """(labels, probabilities) of an Arrow record batch whose first column holds the labels."""
    if any(column.null_count for column in batch.columns) or not _is_number(batch.schema.field(0).type):
        raise _NotFast
    y = batch.column(0).to_numpy(zero_copy_only=False)
    probs = [batch.column(j).to_numpy(zero_copy_only=False) for j in range(1, batch.num_columns)]
    return y, probs[0] if len(probs) == 1 else np.column_stack(probs)


def _is_number(arrow_type) -> bool:
    import pyarrow as pa

    return pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type)


def _parquet_blocks(raw, meta, names) -> _Blocks | None:
    """The needed columns of a Parquet file in blocks of :data:`BLOCK_ROWS` rows, when they are all
    integer or floating point (``None`` otherwise: the DataFrame reader then names the bad cell)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = meta.schema.to_arrow_schema()
    found = [str(c) for c in schema.names]
    if meta.num_rows == 0 or len(found) != len(schema.names):
        return None
    label_col, prob_cols = select_columns(found, names)
    wanted = [label_col, *prob_cols]
    if not all(_is_number(schema.field(c).type) for c in wanted):
        return None
    n = int(meta.num_rows)
    # a path is read by Arrow's own file reader (through a Python file object every page read would be
    # copied into a Python bytes object first: the file's size again in memory)
    source = pa.BufferReader(raw) if isinstance(raw, bytes) else str(raw)

    def batches():
        rows = 0
        try:
            # no pre-buffering (it holds whole row groups, kept by Arrow's allocator: +1 GB at 10⁷ × 10);
            # buffered 1 MB reads instead
            with pq.ParquetFile(source, pre_buffer=False, buffer_size=1 << 20) as reader:
                for batch in reader.iter_batches(batch_size=BLOCK_ROWS, columns=wanted):
                    rows += batch.num_rows
                    yield _arrow_block(batch)
        except pa.ArrowException as exc:
            raise InputError(f"not a readable Parquet file ({type(exc).__name__}: {exc})") from None
        finally:
            pa.default_memory_pool().release_unused()  # Arrow's allocator keeps freed pages (50 MB at 10⁷)
        if rows != n:
            raise InputError(f"the file declares {n:,} rows but holds {rows:,}: it is truncated or corrupt")

    return _Blocks({"y_true": label_col, "y_prob": prob_cols}, n, batches,
                   lambda: _read_parquet_frame(raw, names))


def _csv_blocks(raw, names) -> _Blocks | None:
    """The needed columns of a CSV file parsed by Arrow's streaming reader in blocks of
    :data:`CSV_BLOCK_BYTES` (probability
    columns as float64, labels as Arrow infers them: integer or floating point).  ``None`` — and any
    problem while reading raises :class:`_NotFast` — when the file is not plain numeric CSV (a missing
    line break at the end, repeated or missing column names, empty cells, text): pandas then reads it and
    names the offending line."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if _last_byte(raw) not in (b"\n", b"\r"):
        return None
    parse = pacsv.ParseOptions(delimiter=_csv_separator(names))

    def open_reader(convert):
        source = pa.BufferReader(raw) if isinstance(raw, bytes) else str(raw)
        return pacsv.open_csv(source, read_options=pacsv.ReadOptions(block_size=CSV_BLOCK_BYTES),
                              parse_options=parse, convert_options=convert)

    try:
        with open_reader(pacsv.ConvertOptions()) as reader:
            found = list(reader.schema.names)
        if len(set(found)) != len(found):
            return None
        label_col, prob_cols = select_columns(found, names)
    except (pa.ArrowException, InputError, OSError):
        return None
    convert = pacsv.ConvertOptions(include_columns=[label_col, *prob_cols],
                                   column_types={c: pa.float64() for c in prob_cols})

    def batches():
        try:
            with open_reader(convert) as reader:
                for batch in reader:
                    if batch.num_rows:
                        yield _arrow_block(batch)
        except pa.ArrowException:
            raise _NotFast from None
        finally:
            pa.default_memory_pool().release_unused()

    return _Blocks({"y_true": label_col, "y_prob": prob_cols}, _line_breaks(raw), batches,
                   lambda: _read_csv_frame(raw, names))


def _line_breaks(raw) -> int:
    """The number of line breaks (``\\n``, or ``\\r`` for old Mac files): at least the number of rows."""
    if isinstance(raw, bytes):
        return max(raw.count(b"\n"), raw.count(b"\r"))
    newlines = returns = 0
    with open(raw, "rb") as f:
        while chunk := f.read(1 << 24):
            newlines += chunk.count(b"\n")
            returns += chunk.count(b"\r")
    return max(newlines, returns)


class _Growing:
    """An array of at most ``capacity`` rows filled block by block.  Allocated once, at its capacity:
    the pages of rows never written are never touched, so they take no memory (blocks kept and joined
    at the end would hold the data twice, and freed small blocks stay in the heap)."""

    def __init__(self, capacity: int, dtype, width: int | None = None):
        self._out = np.empty((capacity,) if width is None else (capacity, width), dtype=dtype)
        self.rows = 0

    def add(self, block: np.ndarray) -> None:
        stop = self.rows + block.shape[0]
        if stop > self._out.shape[0]:  # more rows than declared: the DataFrame reader says what is wrong
            raise _NotFast
        self._out[self.rows:stop] = block
        self.rows = stop

    def array(self) -> np.ndarray:
        return self._out[:self.rows]


#: blocks read ahead of the one being worked on
READ_AHEAD = 2


def _read_ahead(items: Iterator, depth: int | None = None) -> Iterator:
    """The items of ``items`` in order, each produced on a helper thread while the caller works on the
    ones before it (at most ``depth`` waiting; default :data:`READ_AHEAD`).  Decompression (zlib) and
    Arrow's decoding release the GIL, so reading a block overlaps validating the previous one.  An
    exception raised while producing an item is raised here, in its place; when the caller stops early
    the producer stops at its next item and closes ``items`` (its files) on its thread."""
    depth = READ_AHEAD if depth is None else depth
    handoff: queue.Queue = queue.Queue(maxsize=max(int(depth), 1))
    stopped = threading.Event()

    def offer(entry) -> bool:
        while not stopped.is_set():
            try:
                handoff.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce():
        try:
            for item in items:
                if not offer(("item", item)):
                    return
            offer(("end", None))
        except BaseException as exc:  # noqa: BLE001 (passed to the consumer, which raises it)
            offer(("error", exc))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    producer = threading.Thread(target=produce, name="calviz-read-ahead", daemon=True)
    producer.start()
    try:
        while True:
            kind, value = handoff.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stopped.set()
        producer.join()


def _whole_arrays(blocks: _Blocks):
    """(labels, probabilities, columns) of the whole file, written block by block into the final arrays
    (no DataFrame, no stacking copy: the peak memory of a 10⁷ × 10 file is its matrix plus a block)."""
    width = blocks.n_prob_columns
    y = p = None
    with contextlib.closing(_read_ahead(blocks.batches())) as batches:
        for y_block, p_block in batches:
            if y is None:
                # integer labels stay integers (validated without a float copy)
                y = _Growing(blocks.n, np.int64 if y_block.dtype.kind in "iu" else np.float64)
                p = _Growing(blocks.n, np.float64, None if width == 1 else width)
            y.add(y_block)
            p.add(p_block)
    if y is None:
        raise _NotFast
    return y.array(), p.array(), blocks.columns


#: The messages of :func:`calviz.as_calibration_data`, in the order it checks (the whole matrix is
#: checked for one rule before the next rule, so a file's error is the first rule broken in any block,
#: at its first row): logits, then probabilities (non-finite before out of range), then labels.
_CHECK_ORDER = ("logits has a non-finite", "y_prob has a non-finite", "y_prob must lie in",
                "cannot be renormalized", "y_prob rows must sum to 1", "y_true has a non-finite",
                "y_true must be")


def _check_rank(message: str) -> int:
    """Position of a validation message in :data:`_CHECK_ORDER` (−1: a rule about the whole input)."""
    return next((i for i, start in enumerate(_CHECK_ORDER) if start in message), -1)


def _read_file_backed(blocks: _Blocks, renormalize: bool, logits: bool) -> FileBackedData:
    """Validate a multiclass file block by block into a :class:`FileBackedData` (the matrix's columns
    on disk).  Each block is validated by :func:`calviz.as_calibration_data` itself; the error
    reported is the one validating the whole matrix at once would report (:data:`_CHECK_ORDER`), its row
    counted from the start of the file."""
    width = blocks.n_prob_columns
    labels, conf, correct = (_Growing(blocks.n, dtype) for dtype in (np.int64, np.float64, np.float64))
    columns = SpilledColumns(width)
    failure = None  # (rank, first row of the block, message) of the first-ranked error found
    start = 0
    with contextlib.closing(_read_ahead(blocks.batches())) as batches:
        for y_block, p_block in batches:
            try:
                block = as_calibration_data(y_block, p_block, renormalize=renormalize, logits=logits,
                                            min_samples=0)
            except InputError as exc:
                rank = _check_rank(str(exc))
                if rank < 0:
                    raise InputError(_row_from(str(exc), start)) from None
                if failure is None or rank < failure[0]:
                    failure = (rank, start, str(exc))
            else:
                if failure is None:  # after an error the blocks are only checked
                    labels.add(block.labels)
                    for part, values in zip((conf, correct), block.top1(), strict=True):
                        part.add(values)
                    columns.append(block.probs)
            start += y_block.shape[0]
    if start < 2:  # too few rows: the whole-file reader says so
        raise _NotFast
    if failure is not None:
        raise InputError(_row_from(failure[2], failure[1]))
    return FileBackedData(labels.array(), (conf.array(), correct.array()), columns)


def _row_from(message: str, start: int) -> str:
    """A block's validation message with its row counted from the start of the file."""
    return re.sub(r"\brow (\d+)", lambda m: f"row {int(m.group(1)) + start}", message, count=1)


class SpilledColumns:
    """The K probability columns of a file, each in its own temporary file, read back one at a time.

    Float64 in file row order; the directory is removed when the last data object using it is gone.

    Attributes
    ----------
    n_classes : int
        K, the number of columns.
    """

    def __init__(self, n_classes: int):
        self.n_classes = int(n_classes)
        self._directory = tempfile.TemporaryDirectory(prefix="calviz_columns_")
        self._paths = [Path(self._directory.name) / f"p_{c}.f8" for c in range(self.n_classes)]

    def append(self, probs: np.ndarray) -> None:
        """Append a validated (rows, K) float64 block."""
        by_class = np.ascontiguousarray(probs.T)
        for path, column in zip(self._paths, by_class, strict=True):
            with open(path, "ab") as f:
                column.tofile(f)

    def read(self, c: int) -> np.ndarray:
        """Column ``c`` (read-only float64), mapped from its file (pages come from the page cache as
        they are read, with no copy; the mapping goes with the last array using it)."""
        if self._paths[c].stat().st_size == 0:
            return np.zeros(0)
        return np.asarray(np.memmap(self._paths[c], dtype=np.float64, mode="r"))


class FileBackedData(CalibrationData):
    """Validated multiclass predictions whose (n, K) probability matrix is not held in memory.

    Held: the int64 labels and the top-1 view (confidence, correct) — 24 bytes a row; each class's
    probabilities are read back from :class:`SpilledColumns` when a one-vs-rest view needs them (the
    classwise target, the ACE).  Every view gives exactly the numbers of the :class:`CalibrationData`
    of the whole matrix; ``probs`` assembles that matrix (n·K·8 bytes) the first time something asks
    for it (the ``topk`` and ``full`` targets do).  Made by ``read_predictions(..., keep_matrix=False)``.

    Attributes
    ----------
    labels : ndarray of shape (n,)
        int64 class ids.
    probs : ndarray of shape (n, K)
        The whole probability matrix, assembled from the spilled columns on first access.
    n, n_classes, is_binary : int, int, bool
        Sample size, number of classes K and False (always multiclass).
    confidence_form : bool
        False: the classes' probabilities, not only the top-1 confidence.
    """

    def __init__(self, labels: np.ndarray, top1: tuple[np.ndarray, np.ndarray], columns: SpilledColumns,
                 rows: np.ndarray | None = None):
        object.__setattr__(self, "labels", _readonly_view(labels))
        object.__setattr__(self, "_cache", {"top1": tuple(_readonly_view(a) for a in top1)})
        object.__setattr__(self, "_columns", columns)
        object.__setattr__(self, "_row_index", rows)  # a subsample's rows in the spilled columns

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    @property
    def is_binary(self) -> bool:
        return False

    @property
    def n_classes(self) -> int:
        return self._columns.n_classes

    @property
    def probs(self) -> np.ndarray:
        """The (n, K) probability matrix, assembled from the columns on first use."""
        return self._cached("probs", lambda: (
            np.column_stack([self._class_probs(c) for c in range(self.n_classes)]),))[0]

    def _class_probs(self, c: int) -> np.ndarray:
        column = self._columns.read(c)
        return column if self._row_index is None else column[self._row_index]

    def _rows(self, idx: np.ndarray) -> FileBackedData:
        conf, correct = self.top1()
        rows = idx if self._row_index is None else self._row_index[idx]
        return FileBackedData(self.labels[idx], (conf[idx], correct[idx]), self._columns, rows)


def _read_npz(raw, names, max_bytes):
    def blocks(keys, probs_shape):
        whole = dict(names, _blocks=False)
        return _npz_blocks(raw, keys, probs_shape, lambda: _read_npz(raw, whole, max_bytes))

    with _as_stream(raw) as stream:
        return _read_npz_stream(stream, names, max_bytes, blocks if names.get("_blocks") else None)


def _read_npz_stream(stream, names, max_bytes, blocks=None):
    """(labels, probabilities, columns) of an NPZ archive, or ``blocks(keys, probabilities' shape)`` (a
    :class:`_Blocks`) when given and the arrays can be read a block of rows at a time
    (:func:`_row_blocks_fit`), after the same checks."""
    try:
        with zipfile.ZipFile(stream) as zf:
            total = sum(info.file_size for info in zf.infolist())
    except zipfile.BadZipFile:
        raise InputError("not a valid NPZ (zip) archive") from None
    if max_bytes is not None and total > max_bytes:
        raise InputError(f"uncompressed size {total:,} bytes exceeds max_bytes={int(max_bytes):,}")
    stream.seek(0)
    try:
        archive = np.load(stream, allow_pickle=False)
    except Exception as exc:
        raise InputError(f"not a readable NPZ archive ({type(exc).__name__}: {exc})") from None
    with archive:
        found = list(archive.files)
        label_key, prob_keys = select_columns(found, names, kind="array")
        keys = (label_key, *prob_keys)
        headers = []
        for key in keys:
            with zipfile.ZipFile(stream) as zf:
                member = zf.getinfo(f"{key}.npy")
                with zf.open(member) as entry:
                    headers.append(_check_declared_size(entry, member.file_size, f"array {key!r}"))
        shapes = {key: header[0] for key, header in zip(prob_keys, headers[1:], strict=True)}
        if len(prob_keys) > 1 and (len(set(shapes.values())) > 1 or len(headers[1][0]) != 1):
            raise InputError(f"the probability arrays must be 1-D and of one length (one value per row); "
                             f"got shapes {', '.join(f'{k!r} {v}' for k, v in shapes.items())}")
        if blocks is not None and _row_blocks_fit(*headers):
            return blocks(keys, headers[1][0])
        y = _npz_array(archive, label_key)
        if len(prob_keys) == 1:
            p = _npz_array(archive, prob_keys[0])
        else:  # one column at a time into the matrix (at most one column more than the matrix in memory)
            dtype = np.result_type(*(header[2] for header in headers[1:]))
            p = np.empty((headers[1][0][0], len(prob_keys)), dtype=dtype)
            for j, key in enumerate(prob_keys):
                p[:, j] = _npz_array(archive, key)
    return y, p, {"y_true": label_key, "y_prob": prob_keys}


def _npz_array(archive, key: str) -> np.ndarray:
    """One array of an open NPZ archive, refused when pickled or corrupt."""
    try:
        return archive[key]
    except ValueError as exc:  # "Object arrays cannot be loaded when allow_pickle=False"
        raise InputError(f"array {key!r} holds pickled Python objects, refused for safety ({exc})") from None
    except (zipfile.BadZipFile, OSError, EOFError) as exc:  # bad CRC, truncated member
        raise InputError(f"array {key!r} is corrupt ({type(exc).__name__}: {exc})") from None


def _npy_header(stream) -> tuple[tuple, bool, np.dtype]:
    """(shape, Fortran order, dtype) of the NPY array at the stream's position; the stream is left at
    the first byte of the data."""
    version = np.lib.format.read_magic(stream)
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else (
        np.lib.format.read_array_header_2_0)  # 3.0 has 2.0's layout (UTF-8 names)
    return read_header(stream)


def _check_declared_size(stream, size: int, what: str) -> tuple[tuple, bool, np.dtype]:
    """Refuse an NPY whose header declares more data than the ``size`` bytes that hold it (a few hundred
    bytes declaring 10¹² elements would otherwise be allocated before the short read is noticed).
    Returns the header (:func:`_npy_header`)."""
    try:
        header = _npy_header(stream)
    except Exception as exc:
        raise InputError(f"{what} has no valid NPY header ({type(exc).__name__}: {exc})") from None
    shape, _, dtype = header
    declared = math.prod(shape) * dtype.itemsize
    if declared > size:
        raise InputError(
            f"{what} declares shape {shape} ({declared:,} bytes) but holds only {size:,} bytes: the file is "
            "truncated or corrupt"
        )
    return header


def _row_blocks_fit(labels_header, *probs_headers) -> bool:
    """Whether NPY arrays with these headers (:func:`_npy_header`) are read a block of rows at a time
    when the matrix is not kept: multiclass C-ordered numeric probabilities (n ≥ 2, K ≥ 2) — one (n, K)
    matrix or, in an NPZ archive, K ≥ 2 arrays of shape (n,) — and, in an NPZ archive, a C-ordered
    numeric 1-D label array of the same length.  Any other layout is read whole, so its message (a wrong
    shape, booleans, pickled objects) comes from the whole-array rules.  One NPY array (labels in column
    0) is passed as ``labels_header`` alone."""
    def numeric_c_order(header):
        _, fortran, dtype = header
        return not fortran and not dtype.hasobject and dtype.kind in "iuf"

    if not probs_headers:  # one NPY array: y_true in column 0, then K ≥ 2 probability columns
        shape = labels_header[0]
        return numeric_c_order(labels_header) and len(shape) == 2 and shape[0] >= 2 and shape[1] >= 3
    n = labels_header[0][0] if len(labels_header[0]) == 1 else -1
    shapes = [header[0] for header in probs_headers]
    matrix = len(shapes) == 1 and len(shapes[0]) == 2 and shapes[0][1] >= 2 and shapes[0][0] == n
    columns = len(shapes) >= 2 and all(shape == (n,) for shape in shapes)
    return all(map(numeric_c_order, (labels_header, *probs_headers))) and n >= 2 and (matrix or columns)


def _npy_row_blocks(stream, rows: int) -> Iterator[np.ndarray]:
    """The NPY array in a stream (C order), :data:`BLOCK_ROWS` rows at a time, each read when it is
    needed (a zip member is read forwards only, decompressed as it is read).  A read error or a short
    read raises :class:`_NotFast`: the whole-array reader then says what is wrong, in its words."""
    try:
        shape, _, dtype = _npy_header(stream)
        row_bytes = math.prod(shape[1:]) * dtype.itemsize
        for start in range(0, rows, BLOCK_ROWS):
            count = min(BLOCK_ROWS, rows - start)
            data = stream.read(count * row_bytes)
            if len(data) != count * row_bytes:
                raise _NotFast
            yield np.frombuffer(data, dtype=dtype).reshape((count, *shape[1:]))
        stream.read(1)  # at the end of a zip member: its CRC is checked
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, zlib.error):  # bad CRC, cut member
        raise _NotFast from None


def _npz_blocks(raw, keys, probs_shape, fallback) -> _Blocks:
    """The label and probability arrays ``keys`` of an NPZ archive — the labels, then one (n, K) matrix
    of shape ``probs_shape`` or K arrays of shape (n,) — read side by side a block of rows at a time
    (stored and compressed members alike)."""
    n = probs_shape[0]
    width = probs_shape[1] if len(keys) == 2 else None  # (None: one array per column)

    def batches():
        with _as_stream(raw) as stream, zipfile.ZipFile(stream) as zf, contextlib.ExitStack() as members:
            streams = [_npy_row_blocks(members.enter_context(zf.open(f"{key}.npy")), n) for key in keys]
            for labels, *probs in zip(*streams, strict=True):
                yield labels, probs[0] if width is not None else np.column_stack(probs)

    return _Blocks({"y_true": keys[0], "y_prob": list(keys[1:])}, n, batches, fallback, width)


def _npy_blocks(raw, n: int, width: int, fallback) -> _Blocks:
    """One NPY array (labels in column 0, then ``width`` probability columns) a block of rows at a
    time, read from the file as it is needed."""

    def batches():
        with _as_stream(raw) as stream:
            for block in _npy_row_blocks(stream, n):
                yield block[:, 0], block[:, 1:]

    return _Blocks(_npy_columns(width + 1), n, batches, fallback)


def _npy_columns(width: int) -> dict:
    """The column names of an NPY array of ``width`` columns in messages."""
    return {"y_true": "array column 0", "y_prob": [f"array column {j + 1}" for j in range(width - 1)]}


def _read_npy(raw, names, max_bytes):
    with _as_stream(raw) as stream:
        size = stream.seek(0, os.SEEK_END)
        stream.seek(0)
        header = _check_declared_size(stream, size, "the array")
    if names.get("_blocks") and _row_blocks_fit(header):
        whole = dict(names, _blocks=False)
        return _npy_blocks(raw, header[0][0], header[0][1] - 1, lambda: _read_npy(raw, whole, max_bytes))
    try:
        with _as_stream(raw) as stream:
            arr = np.load(stream, allow_pickle=False)
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise InputError("the array holds pickled Python objects, refused for safety") from None
        raise InputError(f"not a readable NPY file ({exc})") from None
    except Exception as exc:
        raise InputError(f"not a readable NPY file ({type(exc).__name__}: {exc})") from None
    if arr.ndim != 2 or arr.shape[1] < 2:
        raise InputError(
            f"NPY input must be a 2-D array with y_true in column 0 and probabilities in the remaining "
            f"columns; got shape {arr.shape}"
        )
    if arr.dtype.kind not in "biuf":
        raise InputError(f"NPY array must be numeric; got dtype {arr.dtype}")
    y = arr[:, 0]
    p = arr[:, 1] if arr.shape[1] == 2 else arr[:, 1:]
    return y, p, _npy_columns(arr.shape[1])


_READERS = {"csv": _read_csv, "parquet": _read_parquet, "npz": _read_npz, "npy": _read_npy}


def _prob_columns(columns, prefix: str, kind: str = "column") -> list[str]:
    pattern = re.compile(re.escape(prefix) + r"(\d+)$")
    numbered = {}
    for c in columns:
        m = pattern.match(str(c))
        if m:
            numbered[int(m.group(1))] = c
    if not numbered:
        return []
    k = max(numbered) + 1
    gaps = [i for i in range(k) if i not in numbered]
    if gaps:
        raise InputError(
            f"probability {kind}s {prefix}0..{prefix}{k - 1} must all be present; missing {prefix}{gaps[0]}"
        )
    return [numbered[i] for i in range(k)]


def _from_frame(frame, names, header_lines):
    check_unique_columns(list(frame.columns))
    found = [str(c) for c in frame.columns]
    frame.columns = found
    if len(frame) == 0:
        raise InputError(f"no data rows (columns {found})")
    label_col, prob_cols = select_columns(found, names)
    y = _numeric_column(frame, label_col, header_lines)
    ps = [_numeric_column(frame, c, header_lines) for c in prob_cols]
    p = ps[0] if len(ps) == 1 else np.column_stack(ps)
    return y, p, {"y_true": label_col, "y_prob": prob_cols}


def is_confidence_form(columns: dict, names: dict) -> bool:
    """Whether the columns :func:`select_columns` chose are the confidence form, ``confidence`` + ``correct``.

    That form is the top-1 reduction of a classifier (:attr:`calviz.CalibrationData.confidence_form`), not
    P(y = 1) of a binary one.

    Parameters
    ----------
    columns : dict
        ``{"y_true": label column, "y_prob": [probability columns]}`` as chosen.
    names : dict
        The names looked for (:data:`COLUMN_NAMES` and the caller's).

    Returns
    -------
    bool

    Examples
    --------
    >>> from calviz.io import COLUMN_NAMES, is_confidence_form, select_columns
    >>> label, probs = select_columns(["correct", "confidence"], COLUMN_NAMES)
    >>> is_confidence_form({"y_true": label, "y_prob": probs}, COLUMN_NAMES)
    True
    >>> label, probs = select_columns(["y_true", "y_prob"], COLUMN_NAMES)
    >>> is_confidence_form({"y_true": label, "y_prob": probs}, COLUMN_NAMES)
    False
    """
    return columns == {"y_true": names["correct"], "y_prob": [names["confidence"]]}


def select_columns(found: list[str], names, kind: str = "column") -> tuple[str, list[str]]:
    """The label column and the probability columns of a table, by the rule of :func:`read_predictions`.

    ``y_true`` + ``y_prob`` (binary), else ``y_true`` + ``p_0`` … ``p_{K−1}``, else ``correct`` +
    ``confidence`` (the top-1 form); :func:`calviz.dask.from_dataframe` finds its columns, and the NPZ
    reader its arrays, the same way.

    Parameters
    ----------
    found : list of str
        The table's columns.
    names : dict
        The names looked for under the keys ``y_true``, ``y_prob``, ``prob_prefix``, ``confidence`` and
        ``correct`` (defaults: :data:`COLUMN_NAMES`); a list as ``y_prob`` names the probability columns
        themselves.  A ``y_prob`` other than the default must be a column.
    kind : str, default "column"
        What the names are, in messages ("array": the arrays of an NPZ archive).

    Returns
    -------
    (str, list of str)
        The label column and the probability column(s).

    Raises
    ------
    InputError
        A column is missing (the message lists those found), ``p_0`` … have a gap, or a single ``p_*``
        column would make a one-class model.

    Examples
    --------
    >>> from calviz.io import COLUMN_NAMES, select_columns
    >>> select_columns(["id", "y_true", "p_1", "p_0"], COLUMN_NAMES)
    ('y_true', ['p_0', 'p_1'])
    >>> select_columns(["correct", "confidence"], COLUMN_NAMES)
    ('correct', ['confidence'])
    """
    if any(names[k] != COLUMN_NAMES[k] for k in ("confidence", "correct")):
        # the caller named the confidence form: it is read, or refused, never another layout instead
        pair = [names["confidence"], names["correct"]]
        missing = [c for c in pair if c not in found]
        if missing:
            raise InputError(f"missing {kind}(s) {missing} of the confidence form ({pair[0]!r} + "
                             f"{pair[1]!r}); found {kind}s {found}")
        return names["correct"], [names["confidence"]]
    given = names["y_prob"]
    explicit = not isinstance(given, str) or given != COLUMN_NAMES["y_prob"]  # (not the default name)
    if not isinstance(given, str) and len(given) == 1:  # one named column: binary P(y=1), as its name alone
        given = given[0]
    listed = not isinstance(given, str)  # the probability columns themselves
    named = list(given) if listed else [given] if explicit else []
    missing = [c for c in named if c not in found]
    if missing:  # columns the caller named must be there: never fall back to other columns
        raise InputError(f"missing probability {kind}(s) {missing}; found {kind}s {found}")
    # columns the caller named are used as they are; otherwise p_0..p_{K-1} are looked for
    prob_cols = [] if listed or named else _prob_columns(found, names["prob_prefix"], kind)
    if listed:
        label_col, prob_cols = names["y_true"], named
    elif given in found:
        label_col, prob_cols = names["y_true"], [given]
    elif prob_cols:
        label_col = names["y_true"]
    elif names["confidence"] in found and names["correct"] in found:
        label_col, prob_cols = names["correct"], [names["confidence"]]
    else:
        raise InputError(
            f"no probability {kind}s: expected {names['y_prob']!r}, {names['prob_prefix']}0.."
            f"{names['prob_prefix']}{{K-1}}, or {names['confidence']!r} + {names['correct']!r}; "
            f"found {kind}s {found}"
        )
    if label_col not in found:
        raise InputError(f"missing label {kind} {label_col!r}; found {kind}s {found}")
    if len(prob_cols) == 1 and prob_cols[0] not in (given, names["confidence"]):
        raise InputError(
            f"only one probability {kind} {prob_cols[0]!r} (a single class): binary files use "
            f"{names['y_prob']!r} = P(y=1), or {names['prob_prefix']}0 and {names['prob_prefix']}1"
        )
    return label_col, prob_cols


def _row_ref(i: int, header_lines) -> str:
    return f"row {i}" + (f" (line {i + 1 + header_lines} of the file)" if header_lines else "")


def _numeric_column(frame, name: str, header_lines) -> np.ndarray:
    """One column as a numpy array for :func:`as_calibration_data`, which applies the in-memory rules
    (booleans are labels, never probabilities; text is not a number).  Only CSV text is parsed here:
    a typed column (Parquet: ``header_lines`` None) holding strings is refused like a string array."""
    import pandas as pd

    col = frame[name]
    if col.dtype == bool or pd.api.types.is_bool_dtype(col.dtype):
        if col.isna().any():
            i = int(np.flatnonzero(col.isna().to_numpy())[0])
            raise InputError(f"column {name!r} has an empty cell at {_row_ref(i, header_lines)}")
        return col.to_numpy(dtype=bool)
    if not pd.api.types.is_numeric_dtype(col.dtype):
        if header_lines is None:
            return col.to_numpy(dtype=object, na_value=None)
        values = col.astype("string") if not pd.api.types.is_object_dtype(col.dtype) else col
        coerced = pd.to_numeric(values, errors="coerce")
        bad = coerced.isna().to_numpy() & values.notna().to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"column {name!r} has a non-numeric cell {cell_repr(values.iloc[i])} at "
                f"{_row_ref(i, header_lines)}"
            )
        col = coerced
    arr = col.to_numpy(dtype=np.float64, na_value=np.nan)
    missing = np.isnan(arr)
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise InputError(f"column {name!r} has an empty or NaN cell at {_row_ref(i, header_lines)}")
    return arr


def _validate(y, p, columns, renormalize, logits=False, confidence_form=False) -> CalibrationData:
    """as_calibration_data, with messages naming the file's columns instead of y_true / y_prob and
    positions in the probability matrix."""
    try:
        return as_calibration_data(y, p, renormalize=renormalize, logits=logits,
                                   confidence_form=confidence_form)
    except InputError as exc:
        raise _named(exc, columns) from None


def _named(exc: InputError, columns) -> InputError:
    """A validation error with the file's column names in place of y_true / y_prob."""
    return InputError(name_columns(str(exc), columns))


def name_columns(message: str, columns) -> str:
    """A validation message that names a table's columns instead of the arguments y_true and y_prob.

    The readers of files and of Dask partitions both word :func:`calviz.as_calibration_data`'s messages
    this way, so that a user reads the names of their own columns.

    Parameters
    ----------
    message : str
        The message of :func:`calviz.as_calibration_data` (it names ``y_true``, ``y_prob`` and positions
        in the probability matrix, "column 1").
    columns : dict
        ``{"y_true": label column, "y_prob": [probability columns]}``.

    Returns
    -------
    str
        The message with the columns' names.

    Examples
    --------
    >>> from calviz.io import name_columns
    >>> columns = {"y_true": "label", "y_prob": ["p_0", "p_1", "p_2"]}
    >>> name_columns("y_prob must lie in [0, 1]; row 4, column 1 has 1.5", columns)
    "probabilities must lie in [0, 1]; row 4, column 'p_1' has 1.5"
    >>> name_columns("y_true has 2 rows but y_prob has 3", {"y_true": "label", "y_prob": ["score"]})
    "'label' has 2 rows but 'score' has 3"
    """
    prob_cols = columns["y_prob"]
    if len(prob_cols) > 1:
        message = re.sub(r"column (\d+)", lambda m: f"column {prob_cols[int(m.group(1))]!r}", message)
        message = re.sub(r"\by_prob\b", "probabilities", message)
    else:
        message = re.sub(r"\by_prob\b", repr(prob_cols[0]), message)
    return re.sub(r"\by_true\b", repr(columns["y_true"]), message)


def read_group_column(file: str, column: str, n: int, *, label_column: str = "y_true", labels=None,
                      content: bytes | None = None):
    """The values of one column of a predictions file, one per row.

    They are the groups of :func:`calviz.calibration_by_group` (``calviz check --group-by``,
    ``analyze(path, group=...)``).

    Parameters
    ----------
    file : str
        A CSV/TSV, Parquet or NPZ file (the format from its extension), or ``dataset:NAME``.
    column : str
        The column (NPZ: the array) to read.
    n : int
        The number of rows of the predictions; the column must have as many values.
    label_column : str, default "y_true"
        The name of the label column: naming it returns ``labels`` (so ``dataset:NAME``, which has no
        other column, can be grouped by its labels).
    labels : array-like, optional
        The validated labels, returned when ``column`` is ``label_column``.
    content : bytes, optional
        The file's bytes (an upload; ``file`` is then only its name).

    Returns
    -------
    numpy.ndarray of shape (n,)
        The column's values as read (strings stay strings, missing text is the empty string).

    Raises
    ------
    InputError
        No such column or array, a format without columns, or not one value per row.

    Examples
    --------
    >>> from calviz.io import read_group_column
    >>> csv = b"y_true,y_prob,region\\n1,0.9,north\\n0,0.2,south\\n1,0.7,north\\n"
    >>> read_group_column("predictions.csv", "region", 3, content=csv)
    array(['north', 'south', 'north'], dtype=object)
    >>> try:
    ...     read_group_column("predictions.csv", "city", 3, content=csv)
    ... except ValueError as error:                       # calviz.InputError is a ValueError
    ...     print(str(error)[:39])
    predictions.csv: no column 'city' (Usec
    """
    if column == label_column and labels is not None:
        return np.asarray(labels)
    if file.startswith("dataset:"):
        raise InputError(f"embedded datasets have no column {column!r}; group by the labels with "
                         f"--group-by {label_column}")
    path = Path(file)
    suffix = path.suffix.lower()
    source = _io.BytesIO(content) if content is not None else path
    try:
        if suffix in FORMATS["npz"]:
            with np.load(source, allow_pickle=False) as f:
                if column not in f.files:
                    raise InputError(f"{file}: no array {column!r}; arrays: {', '.join(f.files)}")
                values = np.asarray(f[column])
        elif suffix in FORMATS["parquet"]:
            import pandas as pd

            values = pd.read_parquet(source, columns=[column]).iloc[:, 0].to_numpy()
        elif suffix in FORMATS["csv"]:
            import pandas as pd

            frame = pd.read_csv(source, sep="\t" if suffix == ".tsv" else ",", usecols=[column],
                                keep_default_na=False)
            values = frame.iloc[:, 0].to_numpy()
        else:
            raise InputError(f"{file}: a group column needs a CSV, Parquet or NPZ file")
    except InputError:
        raise
    except (KeyError, ValueError, OSError) as exc:
        raise InputError(f"{file}: no column {column!r} ({str(exc).strip().splitlines()[0]})") from None
    if values.ndim != 1 or values.shape[0] != n:
        raise InputError(f"{file}: column {column!r} has shape {values.shape}, expected one value per row "
                         f"({n})")
    return values
