"""Comparison sections of ``calviz check`` and ``calviz report``: ``--compare FILE``, ``--group-by COLUMN``
and ``--recalibrate METHOD``; and the ``calviz compare A B`` / ``calviz compare A --by COLUMN`` subcommand
(:func:`add_compare_command`, :func:`cmd_compare`), which prints the same comparison on its own.

:func:`add_comparison_options` adds the flags to a subcommand; :func:`compute_comparisons` runs
:func:`calviz.compare`, :func:`calviz.calibration_by_group` and :func:`calviz.recalibrate` as the flags ask;
:func:`comparison_summary` turns the results into the JSON-ready dict ``calviz check --json`` prints,
:func:`print_comparison_text` prints them as text and :func:`comparison_html` renders the report's sections
(written in :mod:`calviz.present.comparisons`, which the dashboard reads too).
The estimators are imported when a comparison runs (the command line must start quickly).
"""

from __future__ import annotations

import sys
from pathlib import Path

from calviz.present.comparisons import comparison_html, comparison_lines, comparison_summary

__all__ = [
    "add_compare_command",
    "cmd_compare",
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


# --------------------------------------------------------------------------------------------------
# calviz compare
# --------------------------------------------------------------------------------------------------
def add_compare_command(sub, formatter_class, add_file_options, add_analysis_options) -> None:
    """Register ``calviz compare`` on the subparsers ``sub`` (the file and analysis options are the ones
    ``calviz check`` takes)."""
    parser = sub.add_parser(
        "compare", formatter_class=formatter_class,
        help="compare the calibration of two models (or of the groups of a column)",
        description="Compare two models' predictions for the same examples — the difference of their "
                    "debiased ECE² with its interval, a test of equal calibration and each model's T-Cal "
                    "decision and ECE interval — or the groups of one column (--by).",
        epilog="examples: calviz compare before.csv after.csv · calviz compare preds.csv --b-column p_new · "
               "calviz compare preds.csv --by region --json")
    parser.add_argument("file", help="model A's predictions file (CSV, Parquet, NPZ, NPY) or `dataset:NAME`")
    parser.add_argument("other", nargs="?", metavar="B",
                        help="model B's predictions for the same examples, in the same row order")
    models = parser.add_argument_group("model B from columns of FILE (instead of a second file)")
    models.add_argument("--b-column", metavar="COL", help="model B's binary P(y=1) column in FILE")
    models.add_argument("--b-prefix", metavar="PREFIX",
                        help="prefix of model B's K probability columns PREFIX0..PREFIX{K-1} in FILE")
    parser.add_argument("--by", metavar="COLUMN",
                        help="instead of a model B: calibration in every group of COLUMN (a column / NPZ "
                             "array of FILE, or the label column), T-Cal per group with Holm's correction")
    parser.add_argument("--min-group-size", type=int, default=None, metavar="N",
                        help="with --by: groups with fewer rows are listed but not tested (default 30)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument("--report", metavar="OUT.html",
                        help="also write a self-contained HTML report: model A's analysis and the comparison")
    parser.add_argument("--weight-column", metavar="COL",
                        help="a column of FILE with non-negative sample weights (a row of weight k counts as "
                             "k rows): the two models' score decompositions are weighted, the rest is not")
    add_file_options(parser)
    add_analysis_options(parser)


def _model_b_source(args) -> str | None:
    """Where model B comes from: the second file, FILE:COL / FILE:PREFIX*, or None (--by only)."""
    given = [x for x in (args.other, args.b_column, args.b_prefix) if x]
    if len(given) > 1:
        from calviz.cli import CLIError

        raise CLIError("give model B once: a second file B, --b-column or --b-prefix")
    if args.b_column:
        return f"{_short_name(args.file)}:{args.b_column}"
    if args.b_prefix:
        return f"{_short_name(args.file)}:{args.b_prefix}*"
    return args.other


def cmd_compare(args) -> int:
    """``calviz compare``: :func:`compute_comparisons` on model A and model B (or A's groups), printed as
    text or JSON, and optionally a report."""
    import argparse
    import json

    from calviz import cli

    other = _model_b_source(args)
    if other is None and not args.by:
        raise cli.CLIError("give model B (a second file, --b-column or --b-prefix) or --by COLUMN")
    if other is not None and args.by:
        raise cli.CLIError("compare two models or the groups of --by, not both")
    out = Path(args.report) if args.report else None
    if out is not None:
        cli.check_output_path(out)
    flags = argparse.Namespace(**{**vars(args), "compare": other, "group_by": args.by, "recalibrate": None,
                                  "calibration_size": 0.5})
    options = cli.options_from_args(args)
    cli._check_comparison_flags(flags)
    data = cli.with_weight_column(cli.load_input(args.file, args), args)
    cli.check_options_fit(data, options)

    def load_b(file, flags):
        if args.b_column or args.b_prefix:  # model B is other columns of FILE: read FILE with them
            columns = {"y_prob": args.b_column, "prob_prefix": args.b_prefix}
            return cli.load_input(args.file, argparse.Namespace(**{**vars(flags), **columns}))
        return cli.load_input(file, flags)

    summary = comparison_summary(compute_comparisons(flags, data, options, load_input=load_b))
    if args.weight_column is not None:
        from calviz.analysis.comparisons import unweighted_parts
        from calviz.present.text import weights_note

        unweighted = unweighted_parts("models" if other is not None else "groups")
        summary = {"weight_column": args.weight_column, "not_weighted": list(unweighted),
                   "weights_note": weights_note(args.weight_column, unweighted), **summary}
    if args.json:
        print(json.dumps(summary, indent=2, allow_nan=False))
    else:
        if summary.get("weights_note"):
            print(summary["weights_note"])
        print_comparison_text(summary)
    if out is not None:
        from calviz.present.report import render_report, report_output

        title = f"calviz comparison — {_short_name(args.file)}" + (f" vs {_short_name(other)}" if other else
                                                                   f" by {args.by}")
        with report_output(out) as handle:
            html_text = render_report(data, options, title=title, source=args.file,
                                      extra_sections=comparison_html(summary))
            handle.write(html_text)
        print(f"wrote {out} ({len(html_text) / 1e6:.1f} MB, self-contained: open it in any browser, offline)",
              file=sys.stderr if args.json else sys.stdout)
    return 0
