"""Linear binning for the smooth reliability diagram (calviz.smooth).

The data are reduced once, in O(n), to per-(grid cell, label) aggregates.  From these the linearly
binned grid masses of the full sample *and* of any bootstrap resample (a multinomial draw of points per
(cell, label) category) follow in O(number of cells), so resampling never touches the n points again.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _cell_and_fraction(x, start, inv_step, n_cells):
    """Cell k = floor(s) of grid coordinate s = (x - start) / step, clipped to 0..n_cells-1, and the
    fraction s - k clipped to [0, 1] (the weight sent to grid point k + 1)."""
    s = (x - start) * inv_step
    k = int(np.floor(s))
    if k < 0:
        k = 0
    elif k > n_cells - 1:
        k = n_cells - 1
    frac = s - k
    if frac < 0.0:
        frac = 0.0
    elif frac > 1.0:
        frac = 1.0
    return k, frac


@njit(cache=True)
def categories_and_fractions(position, label, start, step, n_cells):
    """Per point its category c = 2 k + label and its fraction (see bin_by_cell_and_label): for grids
    much larger than the sample, aggregated over the occupied categories only."""
    n = position.shape[0]
    category = np.empty(n, np.int64)
    fraction = np.empty(n)
    inv_step = 1.0 / step
    for i in range(n):
        k, frac = _cell_and_fraction(position[i], start, inv_step, n_cells)
        category[i] = 2 * k + (1 if label[i] > 0.5 else 0)
        fraction[i] = frac
    return category, fraction


@njit(cache=True, nogil=True)
def bin_by_cell_and_label(position, label, residual, start, step, n_cells):
    """Aggregate points onto the grid ``start + j * step`` (j = 0..n_cells) by linear binning.

    A point at grid coordinate s = (position - start) / step lies in cell k = floor(s) (clipped to
    0..n_cells-1) and sends weight 1 - frac to grid point k and frac to grid point k + 1, frac = s - k.
    Category c = 2 k + label (label in {0, 1}).  Returns five arrays of length 2 * n_cells:

    * ``count[c]``       number of points in the category,
    * ``low_weight[c]``  sum of (1 - frac),          ``high_weight[c]``  sum of frac,
    * ``low_residual[c]`` sum of (1 - frac) * residual, ``high_residual[c]`` sum of frac * residual.
    """
    n_categories = 2 * n_cells
    count = np.zeros(n_categories)
    low_weight = np.zeros(n_categories)
    high_weight = np.zeros(n_categories)
    low_residual = np.zeros(n_categories)
    high_residual = np.zeros(n_categories)
    inv_step = 1.0 / step
    for i in range(position.shape[0]):
        k, frac = _cell_and_fraction(position[i], start, inv_step, n_cells)
        c = 2 * k + (1 if label[i] > 0.5 else 0)
        count[c] += 1.0
        low_weight[c] += 1.0 - frac
        high_weight[c] += frac
        low_residual[c] += (1.0 - frac) * residual[i]
        high_residual[c] += frac * residual[i]
    return count, low_weight, high_weight, low_residual, high_residual


@njit(cache=True, nogil=True)
def interp_rows(x, xp, fp, slopes, start, stop, out):
    """``np.interp(x, xp, fp)`` at x[start:stop] into out[start:stop], to the last bit, for a strictly
    increasing xp of at least 2 points and a NaN-free x.  The interval is guessed from xp's mean spacing
    (exact for an even grid) and corrected to the one with xp[j] ≤ x < xp[j + 1]: no binary search.  The
    value is numpy's: the end values outside [xp[0], xp[−1]], fp[j] at a grid point, else
    slope·(x − xp[j]) + fp[j] with numpy's precomputed slopes (and its fall-backs when that is NaN)."""
    last = xp.shape[0] - 1
    lo = xp[0]
    hi = xp[last]
    scale = last / (hi - lo)
    for i in range(start, stop):
        v = x[i]
        if v < lo:
            out[i] = fp[0]
            continue
        if v >= hi:
            out[i] = fp[last]  # (numpy: beyond the end its right value fp[−1]; at the end point fp[−1])
            continue
        j = int((v - lo) * scale)
        if j > last - 1:
            j = last - 1
        while xp[j] > v:
            j -= 1
        while xp[j + 1] <= v:
            j += 1
        if xp[j] == v:
            out[i] = fp[j]
            continue
        r = slopes[j] * (v - xp[j]) + fp[j]
        if np.isnan(r):
            r = slopes[j] * (v - xp[j + 1]) + fp[j + 1]
            if np.isnan(r) and fp[j] == fp[j + 1]:
                r = fp[j]
        out[i] = r


def interp(x: np.ndarray, xp: np.ndarray, fp: np.ndarray) -> np.ndarray:
    """``np.interp(x, xp, fp)``, bit for bit, for a NaN-free float64 x (validated predictions): with
    :func:`interp_rows` in row chunks on several threads when xp is strictly increasing (numpy's binary
    search per value costs about 100 ns on a 4001-point grid), numpy itself otherwise."""
    from calviz._threads import map_chunks

    x = np.ascontiguousarray(x, dtype=np.float64)
    xp = np.ascontiguousarray(xp, dtype=np.float64)
    fp = np.ascontiguousarray(fp, dtype=np.float64)
    if xp.ndim != 1 or xp.shape[0] < 2 or fp.shape != xp.shape or not np.all(xp[1:] > xp[:-1]):
        return np.interp(x, xp, fp)
    with np.errstate(invalid="ignore", divide="ignore"):  # (inf − inf: numpy's fall-backs apply)
        slopes = (fp[1:] - fp[:-1]) / (xp[1:] - xp[:-1])
    out = np.empty(x.shape[0])
    map_chunks(lambda start, stop: interp_rows(x, xp, fp, slopes, start, stop, out), x.shape[0])
    return out
