"""Block reading: a file's rows a block at a time, read ahead on a helper thread, written into arrays
allocated once."""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

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
                # integer labels stay integers of their own type (validated without a float copy; a
                # uint64 label above 2^63 would wrap to a negative int64 and be shown as such)
                y = _Growing(blocks.n, y_block.dtype if y_block.dtype.kind in "iu" else np.float64)
                p = _Growing(blocks.n, np.float64, None if width == 1 else width)
            y.add(y_block)
            p.add(p_block)
    if y is None:
        raise _NotFast
    return y.array(), p.array(), blocks.columns


