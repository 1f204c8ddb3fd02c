"""The dashboard's comparison mode in real headless Chromium (Playwright): each mode — before/after
recalibration, model A vs model B (the embedded partner, a second file), by group — including a bad
second file (a clear message, the first data kept) and a group column with one tiny group."""

from __future__ import annotations

import html

import numpy as np
import pytest
from test_browser_app import (
    _ALL_MODELS,
    JS_TEXT_CONTAINING,
    UPDATE_TIMEOUT,
    open_app,
    set_widget,
    shot,
    status_n,
    wait_widget,
)

pytestmark = pytest.mark.browser

COMPARE_TIMEOUT = 180_000  # ms: a comparison runs in the session's worker process (spawned on first use)

JS_VERDICT = f"""() => {{
    for (const m of {_ALL_MODELS}) if (m.name === 'comparison_verdict') return m.text;
    return null;
}}"""

# the comparison table's columns (the rows its current source holds)
JS_TABLE = f"""() => {{
    for (const m of {_ALL_MODELS}) {{
        if (m.name !== 'comparison_table') continue;
        const data = m.source.data;
        const get = (k) => data instanceof Map ? data.get(k) : data[k];
        return {{item: Array.from(get('item')), status: Array.from(get('status')),
                 tcal: Array.from(get('tcal'))}};
    }}
    return null;
}}"""

# number of lines of the overlaid reliability diagrams (the multi-line source with an 'ys' column)
JS_LINES = f"""() => {{
    for (const m of {_ALL_MODELS}) {{
        const data = m.data;
        if (!data || m.selected === undefined) continue;
        const get = (k) => data instanceof Map ? data.get(k) : data[k];
        if (get('ys') !== undefined && get('item') !== undefined) return get('ys').length;
    }}
    return null;
}}"""


def verdict(page) -> str:
    return html.unescape(page.evaluate(JS_VERDICT) or "")


def wait_verdict(page, needle: str) -> str:
    page.wait_for_function(
        f"(s) => {{ const t = ({JS_VERDICT})(); return t !== null && t.includes(s); }}",
        arg=html.escape(needle, quote=False),
        timeout=COMPARE_TIMEOUT,
    )
    return verdict(page)


def card_shot(page, artifacts_dir, name: str) -> None:
    """A screenshot with the comparison card in view (it lies below the four views)."""
    page.get_by_text("5 · Comparison").scroll_into_view_if_needed()
    shot(page, artifacts_dir, name)


def file_inputs(page):
    return page.locator("input[type=file]")


def upload(page, index: int, name: str, content: bytes) -> None:
    """Set the ``index``-th file input of the page (0: the predictions upload; 1: model B's file)."""
    file = {"name": name, "mimeType": "text/csv", "buffer": content}
    file_inputs(page).nth(index).set_input_files(files=[file])


def _frame_csv(n=1200, seed=3, *, columns=("y_true", "y_prob", "region")) -> bytes:
    rng = np.random.default_rng(seed)
    q = rng.uniform(0.03, 0.97, n)
    y = (rng.random(n) < q).astype(int)
    over = 1 / (1 + np.exp(-3 * np.log(q / (1 - q))))  # overconfident version of a calibrated q
    region = rng.choice(["north", "south", "east"], n)
    region[:6] = "tiny"  # one tiny group
    cols = {"y_true": y, "y_prob": over, "q": q, "region": region}
    rows = [",".join(columns)]
    for i in range(n):
        cells = (f"{cols[c][i]:.6f}" if c in ("y_prob", "q") else str(cols[c][i]) for c in columns)
        rows.append(",".join(cells))
    return ("\n".join(rows) + "\n").encode()


def test_recalibration_mode(served_app, chromium_browser, artifacts_dir):
    context, page = open_app(chromium_browser, served_app)
    try:
        set_widget(page, "compare", "before / after recalibration")
        text = wait_verdict(page, "held-out rows")
        assert "Temperature recalibration (T = " in text and "fitted on 6,000 rows" in text
        assert "after is better calibrated than before" in text
        assert page.evaluate(JS_TABLE)["item"] == ["before", "after"]
        assert page.evaluate(JS_LINES) == 2  # both diagrams on the shared axes
        card_shot(page, artifacts_dir, "compare_recalibration")
        set_widget(page, "recalibration method", "isotonic")
        assert "Isotonic recalibration" in wait_verdict(page, "Isotonic")
        assert not page.errors, page.errors
    finally:
        context.close()


def test_model_a_vs_model_b_embedded_partner(served_app, chromium_browser, artifacts_dir):
    context, page = open_app(chromium_browser, served_app)
    try:
        set_widget(page, "compare", "model A vs model B")
        wait_widget(page, "model B", "tabular-gnb-temperature")  # the default demonstration
        text = wait_verdict(page, "tabular-gnb-temperature")
        assert "tabular-gnb-temperature is better calibrated than tabular-gnb" in text
        table = page.evaluate(JS_TABLE)
        assert table["item"] == ["tabular-gnb", "tabular-gnb-temperature"]
        assert page.evaluate(JS_LINES) == 2
        card_shot(page, artifacts_dir, "compare_models")
        set_widget(page, "model B", "tabular-rf")
        assert "tabular-rf" in wait_verdict(page, "tabular-rf")
        assert not page.errors, page.errors
    finally:
        context.close()


def test_second_file_good_and_bad(served_app, chromium_browser, artifacts_dir):
    context, page = open_app(chromium_browser, served_app)
    try:
        upload(page, 0, "mine.csv", _frame_csv(columns=("y_true", "y_prob")))
        wait_widget(page, "dataset", "uploaded: mine.csv")
        set_widget(page, "compare", "model A vs model B")
        wait_widget(page, "model B", "a second file")
        page.wait_for_function(
            f"() => ({JS_TEXT_CONTAINING})('choose the second model') !== null", timeout=UPDATE_TIMEOUT
        )
        assert file_inputs(page).count() == 2
        # model B: the calibrated q of the same rows, as a second file
        second = _frame_csv(columns=("y_true", "q")).replace(b"y_true,q", b"y_true,y_prob")
        upload(page, 1, "calibrated.csv", second)
        text = wait_verdict(page, "calibrated.csv")
        assert "calibrated.csv is better calibrated than mine.csv" in text
        # a bad second file: a clear message; the first data and the comparison stay
        upload(page, 1, "broken.csv", b"y_true,y_prob\n1,0.3\n0,banana\n")
        page.wait_for_function(
            f"() => ({JS_TEXT_CONTAINING})('Comparison input refused') !== null", timeout=UPDATE_TIMEOUT
        )
        alert = html.unescape(page.evaluate(JS_TEXT_CONTAINING, "Comparison input refused"))
        assert "broken.csv" in alert and "stay" in alert
        # another test set (other labels): refused with the reason
        upload(page, 1, "other.csv", _frame_csv(n=500, seed=9, columns=("y_true", "y_prob")))
        page.wait_for_function(
            f"() => {{ const t = ({JS_TEXT_CONTAINING})('Comparison input refused'); "
            "return t !== null && t.includes('other.csv'); }",
            timeout=UPDATE_TIMEOUT,
        )
        assert "labels differ" in page.evaluate(JS_TEXT_CONTAINING, "Comparison input refused")
        assert status_n(page) == 1200  # the first data stay loaded
        assert "calibrated.csv is better calibrated than mine.csv" in verdict(page)
        card_shot(page, artifacts_dir, "compare_bad_second_file")
        assert not [e for e in page.errors if "requestfailed" not in e], page.errors
    finally:
        context.close()


def test_group_column_with_a_tiny_group(served_app, chromium_browser, artifacts_dir):
    context, page = open_app(chromium_browser, served_app)
    try:
        upload(page, 0, "groups.csv", _frame_csv())
        wait_widget(page, "dataset", "uploaded: groups.csv")
        set_widget(page, "compare", "by group (column)")
        wait_verdict(page, "groups tested")  # by the label first
        set_widget(page, "group column", "region")
        text = wait_verdict(page, "too small to test")
        assert "tiny" in text and "3 of 4 groups tested" in text
        table = page.evaluate(JS_TABLE)
        assert table["item"] == ["east", "north", "south", "tiny"]
        assert table["status"][3].startswith("too small") and table["tcal"][3] == "—"
        assert page.evaluate(JS_LINES) == 4  # the tiny group's diagram is drawn too (6 rows ≥ 2)
        card_shot(page, artifacts_dir, "compare_groups_tiny")
        set_widget(page, "group column", "nope")
        page.wait_for_function(
            f"() => ({JS_TEXT_CONTAINING})('Comparison input refused') !== null", timeout=UPDATE_TIMEOUT
        )
        assert "nope" in page.evaluate(JS_TEXT_CONTAINING, "Comparison input refused")
        assert not page.errors, page.errors
    finally:
        context.close()
