"""Which rows each view analyses: the one subsample policy of the dashboard, the report and the CLI.

Views whose cost is one pass over the data (the binned reliability diagram, the asymptotic ECE
interval, the analytic T-Cal, the smooth curve and its band — the band resamples the O(G) grid
aggregates, not the rows — and the classical tests) always run on every row.  The views in
:data:`SAMPLED_VIEWS` cost more than one pass per change:

* ``distance`` — smCE (Błasiok and Nakkiran, 2023), the interval CE and the dCE lower-bound linear
  program (Błasiok, Gopalan, Hu and Nakkiran, 2023) sort and sweep the sample several times, with large
  constants (≈ 30 s at 10⁷ rows);
* ``bootstrap`` — the percentile bootstrap of the ECE costs ``n_resamples`` passes;
* ``tcal_resampled`` — every resample of T-Cal's critical values is a pass over the rows, and the
  sequential rule may draw thousands of them.

On data of more rows than ``SAMPLED_ROWS[view]`` (2·10⁵; 5·10⁴ for the bootstrap) these views run on a
uniform subsample of that many rows drawn **without replacement** (so i.i.d. predictions stay i.i.d.: the
resampled T-Cal and the bootstrap remain valid on the subsample — duplicated rows would share their
labels), reproducibly from ``options.seed``, unless ``options.all_rows`` is true (``all_rows=True`` in
the API, ``--all-rows`` on the command line, the "all rows" checkbox in the dashboard).
:func:`sample_note` states the subsample and its sampling error, and :func:`calviz.analysis.run_view`
attaches that note to the view's result, so every place that shows the result says it was computed on a
subsample.  A user subsample (``options.n``) comes first: the policy
then applies to those ``n`` rows.

Sampling errors stated (probability ≥ 0.95 over the draw of the subsample S of k of the rows P):

* smCE: |smCE(S) − smCE(P)| ≤ 2(1 + √(π(1 − π)))/√k + √(2 ln(1/δ)/k), π the fraction of label 1 —
  smCE's witness class is 2-Lipschitz on the line (v, y) ↦ v + 2y, so the error is at most twice the
  Wasserstein-1 distance between S and P, whose mean is ≤ (1 + √(π(1−π)))/√k, plus McDiarmid's
  deviation (the bound of ``calviz.dask.subsample_measure``, following Błasiok et al. 2023, §9, which
  draws with replacement; it holds without replacement too: the empirical distribution function of S then
  has the smaller variance F(1 − F)(P − k)/(k(P − 1)), and McDiarmid's inequality holds for a uniformly
  random k-subset with the same bounded differences 2/k);
* the ECE intervals (bootstrap; resampled T-Cal's decision): they are computed from k rows, so they
  describe what k rows can show — about √(P/k) times wider than from all rows.
"""

from __future__ import annotations

import math

import numpy as np

from calviz._data import CalibrationData

__all__ = [
    "SAMPLED_ROWS",
    "SAMPLED_VIEWS",
    "sampled_rows",
    "sample_for_view",
    "sample_note",
    "smce_sampling_error",
    "CONFIDENCE",
    "estimate_seconds",
    "format_seconds",
    "LARGE_ROWS",
    "BACKGROUND_WHEN_LARGE",
]

#: rows each subsampled view analyses by default (module docstring), chosen so that each takes a few
#: seconds on one core: the distance family ≈ 1 s on 2·10⁵ rows (smCE sampling error ≤ 0.0086 for
#: π = ½); the sequential T-Cal rule ≈ 0.5 s per 100 resamples of 2·10⁵ rows; the bootstrap's 500
#: resamples ≈ 5 s on 5·10⁴ rows
SAMPLED_ROWS = {"distance": 200_000, "tcal_resampled": 200_000, "bootstrap": 50_000}

#: views that cost more than one pass over the rows per change (module docstring)
SAMPLED_VIEWS = frozenset(SAMPLED_ROWS)

#: second word of the subsample's seed sequence (a fixed, arbitrary constant that separates its stream)
SAMPLE_STREAM = 0x5A3

#: rows from which the dashboard computes the one-pass views that still take seconds there
#: (:data:`BACKGROUND_WHEN_LARGE`) off its UI thread, so the page answers at once
LARGE_ROWS = 1_000_000
#: the classical tests sort the sample and the ACE makes one pass per class; the analytic T-Cal sorts
BACKGROUND_WHEN_LARGE = frozenset({"classical", "tcal"})

#: probability with which the stated sampling errors hold
CONFIDENCE = 0.95


def sampled_rows(view: str, n: int, options) -> int | None:
    """Rows ``view`` analyses out of ``n``: ``SAMPLED_ROWS[view]`` for a view of :data:`SAMPLED_VIEWS` on
    more rows than that, ``None`` (every row) otherwise or when ``options.all_rows`` is true."""
    size = SAMPLED_ROWS.get(view)
    if size is None or getattr(options, "all_rows", False) or n <= size:
        return None
    return size


def _draw(data: CalibrationData, size: int, seed: int) -> CalibrationData:
    """``size`` distinct rows drawn uniformly (``CalibrationData.subsample``, rows kept in file order)
    from the stream ``numpy.random.default_rng([seed, SAMPLE_STREAM])``: independent of the user
    subsample's stream (``default_rng(seed)``) and of the views' own resampling."""
    return data.subsample(int(size), seed=sample_generator(seed))


def sample_generator(seed: int) -> np.random.Generator:
    """The generator of the views' subsample for ``options.seed`` (also drawn by ``calviz.dask``)."""
    return np.random.default_rng([int(seed), SAMPLE_STREAM])


def sample_for_view(view: str, data: CalibrationData, options) -> tuple[CalibrationData, str | None]:
    """The rows ``view`` analyses (``data`` already prepared by :func:`calviz.analysis.prepare`) and the
    note that says so (``None`` when every row is used).  The subsample is cached on ``data``: the
    subsampled views of one change share it, and it changes only with the seed."""
    size = sampled_rows(view, data.n, options)
    if size is None:
        return data, None
    key = ("view_sample", int(size), int(options.seed))
    sample = data._cache.get(key)
    if sample is None:
        sample = _draw(data, size, options.seed)
        data._cache[key] = sample
    return sample, sample_note(view, sample, data.n, options)


def smce_sampling_error(k: int, positive_fraction: float, confidence: float = CONFIDENCE) -> float:
    """Bound on |smCE(S) − smCE(P)| holding with probability ≥ ``confidence`` for a subsample S of ``k``
    rows drawn with replacement from P, ``positive_fraction`` = π the fraction of label 1 in P (module
    docstring)."""
    pi = float(positive_fraction)
    delta = 1.0 - float(confidence)
    lipschitz = 2.0 * (1.0 + math.sqrt(pi * (1.0 - pi))) / math.sqrt(k)
    return lipschitz + math.sqrt(2.0 * math.log(1.0 / delta) / k)


def sample_note(view: str, sample: CalibrationData, n: int, options) -> str:
    """One sentence saying which rows ``view`` used and the sampling error that implies."""
    k = sample.n
    head = (f"computed on a uniform subsample of {k:,} of {n:,} rows (without replacement, seed "
            f"{int(options.seed)}); ask for all rows (all_rows=True, --all-rows, the 'all rows' box) "
            "to use every row")
    if view == "distance":
        from calviz.analysis import analysis_view

        _, y, _ = analysis_view(sample, options, scalar=True)
        error = smce_sampling_error(k, float(np.mean(y)))
        return (f"{head}. Sampling error: smCE within ±{error:.2g} of its all-rows value with probability "
                f"{CONFIDENCE:.0%} (2-Lipschitz witnesses, Błasiok et al. 2023, §9)")
    factor = math.sqrt(n / k)
    what = "the interval" if view == "bootstrap" else "the resampled p-values"
    return f"{head}. {what.capitalize()} reflect {k:,} rows: about {factor:.1f}× less precise than all rows"


#: seconds per row (per resample for the resampling views) of each background view, measured on one core
#: of a 2-core x86-64 machine at 2·10⁵ rows (benchmarks/bench_bigdata.py); the dashboard's status line
#: turns them into an expected duration.  ``smooth``: the band resamples the grid, ≈ 4 s whatever n.
_SECONDS_PER_ROW = {"distance": 3.5e-6, "bootstrap": 1.5e-7, "tcal_resampled": 2.5e-8, "smooth": 1e-7,
                    "classical": 1e-6, "tcal": 3e-7}
_SMOOTH_BAND_SECONDS = 4.0
#: resamples the estimate assumes for the sequential T-Cal rule (it stops sooner when the decision is
#: clear, later when the p-value is close to α)
_TYPICAL_TCAL_RESAMPLES = 2000


def estimate_seconds(view: str, rows: int, n_classes: int, options) -> float:
    """Rough duration of ``view`` on ``rows`` rows (a progress estimate, not a promise: the machine's
    load, the data and, for the sequential T-Cal rule, how close the decision is all change it)."""
    rate = _SECONDS_PER_ROW.get(view, 1e-7) * rows
    if view == "bootstrap":
        return rate * int(options.n_resamples)
    if view == "tcal_resampled":
        return rate * _TYPICAL_TCAL_RESAMPLES
    if view == "smooth":
        return rate + _SMOOTH_BAND_SECONDS
    if view == "classical":
        return rate * max(int(n_classes), 2) / 2  # the ACE is one pass per class
    return rate


def format_seconds(seconds: float) -> str:
    """``"< 1 s"``, ``"12 s"``, ``"3 min"``."""
    if seconds < 1.0:
        return "< 1 s"
    if seconds < 90.0:
        return f"{seconds:.0f} s"
    return f"{seconds / 60.0:.0f} min"
