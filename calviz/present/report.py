"""Static HTML report: one self-contained file with all four views, the parameters and a data summary.

The four views are the HoloViews elements of :mod:`calviz.plots`, rendered to Bokeh models and embedded
with :func:`bokeh.embed.components` as four separate Bokeh roots.  BokehJS and its CSS are inlined
(:data:`bokeh.resources.INLINE`), so the file needs no server and no network: open it in any browser,
offline, and the plots keep their Bokeh tools (hover, zoom, pan, save).

``calviz.report(y_true, y_prob, path=..., **options)`` writes the file; :func:`render_report` returns the
HTML as a string (the dashboard's *Export report* button and ``calviz report FILE -o report.html`` use
it).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import html
from pathlib import Path

from calviz._data import CalibrationData, as_calibration_data
from calviz._params import BOOLEAN, PATH, STR, Instance, NoneOr, positional_deprecated, validate_params
from calviz.analysis import Analysis, AnalysisOptions, analyze, check_options_fit, with_option_values
from calviz.analysis.views import REGISTRY, shown_result, view, view_names

__all__ = ["render_report", "report", "render_analysis", "report_output", "VIEW_TITLES"]

#: the views with a section (the registry's ``View.title``), in the order the report shows them (also the
#: Bokeh root names)
VIEW_TITLES = {record.name: f"{number}. {record.title}"
               for number, record in enumerate((r for r in REGISTRY if r.title is not None), 1)}
_VIEW_NAMES = frozenset(view_names())
_SECTIONS = tuple(r for r in REGISTRY if r.title is not None)

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1f2933;
       background: #f7f8fa; }
header { background: #1f3a5f; color: white; padding: 18px 32px; }
header h1 { margin: 0; font-size: 22px; font-weight: 600; }
header .sub { opacity: 0.8; font-size: 13px; margin-top: 4px; }
main { max-width: 1180px; margin: 0 auto; padding: 16px 32px 40px; }
section { background: white; border: 1px solid #e1e5ea; border-radius: 6px; padding: 14px 18px;
          margin: 14px 0; }
h2 { font-size: 17px; margin: 0 0 8px; }
.caption { font-size: 13px; color: #3e4c59; margin: 6px 0 0; }
.explain { font-size: 14px; color: #1f2933; margin: 0 0 6px; }
.explain details { display: inline; font-size: 12px; color: #52606d; }
.explain summary { display: inline; cursor: pointer; color: #3a6fb0; }
.verdicts { display: grid; grid-template-columns: repeat(3, 1fr); gap: 12px; }
.verdict { border-left: 5px solid #5b6470; padding: 8px 12px; background: #f7f8fa; font-size: 13px; }
.verdict b { display: block; font-size: 14px; margin-bottom: 2px; }
.reject { border-color: #c8102e; } .accept { border-color: #0e9384; }
table { border-collapse: collapse; font-size: 13px; }
td, th { padding: 3px 12px 3px 0; text-align: left; vertical-align: top; }
th { color: #52606d; font-weight: 500; }
.tables { display: flex; gap: 48px; flex-wrap: wrap; }
.errors { color: #8a1c1c; font-size: 13px; }
footer { font-size: 12px; color: #7b8794; text-align: center; padding: 12px; }
.plot { width: 100%; }
"""


def _fmt(x, digits: int = 4) -> str:
    if x is None:
        return "—"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, (int,)) and not isinstance(x, bool):
        return str(x)
    try:
        value = float(x)
    except (TypeError, ValueError):
        return html.escape(str(x))
    if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e5):
        return f"{value:.3e}"
    return f"{value:.{digits}f}"


def _rows(pairs) -> str:
    return "".join(f"<tr><th>{html.escape(str(k))}</th><td>{v}</td></tr>" for k, v in pairs)


def _overall_verdict(result: Analysis) -> str:
    """The one verdict and, when the methods disagree, why
    (:func:`calviz.present.verdict.overall_verdict`)."""
    from calviz.present.verdict import overall_verdict

    tcal = result.tcal_resampled if result.tcal_resampled is not None else result.tcal
    verdict, reasons = overall_verdict(tcal=tcal, interval=result.interval, bootstrap=result.bootstrap,
                                       classical=result.classical, alpha=result.options.alpha)
    items = "".join(f"<li>{html.escape(r)}</li>" for r in reasons)
    return (f'<p class="overall"><strong>{html.escape(verdict)}</strong></p>'
            + (f'<p>Why the methods disagree:</p><ul class="reasons">{items}</ul>' if items else ""))


def _verdicts(result: Analysis) -> str:
    from calviz.present.text import (
        DISTANCE_MISSING,
        INTERVAL_MISSING,
        TCAL_MISSING,
        distance_caption,
        interval_caption,
        tcal_caption,
        tcal_decision,
        tcal_decision_words,
    )

    tcal = result.tcal_resampled if result.tcal_resampled is not None else result.tcal
    boxes = []
    if tcal is not None:
        decision = tcal_decision(tcal)
        head = f"T-Cal {tcal_decision_words(decision, 'sentence')}"
        boxes.append((decision if decision != "undecided" else "", head, tcal_caption(tcal)))
    else:
        boxes.append(("", TCAL_MISSING, result.errors.get("tcal", "")))
    interval = result.interval
    if interval is not None:
        low, high = interval.confidence_interval()
        head = f"ℓ2-ECE {_fmt(interval.estimate)} in [{_fmt(low)}, {_fmt(high)}]"
        boxes.append((("reject" if (low or 0) > 0 else "accept"), head, interval_caption(interval)))
    else:
        boxes.append(("", INTERVAL_MISSING, result.errors.get("interval", "")))
    bounds = result.distance
    if bounds is not None:
        lower, upper = bounds.lower, bounds.upper
        head = (f"distance to calibration in [{_fmt(lower)}, {_fmt(upper)}]" if lower is not None
                else "distance-to-calibration measures")
        # neutral: a size, not a test (the sample's distance is above 0 even for a calibrated model)
        boxes.append(("", head, distance_caption(bounds)))
    else:
        boxes.append(("", DISTANCE_MISSING, result.errors.get("distance", "")))
    return "".join(
        f'<div class="verdict {cls}"><b>{html.escape(head)}</b>{html.escape(text)}</div>'
        for cls, head, text in boxes
    )


def _figures(result: Analysis) -> dict:
    """view name -> HoloViews element of every section with a figure (the registry's ``View.figure``)."""
    return {record.name: record.figure(result) for record in _SECTIONS if record.figure is not None}


def _captions(result: Analysis) -> dict:
    """view name -> the caption under its figure (the registry's ``View.caption`` of the result shown)."""
    return {record.name: record.caption(shown_result(result, record.name)) for record in _SECTIONS
            if record.figure is not None and record.caption is not None}


def _explanation(name: str) -> str:
    """One plain sentence on what the view shows, with the mathematics behind a "more" toggle."""
    from calviz.plots import VIEW_EXPLANATIONS

    sentence, maths = VIEW_EXPLANATIONS[name]
    return (f'<div class="explain">{html.escape(sentence)} <details><summary>more</summary> '
            f"{html.escape(maths)}</details></div>")


#: report labels of the analysis options (the API keyword → what it means)
PARAMETER_NAMES = {
    "target": "calibration target",
    "class_index": "class (classwise target)",
    "top_k": "k (top-1-to-k target)",
    "n": "sample size",
    "scheme": "binning",
    "n_bins": "bins",
    "kernel": "smooth-curve kernel",
    "bandwidth": "smooth-curve bandwidth",
    "alpha": "level α",
    "resampling": "T-Cal critical values",
    "n_resamples": "resamples",
    "seed": "random seed",
    "all_rows": "every view on all rows",
}


def parameter_rows(options, n_total: int | None = None) -> list[tuple[str, str]]:
    """The options of an analysis as (label, value) rows in words, for the report.

    ``None`` says what it means ("all rows", "automatic"), and ``class_index`` / ``top_k`` appear only
    for the target that reads them.

    Parameters
    ----------
    options : AnalysisOptions
        The options of the analysis.
    n_total : int, optional
        Rows of the data: a subsample size ``n`` of at least as many is all rows, as the analysis reads it.

    Returns
    -------
    list of tuple of str
        (label, value) per option that applies.

    Examples
    --------
    >>> from calviz.analysis import AnalysisOptions
    >>> from calviz.present.report import parameter_rows
    >>> dict(parameter_rows(AnalysisOptions()))["sample size"]
    'all rows'
    """
    from calviz.present.labels import method_name

    values = options.to_dict()
    whole = values["n"] is None or (n_total is not None and values["n"] >= n_total)
    shown = {
        "n": "all rows" if whole else f"uniform subsample of {values['n']:,} rows",
        "all_rows": "yes" if values["all_rows"] else "no (on large data some views use a subsample)",
        "bandwidth": "automatic" if values["bandwidth"] is None else f"{values['bandwidth']:g}",
        "scheme": str(values["scheme"]).replace("_", "-"),
        "kernel": str(values["kernel"]).replace("_", " "),
        "resampling": method_name(values["resampling"]),
    }
    skip = {"class_index"} if values["target"] != "classwise" else set()
    skip |= {"top_k"} if values["target"] != "topk" else set()
    return [(PARAMETER_NAMES.get(key, key.replace("_", " ")), str(shown.get(key, value)))
            for key, value in values.items() if key not in skip]


def source_name(source: str | None) -> str:
    """What the report says its data came from.

    A file's base name (never the directories above it, which may say more about the machine than the
    data), ``dataset:NAME`` or an app dataset as given.

    Parameters
    ----------
    source : str or None
        A path, ``dataset:NAME``, a dataset name, or None for arrays.

    Returns
    -------
    str
        The name shown.

    Examples
    --------
    >>> from calviz.present.report import source_name
    >>> source_name("/home/me/project/preds.csv"), source_name(None)
    ('preds.csv', 'arrays passed in Python')
    """
    if not source:
        return "arrays passed in Python"
    if source.startswith("dataset:") or ("/" not in source and "\\" not in source):
        return source
    return Path(source).name or source


def _bokeh_models(figures: dict) -> dict:
    import holoviews as hv

    models = {}
    for name, element in figures.items():
        model = hv.render(element, backend="bokeh")
        model.name = f"calviz-{name}"
        model.sizing_mode = "stretch_width"
        models[name] = model
    return models


def _inline_resources(models) -> str:
    """BokehJS (and the extensions these models use) as inline ``<script>``/``<style>`` blocks.

    Only the bundle's *raw* parts are emitted: its ``js_files`` are URLs relative to a Bokeh/Panel
    server's static route (Panel registers an ES-module shim there) that a stand-alone file cannot
    load, and HoloViews' Bokeh figures do not need them."""
    from bokeh.embed.bundle import bundle_for_objs_and_resources
    from bokeh.resources import INLINE

    bundle = bundle_for_objs_and_resources(list(models), INLINE)
    css = "".join(f"<style>\n{code}\n</style>\n" for code in bundle.css_raw)
    js = "".join(f'<script type="text/javascript">\n{code}\n</script>\n' for code in bundle.js_raw)
    return css + js


def _table_section(name: str, result, error: str) -> str:
    """The section of a view drawn as a table (its registry ``View.frame``): its columns and its caption
    (``View.caption``), or why it is missing."""
    record = view(name)
    # (named as the drawn sections' Bokeh roots: a link or a test finds every view's section the same way)
    head = f'<section id="calviz-{name}"><h2>{html.escape(VIEW_TITLES[name])}</h2>{_explanation(name)}'
    if result is None:
        return f'{head}<p class="errors">not computed: {html.escape(error)}</p></section>'
    columns = record.frame(result)
    titles = "".join(f"<th>{html.escape(k)}</th>" for k in columns)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(str(values[i]))}</td>" for values in columns.values())
                   + "</tr>" for i in range(len(next(iter(columns.values())))))
    return (f'{head}{_static_figure(name, result)}<table><tr>{titles}</tr>{rows}</table>'
            f'<p class="caption">{html.escape(record.caption(result))}</p></section>')


def _static_figure(name: str, result) -> str:
    """A table view's static figure above its table ("" for views without one): the over-time view's
    windows and monitor (an inline SVG, offline)."""
    if name != "over_time":
        return ""
    from calviz.present.over_time import over_time_svg

    return f'<div class="plot">{over_time_svg(result)}</div>'



def _classical_section(classical) -> str:
    """The last section: MCE, ACE and the classical tests (calviz.classical) with their decisions at α, or
    why they are missing (a string)."""
    from calviz.present.frames import classical_columns
    from calviz.present.text import classical_caption

    if classical is None:
        return ""
    head = f"<section><h2>{len(VIEW_TITLES) + 1}. Other calibration tests</h2>{_explanation('classical')}"
    if isinstance(classical, str):
        return f'{head}<p class="errors">not computed: {html.escape(classical)}</p></section>'
    columns = classical_columns(classical)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(columns[k][i])}</td>" for k in columns) + "</tr>"
                   for i in range(len(columns["test"])))
    return (f"{head}<table><tr><th>test</th><th>statistic</th><th>p-value</th>"
            f"<th>decision at α = {classical.alpha:g}</th><th>what it detects</th></tr>{rows}</table>"
            f'<p class="caption">Tests {html.escape(classical_caption(classical))}.</p></section>')


@validate_params({"title": STR, "source": NoneOr(STR), "extra_sections": STR})
def render_analysis(result: Analysis, *, title: str = "calviz report", source: str | None = None,
                    extra_sections: str = "") -> str:
    """The report HTML for an already computed :class:`~calviz.analysis.Analysis`.

    Parameters
    ----------
    result : Analysis
        From :func:`calviz.analyze`.
    title : str, default "calviz report"
        The page title.
    source : str, optional
        Where the data came from (only its base name is shown, :func:`source_name`).
    extra_sections : str, default ""
        HTML ``<section>`` elements placed after the summary (e.g. the comparison sections).

    Returns
    -------
    str
        One self-contained HTML document (BokehJS inlined).

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> from calviz.present.report import render_analysis
    >>> result = calviz.analyze((y, p), resampling="analytic", resampled=False)
    >>> html = render_analysis(result, title="my model")
    >>> html.startswith("<!DOCTYPE html>"), "my model" in html
    (True, True)
    """
    import bokeh
    from bokeh.embed import components

    from calviz import __version__
    from calviz._notebook import no_notebook_output

    with no_notebook_output():  # (a notebook cell that writes a report gets no BokehJS printed into it)
        models = _bokeh_models(_figures(result))
    script, divs = components(models)
    s = result.summary
    n_txt = f"{s.n:,}" + (f" (uniform subsample of {s.n_total:,} rows)" if s.n_total != s.n else "")
    summary_rows = [
        ("source", html.escape(source_name(source))),
        ("n", n_txt),
        ("classes K", f"{s.n_classes}" + (" (binary)" if s.is_binary else "")),
        ("calibration target", html.escape(s.target)),
        ("accuracy (top-1)", _fmt(s.accuracy)),
        ("mean confidence (top-1)", _fmt(s.mean_confidence)),
    ]
    option_rows = [(k, html.escape(v)) for k, v in parameter_rows(result.options, s.n_total)]
    from calviz.present.progress import compute_times

    took, took_details = compute_times(result.timings)
    # how long the computations took is about this run, not about the model: a footnote, not a section
    compute_note = (f"<details><summary>Computed in {html.escape(took)}</summary><p>"
                    f"{html.escape(took_details)}. The first run after installing calviz also compiles its "
                    "kernels (cached on disk for later runs).</p></details>") if took else ""
    captions = _captions(result)
    sections = "".join(
        _table_section(name, getattr(result, name, None), result.errors.get(name, "")) if name not in divs
        else f'<section><h2>{html.escape(VIEW_TITLES[name])}</h2>{_explanation(name)}'
        f'<div class="plot">{divs[name]}</div>'
        + (f'<p class="caption">{html.escape(captions[name])}</p>' if captions.get(name) else "")
        + "</section>"
        for name in VIEW_TITLES
    )
    errors = ""
    # a message beside a result says how it was computed (e.g. on a subsample); one without, why it is missing
    notes = {k: v for k, v in result.errors.items() if getattr(result, k, None) is not None}
    missing = {k: v for k, v in result.errors.items() if k not in notes}
    for heading, messages, css in (("Notes", notes, "notes"), ("Not computed", missing, "errors")):
        if messages:
            items = "".join(f"<li>{html.escape(k)}: {html.escape(v)}</li>" for k, v in messages.items())
            errors += f'<section class="{css}"><h2>{heading}</h2><ul>{items}</ul></section>'
    generated = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="calviz {__version__}">
<title>{html.escape(title)}</title>
<style>{_CSS}</style>
{_inline_resources(models.values())}
</head>
<body>
<header><h1>{html.escape(title)}</h1>
<div class="sub">calviz {__version__} · Bokeh {bokeh.__version__} · generated {generated} ·
self-contained: works offline, plots are interactive (hover, zoom, pan)</div></header>
<main>
<section><h2>Summary</h2>{_overall_verdict(result)}<div class="verdicts">{_verdicts(result)}</div></section>
{extra_sections}
<section class="tables">
<div><h2>Data</h2><table>{_rows(summary_rows)}</table></div>
<div><h2>Parameters</h2><table>{_rows(option_rows)}</table></div>
</section>
{errors}
{sections}
{_classical_section(result.classical or result.errors.get("classical"))}
</main>
<footer>calviz {__version__} — T-Cal (Lee, Huang, Hassani and Dobriban, JMLR 2023), the ECE confidence
interval (Sun, Chaudhari, Barnett and Dobriban, 2024), distance to calibration (Błasiok, Gopalan, Hu and
Nakkiran, STOC 2023; smCE in nearly-linear time: Hu, Jambulapati, Tian and Yang, 2024){compute_note}</footer>
{script}
</body>
</html>
"""


@validate_params({"options": NoneOr(Instance(AnalysisOptions)), "title": STR, "source": NoneOr(STR),
                  "resampled": BOOLEAN, "analysis": NoneOr(Instance(Analysis)), "extra_sections": STR})
def render_report(
    data,
    options: AnalysisOptions | None = None,
    *,
    title: str = "calviz report",
    source: str | None = None,
    resampled: bool = True,
    analysis: Analysis | None = None,
    extra_sections: str = "",
) -> str:
    """Analyse predictions and return the report as one self-contained HTML document.

    The four views (reliability diagram, multi-scale T-Cal, ECE interval beside the bootstrap one,
    distance bounds), the verdicts, the parameters, a data summary and the calviz version; BokehJS is
    inlined, so the page opens offline and its plots stay interactive.

    Parameters
    ----------
    data : CalibrationData or (y_true, y_prob)
        The predictions.
    options : AnalysisOptions, optional
        The analysis' options (default :class:`~calviz.analysis.AnalysisOptions`).
    title : str, default "calviz report"
        The page title.
    source : str, optional
        Where the data came from (only its base name is shown).
    resampled : bool, default True
        False skips the bootstrap interval and resampled T-Cal.
    analysis : Analysis, optional
        Results already computed for ``(data, options)`` (the dashboard passes its own, so the report
        shows exactly what the app shows); nothing is recomputed then.
    extra_sections : str, default ""
        HTML ``<section>`` elements placed after the summary.

    Returns
    -------
    str
        The HTML document.

    See Also
    --------
    report : The same, written to a file.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> from calviz.analysis import AnalysisOptions
    >>> from calviz.present.report import render_report
    >>> html = render_report((y, p), AnalysisOptions(resampling="analytic"), resampled=False)
    >>> "<html" in html and "T-Cal" in html
    True
    """
    if analysis is None:
        if isinstance(data, tuple):
            data = as_calibration_data(*data)
        analysis = analyze(as_calibration_data(data), options or AnalysisOptions(), resampled=resampled)
    return render_analysis(analysis, title=title, source=source,
                           extra_sections=_weights_section(data, analysis) + extra_sections)


def _weights_section(data, analysis: Analysis) -> str:
    """The note of data carrying sample weights: the views of the report that ignore them ("" without)."""
    from calviz.analysis.views import unweighted_views
    from calviz.present.text import weights_note

    if getattr(data, "weights", None) is None:
        return ""
    note = weights_note("", unweighted_views(data, analysis.options))
    return f'<section class="notes"><h2>Sample weights</h2><p>{html.escape(note)}</p></section>'


@contextlib.contextmanager
@validate_params({"path": PATH})
def report_output(path):
    """Write a report atomically, checking the output place before anything is computed.

    A context manager: a temporary file is created beside ``path`` at once (so a missing directory or a
    read-only place fails *before* anything is computed), the caller writes the text to the yielded
    handle, and only a complete write is renamed over ``path`` — a failed write (disk full, file-size
    limit) leaves any previous report intact and removes the temporary file.

    Parameters
    ----------
    path : str or path-like
        The report's file.

    Returns
    -------
    contextlib.AbstractContextManager
        Yields a text handle to write to.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from calviz.present.report import report_output
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     target = pathlib.Path(tmp) / "r.html"
    ...     with report_output(target) as handle:
    ...         _ = handle.write("<html></html>")
    ...     print(target.read_text())
    <html></html>
    """
    from calviz._files import atomic_text

    with atomic_text(path) as handle:  # (anything but a regular file is refused)
        yield handle


#: the file name a report gets when none is given (``calviz.report``, ``calviz report``, the app's button)
DEFAULT_REPORT_NAME = "calviz-report.html"


@positional_deprecated("path")
@validate_params({"path": PATH, "title": STR})
def report(
    y_true, y_prob=None, *, path=DEFAULT_REPORT_NAME, title: str = "calviz report", **options
) -> Path:
    """Write the static HTML report for ``(y_true, y_prob)`` to a file.

    The report (see :func:`render_report`) is one HTML file with BokehJS inlined: it opens offline,
    without a server, and its plots stay interactive.

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions; class indices 0..K−1 (or one-hot rows) for (n, K) ones.  A
        validated :class:`calviz.CalibrationData` may be passed alone (``y_prob`` omitted).
    y_prob : array-like of shape (n,) or (n, K), optional
        Predicted P(y = 1), or one probability row per sample (rows sum to 1).
    path : str or path-like, default "calviz-report.html"
        The file to write (checked before anything is computed; written atomically).
    title : str, default "calviz report"
        The page title.
    **options
        :class:`~calviz.analysis.AnalysisOptions` fields (``n_bins=``, ``alpha=``, ``target=``,
        ``resampling=``, ...).

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    InvalidParameterError
        ``path``, ``title`` or one of ``**options`` (``AnalysisOptions.parameter_constraints``) outside
        its range or of the wrong type, before anything is read or written, with the uniform message
        naming ``report``: "The 'n_bins' parameter of report must be an int in [1, 1000000]; got 0."
    TypeError
        A keyword that is no field of :class:`~calviz.analysis.AnalysisOptions`.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = calviz.report(y, p, path=pathlib.Path(tmp) / "report.html", resampling="analytic")
    ...     print(path.name, path.stat().st_size > 10_000)
    report.html True
    """
    options = with_option_values(None, options, "report")
    if isinstance(y_true, CalibrationData) and y_prob is None:
        data = y_true
    else:
        data = as_calibration_data(y_true, y_prob)
    check_options_fit(data, options, caller="report")  # (a class or k the data lack, named as report's)
    with report_output(path) as handle:
        handle.write(render_report(data, options, title=title))
    return Path(path)
