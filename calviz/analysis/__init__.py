"""The analysis layer shared by the dashboard, the static report and the command line.

One frozen :class:`AnalysisOptions` describes what the user asked for (the option schema,
:mod:`calviz.analysis.options`); one record per view (the registry, :mod:`calviz.analysis.views`) says
how each view is computed, cached, scheduled and shown; the compute functions
(:mod:`calviz.analysis.compute`) turn ``(data, options)`` into the engine's own result objects with plain
keyword calls into ``calviz.ece``, ``calviz.intervals``, ``calviz.tcal``, ``calviz.distance`` and
``calviz.smooth``; :func:`analyze` runs them all and records timings (:mod:`calviz.analysis.run`), and
:mod:`calviz.analysis.comparisons` orchestrates the comparisons.  Views (``calviz.plots``,
``calviz.app``, ``calviz.report``) only *read* these results: every number shown to a user is computed
here, by the engine.
"""

from calviz.analysis.compute import (
    MAX_CLASS_PANELS,
    ROWS_PER_CELL,
    MultiReliability,
    compute_bootstrap_interval,
    compute_classical,
    compute_distance,
    compute_interval,
    compute_multi_reliability,
    compute_reliability,
    compute_smooth,
    compute_tcal,
    interval_bins,
    multi_reliability_panels,
)
from calviz.analysis.data import (
    DistributedBackend,
    analysis_view,
    check_options_fit,
    is_distributed,
    prepare,
    resolve_target,
    scalar_reliability,
    scalar_target,
)
from calviz.analysis.options import (
    KERNELS,
    OPTIONS,
    RESAMPLINGS,
    SCHEMES,
    AnalysisOptions,
    Option,
    with_option_values,
)
from calviz.analysis.run import (
    COMPUTE,
    VIEWS,
    Analysis,
    DataSummary,
    analyze,
    result_fields,
    run_view,
    selected_views,
)
from calviz.analysis.views import REGISTRY, View, view
from calviz.targets import TARGETS, analysis_target

__all__ = [
    "AnalysisOptions",
    "Analysis",
    "analysis_target",
    "resolve_target",
    "scalar_target",
    "is_distributed",
    "prepare",
    "analysis_view",
    "compute_reliability",
    "MultiReliability",
    "compute_multi_reliability",
    "multi_reliability_panels",
    "check_options_fit",
    "with_option_values",
    "scalar_reliability",
    "MAX_CLASS_PANELS",
    "compute_tcal",
    "compute_interval",
    "compute_bootstrap_interval",
    "compute_distance",
    "compute_smooth",
    "compute_classical",
    "analyze",
]
