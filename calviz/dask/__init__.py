"""calviz on Dask: the estimators, T-Cal and the Laplace kCE on data larger than memory.

Install with ``pip install "calviz[dask]"``.  Every function keeps the name, the signature, the defaults
and the result object of its in-memory counterpart (plus ``client=``, ``split_every=`` and the column
names of DataFrame / Parquet input); the data may be dask arrays ``(y_true, y_prob)`` (row chunks are
paired by position), a dask DataFrame, a Parquet path / glob / directory, or a
:class:`DaskCalibrationData` from :func:`from_dataframe` / :func:`from_parquet`.

The functions are thin map/reduce drivers: options are checked by the in-memory function on a two-row
sample of the same kind (the same messages and resolved targets); each partition is validated by the
in-memory rules (an :class:`calviz.data.InputError` names the global row and the partition; no partial
result is ever returned) and reduced to the one mergeable :class:`calviz.BinSums`; the merged sums go
through the in-memory finalisers (:func:`calviz.ece.ece_from_sums`,
:func:`calviz.intervals.interval_from_sums`, :func:`calviz.ece.reliability_from_sums`) and T-Cal through
the in-memory decision rules (:mod:`calviz._tcal_decision`).  The results equal the in-memory ones up to
floating-point summation order — y-only resampled T-Cal included: with a fixed seed it draws the same
random numbers for the same (sorted) points, so the p-values are the in-memory ones.

Limits (refused with the reason, never silent): equal-mass and distinct-value binning, the bootstrap
interval and consistency resampling need the whole sample; smCE, SintCE and dCE_lower are computed on
all rows up to ``size`` rows, else on a uniform subsample whose sampling error
:func:`subsample_measure` bounds.
"""

from __future__ import annotations

import dask  # noqa: F401 (the real package: ``calviz.dask.dask``)

from calviz._sums import BinSums, dyadic_keys  # noqa: F401 (public since the first release)
from calviz.dask._app import (  # noqa: F401 (DASK_VIEWS)
    DASK_VIEWS,
    DistributedSource,
    analyze_parquet,
    compute_view,
    get_client,
    open_source,
)
from calviz.dask._data import (  # noqa: F401 (SPLIT_EVERY)
    SPLIT_EVERY,
    DaskCalibrationData,
    PartitionInputError,
    as_dask_data,
    from_dask,
    from_dataframe,
    from_parquet,
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
    sorted_view,  # noqa: F401
    subsample_measure,
    unbiased_ece,
    uniform_subsample,
)
from calviz.dask._tcal import RESAMPLE_MAX_CELLS, TCAL_MAX_BINS, adaptive_tcal, resampled_tcal  # noqa: F401

__all__ = [
    "DaskCalibrationData",
    "PartitionInputError",
    "from_dask",
    "from_dataframe",
    "from_parquet",
    "as_dask_data",
    "partition_sums",
    "binned_ece",
    "debiased_ece",
    "unbiased_ece",
    "mce",
    "multiscale_debiased_ece",
    "ece_interval",
    "reliability",
    "scale_sums",
    "adaptive_tcal",
    "resampled_tcal",
    "laplace_kce",
    "uniform_subsample",
    "subsample_measure",
    "SubsampleEstimate",
    "smce",
    "sintce",
    "lower_dce",
    "analyze_parquet",
    "multi_reliability",
    "compute_view",
    "DistributedSource",
    "open_source",
    "get_client",
]


def coarsen(sums: BinSums, shift: int = 1) -> BinSums:
    """Deprecated: :meth:`calviz.BinSums.coarsen`."""
    return sums.coarsen(shift)


def third_cumulant(sums: BinSums, third: BinSums | None = None) -> float:
    """Deprecated: the exact third cumulant of T^d, ``BinSums.terms()[4]`` of compensated sums."""
    return float((third if third is not None else sums).terms(sums.n_total)[4])

