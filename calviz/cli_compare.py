"""Comparison sections of ``calviz check`` and ``calviz report``: ``--compare FILE``, ``--group-by COLUMN``
and ``--recalibrate METHOD``; and the ``calviz compare A B`` / ``calviz compare A --by COLUMN`` subcommand
(:func:`add_compare_command`, :func:`cmd_compare`), which prints the same comparison on its own.

:func:`add_comparison_options` adds the flags to a subcommand; :func:`compute_comparisons` runs
:func:`calviz.compare`, :func:`calviz.calibration_by_group` and :func:`calviz.recalibrate` as the flags ask;
:func:`comparison_summary` turns the results into the JSON-ready dict ``calviz check --json`` prints,
:func:`print_comparison_text` prints them as text and :func:`comparison_html` renders the report's sections.
The estimators are imported when a comparison runs (the command line must start quickly).
"""

from __future__ import annotations

import html
import sys
from pathlib import Path

from calviz._results import format_number as _f  # (short names: several in a line of text)
from calviz._results import format_pvalue as _fmt_p
from calviz._results import pvalue_phrase as _p
from calviz._results import strict_json

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

    from calviz._comparison import MIN_GROUP_SIZE, calibration_by_group, check_same_examples, compare
    from calviz._data import as_calibration_data
    from calviz._recalibration import recalibrate
    from calviz.io import read_group_column
    from calviz.targets import SCALAR_TARGETS

    target = options.target if options.target in ("auto", *SCALAR_TARGETS) else "auto"
    common = dict(n_bins=options.n_bins, alpha=options.alpha, target=target, class_index=options.class_index,
                  resampling=options.resampling, n_resamples=None, seed=options.seed)  # T-Cal's own rule
    out = {}
    if args.compare:
        other = load_input(args.compare, args)
        check_same_examples(data, other, (args.file, args.compare))
        names = (_short_name(args.file), _short_name(args.compare))
        if names[0] == names[1]:
            names = (f"A ({names[0]})", f"B ({names[1]})")
        out["comparison"] = compare(data, None, other.probs, names=names, **common)
    if args.group_by:
        label_column = getattr(args, "correct", None) or getattr(args, "y_true", None) or "y_true"
        groups = read_group_column(args.file, args.group_by, data.n, label_column=label_column,
                                   labels=data.labels)
        size = MIN_GROUP_SIZE if args.min_group_size is None else args.min_group_size
        out["groups"] = calibration_by_group(data, groups=groups, min_group_size=size, **common)
    if args.recalibrate:
        res = recalibrate(data, method=args.recalibrate, calibration_size=args.calibration_size,
                          n_bins=options.n_bins, seed=options.seed)
        # the held-out rows before, in the data's form (the confidence form stays one)
        before = as_calibration_data(res.y_true, res.y_prob_before, confidence_form=data.confidence_form)
        cmp = compare(before, None, res.y_prob, names=("before", "after"), **common)
        out["recalibration"] = (res, cmp)
    return out


def _short_name(file: str) -> str:
    return file[len("dataset:"):] if file.startswith("dataset:") else Path(file).name


# --------------------------------------------------------------------------------------------------
# JSON, text and HTML
# --------------------------------------------------------------------------------------------------
def _model_part(interval, tcal) -> dict:
    return {
        "ece": None if interval is None else {"estimate": interval.estimate, "low": interval.low,
                                              "high": interval.high, "level": interval.level},
        "tcal": None if tcal is None else {"reject": bool(tcal.reject), "decision": tcal.decision,
                                           "pvalue": float(tcal.pvalue),
                                           "pvalue_is_bound": tcal.pvalue_is_bound,
                                           "sequential": bool(tcal.max_resamples)},
    }


def _comparison_dict(c) -> dict:
    return {
        "names": list(c.names), "difference": c.difference, "low": c.low, "high": c.high, "level": c.level,
        "se": c.se, "pvalue": c.pvalue, "reject": c.reject, "better": c.better, "verdict": c.verdict,
        "n": c.n, "n_bins": c.n_bins, "target": c.target, "method": c.method,
        "ece_sq": {c.names[0]: c.ece_sq_a, c.names[1]: c.ece_sq_b},
        "models": {c.names[0]: _model_part(c.ece_a, c.tcal_a), c.names[1]: _model_part(c.ece_b, c.tcal_b)},
    }


def _groups_dict(g) -> dict:
    rows = []
    for r in g.groups:
        rel = r.reliability
        rows.append({
            "group": r.group, "n": r.n, "status": r.status, "reason": r.reason,
            **_model_part(r.interval, r.tcal),
            "pvalue": r.pvalue, "adjusted_pvalue": r.adjusted_pvalue, "reject": r.reject,
            "decision": r.decision, "reliability": None if rel is None else {
                "edges": rel.edges, "counts": rel.counts, "mean_confidence": rel.mean_confidence,
                "observed_frequency": rel.observed_frequency, "low": rel.low, "high": rel.high},
        })
    return {"groups": rows, "worst_group": g.worst_group, "rejected": list(g.rejected),
            "too_small": list(g.too_small), "not_testable": list(g.not_testable), "alpha": g.alpha,
            "correction": "Holm", "min_group_size": g.min_group_size, "verdict": g.verdict}


def comparison_summary(results: dict) -> dict:
    """JSON-ready dict of :func:`compute_comparisons`'s results (non-finite numbers become null)."""
    out = {}
    if "comparison" in results:
        out["comparison"] = _comparison_dict(results["comparison"])
    if "groups" in results:
        out["groups"] = _groups_dict(results["groups"])
    if "recalibration" in results:
        res, cmp = results["recalibration"]
        if isinstance(res, dict):  # already summarised (the dashboard keeps no predictions in its result)
            out["recalibration"] = {**res, "comparison": _comparison_dict(cmp)}
        else:
            out["recalibration"] = {
                "method": res.method, "n_calibration": int(res.calibration_indices.shape[0]),
                "n_eval": res.n_eval, "temperature": res.temperature, "seed": res.seed,
                "maps": [m.parameters for m in res.maps], "comparison": _comparison_dict(cmp),
            }
    return strict_json(out)


def _decision(tcal: dict | None) -> str:
    """A model's T-Cal decision in words; an undecided test (resampling cap reached) is not rejected."""
    if tcal is None:
        return "—"
    if tcal.get("decision") == "undecided":
        return "undecided (not rejected)"
    return "rejects" if tcal["reject"] else "does not reject"


def _tcal_p(p, tcal: dict | None, phrase: bool = False) -> str:
    """A p-value from a model's (or a group's) T-Cal dict: '≤ …' when the test settled a rejection by a
    tail bound, without resampling (the Holm-adjusted p-value of such a group is a bound too)."""
    bound = bool((tcal or {}).get("pvalue_is_bound"))
    return _p(p, bound=bound) if phrase else _fmt_p(p, bound=bound)


def _print_pair(c: dict, indent: str = "           ") -> None:
    a, b = c["names"]
    for name in (a, b):
        m = c["models"][name]
        ece, tcal = m["ece"] or {}, m["tcal"]
        print(f"{indent}{name}: ECE {_f(ece.get('estimate'))} [{_f(ece.get('low'))}, {_f(ece.get('high'))}], "
              f"T-Cal {_decision(tcal)} ({_tcal_p(tcal and tcal['pvalue'], tcal, phrase=True)})")
    print(f"{indent}ECE²({a}) − ECE²({b}) = {_f(c['difference'])}, {100 * c['level']:.0f}% interval "
          f"[{_f(c['low'])}, {_f(c['high'])}], test of equal calibration {_p(c['pvalue'])}")
    print(f"{indent}verdict: {c['verdict']}")


def print_comparison_text(summary: dict) -> None:
    if summary.get("comparison"):
        c = summary["comparison"]
        print(f"  compare  {c['names'][0]} vs {c['names'][1]} on the same {c['n']} examples "
              f"({c['target']}, {c['n_bins']} bins)")
        _print_pair(c)
    if summary.get("recalibration"):
        r = summary["recalibration"]
        extra = f", T = {_f(r['temperature'])}" if r.get("temperature") is not None else ""
        print(f"  recalibrate {r['method']}{extra}: fitted on {r['n_calibration']} rows, evaluated on the "
              f"other {r['n_eval']}")
        _print_pair(r["comparison"])
    if summary.get("groups"):
        g = summary["groups"]
        print(f"  groups   {len(g['groups'])} groups, T-Cal p-values Holm-adjusted at α = {g['alpha']:g}")
        for row in g["groups"]:
            if row["status"] != "tested":
                print(f"           {row['group']!s:>12}  n = {row['n']:>6}  {row['status']}: {row['reason']}")
                continue
            ece, tcal = row["ece"] or {}, row["tcal"]
            print(f"           {row['group']!s:>12}  n = {row['n']:>6}  ECE {_f(ece.get('estimate'))} "
                  f"[{_f(ece.get('low'))}, {_f(ece.get('high'))}]  {_tcal_p(row['pvalue'], tcal, True)}  "
                  f"Holm {_tcal_p(row['adjusted_pvalue'], tcal, True)}  {_group_decision(row)}"
                  + (f" ({row['reason']})" if row["reason"] else ""))
        print(f"           verdict: {g['verdict']}")


def _pair_table(c: dict) -> str:
    a, b = c["names"]
    rows = []
    for name in (a, b):
        m = c["models"][name]
        ece, tcal = m["ece"] or {}, m["tcal"]
        rows.append(f"<tr><td>{html.escape(name)}</td><td>{_f(ece.get('estimate'))}</td>"
                    f"<td>[{_f(ece.get('low'))}, {_f(ece.get('high'))}]</td><td>{_decision(tcal)}</td>"
                    f"<td>{html.escape(_tcal_p(tcal and tcal['pvalue'], tcal))}</td></tr>")
    head = "<tr><th>model</th><th>ℓ2-ECE</th><th>interval</th><th>T-Cal</th><th>p-value</th></tr>"
    diff = (f"<p class=\"caption\">ECE²({html.escape(a)}) − ECE²({html.escape(b)}) = {_f(c['difference'])}, "
            f"{100 * c['level']:.0f}% interval [{_f(c['low'])}, {_f(c['high'])}]; test of equal calibration "
            f"{html.escape(_p(c['pvalue']))} ({html.escape(c['method'])}).</p>")
    cls = "reject" if c["reject"] else "accept"
    return (f'<div class="verdict {cls}"><b>{html.escape(c["verdict"])}</b></div>'
            f"<table>{head}{''.join(rows)}</table>{diff}")


def _holm_note(groups: dict) -> str:
    """How the group decisions were made (calviz.calibration_by_group): with sequential resampling a
    decision and its Holm p-value may seem to disagree."""
    if any((row.get("tcal") or {}).get("sequential") for row in groups["groups"]):
        return ("The decisions are Holm's step-down procedure run on each group's sequential test, which "
                "settles at every Holm level with its own resamples; the p-values and their Holm adjustment "
                "are the tests' Monte Carlo estimates (≤: a bound), for reading.")
    return f"A group is rejected when its Holm-adjusted p-value is at most α = {groups['alpha']:g}."


def _group_decision(row: dict) -> str:
    if row["reject"] is None:
        return "—"
    if row["reject"]:
        return "rejects"
    return "undecided (not rejected)" if row.get("decision") == "undecided" else "not rejected"


def comparison_html(summary: dict) -> str:
    """The report's comparison sections (HTML ``<section>`` elements) for a :func:`comparison_summary`."""
    parts = []
    if summary.get("comparison"):
        c = summary["comparison"]
        parts.append(f"<section><h2>Model comparison: {html.escape(c['names'][0])} vs "
                     f"{html.escape(c['names'][1])}</h2>{_pair_table(c)}</section>")
    if summary.get("recalibration"):
        r = summary["recalibration"]
        extra = f" (T = {_f(r['temperature'])})" if r.get("temperature") is not None else ""
        parts.append(f"<section><h2>Before / after {html.escape(r['method'])} recalibration{extra}</h2>"
                     f"<p class=\"caption\">Map fitted on {r['n_calibration']} rows; every number below is "
                     f"computed on the other {r['n_eval']} rows.</p>{_pair_table(r['comparison'])}</section>")
    if summary.get("groups"):
        g = summary["groups"]
        head = ("<tr><th>group</th><th>n</th><th>status</th><th>ℓ2-ECE</th><th>interval</th><th>T-Cal p</th>"
                "<th>Holm p</th><th>decision</th></tr>")
        rows = []
        for row in g["groups"]:
            ece = row["ece"] or {}
            status = f"{row['status']}: {row['reason']}" if row["reason"] else row["status"]
            rows.append(f"<tr><td>{html.escape(str(row['group']))}</td><td>{row['n']}</td>"
                        f"<td>{html.escape(status)}</td><td>{_f(ece.get('estimate'))}</td>"
                        f"<td>[{_f(ece.get('low'))}, {_f(ece.get('high'))}]</td>"
                        f"<td>{html.escape(_tcal_p(row['pvalue'], row['tcal']))}</td>"
                        f"<td>{html.escape(_tcal_p(row['adjusted_pvalue'], row['tcal']))}</td>"
                        f"<td>{html.escape(_group_decision(row))}</td></tr>")
        cls = "reject" if g["rejected"] else "accept"
        parts.append(f"<section><h2>Calibration by group</h2><div class=\"verdict {cls}\"><b>"
                     f"{html.escape(g['verdict'])}</b></div><table>{head}{''.join(rows)}</table>"
                     f"<p class=\"caption\">{_holm_note(g)}</p></section>")
    return "".join(parts)


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
    data = cli.load_input(args.file, args)
    cli.check_options_fit(data, options)

    def load_b(file, flags):
        if args.b_column or args.b_prefix:  # model B is other columns of FILE: read FILE with them
            columns = {"y_prob": args.b_column, "prob_prefix": args.b_prefix}
            return cli.load_input(args.file, argparse.Namespace(**{**vars(flags), **columns}))
        return cli.load_input(file, flags)

    summary = comparison_summary(compute_comparisons(flags, data, options, load_input=load_b))
    if args.json:
        print(json.dumps(summary, indent=2, allow_nan=False))
    else:
        print_comparison_text(summary)
    if out is not None:
        from calviz._report import render_report, report_output

        title = f"calviz comparison — {_short_name(args.file)}" + (f" vs {_short_name(other)}" if other else
                                                                   f" by {args.by}")
        with report_output(out) as handle:
            html_text = render_report(data, options, title=title, source=args.file,
                                      extra_sections=comparison_html(summary))
            handle.write(html_text)
        print(f"wrote {out} ({len(html_text) / 1e6:.1f} MB, self-contained: open it in any browser, offline)",
              file=sys.stderr if args.json else sys.stdout)
    return 0
