"""calviz — is your classifier calibrated, how far from calibrated, and where.

Public functions are loaded lazily so that ``import calviz`` stays fast and the command line starts
quickly; ``calviz.<name>`` imports the defining module on first use.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings

__version__ = "0.1.0"

# public name -> defining module
_EXPORTS = {
    # data
    "InputError": "calviz._data",
    "CalibrationData": "calviz._data",
    "as_calibration_data": "calviz._data",
    "from_logits": "calviz._data",
    # io
    "read_predictions": "calviz.io",
    # ece
    "binned_ece": "calviz._ece",
    "debiased_ece": "calviz._ece",
    "unbiased_ece": "calviz._ece",
    "kumar_debiased_ece": "calviz._ece",
    "mce": "calviz._ece",
    "ace": "calviz._ece",
    "reliability": "calviz._ece",
    "ECEResult": "calviz._ece",
    "ReliabilityData": "calviz._ece",
    # intervals
    "ece_interval": "calviz._intervals",
    "ECEInterval": "calviz._intervals",
    # tcal
    "tcal": "calviz._tcal",
    "adaptive_tcal": "calviz._tcal",
    "split_tcal": "calviz._tcal",
    "TCalResult": "calviz._tcal",
    # classical tests
    "classical_tests": "calviz._classical",
    "spiegelhalter_test": "calviz._classical",
    "hosmer_lemeshow_test": "calviz._classical",
    "cox_test": "calviz._classical",
    "kolmogorov_smirnov_test": "calviz._classical",
    "kuiper_test": "calviz._classical",
    "CalibrationTestResult": "calviz._classical",
    "CoxTestResult": "calviz._classical",
    "ClassicalTests": "calviz._classical",
    # distance
    "smce": "calviz._distance",
    "smce_witness": "calviz._distance",
    "lower_dce": "calviz._distance",
    "rintce": "calviz._distance",
    "sintce": "calviz._distance",
    "laplace_kce": "calviz._distance",
    "binned_ece_with_width": "calviz._distance",
    "distance_bounds": "calviz._distance",
    "DistanceBounds": "calviz._distance",
    "smce_test": "calviz._distance",
    # smooth reliability
    "smooth_reliability": "calviz._smooth",
    "smooth_ece": "calviz._smooth",
    "SmoothReliability": "calviz._smooth",
    "SmoothECEResult": "calviz._smooth",
    # recalibration and comparisons
    "recalibrate": "calviz._recalibration",
    "RecalibrationResult": "calviz._recalibration",
    "RecalibrationMap": "calviz._recalibration",
    "compare": "calviz._comparison",
    "ModelComparison": "calviz._comparison",
    "calibration_by_group": "calviz._comparison",
    "GroupCalibration": "calviz._comparison",
    "GroupResult": "calviz._comparison",
    # app
    "dashboard": "calviz.app.page",
    "CalvizApp": "calviz.app.page",
    "analyze": "calviz.analysis",
    "AnalysisOptions": "calviz.analysis",
    "report": "calviz.present.report",
    # calibration over time
    "calibration_over_time": "calviz._windows",
    "CalibrationOverTime": "calviz._windows",
    "monitor_calibration": "calviz._monitor",
    "CalibrationMonitor": "calviz._monitor",
    # CORP reliability and score decompositions
    "corp_reliability": "calviz._corp",
    "CORPReliability": "calviz._corp",
    "score_decomposition": "calviz._corp",
    "ScoreDecomposition": "calviz._corp",
    "murphy_decomposition": "calviz._corp",
    "MurphyDecomposition": "calviz._corp",
    "ici": "calviz._ici",
    "ICIResult": "calviz._ici",
    "top_label_ece": "calviz._toplabel",
}


#: public submodules (``calviz.plots.reliability_plot``, ``from calviz.datasets import load_dataset``, ...)
_SUBMODULES = {"plots", "datasets", "io", "dask", "targets", "analysis"}

__all__ = sorted(_EXPORTS) + ["__version__"]

# ------------------------------------------------------------------------------------------------
# deprecated for one release (removed in the release after 0.1)
# ------------------------------------------------------------------------------------------------
#: plumbing that was in the top-level namespace: name -> (defining module, what to use instead)
_USE_THE_ESTIMATORS = "calviz.reliability or calviz.binned_ece in memory, calviz.dask out of core"
_DEPRECATED_NAMES = {
    "BinSums": ("calviz._sums", _USE_THE_ESTIMATORS),
    "bin_sums": ("calviz._sums", _USE_THE_ESTIMATORS),
    "assign_bins": ("calviz._binning", "calviz.reliability(y_true, y_prob, n_bins=..., scheme=...)"),
    "Bins": ("calviz._binning", "the bins of calviz.reliability(y_true, y_prob, n_bins=, scheme=)"),
    "interval_from_sums": ("calviz._intervals", "calviz.ece_interval (calviz.dask.ece_interval out of core)"),
    "ece_ci": ("calviz._intervals", "calviz.ece_interval"),
}

#: implementation modules that had public names: old submodule -> private module
_RENAMED_MODULES = {name: f"_{name}" for name in (
    "binning", "classical", "comparison", "dashboard", "data", "distance", "ece", "intervals",
    "recalibration", "report", "smooth", "synthetic", "tcal")}
_RENAMED_MODULES["report"] = "present.report"  # the report renders results: it is presentation


def _caller_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the first frame outside this file and the import
    machinery, i.e. at the user's ``import`` statement or attribute access.  :func:`warnings.warn` skips
    the frames of ``importlib._bootstrap`` itself, so only the others are counted."""
    frame, level = sys._getframe(1), 1
    while frame is not None:
        if frame.f_code.co_filename == __file__ or frame.f_globals.get("__name__") == "importlib":
            level += 1
        elif not frame.f_code.co_filename.startswith("<frozen importlib"):
            break
        frame = frame.f_back
    return level


def _renamed_module_message(old: str) -> str:
    new = _RENAMED_MODULES[old]
    public = sorted((name for name, module in _EXPORTS.items() if module == f"calviz.{new}"),
                    key=lambda name: (name[0].isupper(), name))  # a function first
    if public:
        instead = f"use the public names in the calviz namespace (e.g. calviz.{public[0]})"
    else:
        instead = f"it is not public API (its code is now in calviz.{new})"
    return (f"the module calviz.{old} is deprecated and will be removed in the next release; {instead}")


class _DeprecatedModule(types.ModuleType):
    """What ``import calviz.<old name>`` gives for one release: attribute reads and writes go to the renamed
    private module.  ``import calviz.tcal`` binds this object to the package attribute ``calviz.tcal``,
    so the three old modules named like their function (tcal, report, dashboard) forward calls to it."""

    def __init__(self, old: str, target: types.ModuleType):
        super().__init__(f"calviz.{old}", target.__doc__)
        object.__setattr__(self, "_calviz_target", target)

    def __getattr__(self, name):
        return getattr(object.__getattribute__(self, "_calviz_target"), name)

    def __setattr__(self, name, value):
        if name.startswith("__"):  # module metadata set by the import system stays on this object
            object.__setattr__(self, name, value)
        else:
            setattr(self._calviz_target, name, value)

    def __delattr__(self, name):
        delattr(self._calviz_target, name)

    def __dir__(self):
        return dir(self._calviz_target)

    def __call__(self, *args, **kwargs):
        old = self.__name__.rpartition(".")[2]
        function = getattr(self._calviz_target, old, None) if old in _EXPORTS else None
        if function is None:
            raise TypeError(f"'module' object {self.__name__} is not callable")
        return function(*args, **kwargs)


class _RenamedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``import calviz.<old name>`` to the private module, with a ``DeprecationWarning``."""

    def find_spec(self, fullname, path=None, target=None):
        package, _, old = fullname.partition(".")
        if package != __name__ or old not in _RENAMED_MODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        old = spec.name.partition(".")[2]
        warnings.warn(_renamed_module_message(old), DeprecationWarning, stacklevel=_caller_stacklevel())
        return _DeprecatedModule(old, importlib.import_module(f"{__name__}.{_RENAMED_MODULES[old]}"))

    def exec_module(self, module):
        pass


# first in line: an old name always means the alias, whatever other finders (e.g. an editable install's)
# would find under that name
if not any(isinstance(finder, _RenamedModuleFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, _RenamedModuleFinder())


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    if name in _DEPRECATED_NAMES:
        module, instead = _DEPRECATED_NAMES[name]
        warnings.warn(f"calviz.{name} is deprecated and will be removed from the calviz namespace in the "
                      f"next release; use {instead}", DeprecationWarning, stacklevel=_caller_stacklevel())
        return getattr(importlib.import_module(module), name)
    if name in _SUBMODULES or name in _RENAMED_MODULES:  # the renamed ones warn in _RenamedModuleFinder
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'calviz' has no attribute {name!r}")


def __dir__():
    return __all__
