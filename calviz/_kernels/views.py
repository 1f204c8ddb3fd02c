"""Jitted reductions of validated predictions to the scalar views of calviz._data (plain arrays in)."""

from __future__ import annotations

import numpy as np
from numba import njit

from calviz._threads import map_chunks


@njit(cache=True, nogil=True)
def top1_rows_into(probs, labels, start, stop, conf, correct):
    """Rows start..stop−1 of :func:`top1_of_rows` written into ``conf`` and ``correct``.

    The running maximum is kept with selects rather than a branch (a new maximum in a row of random
    probabilities is a coin flip the branch predictor loses)."""
    k = probs.shape[1]
    for i in range(start, stop):
        best = probs[i, 0]
        index = 0
        for j in range(1, k):
            v = probs[i, j]
            above = v > best
            index = j if above else index
            best = v if above else best
        conf[i] = best
        correct[i] = 1.0 if index == labels[i] else 0.0


def top1_of_rows(probs, labels):
    """(confidence, correct) of an (n, K) probability matrix in one pass over its rows: the row maximum
    and 1.0 where its index — the lowest one among ties, as ``argmax`` gives — is the label, else 0.0.
    (``argmax`` along the rows, ``take_along_axis`` and a comparison are three passes, slow on short
    rows.)  The rows are validated: finite values, so ``>`` finds the first maximum as ``argmax``.
    Large matrices are read in row chunks on several threads (:func:`calviz._threads.map_chunks`)."""
    n = probs.shape[0]
    conf = np.empty(n)
    correct = np.empty(n)
    map_chunks(lambda start, stop: top1_rows_into(probs, labels, start, stop, conf, correct), n)
    return conf, correct


@njit(cache=True, nogil=True)
def top1_binary_into(p, labels, start, stop, conf, correct):
    """Rows start..stop−1 of :func:`top1_of_binary`."""
    for i in range(start, stop):
        pi = p[i]
        predicted = pi > 0.5
        conf[i] = pi if predicted else 1.0 - pi
        correct[i] = 1.0 if predicted == (labels[i] == 1) else 0.0


def top1_of_binary(p, labels):
    """(confidence, correct) of binary predictions P(y = 1) = p: the argmax of the row [1 − p, p] (class 1
    only when p > ½: ties go to class 0) and whether it is the label, in one pass without building the
    (n, 2) matrix (chunked on several threads for large n)."""
    n = p.shape[0]
    conf = np.empty(n)
    correct = np.empty(n)
    map_chunks(lambda start, stop: top1_binary_into(p, labels, start, stop, conf, correct), n)
    return conf, correct
