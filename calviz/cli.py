"""The ``calviz`` command line: ``calviz serve | report | check | compare | monitor | datasets``.

This module parses the arguments and runs ``report``, ``check`` and ``datasets``; ``serve``
(:mod:`calviz.cli_serve`), ``compare`` (:mod:`calviz.cli_compare`) and ``monitor``
(:mod:`calviz.cli_monitor`) live in their own modules and use its helpers (:func:`load_input`,
:class:`CLIError`).

Exit status: 0 success; 1 ``check --fail-on-reject`` and T-Cal rejects calibration; 2 bad usage or an
input file calviz refuses (one line on stderr, no traceback); 3 ``check`` could not compute the
T-Cal decision it was asked to gate on.

Heavy modules (Panel, the engine, scikit-learn) are imported only by the subcommand that needs them, so
``calviz --version`` and ``calviz check`` start quickly.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import signal
import sys
import threading
from pathlib import Path

# (``calviz serve`` lives in its own module; its names stay importable from here)
from calviz.cli_serve import add_serve_parser, cmd_serve
from calviz.cli_serve import session_factory as session_factory
from calviz.cli_serve import websocket_origins as websocket_origins

EXIT_OK, EXIT_REJECT, EXIT_INPUT, EXIT_ENGINE = 0, 1, 2, 3


class CLIError(Exception):
    """A problem reported as one line on stderr with exit status 2."""


# --------------------------------------------------------------------------------------------------
# argument parsing
# --------------------------------------------------------------------------------------------------
class _HelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default (unless the help already says it, or there is none to
    say: flags, and options that are off unless given)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if ("default" in text or action.default is None or action.default is False
                or action.default == argparse.SUPPRESS
                or not action.option_strings or isinstance(action, argparse._VersionAction)):
            return text
        return f"{text} (default: %(default)s)"


def _add_file_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("file columns (CSV / Parquet / NPZ)")
    group.add_argument("--y-true", metavar="COL", help="label column (default: y_true)")
    group.add_argument("--y-prob", metavar="COL", help="binary P(y=1) column (default: y_prob)")
    group.add_argument("--prob-prefix", metavar="PREFIX",
                       help="prefix of the K probability columns PREFIX0..PREFIX{K-1} (default: p_)")
    group.add_argument("--confidence", metavar="COL", help="top-1 confidence column (with --correct)")
    group.add_argument("--correct", metavar="COL", help="0/1 top-1 correctness column (with --confidence)")
    group.add_argument("--format", choices=("csv", "parquet", "npz", "npy"),
                       help="file format (default: from the extension, else the first bytes)")
    group.add_argument("--pos-label", metavar="LABEL",
                       help="binary files: the label whose probability the y_prob column is, when the "
                            "labels are class names (no/yes) or not 0/1 (e.g. -1/1)")
    group.add_argument("--renormalize", action="store_true",
                       help="rescale multiclass probability rows to sum to 1")
    group.add_argument("--logits", action="store_true",
                       help="the probability columns hold logits (unnormalised scores): apply a stable "
                            "softmax per row (a sigmoid for one column)")


def _add_analysis_options(parser: argparse.ArgumentParser) -> None:
    """One flag per analysis option, generated from the option schema (:mod:`calviz.analysis.options`)."""
    from calviz.analysis.options import add_arguments
    from calviz.sampling import SAMPLED_ROWS

    sizes = ", ".join(f"{size:,} ({name.replace('_', ' ')})" for name, size in SAMPLED_ROWS.items())
    add_arguments(parser.add_argument_group("analysis options"), extra_help={
        "all_rows": f" (default: each on a uniform subsample of {sizes} rows when there are more, with its "
                    "sampling error stated)"})


def build_parser() -> argparse.ArgumentParser:
    from calviz import __version__
    from calviz.cli_compare import add_compare_command, add_comparison_options
    from calviz.cli_monitor import add_time_options

    parser = argparse.ArgumentParser(
        prog="calviz", formatter_class=_HelpFormatter,
        description="Is your classifier calibrated? T-Cal test, ECE confidence interval and distance "
                    "bounds — as a live dashboard, a static HTML report or numbers for CI.",
        epilog="exit status: 0 ok, 1 check --fail-on-reject and T-Cal rejects, 2 bad usage or input file, "
               "3 the T-Cal decision could not be computed",
    )
    parser.add_argument("--version", action="version", version=f"calviz {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{serve,report,check,compare,monitor,datasets}")

    add_serve_parser(sub, _HelpFormatter, _add_file_options, _add_weight_option)

    report = sub.add_parser("report", formatter_class=_HelpFormatter,
                            help="write a self-contained static HTML report",
                            description="Write one self-contained HTML file (no network needed to view it).")
    report.add_argument("file", help="predictions file (CSV, Parquet, NPZ, NPY) or `dataset:NAME`")
    # (calviz.present.report.DEFAULT_REPORT_NAME, written out: importing the report would slow every start)
    report.add_argument("-o", "--output", default="calviz-report.html",
                        help="output path (default calviz-report.html)")
    report.add_argument("--title", help="report title (default: the file name)")
    _add_file_options(report)
    add_time_options(report)
    _add_weight_option(report)
    _add_analysis_options(report)
    add_comparison_options(report)

    check = sub.add_parser("check", formatter_class=_HelpFormatter,
                           help="print the T-Cal decision, ECE interval and distance bounds",
                           description="Print the T-Cal decision, the ECE with its confidence interval and "
                                       "the distance-to-calibration bounds.")
    check.add_argument("file", help="predictions file (CSV, Parquet, NPZ, NPY) or `dataset:NAME`")
    check.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    check.add_argument("--fail-on-reject", action="store_true",
                       help="exit with status 1 when T-Cal rejects calibration (for CI pipelines)")
    check.add_argument("--scheduler",
                       help="analyse a Parquet file/directory out of core on Dask: a scheduler address "
                            "(tcp://host:8786) or 'local' for a temporary LocalCluster")
    _add_file_options(check)
    add_time_options(check)
    _add_weight_option(check)
    _add_analysis_options(check)
    add_comparison_options(check)

    add_compare_command(sub, _HelpFormatter, _add_file_options, _add_analysis_options)
    from calviz.cli_monitor import add_monitor_parser

    add_monitor_parser(sub, _HelpFormatter, _add_file_options)
    sub.add_parser("datasets", help="list the embedded datasets", description="List the embedded datasets.")
    return parser


# --------------------------------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------------------------------
DATASET_PREFIX = "dataset:"


def _reader_kwargs(args) -> dict:
    """Keyword arguments for :func:`calviz.io.read_predictions` from the file options (only those
    given, so the reader's defaults apply otherwise).  A local file the user names has no size limit."""
    kw = {"max_bytes": None}
    for name in ("y_true", "y_prob", "prob_prefix", "confidence", "correct", "format", "pos_label"):
        value = getattr(args, name, None)
        if value:
            kw[name] = value
    for flag in ("renormalize", "logits"):
        if getattr(args, flag, False):
            kw[flag] = True
    return kw


def needs_matrix(args) -> bool:
    """Whether ``check`` / ``report`` with these flags need a multiclass file's whole probability
    matrix in memory: the ``topk`` and ``full`` targets and the comparisons do; the scalar targets
    (top-1, one class against the rest) need only the labels, the top-1 view and single columns
    (``read_predictions(..., keep_matrix=False)``: 24 bytes a row instead of 8·(K + 1))."""
    from calviz.cli_compare import has_comparison_options

    scalar = getattr(args, "target", "auto") in ("auto", "top1", "classwise")
    return not scalar or has_comparison_options(args)


def load_input(file: str, args=None, *, keep_matrix: bool = True):
    """A predictions file, or ``dataset:NAME`` for an embedded dataset, as CalibrationData.
    ``keep_matrix=False``: see :func:`needs_matrix`.

    Any problem (missing file, unknown format, a rule of the input conventions broken) becomes a
    :class:`CLIError` carrying the reader's one-line message."""
    from calviz._data import InputError

    try:
        if file.startswith(DATASET_PREFIX):
            from calviz.datasets import load_dataset

            return load_dataset(file[len(DATASET_PREFIX):])
        path = Path(file)
        if not path.exists():
            raise CLIError(f"{file}: no such file")
        if path.is_dir():
            raise CLIError(f"{file}: is a directory, expected a predictions file")
        from calviz.io import read_predictions

        kwargs = _reader_kwargs(args) if args is not None else {"max_bytes": None}
        return read_predictions(path, keep_matrix=keep_matrix, **kwargs)
    except CLIError:
        raise
    except (InputError, ValueError, KeyError, OSError, UnicodeDecodeError) as exc:
        raise CLIError(_about(file, exc)) from None
    except Exception as exc:  # a reader library's own exception type (pandas/pyarrow parser errors)
        raise CLIError(f"{file}: could not read predictions ({type(exc).__name__}: {exc})") from None


def options_from_args(args):
    """The :class:`~calviz.analysis.AnalysisOptions` described by the command-line flags."""
    from calviz._data import InputError
    from calviz.analysis import AnalysisOptions

    for flag, value, target in (("--class-index", args.class_index, "classwise"),
                                ("--top-k", args.top_k, "topk")):
        if value is not None and args.target != target:
            raise CLIError(f"{flag} applies to --target {target} only; got --target {args.target}")
    from calviz.analysis.options import values_from_arguments

    values = values_from_arguments(args)
    _check_flags(values, AnalysisOptions.parameter_constraints)  # the options' own rules
    try:
        return AnalysisOptions(**values)
    except InputError as exc:
        raise CLIError(str(exc)) from None


def _check_flags(values: dict, rules: dict) -> None:
    """Each value by its rule (option → constraint), refused worded with the flag the user typed rather
    than the option's Python name."""
    for name, value in values.items():
        rule = rules[name]
        if not rule.accepts(value):
            # (getattr: None means the flag was omitted, so the rule without "or None")
            raise CLIError(f"{_flag(name)} must be {getattr(rule, 'inner', rule)}; got {value!r}")


def _check_comparison_flags(args) -> None:
    """The comparison flags given, checked before any file is read or analysed."""
    from calviz.cli_compare import comparison_flag_rules

    rules = comparison_flag_rules()
    _check_flags({name: getattr(args, name) for name in rules if getattr(args, name) is not None}, rules)


def _flag(option: str) -> str:
    """The command-line flag of an option (``class_index`` → ``--class-index``; the option schema's)."""
    from calviz.analysis.options import option as declared

    try:
        return declared(option).cli_flag
    except KeyError:  # a comparison flag's option
        return "--" + option.replace("_", "-")


def check_options_fit(data, options) -> None:
    """The options that depend on the data (a class index, k), checked once the file is read and worded with
    their flags (:func:`calviz.analysis.check_options_fit`)."""
    import re

    from calviz._params import InvalidParameterError
    from calviz.analysis import check_options_fit as check

    try:
        check(data, options)
    except InvalidParameterError as exc:
        message = re.sub(r"^The '(\w+)' parameter of \w+", lambda m: _flag(m.group(1)), str(exc))
        raise CLIError(message) from None


def _as_dict(result) -> dict | None:
    from calviz._results import strict_json

    return strict_json(result)


def _num(value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


# --------------------------------------------------------------------------------------------------
# calviz check
# --------------------------------------------------------------------------------------------------
def check_summary(data, options, *, source: str = "", analysis=None) -> dict:
    """The numbers ``calviz check`` prints, as a JSON-ready dict.

    Keys: ``decision`` ("reject" / "not rejected" / null when T-Cal is unavailable), ``reject``,
    ``pvalue`` (the adaptive test's adjusted p-value), ``tcal`` (the full T-Cal result), ``ece``
    (``estimate``, ``low``, ``high``, ``level`` of the asymptotic interval for the ℓ2-ECE, plus the full
    result), ``bounds`` (every distance-to-calibration measure and the implied interval for dCE),
    ``summary`` (n, K, target, accuracy), ``options``, ``errors`` (views that could not be computed).
    """
    from calviz import __version__
    from calviz.analysis import analyze
    from calviz.analysis.views import view_names

    views = view_names(in_check=True)  # (the resampled T-Cal only when a resampling is asked: View.applies)
    result = analysis if analysis is not None else analyze(data, options, views=views)
    # the decision asked for: the resampled test when resampling is chosen (never silently the analytic
    # one in its place — a failed resampled test leaves the decision unavailable)
    tcal = result.tcal if options.resampling == "analytic" else result.tcal_resampled
    reject = None if tcal is None else tcal.reject
    interval = result.interval
    ece = _as_dict(interval)
    if ece is not None:
        ece = {
            "estimate": _num(interval.estimate),
            "low": _num(interval.low),
            "high": _num(interval.high),
            "level": _num(interval.level),
            **{k: v for k, v in ece.items() if k not in ("estimate", "low", "high", "level")},
        }
    from calviz.present.verdict import overall_verdict

    verdict, reasons = overall_verdict(tcal=tcal, interval=interval, classical=result.classical,
                                       bootstrap=getattr(result, "bootstrap", None), alpha=options.alpha)
    return {
        "calviz_version": __version__,
        "source": source,
        "verdict": verdict,
        "verdict_reasons": reasons,
        "decision": None if reject is None else (
            "undecided" if tcal.decision == "undecided"
            else "reject" if bool(reject) else "not rejected"),
        "reject": None if reject is None else bool(reject),
        "pvalue": None if tcal is None else _num(tcal.pvalue),
        "pvalue_is_bound": None if tcal is None else tcal.pvalue_is_bound,
        "alpha": options.alpha,
        "tcal": _as_dict(tcal),
        "ece": ece,
        "bounds": _as_dict(result.distance),
        "summary": _as_dict(result.summary),
        "options": _as_dict(options),
        "classical": _as_dict(result.classical),
        **_table_views(result, views),
        **({"corp": _corp_summary(result.corp)} if "corp" in views and options.scheme == "corp" else {}),
        "errors": dict(result.errors),
    }


def _corp_summary(corp) -> dict | None:
    """The CORP diagram in JSON: the isotonic curve as its steps (the prediction where each block of equal
    value starts, and the value: exact, and short however many distinct predictions there are), the
    consistency band at its points, the Brier decomposition and the caption."""
    import numpy as np

    from calviz.present.verification import corp_caption

    if corp is None:
        return None
    fit = np.asarray(corp.recalibrated)
    starts = np.flatnonzero(np.r_[True, fit[1:] != fit[:-1]])
    shown = {k: v for k, v in _as_dict(corp).items() if k not in ("x", "recalibrated", "weight")}
    steps = {"x": np.asarray(corp.x)[starts].tolist(), "recalibrated": fit[starts].tolist()}
    return {**shown, "steps": steps, "caption": corp_caption(corp)}


def _table_views(result, views) -> dict:
    """The checked views drawn as a table (the registry's ``View.frame``), each under its name: its result
    and its caption (the text output prints the caption), or None when not computed (a view that does not
    apply to these data, e.g. the over-time view without a time column, is left out)."""
    from calviz.analysis.views import view as view_record

    shown = {}
    for name in views:
        record = view_record(name)
        if record.frame is not None:
            value = getattr(result, name, None)
            if value is None and name not in result.errors:  # it does not apply (e.g. no time column)
                continue
            shown[name] = None if value is None else {**_as_dict(value), "caption": record.caption(value)}
    return shown


def _print_check_text(summary: dict) -> None:
    from calviz._results import format_number as _fmt  # (short: many in a line)
    from calviz._results import format_pvalue as _fmt_p

    s = summary["summary"] or {}
    alpha = summary["alpha"]
    target = s.get("target")
    if target == "classwise":
        target = f"classwise (class {summary['options']['class_index']})"

    def on(section) -> str:
        """The target a line analyses when it is not the header's: T-Cal tests a top-k or full target through
        its full or sorted vector, and the distance measures through the top-1 confidence."""
        other = (section or {}).get("target")
        return f" [{other} target]" if other and other != s.get("target") else ""

    print(f"calviz {summary['calviz_version']} check {summary['source']}")
    if summary.get("verdict"):
        import textwrap

        print(textwrap.fill(f"  verdict  {summary['verdict']}", 110, subsequent_indent="           "))
        for reason in summary.get("verdict_reasons") or ():
            print(textwrap.fill(f"           - {reason}", 110, subsequent_indent="             "))
    print(f"  data     n = {s.get('n')}, K = {s.get('n_classes')}, target = {target}, "
          f"accuracy = {_fmt(s.get('accuracy'))}, mean confidence = {_fmt(s.get('mean_confidence'))}")
    if summary.get("weights_note"):
        print(f"  weights  {summary['weights_note']}")
    if summary.get("weighted_ece"):
        weighted = summary["weighted_ece"]
        print(f"  weighted ECE {_fmt(weighted['value'])} (ℓ1 plug-in, {weighted['n_bins']} "
              f"{weighted['scheme'].replace('_', '-')} bins, {weighted['target']} target)")
    if summary["decision"] is None:
        print("  T-Cal    not available")
    else:
        from calviz.present.text import tcal_decision_words

        verdict = tcal_decision_words(summary["decision"], "sentence")
        print(f"  T-Cal    {verdict} at α = {alpha:g} (adjusted p-value "
              f"{_fmt_p(summary['pvalue'], bound=bool(summary.get('pvalue_is_bound')))})"
              f"{on(summary['tcal'])}")
        tcal = summary["tcal"] or {}
        interval, used = tcal.get("pvalue_interval"), tcal.get("n_resamples")
        if interval and used and tcal.get("method") in ("y_only", "consistency"):
            print(f"           Monte Carlo interval [{_fmt_p(interval[0])}, {_fmt_p(interval[1])}] after "
                  f"{used} "
                  f"{tcal.get('method').replace('_', '-')} resamples")
    ece = summary["ece"]
    if ece is None:
        print("  ECE      not available")
    else:
        level = ece.get("level")
        level_txt = f"{100 * level:.0f}% " if level is not None else ""
        from calviz.present.text import bins_phrase

        bins = "? bins" if not ece.get("n_bins") else bins_phrase(ece["n_bins"], ece.get("target"),
                                                                   ece.get("n_classes"))
        print(f"  ECE      {_fmt(ece['estimate'])}  ({level_txt}interval [{_fmt(ece['low'])}, "
              f"{_fmt(ece['high'])}], {bins}, {ece.get('method', '')}){on(ece)}")
    bounds = summary["bounds"]
    if bounds is None:
        print("  distance not available")
    else:
        from calviz.present.labels import measure_label

        def by(kind: str) -> str:
            """The measure that gives the bound (the inequality behind it and its reference: --json)."""
            bound = bounds.get(f"{kind}_bound")
            known = isinstance(bound, dict) and bound.get("measure")
            return measure_label(bound["measure"]) if known else "?"

        lower, upper = bounds.get("lower"), bounds.get("upper")
        if lower is not None or upper is not None:
            print(f"  distance to calibration of these predictions: between {_fmt(lower)} and {_fmt(upper)}"
                  f"{on(bounds)}\n    lower bound from {by('lower')}, upper bound from {by('upper')} "
                  "(Błasiok et al. 2023; the inequalities: --json)")
        measures = bounds.get("measures")
        if not isinstance(measures, dict):  # another layout: every top-level number
            measures = {k: v for k, v in bounds.items() if isinstance(v, (int, float)) and k not in (
                "lower", "upper") and not isinstance(v, bool)}
        # each measure is a record {"value": …, "inequality": …, band} (or, in another layout, a number)
        values = {k: v.get("value") if isinstance(v, dict) else v for k, v in measures.items()}
        shown = [f"{measure_label(k)} {_fmt(v)}" for k, v in values.items() if isinstance(v, (int, float))]
        if shown:
            print("    measures: " + ", ".join(shown))
    _print_classical(summary.get("classical"), alpha)
    import textwrap

    from calviz.analysis.views import REGISTRY

    for record in REGISTRY:
        name = record.name
        if record.frame is not None and name in summary:
            shown = summary[name]
            line = f"  {record.label}: " + (shown["caption"] if shown else "not available")
            print(textwrap.fill(line, 110, subsequent_indent="    ", break_on_hyphens=False))
    if summary.get("corp") is not None:
        print(textwrap.fill("  CORP     " + summary["corp"]["caption"], 110, subsequent_indent="    ",
                            break_on_hyphens=False))
    for view, message in summary["errors"].items():
        print(f"  note: {view}: {message}")


def _print_classical(classical: dict | None, alpha: float) -> None:
    from calviz._classical import TEST_LABELS
    from calviz._results import format_number as _fmt  # (short: many in a line)
    from calviz._results import format_pvalue as _fmt_p

    if classical is None:
        return
    measures = classical.get("measures") or {}
    if measures:
        mce, ace = measures.get("mce") or {}, measures.get("ace") or {}
        print(f"  MCE      {_fmt(mce.get('value'))} ({mce.get('n_bins')} equal-width bins)   "
              f"ACE {_fmt(ace.get('value'))} ({ace.get('n_bins')} equal-mass bins, classwise)")
    print(f"  other tests at α = {alpha:g} ({classical.get('target')}):")
    for test in classical.get("tests", []):
        verdict = "rejects" if test["pvalue"] is not None and test["pvalue"] <= alpha else "does not reject"
        fit = (f" (fitted intercept {_fmt(test['intercept'])}, slope {_fmt(test['slope'])})"
               if test.get("slope") is not None else "")
        stat, p = _fmt(test["statistic"]), _fmt_p(test["pvalue"])
        print(f"    {test['label']:<32} statistic {stat:>10}  p {p:>8}  {verdict}{fit}")
    for name, message in (classical.get("errors") or {}).items():
        print(f"    {TEST_LABELS.get(name, name):<32} not computed: {message}")


def _comparisons(args, data, options) -> dict:
    """The ``--compare`` / ``--group-by`` / ``--recalibrate`` sections (calviz.cli_compare), JSON-ready."""
    from calviz._data import InputError
    from calviz.cli_compare import comparison_summary, compute_comparisons, has_comparison_options

    if not has_comparison_options(args):
        return {}
    try:
        return comparison_summary(compute_comparisons(args, data, options, load_input=load_input))
    except InputError as exc:
        raise CLIError(str(exc)) from None


def _add_weight_option(parser) -> None:
    parser.add_argument("--weight-column", metavar="COL",
                        help="a column of non-negative sample weights (a row of weight k counts as k rows) "
                             "for the views that take weights; the others are listed as not weighted")


def with_weight_column(data, args):
    """``data`` carrying the sample weights of column ``args.weight_column`` of ``args.file`` (read by
    :func:`calviz.io.read_weight_column`, validated once by :func:`calviz._weights.with_weights`);
    unchanged without one."""
    from calviz._data import InputError
    from calviz._weights import with_weights
    from calviz.io import read_weight_column

    column = getattr(args, "weight_column", None)
    if column is None or data is None:
        return data
    try:
        values = read_weight_column(args.file, column, data.n)
        return with_weights(data, values, name=f"{args.file}: weight column {column!r}")
    except InputError as exc:
        raise CLIError(str(exc)) from None


def _refuse_weights_on_dask(args) -> None:
    """A weight column is read with a file loaded in memory: never silently dropped elsewhere."""
    if getattr(args, "weight_column", None) is not None:
        raise CLIError("--weight-column needs a predictions file loaded in memory (not --scheduler, a "
                       "directory or --watch)")


def weights_summary(data, options, column: str | None) -> dict:
    """``calviz check``'s record of the weights: the column, the views analysed unweighted and the note
    (empty without a weight column)."""
    from calviz.analysis.views import unweighted_views, view_names
    from calviz.present.text import weights_note

    if column is None:
        return {}
    from calviz._ece import binned_ece
    from calviz.analysis import resolve_target

    unweighted = unweighted_views(data, options, view_names(in_check=True))
    # the weighted ECE beside the (unweighted) interval: the ℓ1 plug-in on the analysis' bins and target
    ece = binned_ece(data, n_bins=int(options.n_bins), target=resolve_target(data, options),
                     top_k=int(options.top_k),
                     class_index=int(options.class_index), sample_weight=data.weights)
    return {"weight_column": column, "not_weighted": list(unweighted),
            "weights_note": weights_note(column, unweighted), "weighted_ece": _as_dict(ece)}


def cmd_check(args) -> int:
    from calviz.cli_compare import has_comparison_options, print_comparison_text
    from calviz.cli_monitor import with_time_column

    options = options_from_args(args)
    _check_comparison_flags(args)
    if args.scheduler or Path(args.file).is_dir():
        _refuse_weights_on_dask(args)
        if has_comparison_options(args):
            raise CLIError("--compare, --group-by and --recalibrate need a predictions file loaded in memory")
        analysis = _on_dask(args, "analyze_parquet", options=options)
        summary = check_summary(None, options, source=args.file, analysis=analysis)
    else:
        data = with_weight_column(
            with_time_column(load_input(args.file, args, keep_matrix=needs_matrix(args)), args), args)
        check_options_fit(data, options)
        summary = check_summary(data, options, source=args.file)
        summary.update(weights_summary(data, options, args.weight_column))
        summary.update(_comparisons(args, data, options))
    if args.json:
        print(json.dumps(summary, indent=2, allow_nan=False))
    else:
        _print_check_text(summary)
        print_comparison_text(summary)
    if args.fail_on_reject:
        if summary["reject"] is None:
            errors = summary["errors"]
            reason = errors.get("tcal_resampled") or errors.get("tcal") or "unknown"
            print(f"calviz: error: T-Cal decision unavailable: {reason}", file=sys.stderr)
            return EXIT_ENGINE
        return EXIT_REJECT if summary["reject"] else EXIT_OK
    return EXIT_OK


def _on_dask(args, function: str, **kwargs):
    """``calviz.dask.<function>(FILE, scheduler=…, columns…)`` for a Parquet file or directory analysed
    out of core (``analyze_parquet`` for ``check``, ``open_source`` for ``serve``); problems become one
    :class:`CLIError` line."""
    from calviz._data import InputError

    try:
        func = getattr(importlib.import_module("calviz.dask"), function)
        return func(args.file, scheduler=args.scheduler or "local", y_true=args.y_true, y_prob=args.y_prob,
                    prob_prefix=args.prob_prefix, confidence=args.confidence, correct=args.correct, **kwargs)
    except ImportError as exc:
        raise CLIError(f"{args.file}: Dask is needed for out-of-core analysis (pip install calviz[dask]): "
                       f"{exc}") from None
    except (InputError, ValueError, OSError) as exc:
        raise CLIError(_about(args.file, exc)) from None


def _about(file: str, exc: Exception) -> str:
    """The first line of ``exc``'s message, led by ``file`` unless the message names it already (the
    readers' messages start with the file's name)."""
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return message if Path(file).name in message else f"{file}: {message}"


# --------------------------------------------------------------------------------------------------
# calviz report
# --------------------------------------------------------------------------------------------------
def check_output_path(out: Path) -> None:
    """Refuse an output path that cannot be written, before anything heavy is imported or computed."""
    import os

    from calviz._files import check_target

    parent = out.parent
    if out.is_dir():
        raise CLIError(f"cannot write {out}: it is a directory")
    try:
        check_target(out)  # a device node, a FIFO, …: never replaced with a report
    except OSError as exc:
        raise CLIError(f"cannot write {out}: {exc.strerror}") from None
    if not parent.is_dir():
        raise CLIError(f"cannot write {out}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CLIError(f"cannot write {out}: the directory {parent} is not writable")


class Stopped(KeyboardInterrupt):
    """A stop asked for by SIGTERM or Ctrl+C (:func:`_stop_on_signals`), caught by :func:`main`.

    A subclass, not ``KeyboardInterrupt`` itself: CPython marks an *exact* ``KeyboardInterrupt`` that ends
    a string ``exec``/``eval`` (``dataclasses``, ``namedtuple``, generated code in the libraries a report
    imports) as unhandled even when a caller catches it, and ``python -m calviz`` then ends by SIGINT
    (exit status -2) after :func:`main` has returned 0."""


def _stop_on_signals() -> dict:
    """SIGTERM (a service manager, `kill`) and Ctrl+C stop as :class:`Stopped`, so files being written are
    removed, worker processes stopped, and :func:`main` says "stopped" (no traceback).  The first signal
    disarms both: a second one during that cleanup is ignored instead of interrupting it.  Returns the
    handlers replaced (signal → handler)."""

    def interrupt(*_):
        for each in (signal.SIGINT, signal.SIGTERM):
            signal.signal(each, signal.SIG_IGN)
        raise Stopped

    return {each: signal.signal(each, interrupt) for each in (signal.SIGINT, signal.SIGTERM)}


def cmd_report(args) -> int:
    from calviz.cli_monitor import with_time_column

    out = Path(args.output)
    check_output_path(out)  # at once: the imports below alone take seconds
    from calviz.cli_compare import comparison_html
    from calviz.present.report import render_report, report_output

    options = options_from_args(args)
    _check_comparison_flags(args)
    title = args.title or f"calviz report — {Path(args.file).name if ':' not in args.file else args.file}"
    try:
        with report_output(out) as handle:  # opened before reading and analysing: a bad path fails at once
            data = with_weight_column(
                with_time_column(load_input(args.file, args, keep_matrix=needs_matrix(args)), args), args)
            check_options_fit(data, options)
            extra = comparison_html(_comparisons(args, data, options))
            html = render_report(data, options, title=title, source=args.file, extra_sections=extra)
            handle.write(html)
    except OSError as exc:
        raise CLIError(f"cannot write {out}: {exc.strerror or exc}") from None
    print(f"wrote {out} ({len(html) / 1e6:.1f} MB, self-contained: open it in any browser, offline)")
    return EXIT_OK


# --------------------------------------------------------------------------------------------------
# calviz datasets
# --------------------------------------------------------------------------------------------------
def cmd_datasets(args) -> int:
    from calviz.datasets import DEFAULT_DATASET, list_datasets

    infos = list_datasets()
    width = max(len(i.name) for i in infos)
    print(f"{'name':<{width}}  {'kind':<8}  {'K':>2}  {'n':>6}  description")
    for info in infos:
        mark = "  (default)" if info.name == DEFAULT_DATASET else ""
        print(f"{info.name:<{width}}  {info.kind:<8}  {info.K:>2}  {info.n:>6}  {info.description}{mark}")
    print("\nuse one with: calviz serve --dataset NAME, or calviz check dataset:NAME")
    return EXIT_OK


# --------------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    from calviz._data import InputError, message_for

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # a subcommand is required: say which exist, as for any other usage error
        parser.print_help(sys.stderr)
        return EXIT_INPUT
    from calviz.cli_compare import cmd_compare

    handler = {"serve": cmd_serve, "report": cmd_report, "check": cmd_check, "compare": cmd_compare,
               "datasets": cmd_datasets,
               "monitor": lambda args: importlib.import_module("calviz.cli_monitor").cmd_monitor(args)}
    # every command stops on SIGTERM as on Ctrl+C (exit 0, one line); the caller's handlers come back after
    replaced = _stop_on_signals() if threading.current_thread() is threading.main_thread() else {}
    try:
        return handler[args.command](args)
    except (CLIError, InputError) as exc:  # InputError: an option or input the engine refuses
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"calviz {args.command}: error: {message_for(message, 'cli')}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:  # `calviz check ... | head`
        return EXIT_OK
    except KeyboardInterrupt:  # Ctrl+C, or SIGTERM (:func:`_stop_on_signals`): a stop the user asked for
        print(f"calviz {args.command}: stopped", file=sys.stderr, flush=True)
        return EXIT_OK
    finally:
        for each, previous in replaced.items():
            signal.signal(each, previous)


if __name__ == "__main__":
    sys.exit(main())
