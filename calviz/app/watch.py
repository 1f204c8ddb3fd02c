"""``calviz serve LOG --time-column ts --watch``: the dashboard follows a prediction log as it grows.

A :class:`LogWatcher` stats the log — a file, or the Parquet files of a directory — and reads it again
only when a file's size or modification time changed (a directory: only the files that changed or
appeared).  :func:`follow` polls it from the session's periodic callback
(``pn.state.add_periodic_callback``); on new rows, the over-time view's result is the previous one with the
new rows' sums merged in (:meth:`calviz.analysis.compute.OverTime.append`), put in the store's cache for
the new data, so the refresh recomputes no window but the open one and the new ones.  The window is fixed
when watching starts (an automatic window would otherwise move as the log grows).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from calviz._data import CalibrationData, InputError, _readonly_view
from calviz._timed import AUTO_WINDOW, TimedData, auto_window
from calviz._windows import TimeColumn

__all__ = ["LogWatcher", "follow", "poll", "concat_timed", "WATCH_PERIOD_S"]

#: seconds between two looks at the watched log
WATCH_PERIOD_S = 1.0


def concat_timed(parts: list[TimedData]) -> TimedData:
    """The rows of several logs (same kind of predictions and time) one after the other."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    kinds = {p.time.kind for p in parts}
    if len(kinds) != 1 or len({p.probs.ndim for p in parts}) != 1 or len(
            {p.probs.shape[1:] for p in parts}) != 1:
        raise InputError("the watched files hold different kinds of predictions or times")
    if first.time.kind == "label":  # batch ids: codes into the union of the labels
        labels = np.unique(np.concatenate([p.time.labels for p in parts]))
        values = np.concatenate([np.searchsorted(labels, p.time.labels[p.time.values]) for p in parts])
    else:
        labels, values = None, np.concatenate([p.time.values for p in parts])
    return TimedData(_readonly_view(np.concatenate([p.probs for p in parts])),
                     _readonly_view(np.concatenate([p.labels for p in parts])), first.confidence_form,
                     time=TimeColumn(values, first.time.kind, labels), window=first.window)


class LogWatcher:
    """A prediction log on disk and the last state read of it.

    ``read(path)`` reads one file as :class:`~calviz._timed.TimedData` (the command line's readers and
    column options).  :meth:`poll` returns the whole log when it changed since the last look, else None.
    """

    def __init__(self, path, read: Callable[[str], TimedData]):
        self.path = Path(path)
        self.read = read
        self._parts: dict[str, tuple[tuple, TimedData]] = {}
        self.window = AUTO_WINDOW
        self.data: TimedData | None = None

    def fork(self) -> LogWatcher:
        """A watcher of the same log that starts from this one's last look (one per browser session)."""
        other = LogWatcher(self.path, self.read)
        other._parts, other.window, other.data = dict(self._parts), self.window, self.data
        return other

    def _files(self) -> list[Path]:
        if self.path.is_dir():
            return sorted(p for p in self.path.iterdir()
                          if p.suffix.lower() in (".parquet", ".pq") and not p.name.startswith((".", "_")))
        return [self.path]

    @staticmethod
    def _stamp(path: Path) -> tuple:
        stat = os.stat(path)
        return (stat.st_size, stat.st_mtime_ns)

    def poll(self) -> TimedData | None:
        """The whole log if a file changed or appeared since the last look (None: unchanged)."""
        files = self._files()
        stamps = {str(f): self._stamp(f) for f in files}
        if self.data is not None and stamps == {k: v[0] for k, v in self._parts.items()}:
            return None
        parts = {}
        for name, stamp in stamps.items():
            known = self._parts.get(name)
            parts[name] = known if known is not None and known[0] == stamp else (stamp, self.read(name))
        if not parts:
            raise InputError(f"{self.path}: no Parquet files to watch")
        self._parts = parts
        data = concat_timed([part for _, part in parts.values()])
        if self.window == AUTO_WINDOW:  # fixed once: the windows must not move as the log grows
            self.window = data.window if data.window != AUTO_WINDOW else auto_window(data.time)
        self.data = TimedData(data.probs, data.labels, data.confidence_form, time=data.time,
                              window=self.window)
        return self.data


def poll(app, watcher: LogWatcher) -> bool:
    """One look at the log: on a change, show the grown log (the over-time view by merged sums).
    Returns whether the data changed."""
    try:
        new = watcher.poll()
    except (InputError, OSError, ValueError) as exc:  # a file caught half-written: the next look retries
        app.status.show_error(f"Could not read the watched log: {exc}", refused="Log not updated.",
                              kept="The views keep the rows read before.")
        return False
    if new is None:
        return False
    old = app.data
    _seed_appended(app, old, new)
    name = app.controls.dataset
    app._add_dataset(name, new)
    return True


def _seed_appended(app, old, new: TimedData) -> None:
    """Put the over-time result of ``new`` in the store when ``new`` is ``old`` with rows appended: the
    previous result with the new rows merged in (nothing else recomputed)."""
    if not isinstance(old, CalibrationData) or getattr(old, "time", None) is None or new.n <= old.n:
        return
    if old.over_time_window() != new.over_time_window() or old.time.kind != new.time.kind:
        return
    old_options = app.controls.options(old.n)
    if old_options.n is not None:  # the shown result was of a subsample: computed afresh on the new rows
        return
    # new data are shown on all rows (the sidebar's size follows the data: Controls.fit_to)
    options = old_options.replace(n=None)
    previous = app.store.cached("over_time", old, old_options)
    if previous is None:
        return
    rows = slice(old.n, new.n)
    try:
        appended = previous.append(new.labels[rows], new.probs[rows],
                                   time=new.time.show(new.time.values[rows]))
    except InputError:  # rows earlier than the log's last time, or rewritten rows: computed afresh
        return
    app.store.seed("over_time", new, options, appended)


def follow(app, watcher: LogWatcher, period: float = WATCH_PERIOD_S):
    """Poll ``watcher`` every ``period`` seconds on the session's event loop (a served page) and return
    the periodic callback."""
    import panel as pn

    return pn.state.add_periodic_callback(lambda: poll(app, watcher), period=int(period * 1000))
