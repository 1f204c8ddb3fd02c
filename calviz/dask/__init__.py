"""calviz on Dask: the estimators, T-Cal and the Laplace kCE on data larger than memory.

Install with ``pip install "calviz[dask]"``.  Every function keeps the name, the argument order, the
defaults, the option checks (with their messages) and the result type of its in-memory counterpart, plus
``split_every``, ``client`` and the column names of table input.  The data may be dask (or numpy) arrays
``(y_true, y_prob)``, a :class:`calviz.CalibrationData`, a dask DataFrame, a Parquet path, or a
:class:`DaskCalibrationData` of :func:`from_dataframe` / :func:`from_parquet`.

The functions are map/reduce drivers: each partition is validated by the in-memory rules (an
:class:`calviz.InputError` names the global row and the partition; there is never a partial result)
and reduced to the mergeable :class:`calviz.BinSums`; the merged sums go through the in-memory finalisers,
and T-Cal through the in-memory decision rules.  Results equal the in-memory ones up to floating-point
summation order — y-only resampled T-Cal included: with a fixed seed it draws the same random numbers for
the same sorted points.  Equal-mass and distinct-value bins, the bootstrap interval and consistency
resampling need the whole sample and are refused here (the Dask analysis of :func:`analyze_parquet` and the
app computes the last two in memory on the rows it gathers); smCE, SintCE and dCE_lower run in memory on all
rows up to ``size`` rows, else on the uniform subsample the in-memory data gives for the seed.
"""

from __future__ import annotations

import warnings

import dask  # noqa: F401 (the real package: ``calviz.dask.dask``)

from calviz._sums import BinSums, dyadic_keys  # noqa: F401 (public since the first release)
from calviz.dask._app import (
    DistributedSource,
    analyze_parquet,
    compute_view,
    get_client,
    open_source,
)
from calviz.dask._data import (  # noqa: F401 (SPLIT_EVERY, gather)
    SPLIT_EVERY,
    DaskCalibrationData,
    PartitionInputError,
    as_dask_data,
    from_dask,
    from_dataframe,
    from_parquet,
    gather,
)
from calviz.dask._estimators import (
    SubsampleEstimate,
    _combine_runs,  # noqa: F401 (tested directly)
    binned_ece,
    debiased_ece,
    ece_interval,
    laplace_kce,
    lower_dce,
    mce,
    multi_reliability,
    multiscale_debiased_ece,
    partition_sums,
    reliability,
    scale_sums,
    sintce,
    smce,
    subsample_measure,
    unbiased_ece,
    uniform_subsample,
)
from calviz.dask._tcal import TCAL_MAX_BINS, adaptive_tcal, resampled_tcal  # noqa: F401
from calviz.dask._windows import calibration_over_time

__all__ = [
    "DaskCalibrationData", "PartitionInputError", "from_dask", "from_dataframe", "from_parquet",
    "as_dask_data",
    "partition_sums", "binned_ece", "debiased_ece", "unbiased_ece", "mce", "multiscale_debiased_ece",
    "ece_interval", "reliability", "scale_sums", "adaptive_tcal", "resampled_tcal", "laplace_kce",
    "uniform_subsample", "subsample_measure", "SubsampleEstimate", "smce", "sintce", "lower_dce",
    "analyze_parquet", "multi_reliability", "compute_view", "DistributedSource", "open_source", "get_client",
    "calibration_over_time",
]


def coarsen(sums: BinSums, shift: int = 1) -> BinSums:
    """Deprecated: :meth:`calviz.BinSums.coarsen`; it will be removed in the next release."""
    warnings.warn("calviz.dask.coarsen is deprecated; use the method BinSums.coarsen(shift)",
                  DeprecationWarning, stacklevel=2)
    return sums.coarsen(shift)


def third_cumulant(sums: BinSums, third: BinSums | None = None) -> float:
    """Deprecated: the exact third cumulant of T^d, ``BinSums.terms()[4]`` of compensated sums; it will be
    removed in the next release."""
    warnings.warn("calviz.dask.third_cumulant is deprecated; use BinSums.terms()[4] of the compensated "
                  "sums (scale_sums(..., third_moments=True))", DeprecationWarning, stacklevel=2)
    return float((third if third is not None else sums).terms(sums.n_total)[4])

