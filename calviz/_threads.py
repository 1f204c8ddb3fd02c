"""Row chunks of a one-pass kernel run on several threads, with results independent of the thread count.

The one-pass kernels (bin sums, the top-1 view) are jitted with ``nogil=True`` and run on fixed row
chunks by plain threads; the chunks' partial results are combined in chunk order.  The chunking depends
only on n (``CHUNKS`` chunks from ``PARALLEL_MIN_ROWS`` rows on, else one), never on the number of
threads, so a result is the same on 1 or 2 threads to the last bit.  Plain threads rather than numba's
``prange``: measured on 2 shared cores, a ``prange`` loop over chunks ran the same per-chunk code 2×
slower even on one thread, and OpenMP's spinning workers lose time when the cores are busy; a thread
blocked in ``join`` does not spin.  (Short-lived threads also survive a ``fork`` of the process, which
a pool would not.)
"""

from __future__ import annotations

import threading

import numba

#: rows from which a kernel is split into ``CHUNKS`` chunks (below: one chunk, on the calling thread);
#: at 2^18 rows a one-pass kernel takes about a millisecond, well above the cost of starting a thread
PARALLEL_MIN_ROWS = 1 << 18
#: chunks of a split kernel: a fixed number, so that the result does not depend on the threads
CHUNKS = 4


def chunk_bounds(n: int) -> list[tuple[int, int]]:
    """The row chunks [start, stop) of n rows (``CHUNKS`` of them from ``PARALLEL_MIN_ROWS`` rows)."""
    parts = CHUNKS if n >= PARALLEL_MIN_ROWS else 1
    size = -(-n // parts) if n else 0
    return [(c * size, min(n, (c + 1) * size)) for c in range(parts)] if n else [(0, 0)]


def map_chunks(kernel, n: int) -> list:
    """``[kernel(start, stop) for each chunk]`` in chunk order, the chunks run on up to
    ``numba.get_num_threads()`` threads (``kernel`` must release the GIL: ``@njit(nogil=True)``)."""
    return map_items(lambda bounds: kernel(*bounds), chunk_bounds(n))


def map_items(function, items) -> list:
    """``[function(item) for item in items]``, the items shared out to up to ``numba.get_num_threads()``
    threads (``function`` should spend its time in code that releases the GIL: jitted ``nogil`` kernels,
    numpy); the results in item order, so they do not depend on the threads."""
    items = list(items)
    threads = min(numba.get_num_threads(), len(items))
    if threads <= 1:
        return [function(item) for item in items]
    results: list = [None] * len(items)
    errors: list = []

    def work(first: int) -> None:
        try:
            for i in range(first, len(items), threads):
                results[i] = function(items[i])
        except BaseException as exc:  # re-raised on the calling thread
            errors.append(exc)

    helpers = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(1, threads)]
    for h in helpers:
        h.start()
    work(0)
    for h in helpers:
        h.join()
    if errors:
        raise errors[0]
    return results
