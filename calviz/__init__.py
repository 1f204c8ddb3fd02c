"""calviz — is your classifier calibrated, how far from calibrated, and where.

Public functions are loaded lazily so that ``import calviz`` stays fast and the command line starts
quickly; ``calviz.<name>`` imports the defining module on first use.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# public name -> defining module
_EXPORTS = {
    # data
    "InputError": "calviz.data",
    "CalibrationData": "calviz.data",
    "as_calibration_data": "calviz.data",
    "from_logits": "calviz.data",
    # io
    "read_predictions": "calviz.io",
    # ece
    "binned_ece": "calviz.ece",
    "debiased_ece": "calviz.ece",
    "unbiased_ece": "calviz.ece",
    "kumar_debiased_ece": "calviz.ece",
    "mce": "calviz.ece",
    "ace": "calviz.ece",
    "reliability": "calviz.ece",
    "ECEResult": "calviz.ece",
    "ReliabilityData": "calviz.ece",
    "BinSums": "calviz.ece",
    "bin_sums": "calviz.ece",
    "assign_bins": "calviz.binning",
    "Bins": "calviz.binning",
    # intervals
    "ece_interval": "calviz.intervals",
    "ece_ci": "calviz.intervals",
    "ECEInterval": "calviz.intervals",
    "interval_from_sums": "calviz.intervals",
    # tcal
    "tcal": "calviz.tcal",
    "adaptive_tcal": "calviz.tcal",
    "split_tcal": "calviz.tcal",
    "TCalResult": "calviz.tcal",
    # classical tests
    "classical_tests": "calviz.classical",
    "spiegelhalter_test": "calviz.classical",
    "hosmer_lemeshow_test": "calviz.classical",
    "cox_test": "calviz.classical",
    "kolmogorov_smirnov_test": "calviz.classical",
    "kuiper_test": "calviz.classical",
    "CalibrationTestResult": "calviz.classical",
    "CoxTestResult": "calviz.classical",
    "ClassicalTests": "calviz.classical",
    # distance
    "smce": "calviz.distance",
    "smce_witness": "calviz.distance",
    "lower_dce": "calviz.distance",
    "rintce": "calviz.distance",
    "sintce": "calviz.distance",
    "laplace_kce": "calviz.distance",
    "binned_ece_with_width": "calviz.distance",
    "distance_bounds": "calviz.distance",
    "DistanceBounds": "calviz.distance",
    "smce_test": "calviz.distance",
    # smooth reliability
    "smooth_reliability": "calviz.smooth",
    "smooth_ece": "calviz.smooth",
    "SmoothReliability": "calviz.smooth",
    "SmoothECEResult": "calviz.smooth",
    # recalibration and comparisons
    "recalibrate": "calviz.recalibration",
    "RecalibrationResult": "calviz.recalibration",
    "RecalibrationMap": "calviz.recalibration",
    "compare": "calviz.comparison",
    "ModelComparison": "calviz.comparison",
    "calibration_by_group": "calviz.comparison",
    "GroupCalibration": "calviz.comparison",
    "GroupResult": "calviz.comparison",
    # app
    "dashboard": "calviz.dashboard",
    "CalvizApp": "calviz.dashboard",
    "analyze": "calviz.analysis",
    "AnalysisOptions": "calviz.analysis",
    "report": "calviz.report",
}

_SUBMODULES = {"synthetic", "binning", "plots", "datasets", "io", "data", "ece", "intervals", "tcal",
               "distance", "smooth", "dask", "recalibration", "comparison", "classical", "targets"}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"calviz.{name}")
    raise AttributeError(f"module 'calviz' has no attribute {name!r}")


def __dir__():
    return __all__
