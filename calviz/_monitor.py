"""An anytime-valid monitor of calibration: a test martingale (e-process) over a prediction log.

The construction is described in :func:`monitor_calibration`; the jitted pass is
:func:`calviz._kernels.monitor.eprocess_pass`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from calviz._data import InputError
from calviz._kernels.monitor import eprocess_pass
from calviz._params import (
    ALPHA,
    UNIT_OPEN,
    AnyOf,
    Interval,
    ListOf,
    NoneOr,
    validate_params,
)
from calviz._results import ResultMixin
from calviz._windows import (
    WINDOW,
    TimeColumn,
    TimeWindows,
    WindowSpec,
    as_time,
    parse_window,
    scalar_view,
    sort_by_time,
    window_bounds,
)

__all__ = ["monitor_calibration", "CalibrationMonitor", "monitor_of_over_time"]

#: default resolutions of the bets: 1 bin (calibration in the large), 4 and 16 equal-width bins
DEFAULT_BINS = (1, 4, 16)
#: default prior count κ: a bin's estimated shift S_b/(N_b + κ) is shrunk towards 0 until it holds many
#: more than κ rows, so the first bets are small
DEFAULT_PRIOR_COUNT = 20.0
#: default half-lives of the memory of the bets, in rows: a row's weight in the estimated shifts halves
#: with every this many rows logged after its batch, so the bets follow a drift that starts late in a
#: long calibrated log (None: no forgetting); a short memory follows a drift sooner, a long one estimates
#: a small shift better and loses less while calibrated (benchmarks/bench_monitor.py)
DEFAULT_HALF_LIFE = (2_000, 20_000)
#: most bins of one resolution (the state is O(Σ bins))
MAX_BINS = 4096


@dataclass(frozen=True)
class _State:
    """What the e-process needs to continue: bin sums before and in the open batch, and the log wealth."""

    committed_sum: np.ndarray
    committed_count: np.ndarray
    pending_sum: np.ndarray
    pending_count: np.ndarray
    log_wealth: np.ndarray
    time: TimeColumn | None
    spec: WindowSpec
    rows: int
    last_key: Any
    last_time: Any


@dataclass(frozen=True, repr=False)
class CalibrationMonitor(ResultMixin):
    """The e-process of a prediction log after every batch, returned by :func:`monitor_calibration`.

    Attributes
    ----------
    start, end : ndarray
        Each batch's span (as :class:`calviz.CalibrationOverTime`'s windows).
    batch_n : ndarray of int
        Rows per batch.
    log_evalues : ndarray
        ln E_k, the natural logarithm of the e-process after batch k.
    log_evalues_by_expert : ndarray of shape (len(experts), K)
        ln of each expert's test martingale (E_k is their average).
    alarm : bool
        Whether E_k ≥ 1/α at some batch.
    alarm_index : int or None
        The first batch with E_k ≥ 1/α.
    alarm_time : object or None
        ``end`` of that batch (its last time for batch ids).
    threshold : float
        1/α.
    pvalue : float
        The anytime-valid p-value min(1, 1/max_{k' ≤ K} E_k') (valid at any stopping time).
    alpha : float
        The level: P(alarm ever | calibrated) ≤ α.
    n_bins : tuple of int
        The resolutions of the bets.
    prior_count : float
        κ, the shrinkage of the estimated shifts.
    half_life : tuple of float or None
        Half-lives (rows) of the memory of the bets (None: no forgetting).
    n : int
        Rows monitored.
    target : str
        "binary" or "top1".
    window : str
        How rows were grouped into batches.
    n_classes : int or None
        Classes of the input.
    """

    start: np.ndarray
    end: np.ndarray
    batch_n: np.ndarray
    log_evalues: np.ndarray
    log_evalues_by_expert: np.ndarray
    alarm: bool
    alarm_index: int | None
    alarm_time: Any
    threshold: float
    pvalue: float
    alpha: float
    n_bins: tuple
    prior_count: float
    half_life: tuple
    n: int
    target: str
    window: str
    n_classes: int | None = None
    _state: Any = dataclasses.field(default=None, compare=False)

    @property
    def evalues(self) -> np.ndarray:
        """E_k after every batch (inf where it overflows a float)."""
        with np.errstate(over="ignore"):
            return np.exp(self.log_evalues)

    @property
    def experts(self) -> tuple:
        """(bins, half-life) of each test martingale averaged: every resolution with every memory."""
        return tuple((m, h) for h in self.half_life for m in self.n_bins)

    @property
    def statistic(self) -> float:
        """The e-value after the last batch, E_K."""
        return float(np.exp(min(self.log_evalues[-1], 709.0))) if self.log_evalues.size else 1.0

    def to_frame(self):
        """A pandas DataFrame, one row per batch: start, end, n, log_evalue, evalue, alarm."""
        import pandas as pd

        crossed = np.zeros(self.log_evalues.shape[0], dtype=bool)
        if self.alarm_index is not None:
            crossed[self.alarm_index:] = True
        return pd.DataFrame({"start": self.start, "end": self.end, "n": self.batch_n,
                             "log_evalue": self.log_evalues, "evalue": self.evalues, "alarm": crossed})

    def append(self, y_true, y_prob=None, *, time=None) -> CalibrationMonitor:
        """The monitor continued over more rows (none earlier than the last time seen): O(new rows), the
        same numbers as monitoring the whole log at once."""
        state = self._state
        _, _, z, y = scalar_view(y_true, y_prob, self.target, "append", min_samples=1)
        if state.time is None:
            if time is not None:
                raise InputError("append: this monitor was started without time; give none")
            t = np.arange(state.rows, state.rows + z.shape[0], dtype=np.int64)
            time_col = None
        else:
            time_col = as_time(time, z.shape[0], "append")
            if time_col.kind != state.time.kind or time_col.kind == "label":
                raise InputError("append: the new times must be datetimes or numbers, as the log's (string "
                                 "batch ids cannot be appended)")
            order = sort_by_time(time_col.values)
            t = time_col.values if order is None else time_col.values[order]
            if order is not None:
                z, y = z[order], y[order]
            if t.shape[0] and t[0] < state.last_time:
                raise InputError("append: the log is append-only; the new rows start before its last time")
        if z.shape[0] == 0:
            return self
        return _run(z, np.asarray(y, dtype=np.float64), t, state.time or time_col, state.spec, self, state)


def _run(z, y, t, time_col, spec, previous: CalibrationMonitor | None, state: _State | None,
         windows: TimeWindows | None = None):
    """Advance the e-process over the sorted rows (z, y, t) from ``state`` (None: from the start);
    ``windows``: the batches of these rows when already cut (:meth:`TimeWindows.of`)."""
    bins = np.asarray([m for m, _ in previous.experts], dtype=np.int64)
    decay = np.asarray([1.0 if h is None else 0.5 ** (1.0 / h) for _, h in previous.experts])
    first_row = state.rows if state else 0
    if windows is None:
        windows = TimeWindows.of(t, spec, first_row=first_row)
    starts = windows.starts
    state = dataclasses.replace(state, **{name: getattr(state, name).copy() for name in (
        "committed_sum", "committed_count", "pending_sum", "pending_count", "log_wealth")})
    continues = previous is not None and previous.batch_n.size > 0 and windows.keys[0] == state.last_key
    if previous is not None and previous.batch_n.size > 0 and not continues:
        # a new batch: the previous open batch is committed by a zero-row step
        starts = np.concatenate(([0], starts))
    log_by = eprocess_pass(np.ascontiguousarray(z, dtype=np.float64), y, starts.astype(np.int64), bins,
                           float(previous.prior_count), decay, state.committed_sum,
                           state.committed_count,
                           state.pending_sum, state.pending_count, state.log_wealth)
    if previous is not None and previous.batch_n.size > 0 and not continues:
        log_by = log_by[:, 1:]
    counts = np.diff(windows.starts)
    start, end = window_bounds(windows, spec)
    show = time_col.show if time_col is not None else np.asarray
    start, end = show(start), show(end)
    old_log = previous.log_evalues_by_expert
    if continues:
        old_log = old_log[:, :-1]
        counts = counts.copy()
        counts[0] += previous.batch_n[-1]
        start = np.concatenate((previous.start[-1:], start[1:]))
        keep = previous.batch_n.size - 1
    else:
        keep = previous.batch_n.size
    log_by = np.concatenate((old_log, log_by), axis=1)
    all_start = np.concatenate((previous.start[:keep], start))
    all_end = np.concatenate((previous.end[:keep], end))
    all_n = np.concatenate((previous.batch_n[:keep], counts)).astype(np.int64)
    log_e = _log_mean_exp(log_by)
    alpha = previous.alpha
    crossed = np.flatnonzero(log_e >= math.log(1.0 / alpha))
    alarm_index = int(crossed[0]) if crossed.size else None
    max_log = float(np.max(log_e)) if log_e.size else 0.0
    new_state = dataclasses.replace(state, rows=first_row + z.shape[0], last_key=windows.keys[-1],
                                    last_time=t[-1], time=time_col)
    return CalibrationMonitor(
        start=all_start, end=all_end, batch_n=all_n, log_evalues=log_e, log_evalues_by_expert=log_by,
        alarm=alarm_index is not None, alarm_index=alarm_index,
        alarm_time=None if alarm_index is None else _item(all_end[alarm_index]), threshold=1.0 / alpha,
        pvalue=float(min(1.0, math.exp(-max_log))), alpha=alpha, n_bins=previous.n_bins,
        prior_count=previous.prior_count, half_life=previous.half_life, n=int(all_n.sum()),
        target=previous.target, window=spec.text,
        n_classes=previous.n_classes, _state=new_state)


def _item(value):
    return value.item() if isinstance(value, np.generic) and not isinstance(value, np.datetime64) else value


def _log_mean_exp(log_by: np.ndarray) -> np.ndarray:
    """ln((1/J) Σ_j exp(L_j)) per column, without overflow."""
    if log_by.shape[1] == 0:
        return np.empty(0)
    top = log_by.max(axis=0)
    return top + np.log(np.exp(log_by - top).mean(axis=0))


@validate_params({"window": WINDOW, "alpha": UNIT_OPEN, "n_bins": ListOf(Interval(int, 1, MAX_BINS), (1, 8)),
                  "prior_count": Interval(float, 0, None, closed="neither"),
                  "half_life": AnyOf(NoneOr(Interval(float, 1, None)),
                                     ListOf(NoneOr(Interval(float, 1, None)), (1, 4)))})
def monitor_calibration(
    y_true,
    y_prob=None,
    *,
    time=None,
    window: str | float | None = None,
    alpha: float = ALPHA,
    n_bins=DEFAULT_BINS,
    prior_count: float = DEFAULT_PRIOR_COUNT,
    half_life=DEFAULT_HALF_LIFE,
    target: Literal["auto", "binary", "top1"] = "auto",
) -> CalibrationMonitor:
    """Anytime-valid monitor of calibration: an e-process that may be read after every batch.

    H₀: every outcome's conditional probability, given its prediction and everything logged before
    (earlier batches, and earlier rows of its own batch in any order), is the prediction:
    P(y_i = 1 | z_i, past) = z_i — binary calibration of P(y = 1), or top-1 calibration with z the
    confidence and y whether the top class was right.  The e-process is a nonnegative martingale with
    E₀ = 1 under H₀, so by Ville's inequality P(sup_k E_k ≥ 1/α) ≤ α: the monitor may be checked after
    every batch, forever, and the first crossing of 1/α (the alarm) is a level-α test at any stopping
    time; min(1, 1/max_k E_k) is an anytime-valid p-value.

    **The construction** (a betting / plug-in likelihood-ratio test martingale, not the e-values of
    Arnold, Henzi & Ziegel (2023), which test *probabilistic* calibration — uniformity of the PIT — of
    forecast distributions; this tests the *conditional* calibration E[y | z] = z of classifiers).  For
    each expert (m, h) — a resolution m ∈ ``n_bins`` (equal-width bins of z, b(z) = min(⌊m z⌋, m − 1))
    with a memory h ∈ ``half_life`` — a row i of batch k bets with the recalibrated forecast

        q_i = z_i + clip(S_b / (N_b + κ), −z_i/2, (1 − z_i)/2),   b = b(z_i),

    where S_b = Σ w (y − z) and N_b = Σ w are sums over bin b of the rows of batches *before* k, with a
    forgetting weight w = 2^(−r/h) for a row of batch l, r the rows of batches l + 1..k − 1
    (the bets follow a drift that begins late in a long log; h = None: w = 1), and κ = ``prior_count``;
    its factor is the likelihood ratio of q_i against z_i,

        f_i = q_i^{y_i} (1 − q_i)^{1−y_i} / (z_i^{y_i} (1 − z_i)^{1−y_i}) = 1 + λ_i (y_i − z_i),
        λ_i = (q_i − z_i) / (z_i (1 − z_i)),

    i.e. a bet of λ_i on the calibration residual y_i − z_i with E₀[f_i | past] = 1, and f_i ≥ ½ (rows
    predicted exactly 0 or 1 do not bet: f_i = 1).  The martingale of expert e is
    E^{(e)}_k = Π_{i in batches ≤ k} f_i, and the e-process is their average
    E_k = (1/J) Σ_e E^{(e)}_k over the J = |n_bins|·|half_life| experts (an average of test martingales
    is one).  This is Wald's likelihood ratio with the alternative estimated from the past — the plug-in
    method surveyed by Ramdas, Grünwald, Vovk & Shafer (2023) — equivalently the betting capital process
    Π (1 + λ_i (y_i − z_i)) of Waudby-Smith & Ramdas (2024) with predictable bets λ_i; its expected log
    growth under an alternative P(y = 1 | z) = z + δ(z) tends to the Kullback–Leibler divergence between
    the true and predicted outcome laws, averaged over the bins.  Bets within a batch use earlier
    batches only, so rows with tied times need no order.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions, class indices for (n, K) ones.
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample.
    time : array-like of shape (n,), optional
        A time, number or batch id per row (as :func:`calviz.calibration_over_time`); rows are sorted by
        it (stably).  None: the rows in the given order, one batch per row unless ``window`` says more.
    window : str, number or None, default None
        How rows form batches (as :func:`calviz.calibration_over_time`): None (one batch per distinct
        time), ``"N rows"``, a duration (``"1D"``) or a width.
    alpha : float, default 0.05
        Level: the alarm is raised when E_k ≥ 1/α.
    n_bins : sequence of int, default (1, 4, 16)
        Resolutions of the bets (1 to 8 of them, each in [1, 4096]); 1 bin bets on calibration in the large.
    prior_count : float, default 20
        κ > 0: shrinkage of the estimated shift of each bin towards 0.
    half_life : float, None or a sequence of them, default (2000, 20000)
        Half-lives h ≥ 1 in rows of the memory of the bets (1 to 4 of them); None: every past row weighs
        1.  Any choice keeps the level (the bets only need to be fixed before the batch); a short memory
        follows a drift sooner, a long one estimates a small shift better.
    target : {"auto", "binary", "top1"}, default "auto"
        Binary P(y = 1), or top-1 calibration of (n, K) input.

    Returns
    -------
    CalibrationMonitor
        ``log_evalues`` after each batch, ``alarm``, ``alarm_index``, ``alarm_time``, ``pvalue``; continue
        it with :meth:`CalibrationMonitor.append`.

    See Also
    --------
    calibration_over_time : Per-window ECE, rates and T-Cal (Holm-corrected fixed-sample tests).

    References
    ----------
    .. [1] J. Ville. *Étude critique de la notion de collectif*. Gauthier-Villars, 1939.
    .. [2] A. Ramdas, P. Grünwald, V. Vovk and G. Shafer. Game-theoretic statistics and safe anytime-valid
       inference. *Statistical Science* 38(4), 576–601, 2023.
    .. [3] I. Waudby-Smith and A. Ramdas. Estimating means of bounded random variables by betting.
       *Journal of the Royal Statistical Society, Series B* 86(1), 1–27, 2024.
    .. [4] S. Arnold, A. Henzi and J. F. Ziegel. Sequentially valid tests for forecast calibration.
       *Annals of Applied Statistics* 17(3), 1909–1935, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> day = np.repeat(np.arange(60), 500)                        # 60 daily batches of 500 predictions
    >>> p = rng.uniform(0.05, 0.95, size=day.size)
    >>> truth = np.where(day >= 30, np.clip(p + 0.08, 0, 1), p)    # from day 30 on, p is 0.08 too low
    >>> y = (rng.uniform(size=day.size) < truth).astype(int)
    >>> monitor = calviz.monitor_calibration(y, p, time=day, alpha=0.05)
    >>> monitor.alarm, monitor.alarm_index
    (True, 31)
    >>> bool(monitor.evalues[29] < 1 / 0.05)                       # no alarm while calibrated
    True
    """
    data, target, z, y = scalar_view(y_true, y_prob, target, "monitor_calibration")
    n = z.shape[0]
    if n == 0:
        raise InputError("monitor_calibration: no rows")
    y = np.asarray(y, dtype=np.float64)
    if time is None:
        time_col, t = None, np.arange(n, dtype=np.int64)
        spec = parse_window(window, "number", "monitor_calibration") if window is not None else \
            WindowSpec("each", 0, "one batch per row")
    else:
        time_col = as_time(time, n, "monitor_calibration")
        spec = parse_window(window, time_col.kind, "monitor_calibration")
        order = sort_by_time(time_col.values)
        t = time_col.values if order is None else time_col.values[order]
        if order is not None:
            z, y = z[order], y[order]
    return _start(z, y, t, time_col, spec, None, alpha=alpha, n_bins=n_bins, prior_count=prior_count,
                  half_life=half_life, target=target, n_classes=data.n_classes)


def monitor_of_over_time(over_time, *, alpha: float | None = None) -> CalibrationMonitor:
    """The monitor (:func:`monitor_calibration` with its default bets) of the log that the over-time result
    ``over_time`` (:func:`calviz.calibration_over_time`) already validated, sorted by time and cut into its
    fixed windows: the batches are those windows, and nothing is validated, sorted or cut again.  The same
    numbers as ``monitor_calibration(y_true, y_prob, time=time, window=window, alpha=alpha,
    target=over_time.target)`` on the log's rows (``alpha``: the result's when None)."""
    log = over_time._log
    return _start(log.z, log.y, log.t, log.time, log.spec, log.windows,
                  alpha=over_time.alpha if alpha is None else alpha, n_bins=DEFAULT_BINS,
                  prior_count=DEFAULT_PRIOR_COUNT, half_life=DEFAULT_HALF_LIFE, target=over_time.target,
                  n_classes=over_time.n_classes)


def _start(z, y, t, time_col, spec, windows, *, alpha, n_bins, prior_count, half_life, target,
           n_classes) -> CalibrationMonitor:
    """The e-process from its start over the validated, time-sorted rows (z, y, t) (``windows``: their
    batches, or None to cut them here)."""
    bins = tuple(sorted({int(m) for m in n_bins}))
    memories = tuple(half_life) if isinstance(half_life, (list, tuple, set, frozenset)) else (half_life,)
    memories = tuple(dict.fromkeys(None if h is None else float(h) for h in memories))
    J, width = len(bins) * len(memories), max(bins)
    state = _State(np.zeros((J, width)), np.zeros((J, width)), np.zeros((J, width)), np.zeros((J, width)),
                   np.zeros(J), time_col, spec, 0, None, None)
    empty = CalibrationMonitor(
        start=np.empty(0, dtype=_shown_dtype(time_col)), end=np.empty(0, dtype=_shown_dtype(time_col)),
        batch_n=np.empty(0, np.int64), log_evalues=np.empty(0), log_evalues_by_expert=np.empty((J, 0)),
        alarm=False, alarm_index=None, alarm_time=None, threshold=1.0 / float(alpha), pvalue=1.0,
        alpha=float(alpha), n_bins=bins, prior_count=float(prior_count),
        half_life=memories, n=0, target=target,
        window=spec.text, n_classes=n_classes)
    return _run(z, y, t, time_col, spec, empty, state, windows)


def _shown_dtype(time_col: TimeColumn | None):
    if time_col is None:
        return np.int64
    if time_col.kind == "datetime":
        return "datetime64[ns]"
    if time_col.kind == "label":
        return time_col.labels.dtype
    return time_col.values.dtype
