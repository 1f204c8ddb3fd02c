"""Static HTML report: self-contained, all four views, and it renders in Chromium with the network off."""

from __future__ import annotations

import re

import numpy as np
import pytest

import calviz
from calviz.analysis import AnalysisOptions
from calviz.analysis.views import view as view_record
from calviz.datasets import load_dataset
from calviz.present.report import VIEW_TITLES, render_report

#: the Bokeh roots: every titled view but those drawn as an HTML table
ROOT_NAMES = [f"calviz-{name}" for name in VIEW_TITLES if view_record(name).frame is None]


@pytest.fixture(scope="module")
def report_html() -> str:
    data = load_dataset("digits-gnb")
    return render_report(data, AnalysisOptions(n_bins=12, alpha=0.1, n_resamples=100), title="digits <NB>",
                         source="dataset:digits-gnb")


def test_report_is_self_contained(report_html):
    # nothing is fetched: no external scripts, stylesheets or images
    assert not re.search(r"<script[^>]*\ssrc=", report_html)
    assert not re.search(r"<link[^>]*\shref=", report_html)
    assert not re.search(r"<img[^>]*\ssrc=[\"']?https?:", report_html)
    # BokehJS itself is inline
    assert "Bokeh" in report_html and len(report_html) > 500_000


def test_report_holds_views_parameters_summary_and_version(report_html):
    for name, title in VIEW_TITLES.items():
        assert title in report_html
        assert f'"calviz-{name}"' in report_html  # the Bokeh root of each view
    assert f"calviz {calviz.__version__}" in report_html
    # parameters and data summary
    assert "bins</th><td>12" in report_html
    assert "level α</th><td>0.1" in report_html
    # parameters in words: no "n None", no API keyword names, and class / k only for their targets
    assert "sample size</th><td>all rows" in report_html
    assert "smooth-curve bandwidth</th><td>automatic" in report_html
    for raw in ("class_index", "top_k", "n_bins", "None</td>", "k (top-1-to-k target)"):
        assert raw not in report_html
    assert "719" in report_html  # n of the digits held-out split
    assert "dataset:digits-gnb" in report_html
    # user text is escaped
    assert "digits &lt;NB&gt;" in report_html and "digits <NB>" not in report_html


def test_every_view_has_an_explanation_and_a_caption(report_html):
    """Each section: one plain sentence, the mathematics behind "more", and a caption under the figure
    that says what its marks mean."""
    from calviz.plots import GLYPHS, VIEW_EXPLANATIONS

    sections = re.findall(r"<section><h2>(\d\. [^<]+)</h2>(.*?)</section>", report_html, flags=re.S)
    assert len(sections) >= 4
    for title, body in sections:
        assert '<div class="explain">' in body and "<summary>more</summary>" in body, title
        assert '<p class="caption">' in body, title
    for view in ("reliability", "tcal", "interval"):
        assert GLYPHS[view].split(";")[0].split(":")[0] in report_html
    assert all(sentence in report_html.replace("&#x27;", "'").replace("&quot;", '"')
               for sentence, _ in VIEW_EXPLANATIONS.values())


def test_report_names_only_the_file(tmp_path):
    data = load_dataset("breast-cancer-gnb")
    html = render_report(data, AnalysisOptions(n_resamples=50), resampled=False,
                         source=str(tmp_path / "home-of-alice" / "preds.csv"))
    assert "preds.csv" in html and str(tmp_path) not in html and "home-of-alice" not in html


def test_public_report_writes_file(tmp_path):
    rng = np.random.default_rng(0)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p).astype(int)
    out = calviz.report(y, p, path=tmp_path / "r.html", n_bins=8, title="binary check")
    assert out == tmp_path / "r.html"
    text = out.read_text(encoding="utf-8")
    assert "binary check" in text and "bins</th><td>8" in text
    assert "arrays passed in Python" in text


@pytest.mark.browser
def test_report_renders_offline_in_chromium(report_html, tmp_path, chromium_browser):
    path = tmp_path / "report.html"
    path.write_text(report_html, encoding="utf-8")
    context = chromium_browser.new_context(offline=True, viewport={"width": 1280, "height": 800})
    blocked, failed, errors = [], [], []

    def only_local(route):
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", only_local)
    page = context.new_page()
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("requestfailed", lambda req: failed.append(req.url))
    try:
        page.goto(path.as_uri())
        page.wait_for_function(
            "() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].roots().length >= 4",
            timeout=60_000,
        )
        names = page.evaluate("() => Bokeh.documents.flatMap(d => d.roots().map(r => r.name))")
        assert sorted(names) == sorted(ROOT_NAMES)
        # every view is drawn: each root's view exists and has a canvas
        page.wait_for_function(f"() => Object.keys(Bokeh.index).length >= {len(ROOT_NAMES)}", timeout=60_000)
        assert page.locator("canvas").count() >= len(ROOT_NAMES)
        for name in ROOT_NAMES:
            root_id = page.evaluate(
                f"() => Bokeh.documents[0].roots().find(r => r.name === '{name}').id")
            assert page.locator(f'[data-root-id="{root_id}"] canvas').count() >= 1, f"{name} has no canvas"
        # the plots stay interactive: every view carries Bokeh's hover and zoom tools
        tools = page.evaluate(
            "() => { const t = {}; for (const m of Bokeh.documents[0].all_models) {"
            " const n = m.type || m.constructor.name; t[n] = (t[n] || 0) + 1; } return t; }")
        assert tools.get("HoverTool", 0) >= len(ROOT_NAMES), tools
        assert tools.get("WheelZoomTool", 0) + tools.get("BoxZoomTool", 0) >= len(ROOT_NAMES), tools
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    finally:
        context.close()
    assert blocked == [], f"the report tried to reach the network: {blocked}"
    assert failed == [], f"failed requests: {failed}"
    assert errors == [], f"console errors: {errors}"




def test_render_report_uses_a_given_analysis():
    from calviz import report as public
    from calviz.analysis import analyze

    assert public is calviz.report and public.__module__ == "calviz.present.report"
    data = load_dataset("breast-cancer-logreg")
    result = analyze(data, AnalysisOptions(n=100, seed=3), resampled=False)
    html_text = render_report(None, analysis=result, title="precomputed")
    assert "n</th><td>100 (uniform subsample of 228 rows)" in html_text


@pytest.mark.parametrize("target", ["topk", "full"])
def test_report_shows_the_per_rank_and_per_class_views(target):
    data = load_dataset("digits-gnb")
    html_text = render_report(data, AnalysisOptions(target=target, top_k=3, n_bins=10), resampled=False)
    assert '"calviz-reliability"' in html_text
    assert "shown through its top-1 reduction" not in html_text
    assert "smCE witness are defined for scalar predictions and are omitted" in html_text
    if target == "topk":
        assert "Top-3 calibration: one curve per rank" in html_text
        for label in ("rank 1 (top-1)", "rank 2", "rank 3"):
            assert label in html_text  # legend entries of the Bokeh figure
    else:
        assert "Full calibration: one panel per class" in html_text
        assert all(f"class {c}" in html_text for c in range(10))


def test_parameter_rows_say_every_option_in_words():
    """all_rows reads yes/no (it showed "all rows: False"), and a subsample size beyond the data's rows is
    all rows, as the analysis reads it (it showed "uniform subsample of 100,000 rows" of 400 rows)."""
    from calviz.analysis import AnalysisOptions
    from calviz.present.report import parameter_rows

    rows = dict(parameter_rows(AnalysisOptions(n=100_000), n_total=400))
    assert rows["sample size"] == "all rows"
    assert rows["every view on all rows"].startswith("no")
    assert dict(parameter_rows(AnalysisOptions(n=300), n_total=400))["sample size"] == (
        "uniform subsample of 300 rows")
    assert dict(parameter_rows(AnalysisOptions(all_rows=True)))["every view on all rows"] == "yes"
    assert "False" not in dict(parameter_rows(AnalysisOptions())).values()


def test_a_report_into_a_missing_directory_names_the_report(tmp_path):
    """The error named the hidden temporary file (".r.html.je3vskf_.partial") the user never asked for."""
    import calviz

    target = tmp_path / "missing" / "r.html"
    with pytest.raises(FileNotFoundError) as error:
        calviz.report([0, 1, 1, 0], [0.2, 0.7, 0.9, 0.4], path=target, resampling="analytic")
    assert str(target) in str(error.value) and ".partial" not in str(error.value)


def test_a_class_the_data_lack_is_refused_naming_report(tmp_path):
    import calviz

    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(3), size=60)
    labels = rng.integers(0, 3, size=60)
    refused = r"'class_index' parameter of report must be an int in \[0, 2\]"
    with pytest.raises(calviz.InputError, match=refused):
        calviz.report(labels, probs, path=tmp_path / "r.html", target="classwise", class_index=5)
    assert list(tmp_path.iterdir()) == []
