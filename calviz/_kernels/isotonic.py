"""Jitted kernels of the CORP reliability diagram and score decomposition: weighted pool-adjacent-violators
(PAV) on predictions sorted once, and its resampled refits.

The data enter sorted by prediction.  :func:`pool_ties` merges equal predictions into *units* (total
weight, weighted label sum), so ties are pooled before any fit, as isotonic regression requires for a
function of the prediction; :func:`pav_fit` is the O(m) stack form of PAV over the m units.  Units of
zero weight (rows not drawn by a bootstrap) take the fitted value of the nearest unit to their left
(the first block's value before the first weighted unit): the isotonic fit as a right-continuous step
function.

Random numbers: the SplitMix64 stream of each resample is seeded from (user seed, resample index), as in
:mod:`calviz._kernels.tcal`, so results do not depend on how ``prange`` spreads resamples over threads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from calviz._kernels.tcal import _next_uniform, stream_seed

#: resampling schemes of :func:`corp_resample_fits`
CONSISTENCY = 0  # labels redrawn as Bernoulli(prediction), predictions kept
BOOTSTRAP = 1  # rows drawn with replacement (weights travel with their rows)

#: proper scores of :func:`block_mean_score`
BRIER = 0
LOG = 1


#: predictions closer than this to the smallest value of a unit are tied with it (float64 resolution:
#: the round-off of renormalised probability rows must not split a tie)
TIE_RESOLUTION = 1e-15


@njit(cache=True)
def pool_ties(z, y, w):
    """Units of sorted predictions ``z``: (smallest value of each unit, total weight, weighted label sum,
    start of each unit's rows with the end appended).  A unit is a run of predictions within
    ``TIE_RESOLUTION`` of its smallest one.  ``w`` of length 0 means unit weights."""
    n = z.shape[0]
    weighted = w.shape[0] > 0
    xu = np.empty(n)
    sw = np.empty(n)
    swy = np.empty(n)
    start = np.empty(n + 1, dtype=np.int64)
    m = 0
    for i in range(n):
        if i == 0 or z[i] - xu[m - 1] >= TIE_RESOLUTION:
            xu[m] = z[i]
            sw[m] = 0.0
            swy[m] = 0.0
            start[m] = i
            m += 1
        wi = w[i] if weighted else 1.0
        sw[m - 1] += wi
        swy[m - 1] += wi * y[i]
    start[m] = n
    return xu[:m].copy(), sw[:m].copy(), swy[:m].copy(), start[:m + 1].copy()


@njit(cache=True)
def pool_sorted_keys(keys, rows=True):
    """:func:`pool_ties` of unweighted 0/1 labels from sorted keys bits(z) << 1 | y (the radix-sorted
    output of :func:`calviz._kernels.tcal.binary_sort_keys`); also returns the sorted labels.
    ``rows=False``: only the units (the sorted labels and the units' starts come back empty), each
    returned as a view of its buffer when the units are more than half the rows (continuous
    predictions: a copy would hold them twice)."""
    n = keys.shape[0]
    xu = np.empty(n)
    sw = np.empty(n)
    swy = np.empty(n)
    y = np.empty(n if rows else 0)
    start = np.empty(n + 1 if rows else 0, dtype=np.int64)
    bits = np.empty(1, dtype=np.uint64)
    z = bits.view(np.float64)
    m = 0
    for i in range(n):
        bits[0] = np.uint64(keys[i]) >> np.uint64(1)
        zi = z[0]
        yi = float(keys[i] & 1)
        if rows:
            y[i] = yi
        if i == 0 or zi - xu[m - 1] >= TIE_RESOLUTION:
            xu[m] = zi
            sw[m] = 0.0
            swy[m] = 0.0
            if rows:
                start[m] = i
            m += 1
        sw[m - 1] += 1.0
        swy[m - 1] += yi
    if not rows:
        if 2 * m > n:
            return xu[:m], sw[:m], swy[:m], start, y
        return xu[:m].copy(), sw[:m].copy(), swy[:m].copy(), start, y
    start[m] = n
    return xu[:m].copy(), sw[:m].copy(), swy[:m].copy(), start[:m + 1].copy(), y


@njit(cache=True)
def pav_fit(sw, swy, out):
    """Weighted isotonic (non-decreasing) least-squares fit of the unit means swy/sw into ``out``, by
    pool-adjacent-violators with a stack of blocks (each unit pushed and popped at most once).  Units
    of zero weight get the value of the block on their left.  Returns the number of blocks (0: no
    weight at all, ``out`` is NaN)."""
    m = sw.shape[0]
    return pav_fit_into(sw, swy, out, np.empty(m), np.empty(m), np.empty(m + 1, dtype=np.int64))


@njit(cache=True)
def pav_fit_into(sw, swy, out, bw, bs, bstart):
    """:func:`pav_fit` with its stack in caller-owned buffers (m, m and m + 1 entries): the blocks of
    :func:`pav_blocks`, each unit given its block's mean."""
    m = sw.shape[0]
    top = pav_blocks(sw, swy, bw, bs, bstart)
    if top == 0:
        for u in range(m):
            out[u] = np.nan
        return 0
    for b in range(top):
        v = bs[b] / bw[b]
        for u in range(bstart[b], bstart[b + 1]):
            out[u] = v
    return top


@njit(cache=True, inline="always")
def _xlogy(x, y):
    if x == 0.0:
        return 0.0
    return -np.inf if y <= 0.0 else x * math.log(y)


@njit(cache=True)
def block_mean_score(sw, swy, fit, kind):
    """Mean score Σ_u S(fit_u, y) over the rows of the units, / Σ sw: units hold total weight sw and
    weighted label sum swy (labels 0/1).  Brier: Σ_u sw fit² − 2 fit swy + swy; log:
    −Σ_u swy log fit + (sw − swy) log(1 − fit), with 0 log 0 = 0."""
    total = 0.0
    weight = 0.0
    for u in range(sw.shape[0]):
        if sw[u] <= 0.0:
            continue
        f = fit[u]
        weight += sw[u]
        if kind == BRIER:
            total += sw[u] * f * f - 2.0 * f * swy[u] + swy[u]
        else:
            total -= _xlogy(swy[u], f) + _xlogy(sw[u] - swy[u], 1.0 - f)
    return total / weight


@njit(cache=True)
def row_scores(z, y, kind):
    """The score S(z_i, y_i) of every row (Brier (z − y)², log −y log z − (1 − y) log(1 − z))."""
    n = z.shape[0]
    out = np.empty(n)
    for i in range(n):
        if kind == BRIER:
            d = z[i] - y[i]
            out[i] = d * d
        else:
            out[i] = -(_xlogy(y[i], z[i]) + _xlogy(1.0 - y[i], 1.0 - z[i]))
    return out


@njit(cache=True)
def _resample_units(xu, start, y, w, unit_of, mode, state, sw, swy, rows):
    """One resample's unit sums into sw, swy (and, for the bootstrap, row multiplicities into ``rows``
    when it has n entries); returns the advanced random state."""
    m = xu.shape[0]
    n = y.shape[0]
    weighted = w.shape[0] > 0
    for u in range(m):
        sw[u] = 0.0
        swy[u] = 0.0
    if mode == CONSISTENCY:
        for u in range(m):
            p = xu[u]
            for i in range(start[u], start[u + 1]):
                state, r = _next_uniform(state)
                wi = w[i] if weighted else 1.0
                sw[u] += wi
                if r < p:
                    swy[u] += wi
    else:
        count_rows = rows.shape[0] == n
        if count_rows:
            for i in range(n):
                rows[i] = 0.0
        for _ in range(n):
            state, r = _next_uniform(state)
            i = int(r * n)
            if i >= n:
                i = n - 1
            u = unit_of[i]
            wi = w[i] if weighted else 1.0
            sw[u] += wi
            swy[u] += wi * y[i]
            if count_rows:
                rows[i] += 1.0
    return state


@njit(cache=True)
def pav_blocks(sw, swy, bw, bs, bstart):
    """The blocks of the weighted PAV fit of the unit means swy/sw, by pool-adjacent-violators with a
    stack of blocks (each unit pushed and popped at most once; the one PAV of calviz): block b has total
    weight ``bw[b]``, weighted label sum ``bs[b]`` and covers units ``bstart[b]`` to ``bstart[b + 1] − 1``
    (units of zero weight belong to the block on their left).  Returns the number of blocks (0: no weight
    at all)."""
    m = sw.shape[0]
    top = 0
    for u in range(m):
        if sw[u] <= 0.0:
            continue
        bw[top] = sw[u]
        bs[top] = swy[u]
        bstart[top] = u
        top += 1
        while top > 1 and bs[top - 2] * bw[top - 1] >= bs[top - 1] * bw[top - 2]:
            bw[top - 2] += bw[top - 1]
            bs[top - 2] += bs[top - 1]
            top -= 1
    if top > 0:
        bstart[0] = 0
        bstart[top] = m
    return top


@njit(cache=True)
def blocks_at(bw, bs, bstart, top, eval_units, out, row):
    """The PAV fit of :func:`pav_blocks` at the increasing units ``eval_units``, into ``out[row]``: one
    walk over the blocks (O(blocks + E) instead of O(m))."""
    b = 0
    for e in range(eval_units.shape[0]):
        if top == 0:
            out[row, e] = np.nan
            continue
        u = eval_units[e]
        while bstart[b + 1] <= u:
            b += 1
        out[row, e] = bs[b] / bw[b]


@njit(cache=True)
def resample_unit_sums(xu, start, y, w, mode, state, sw, swy, counts):
    """One resample's unit sums into ``sw``, ``swy``; returns the advanced random state.

    ``CONSISTENCY``: each row's label redrawn as Bernoulli(its prediction), one uniform per row in sorted
    order.  ``BOOTSTRAP``: n rows drawn with replacement, one uniform each; the draws are counted per row
    in ``counts`` (n zeros on entry, zeros again on return) and the unit sums then accumulated in one
    sequential pass, so the random accesses are one counter increment per draw rather than three.  Both
    consume the stream exactly as a row-by-row implementation would (the multinomial row counts of the
    bootstrap are the same draws)."""
    m = xu.shape[0]
    n = y.shape[0]
    weighted = w.shape[0] > 0
    if mode == CONSISTENCY:
        for u in range(m):
            p = xu[u]
            a = 0.0
            b = 0.0
            for i in range(start[u], start[u + 1]):
                state, r = _next_uniform(state)
                wi = w[i] if weighted else 1.0
                a += wi
                if r < p:
                    b += wi
            sw[u] = a
            swy[u] = b
        return state
    for _ in range(n):
        state, r = _next_uniform(state)
        i = int(r * n)
        if i >= n:
            i = n - 1
        counts[i] += 1
    for u in range(m):
        a = 0.0
        b = 0.0
        for i in range(start[u], start[u + 1]):
            c = counts[i]
            if c:
                counts[i] = 0
                wi = c * (w[i] if weighted else 1.0)
                a += wi
                b += wi * y[i]
        sw[u] = a
        swy[u] = b
    return state


@njit(cache=True, parallel=True)
def corp_resample_fits(xu, start, y, w, mode, n_resamples, seed, eval_units):
    """(n_resamples, E) PAV refits at the units ``eval_units``: labels redrawn from the predictions
    (``CONSISTENCY``) or rows drawn with replacement (``BOOTSTRAP``).  ``y`` and ``w`` (length 0: unit
    weights) are in sorted order; the sort and the ties' pooling of the data are reused by every resample
    (only the unit sums are redrawn), and each refit is read at the E band points only."""
    m = xu.shape[0]
    n = y.shape[0]
    E = eval_units.shape[0]
    out = np.empty((n_resamples, E))
    # resamples in chunks, each with its own buffers (allocated once per chunk, not per resample); every
    # resample's stream depends only on its index, so the chunking does not change the result
    n_chunks = min(n_resamples, 64)
    for chunk in prange(n_chunks):
        sw = np.empty(m)
        swy = np.empty(m)
        bw = np.empty(m)
        bs = np.empty(m)
        bstart = np.empty(m + 1, dtype=np.int64)
        counts = np.zeros(n if mode == BOOTSTRAP else 0, dtype=np.int32)
        for r in range(chunk * n_resamples // n_chunks, (chunk + 1) * n_resamples // n_chunks):
            state = stream_seed(seed, r)
            resample_unit_sums(xu, start, y, w, mode, state, sw, swy, counts)
            top = pav_blocks(sw, swy, bw, bs, bstart)
            blocks_at(bw, bs, bstart, top, eval_units, out, r)
    return out


@njit(cache=True, parallel=True)
def decomposition_bootstrap(xu, start, y, w, unit_of, scores, kind, n_resamples, seed):
    """(n_resamples, 4) bootstrap replicates of (mean score, MCB, DSC, UNC): rows drawn with replacement,
    the PAV recalibration and the climatology refitted on each resample; ``scores`` holds each sorted
    row's score of the original predictions."""
    m = xu.shape[0]
    n = y.shape[0]
    weighted = w.shape[0] > 0
    out = np.empty((n_resamples, 4))
    for r in prange(n_resamples):
        state = stream_seed(seed, r)
        sw = np.empty(m)
        swy = np.empty(m)
        fit = np.empty(m)
        rows = np.empty(n)
        state = _resample_units(xu, start, y, w, unit_of, BOOTSTRAP, state, sw, swy, rows)
        total = 0.0
        weight = 0.0
        label = 0.0
        for i in range(n):
            if rows[i] > 0.0:
                wi = rows[i] * (w[i] if weighted else 1.0)
                total += wi * scores[i]
                weight += wi
                label += wi * y[i]
        mean_score = total / weight
        pav_fit(sw, swy, fit)
        recalibrated = block_mean_score(sw, swy, fit, kind)
        clim = np.full(m, label / weight)
        climatology = block_mean_score(sw, swy, clim, kind)
        out[r, 0] = mean_score
        out[r, 1] = mean_score - recalibrated
        out[r, 2] = climatology - recalibrated
        out[r, 3] = climatology
    return out
