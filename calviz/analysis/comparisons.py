"""Comparisons, orchestrated once for the command line, the dashboard and :func:`calviz.analysis.analyze`:
two models on the same examples, one model per group, and a model before and after recalibration.

Each takes validated data and an :class:`~calviz.analysis.AnalysisOptions` and calls the engine
(:func:`calviz.compare`, :func:`calviz.calibration_by_group`, :func:`calviz.recalibrate`) with the
keywords :func:`comparison_keywords` derives from the options — the same bins, level, class, seed and
T-Cal resampling (with the library's sequential rule) as the analysis.
"""

from __future__ import annotations

import numpy as np

from calviz._data import CalibrationData, InputError, as_calibration_data
from calviz.analysis.options import AnalysisOptions
from calviz.targets import SCALAR_TARGETS

__all__ = ["comparison_keywords", "compare_models", "UNWEIGHTED_COMPARISON", "unweighted_parts",
           "group_calibration", "recalibration", "by_group"]


def comparison_keywords(options: AnalysisOptions) -> dict:
    """The keywords of :func:`calviz.compare` and :func:`calviz.calibration_by_group` for an analysis'
    options: a scalar target as such (``topk`` / ``full`` are compared on their top-1 reduction, ``auto``),
    the bins, α, class, seed and T-Cal's resampling (``n_resamples=None``: T-Cal's sequential rule)."""
    target = options.target if options.target in ("auto", *SCALAR_TARGETS) else "auto"
    return dict(n_bins=options.n_bins, alpha=options.alpha, target=target, class_index=options.class_index,
                resampling=options.resampling, n_resamples=None, seed=options.seed)


#: the parts of a comparison that analyse the rows unweighted although the data carry sample weights
#: (the test of equal calibration, T-Cal and the ECE interval have no standard weighted form)
UNWEIGHTED_COMPARISON = ("the equal-calibration test", "each model's T-Cal and ECE interval")


def unweighted_parts(mode: str) -> tuple[str, ...]:
    """What a comparison of ``mode`` analyses unweighted when the data carry sample weights, as the weights
    note names it (:func:`calviz.present.text.weights_note`): two models (``"models"``) weight their score
    decompositions and reliability diagrams, not the rest (:data:`UNWEIGHTED_COMPARISON`); the groups'
    tests (``"groups"``) and the recalibration's split, fit and comparison (``"recalibration"``) take no
    weights."""
    parts = {"models": UNWEIGHTED_COMPARISON, "groups": ("the groups' tests",),
             "recalibration": ("this comparison",)}
    if mode not in parts:
        raise InputError(f"unknown comparison mode {mode!r}; expected one of {', '.join(parts)}")
    return parts[mode]


def compare_models(data: CalibrationData, other_probs, names, options: AnalysisOptions):
    """:func:`calviz.compare` of the model of ``data`` and the model ``other_probs`` on the same rows.

    Data with sample weights (``CalibrationData.weights``, a file's weight column): the two models' score
    decompositions are weighted (:func:`calviz.score_decomposition` with ``sample_weight``); the rest of
    the comparison is not (:data:`UNWEIGHTED_COMPARISON`)."""
    import dataclasses

    from calviz._comparison import compare

    keywords = comparison_keywords(options)
    result = compare(data, None, other_probs, names=tuple(names), **keywords)
    weights = getattr(data, "weights", None)
    if weights is None:
        return result
    from calviz._corp import score_decomposition

    other = as_calibration_data(data.labels, other_probs, confidence_form=data.confidence_form)
    splits = [score_decomposition(model, score="brier", target=keywords["target"],
                                  class_index=keywords["class_index"], sample_weight=weights)
              for model in (data, other)]
    return dataclasses.replace(result, decomposition_a=splits[0], decomposition_b=splits[1])


def group_calibration(data: CalibrationData, groups, options: AnalysisOptions, *, min_group_size=None):
    """:func:`calviz.calibration_by_group` of ``data`` with one group value per row."""
    from calviz._comparison import MIN_GROUP_SIZE, calibration_by_group

    size = MIN_GROUP_SIZE if min_group_size is None else min_group_size
    return calibration_by_group(data, groups=groups, min_group_size=size, **comparison_keywords(options))


def recalibration(data: CalibrationData, method: str, options: AnalysisOptions, *, calibration_size=0.5):
    """``(RecalibrationResult, ModelComparison)``: :func:`calviz.recalibrate` fitted on a calibration
    split, and the held-out rows before and after compared (:func:`compare_models`)."""
    from calviz._recalibration import recalibrate

    res = recalibrate(data, method=method, calibration_size=calibration_size, n_bins=options.n_bins,
                      seed=options.seed)
    # the held-out rows before, in the data's form (the confidence form stays one)
    before = as_calibration_data(res.y_true, res.y_prob_before, confidence_form=data.confidence_form)
    return res, compare_models(before, res.y_prob, ("before", "after"), options)


def by_group(data: CalibrationData, prepared: CalibrationData, options: AnalysisOptions, group, path=None):
    """:func:`group_calibration` of :func:`calviz.analysis.analyze`'s ``group`` on the analysed rows
    (``prepared``: the user subsample of ``data``, or ``data``); ``group`` is one value per row, or a column
    of the predictions file ``path``."""

    if isinstance(group, str):
        if path is None:
            raise InputError(f"group={group!r} names a column: pass the predictions file's path as data, or "
                             f"the group values themselves (one per row)")
        from calviz.io import read_group_column

        group = read_group_column(path, group, data.n, labels=data.labels)
    values = np.asarray(group)
    if values.ndim != 1 or values.shape[0] != data.n:
        raise InputError(f"group must have one value per row ({data.n}); got shape {values.shape}")
    if prepared is not data:  # the subsample's rows
        values = values[data.subsample_rows(int(options.n), seed=int(options.seed))]
    return group_calibration(prepared, values, options)
