"""Callbacks of a served page that run once the message being sent has left the server
(:func:`after_sent`), or once the browser has painted it (:class:`AfterPaint`).

A change's first message carries the four views and the status line; the other cards (overall verdict,
classical tests, tables, over time) follow in a message of their own.  Sent on the session's next tick, that
second message reached the browser while it was still applying and laying out the first, and the browser
applied and laid out both before it painted anything (30 forced layouts per subsample change against 22 with
the first message alone).  Here the first message also carries a ticket (the ``tags`` of a model that no
view draws: a Div re-renders itself, and the page lays it out again, on a change of any of its properties,
``tags`` included); the browser answers with the same ticket two animation frames after it applied the message
(the frame that paints it has been drawn), and only then are the queued callbacks run.  A browser that never
answers (no JavaScript) gets them after :data:`FALLBACK_MS`; a hidden tab, whose animation frames wait, gets
them when it is shown again.  A newer change sent meanwhile (a slider being dragged) renews the ticket: the
callbacks wait for the paint of the newest change.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from bokeh.models import CustomJS, Model

__all__ = ["AfterPaint", "FALLBACK_MS", "after_sent"]

#: s: the longest a callback waits for a patch that Panel has still to write (it retries every 10 ms while the
#: socket is busy); then it runs anyway.  The wait ends as soon as the patch is written (a few ms); the bound
#: is for a socket that stays busy, and is wide enough that a loaded machine's pauses of the event loop do not
#: reach it before Panel's own retry has run
SENT_WAIT_S = 2.0
_SENT_POLL_S = 0.002


def after_sent(doc, callback: Callable[[], None]) -> None:
    """Run ``callback`` on ``doc``'s next tick once the patch being sent to its browser has been written.

    Panel sends the changes made while the browser's own message is being answered (every widget change)
    from a task of its own, on a later turn of the event loop.  A callback scheduled for the next tick during
    such a change ran before that task and held the change's patch back: at 10⁷ rows, the smooth curve
    computed for a class not shown before kept the class's diagram on the server for 0.46 s.  Any thread
    may call this."""
    from panel.io import document as panel_document

    pending = getattr(panel_document, "_WRITE_BLOCK", None)  # the documents with a patch still to write
    try:
        loop = doc.session_context.server_context.application_context.io_loop
    except AttributeError:  # (a document made to look served, without a server)
        loop = None
    if pending is None or loop is None:  # (no such state: a Panel that writes every patch at once)
        doc.add_next_tick_callback(callback)
        return

    async def when_sent() -> None:
        deadline = time.monotonic() + SENT_WAIT_S
        while doc in pending and time.monotonic() < deadline:
            await asyncio.sleep(_SENT_POLL_S)
        doc.add_next_tick_callback(callback)

    loop.add_callback(when_sent)


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
        A model of the page's document, set once: its ``tags`` hold the models carrying the ticket and the
        answer, which makes them part of the document.
    schedule : callable
        Runs a callback on the session's thread, its changes sent together (the app's ``_schedule``).
    add_timeout : callable
        ``add_timeout(callback, milliseconds)`` (the document's ``add_timeout_callback``): the fallback.
    """

    def __init__(self, anchor: Model, schedule: Callable, add_timeout: Callable):
        self._schedule = schedule
        self._add_timeout = add_timeout
        self.answer = CustomJS(code="")  # never run: its ``tags`` carry the browser's answer
        self.ticket = CustomJS(code="")  # never run: its ``tags`` carry the ticket (no view redraws on them)
        self.ticket.js_on_change("tags", CustomJS(args={"answer": self.answer}, code=_ANSWER_JS))
        anchor.tags = [*anchor.tags, self.ticket, self.answer]
        self.answer.on_change("tags", self._on_answer)
        self._queue: list[Callable[[], None]] = []
        self._ticket = 0
        self.waiting: int | None = None  # the ticket sent and not answered yet
        self.loaded = True  # see wait_for_load

    def __call__(self, callback: Callable[[], None]) -> None:
        self._queue.append(callback)
        if self.waiting is None and self.loaded:
            self._send_ticket()

    def wait_for_load(self) -> None:
        """Callbacks queued from now on wait for :meth:`load` (then for the paint of the message being sent
        then): changes made before the browser has the page's document go out in the document itself, where
        a ticket would never be answered (its script runs on changes only), and the fallback would draw the
        other cards into the document the browser is still to load."""
        self.loaded = False

    def load(self) -> None:
        """The browser has drawn the page's document: the callbacks queued meanwhile run after its next
        paint, as usual."""
        self.loaded = True
        if self._queue and self.waiting is None:
            self._send_ticket()

    def renew(self) -> None:
        """A newer change is being sent (in the message being built): the queued callbacks wait for its
        paint instead.  While a slider is dragged they then run once, after the drag, not once per value
        the browser painted; the answer to an older ticket runs nothing."""
        if self.waiting is not None:
            self._send_ticket()

    def _send_ticket(self) -> None:
        self._ticket += 1
        self.waiting = self._ticket
        self.ticket.tags = [self._ticket]
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
