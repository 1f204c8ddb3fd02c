"""Smooth reliability diagram and SmoothECE (Błasiok and Nakkiran, 2023).

Reference: J. Błasiok and P. Nakkiran, "Smooth ECE: Principled reliability diagrams via kernel
smoothing" (2023), and its package ``relplot`` (Apple, ``relplot.metrics.smECE_sigma``).

Definitions (n pairs (v_i, y_i), residual r_i = y_i − v_i, kernel K_σ(t, v) on [0, 1]):

* smoothed residual   A_σ(t) = (1/n) Σ_i K_σ(t, v_i) r_i,
* smoothed density    δ_σ(t) = (1/n) Σ_i K_σ(t, v_i),
* reliability curve   μ_σ(t) = Σ_i K_σ(t, v_i) y_i / Σ_i K_σ(t, v_i)   (Nadaraya–Watson estimate of
  E[y | v = t], relplot's diagram), or centred: t + A_σ(t) / δ_σ(t),
* SmoothECE           smECE(σ) = ∫ |A_σ(t)| dt / ∫ δ_σ(t) dt  (= ∫ |centred curve − t| δ_σ / ∫ δ_σ).

Kernels:

* ``"reflected_gaussian"`` (default, as in the paper and relplot): the Gaussian φ_σ folded into [0, 1]
  by reflecting at 0 and 1, K_σ(t, v) = Σ_{k∈ℤ} φ_σ(t − v − 2k) + φ_σ(t + v − 2k).  It integrates to 1
  over [0, 1] for every v, so ∫ δ_σ = 1.  It is the Neumann heat kernel, a semigroup in σ², hence
  smECE(σ) is non-increasing in σ and the fixed point below is unique.
* ``"logit_gaussian"`` (relplot's ``LogitGaussianKernel``): a Gaussian of standard deviation 4σ in logit
  space (4 = d logit/dp at p = 1/2, so σ is comparable with the reflected kernel near the middle), with
  predictions clipped to [10⁻³, 1 − 10⁻³] before the logit as relplot does.  Integrals run over the
  whole logit line, so smECE(σ) = (1/n) ∫_ℝ |Σ_i φ_{4σ}(u − logit v_i) r_i| du, again non-increasing.

Automatic bandwidth: the unique σ* with smECE(σ*) = σ* (relplot ``smECE``), found by halving from
min(1, mean|r|) ≥ σ* until smECE(σ) > σ and then Brent's method on the bracket (relplot bisects 10
times, so its σ* is only resolved to 2⁻¹⁰; calviz solves to 10⁻⁸).

Computation: the data are linearly binned onto a grid of spacing h ≤ width/64 (width = σ, or 4σ in logit
space) and the binned masses are convolved with the Gaussian by FFT (reflection = even extension onto a
circle of circumference 2; the Gaussian's Fourier multiplier exp(−2π²σ²ξ²) is used exactly).  Cost
O(n + G log G) per bandwidth; the O(n) binning happens once per grid.  The linear-binning error of
smECE is at most (h²/8)·mean|r|·∫|φ''_w| ≈ 3·10⁻⁵·mean|r| at h = w/64 and far smaller in practice (tests
compare with a direct O(n·T) evaluation of the definitions).

Differences from relplot (version 1.0.3), all in relplot's discretisation, none in the definitions:
relplot truncates the Gaussian at |t − v| ≤ 0.5 and reflects once (matters for σ ≳ 0.1), gives a point
at exactly 0 or 1 only half the weight of the reflected kernel (its mirror extension drops the edge grid
value), bins onto 1001 points (error ~ (10⁻³/σ)²) and sums |A| on a 200-point mesh with end points at full
weight.  At σ ≤ 0.1 on data without atoms at 0 or 1 the two agree to about 10⁻⁴ (see tests).

Pointwise band: bootstrap of the n pairs with the bandwidth held fixed (as relplot's bagged band).  A
bootstrap resample is a multinomial draw of counts over (grid cell, label) categories, applied to the
per-category binning aggregates, so each resample costs O(G log G), not O(n); within-cell positions are
averaged, an error of order h² like the binning itself.  The band is the [α/2, 1 − α/2] percentile band of
the resampled curves, widened where needed to contain the point estimate.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import numpy as np

from calviz._data import InputError, check_alpha
from calviz._ece import prepare_view
from calviz._kernels.smooth import bin_by_cell_and_label, categories_and_fractions
from calviz._lazy import LazyModule
from calviz._params import (
    BOOLEAN,
    INTERVAL_ALPHA,
    SEED,
    UNIT_OPEN,
    Interval,
    NoneOr,
    Options,
    as_generator,
    validate_params,
)
from calviz._results import HasInterval, LevelFromAlpha, ResultMixin, ValueStatistic
from calviz.targets import SCALAR_TARGETS
from calviz.targets import TargetName as Target

# imported at first use: 0.4 s that `calviz serve` would otherwise pay before its first page
fft = LazyModule("scipy.fft")
sparse = LazyModule("scipy.sparse")
optimize = LazyModule("scipy.optimize")

__all__ = ["smooth_ece", "smooth_reliability", "SmoothECEResult", "SmoothReliability", "KERNELS",
           "band_at_alpha"]

Kernel = Literal["reflected_gaussian", "logit_gaussian"]
KERNELS = ("reflected_gaussian", "logit_gaussian")

#: logit_gaussian clips predictions to [LOGIT_CLIP, 1 - LOGIT_CLIP] before the logit (as relplot does).
LOGIT_CLIP = 1e-3
#: Smallest and largest accepted bandwidth; the automatic bandwidth never goes below MIN_BANDWIDTH.
MIN_BANDWIDTH = 1e-4
MAX_BANDWIDTH = 10.0
#: Logit-space standard deviation per unit σ for the logit_gaussian kernel (relplot's factor).
LOGIT_WIDTH_FACTOR = 4.0

# Grid spacing h <= width / _POINTS_PER_WIDTH keeps the linear-binning error below ~3e-5 relative.
_POINTS_PER_WIDTH = 64
# Coarsest grid for the reflected kernel on [0, 1] (2**11 cells, serves every σ >= 0.03).
_MIN_LEVEL_REFLECTED = 11
# The logit grid extends 8 kernel widths beyond the data on both sides (Gaussian tail < 1e-15).
_LOGIT_MARGIN_WIDTHS = 8.0
# Where the smoothed density is below this fraction of its maximum, FFT round-off (~1e-16 of the
# total) would make A/δ inaccurate (relative error ~1e-16 · G / threshold); the curve there is carried
# over from the nearest reliable grid point, which is also the limit of the Nadaraya–Watson estimate far
# from the data.
_RELIABLE_DENSITY = 1e-7
# Bootstrap resamples are processed in chunks of about this many grid values (bounds peak memory).
_CHUNK_VALUES = 1 << 22

# Cost model (one call; G = computation-grid length, ≈ 64/σ points on [0, 1] (2¹² ≤ G ≤ 2²¹ since
# σ ≥ MIN_BANDWIDTH; ≈ 14·16/σ on the logit line), B resamples, T = grid_size, M occupied grid nodes ≤ 2n).
# smECE(σ) costs O(n + G log G) by FFT or O(M²·w/h) by direct sums near the nodes, whichever is cheaper;
# the automatic bandwidth evaluates it at most ~14 halvings + Brent's iterations.  Curve and band cost
# O(G log G) per curve by FFT or O((T + M)·M) by direct sums, whichever is cheaper — so few distinct
# predictions (all in {0, 1}, one value, n < 10) cost microseconds per resample whatever σ is — and the
# band's FFT work is capped by BAND_WORK_BUDGET.
#: Largest accepted ``grid_size`` (output points of the diagram).
MAX_GRID_SIZE = 100_001
#: Largest accepted ``n_resamples``.
MAX_RESAMPLES = 100_000
#: Largest accepted ``n_resamples × grid_size`` (the resampled curves are held in memory: 8 bytes each).
MAX_BAND_VALUES = 1 << 24
#: Work budget of the band, in FFT grid values (B × 2G).  Above it the band is computed openly on a
#: coarser grid (down to σ/8 spacing, linear-binning error ~ 0.2 % of mean|r| — fine for a band) and, if
#: still above, from fewer resamples; ``SmoothReliability.band_note`` says which.
BAND_WORK_BUDGET = 1 << 26
#: The direct path's kernel matrix has at most this many entries (query points × occupied nodes).
_DIRECT_MAX_ENTRIES = 1 << 22
# An FFT-path resample costs about this many direct multiply-adds per grid value (FFT, interpolation).
_FFT_COST_PER_VALUE = 16
# Binning aggregates over the occupied categories only when the grid has more cells than this per point.
_SPARSE_CELLS_PER_POINT = 8
# Direct smECE sums reach this many kernel widths from an occupied node (e^-50 beyond).
_DIRECT_REACH = 10.0
# Coarsest spacing the band may fall back to, in points per kernel width.
_MIN_POINTS_PER_WIDTH_BAND = 8


@dataclass(frozen=True, repr=False)
class SmoothECEResult(ValueStatistic, ResultMixin):
    """SmoothECE at one bandwidth, returned by :func:`smooth_ece`.

    Attributes
    ----------
    value : float
        smECE(σ) (also ``statistic``).
    bandwidth : float
        σ.
    kernel : str
        "reflected_gaussian" or "logit_gaussian".
    n : int
        Sample size.
    bandwidth_rule : str
        Where σ came from: "given", "fixed point" (smECE(σ) = σ) or "lower limit" (smECE(σ) < σ
        already at σ = MIN_BANDWIDTH, e.g. perfect predictions).
    target : str
        The calibration target.
    n_classes : int or None
        Classes of the input.
    """

    value: float
    bandwidth: float
    kernel: str
    n: int
    bandwidth_rule: str
    target: str = ""
    n_classes: int | None = None


@dataclass(frozen=True, repr=False)
class SmoothReliability(HasInterval, LevelFromAlpha, ResultMixin):
    """Smooth reliability diagram on an even grid of [0, 1], returned by :func:`smooth_reliability`.

    All arrays are plain float64 numpy arrays of the grid's length.

    Attributes
    ----------
    grid : ndarray
        ``grid_size`` points evenly spaced in [0, 1].
    curve : ndarray
        μ_σ(t) ≈ E[y | v = t] (``centered``: t + smoothed residual).
    band_low, band_high : ndarray
        Pointwise bootstrap band at level 1 − ``alpha`` (NaN when ``n_resamples`` = 0);
        ``confidence_interval()``.
    density : ndarray
        The smoothed density δ_σ of the predictions (integrates to 1 over [0, 1]).
    bandwidth : float
        σ.
    smooth_ece : float
        SmoothECE at σ (also ``statistic``).
    kernel, centered, bandwidth_rule : str, bool, str
        As passed / as for :class:`SmoothECEResult`.
    alpha : float
        1 − the band's level (``level``).
    n_resamples : int
        Resamples of the band — fewer than asked only when the band would exceed its work budget.
    band_note : str
        Says when the band was computed on a coarser grid or from fewer resamples ("" otherwise).
    n, target, n_classes : int, str, int or None
        The sample.
    """

    _interval_fields = ("band_low", "band_high")

    grid: np.ndarray
    curve: np.ndarray
    band_low: np.ndarray
    band_high: np.ndarray
    density: np.ndarray
    bandwidth: float
    smooth_ece: float
    kernel: str
    centered: bool
    bandwidth_rule: str
    alpha: float
    n_resamples: int
    n: int
    band_note: str = ""
    target: str = ""
    n_classes: int | None = None
    #: the band's resampled curves (n_resamples, grid_size): the band at another α is their pointwise
    #: quantiles (:func:`band_at_alpha`), no resampling again
    _draws: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def statistic(self) -> float:
        """The SmoothECE at ``bandwidth`` (``smooth_ece``)."""
        return float(self.smooth_ece)


def _percentile_band(curves: np.ndarray, curve: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The pointwise [α/2, 1 − α/2] quantiles of the resampled curves, widened to contain the curve."""
    low, high = np.quantile(curves, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
    return np.minimum(low, curve), np.maximum(high, curve)


def band_at_alpha(result: SmoothReliability, alpha: float) -> SmoothReliability:
    """The smooth diagram ``result`` with its band at level 1 − ``alpha`` from its stored resampled curves:
    equal to :func:`smooth_reliability` with the same seed and resamples and this α.

    Parameters
    ----------
    result : SmoothReliability
        A diagram computed with a band (``n_resamples`` > 0; it carries its resampled curves).
    alpha : float
        The new α.

    Returns
    -------
    SmoothReliability
        The diagram with the band at level 1 − α (its resampled curves kept).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz._smooth import band_at_alpha
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> rel = calviz.smooth_reliability(y, p, n_resamples=20, grid_size=101, seed=0)
    >>> fresh = calviz.smooth_reliability(y, p, n_resamples=20, grid_size=101, seed=0, alpha=0.3)
    >>> bool(np.array_equal(band_at_alpha(rel, 0.3).band_low, fresh.band_low))
    True
    """
    alpha = check_alpha(alpha)
    if not isinstance(result, SmoothReliability) or result._draws is None:
        raise InputError("band_at_alpha needs a SmoothReliability computed with a band (n_resamples > 0)")
    low, high = _percentile_band(result._draws, result.curve, alpha)
    return dataclasses.replace(result, band_low=low, band_high=high, alpha=alpha)


# ------------------------------------------------------------------------------------------------------
# grid machinery


@dataclass(frozen=True)
class _Binned:
    """Per-(cell, label) linear-binning aggregates on the grid start + j·step, j = 0..n_cells.

    Only occupied categories are kept: ``cell`` is each category's cell k (its point masses go to grid
    points k and k + 1), ``label`` its label (0. or 1.), ``count`` its number of points, the weight and
    residual sums as in the jitted kernel.
    """

    start: float
    step: float
    n_cells: int
    cell: np.ndarray
    label: np.ndarray
    count: np.ndarray
    low_weight: np.ndarray
    high_weight: np.ndarray
    low_residual: np.ndarray
    high_residual: np.ndarray
    _scatter_cache: dict = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def nodes(self) -> np.ndarray:
        """Indices of the grid points that receive mass (each category's two end points)."""
        return np.unique(np.concatenate([self.cell, self.cell + 1]))

    @property
    def node_positions(self) -> np.ndarray:
        return self.start + self.step * self.nodes

    @cached_property
    def _node_of(self) -> tuple[np.ndarray, np.ndarray]:
        """Each category's two grid points as indices into ``nodes``."""
        return np.searchsorted(self.nodes, self.cell), np.searchsorted(self.nodes, self.cell + 1)

    def node_masses(self, numerator: str = "residual") -> tuple[np.ndarray, np.ndarray]:
        """grid_masses at the occupied nodes only (no grid-sized arrays)."""
        low_node, high_node = self._node_of
        size = self.nodes.shape[0]

        def spread(low: np.ndarray, high: np.ndarray) -> np.ndarray:
            return np.bincount(low_node, low, size) + np.bincount(high_node, high, size)

        weights, numerators = self._parts(numerator)
        return spread(*weights), spread(*numerators)

    def _parts(self, numerator: str) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        """(low, high) sums of the point weights and of the numerator: the residual y − v or the label y."""
        weights = (self.low_weight, self.high_weight)
        if numerator == "residual":
            return weights, (self.low_residual, self.high_residual)
        return weights, (self.low_weight * self.label, self.high_weight * self.label)

    def grid_masses(self, numerator: str = "residual") -> tuple[np.ndarray, np.ndarray]:
        """Binned point masses and numerator masses of the full sample at the n_cells + 1 grid points."""

        def spread(low: np.ndarray, high: np.ndarray) -> np.ndarray:
            size = self.n_cells + 1
            return np.bincount(self.cell, low, size) + np.bincount(self.cell + 1, high, size)

        weights, numerators = self._parts(numerator)
        return spread(*weights), spread(*numerators)

    def _scatter(self, numerator: str, on_nodes: bool = False):
        """Sparse (grid point × category) matrices: per drawn point of a category, its average
        contribution to each grid point's mass and numerator mass; ``on_nodes``: the occupied nodes'
        rows only (the direct path)."""
        key = (numerator, on_nodes)
        if key not in self._scatter_cache:
            n_categories = self.cell.shape[0]
            rows = np.concatenate(self._node_of if on_nodes else (self.cell, self.cell + 1))
            n_rows = self.nodes.shape[0] if on_nodes else self.n_cells + 1
            cols = np.tile(np.arange(n_categories), 2)
            per_point = np.tile(self.count, 2)

            def matrix(low: np.ndarray, high: np.ndarray):
                values = np.concatenate([low, high]) / per_point
                return sparse.csr_matrix((values, (rows, cols)), shape=(n_rows, n_categories))

            weights, numerators = self._parts(numerator)
            self._scatter_cache[key] = (matrix(*weights), matrix(*numerators))
        return self._scatter_cache[key]

    def resampled_masses(self, draws: np.ndarray, numerator: str) -> tuple[np.ndarray, np.ndarray]:
        """Grid masses of bootstrap resamples: ``draws`` (B, categories) counts points per category; each
        drawn point carries its category's average weights (exact for the full sample's counts)."""
        mass, numerators = self._scatter(numerator)
        draws_t = np.ascontiguousarray(draws.T, dtype=np.float64)
        return (mass @ draws_t).T, (numerators @ draws_t).T


def _excess(sigma: float, problem: _SmoothingProblem) -> float:
    """smECE(σ) − σ, whose root is the fixed-point bandwidth."""
    return problem.ece(sigma) - sigma


class _SmoothingProblem:
    """Validated (v, y) plus cached binnings; evaluates A_σ, δ_σ, smECE(σ) and the band."""

    def __init__(self, prob: np.ndarray, label: np.ndarray, kernel: str):
        self.kernel = kernel
        self.n = int(prob.shape[0])
        self._label = np.ascontiguousarray(label, dtype=np.float64)
        self._residual = self._label - prob
        if kernel == "logit_gaussian":
            clipped = np.clip(prob, LOGIT_CLIP, 1.0 - LOGIT_CLIP)
            self._position = np.log(clipped) - np.log1p(-clipped)
        else:
            self._position = np.ascontiguousarray(prob, dtype=np.float64)
        self._binned: dict[int, _Binned] = {}

    @cached_property
    def _position_range(self) -> tuple[float, float]:
        return float(self._position.min()), float(self._position.max())

    def width(self, sigma: float) -> float:
        """Standard deviation of the Gaussian in the coordinate where it is applied."""
        return LOGIT_WIDTH_FACTOR * sigma if self.kernel == "logit_gaussian" else sigma

    def _logit_padding(self, sigma: float, step: float) -> int:
        """Zero grid points added on each side of the logit grid (the margin, in grid steps)."""
        return math.ceil(_LOGIT_MARGIN_WIDTHS * self.width(sigma) / step)

    def level(self, sigma: float, points_per_width: int = _POINTS_PER_WIDTH) -> int:
        """Grid level: spacing 2^-level ≤ width / points_per_width."""
        level = math.ceil(math.log2(points_per_width / self.width(sigma)))
        if self.kernel == "reflected_gaussian":
            level = max(level, _MIN_LEVEL_REFLECTED)
        return level

    def grid_values(self, sigma: float, level: int) -> int:
        """Length of the FFT computation grid at a level (the circle, or the padded logit line)."""
        step = 2.0**-level
        if self.kernel == "reflected_gaussian":
            return 2 * 2**level
        low, high = self._position_range
        return math.ceil((high - low) / step) + 2 + 2 * self._logit_padding(sigma, step)

    def binned(self, sigma: float, level: int | None = None) -> _Binned:
        if level is None:
            level = self.level(sigma)
        if level not in self._binned:
            step = 2.0**-level
            if self.kernel == "reflected_gaussian":
                start, n_cells = 0.0, 2**level
            else:
                low, high = self._position_range
                start = math.floor(low / step) * step
                n_cells = max(1, math.ceil((high - start) / step))
            if n_cells > _SPARSE_CELLS_PER_POINT * self.n:
                # a grid much finer than the sample (small σ, few points): aggregate over the occupied
                # categories only, never allocating per-cell arrays
                category, fraction = categories_and_fractions(
                    self._position, self._label, start, step, n_cells)
                occupied, inverse = np.unique(category, return_inverse=True)
                size = occupied.shape[0]
                low, high = 1.0 - fraction, fraction
                count, *sums = (np.bincount(inverse, w, size) for w in (
                    None, low, high, low * self._residual, high * self._residual))
                count = count.astype(np.float64)
            else:
                count, *sums = bin_by_cell_and_label(
                    self._position, self._label, self._residual, start, step, n_cells
                )
                occupied = np.flatnonzero(count)
                count, sums = count[occupied], [a[occupied] for a in sums]
            self._binned[level] = _Binned(
                start, step, n_cells, occupied // 2, (occupied % 2).astype(np.float64), count, *sums,
            )
        return self._binned[level]

    def smooth(
        self, sigma: float, binned: _Binned, mass: np.ndarray, numerator: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(positions, δ_σ, smoothed numerator) on the computation grid, from grid masses (the numerator
        is the residual mass, giving A_σ, or the label mass); inputs may carry leading batch axes.

        Densities are per unit of the kernel's coordinate (t, or u = logit t) and per point, so δ_σ
        integrates to 1 when the batch rows hold n points.
        """
        n_points = binned.n_cells + 1
        values = np.stack([mass, numerator])
        if self.kernel == "reflected_gaussian":
            # even extension onto a circle of circumference 2: the reflected kernel is the periodic
            # Gaussian there.  The end grid points are their own mirror images, so their masses count
            # twice (a point at exactly 0 has K(t, 0) = 2 φ_σ(t) + ...).
            circle = np.concatenate([values, values[..., -2:0:-1]], axis=-1)
            circle[..., 0] *= 2.0
            circle[..., n_points - 1] *= 2.0
            length = circle.shape[-1]
            offset, keep = 0, n_points
        else:
            # the Gaussian on the whole logit line: zero-pad by the margin on both sides, so the
            # circular wrap-around of the FFT is below 1e-15
            offset = self._logit_padding(sigma, binned.step)
            length = fft.next_fast_len(n_points + 2 * offset, real=True)
            circle = np.zeros(values.shape[:-1] + (length,))
            circle[..., offset : offset + n_points] = values
            keep = length
        frequency = np.fft.rfftfreq(length, d=binned.step)
        multiplier = np.exp(-2.0 * (np.pi * self.width(sigma) * frequency) ** 2)
        smoothed = fft.irfft(fft.rfft(circle, axis=-1) * multiplier, n=length, axis=-1)
        smoothed = smoothed[..., :keep] / (binned.step * self.n)
        positions = binned.start + binned.step * (np.arange(keep) - offset)
        return positions, smoothed[0], smoothed[1]

    def ece(self, sigma: float) -> float:
        """smECE(σ): trapezoid sums of |A_σ| and δ_σ over the computation grid — by FFT, or, when the data
        occupy few grid nodes, by direct kernel sums at the grid points within ``_DIRECT_REACH`` widths
        of an occupied node (elsewhere both are below e⁻⁵⁰ of their peak), whichever is cheaper."""
        binned = self.binned(sigma)
        nodes = binned.nodes
        reach = math.ceil(_DIRECT_REACH * self.width(sigma) / binned.step)
        if self._direct_ok(sigma) and (2 * reach + 1) * nodes.size**2 <= _DIRECT_MAX_ENTRIES:
            index = np.unique((nodes[:, None] + np.arange(-reach, reach + 1)).ravel())
            weight = np.ones(index.shape[0])
            if self.kernel == "reflected_gaussian":  # the grid is [0, 1]: trapezoid ends at 0 and 1
                keep = (index >= 0) & (index <= binned.n_cells)
                index, weight = index[keep], weight[keep]
                weight[(index == 0) | (index == binned.n_cells)] = 0.5
            kernel = self._kernel_matrix(sigma, binned.start + binned.step * index, binned.node_positions)
            mass, residual = binned.node_masses()
            return float(weight @ np.abs(kernel @ residual) / (weight @ (kernel @ mass)))
        _, density, residual = self.smooth(sigma, binned, *binned.grid_masses())
        return float(_trapezoid(np.abs(residual)) / _trapezoid(density))

    def fixed_point_bandwidth(self) -> tuple[float, str]:
        """σ* with smECE(σ*) = σ*: halve from an upper bound to bracket the root, then Brent's method.

        smECE(σ) ≤ mean|r| for every σ (the kernel is a probability kernel), so σ* ≤ min(1, mean|r|).
        """

        high = min(1.0, float(np.abs(self._residual).mean()))
        if high <= MIN_BANDWIDTH:
            return MIN_BANDWIDTH, "lower limit"
        if _excess(high, self) >= 0.0:  # only when smECE(σ) = mean|r| = σ: every residual of one sign
            return high, "fixed point"
        low = max(high / 2.0, MIN_BANDWIDTH)
        while _excess(low, self) <= 0.0:
            if low <= MIN_BANDWIDTH:
                return MIN_BANDWIDTH, "lower limit"
            high, low = low, max(low / 2.0, MIN_BANDWIDTH)
        # (the problem goes as an argument: scipy's root finder wraps the function it is given in a
        # closure that refers to itself, garbage only a full collection frees — a closure over this
        # problem kept its arrays, 76 MB per 10⁷ rows, alive with it: 0.46 GB per class in a server's
        # worker process as a user went through the classes)
        root = optimize.brentq(_excess, low, high, args=(self,), xtol=1e-9, rtol=1e-12)
        return float(root), "fixed point"

    # -- curves ------------------------------------------------------------------------------------
    def _query(self, grid: np.ndarray, positions: np.ndarray) -> np.ndarray:
        if self.kernel == "reflected_gaussian":
            return grid
        with np.errstate(divide="ignore"):
            logit = np.log(grid) - np.log1p(-grid)
        return np.clip(logit, positions[0], positions[-1])

    def curve_on(self, grid: np.ndarray, positions, density, numerator, centered: bool) -> np.ndarray:
        """The curve at the grid (rows of a batch handled one by one): numerator/δ_σ, plus t when the
        numerator is the smoothed residual (``centered``)."""
        query = self._query(grid, positions)
        density2 = np.atleast_2d(density)
        numerator2 = np.atleast_2d(numerator)
        out = np.empty((density2.shape[0], grid.shape[0]))
        for row in range(density2.shape[0]):
            d, a = density2[row], numerator2[row]
            reliable = d > _RELIABLE_DENSITY * d.max()
            out[row] = np.interp(query, positions[reliable], a[reliable] / d[reliable])
        if centered:
            out += grid
        else:
            np.clip(out, 0.0, 1.0, out=out)  # a weighted mean of labels; clipping removes round-off only
        return out[0] if np.ndim(density) == 1 else out

    def density_on(self, grid: np.ndarray, positions, density) -> np.ndarray:
        """δ_σ at the grid as a density of v on [0, 1] (Jacobian 1/(t(1−t)) for the logit kernel)."""
        query = self._query(grid, positions)
        out = np.interp(query, positions, density)
        if self.kernel == "logit_gaussian":
            inside = (grid > 0.0) & (grid < 1.0)
            out = np.where(inside, out, 0.0)  # the logit-Gaussian density vanishes at 0 and 1
            out[inside] /= grid[inside] * (1.0 - grid[inside])
        return np.maximum(out, 0.0)

    def _direct_ok(self, sigma: float) -> bool:
        """Direct kernel sums need only the images ±x and 2 − x of the reflected kernel (the others lie
        ≥ 1 away, weight ≤ exp(−1/(2σ²)) ≤ 2·10⁻²² for σ ≤ 0.1)."""
        return self.kernel == "logit_gaussian" or sigma <= 0.1

    def _kernel_matrix(self, sigma: float, positions: np.ndarray, x: np.ndarray) -> np.ndarray:
        """K(position, x) for sorted positions and nodes x in the kernel's coordinate (see _direct_ok)."""
        width = self.width(sigma)
        if self.kernel == "reflected_gaussian":
            offsets = [positions[:, None] - x, positions[:, None] + x, positions[:, None] - (2.0 - x)]
        else:
            offsets = [positions[:, None] - x]
        return sum(np.exp(-0.5 * (d / width) ** 2) for d in offsets) / (width * math.sqrt(2.0 * math.pi))

    def _direct_positions(self, sigma: float, binned: _Binned, grid: np.ndarray) -> np.ndarray:
        """Where the direct path evaluates: the query points of ``grid`` and the occupied nodes, sorted (the
        nodes keep a reliable density in every curve, however far the grid points are from the data)."""
        x = binned.node_positions
        if self.kernel == "reflected_gaussian":
            return np.union1d(grid, x)
        margin = _LOGIT_MARGIN_WIDTHS * self.width(sigma)
        return np.union1d(self._query(grid, np.array([x[0] - margin, x[-1] + margin])), x)

    def _uses_direct(self, sigma: float, binned: _Binned, grid_size: int) -> bool:
        """Direct sums at the query points cost (grid_size + M)·M per curve for M occupied nodes; an FFT
        curve about _FFT_COST_PER_VALUE per computation-grid value."""
        nodes = binned.nodes.size
        entries = (grid_size + nodes) * nodes
        return self._direct_ok(sigma) and entries <= _DIRECT_MAX_ENTRIES and (
            2 * entries < _FFT_COST_PER_VALUE * self.grid_values(sigma, self.level(sigma)))

    def point_curve(self, sigma: float, grid: np.ndarray, centered: bool):
        """(positions, δ_σ, smoothed numerator) of the full sample, for curve_on / density_on: by direct
        sums at the grid's query points when that is cheaper (as the band), else on the FFT grid."""
        binned = self.binned(sigma)
        numerator = "residual" if centered else "label"
        if self._uses_direct(sigma, binned, grid.shape[0]):
            positions = self._direct_positions(sigma, binned, grid)
            kernel = self._kernel_matrix(sigma, positions, binned.node_positions)
            mass, numerators = binned.node_masses(numerator)
            return positions, kernel @ mass / self.n, kernel @ numerators / self.n
        return self.smooth(sigma, binned, *binned.grid_masses(numerator))

    def _band_plan(self, sigma: float, grid_size: int, n_resamples: int) -> tuple[str, int, int, str]:
        """How the band is computed within the cost model: ("direct" | "fft", grid level, resamples, note)."""
        level = self.level(sigma)
        if self._uses_direct(sigma, self.binned(sigma, level), grid_size):
            return "direct", level, n_resamples, ""
        coarsest = self.level(sigma, _MIN_POINTS_PER_WIDTH_BAND)
        while level > coarsest and n_resamples * self.grid_values(sigma, level) > BAND_WORK_BUDGET:
            level -= 1
        notes = []
        if level < self.level(sigma):
            notes.append(f"band computed on a grid of spacing 2^-{level} (coarser than the curve's)")
        kept = min(n_resamples, max(1, BAND_WORK_BUDGET // self.grid_values(sigma, level)))
        if kept < n_resamples:
            notes.append(f"band from {kept} of the {n_resamples} resamples asked for")
        note = "; ".join(notes)
        if note:
            note += f" to stay within the work budget of {BAND_WORK_BUDGET} grid values (calviz.smooth)"
        return "fft", level, kept, note

    def bootstrap_curves(
        self, sigma: float, grid: np.ndarray, n_resamples: int, rng: np.random.Generator, centered: bool
    ) -> tuple[np.ndarray, str]:
        """(resamples, grid) curves of multinomial bootstrap resamples at fixed σ, and a note saying how
        the work budget reduced the computation ("" when it did not; see ``_band_plan``)."""
        method, level, n_resamples, note = self._band_plan(sigma, grid.shape[0], n_resamples)
        binned = self.binned(sigma, level)
        probabilities = binned.count / self.n
        numerator = "residual" if centered else "label"
        if method == "direct":
            positions = self._direct_positions(sigma, binned, grid)
            kernel = self._kernel_matrix(sigma, positions, binned.node_positions)
            node_matrices = binned._scatter(numerator, on_nodes=True)
            values_per_resample = positions.shape[0]
        else:
            values_per_resample = self.grid_values(sigma, level)
        chunk = max(1, min(n_resamples, _CHUNK_VALUES // values_per_resample))
        curves = np.empty((n_resamples, grid.shape[0]))
        for first in range(0, n_resamples, chunk):
            size = min(chunk, n_resamples - first)
            draws = rng.multinomial(self.n, probabilities, size=size)
            if method == "direct":
                draws_t = np.ascontiguousarray(draws.T, dtype=np.float64)
                density, smoothed = ((m @ draws_t).T @ kernel.T / self.n for m in node_matrices)
            else:
                masses = binned.resampled_masses(draws, numerator)
                positions, density, smoothed = self.smooth(sigma, binned, *masses)
            curves[first : first + size] = self.curve_on(grid, positions, density, smoothed, centered)
        return curves, note


def _trapezoid(values: np.ndarray) -> np.ndarray:
    """Trapezoid rule on a uniform grid with unit spacing (the spacing cancels in smECE's ratio)."""
    return values.sum(axis=-1) - 0.5 * (values[..., 0] + values[..., -1])


# ------------------------------------------------------------------------------------------------------
# public API


def _problem_and_bandwidth(
    y_true, y_prob, bandwidth, kernel, target, class_index, caller
) -> tuple[_SmoothingProblem, float, str, dict]:
    """The smoothing problem, σ, the bandwidth rule and the result fields ``target`` and ``n_classes``."""
    sigma = None if bandwidth is None else float(bandwidth)  # (in range: the public functions declare it)
    data, target, prob, label = prepare_view(y_true, y_prob, target=target, class_index=class_index,
                                             allowed=("auto", *SCALAR_TARGETS), caller=caller)
    problem = _SmoothingProblem(prob, label, kernel)
    if sigma is None:
        sigma, rule = problem.fixed_point_bandwidth()
    else:
        rule = "given"
    return problem, sigma, rule, {"target": target, "n_classes": data.n_classes}


#: the options of the smooth estimators and their constraints
_SMOOTH = {"bandwidth": NoneOr(Interval(float, MIN_BANDWIDTH, MAX_BANDWIDTH)), "kernel": Options(KERNELS)}


@validate_params(_SMOOTH)
def smooth_ece(
    y_true,
    y_prob=None,
    *,
    bandwidth: float | None = None,
    kernel: Kernel = "reflected_gaussian",
    target: Target = "auto",
    class_index: int = 0,
) -> SmoothECEResult:
    """SmoothECE: the kernel-smoothed calibration error of Błasiok and Nakkiran.

    smECE(σ) = ∫ |A_σ(t)| dt / ∫ δ_σ(t) dt with the smoothed residual A_σ(t) = (1/n) Σ K_σ(t, v_i)(y_i − v_i)
    and the smoothed density δ_σ(t) = (1/n) Σ K_σ(t, v_i) (Błasiok and Nakkiran [1]_; the kernels are
    described in the module docstring).  ``bandwidth=None`` picks the unique fixed point smECE(σ) = σ
    (relplot's ``smECE``); a number gives smECE at that σ (relplot's ``smECE_sigma``).  Deterministic;
    cost O(n + G log G) per bandwidth.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    bandwidth : float, optional
        σ; default the fixed point smECE(σ) = σ.
    kernel : {"reflected_gaussian", "logit_gaussian"}, default "reflected_gaussian"
        The Gaussian folded into [0, 1] by reflection, or a Gaussian in logit space.
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction tested ("auto": binary for 1-D input, the top-1 confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.

    Returns
    -------
    SmoothECEResult
        ``value``, ``bandwidth`` and how it was chosen (``bandwidth_rule``).

    See Also
    --------
    smooth_reliability : The smooth reliability curve of the same kernel.

    References
    ----------
    .. [1] J. Błasiok and P. Nakkiran. Smooth ECE: Principled reliability diagrams via kernel smoothing.
       arXiv preprint, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> res = calviz.smooth_ece(y, p)
    >>> round(res.value, 3), round(res.bandwidth, 3), res.bandwidth_rule
    (0.1, 0.1, 'fixed point')
    """
    problem, sigma, rule, about = _problem_and_bandwidth(y_true, y_prob, bandwidth, kernel, target,
                                                         class_index, "smooth_ece")
    return SmoothECEResult(problem.ece(sigma), sigma, problem.kernel, problem.n, rule, **about)


@validate_params({**_SMOOTH, "centered": BOOLEAN, "alpha": UNIT_OPEN, "seed": SEED,
                  "n_resamples": Interval(int, 0, MAX_RESAMPLES),
                  "grid_size": Interval(int, 2, MAX_GRID_SIZE)})
def smooth_reliability(
    y_true,
    y_prob=None,
    *,
    bandwidth: float | None = None,
    kernel: Kernel = "reflected_gaussian",
    centered: bool = False,
    alpha: float = INTERVAL_ALPHA,
    n_resamples: int = 100,
    grid_size: int = 1001,
    target: Target = "auto",
    class_index: int = 0,
    seed: int | np.random.Generator | None = None,
) -> SmoothReliability:
    """Smooth reliability diagram: a kernel-smoothed curve of E[y | v], its bootstrap band and density.

    The curve is the Nadaraya–Watson estimate of E[y | v = t] with the chosen kernel on ``grid_size``
    points of [0, 1] (Błasiok and Nakkiran [1]_).  ``centered=False`` (default, as relplot's
    ``prepare_rel_diagram``): μ_σ(t) = Σ K_σ(t, v_i) y_i / Σ K_σ(t, v_i), always in [0, 1].
    ``centered=True``: t + A_σ(t)/δ_σ(t), the smoothed residual added to the diagonal, whose
    density-weighted distance from the diagonal integrates exactly to smECE(σ); it can leave [0, 1]
    where the local mean of v differs from t, e.g. at the edges.  The two differ by
    t − Σ K v_i / Σ K, which is O(σ²) inside the data.  The band is pointwise, at level 1 − ``alpha``,
    from ``n_resamples`` multinomial resamples of the pairs at fixed σ.

    Cost: ``grid_size`` ≤ ``MAX_GRID_SIZE``, ``n_resamples`` ≤ ``MAX_RESAMPLES`` and their product
    ≤ ``MAX_BAND_VALUES``, else ValueError; a band whose FFT work would exceed ``BAND_WORK_BUDGET`` is
    computed on a coarser grid or from fewer resamples, and ``band_note`` says so.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    bandwidth : float, optional
        σ; default the SmoothECE fixed point smECE(σ) = σ, as relplot's diagram does.
    kernel : {"reflected_gaussian", "logit_gaussian"}, default "reflected_gaussian"
        The smoothing kernel.
    centered : bool, default False
        Draw t + smoothed residual instead of the Nadaraya–Watson curve.
    alpha : float, default 0.1
        The band has pointwise level 1 − α (90 % by default, the confidence level of every calviz
        interval).
    n_resamples : int, default 100
        Bootstrap resamples of the band (0: no band).
    grid_size : int, default 1001
        Points of the grid.
    target : {"auto", "binary", "top1", "classwise"}, default "auto"
        The scalar prediction tested ("auto": binary for 1-D input, the top-1 confidence otherwise).
    class_index : int, default 0
        The class of the ``classwise`` target.
    seed : int, numpy Generator or None
        Seed of the band.

    Returns
    -------
    SmoothReliability
        ``grid``, ``curve``, ``band_low``, ``band_high``, ``density``, ``bandwidth`` and ``smooth_ece``.

    References
    ----------
    .. [1] J. Błasiok and P. Nakkiran. Smooth ECE: Principled reliability diagrams via kernel smoothing.
       arXiv preprint, 2023.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=2000)                            # predicted P(y = 1)
    >>> y = (rng.uniform(size=2000) < p ** 1.5).astype(int)   # outcomes: the model is over-confident
    >>> rel = calviz.smooth_reliability(y, p, n_resamples=20, grid_size=101, seed=0)
    >>> rel.grid.shape, round(float(rel.curve[50]), 2)   # E[y | v = 0.5] ≈ 0.5 ** 1.5
    ((101,), 0.35)
    >>> bool(np.all(rel.band_low <= rel.band_high))
    True
    """
    n_resamples, grid_size, centered = int(n_resamples), int(grid_size), bool(centered)
    if n_resamples * grid_size > MAX_BAND_VALUES:
        raise InputError(
            f"n_resamples × grid_size must be at most {MAX_BAND_VALUES} (the resampled curves are held in "
            f"memory); got {n_resamples} × {grid_size}"
        )
    rng = as_generator(seed)
    problem, sigma, rule, about = _problem_and_bandwidth(y_true, y_prob, bandwidth, kernel, target,
                                                         class_index, "smooth_reliability")

    grid = np.linspace(0.0, 1.0, grid_size)
    value = problem.ece(sigma)
    positions, density, numerator = problem.point_curve(sigma, grid, centered)
    curve = problem.curve_on(grid, positions, density, numerator, centered)
    if n_resamples:
        curves, band_note = problem.bootstrap_curves(sigma, grid, n_resamples, rng, centered)
        n_resamples = curves.shape[0]
        band_low, band_high = _percentile_band(curves, curve, alpha)
    else:
        band_low = np.full(grid_size, np.nan)
        band_high = np.full(grid_size, np.nan)
        band_note, curves = "", None
    return SmoothReliability(
        grid=grid,
        curve=curve,
        band_low=band_low,
        band_high=band_high,
        density=problem.density_on(grid, positions, density),
        bandwidth=sigma,
        smooth_ece=value,
        kernel=problem.kernel,
        centered=centered,
        bandwidth_rule=rule,
        alpha=alpha,
        n_resamples=n_resamples,
        n=problem.n,
        band_note=band_note,
        **about,
        _draws=curves,
    )
