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

import io as _io
import os
from pathlib import Path

import numpy as np

from calviz._data import CalibrationData, InputError, as_calibration_data
from calviz._params import BOOLEAN, NON_NEGATIVE_INT, STR, Instance, NoneOr, validate_params
from calviz.io._arrays import _read_npy, _read_npz
from calviz.io._blocks import _Blocks, _NotFast, _whole_arrays
from calviz.io._columns import (
    COLUMN_NAMES,
    _named,
    _validate,
    is_confidence_form,
    name_columns,
    read_group_column,
    read_weight_column,
    select_columns,
)
from calviz.io._sniff import (
    DECODED_PER_FILE_BYTE,
    DEFAULT_MAX_BYTES,
    FORMATS,
    SizeLimitError,
    _Format,
    _open,
    _resolve_format,
)
from calviz.io._spill import FileBackedData, SpilledColumns, _read_file_backed
from calviz.io._tabular import _read_csv, _read_parquet

__all__ = ["read_predictions", "read_predictions_bytes", "write_predictions", "select_columns",
           "COLUMN_NAMES", "FileBackedData", "FORMATS", "DEFAULT_MAX_BYTES", "DECODED_PER_FILE_BYTE"]


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


#: the positive label of binary files (scikit-learn's ``pos_label``): a label as written, or its int
_POS_LABEL = {"pos_label": NoneOr(Instance((str, int, np.integer), "a str or an int"))}


@validate_params({**_READ_OPTIONS, "keep_matrix": BOOLEAN, **_POS_LABEL})
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
    pos_label: str | int | None = None,
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
        Bound (an int ≥ 0) on the file size and on the uncompressed size of NPZ arrays (None: no
        limit).  The arrays the file decodes to — rows × columns read × 8 bytes, from its metadata (a
        Parquet footer, NPY headers, a CSV header and line breaks) before anything is decoded — are
        bounded by :data:`DECODED_PER_FILE_BYTE` × ``max_bytes``, the most a CSV file of ``max_bytes``
        holds: a small compressed file cannot decode to any number of rows.
    logits : bool, default False
        Read the probability columns as logits (a stable softmax per row, a sigmoid for one column).
    keep_matrix : bool, default True
        False (large multiclass CSV / Parquet files analysed for a scalar target: top-1 or one class
        against the rest): the file is read and validated a block of rows at a time and the (n, K)
        probability matrix is never held in memory — only the labels and the top-1 view (confidence,
        correct); each class's column goes to a temporary file and is read back when a one-vs-rest view
        needs it (:class:`FileBackedData`).  Every view gives the same numbers as with the whole matrix
        and every row is validated, with the same messages.  Other formats ignore it.
    pos_label : str or int, optional
        Binary files: the class whose probability the ``y_prob`` column is, when the label column holds
        class names ("no"/"yes") or two labels other than 0/1 (scikit-learn's convention,
        :func:`calviz.as_calibration_data`); text such as "1" names a numeric label.  Multiclass files
        with class names map them to the probability columns in sorted order and take no ``pos_label``.

    Returns
    -------
    CalibrationData
        The validated predictions.

    Raises
    ------
    InputError
        Starting with the file name and naming the column and row: missing columns (listing those
        found), non-numeric or empty cells, empty files, unknown formats, every rule of
        :func:`calviz.as_calibration_data`, and files over ``max_bytes`` or decoding to more than
        :data:`DECODED_PER_FILE_BYTE` × ``max_bytes`` (a ``SizeLimitError``, which holds the sizes).
        An option of the wrong type or out of range is refused first, with the uniform parameter
        message (no file name).

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
                # (pos_label: through as_calibration_data, which refuses it for multiclass files)
                if not keep_matrix and read.n_prob_columns > 1 and pos_label is None:
                    try:
                        return _read_file_backed(read, renormalize, logits)
                    except InputError as exc:
                        raise _named(exc, read.columns) from None
                read = _whole_arrays(read)
            except _NotFast:  # the DataFrame reader reads it and names the offending cell
                read = read.fallback()
        y, p, columns = read
        return _validate(y, p, columns, renormalize, logits, is_confidence_form(columns, names), pos_label)
    except SizeLimitError as exc:
        raise exc.prefixed(label) from None
    except InputError as exc:
        raise InputError(f"{label}: {exc}") from None


@validate_params({**_READ_OPTIONS, **_POS_LABEL})
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
    pos_label: str | int | None = None,
) -> CalibrationData:
    """:func:`read_predictions` for an upload: the file's bytes and its name.

    Parameters
    ----------
    data : bytes
        The file's content.
    filename : str
        Its name: selects the format by extension and prefixes every error message.
    format, y_true, y_prob, prob_prefix, confidence, correct, renormalize, max_bytes, logits, pos_label
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
        pos_label=pos_label,
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


_READERS = {"csv": _read_csv, "parquet": _read_parquet, "npz": _read_npz, "npy": _read_npy}

# the public names are documented (and pickled) as calviz.io's
for _public in (read_predictions, read_predictions_bytes, write_predictions, select_columns,
                is_confidence_form, name_columns, read_group_column, read_weight_column, FileBackedData,
                SpilledColumns):
    _public.__module__ = __name__
del _public
