""""Draw more" for an undecided resampled T-Cal: the sequential test run on with a larger cap.

The resampled T-Cal stops when its decision at α is settled, or says "undecided" at its cap of resamples
(:attr:`calviz.tcal.TCalResult.advice`).  The button under the T-Cal card reruns the sequential test from
the same seed — the same resamples first, then more — with a cap ten times larger (up to the library's
limits, :func:`more_resamples`), on the same rows, off the UI thread; the resamples already drawn (the
store keeps them with the result) are reused, only the ones beyond are drawn.  The result replaces the
undecided one in the store's cache (:meth:`calviz.app.store.ResultStore.seed`) and the card redraws.
"""

from __future__ import annotations

import threading

import panel as pn

from calviz._tcal_decision import MAX_RESAMPLE_WORK, MAX_RESAMPLES

__all__ = ["DrawMore", "more_resamples", "draw_more"]


def more_resamples(result) -> int:
    """The next cap for an undecided result: ten times the one it reached, within the library's limits
    (0 when no larger cap is allowed)."""
    cap = int(result.max_resamples or result.n_resamples)
    more = int(min(MAX_RESAMPLES, MAX_RESAMPLE_WORK // max(int(result.n), 1), 10 * cap))
    return more if more > cap else 0


def _undecided(result) -> bool:
    return (result is not None and getattr(result, "decision", "") == "undecided"
            and result.method != "analytic")


def draw_more(data, options, cap: int, reuse=None):
    """The resampled T-Cal the dashboard shows (its rows: :func:`calviz.sampling.sample_for_view`) with
    the sequential rule's cap raised to ``cap``; ``reuse``: a result of it at a smaller cap (or another α),
    whose resamples are reused (the same result, fewer resamples drawn)."""
    from calviz import sampling
    from calviz.analysis import prepare
    from calviz.analysis.compute import compute_tcal

    rows, _ = sampling.sample_for_view("tcal_resampled", prepare(data, options), options)
    return compute_tcal(rows, options, max_resamples=cap, reuse=reuse)


class DrawMore:
    """The button (``panel``), shown under an undecided resampled T-Cal."""

    def __init__(self, app):
        self.app = app
        self.button = pn.widgets.Button(label="draw more resamples", color="primary", visible=False,
                                        sizing_mode="stretch_width", margin=(4, 10))
        self.button.on_click(self._click)
        self.panel = self.button
        self.running = False
        self.done = threading.Event()  # set when a click's computation has ended (tests, scripts)
        self.done.set()
        app.store.param.watch(self._on_store, ["tcal"])

    def _on_store(self, *events) -> None:
        result = self.app.store.tcal.result
        more = more_resamples(result) if _undecided(result) else 0
        self.button.visible = bool(more) or self.running
        if more and not self.running:
            self.button.label = f"undecided: draw more (up to {more:,} resamples)"
            self.button.disabled = False

    def _click(self, event=None) -> None:
        result = self.app.store.tcal.result
        if not _undecided(result) or self.running:
            return
        cap = more_resamples(result)
        if not cap:
            return
        data, options = self.app.data, self.app.controls.options(self.app.data.n)
        self.running, self.button.disabled = True, True
        self.done.clear()
        self.button.label = f"drawing up to {cap:,} resamples…"
        self.app.store.in_background(self.run, data, options, cap)

    def run(self, data, options, cap: int) -> None:
        """Compute off the UI thread; the store shows the result (on the session's thread)."""
        drawn = self.app.store.drawn("tcal_resampled", data, options)  # (its resamples so far)
        try:
            result = draw_more(data, options, cap, reuse=None if drawn is None else drawn[0])
        except Exception as exc:  # shown, never a dead button
            message = f"Drawing more resamples failed: {exc}"
            self.running = False
            self.app._schedule(lambda: self.app.status.show_error(message, refused="T-Cal unchanged.",
                                                                  kept=""))
            self.done.set()
            raise
        self.running = False
        self.app._schedule(lambda: self.app.store.seed("tcal_resampled", data, options, result))
        self.done.set()
