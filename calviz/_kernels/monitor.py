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


@njit(cache=True)
def eprocess_pass(z, y, starts, bins, kappa, decay, committed_sum, committed_count, pending_sum,
                  pending_count, log_wealth):
    """Advance the state over the batches rows starts[k]:starts[k+1] and return the log wealth (J, K) at
    each batch end.  State arrays (J, max_bins): committed and pending (the open batch) bin sums; they are
    updated in place.  The first batch continues the pending batch of the state (its bets use the
    committed sums); every later batch first commits the pending sums: committed ← decay[j]^m · committed +
    pending, m the rows of the batch committed (decay[j] = 1: no forgetting)."""
    J = bins.shape[0]
    K = starts.shape[0] - 1
    out = np.empty((J, K))
    for k in range(K):
        if k > 0:
            for j in range(J):
                rows = 0.0  # rows of the batch being committed (it may have begun in an earlier pass)
                for b in range(bins[j]):
                    rows += pending_count[j, b]
                fade = decay[j] ** rows if decay[j] < 1.0 else 1.0
                for b in range(bins[j]):
                    committed_sum[j, b] = fade * committed_sum[j, b] + pending_sum[j, b]
                    committed_count[j, b] = fade * committed_count[j, b] + pending_count[j, b]
                    pending_sum[j, b] = 0.0
                    pending_count[j, b] = 0.0
        for i in range(starts[k], starts[k + 1]):
            zi = z[i]
            yi = y[i]
            for j in range(J):
                m = bins[j]
                b = int(zi * m)
                if b >= m:
                    b = m - 1
                if 0.0 < zi < 1.0:
                    r = committed_sum[j, b] / (committed_count[j, b] + kappa)
                    lo = -0.5 * zi
                    hi = 0.5 * (1.0 - zi)
                    if r < lo:
                        r = lo
                    elif r > hi:
                        r = hi
                    q = zi + r
                    if yi > 0.5:
                        log_wealth[j] += math.log(q / zi)
                    else:
                        log_wealth[j] += math.log((1.0 - q) / (1.0 - zi))
                pending_sum[j, b] += yi - zi
                pending_count[j, b] += 1.0
        for j in range(J):
            out[j, k] = log_wealth[j]
    return out
