"""Array readers: NPZ archives and NPY files, read with ``allow_pickle=False``, their headers checked
against the bytes that hold them, and a block of rows at a time when the matrix is not kept."""

from __future__ import annotations

import contextlib
import math
import os
import zipfile
import zlib
from collections.abc import Iterator

import numpy as np

from calviz._data import InputError
from calviz._params import check_n_classes
from calviz.io import _blocks
from calviz.io._blocks import _Blocks, _NotFast
from calviz.io._columns import select_columns
from calviz.io._sniff import _as_stream, check_decoded_size


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
        # the arrays read, by their headers' shapes, before any is decompressed (as float64)
        dims = [header[0] or (1,) for header in headers]
        check_decoded_size(max(d[0] for d in dims), sum(math.prod(d[1:]) for d in dims), max_bytes)
        if len(prob_keys) == 1 and len(dims[1]) == 2:  # one (n, K) matrix
            check_n_classes(dims[1][1])
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
    """The NPY array in a stream (C order), :data:`_blocks.BLOCK_ROWS` rows at a time, each read when it is
    needed (a zip member is read forwards only, decompressed as it is read).  A read error or a short
    read raises :class:`_NotFast`: the whole-array reader then says what is wrong, in its words."""
    try:
        shape, _, dtype = _npy_header(stream)
        row_bytes = math.prod(shape[1:]) * dtype.itemsize
        for start in range(0, rows, _blocks.BLOCK_ROWS):
            count = min(_blocks.BLOCK_ROWS, rows - start)
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
    shape = header[0]
    check_decoded_size(shape[0] if len(shape) else 1, math.prod(shape[1:]), max_bytes)
    if len(shape) == 2:
        check_n_classes(shape[1] - 1)  # (column 0 holds the labels)
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


