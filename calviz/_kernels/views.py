"""Jitted reductions of validated predictions to the scalar views of calviz._data (plain arrays in)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def top1_of_rows(probs, labels):
    """(confidence, correct) of an (n, K) probability matrix in one pass over its rows: the row maximum
    and 1.0 where its index — the lowest one among ties, as ``argmax`` gives — is the label, else 0.0.
    (``argmax`` along the rows, ``take_along_axis`` and a comparison are three passes, slow on short
    rows.)  The rows are validated: finite values, so ``>`` finds the first maximum as ``argmax``."""
    n, k = probs.shape
    conf = np.empty(n)
    correct = np.empty(n)
    for i in range(n):
        best = probs[i, 0]
        index = 0
        for j in range(1, k):
            if probs[i, j] > best:
                best = probs[i, j]
                index = j
        conf[i] = best
        correct[i] = 1.0 if index == labels[i] else 0.0
    return conf, correct
