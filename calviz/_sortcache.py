"""The sorted keys of a scalar view, shared by the computations that sort the same view.

T-Cal's scan, the Kolmogorov–Smirnov and Kuiper statistics and the CORP score decomposition each sort
the pairs (z_i, y_i) of a validated scalar view by prediction.  ``calviz check`` and the dashboard run
them one after the other on the same (read-only) arrays of one :class:`calviz.CalibrationData`, so the
radix-sorted keys bits(z) << 1 | y (:func:`calviz._kernels.tcal.binary_sort_keys`) of the last view
sorted are kept and reused: at 10⁷ rows a sort costs about 40 times the check that the view is the same.

A hit needs the same array objects, still alive, still read-only, and an unchanged order-independent
fingerprint of the pairs (:func:`calviz._kernels.sorting.pair_fingerprint`: one pass, no memory), so a
caller's in-place change of the data behind a view is never answered with stale keys.  One entry, for
views of at least :data:`CACHED_ROWS` rows only (a subsample sorted in between neither evicts it nor is
kept): the keys (8 bytes a row) live until another such view is sorted or the view's arrays are gone.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from calviz._kernels.sorting import pair_fingerprint, radix_sort_keys
from calviz._kernels.tcal import binary_sort_keys

#: views with fewer rows are sorted each time (a sort of them costs milliseconds)
CACHED_ROWS = 1 << 20

_lock = threading.RLock()  # re-entrant: a weakref callback may run inside the locked region (GC)
_entry: tuple | None = None  # (weakref to z, weakref to y, fingerprint, read-only sorted keys)


def _forget(ref) -> None:
    """Drop the entry when an array it was made from is gone (not a newer entry)."""
    global _entry
    with _lock:
        if _entry is not None and ref in (_entry[0], _entry[1]):
            _entry = None


def cached_sorted_keys(z: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """The sorted keys of (z, y) (int64) when they are the view sorted last, else None."""
    entry = _entry
    if entry is None or entry[0]() is not z or entry[1]() is not y or z.flags.writeable or y.flags.writeable:
        return None
    if pair_fingerprint(z, y) != entry[2]:
        return None
    return entry[3]


def sorted_keys(z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``radix_sort_keys(binary_sort_keys(z, y))`` of a contiguous float64 view (z ≥ 0, labels 0/1),
    from the cache when (z, y) is the view sorted last; a read-only view's keys are kept (from
    :data:`CACHED_ROWS` rows).  The callers only read the keys (never write them: they may be shared)."""
    global _entry
    hit = cached_sorted_keys(z, y)
    if hit is not None:
        return hit
    if z.shape[0] < CACHED_ROWS or z.flags.writeable or y.flags.writeable:
        return radix_sort_keys(binary_sort_keys(z, y).view(np.int64))
    with _lock:  # held while sorting: a view asking for the same keys on another thread waits for them
        hit = cached_sorted_keys(z, y)
        if hit is not None:
            return hit
        keys = radix_sort_keys(binary_sort_keys(z, y).view(np.int64))
        _entry = (weakref.ref(z, _forget), weakref.ref(y, _forget), pair_fingerprint(z, y), keys)
    return keys
