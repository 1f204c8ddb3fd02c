"""Spilling: a multiclass file validated block by block, each class's probabilities in a temporary
file, read back when a one-vs-rest view needs them."""

from __future__ import annotations

import contextlib
import re
import tempfile
from pathlib import Path

import numpy as np

from calviz._data import CalibrationData, InputError, _readonly_view, as_calibration_data
from calviz.io._blocks import _Blocks, _Growing, _NotFast, _read_ahead

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
            if failure is None and not (renormalize or logits):
                checked = _checked_by_class(y_block, p_block)
                if checked is not None:  # valid: kept without a row-major copy
                    labels.add(y_block)
                    conf.add(checked[0])
                    correct.add(checked[1])
                    columns.append(p_block)
                    start += y_block.shape[0]
                    continue
            try:
                block = as_calibration_data(y_block, np.ascontiguousarray(p_block), renormalize=renormalize,
                                            logits=logits, min_samples=0)
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


def _checked_by_class(y_block: np.ndarray, p_block: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(confidence, correct) of a block whose probabilities are stored by class (``p_block.T`` is a
    C-contiguous (K, rows) float64 array, as the Parquet reader gives them) and whose labels are int64,
    when every rule :func:`calviz.as_calibration_data` checks holds (one pass:
    :func:`calviz._kernels.validation.class_columns_top1`); None otherwise — any other block, and a block
    breaking a rule, which :func:`calviz.as_calibration_data` then words.  The same numbers as validating
    the row-major block: the same comparisons, the row sums added in the same order."""
    from calviz._data import ROW_SUM_LIMIT
    from calviz._kernels.validation import class_columns_top1
    from calviz._params import check_n_classes

    by_class = p_block.T
    if (p_block.ndim != 2 or p_block.dtype != np.float64 or not by_class.flags.c_contiguous
            or y_block.dtype != np.int64 or y_block.ndim != 1 or y_block.shape[0] != p_block.shape[0]
            or p_block.shape[1] < 2):
        return None
    try:
        check_n_classes(p_block.shape[1])
    except InputError:
        return None
    conf, correct = np.empty(p_block.shape[0]), np.empty(p_block.shape[0])
    if not class_columns_top1(by_class, y_block, ROW_SUM_LIMIT, conf, correct):
        return None
    return conf, correct


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
    weights : ndarray of shape (n,) or None
        The rows' sample weights (``calviz._weights.with_weights``), or None.
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
        part = FileBackedData(self.labels[idx], (conf[idx], correct[idx]), self._columns, rows)
        if self.weights is not None:  # (the weights of the rows kept)
            object.__setattr__(part, "weights", _readonly_view(self.weights[idx]))
        return part


