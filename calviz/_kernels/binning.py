"""Jitted binning kernels: bin ids and integer cell keys from plain float64 arrays (no validation)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def equal_width_bin(x: float, m: int, lower: np.ndarray, upper: np.ndarray) -> int:
    """Bin of x in [0, 1] among m equal-width bins [lower[i], upper[i]) with lower[i] = i/m (float
    division), upper[i] = lower[i+1] and upper[m-1] = +inf (the last bin is closed at 1).

    ``floor(m x)`` can disagree with the float edges ``i / m`` by one (e.g. m = 22, x = 15/22), so the
    guess is corrected against the edges themselves: a point exactly on edge i/m always goes to bin
    i, 1.0 to bin m - 1.  The correction is branch-free (it costs 3x in the hot loop as branches).
    """
    b = min(int(x * m), m - 1)  # truncation = floor for x >= 0
    b -= x < lower[b]
    b += x >= upper[b]
    return b


@njit(cache=True, inline="always")
def equal_width_bin_exact(x: float, m: int) -> int:
    """:func:`equal_width_bin` with the edges computed on the fly (``b / m`` is the same correctly
    rounded float division as ``np.arange(m + 1) / m``), for any m without an O(m) edge table."""
    b = min(int(x * m), m - 1)
    b -= x < b / m
    if b < m - 1 and x >= (b + 1) / m:
        b += 1
    return b


@njit(cache=True)
def equal_width_ids_kernel(z: np.ndarray, m: int) -> np.ndarray:
    n = z.shape[0]
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        out[i] = equal_width_bin_exact(z[i], m)
    return out


@njit(cache=True)
def cubic_grid_keys_kernel(z: np.ndarray, m: int) -> np.ndarray:
    """key = sum_a id_a m^a with id_a the equal-width bin of coordinate a (caller checks m^k < 2^63)."""
    n, k = z.shape
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        key = 0
        scale = 1
        for a in range(k):
            key += equal_width_bin_exact(z[i, a], m) * scale
            scale *= m
        out[i] = key
    return out


@njit(cache=True, inline="always")
def _binomial(x: int, j: int) -> int:
    """C(x, j) in exact int64 arithmetic: C(x, i+1) = C(x, i) (x - i) / (i + 1); every intermediate is at
    most j C(x, j) (or tiny when x < 2j), which the caller's int64 bound covers."""
    if j > x:
        return 0
    c = 1
    for i in range(j):
        c = c * (x - i) // (i + 1)
    return c


@njit(cache=True)
def simplex_cell_keys_kernel(z: np.ndarray, m: int) -> np.ndarray:
    """Freudenthal cell keys of the cumulative-sum map (Lee et al. 2023, App. B.3).

    s_j = z_1 + ... + z_j (clipped to [0, 1]; nondecreasing in float arithmetic because partial sums of
    nonnegative numbers are), c_j = m s_j, a_j = the equal-width bin of s_j (the same edge arithmetic
    as :func:`equal_width_bin`, so K = 2 gives exactly the equal-width ids), f_j = c_j - a_j clipped to
    [0, 1].
    The cell is (a, pi) with pi ordering the coordinates by decreasing f; ties are broken towards the
    larger index, which is exactly the order that keeps the cell inside the order simplex
    (a_j = a_{j+1} forces f_j <= f_{j+1}).

    Key = rank(a) * (K-1)! + Lehmer rank of pi, where a is nondecreasing and ranked by the
    combinatorial number system rank(a) = sum_j C(a_j + j - 1, j) (j = 1..K-1) in
    [0, C(m+K-2, K-1)): the key space m (m+1) ... (m+K-2) is barely larger than the m^(K-1) cells
    (the caller checks it fits in int64).
    """
    n, K = z.shape
    d = K - 1
    out = np.empty(n, dtype=np.int64)
    frac = np.empty(d)
    perm = np.empty(d, dtype=np.int64)
    factorial = 1
    for j in range(2, d + 1):
        factorial *= j
    for i in range(n):
        acc = 0.0
        a_code = 0
        for j in range(d):
            acc += z[i, j]
            sj = min(max(acc, 0.0), 1.0)
            aj = equal_width_bin_exact(sj, m)
            fj = m * sj - aj
            frac[j] = min(max(fj, 0.0), 1.0)
            a_code += _binomial(aj + j, j + 1)  # C(a_j + j - 1, j) with 1-based j
        # insertion sort of coordinates by (frac descending, index descending): d is small
        for j in range(d):
            perm[j] = d - 1 - j
        for j in range(1, d):
            p = perm[j]
            t = j - 1
            while t >= 0 and frac[perm[t]] < frac[p]:
                perm[t + 1] = perm[t]
                t -= 1
            perm[t + 1] = p
        # Lehmer code of perm
        rank = 0
        for j in range(d):
            smaller = 0
            for t in range(j + 1, d):
                if perm[t] < perm[j]:
                    smaller += 1
            rank = rank * (d - j) + smaller
        out[i] = a_code * factorial + rank
    return out


@njit(cache=True)
def dense_ids_small_kernel(keys: np.ndarray, n_keys: int):
    """Dense ids for keys in [0, n_keys) by a presence table: O(n + n_keys), no sort."""
    slot = np.full(n_keys, -1, dtype=np.int64)
    for i in range(keys.shape[0]):
        slot[keys[i]] = 0
    n_unique = 0
    for key in range(n_keys):
        if slot[key] == 0:
            slot[key] = n_unique
            n_unique += 1
    unique = np.empty(n_unique, dtype=np.int64)
    for key in range(n_keys):
        if slot[key] >= 0:
            unique[slot[key]] = key
    ids = np.empty(keys.shape[0], dtype=np.int64)
    for i in range(keys.shape[0]):
        ids[i] = slot[keys[i]]
    return ids, unique


@njit(cache=True)
def topk_view_kernel(probs: np.ndarray, labels: np.ndarray, k: int):
    """Top-1-to-k view (Sun et al., 2024): the k largest probabilities of each row in decreasing order (ties:
    lower class index first, like a stable argsort of -p) and the matching label indicators.

    O(n K k) partial insertion sort instead of a full argsort of every row."""
    if k <= 2:
        return _top2_view(probs, labels, k)
    n, K = probs.shape
    z = np.empty((n, k))
    y = np.zeros((n, k))
    idx = np.empty(k, dtype=np.int64)
    for i in range(n):
        filled = 0
        for c in range(K):
            p = probs[i, c]
            if filled == k and p <= z[i, k - 1]:
                continue  # not strictly larger than the current k-th: an earlier class keeps its place
            t = filled - 1 if filled < k else k - 2
            if filled < k:
                filled += 1
            while t >= 0 and z[i, t] < p:
                z[i, t + 1] = z[i, t]
                idx[t + 1] = idx[t]
                t -= 1
            z[i, t + 1] = p
            idx[t + 1] = c
        for a in range(k):
            if idx[a] == labels[i]:
                y[i, a] = 1.0
    return z, y


@njit(cache=True)
def _top2_view(probs: np.ndarray, labels: np.ndarray, k: int):
    """k = 1, 2 special case of :func:`topk_view_kernel` with the two leaders in registers (1.6x
    faster: the general version keeps them in memory)."""
    n, K = probs.shape
    z = np.empty((n, k))
    y = np.zeros((n, k))
    for i in range(n):
        v1 = -1.0
        v2 = -1.0
        i1 = -1
        i2 = -1
        for c in range(K):
            p = probs[i, c]
            if p > v1:  # strict: an equal later class never overtakes (stable order)
                v2 = v1
                i2 = i1
                v1 = p
                i1 = c
            elif p > v2:
                v2 = p
                i2 = c
        lab = labels[i]
        z[i, 0] = v1
        y[i, 0] = 1.0 if i1 == lab else 0.0
        if k == 2:
            z[i, 1] = v2
            y[i, 1] = 1.0 if i2 == lab else 0.0
    return z, y



#: low bit of the 16, 16, 16 and 14 bits of a float64 key that the passes of
#: :func:`order_statistics_kernel` resolve from the top down (keys of values in [0, 1] are below 2^62)
_SELECT_SHIFTS = (46, 30, 14, 0)
#: keys still in play once this few are gathered and sorted instead of histogrammed on 16 more bits
_SELECT_GATHER = 1 << 18
_SIGN_OFF = 0x7FFFFFFFFFFFFFFF


@njit(cache=True)
def top_bucket(bits):
    """The first-pass bucket of a float64 bit pattern ``bits``: its top 16 bits below the sign, which is
    cleared (−0.0 falls with +0.0).  :func:`edge_count_table` is indexed by it."""
    return (bits & _SIGN_OFF) >> _SELECT_SHIFTS[0]


@njit(cache=True, nogil=True)
def order_statistics_kernel(bits, ranks):
    """``np.sort(z)[ranks]`` as int64 bit patterns, from ``bits = z.view(np.int64)`` of values in
    [0, 1] and nondecreasing ranks in [0, n), by radix selection: z is neither sorted nor copied.

    A non-negative float64 orders like its bit pattern read as an integer (−0.0, whose pattern is the
    sign bit alone, is cleared to +0.0: the two are equal).  The first pass histograms the top 16 bits
    of every key; each further pass histograms the next 16 bits of the keys sharing the high bits
    resolved so far for some requested rank and descends into the bucket holding that rank.  Once few
    keys are still in play (``_SELECT_GATHER``) they are gathered and sorted.  The results are elements
    of z, picked by exact counting, so they equal the order statistics of a sort whatever the ties.
    """
    q = ranks.shape[0]
    if q == 0:
        return np.empty(0, dtype=np.int64)
    prefix = np.zeros(q, dtype=np.int64)  # per rank: its key's resolved high bits (key >> shift)
    local = ranks.astype(np.int64)  # per rank: its rank among the keys sharing those bits
    count = np.zeros(q, dtype=np.int64)  # per rank: the number of keys sharing those bits
    top = _SELECT_SHIFTS[0]
    hist = np.zeros((1, 1 << 16), dtype=np.int64)
    for i in range(bits.shape[0]):
        hist[0, top_bucket(bits[i])] += 1
    starts = np.array([0, q], dtype=np.int64)
    _descend(hist, starts, prefix, local, count, 16)
    shift = top
    for level in range(1, len(_SELECT_SHIFTS)):
        starts = _group_starts(prefix)
        in_play = 0
        for g in range(starts.shape[0] - 1):
            in_play += count[starts[g]]
        if in_play <= _SELECT_GATHER:
            return _gather_select(bits, prefix, local, count, starts, shift)
        next_shift = _SELECT_SHIFTS[level]
        width = shift - next_shift
        hist = np.zeros((starts.shape[0] - 1, 1 << width), dtype=np.int64)
        low = (1 << width) - 1
        first = _first_group_by_top(prefix, starts, shift)
        for i in range(bits.shape[0]):
            key = bits[i] & _SIGN_OFF
            if first[key >> top] < 0:  # most keys: the test stays inside this loop (fast)
                continue
            g = _group_of(key, first, prefix, starts, shift)
            if g >= 0:
                hist[g, (key >> next_shift) & low] += 1
        _descend(hist, starts, prefix, local, count, width)
        shift = next_shift
    return prefix  # shift 0: every bit resolved


@njit(cache=True)
def _descend(hist, starts, prefix, local, count, width):
    """For the ranks of group g (``starts[g]:starts[g + 1]``) whose keys are histogrammed in ``hist[g]``
    over their next ``width`` bits: the bucket holding each rank becomes part of its prefix."""
    for g in range(starts.shape[0] - 1):
        bucket = 0
        below = 0  # keys in the buckets before ``bucket``
        for t in range(starts[g], starts[g + 1]):  # ranks are nondecreasing: the bucket only moves up
            while below + hist[g, bucket] <= local[t]:
                below += hist[g, bucket]
                bucket += 1
            local[t] -= below
            count[t] = hist[g, bucket]
            prefix[t] = (prefix[t] << width) | bucket


@njit(cache=True)
def _group_starts(prefix):
    """Start of each run of equal prefixes (nondecreasing) and the end, len(prefix)."""
    q = prefix.shape[0]
    starts = [0]
    for t in range(1, q):
        if prefix[t] != prefix[t - 1]:
            starts.append(t)
    starts.append(q)
    return np.array(starts, dtype=np.int64)


@njit(cache=True)
def _first_group_by_top(prefix, starts, shift):
    """For every value of a key's top 16 bits: the first group whose prefix has them, or −1."""
    first = np.full(1 << 16, -1, dtype=np.int64)
    for g in range(starts.shape[0] - 2, -1, -1):
        first[prefix[starts[g]] >> (_SELECT_SHIFTS[0] - shift)] = g
    return first


@njit(cache=True)
def _group_of(key, first, prefix, starts, shift):
    """The group whose prefix ``key >> shift`` has, or −1, for a key whose top 16 bits are those of some
    group (``first``; the callers reject the other keys, most of them, inside their loop)."""
    g = first[key >> _SELECT_SHIFTS[0]]
    if g < 0:
        return -1
    pre = key >> shift
    n_groups = starts.shape[0] - 1
    while g < n_groups and prefix[starts[g]] < pre:
        g += 1
    if g < n_groups and prefix[starts[g]] == pre:
        return g
    return -1


@njit(cache=True)
def _gather_select(bits, prefix, local, count, starts, shift):
    """The keys of each group (``key >> shift`` equal to its prefix) gathered, sorted, and the requested
    ranks read off."""
    n_groups = starts.shape[0] - 1
    offset = np.zeros(n_groups + 1, dtype=np.int64)
    for g in range(n_groups):
        offset[g + 1] = offset[g] + count[starts[g]]
    gathered = np.empty(offset[n_groups], dtype=np.int64)
    fill = offset[:n_groups].copy()
    first = _first_group_by_top(prefix, starts, shift)
    top = _SELECT_SHIFTS[0]
    for i in range(bits.shape[0]):
        key = bits[i] & _SIGN_OFF
        if first[key >> top] < 0:
            continue
        g = _group_of(key, first, prefix, starts, shift)
        if g >= 0:
            gathered[fill[g]] = key
            fill[g] += 1
    out = np.empty(prefix.shape[0], dtype=np.int64)
    for g in range(n_groups):
        part = np.sort(gathered[offset[g]:offset[g + 1]])
        for t in range(starts[g], starts[g + 1]):
            out[t] = part[local[t]]
    return out


@njit(cache=True)
def edge_count(inner_edges, v):
    """``searchsorted(inner_edges, v, side="right")``: the number of sorted edges ≤ v (binary search)."""
    lo = 0
    hi = inner_edges.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if inner_edges[mid] <= v:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def edge_count_table(inner_edges):
    """For each value u of the top 16 bits of a float64 key (the buckets of the first pass of
    :func:`order_statistics_kernel`): ``edge_count(inner_edges, v)``, the same for every v ≥ 0 in the
    bucket, or −1 when an edge lies inside the bucket (its values are then searched one by one).

    The bucket u holds the values whose bit patterns lie in [u·2^46, (u + 1)·2^46), an interval of
    floats; the count is constant on it unless an edge's pattern lies strictly above the first."""
    top = _SELECT_SHIFTS[0]
    size = 1 << 16
    edge_bits = np.ascontiguousarray(inner_edges).view(np.int64)
    inside = np.zeros(size, dtype=np.bool_)
    for j in range(edge_bits.shape[0]):
        key = edge_bits[j]
        if key >= 0 and (key >> top) < size and (key & ((1 << top) - 1)) != 0:
            inside[key >> top] = True
    table = np.empty(size, dtype=np.int64)
    bucket_start = np.empty(1, dtype=np.int64)
    for u in range(size):
        if inside[u]:
            table[u] = -1
        else:
            bucket_start[0] = u << top
            table[u] = edge_count(inner_edges, bucket_start.view(np.float64)[0])
    return table
