"""The papers' synthetic scenarios as seeded generators with known ground truth.

Every generator has the signature ``gen(n, seed=None, **params) -> Scenario``: ``n`` samples drawn with
``numpy.random.default_rng(seed)`` (``seed`` may be an int, ``None`` or a ``numpy.random.Generator``),
returned as a frozen :class:`Scenario` holding ``y_true`` / ``y_prob`` in calviz's input conventions and,
where the distribution makes it computable, the true calibration curve and the true ℓ1 / ℓ2 ECE of the
scenario's calibration *target* (``Scenario.target``: ``"binary"`` = P(y = 1), ``"top1"``, ``"topk"``
or ``"full"``).  :meth:`Scenario.binned_ece_sq` gives the binned ECE²_m of the population
(Σ_b P(B_b)‖E[V | Z ∈ B_b]‖², equal-width bins) — the quantity the Sun et al. (2024) interval
covers.

Scenarios (``SCENARIOS`` maps these names to ``callable(n, seed)`` with default parameters):

=========================  ==========================================================================
``tcal_p0``                T-Cal P₀ (Lee et al. 2023, Example 1 / Sec. 4.1): Z ~ U[0,1], Y ~ Ber(Z).
``tcal_p1m``               T-Cal P_{1,m} (Lee et al. 2023, eq. 10): Y ~ Ber(g_m(Z)), m alternating bumps.
``tcal_example1``          Lee et al. (2023), Example 1 (eq. 9): bumps below ½ pushed down, above ½ pushed up;
                           the biased plug-in statistic is *smaller* than under P₀.
``beta_calibrated``        a calibrated binary model with non-uniform Z ~ Beta(5, 0.5).
``logit_distorted``        Sun et al. (2024), Setting 1: Z uniform on the simplex (K = 2), P(Y = class 0 | Z)
=
                           σ(β·logit Z₀); β = 1 calibrated; top-1 target.
``beta_top1``              Sun et al. (2024), Setting 2: as Setting 1 with top-1 probability ~ Beta(5, 0.5).
``perturbed_top2``         Sun et al. (2024), Setting 3: Z uniform on Δ₉, ε of label mass moved from the
top-1 to
                           the top-2 class; top-1-to-2 target, ECE² = 2ε².
``temperature_family``     Błasiok et al. (2023), Sec. 10 D_β: f ~ U[0,1], Y ~ Ber(f), prediction
f^β/(f^β+(1−f)^β). ``shifted_uniform``        Hu et al. (2024), Table 1: v ~ U[0, 1−ε*], Y ~ Ber(v + ε*) (ECE
= dCE = ε*). ``dirichlet_calibrated``   K-class, p ~ Dir(c·1), Y ~ Cat(p), prediction p (full calibration
holds). ``dirichlet_temperature``  K-class, p ~ Dir(c·1), Y ~ Cat(p), prediction ∝ p^β (β = 1 calibrated).
=========================  ==========================================================================
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, lru_cache, partial

import numpy as np

from calviz._data import CalibrationData, InputError, as_calibration_data
from calviz._lazy import LazyModule
from calviz._results import ResultMixin

# the reference integrals only: imported at first use (it imports scipy.optimize, 0.3 s), so listing the
# scenarios — every served session does — costs nothing
integrate = LazyModule("scipy.integrate")

__all__ = [
    "Scenario",
    "SCENARIOS",
    "tcal_p0",
    "tcal_p1m",
    "tcal_example1",
    "beta_calibrated",
    "logit_distorted",
    "beta_top1",
    "perturbed_top2",
    "temperature_family",
    "shifted_uniform",
    "dirichlet_calibrated",
    "dirichlet_temperature",
    "zeta",
    "zeta_norm",
    "tempered",
]


#: absolute accuracy demanded of every quadrature (the ECE² values it feeds are ≥ 1e-5 unless 0)
_QUAD_ABS_TOLERANCE = 1e-9
_BELOW_ONE = float(np.nextafter(1.0, 0.0))


# -- ground truth ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Truth1D:
    """Population of a scalar target described through a latent variable f on [lo, hi] with density
    ``density``: the prediction is z = pred(f) (increasing, inverse ``pred_inv``) and E[y | z] =
    label_mean(f).  Expectations become one-dimensional integrals in f; ``breakpoints`` are points in f
    where the integrands are not smooth (bump edges), so quadrature never straddles them."""

    density: Callable[[float], float]
    lo: float
    hi: float
    pred: Callable[[float], float]
    pred_inv: Callable[[float], float]
    label_mean: Callable[[float], float]
    breakpoints: tuple[float, ...] = ()

    def _pieces(self, extra=()) -> np.ndarray:
        pts = np.concatenate(
            [[self.lo, self.hi], np.asarray(self.breakpoints, float), np.asarray(extra, float)]
        )
        pts = np.unique(pts[(pts >= self.lo) & (pts <= self.hi)])
        return pts

    def _integrate(self, fun: Callable[[float], float], a: float, b: float) -> float:
        if b <= a:
            return 0.0
        if b >= 1.0:
            # substitute f = 1 − t²: densities like Beta(·, ½) have a (1 − f)^{−1/2} singularity at 1
            # that this turns into a bounded integrand
            def integrand(t):
                # f rounds to 1.0 for t < 1e-8, where a singular density would give inf·0; the largest
                # double below 1 keeps it finite (the region contributes O(1e-8) at most)
                return fun(min(1.0 - t * t, _BELOW_ONE)) * 2.0 * t

            a, b = 0.0, math.sqrt(1.0 - a)
        else:
            integrand = fun
        # cusps like (1 − f)^β with small β at the end point make QUADPACK warn about round-off at
        # tolerances it cannot reach; its own error estimate is checked instead
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", integrate.IntegrationWarning)
            value, abserr = integrate.quad(integrand, a, b, limit=400, epsabs=1e-14, epsrel=1e-10)
        if not abserr <= _QUAD_ABS_TOLERANCE:
            raise RuntimeError(f"quadrature error estimate {abserr:.2g} exceeds {_QUAD_ABS_TOLERANCE:g}")
        return value

    def residual(self, f: float) -> float:
        return self.label_mean(f) - self.pred(f)

    def ece(self, p: int = 2) -> float:
        """(E|E[y|z] − z|^p)^{1/p} by adaptive quadrature over the smooth pieces."""
        pts = self._pieces()
        total = sum(
            self._integrate(lambda f: abs(self.residual(f)) ** p * self.density(f), a, b)
            for a, b in zip(pts[:-1], pts[1:], strict=True)
        )
        return float(max(total, 0.0) ** (1.0 / p))

    def binned_ece_sq(self, n_bins: int) -> float:
        """Σ_b P(z ∈ B_b)·E[y − z | z ∈ B_b]² for m equal-width bins [i/m, (i+1)/m) of z."""
        edges_z = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
        edges_f = [self.pred_inv(e) for e in edges_z]
        pts = self._pieces(edges_f)
        bin_of_piece = np.searchsorted(edges_f, pts[:-1], side="right")
        mass = np.zeros(n_bins)
        moment = np.zeros(n_bins)
        for b, lo, hi in zip(bin_of_piece, pts[:-1], pts[1:], strict=True):
            mass[b] += self._integrate(self.density, lo, hi)
            moment[b] += self._integrate(lambda f: self.residual(f) * self.density(f), lo, hi)
        used = mass > 0
        return float(np.sum(moment[used] ** 2 / mass[used]))


@dataclass(frozen=True)
class _ConstantResidual:
    """E[y − z | z] is the same vector everywhere: every binning has ECE²_m = ‖r‖²."""

    residual: tuple[float, ...]

    def ece(self, p: int = 2) -> float:
        return float(np.sum(np.abs(self.residual) ** p) ** (1.0 / p))

    def binned_ece_sq(self, n_bins: int) -> float:
        return float(np.sum(np.square(self.residual)))


@dataclass(frozen=True, repr=False)
class Scenario(ResultMixin):
    """One synthetic data set with its ground truth.

    ``y_true``/``y_prob`` follow calviz's input conventions (binary: (n,) P(y = 1); multiclass: (n, K)
    and integer labels).  ``target`` names the calibration target the truth refers to (``"binary"``,
    ``"top1"``, ``"topk"`` with ``top_k``, or ``"full"``); ``true_ece`` / ``true_ece_l1`` are the ℓ2 / ℓ1
    ECE of that target (``None`` when unknown); ``calibration_curve`` maps the target's z (1-D, or
    (n, k) for vector targets) to E[y | z]; ``params`` records every parameter used, including the seed.
    """

    name: str
    description: str
    y_true: np.ndarray
    y_prob: np.ndarray
    target: str
    top_k: int
    true_ece: float | None
    true_ece_l1: float | None
    calibration_curve: Callable | None = field(repr=False)
    params: dict
    _truth: object | None = field(default=None, repr=False, compare=False)

    @property
    def n(self) -> int:
        return int(self.y_true.shape[0])

    @property
    def is_calibrated(self) -> bool:
        return self.true_ece == 0.0

    def data(self) -> CalibrationData:
        """The validated :class:`calviz.CalibrationData`."""
        return as_calibration_data(self.y_true, self.y_prob)

    def view(self) -> tuple[np.ndarray, np.ndarray]:
        """(z, y) of the scenario's calibration target (what the truth refers to)."""
        return self.data().view(self.target, top_k=self.top_k)

    def binned_ece_sq(self, n_bins: int) -> float:
        """Population binned ECE²_m = Σ_b P(B_b)‖E[y − z | z ∈ B_b]‖² for the target with ``n_bins``
        equal-width bins per axis (what the interval of Sun et al. (2024) covers)."""
        if self._truth is None:
            raise InputError(f"scenario {self.name!r} has no computable binned ECE")
        n_bins = int(n_bins)
        if n_bins < 1:
            raise InputError(f"n_bins must be a positive integer; got {n_bins}")
        return self._truth.binned_ece_sq(n_bins)


def _scenario(
    name, description, y_true, y_prob, target, top_k, truth, curve, params, true_ece=None, true_ece_l1=None
) -> Scenario:
    if truth is not None:
        true_ece = truth.ece(2) if true_ece is None else true_ece
        true_ece_l1 = truth.ece(1) if true_ece_l1 is None else true_ece_l1
    for a in (y_true, y_prob):
        a.flags.writeable = False
    return Scenario(
        name, description, y_true, y_prob, target, top_k, true_ece, true_ece_l1, curve, dict(params), truth
    )


# -- helpers ----------------------------------------------------------------------------------------------
def _rng(seed) -> np.random.Generator:
    return np.random.default_rng(seed)


def _check_n(n) -> int:
    n = int(n)
    if n < 2:
        raise InputError(f"n must be at least 2; got {n}")
    return n


def tempered(z, beta):
    """z^β / (z^β + (1−z)^β) = σ(β·logit z), computed without logits so z = 0, 1 and β = 0 are exact."""
    z = np.asarray(z, dtype=float)
    a = np.power(z, beta)
    b = np.power(1.0 - z, beta)
    return a / (a + b)


def _tempered_scalar(z: float, beta: float) -> float:
    a = z**beta
    b = (1.0 - z) ** beta
    return a / (a + b)


def zeta(x):
    """The smooth bump ζ(x) = exp(−1/(x(1−x))) on (0, 1), 0 elsewhere (Lee et al. 2023, eq. 8)."""
    x = np.asarray(x, dtype=float)
    w = x * (1.0 - x)
    out = np.zeros_like(w)
    pos = w > 0
    out[pos] = np.exp(-1.0 / w[pos])
    return out


@cache
def zeta_norm(p: float = 2.0) -> float:
    """‖ζ‖_{L^p[0,1]} by quadrature."""
    value, _ = integrate.quad(lambda x: math.exp(-p / (x * (1.0 - x))), 0.0, 1.0, epsabs=1e-16, epsrel=1e-12)
    return value ** (1.0 / p)


def _sample_categorical(rng: np.random.Generator, probs: np.ndarray) -> np.ndarray:
    """One draw from Cat(probs[i]) per row (inverse-CDF on a single uniform per row)."""
    u = rng.random(probs.shape[0])
    cum = np.cumsum(probs, axis=1)
    labels = (cum < u[:, None]).sum(axis=1)
    return np.minimum(labels, probs.shape[1] - 1).astype(np.int64)


def _bernoulli(rng: np.random.Generator, p: np.ndarray) -> np.ndarray:
    return (rng.random(p.shape[0]) < p).astype(np.int64)


def _uniform_truth(label_mean, lo=0.0, hi=1.0, breakpoints=()) -> _Truth1D:
    width = hi - lo
    return _Truth1D(lambda f: 1.0 / width, lo, hi, lambda f: f, lambda z: z, label_mean, tuple(breakpoints))


# -- T-Cal (Lee et al., 2023) -------------------------------------------------------------------------------
def tcal_p0(n: int, seed=None) -> Scenario:
    """T-Cal P₀ (Lee et al. 2023, Example 1 and Sec. 4.1): Z ~ U[0, 1], Y | Z ~ Ber(Z).  Calibrated."""
    n = _check_n(n)
    rng = _rng(seed)
    z = rng.random(n)
    y = _bernoulli(rng, z)
    return _scenario(
        "tcal_p0",
        "calibrated binary model, uniform predictions (Lee et al. 2023, null P0)",
        y,
        z,
        "binary",
        1,
        _uniform_truth(lambda f: f),
        lambda t: np.asarray(t, float),
        {"seed": seed},
        0.0,
        0.0,
    )


def _bump_label_mean(f: float, *, scale: float, stretch: float, offset: float, signs: tuple) -> float:
    """Scalar g(f) = f + scale·signs[j]·ζ(x − j), x = stretch·f − offset, j = ⌊x⌋ (bump j, if any) —
    the fast path for quadrature of P_{1,m} (eq. 10) and Example 1 (eq. 9)."""
    x = stretch * f - offset
    j = math.floor(x)
    if 0 <= j < len(signs):
        u = x - j
        if 0.0 < u < 1.0:
            f = f + scale * signs[j] * math.exp(-1.0 / (u * (1.0 - u)))
    return min(max(f, 0.0), 1.0)


@dataclass(frozen=True)
class _BumpTruth:
    """Z ~ U[0,1] and E[y | z] − z = scale·signs[j]·ζ(x − j) on bump j, x = stretch·z − offset (bumps of
    width 1/stretch).  Exact: ∫|r|^p = len(signs)·scale^p·‖ζ‖_p^p/stretch, and a bin's ∫r needs ζ's
    antiderivative only for the (at most two) bumps its edges cut — thousands of bumps stay cheap."""

    scale: float
    stretch: float
    offset: float
    signs: tuple

    @property
    def quadrature(self) -> _Truth1D:
        """The same population for generic quadrature (an independent check of the closed forms)."""
        breakpoints = [(self.offset + j) / self.stretch for j in range(len(self.signs) + 1)]
        mean = partial(
            _bump_label_mean, scale=self.scale, stretch=self.stretch, offset=self.offset, signs=self.signs
        )
        return _uniform_truth(mean, breakpoints=breakpoints)

    def ece(self, p: int = 2) -> float:
        return float((len(self.signs) * self.scale**p * zeta_norm(float(p)) ** p / self.stretch) ** (1.0 / p))

    def binned_ece_sq(self, n_bins: int) -> float:
        signs = np.asarray(self.signs, float)
        cum = np.concatenate([[0.0], np.cumsum(signs)])  # cum[j] = Σ_{i<j} signs[i]
        whole = zeta_norm(1.0)
        total = 0.0
        for b in range(n_bins):
            x0 = self.stretch * b / n_bins - self.offset
            x1 = self.stretch * (b + 1) / n_bins - self.offset
            j_full_lo = max(math.ceil(x0), 0)
            j_full_hi = min(math.floor(x1), len(signs))  # bumps j with x0 <= j and j + 1 <= x1
            acc = whole * (cum[j_full_hi] - cum[j_full_lo]) if j_full_hi > j_full_lo else 0.0
            for j in {math.floor(x0), math.floor(x1)}:
                if 0 <= j < len(signs) and not (x0 <= j and j + 1 <= x1):
                    acc += signs[j] * (
                        _zeta_cdf(min(max(x1 - j, 0.0), 1.0)) - _zeta_cdf(min(max(x0 - j, 0.0), 1.0))
                    )
            moment = self.scale * acc / self.stretch
            total += moment**2 * n_bins  # P(bin) = 1/n_bins: (∫r)² / P(bin)
        return float(total)


def _zeta_cdf(u: float) -> float:
    """∫_0^u ζ."""
    if u <= 0.0:
        return 0.0
    if u >= 1.0:
        return zeta_norm(1.0)
    return integrate.quad(lambda x: math.exp(-1.0 / (x * (1.0 - x))), 0.0, u, epsabs=1e-16, epsrel=1e-12)[0]


def _p1m_signs(m: int) -> tuple:
    return tuple(1.0 if j % 2 == 0 else -1.0 for j in range(m))


def _check_bump_amplitude(rho, m, s, name):
    amplitude = rho * m ** (-s) * math.exp(-4.0)  # max ζ = ζ(1/2) = e^{-4}
    if not amplitude <= 0.25:
        raise InputError(
            f"{name}: ρ·m^(−s)·e^(−4) = {amplitude:.4g} > 1/4 would push g outside [0, 1] "
            f"(ρ={rho}, m={m}, s={s}); lower rho or raise m"
        )


def _p1m_residual(z, m: int, s: float, rho: float):
    x = 2.0 * m * np.asarray(z, float) - m / 2.0
    j = np.floor(x)
    inside = (j >= 0) & (j <= m - 1)
    sign = np.where(np.mod(j, 2) == 0, 1.0, -1.0)
    return np.where(inside, rho * m ** (-s) * sign * zeta(x - j), 0.0)


def tcal_p1m(n: int, seed=None, *, m: int = 8, s: float = 0.5, rho: float = 25.0) -> Scenario:
    """T-Cal P_{1,m} (Lee et al. 2023, eq. 10): Z ~ U[0,1], Y ~ Ber(g_m(Z)) with
    g_m(z) = z + ρ m^{−s} Σ_{j=0}^{m−1} (−1)^j ζ(2mz − m/2 − j).

    The m bumps tile (1/4, 3/4), so ℓ2-ECE = ρ m^{−s}‖ζ‖_{L2}/√2 and ℓ1-ECE = ρ m^{−s}‖ζ‖_{L1}/2
    (Lee et al. 2023, eq. 10).  Requires ρ m^{−s} e^{−4} ≤ 1/4 so that g_m stays in [0, 1].
    """
    n = _check_n(n)
    m = int(m)
    if m < 1:
        raise InputError(f"m must be a positive integer; got {m}")
    _check_bump_amplitude(rho, m, s, "tcal_p1m")
    rng = _rng(seed)
    z = rng.random(n)

    def curve(t):
        return np.clip(np.asarray(t, float) + _p1m_residual(t, m, s, rho), 0.0, 1.0)

    y = _bernoulli(rng, curve(z))
    scale = rho * m ** (-s)
    truth = _BumpTruth(scale, 2.0 * m, m / 2.0, _p1m_signs(m))
    return _scenario(
        "tcal_p1m",
        f"binary model miscalibrated by {m} small alternating bumps (Lee et al. 2023, P1,m; s={s}, "
        f"rho={rho})",
        y,
        z,
        "binary",
        1,
        truth,
        curve,
        {"seed": seed, "m": m, "s": s, "rho": rho},
    )


def _example1_residual(z, m: int, s: float, rho: float):
    x = m * np.asarray(z, float) - m / 4.0
    j = np.floor(x)
    down = (j >= 0) & (j <= m / 4 - 1)
    up = (j >= m / 4) & (j <= m / 2 - 1)
    sign = np.where(down, -1.0, np.where(up, 1.0, 0.0))
    return rho * m ** (-s) * sign * zeta(x - j)


def tcal_example1(
    n: int, seed=None, *, s: float = 0.3, rho: float | None = None, m: int | None = None
) -> Scenario:
    """Lee et al. (2023), Example 1 (eq. 9): Z ~ U[0,1], Y ~ Ber(g(Z)),
    g(z) = z − ρ m^{−s} Σ_{j=0}^{m/4−1} ζ(mz − m/4 − j) + ρ m^{−s} Σ_{j=m/4}^{m/2−1} ζ(mz − m/4 − j):
    m/2 bumps of width 1/m tiling [1/4, 3/4), pushed down below ½ and up above ½ (the text file's
    lower limit of the second sum is garbled; the figure and the proof of Prop. 7 — res·(2z−1) ≥ 0 —
    fix it to m/4).

    ``m`` defaults to m* = ⌊n^{2/(4s+1)}⌋ rounded down to a multiple of 4; ``rho`` defaults to the
    paper's 100 (Fig. 2 uses n = 10 000, s = 0.3, ρ = 100), capped at the largest value keeping g in
    [0, 1] (ρ m^{−s} e^{−4} ≤ 1/4).  ℓ2-ECE = ρ m^{−s}‖ζ‖_{L2}/√2.
    """
    n = _check_n(n)
    if m is None:
        m = max(4, 4 * (int(math.floor(n ** (2.0 / (4.0 * s + 1.0)))) // 4))
    m = int(m)
    if m < 4 or m % 4:
        raise InputError(f"tcal_example1: m must be a positive multiple of 4; got {m}")
    if rho is None:
        rho = min(100.0, 0.25 * math.exp(4.0) * m**s)
    _check_bump_amplitude(rho, m, s, "tcal_example1")
    rng = _rng(seed)
    z = rng.random(n)

    def curve(t):
        return np.clip(np.asarray(t, float) + _example1_residual(t, m, s, rho), 0.0, 1.0)

    y = _bernoulli(rng, curve(z))
    scale = rho * m ** (-s)
    signs = tuple([-1.0] * (m // 4) + [1.0] * (m // 4))
    truth = _BumpTruth(scale, float(m), m / 4.0, signs)
    return _scenario(
        "tcal_example1",
        f"binary model, {m // 2} bumps down below 1/2 and up above (Lee et al. 2023, Example 1; s={s}, "
        f"rho={rho:.4g})",
        y,
        z,
        "binary",
        1,
        truth,
        curve,
        {"seed": seed, "m": m, "s": s, "rho": rho},
    )


def _beta_pdf(a: float, b: float) -> Callable[[float], float]:
    """Beta(a, b) density as a plain closure (scipy's pdf costs ~50 µs a call inside quadrature)."""
    log_norm = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)

    def pdf(f: float) -> float:
        if f <= 0.0 or f >= 1.0:
            return 0.0
        return math.exp(log_norm + (a - 1.0) * math.log(f) + (b - 1.0) * math.log1p(-f))

    return pdf


@lru_cache(maxsize=64)
def _beta_truth(a: float, b: float) -> _Truth1D:
    return _Truth1D(_beta_pdf(a, b), 0.0, 1.0, lambda f: f, lambda z: z, lambda f: f)


def beta_calibrated(n: int, seed=None, *, a: float = 5.0, b: float = 0.5) -> Scenario:
    """A calibrated binary model with non-uniform predictions: Z ~ Beta(a, b), Y ~ Ber(Z)."""
    n = _check_n(n)
    rng = _rng(seed)
    z = rng.beta(a, b, size=n)
    y = _bernoulli(rng, z)
    return _scenario(
        "beta_calibrated",
        f"calibrated binary model, predictions ~ Beta({a:g}, {b:g})",
        y,
        z,
        "binary",
        1,
        _beta_truth(float(a), float(b)),
        lambda t: np.asarray(t, float),
        {"seed": seed, "a": a, "b": b},
        0.0,
        0.0,
    )


# -- Sun et al. (2024) simulations (Sec. 4.1) ---------------------------------------------------------------
def _distorted_label_probs(z: np.ndarray, beta: float) -> np.ndarray:
    """P(Y = class 0 | Z) = σ(β·logit Z₀); the other classes share the rest in proportion to Z."""
    q = tempered(z[:, 0], beta)
    rest = 1.0 - z[:, 0]
    scale = np.divide(1.0 - q, rest, out=np.zeros_like(q), where=rest > 0)
    probs = z * scale[:, None]
    probs[:, 0] = q
    return probs


@lru_cache(maxsize=256)
def _top1_distorted_truth(beta: float, a: float | None, b: float | None) -> _Truth1D:
    """Top-1 view of the K = 2 logit-distorted model: the confidence c = max(Z₀, 1−Z₀) ∈ [½, 1] has
    density h(c) = p(c) + p(1−c) for Z₀ ~ p, and E[correct | c] = σ(β·logit c) by the symmetry
    σ(β·logit(1−c)) = 1 − σ(β·logit c)."""
    if a is None:

        def density(c):
            return 2.0
    else:
        pdf = _beta_pdf(a, b)

        def density(c):
            return pdf(c) + pdf(1.0 - c)

    return _Truth1D(
        density, 0.5, 1.0, lambda c: c, lambda z: min(max(z, 0.5), 1.0), lambda c: _tempered_scalar(c, beta)
    )


def logit_distorted(n: int, seed=None, *, beta: float = 0.5) -> Scenario:
    """Sun et al. (2024), Sec. 4.1, Setting 1: Z uniform on the simplex Δ₁ (K = 2),
    P(Y = 0 | Z) = σ(β·logit Z₀) (β = 1: calibrated; β < 1: under-confident).  Target: top-1 (confidence)
    calibration; the true ECE is ECE² = ∫_{1/2}^1 (σ(β·logit c) − c)² 2 dc.  The paper's grid is
    β ∈ {0, 0.05, …, 1}, n = 1000, 50 bins.  (Eq. 12 is missing from the text of the paper; the authors'
    public simulation code adds an intercept β₀ = 1 inside σ, which would make no β calibrated, while
    their true-ECE computation and the paper's "β = 1 is calibrated" use β₀ = 0 — calviz follows the
    latter.)"""
    n = _check_n(n)
    rng = _rng(seed)
    z = rng.dirichlet(np.ones(2), size=n)
    y = _sample_categorical(rng, _distorted_label_probs(z, beta))
    truth = _top1_distorted_truth(float(beta), None, None)
    return _scenario(
        "logit_distorted",
        f"under-confident 2-class model, logit distortion beta={beta:g} (Sun et al. 2024, Setting 1)",
        y,
        z,
        "top1",
        1,
        truth,
        lambda c: tempered(c, beta),
        {"seed": seed, "beta": beta},
    )


def beta_top1(n: int, seed=None, *, beta: float = 0.5, a: float = 5.0, b: float = 0.5) -> Scenario:
    """Sun et al. (2024), Sec. 4.1, Setting 2: as Setting 1 (K = 2, logit distortion β) but the top-1
    probability is drawn from Beta(a, b) = Beta(5, 0.5) and placed on a uniformly random class."""
    n = _check_n(n)
    rng = _rng(seed)
    top = rng.beta(a, b, size=n)
    cls = rng.integers(0, 2, size=n)
    z = np.empty((n, 2))
    z[:, 0] = np.where(cls == 0, top, 1.0 - top)
    z[:, 1] = 1.0 - z[:, 0]
    y = _sample_categorical(rng, _distorted_label_probs(z, beta))
    truth = _top1_distorted_truth(float(beta), float(a), float(b))
    return _scenario(
        "beta_top1",
        f"under-confident 2-class model, top-1 ~ Beta({a:g}, {b:g}), beta={beta:g} "
        "(Sun et al. 2024, Setting 2)",
        y,
        z,
        "top1",
        1,
        truth,
        lambda c: tempered(c, beta),
        {"seed": seed, "beta": beta, "a": a, "b": b},
    )


def perturbed_top2(n: int, seed=None, *, epsilon: float = 0.05, n_classes: int = 10) -> Scenario:
    """Sun et al. (2024), Sec. 4.1, Setting 3: Z uniform on Δ_{K−1} (K = 10); the label distribution is Z
    with ε moved from the top-1 class to the top-2 class.  Target: top-1-to-2 calibration; E[y − z | z] =
    (−ε, +ε) everywhere, so ECE² = ECE²_m = 2ε² for any binning.  Paper grid: ε ∈ {0, 0.005, …, 0.095},
    n = 1000, 20 bins per axis."""
    n = _check_n(n)
    k = int(n_classes)
    if k < 2:
        raise InputError(f"n_classes must be at least 2; got {k}")
    if not 0.0 <= epsilon <= 1.0 / k:
        raise InputError(f"epsilon must be in [0, 1/K] = [0, {1.0 / k:g}] so label probabilities stay valid")
    rng = _rng(seed)
    z = rng.dirichlet(np.ones(k), size=n)
    order = np.argsort(-z, axis=1)
    rows = np.arange(n)
    probs = z.copy()
    probs[rows, order[:, 0]] -= epsilon
    probs[rows, order[:, 1]] += epsilon
    y = _sample_categorical(rng, probs)
    shift = np.array([-epsilon, epsilon])
    return _scenario(
        "perturbed_top2",
        f"{k}-class model, {epsilon:g} of label mass moved from top-1 to top-2 (Sun et al. 2024, Setting 3)",
        y,
        z,
        "topk",
        2,
        _ConstantResidual((-float(epsilon), float(epsilon))),
        lambda t: np.asarray(t, float) + shift,
        {"seed": seed, "epsilon": epsilon, "n_classes": k},
    )


# -- Błasiok et al. (2023), Sec. 10 and Hu et al. (2024), Table 1 -------------------------------------------
@lru_cache(maxsize=256)
def _temperature_truth(beta: float) -> _Truth1D:
    return _Truth1D(
        lambda f: 1.0,
        0.0,
        1.0,
        lambda f: _tempered_scalar(f, beta),
        lambda z: _tempered_scalar(z, 1.0 / beta),
        lambda f: f,
    )


def temperature_family(n: int, seed=None, *, beta: float = 2.0) -> Scenario:
    """Błasiok et al. (2023), Sec. 10, D_β: f ~ U[0,1], Y ~ Ber(f), prediction v = f^β/(f^β + (1−f)^β)
    (temperature 1/β; β > 1 over-confident).  E[y | v] = v^{1/β}/(v^{1/β} + (1−v)^{1/β}); true ECEs by
    quadrature in f: ℓp-ECE^p = ∫₀¹ |f − v(f)|^p df."""
    n = _check_n(n)
    if not beta > 0:
        raise InputError(f"beta must be positive; got {beta}")
    rng = _rng(seed)
    f = rng.random(n)
    y = _bernoulli(rng, f)
    v = tempered(f, beta)
    return _scenario(
        "temperature_family",
        f"over-confident binary model, temperature 1/{beta:g} (Błasiok et al. 2023, Sec. 10)",
        y,
        v,
        "binary",
        1,
        _temperature_truth(float(beta)),
        lambda t: tempered(t, 1.0 / beta),
        {"seed": seed, "beta": beta},
    )


def shifted_uniform(n: int, seed=None, *, epsilon: float = 0.01) -> Scenario:
    """Hu et al. (2024), Table 1: v ~ U[0, 1−ε*], Y ~ Ber(v + ε*).  E[y | v] − v = ε* everywhere, so
    ℓ1 = ℓ2 ECE = dCE = ε*."""
    n = _check_n(n)
    if not 0.0 <= epsilon < 1.0:
        raise InputError(f"epsilon must be in [0, 1); got {epsilon}")
    rng = _rng(seed)
    v = rng.random(n) * (1.0 - epsilon)
    y = _bernoulli(rng, v + epsilon)
    truth = _uniform_truth(lambda f: f + epsilon, 0.0, 1.0 - epsilon)
    return _scenario(
        "shifted_uniform",
        f"binary model under-predicting by {epsilon:g} everywhere (Hu et al. 2024, Table 1)",
        y,
        v,
        "binary",
        1,
        truth,
        lambda t: np.asarray(t, float) + epsilon,
        {"seed": seed, "epsilon": epsilon},
        float(epsilon),
        float(epsilon),
    )


# -- multiclass (full calibration) --------------------------------------------------------------------
def _tempered_rows(p: np.ndarray, beta: float) -> np.ndarray:
    """Rows ∝ p^β, computed in log space so tiny probabilities do not underflow to 0/0."""
    with np.errstate(divide="ignore"):
        logits = beta * np.log(p)
    logits -= logits.max(axis=1, keepdims=True)
    e = np.exp(logits)
    return e / e.sum(axis=1, keepdims=True)


def _check_classes(n_classes, concentration) -> int:
    k = int(n_classes)
    if k < 2:
        raise InputError(f"n_classes must be at least 2; got {k}")
    if not concentration > 0:
        raise InputError(f"concentration must be positive; got {concentration}")
    return k


def dirichlet_calibrated(n: int, seed=None, *, n_classes: int = 3, concentration: float = 1.0) -> Scenario:
    """K-class calibrated model: p ~ Dir(c·1_K), Y ~ Cat(p), prediction p (full calibration holds)."""
    n = _check_n(n)
    k = _check_classes(n_classes, concentration)
    rng = _rng(seed)
    p = rng.dirichlet(np.full(k, float(concentration)), size=n)
    y = _sample_categorical(rng, p)
    return _scenario(
        "dirichlet_calibrated",
        f"{k}-class calibrated, p ~ Dir({concentration:g})",
        y,
        p,
        "full",
        k,
        _ConstantResidual((0.0,) * k),
        lambda t: np.asarray(t, float),
        {"seed": seed, "n_classes": k, "concentration": concentration},
        0.0,
        0.0,
    )


_MC_TRUTH_SIZE = 400_000


@lru_cache(maxsize=64)
def _dirichlet_temperature_truth(k: int, concentration: float, beta: float) -> tuple[float, float, float]:
    """(ℓ2-ECE, ℓ1-ECE, s.e. of ℓ2-ECE²) of full calibration by Monte Carlo (fixed seed, 4·10⁵ draws):
    E[y | z] = p because z ↦ p is a bijection, so ECE_p^p = E‖p − z‖_p^p."""
    rng = np.random.default_rng(20240607)
    p = rng.dirichlet(np.full(k, concentration), size=_MC_TRUTH_SIZE)
    d = p - _tempered_rows(p, beta)
    sq = np.sum(d * d, axis=1)
    return float(np.sqrt(sq.mean())), float(np.abs(d).sum(axis=1).mean()), float(sq.std() / np.sqrt(sq.size))


def dirichlet_temperature(
    n: int, seed=None, *, n_classes: int = 3, beta: float = 2.0, concentration: float = 1.0
) -> Scenario:
    """K-class temperature-miscalibrated model: p ~ Dir(c·1_K), Y ~ Cat(p), prediction z ∝ p^β
    (β = 1 calibrated, β > 1 over-confident).  Target: full calibration; E[y | z] = z^{1/β}/Σ z^{1/β}.
    The true ECEs are Monte Carlo values (4·10⁵ draws; ``params['true_ece_sq_se']`` is the s.e. of
    ECE²)."""
    n = _check_n(n)
    k = _check_classes(n_classes, concentration)
    if not beta > 0:
        raise InputError(f"beta must be positive; got {beta}")
    rng = _rng(seed)
    p = rng.dirichlet(np.full(k, float(concentration)), size=n)
    y = _sample_categorical(rng, p)
    z = _tempered_rows(p, beta)
    if beta == 1.0:
        ece2, ece1, se = 0.0, 0.0, 0.0
    else:
        ece2, ece1, se = _dirichlet_temperature_truth(k, float(concentration), float(beta))
    return _scenario(
        "dirichlet_temperature",
        f"{k}-class, p ~ Dir({concentration:g}), prediction ∝ p^{beta:g}",
        y,
        z,
        "full",
        k,
        None,
        lambda t: _tempered_rows(np.atleast_2d(np.asarray(t, float)), 1.0 / beta),
        {"seed": seed, "n_classes": k, "beta": beta, "concentration": concentration, "true_ece_sq_se": se},
        ece2,
        ece1,
    )


#: name -> callable(n, seed) with default parameters (the dashboard's dataset selector).
SCENARIOS: dict[str, Callable[..., Scenario]] = {
    "tcal_p0": tcal_p0,
    "tcal_p1m": tcal_p1m,
    "tcal_example1": tcal_example1,
    "beta_calibrated": beta_calibrated,
    "logit_distorted": logit_distorted,
    "beta_top1": beta_top1,
    "perturbed_top2": perturbed_top2,
    "temperature_family": temperature_family,
    "shifted_uniform": shifted_uniform,
    "dirichlet_calibrated": dirichlet_calibrated,
    "dirichlet_temperature": dirichlet_temperature,
}
