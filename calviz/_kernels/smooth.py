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


@njit(cache=True)
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
