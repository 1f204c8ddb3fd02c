"""calviz.present: names, tables and sentences in one place for every surface, without a GUI import.

The T-Cal decision was worded in seven places across five files (the view's title and caption, the
report's summary, the command line, the comparison tables); these tests hold every surface to the one
table of :data:`calviz.present.text.TCAL_DECISION_WORDS`.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys
import types

import pytest

from calviz import plots
from calviz.present import frames, labels, text

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: every public name of calviz.plots before the presentation package existed
PLOTS_NAMES = [
    "ACCENT", "BIN_TOOLTIPS", "BOOTSTRAP_NOTE", "CALIBRATED", "DISTANCE_BAND_TOOLTIPS", "DISTANCE_TOOLTIPS",
    "ESTIMATE", "GLYPHS", "HIST", "HIST_TOOLTIPS", "INTERVAL_TOOLTIPS", "METHOD_NAMES", "MISCALIBRATED",
    "NEUTRAL", "RANK_COLOURS", "RANK_HIST_COLUMNS", "RANK_POINT_COLUMNS", "VIEW_EXPLANATIONS", "bar_table",
    "bins", "bins_phrase", "class_grid_columns", "class_reliability_elements", "classical_caption",
    "classical_columns", "classical_table", "distance_caption", "distance_frame", "distance_measures",
    "distance_plot", "distance_title", "format_pvalue", "hist_table", "interval_caption", "interval_details",
    "interval_frame", "interval_plot", "interval_title", "is_multi", "measure_label", "method_name",
    "no_notebook_output", "placeholder", "pvalue_phrase", "rank_colour", "rank_reliability_elements",
    "rank_reliability_title", "rank_tables", "readable_ticks", "reliability_caption", "reliability_elements",
    "reliability_plot", "reliability_view", "scalar_reliability_title", "simplex_cells", "smooth_table",
    "tcal_caption", "tcal_frame", "tcal_hidden_note", "tcal_marks", "tcal_plot", "tcal_shown_scales",
    "tcal_tooltips", "tcal_verdict", "tcal_xlabel", "witness_table",
]


def test_every_public_name_of_plots_is_still_importable_from_it():
    missing = [name for name in PLOTS_NAMES if not hasattr(plots, name)]
    assert not missing, missing
    # the moved ones are the presentation package's objects, not copies
    assert plots.tcal_verdict is text.tcal_verdict and plots.bar_table is frames.bar_table
    assert plots.method_name is labels.method_name and plots.CALIBRATED == frames.CALIBRATED


def test_plots_keeps_no_notebook_state():
    state = [name for name in vars(plots) if name in ("_BACKEND_LOADED", "_NOTEBOOK_SHOWN", "_QUIET")]
    assert not state, state


def test_presentation_imports_no_gui_library():
    code = ("import sys\nimport calviz.present.labels, calviz.present.frames, calviz.present.text\n"
            "import calviz.present.report, calviz.present.comparisons, calviz.plots\n"
            "print(sorted(m for m in ('panel', 'bokeh', 'holoviews', 'param') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout


def test_the_app_imports_no_command_line_module():
    found = [f"{path.name}: {line.strip()}" for path in sorted((ROOT / "calviz" / "app").glob("*.py"))
             for line in path.read_text(encoding="utf-8").splitlines()
             if re.search(r"\bcalviz\.cli(_compare)?\b|from calviz import cli", line)]
    assert not found, found


# -- the T-Cal decision in words: one table ---------------------------------------------------------
def _tcal(decision: str):
    """A T-Cal result with the fields the sentences read (the analytic test: no resampling)."""
    return types.SimpleNamespace(decision=decision, reject=decision == "reject", pvalue=0.01, alpha=0.05,
                                 pvalue_is_bound=False, method="analytic", n_resamples=0,
                                 pvalue_interval=None, resampling_risk=None, max_resamples=None,
                                 critical_values=[0.1, 0.2])


@pytest.mark.parametrize("decision", ["reject", "accept", "undecided"])
def test_every_surface_words_the_tcal_decision_from_one_table(decision, capsys):
    from calviz.cli import _print_check_text
    from calviz.present.comparisons import comparison_html, comparison_lines
    from calviz.present.report import _verdicts

    words = {form: text.TCAL_DECISION_WORDS[form][decision] for form in text.TCAL_DECISION_WORDS}
    tcal = _tcal(decision)
    title, caption = text.tcal_verdict(tcal)
    assert title.startswith(f"{words['title']} · ") and caption == text.tcal_caption(tcal)
    assert f": {words['caption']} at α = 0.05;" in caption
    # the report's summary
    analysis = types.SimpleNamespace(tcal=tcal, tcal_resampled=None, interval=None, distance=None, errors={})
    assert f"<b>T-Cal {words['sentence']}</b>" in _verdicts(analysis)
    # calviz check
    json_decision = {"accept": "not rejected"}.get(decision, decision)
    _print_check_text({"calviz_version": "0", "source": "x", "summary": {}, "alpha": 0.05, "options": {},
                       "decision": json_decision, "pvalue": 0.01, "tcal": {}, "ece": None, "bounds": None,
                       "classical": None, "errors": {}})
    assert f"T-Cal    {words['sentence']} at α = 0.05" in capsys.readouterr().out
    # the comparison tables (text and HTML)
    model = {"ece": None, "tcal": {"reject": decision == "reject", "decision": decision, "pvalue": 0.01,
                                   "pvalue_is_bound": False}}
    pair = {"names": ["A", "B"], "difference": 0.01, "low": 0.0, "high": 0.02, "level": 0.95, "pvalue": 0.2,
            "method": "asymptotic", "reject": False, "verdict": "no difference", "n": 10, "target": "binary",
            "n_bins": 15, "models": {"A": model, "B": {"ece": None, "tcal": None}}}
    lines = comparison_lines({"comparison": pair})
    assert f"A: ECE — [—, —], T-Cal {words['cell']} (p = 0.0100)" in lines[1]
    assert f"<td>{words['cell']}</td>" in comparison_html({"comparison": pair})


def test_the_decision_words_read_results_dicts_and_json_decisions():
    assert text.tcal_decision(None) is None and text.tcal_decision_words(None) == "—"
    assert text.tcal_decision({"reject": None, "decision": None}) is None
    assert text.tcal_decision({"reject": False, "decision": "undecided"}) == "undecided"
    assert text.tcal_decision(_tcal("reject")) == "reject" and text.tcal_decision("not rejected") == "accept"
    assert text.decision_cell(True) == text.TCAL_DECISION_WORDS["cell"]["reject"]


def test_the_difference_of_two_models_is_one_sentence_in_the_text_and_the_report():
    from calviz.present.comparisons import comparison_html, comparison_lines, difference_sentence

    model = {"ece": {"estimate": 0.1, "low": 0.05, "high": 0.15}, "tcal": None}
    pair = {"names": ["A<1>", "B"], "difference": 0.01, "low": 0.0, "high": 0.02, "level": 0.95,
            "pvalue": 0.2, "method": "asymptotic", "reject": False, "verdict": "no difference", "n": 10,
            "target": "binary", "n_bins": 15, "models": {"A<1>": model, "B": model}}
    sentence = difference_sentence(pair)
    assert sentence.endswith("test of equal calibration p = 0.2000 (asymptotic)")
    assert any(line.strip() == sentence for line in comparison_lines({"comparison": pair}))
    assert sentence.replace("<", "&lt;").replace(">", "&gt;") in comparison_html({"comparison": pair})
