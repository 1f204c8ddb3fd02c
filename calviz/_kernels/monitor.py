"""Jitted pass of the calibration e-process (calviz._monitor): one sweep over the rows in time order.

For each expert j (m_j equal-width bins of the prediction z, memory decay_j) and row i of batch k, with
the bin sums S_b = Σ w (y − z) and N_b = Σ w of the rows of the batches before k (a forgetting memory: w =
decay_j^r for a row of batch l, r the rows of batches l + 1..k − 1):

    r_i = S_b / (N_b + κ),   q_i = z_i + clip(r_i, −z_i/2, (1 − z_i)/2),
    log f_i = y_i log(q_i / z_i) + (1 − y_i) log((1 − q_i)/(1 − z_i))      (0 where z_i ∈ {0, 1})

and the log wealth L_j accumulates log f_i.  Sums of a batch are committed only at its end, so the bets
of a batch depend on earlier batches alone (ties in time need no order).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from calviz._threads import map_items


@njit(cache=True, nogil=True)
def expert_pass(z, y, starts, m, kappa, decay, committed_sum, committed_count, pending_sum, pending_count,
                log_wealth, out):
    """One expert (m bins, memory ``decay``) over the batches rows starts[k]:starts[k+1]: its state arrays
    (length ≥ m; ``log_wealth`` of length 1) are updated in place and its log wealth at each batch end is
    written to ``out`` (length K).  A batch's bets use the sums committed before it, so each bin's shift
    estimate S_b/(N_b + κ) is computed once per batch."""
    K = starts.shape[0] - 1
    shift = np.empty(m)
    wealth = log_wealth[0]
    for k in range(K):
        if k > 0:
            rows = 0.0  # rows of the batch being committed (it may have begun in an earlier pass)
            for b in range(m):
                rows += pending_count[b]
            fade = decay ** rows if decay < 1.0 else 1.0
            for b in range(m):
                committed_sum[b] = fade * committed_sum[b] + pending_sum[b]
                committed_count[b] = fade * committed_count[b] + pending_count[b]
                pending_sum[b] = 0.0
                pending_count[b] = 0.0
        for b in range(m):
            shift[b] = committed_sum[b] / (committed_count[b] + kappa)
        for i in range(starts[k], starts[k + 1]):
            zi = z[i]
            yi = y[i]
            b = int(zi * m)
            if b >= m:
                b = m - 1
            if 0.0 < zi < 1.0:
                r = shift[b]
                lo = -0.5 * zi
                hi = 0.5 * (1.0 - zi)
                if r < lo:
                    r = lo
                elif r > hi:
                    r = hi
                q = zi + r
                if yi > 0.5:
                    wealth += math.log(q / zi)
                else:
                    wealth += math.log((1.0 - q) / (1.0 - zi))
            pending_sum[b] += yi - zi
            pending_count[b] += 1.0
        out[k] = wealth
    log_wealth[0] = wealth


def eprocess_pass(z, y, starts, bins, kappa, decay, committed_sum, committed_count, pending_sum,
                  pending_count, log_wealth):
    """Advance the state over the batches rows starts[k]:starts[k+1] and return the log wealth (J, K) at
    each batch end.  State arrays (J, max_bins): committed and pending (the open batch) bin sums; they are
    updated in place.  The first batch continues the pending batch of the state (its bets use the
    committed sums); every later batch first commits the pending sums: committed ← decay[j]^m · committed +
    pending, m the rows of the batch committed (decay[j] = 1: no forgetting).

    The J experts are independent: each runs :func:`expert_pass` (which releases the GIL) and they are
    shared among up to ``numba.get_num_threads()`` plain threads — every expert's arithmetic is the same
    whatever the threads, so the result does not depend on them."""

    J = bins.shape[0]
    K = starts.shape[0] - 1
    out = np.empty((J, K))
    wealth = [log_wealth[j:j + 1].copy() for j in range(J)]

    def run(j: int) -> None:
        expert_pass(z, y, starts, int(bins[j]), float(kappa), float(decay[j]), committed_sum[j],
                    committed_count[j], pending_sum[j], pending_count[j], wealth[j], out[j])

    if z.shape[0] * J >= 1 << 18:  # the experts on threads (each writes only its own row of out)
        map_items(run, range(J))
    else:
        for j in range(J):
            run(j)
    for j in range(J):
        log_wealth[j] = wealth[j][0]
    return out
