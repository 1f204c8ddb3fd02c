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
  deviation (:func:`subsample_interval`, following Błasiok et al. 2023, §9, which
  draws with replacement; it holds without replacement too: the empirical distribution function of S then
  has the smaller variance F(1 − F)(P − k)/(k(P − 1)), and McDiarmid's inequality holds for a uniformly
  random k-subset with the same bounded differences 2/k);
* the ECE intervals (bootstrap; resampled T-Cal's decision): they are computed from k rows, so they
  describe what k rows can show — about √(P/k) times wider than from all rows.

:func:`subsample_interval` gives the interval for the all-rows value of each distance measure (smCE,
dCE_lower, SintCE) from its value on the subsample: the distance view's note states the three once they
are computed (:func:`result_note`), and ``calviz.dask.subsample_measure`` reports them.
"""

from __future__ import annotations

import math

import numpy as np

from calviz._data import CalibrationData
from calviz._params import NON_NEGATIVE_INT, POSITIVE_INT, UNIT_OPEN, Interval, Options, validate_params
from calviz._results import DISTANCE_RANGE, clip_interval
from calviz.analysis.views import LARGE_ROWS, REGISTRY, view
from calviz.targets import analysis_target

__all__ = [
    "SAMPLED_ROWS",
    "SAMPLED_VIEWS",
    "sampled_rows",
    "sample_for_view",
    "sample_note",
    "result_note",
    "smce_sampling_error",
    "subsample_interval",
    "CONFIDENCE",
    "estimate_seconds",
    "format_seconds",
    "LARGE_ROWS",
    "BACKGROUND_WHEN_LARGE",
]

#: rows each subsampled view analyses by default (module docstring), derived from the view registry
#: (``View.subsample``), chosen so that each takes a few seconds on one core: the distance family ≈ 1 s on
#: 2·10⁵ rows (smCE sampling error ≤ 0.0122 for π = ½); the sequential T-Cal rule ≈ 0.5 s per 100 resamples
#: of 2·10⁵ rows; the bootstrap's 500 resamples ≈ 5 s on 5·10⁴ rows
SAMPLED_ROWS = {record.name: record.subsample for record in REGISTRY if record.subsample is not None}

#: views that cost more than one pass over the rows per change (module docstring)
SAMPLED_VIEWS = frozenset(SAMPLED_ROWS)

#: second word of the subsample's seed sequence (a fixed, arbitrary constant that separates its stream)
SAMPLE_STREAM = 0x5A3

#: the one-pass views that still take seconds from :data:`LARGE_ROWS` rows, which the dashboard computes
#: off its UI thread there (``View.background == "when_large"``: the analytic T-Cal sorts)
BACKGROUND_WHEN_LARGE = frozenset(record.name for record in REGISTRY if record.background == "when_large")

#: probability with which the stated sampling errors hold
CONFIDENCE = 0.95


def sampled_rows(view: str, n: int, options) -> int | None:
    """How many rows ``view`` analyses out of ``n``, or ``None`` for every row.

    ``SAMPLED_ROWS[view]`` for a view of :data:`SAMPLED_VIEWS` on more rows than that, ``None`` (every
    row) otherwise or when ``options.all_rows`` is true.

    Parameters
    ----------
    view : str
        A view name of :data:`calviz.analysis.COMPUTE` (``"distance"``, ``"bootstrap"``, …).
    n : int
        Rows of the (already prepared) data.
    options : AnalysisOptions
        Only ``all_rows`` is read (an object without it counts as ``all_rows=False``).

    Returns
    -------
    int or None
        The subsample size, or ``None`` when the view runs on all ``n`` rows.

    Examples
    --------
    >>> from calviz.analysis import AnalysisOptions
    >>> from calviz.sampling import sampled_rows
    >>> options = AnalysisOptions()
    >>> sampled_rows("distance", 10**6, options), sampled_rows("bootstrap", 10**6, options)
    (200000, 50000)
    >>> sampled_rows("distance", 10_000, options), sampled_rows("reliability", 10**6, options)
    (None, None)
    >>> print(sampled_rows("distance", 10**6, options.replace(all_rows=True)))
    None
    """
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
    """The rows ``view`` analyses and the note that says so.

    ``data`` is already prepared by :func:`calviz.analysis.prepare`; the note (:func:`sample_note`) is
    ``None`` when every row is used.  The subsample (:func:`sampled_rows` rows, drawn uniformly without
    replacement from ``options.seed``) is cached on ``data``: the subsampled views of one change share
    it, and it changes only with the seed.

    Parameters
    ----------
    view : str
        A view name of :data:`calviz.analysis.COMPUTE`.
    data : CalibrationData
        The prepared data.
    options : AnalysisOptions
        ``seed`` and ``all_rows`` are read (and the target, for the distance view's note).

    Returns
    -------
    rows : CalibrationData
        The subsample, or ``data`` itself.
    note : str or None
        Which rows were used and the sampling error that implies; ``None`` for all rows.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.analysis import AnalysisOptions
    >>> from calviz.sampling import sample_for_view
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=60_000)
    >>> data = calviz.as_calibration_data((rng.uniform(size=60_000) < p).astype(int), p)
    >>> options = AnalysisOptions(seed=1)
    >>> rows, note = sample_for_view("bootstrap", data, options)    # more than 50,000 rows
    >>> rows.n, sample_for_view("bootstrap", data, options)[0] is rows   # cached
    (50000, True)
    >>> print(note)
    computed on a uniform subsample of 50,000 of 60,000 rows (without replacement, seed 1); ... to use
    every row. The interval reflects 50,000 rows: about 1.1× less precise than all rows
    >>> rows, note = sample_for_view("distance", data, options)     # at most 200,000 rows: all of them
    >>> rows is data, note
    (True, None)
    """
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
    """Sampling error of the smooth calibration error (smCE) computed on a subsample of ``k`` rows.

    A bound on |smCE(S) − smCE(P)| holding with probability ≥ ``confidence`` for a subsample S of ``k``
    rows drawn with replacement from P, ``positive_fraction`` = π the fraction of label 1 in P:

        2(1 + √(π(1 − π)))/√k + √(2 ln(1/δ)/k),   δ = 1 − ``confidence``.

    smCE's witness class is 2-Lipschitz on the line (v, y) ↦ v + 2y, so the error is at most twice the
    Wasserstein-1 distance between S and P, whose mean is ≤ (1 + √(π(1−π)))/√k, plus McDiarmid's
    deviation [3]_ (following [1]_, Sec. 9).  It holds for draws without replacement too (the module
    docstring; [2]_, Sec. 6).

    Parameters
    ----------
    k : int
        Rows of the subsample.
    positive_fraction : float
        π, the fraction of label 1 in all rows P (for a non-binary target: of its indicator y).
    confidence : float, default CONFIDENCE (0.95)
        Probability 1 − δ with which the bound holds.

    Returns
    -------
    float
        The half-width of the interval around smCE(S) that contains smCE(P).

    References
    ----------
    .. [1] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.
    .. [2] W. Hoeffding. Probability inequalities for sums of bounded random variables. *Journal of the
       American Statistical Association* 58(301), 13–30, 1963.
    .. [3] C. McDiarmid. On the method of bounded differences. *Surveys in Combinatorics*, London
       Mathematical Society Lecture Note Series 141, 148–188, 1989.

    Examples
    --------
    >>> from calviz.sampling import smce_sampling_error
    >>> round(smce_sampling_error(200_000, 0.5), 4)         # the distance views' default subsample
    0.0122
    >>> round(smce_sampling_error(10_000, 0.1), 4), round(smce_sampling_error(10_000, 0.1, 0.99), 4)
    (0.0505, 0.0563)
    """
    pi = float(positive_fraction)
    delta = 1.0 - float(confidence)
    lipschitz = 2.0 * (1.0 + math.sqrt(pi * (1.0 - pi))) / math.sqrt(k)
    return lipschitz + math.sqrt(2.0 * math.log(1.0 / delta) / k)


@validate_params({"measure": Options(("smce", "sintce", "lower_dce")), "n": POSITIVE_INT,
                  "positives": NON_NEGATIVE_INT, "positive_fraction": Interval(float, 0, 1),
                  "confidence": UNIT_OPEN})
def subsample_interval(measure: str, result, *, n: int, positives: int, positive_fraction: float,
                       confidence: float = CONFIDENCE) -> tuple[float, float, str]:
    """Interval for a distance measure's all-rows value from its value on a uniform subsample.

    Where the value of ``measure`` on all ``n`` rows P lies, given its ``result`` on a uniform subsample
    S of k = ``result.n`` rows drawn without replacement: ``(low, high, bound)``, holding with probability
    ≥ ``confidence`` = 1 − δ over the draw; ``bound`` names the bound.

    ``positives``: rows of S with label 1; ``positive_fraction``: π, the fraction of label 1 in P.  The
    bounds follow Błasiok, Gopalan, Hu and Nakkiran (2023) [1]_, Sec. 9 (rates of Thm 9.5 / Cor. 9.9 and
    Thm 9.10 with Lemmas 9.11-9.14, constants made explicit); they hold for draws without replacement too
    (Hoeffding, 1963 [2]_, Sec. 6; McDiarmid's inequality [3]_ holds for a uniformly random k-subset with
    the same bounded differences):

    * ``smce``: value ± :func:`smce_sampling_error` (2-Lipschitz witnesses).
    * ``lower_dce``: value ± [Σ_y π_y (1/(2√k_y) + √(ln(3/δ)/(2k_y))) + 2√(ln(6/δ)/(2k)) + the linear
      program's grid error], since |dCE(S) − dCE(P)| ≤ Σ_y π_y W₁(μ_y, μ̂_y) + 2|π̂ − π| (Lemma 9.12).
    * ``sintce``: per width ε, d(ε) = √((⌈1/ε⌉+1)/k) + √(2 ln(L/δ)/k) (a union over the L widths);
      SintCE(P) ≤ min_ε [RintCE_S(ε) + ε + d(ε)] and ≥ min(min_ε [RintCE_S(ε) + ε − d(ε)],
      RintCE_S(ε_L) − d(ε_L)).

    When k = n the subsample is all of P: the interval is the value itself (for dCE_lower, the linear
    program's own interval).  ``low`` is at least 0.

    Parameters
    ----------
    measure : {"smce", "lower_dce", "sintce"}
        The distance measure of ``result``.
    result : SmCEResult, LowerDCEResult or SintCEResult
        The measure computed on the subsample S (:func:`calviz.smce`, :func:`calviz.lower_dce`,
        :func:`calviz.sintce`); its ``n`` is k.
    n : int
        Rows of P.
    positives : int
        Rows of S with label 1.
    positive_fraction : float
        π, the fraction of label 1 in P.
    confidence : float, default CONFIDENCE (0.95)
        Probability 1 − δ with which the interval holds.

    Returns
    -------
    low, high : float
        The interval for the measure's value on all rows (``low`` ≥ 0).
    bound : str
        The bound used, in words.

    Raises
    ------
    ValueError
        An unknown ``measure``.

    References
    ----------
    .. [1] J. Błasiok, P. Gopalan, L. Hu and P. Nakkiran. A unifying theory of distance from calibration.
       *Proceedings of the 55th ACM Symposium on Theory of Computing (STOC)*, 2023.
    .. [2] W. Hoeffding. Probability inequalities for sums of bounded random variables. *Journal of the
       American Statistical Association* 58(301), 13–30, 1963.
    .. [3] C. McDiarmid. On the method of bounded differences. *Surveys in Combinatorics*, London
       Mathematical Society Lecture Note Series 141, 148–188, 1989.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.sampling import subsample_interval
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=10_000)
    >>> data = calviz.as_calibration_data((rng.uniform(size=10_000) < p).astype(int), p)  # calibrated
    >>> rows = data.subsample(1000, seed=0)
    >>> result = calviz.smce(rows)
    >>> low, high, bound = subsample_interval("smce", result, n=data.n, positives=int(rows.labels.sum()),
    ...                                       positive_fraction=float(data.labels.mean()))
    >>> round(result.value, 4), round(low, 4), round(high, 4)
    (0.0078, 0.0, 0.1801)
    >>> bound
    '2(1+√(π(1−π)))/√k + √(2 ln(1/δ)/k) (2-Lipschitz witnesses)'
    """
    k, value, delta = int(result.n), float(result.value), 1.0 - float(confidence)
    if k >= n:
        if measure == "lower_dce":
            return (float(result.lower), float(result.upper),
                    "all rows used (no subsampling); LP grid error only")
        return value, value, "all rows used (no subsampling)"
    if measure == "smce":
        error = smce_sampling_error(k, positive_fraction, confidence)
        low, high = value - error, value + error
        bound = "2(1+√(π(1−π)))/√k + √(2 ln(1/δ)/k) (2-Lipschitz witnesses)"
    elif measure == "lower_dce":
        error = 2.0 * math.sqrt(math.log(6.0 / delta) / (2.0 * k)) + float(result.error_bound)
        for share, rows in ((1.0 - positive_fraction, k - positives), (positive_fraction, positives)):
            if share > 0:  # π_y (E W₁ + McDiarmid's deviation) of the label's conditional distribution
                mean = 0.5 / rows**0.5 if rows else math.inf
                error += share * (mean + math.sqrt(math.log(3 / delta) / (2 * max(rows, 1))))
        low, high = value - error, value + error
        bound = "Σ_y π_y W₁(μ_y, μ̂_y) + 2|π̂ − π| + the LP grid error"
    else:  # sintce
        widths, rint = (np.asarray(v, dtype=np.float64) for v in (result.widths, result.rintce_values))
        union = math.sqrt(2 * math.log(max(len(widths), 1) / delta) / k)  # over the L widths
        deviation = np.sqrt((np.ceil(1 / widths) + 1) / k) + union
        high = float(np.min(rint + widths + deviation))
        low = float(min(np.min(rint + widths - deviation), rint[-1] - deviation[-1]))
        bound = "RintCE_S(ε) ± [√((⌈1/ε⌉+1)/k) + √(2 ln(L/δ)/k)] per width, monotone in the width"
    return (*clip_interval(low, high, *DISTANCE_RANGE), bound)  # each measure lies in [0, 1]


def sample_note(view: str, sample: CalibrationData, n: int, options, *, bounds=None) -> str:
    """One sentence saying which rows ``view`` used and the sampling error that implies.

    For the distance view: the smCE sampling error (:func:`smce_sampling_error`, π from the sample's
    labels of the scalar target of ``options``) or, given the view's ``bounds``, where the all-rows smCE,
    dCE_lower and SintCE lie (:func:`subsample_interval`); for the others (bootstrap, resampled T-Cal):
    how much less precise than all rows their result is, about √(n/k) for k rows.

    Parameters
    ----------
    view : str
        The view the subsample was drawn for (``"distance"``, ``"bootstrap"``, ``"tcal_resampled"``).
    sample : CalibrationData
        The subsample.
    n : int
        Rows it was drawn from.
    options : AnalysisOptions
        ``seed`` is stated; the target decides the distance view's labels.
    bounds : calviz.DistanceBounds, optional
        The distance view's result on ``sample`` (:func:`calviz.analysis.compute_distance`).

    Returns
    -------
    str
        The note, shown with the view's result.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.analysis import AnalysisOptions
    >>> from calviz.sampling import sample_note
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=20_000)
    >>> data = calviz.as_calibration_data((rng.uniform(size=20_000) < p).astype(int), p)
    >>> sample = data.subsample(5000, seed=0)
    >>> print(sample_note("distance", sample, data.n, AnalysisOptions()))
    computed on a uniform subsample of 5,000 of 20,000 rows (without replacement, seed 0); ask for all
    rows (all_rows=True, --all-rows, the 'all rows' box) to use every row. Sampling error: smCE within
    ±0.077 of its all-rows value with probability 95% (2-Lipschitz witnesses, Błasiok et al. 2023, §9)
    >>> bounds = calviz.distance_bounds(sample)        # the distance view's result on the subsample
    >>> print(sample_note("distance", sample, data.n, AnalysisOptions(), bounds=bounds))
    computed on ... With probability 95% over the subsample, the all-rows values lie in: smCE [0, 0.0...];
    dCE_lower [0, 0.0...]; SintCE [0, 0.1...] (Błasiok et al. 2023, §9)
    >>> print(sample_note("tcal_resampled", sample, data.n, AnalysisOptions()))
    computed on ... The resampled p-values reflect 5,000 rows: about 2.0× less precise than all rows
    """
    k = sample.n
    head = (f"computed on a uniform subsample of {k:,} of {n:,} rows (without replacement, seed "
            f"{int(options.seed)}); ask for all rows (all_rows=True, --all-rows, the 'all rows' box) "
            "to use every row")
    kind = _view(view).sampling_error
    if kind == "smce":
        _, y = analysis_target(sample, options, scalar=True).view(sample)
        pi = float(np.mean(y))  # π of all rows, estimated on the subsample
        if bounds is not None:
            intervals = "; ".join(
                "{} [{:.2g}, {:.2g}]".format(label, *subsample_interval(
                    measure, result, n=n, positives=int(np.sum(y)), positive_fraction=pi)[:2])
                for (measure, result), label in zip(bounds.results().items(), ("smCE", "dCE_lower", "SintCE"),
                                                    strict=True))
            return (f"{head}. With probability {CONFIDENCE:.0%} over the subsample, the all-rows values lie "
                    f"in: {intervals} (Błasiok et al. 2023, §9)")
        error = smce_sampling_error(k, pi)
        return (f"{head}. Sampling error: smCE within ±{error:.2g} of its all-rows value with probability "
                f"{CONFIDENCE:.0%} (2-Lipschitz witnesses, Błasiok et al. 2023, §9)")
    factor = math.sqrt(n / k)
    what = "The interval reflects" if kind == "interval" else "The resampled p-values reflect"
    return f"{head}. {what} {k:,} rows: about {factor:.1f}× less precise than all rows"


def result_note(view: str, sample: CalibrationData, n: int, options, result, note: str | None) -> str | None:
    """The note of ``view`` once its ``result`` on ``sample`` is known.

    The distance view then states the interval of each measure for all ``n`` rows (:func:`sample_note`
    with ``bounds``); the other views keep ``note``.

    Parameters
    ----------
    view : str
        The view.
    sample : CalibrationData
        The rows it analysed.
    n : int
        Rows they were drawn from.
    options : AnalysisOptions
        The analysis options.
    result : object
        The view's result (:data:`calviz.analysis.COMPUTE`); for the distance view
        ``(DistanceBounds, SmCEWitness)``.
    note : str or None
        The note of :func:`sample_for_view` (``None``: every row was used, nothing to say).

    Returns
    -------
    str or None
        The note to show with the result.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> from calviz.analysis import COMPUTE, AnalysisOptions
    >>> from calviz.sampling import result_note, sample_for_view
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=3000)
    >>> data = calviz.as_calibration_data((rng.uniform(size=3000) < p).astype(int), p)
    >>> options = AnalysisOptions()
    >>> rows, note = sample_for_view("distance", data, options)   # 3,000 rows: all of them
    >>> print(result_note("distance", rows, data.n, options, COMPUTE["distance"](rows, options), note))
    None
    """
    if note is None or _view(view).sampling_error != "smce" or result is None:
        return note
    return sample_note(view, sample, n, options, bounds=result[0])


def estimate_seconds(view: str, rows: int, n_classes: int, options) -> float:
    """Rough duration in seconds of ``view`` on ``rows`` rows, for a progress message.

    A progress estimate, not a promise: the machine's load, the data and, for the sequential T-Cal rule,
    how close the decision is all change it.  Per-row costs were measured on one core; the bootstrap
    scales with ``options.n_resamples``, the resampled T-Cal assumes a typical 2000 resamples, the
    smooth curve's band adds a fixed ≈ 4 s and the classical tests one pass per class.

    Parameters
    ----------
    view : str
        A view name of :data:`calviz.analysis.COMPUTE` (others get a generic one-pass rate).
    rows : int
        Rows the view analyses (after :func:`sampled_rows`).
    n_classes : int
        Classes of the data.
    options : AnalysisOptions
        ``n_resamples`` is read for the bootstrap.

    Returns
    -------
    float
        Expected seconds (see :func:`format_seconds`).

    Examples
    --------
    >>> from calviz.analysis import AnalysisOptions
    >>> from calviz.sampling import estimate_seconds
    >>> options = AnalysisOptions(n_resamples=500)
    >>> round(estimate_seconds("distance", 200_000, 2, options), 2)
    0.7
    >>> round(estimate_seconds("bootstrap", 50_000, 2, options), 2)    # 500 resamples
    3.75
    """
    return _view(view).estimate_seconds(rows, n_classes, options)


def format_seconds(seconds: float) -> str:
    """A duration in words for a status line: ``"< 1 s"``, ``"12 s"``, ``"3 min"``.

    Below 1 s: ``"< 1 s"``; below 90 s: whole seconds; otherwise whole minutes.

    Parameters
    ----------
    seconds : float
        The duration, e.g. from :func:`estimate_seconds`.

    Returns
    -------
    str
        The rounded duration with its unit.

    Examples
    --------
    >>> from calviz.sampling import format_seconds
    >>> format_seconds(0.3), format_seconds(12.4), format_seconds(200)
    ('< 1 s', '12 s', '3 min')
    """
    if seconds < 1.0:
        return "< 1 s"
    if seconds < 90.0:
        return f"{seconds:.0f} s"
    return f"{seconds / 60.0:.0f} min"


def _view(name: str):
    """The registry's record of view ``name`` (its row policy, sampling error and cost model)."""
    return view(name)
