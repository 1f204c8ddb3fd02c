"""Jitted per-partition kernels for calviz.dask.  Partitions are contiguous, sorted runs of the globally
sorted predictions: :func:`y_only_partition` gives a run's share of every y-only resampled T^d,
:func:`y_only_log_mgf_partition` its share of the Chernoff bound of the y-only p-value, and
:func:`calviz._kernels.distance.laplace_run_summary` (re-exported here) its share of the Laplace kCE.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from calviz._kernels.distance import laplace_run_summary  # noqa: F401 (the run summaries of the kCE scan)
from calviz._kernels.tcal import _GOLDEN, LANES, stream_seed, y_only_log_mgf_run, y_only_walk


@njit(cache=True)
def y_only_partition(split, max_level, z, base_seed, start, count, offset):
    """Y-only resamples start..start+count−1 of one sorted partition (global rows offset..offset+p−1):
    the partition's share of every resampled T^d (Lee, Huang, Hassani and Dobriban, 2023, App. C.3).

    Resample r draws y* ~ Ber(z) from the SplitMix64 stream stream_seed(base_seed, r) of the in-memory
    kernels, point by point in sorted order: the stream's state after g steps is seed + g·golden, so the
    partition starts its draws at the state of its first global row and gets exactly the in-memory draws
    (the walk is the in-memory one, :func:`calviz._kernels.tcal.y_only_walk`).  Returns ``interior``
    (count, max_level) Σ (S*² − Q*)/N over the bins inside the partition (not divided by n),
    ``first_s, first_q, last_s, last_q`` (count, max_level) the resampled sums of the first and last bin
    of every scale — they may continue in the neighbouring partitions — and ``first_n, last_n``
    (max_level,) their sizes (last_n = 0 when the first bin is also the last).
    """
    out = [np.zeros((count, max_level)) for _ in range(5)]
    first_n = np.zeros(max_level, dtype=np.int64)
    last_n = np.zeros(max_level, dtype=np.int64)
    skip = np.uint64(offset) * _GOLDEN
    for block in range(0, count, LANES):
        R = min(LANES, count - block)
        states = np.empty(R, dtype=np.uint64)
        for r in range(R):
            states[r] = stream_seed(base_seed, start + block + r) + skip
        lanes = [np.zeros((max_level, R)) for _ in range(5)]
        y_only_walk(split, max_level, z, states, lanes[0], True, lanes[1], lanes[2], lanes[3], lanes[4],
                    first_n, last_n)
        for j in range(5):
            out[j][block:block + R] = lanes[j].T
    return out[0], out[1], out[2], out[3], out[4], first_n, last_n


@njit(cache=True)
def y_only_log_mgf_partition(split, level, z, thetas, first_size, last_size):
    """One sorted partition's share of :func:`calviz._kernels.tcal.y_only_log_mgf_bounds` at scale
    2^level: ``interior`` (len(thetas),) the bounds of the bins inside the partition, summed, and ``edge``
    (len(thetas), 2, 3) the sums (C, D, V) of its first and last bin — they may continue in the
    neighbouring partitions — with λ = θ/first_size and θ/last_size, the bins' sizes in the whole sample
    (edge[:, 1] is 0 when the first bin is also the last).  Summed by bin over the partitions, the edge
    sums give the bins' bounds (:func:`calviz._kernels.tcal.log_mgf_bin_bound`)."""
    interior = np.zeros(thetas.shape[0])
    edge = np.zeros((thetas.shape[0], 2, 3))
    for j in range(thetas.shape[0]):
        interior[j] = y_only_log_mgf_run(split, level, z, thetas[j], first_size, last_size, edge[j])
    return interior, edge
