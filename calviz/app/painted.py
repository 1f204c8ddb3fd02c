"""Callbacks of a served page that run once the browser has painted the message being sent.

A change's first message carries the four views and the status line; the other cards (overall verdict,
classical tests, tables, over time) follow in a message of their own.  Sent on the session's next tick, that
second message reached the browser while it was still applying and laying out the first, and the browser
applied and laid out both before it painted anything (30 forced layouts per subsample change against 22 with
the first message alone).  Here the first message also carries a ticket (the ``tags`` of a model it
changes anyway); the browser answers with the same ticket two animation frames after it applied the message
(the frame that paints it has been drawn), and only then are the queued callbacks run.  A browser that never
answers (no JavaScript) gets them after :data:`FALLBACK_MS`; a hidden tab, whose animation frames wait, gets
them when it is shown again.
"""

from __future__ import annotations

from collections.abc import Callable

from bokeh.models import CustomJS, Model

__all__ = ["AfterPaint", "FALLBACK_MS"]

FALLBACK_MS = 2000  # no answer from the browser in this time: run the queued callbacks anyway

# in the browser, when the ticket changes: answer after the frame that paints the message (two animation
# frames: the first runs before that paint, the second after it)
_ANSWER_JS = """
const ticket = cb_obj.tags.length ? cb_obj.tags[0] : null;
if (ticket !== null)
  requestAnimationFrame(() => requestAnimationFrame(() => { answer.tags = [ticket]; }));
"""


class AfterPaint:
    """``after_paint(callback)``: run ``callback`` through ``schedule`` once the browser has painted the
    message being sent now (the one holding this call's changes).

    Parameters
    ----------
    anchor : bokeh.models.Model
        A model of the page's document; its ``tags`` carry the ticket to the browser.
    schedule : callable
        Runs a callback on the session's thread, its changes sent together (the app's ``_schedule``).
    add_timeout : callable
        ``add_timeout(callback, milliseconds)`` (the document's ``add_timeout_callback``): the fallback.
    """

    def __init__(self, anchor: Model, schedule: Callable, add_timeout: Callable):
        self._anchor = anchor
        self._schedule = schedule
        self._add_timeout = add_timeout
        self.answer = CustomJS(code="")  # never run: its ``tags`` carry the browser's answer
        anchor.js_on_change("tags", CustomJS(args={"answer": self.answer}, code=_ANSWER_JS))
        self.answer.on_change("tags", self._on_answer)
        self._queue: list[Callable[[], None]] = []
        self._ticket = 0
        self.waiting: int | None = None  # the ticket sent and not answered yet

    def __call__(self, callback: Callable[[], None]) -> None:
        self._queue.append(callback)
        if self.waiting is None:
            self._ticket += 1
            self.waiting = self._ticket
            self._anchor.tags = [self._ticket]
            self._add_timeout(lambda ticket=self._ticket: self._answered(ticket), FALLBACK_MS)

    def _on_answer(self, attr, old, new) -> None:
        if new:
            self._answered(new[0])

    def _answered(self, ticket) -> None:
        if ticket == self.waiting:
            self.waiting = None
            self._schedule(self._run)

    def _run(self) -> None:
        queue, self._queue = self._queue, []
        for callback in queue:
            callback()
