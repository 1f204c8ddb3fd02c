"""Comparison sections of ``calviz check`` and ``calviz report``: ``--compare FILE``, ``--group-by COLUMN``
and ``--recalibrate METHOD``.

:func:`add_comparison_options` adds the flags to a subcommand; :func:`compute_comparisons` runs
:func:`calviz.compare`, :func:`calviz.calibration_by_group` and :func:`calviz.recalibrate` as the flags ask;
:func:`comparison_summary` turns the results into the JSON-ready dict ``calviz check --json`` prints,
:func:`print_comparison_text` prints them as text and :func:`comparison_html` renders the report's sections
(written in :mod:`calviz.present.comparisons`, which the dashboard reads too).
The estimators are imported when a comparison runs (the command line must start quickly).
"""

from __future__ import annotations

from pathlib import Path

from calviz.present.comparisons import comparison_html, comparison_lines, comparison_summary

__all__ = [
    "add_comparison_options",
    "has_comparison_options",
    "comparison_flag_rules",
    "compute_comparisons",
    "comparison_summary",
    "print_comparison_text",
    "comparison_html",
]

RECALIBRATION_METHODS = ("temperature", "platt", "isotonic", "histogram")


def add_comparison_options(parser) -> None:
    group = parser.add_argument_group("comparisons")
    group.add_argument("--compare", metavar="FILE",
                       help="a second model's predictions for the same examples (same columns, same row "
                            "order, or dataset:NAME): paired difference of the debiased ECE², interval, test")
    group.add_argument("--group-by", metavar="COLUMN",
                       help="calibration in every group of COLUMN (a column / NPZ array of FILE, or the "
                            "label column): ECE interval, T-Cal per group, Holm across groups, worst group")
    group.add_argument("--recalibrate", metavar="METHOD", choices=RECALIBRATION_METHODS,
                       help="fit METHOD (temperature, platt, isotonic, histogram) on a calibration split and "
                            "compare before/after on the held-out rows")
    group.add_argument("--calibration-size", type=float, default=0.5, metavar="FRACTION",
                       help="share of rows that fit the --recalibrate map (default 0.5; drawn with --seed)")
    group.add_argument("--min-group-size", type=int, default=None, metavar="N",
                       help="groups with fewer rows are listed but not tested (default 30)")


def has_comparison_options(args) -> bool:
    return bool(getattr(args, "compare", None) or getattr(args, "group_by", None)
                or getattr(args, "recalibrate", None))


def comparison_flag_rules() -> dict:
    """``--calibration-size`` and ``--min-group-size`` (by their option names): the rules of
    :func:`calviz.recalibrate` and :func:`calviz.calibration_by_group`, which the command line checks before
    any file is read or analysed."""
    from calviz._comparison import calibration_by_group
    from calviz._recalibration import recalibrate

    return {"calibration_size": recalibrate.parameter_constraints["calibration_size"],
            "min_group_size": calibration_by_group.parameter_constraints["min_group_size"]}


def compute_comparisons(args, data, options, *, load_input) -> dict:
    """{"comparison": ModelComparison, "groups": GroupCalibration, "recalibration": (RecalibrationResult,
    ModelComparison)} for the flags given (absent keys: flag not given).  ``load_input`` reads the second
    file exactly as the first (the CLI's reader, with the same column options)."""

    from calviz._comparison import check_same_examples
    from calviz.analysis.comparisons import compare_models, group_calibration, recalibration
    from calviz.io import read_group_column

    out = {}
    if args.compare:
        other = load_input(args.compare, args)
        check_same_examples(data, other, (args.file, args.compare))
        names = (_short_name(args.file), _short_name(args.compare))
        if names[0] == names[1]:
            names = (f"A ({names[0]})", f"B ({names[1]})")
        out["comparison"] = compare_models(data, other.probs, names, options)
    if args.group_by:
        label_column = getattr(args, "correct", None) or getattr(args, "y_true", None) or "y_true"
        groups = read_group_column(args.file, args.group_by, data.n, label_column=label_column,
                                   labels=data.labels)
        out["groups"] = group_calibration(data, groups, options, min_group_size=args.min_group_size)
    if args.recalibrate:
        out["recalibration"] = recalibration(data, args.recalibrate, options,
                                             calibration_size=args.calibration_size)
    return out


def _short_name(file: str) -> str:
    return file[len("dataset:"):] if file.startswith("dataset:") else Path(file).name


# --------------------------------------------------------------------------------------------------
# JSON, text and HTML: written by calviz.present, which the app's comparison and its report export read too
# --------------------------------------------------------------------------------------------------
def print_comparison_text(summary: dict) -> None:
    """Print the comparison sections of ``calviz check`` (written by
    :func:`calviz.present.comparisons.comparison_lines`)."""
    for line in comparison_lines(summary):
        print(line)
