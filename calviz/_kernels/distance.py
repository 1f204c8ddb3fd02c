"""Kernels for the distance-to-calibration family (Błasiok, Gopalan, Hu and Nakkiran, 2023).

Every kernel takes the predictions ``v`` sorted ascending and the per-sample weighted residuals
``b_i = mass_i (y_i − v_i)`` (mass 1/n for the empirical distribution; bootstrap weights otherwise):
all the measures below depend on the sample only through these pairs.  No validation happens here.
"""

from __future__ import annotations

import numpy as np
from numba import njit


# ------------------------------------------------------------------------------------------------
# Fenwick trees (1-based internally; the public index is the 0-based rank)
# ------------------------------------------------------------------------------------------------
@njit(cache=True)
def _fen_add_f(tree, i, delta):
    i += 1
    n = tree.shape[0] - 1
    while i <= n:
        tree[i] += delta
        i += i & (-i)


@njit(cache=True)
def _fen_add_both(mass_tree, live_tree, i, dmass, dlive):
    """One traversal updating the slope-mass and live-count trees (same shape) at rank i."""
    i += 1
    n = mass_tree.shape[0] - 1
    while i <= n:
        mass_tree[i] += dmass
        live_tree[i] += dlive
        i += i & (-i)


@njit(cache=True)
def _fen_prefix_f(tree, count):
    """Sum of the entries with rank < count."""
    s = 0.0
    i = count
    while i > 0:
        s += tree[i]
        i -= i & (-i)
    return s


@njit(cache=True)
def _fen_kth(tree, k, log2n):
    """Smallest 0-based rank whose inclusive prefix count is >= k (k >= 1; counts are non-negative)."""
    pos = 0
    step = log2n
    n = tree.shape[0] - 1
    while step > 0:
        nxt = pos + step
        if nxt <= n and tree[nxt] < k:
            pos = nxt
            k -= tree[nxt]
        step >>= 1
    return pos  # 1-based pos + 1 is the answer; as a 0-based rank that is `pos`


# ------------------------------------------------------------------------------------------------
# smooth calibration error: exact DP on the conjugate (slope) side
# ------------------------------------------------------------------------------------------------
def smce_prepare(b):
    """Kink positions of :func:`smce_kernel`, sorted with numpy (plain Python, not jitted)."""
    n = b.shape[0]
    prefix = np.empty(n + 1)
    prefix[0] = 0.0
    np.cumsum(b, out=prefix[1:])
    pos = -prefix[:n]
    order = np.argsort(pos).astype(np.int64, copy=False)
    sorted_pos = pos[order]
    last = -prefix[n]
    last_lt = int(np.searchsorted(sorted_pos, last, side="left"))
    last_le = int(np.searchsorted(sorted_pos, last, side="right"))
    return prefix, order, last_lt, last_le


def smce_solve(v, b):
    """(witness x, Σ b_i x_i) for sorted v: :func:`smce_prepare` + :func:`smce_kernel`."""
    return smce_kernel(v, b, *smce_prepare(b))


@njit(cache=True, nogil=True)
def smce_kernel(v, b, prefix, order, last_lt, last_le):
    """Exact maximiser of Σ b_i x_i s.t. |x_i| ≤ 1, |x_{i+1} − x_i| ≤ v_{i+1} − v_i (v sorted).

    Primal DP: f_1(x) = b_1 x on [−1, 1];  f_{i+1}(x) = b_{i+1} x + max_{|t| ≤ d_i} f_i(x + t) on [−1, 1].
    We propagate the convex conjugate g_i(s) = max_x f_i(x) − s x instead, where the three primal
    operations become
        add b x            ->  shift the graph of g right by b          (a global offset),
        window max (±d)    ->  g += d |s|                              (one new kink at s = 0, jump 2d),
        restrict to [−1,1] ->  inf-convolution with |s|, i.e. clip the slopes of g to [−1, 1]
                               (remove slope mass d from the leftmost and from the rightmost kinks).
    Kink positions are therefore known in advance (the kink created at step j sits at −B_j in
    offset-free coordinates, B_j = b_0 + … + b_{j−1}), so ranks are precomputed once and the kinks live
    in Fenwick trees over ranks (slope mass, and a live-count for "leftmost/rightmost live kink").
    Each step inserts ≤ 1 kink and removes kinks for good, so the total work is O(n log n).

    The argmax interval of f_i is −∂g_i(0) = [−g_i'(0+), −g_i'(0−)]; storing it per step lets us
    backtrack an optimal x: x_n = projection of 0 onto argmax f_n, then x_i = the point of argmax f_i
    nearest to x_{i+1}, clipped to [x_{i+1} − d_i, x_{i+1} + d_i] (concavity makes that optimal).

    Inputs prepared by :func:`smce_prepare` (numpy's sort is several times faster than numba's):
    prefix[j] = B_j, order = argsort(−B_0..−B_{n−1}), and last_lt / last_le = number of kink positions
    < / ≤ −B_n.  After step i < n − 1, s = 0 sits at −B_{i+1}, itself the position of kink i + 1, so
    the counts "<" and "≤" are the first / one-past-last rank of that kink's tie group.

    Returns (x, value) with value = Σ b_i x_i.
    """
    n = v.shape[0]
    rank = np.empty(n, np.int64)
    for r in range(n):
        rank[order[r]] = r
    group_lo = np.empty(n, np.int64)  # first rank with the same position
    group_hi = np.empty(n, np.int64)  # one past the last rank with the same position
    for r in range(n):
        if r > 0 and -prefix[order[r]] == -prefix[order[r - 1]]:
            group_lo[r] = group_lo[r - 1]
        else:
            group_lo[r] = r
    for r in range(n - 1, -1, -1):
        if r < n - 1 and -prefix[order[r]] == -prefix[order[r + 1]]:
            group_hi[r] = group_hi[r + 1]
        else:
            group_hi[r] = r + 1

    log2n = 1
    while log2n * 2 <= n:
        log2n *= 2
    fen_mass = np.zeros(n + 1)
    fen_live = np.zeros(n + 1, np.int32)
    mass = np.zeros(n)  # slope jump of the kink with this rank
    live_total = 0

    # g_0(s) = |s|: one kink of mass 2 at s = 0 (kink j = 0)
    mass[rank[0]] = 2.0
    _fen_add_both(fen_mass, fen_live, rank[0], 2.0, 1)
    live_total = 1

    lo = np.empty(n)
    hi = np.empty(n)
    for i in range(n):
        if i > 0:
            d = v[i] - v[i - 1]
            if d > 0.0:
                k = rank[i]
                mass[k] = 2.0 * d
                _fen_add_both(fen_mass, fen_live, k, 2.0 * d, 1)
                live_total += 1
                # clip slopes below −1: remove mass d from the leftmost kinks
                rem = d
                while rem > 0.0 and live_total > 0:
                    k = _fen_kth(fen_live, 1, log2n)
                    mk = mass[k]
                    if mk <= rem:
                        rem -= mk
                        _fen_add_both(fen_mass, fen_live, k, -mk, -1)
                        mass[k] = 0.0
                        live_total -= 1
                    else:
                        mass[k] = mk - rem
                        _fen_add_f(fen_mass, k, -rem)
                        rem = 0.0
                # clip slopes above +1: remove mass d from the rightmost kinks
                rem = d
                while rem > 0.0 and live_total > 0:
                    k = _fen_kth(fen_live, live_total, log2n)
                    mk = mass[k]
                    if mk <= rem:
                        rem -= mk
                        _fen_add_both(fen_mass, fen_live, k, -mk, -1)
                        mass[k] = 0.0
                        live_total -= 1
                    else:
                        mass[k] = mk - rem
                        _fen_add_f(fen_mass, k, -rem)
                        rem = 0.0
        # add b_i x: the offset becomes prefix[i+1]; s = 0 is the stored coordinate −prefix[i+1]
        if i < n - 1:
            c_lt = group_lo[rank[i + 1]]
            c_le = group_hi[rank[i + 1]]
        else:
            c_lt = last_lt
            c_le = last_le
        slope_minus = -1.0 + _fen_prefix_f(fen_mass, c_lt)
        if c_le == c_lt:
            slope_plus = slope_minus
        else:
            slope_plus = -1.0 + _fen_prefix_f(fen_mass, c_le)
        a = min(max(-slope_plus, -1.0), 1.0)
        c = min(max(-slope_minus, -1.0), 1.0)
        if a > c:  # only possible through round-off in the Fenwick sums
            a = c
        lo[i] = a
        hi[i] = c

    x = np.empty(n)
    x[n - 1] = min(max(0.0, lo[n - 1]), hi[n - 1])
    for i in range(n - 2, -1, -1):
        d = v[i + 1] - v[i]
        t = min(max(x[i + 1], lo[i]), hi[i])
        t = min(max(t, x[i + 1] - d), x[i + 1] + d)
        x[i] = t
    value = 0.0
    comp = 0.0
    for i in range(n):
        value, comp = neumaier_add(value, comp, b[i] * x[i])
    return x, value + comp


# ------------------------------------------------------------------------------------------------
# Laplace kernel calibration error
# ------------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def neumaier_add(total, comp, term):
    """One step of Neumaier's compensated sum: (new total, new compensation); the sum is total + comp."""
    s = total + term
    if abs(total) >= abs(term):
        comp += (total - s) + term
    else:
        comp += (term - s) + total
    return s, comp


@njit(cache=True)
def laplace_kce_sq_kernel(v, b, bandwidth):
    """Σ_{i,j} b_i b_j exp(−|v_i − v_j| / bandwidth) in O(n) on sorted v (see :func:`laplace_run_summary`)."""
    return laplace_run_summary(v, b, 1.0 / bandwidth, False)[0]


@njit(cache=True)
def laplace_run_summary(v, r, inv_h, edges=True):
    """(total, tail, head) of a sorted run v_0 ≤ … ≤ v_{p−1} with weights r_i:

    total = Σ_{i,j} r_i r_j e^{−|v_i − v_j|/h} = Σ_i r_i (r_i + 2 L_i) with the left sums
    L_i = Σ_{j<i} r_j e^{−(v_i − v_j)/h} = e^{−(v_i − v_{i−1})/h} (L_{i−1} + r_{i−1}); tail = Σ_j r_j
    e^{−(v_{p−1} − v_j)/h} (the left sum carried out of the run) and, with ``edges``, head = Σ_i r_i
    e^{−(v_i − v_0)/h} (how the run absorbs a carry arriving at v_0; else 0).  Every exponential factor is
    ≤ 1, so nothing overflows; sums are compensated (Neumaier)."""
    n = v.shape[0]
    total = 0.0
    comp = 0.0
    left = 0.0
    head = 0.0
    head_comp = 0.0
    for i in range(n):
        if i > 0:
            left = np.exp(-(v[i] - v[i - 1]) * inv_h) * (left + r[i - 1])
        total, comp = neumaier_add(total, comp, r[i] * (r[i] + 2.0 * left))
        if edges:
            head, head_comp = neumaier_add(head, head_comp, r[i] * np.exp(-(v[i] - v[0]) * inv_h))
    tail = left + r[n - 1] if n > 0 else 0.0
    return total + comp, tail, head + head_comp


# ------------------------------------------------------------------------------------------------
# random interval calibration error: exact average over the shift r
# ------------------------------------------------------------------------------------------------
@njit(cache=True)
def _bin_ids(keys):
    """Dense ids for the bins k_i and k_i − 1 of nondecreasing integer keys: returns (id of k_i,
    number of distinct bins); the id of k_i − 1 is always id(k_i) − 1."""
    n = keys.shape[0]
    ids = np.empty(n, np.int64)
    last = keys[0] - 2
    count = 0
    for i in range(n):
        k = keys[i]
        if k - 1 > last:
            last = k - 1
            count += 1
        if k > last:
            last = k
            count += 1
        ids[i] = count - 1
    return ids, count


@njit(cache=True)
def _sweep_shifts(b, phase, order, ids, n_bins, width):
    """(1/width) ∫_0^width Σ_j |S_j(r)| dr where point i sits in bin ids[i] for r ≤ phase[i] and in
    bin ids[i] − 1 for r > phase[i]; ``order`` sorts the phases."""
    sums = np.zeros(n_bins)
    n = b.shape[0]
    for i in range(n):
        sums[ids[i]] += b[i]
    total_abs = 0.0
    for j in range(n_bins):
        total_abs += abs(sums[j])
    integral = 0.0
    prev = 0.0
    for t in range(n):
        i = order[t]
        r = phase[i]
        integral += (r - prev) * total_abs
        prev = r
        a = ids[i]
        total_abs -= abs(sums[a]) + abs(sums[a - 1])
        sums[a] -= b[i]
        sums[a - 1] += b[i]
        total_abs += abs(sums[a]) + abs(sums[a - 1])
    integral += (width - prev) * total_abs
    return integral / width


@njit(cache=True)
def rintce_kernel(v, b, width):
    """RintCE(width) = E_{r~U[0,width)} Σ_j |Σ_i b_i 1{v_i ∈ [r + j·width, r + (j+1)·width)}| exactly.

    Point i is in bin k_i = ⌊v_i/width⌋ while r ≤ φ_i = v_i − k_i·width and in bin k_i − 1 afterwards,
    so the sum is piecewise constant in r with ≤ n + 1 pieces: sort by φ and sweep."""
    n = v.shape[0]
    keys = np.empty(n, np.int64)
    phase = np.empty(n)
    for i in range(n):
        k = np.floor(v[i] / width)
        ph = v[i] - k * width
        if ph < 0.0:  # round-off for non-dyadic widths
            k -= 1.0
            ph += width
        elif ph >= width:
            k += 1.0
            ph -= width
        if ph < 0.0:
            ph = 0.0
        keys[i] = np.int64(k)
        phase[i] = ph
    # dense ids of the bins {k_i − 1, k_i}: consecutive integers get consecutive ids, so the id of
    # k_i − 1 is id(k_i) − 1 (no monotonicity of the keys needed, unlike _bin_ids)
    both = np.empty(2 * n, np.int64)
    both[:n] = keys
    both[n:] = keys - 1
    uniq = np.unique(both)
    ids = np.searchsorted(uniq, keys)
    n_bins = uniq.shape[0]
    order = np.argsort(phase, kind="mergesort")
    return _sweep_shifts(b, phase, order, ids, n_bins, width)


@njit(cache=True)
def resolved_ece_kernel(v, b):
    """Σ over distinct values u of |Σ_{v_i = u} b_i| (every distinct prediction in its own bin)."""
    n = v.shape[0]
    total = 0.0
    acc = b[0]
    for i in range(1, n):
        if v[i] != v[i - 1]:
            total += abs(acc)
            acc = 0.0
        acc += b[i]
    return total + abs(acc)


@njit(cache=True, nogil=True)
def sintce_kernel(v, b, max_level):
    """SintCE = inf_{k ≥ 0} RintCE(2^−k) + 2^−k (Błasiok et al. 2023, Def. 6.10), exactly.

    * The 2^−(k+1) grid with shift r refines the 2^−k grid with shift r, and both sums are periodic
      in r, so RintCE(2^−k) is nondecreasing in k (triangle inequality).  Hence once RintCE(2^−k) ≥ the
      best value so far, no finer scale can win (its value is ≥ RintCE(2^−k) + 2^−k' > best): stop.
    * Once 2^−k ≤ the smallest gap δ between distinct predictions, every bin holds one distinct value
      and RintCE(2^−k) = E_0 (the fully resolved ECE) for all finer scales, so the infimum over them is
      E_0 (approached, not attained).
    * The order of the phases φ_{k+1} = φ_k mod 2^−(k+1) is a linear merge of two sorted runs of the
      order of φ_k (φ unchanged below 2^−(k+1), shifted by exactly 2^−(k+1) above), so every scale
      costs O(n) after the initial sort of v.

    Returns (sintce, best_level, rintce per level (nan where not computed), n_levels, attained,
    converged).  ``best_level = -1`` with ``attained = False`` means the infimum is the limit E_0;
    ``converged = False`` (predictions closer than 2^−max_level yet the stopping rule not met) means
    the true infimum lies in [min(best, RintCE(2^−max_level)), best].
    """
    n = v.shape[0]
    gap = np.inf
    for i in range(1, n):
        d = v[i] - v[i - 1]
        if d > 0.0 and d < gap:
            gap = d
    e0 = resolved_ece_kernel(v, b)
    values = np.full(max_level + 1, np.nan)

    # level 0 (width 1): v = 1 has phase 0 and comes first; the others keep their sorted order
    order = np.empty(n, np.int64)
    phase = np.empty(n)
    n_one = 0
    for i in range(n):
        if v[i] >= 1.0:
            n_one += 1
    t = 0
    for i in range(n - n_one, n):
        order[t] = i
        t += 1
    for i in range(n - n_one):
        order[t] = i
        t += 1
    for i in range(n):
        phase[i] = v[i] - 1.0 if v[i] >= 1.0 else v[i]
    keys = np.empty(n, np.int64)
    tmp = np.empty(n, np.int64)

    best = np.inf
    best_level = -1
    attained = False
    level = 0
    width = 1.0
    n_levels = 0
    while level <= max_level:
        if width <= gap:
            values[level] = e0
            n_levels = level + 1
            if e0 < best:
                best = e0
                best_level = -1
                attained = False
            break
        for i in range(n):
            keys[i] = np.int64(np.floor(v[i] / width))
        ids, n_bins = _bin_ids(keys)
        r = _sweep_shifts(b, phase, order, ids, n_bins, width)
        values[level] = r
        n_levels = level + 1
        if r + width < best:
            best = r + width
            best_level = level
            attained = True
        if r >= best:
            break
        # next level: phases >= half drop by exactly half; both runs stay sorted, merge them
        half = 0.5 * width
        cnt_b = 0
        for t2 in range(n):
            i = order[t2]
            if phase[i] >= half:
                tmp[cnt_b] = i
                cnt_b += 1
        flag = np.zeros(n, np.bool_)
        for t2 in range(cnt_b):
            flag[tmp[t2]] = True
            phase[tmp[t2]] -= half
        new_order = np.empty(n, np.int64)
        ia = 0
        ib = 0
        for out in range(n):
            while ia < n and flag[order[ia]]:
                ia += 1
            if ia < n and (ib >= cnt_b or phase[order[ia]] <= phase[tmp[ib]]):
                new_order[out] = order[ia]
                ia += 1
            else:
                new_order[out] = tmp[ib]
                ib += 1
        order = new_order
        level += 1
        width = half
    converged = level <= max_level
    return best, best_level, values, n_levels, attained, converged


# ------------------------------------------------------------------------------------------------
# sorting helper
# ------------------------------------------------------------------------------------------------
@njit(cache=True)
def merge_labelled_kernel(v0, v1):
    """Merge the sorted predictions of the label-0 and label-1 samples into one sorted (v, y) pair
    (two np.sort calls and this O(n) merge are several times faster than one argsort)."""
    n0 = v0.shape[0]
    n1 = v1.shape[0]
    v = np.empty(n0 + n1)
    y = np.empty(n0 + n1)
    i = 0
    j = 0
    for t in range(n0 + n1):
        if j >= n1 or (i < n0 and v0[i] <= v1[j]):
            v[t] = v0[i]
            y[t] = 0.0
            i += 1
        else:
            v[t] = v1[j]
            y[t] = 1.0
            j += 1
    return v, y
