"""A served change's patch leaves the server in one message (:func:`calviz.app.sidebar._live`) and before the
work the change schedules for after it (:func:`calviz.app.painted.after_sent`), in a real Panel server and a
real Chromium page.

Panel writes the changes made while the browser's own message is being answered from a task of its own, on a
later turn of the event loop; work scheduled for the session's next tick during such a change used to run
first and hold the change's patch back (at 10⁷ rows, a class shown for the first time waited 0.46 s on the
server for its smooth curve)."""

from __future__ import annotations

import json
import threading
from types import SimpleNamespace

import pytest
from test_browser_app import LOAD_TIMEOUT, set_widget, wait_text

#: s: how long the scheduled work waits for the test to see the change in the page (a hang guard: the work
#: is released by the test as soon as the page shows the change)
RELEASE_GUARD_S = 90.0


def served_page(doc):
    """What :func:`~calviz.app.sidebar._live` reads of the dashboard: a served page and its hold."""
    import panel as pn

    return SimpleNamespace(served=True, _hold=lambda: pn.io.hold(doc))


@pytest.fixture
def change_then_work_server():
    """``(url, seen, ended, outcome)``: a Panel server in this process whose page has a live slider (the
    dashboard's controls apply a change at once, :func:`calviz.app.sidebar._live`); a change of it sets a
    Div's text and schedules work through :func:`~calviz.app.painted.after_sent` that blocks the session's
    thread until ``seen`` is set; when that work ends it sets ``ended``, and ``outcome["released"]`` says
    whether ``seen`` (True) or the guard (False) ended it."""
    import panel as pn
    from bokeh.models import Div
    from conftest import panel_server_in_thread

    from calviz.app.painted import after_sent
    from calviz.app.sidebar import _live

    seen, ended, outcome = threading.Event(), threading.Event(), {}

    def new_session():
        doc = pn.state.curdoc
        div = Div(text="no change yet", name="shown")
        slider = _live(pn.widgets.IntSlider(name="value", start=0, end=10, value=0), served_page(doc))

        def wait_for_the_page() -> None:
            outcome["released"] = seen.wait(RELEASE_GUARD_S)
            ended.set()

        def changed(event) -> None:
            with pn.io.hold(doc):
                div.text = f"value {event.new}"
                after_sent(doc, wait_for_the_page)

        slider.param.watch(changed, "value")
        return pn.Column(slider, pn.pane.Bokeh(div))

    with panel_server_in_thread(new_session) as (url, _):
        try:
            yield url, seen, ended, outcome
        finally:
            seen.set()


def test_a_change_is_sent_before_the_work_scheduled_after_it(change_then_work_server, chromium_browser):
    """The page shows a change of a live control while the work that change scheduled still blocks the
    session's thread: the test, not the guard, releases that work.  (Scheduled for the plain next tick, the
    work ran before Panel wrote the change, which reached the page only once the guard had released it.)"""
    url, seen, ended, outcome = change_then_work_server
    context = chromium_browser.new_context(viewport={"width": 800, "height": 400})
    try:
        page = context.new_page()
        page.goto(url, timeout=LOAD_TIMEOUT)
        wait_text(page, "no change yet")
        set_widget(page, "value", 5)
        wait_text(page, "value 5")  # (the change's patch has reached the page)
        seen.set()
    finally:
        seen.set()
        context.close()
    assert ended.wait(2 * RELEASE_GUARD_S), "the scheduled work never ran"  # (a hang guard)
    assert outcome["released"] is True, outcome


@pytest.fixture
def two_watcher_server():
    """The URL of a Panel server in this process whose page has a live slider watched twice, as the
    dashboard's target is: the first watcher sets a Div's text under its own hold (the views), the second
    sets another Div's text outside it (the class slider's visibility, set by the sidebar's watcher)."""
    import panel as pn
    from bokeh.models import Div
    from conftest import panel_server_in_thread

    from calviz.app.sidebar import _live

    def new_session():
        doc = pn.state.curdoc
        views, inputs = Div(text="views: none"), Div(text="inputs: none")
        slider = _live(pn.widgets.IntSlider(name="value", start=0, end=10, value=0), served_page(doc))

        def draw_views(event) -> None:
            with pn.io.hold(doc):
                views.text = f"views: value {event.new}"

        def show_inputs(event) -> None:
            inputs.text = f"inputs: value {event.new}"

        slider.param.watch(draw_views, "value")
        slider.param.watch(show_inputs, "value")
        return pn.Column(slider, pn.pane.Bokeh(views), pn.pane.Bokeh(inputs))

    with panel_server_in_thread(new_session) as (url, _):
        yield url


def test_a_change_leaves_in_one_message(two_watcher_server, chromium_browser):
    """Everything a live control's change alters reaches the page in one patch, also what a watcher outside
    the views' hold changes.  (Before the change was handled under the page's hold, the second watcher's
    change left in a message of its own, which the browser applied and laid out before it painted the
    first's.)"""
    context = chromium_browser.new_context(viewport={"width": 800, "height": 400})
    patches = []  # the texts of the document patches the page received

    def on_socket(socket) -> None:
        socket.on("framereceived", lambda frame: patches.append(frame) if isinstance(frame, str)
                  and frame.startswith('{"events"') else None)

    try:
        page = context.new_page()
        page.on("websocket", on_socket)
        page.goto(two_watcher_server, timeout=LOAD_TIMEOUT)
        wait_text(page, "inputs: none")
        set_widget(page, "value", 7)
        wait_text(page, "views: value 7")
        wait_text(page, "inputs: value 7")
    finally:
        context.close()
    changed = [{event["new"] for event in json.loads(patch)["events"] if isinstance(event.get("new"), str)}
               for patch in patches]
    carrying = [texts for texts in changed if texts & {"views: value 7", "inputs: value 7"}]
    assert len(carrying) == 1 and {"views: value 7", "inputs: value 7"} <= carrying[0], changed
