"""``calviz serve LOG --time-column ts --watch``: the dashboard follows a prediction log as it grows.

A :class:`LogWatcher` stats the log — a file, or the Parquet files of a directory — and reads only what
is new when a file's size or modification time changed: a directory's new files, or the rows appended to
a growing file (a CSV file's bytes after its previous end; a Parquet file's row groups after its previous
ones, the earlier ones' metadata unchanged).  The log's rows are kept in arrays with room to grow, so a
look that finds k new rows costs O(k), not O(n).  Anything else (a file rewritten in place, removed, or a
new file that sorts before the known ones) reads the whole log again.

:func:`follow` polls it from the session's periodic callback (``pn.state.add_periodic_callback``); on new
rows, the over-time view's result is the previous one with the new rows' sums merged in
(:meth:`calviz.analysis.compute.OverTime.append`), shown at once (its figures' sources patched in place),
and the page's other views follow on the next tick of the session's event loop.  The window is fixed when
watching starts (an automatic window would otherwise move as the log grows).
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


#: bytes before a CSV file's previous end compared at each look (the file only grew: these are unchanged)
_TAIL_MARK_BYTES = 4096
#: a log's growth reserve: the arrays hold this factor of the rows (and at least 2^16 more)
_GROWTH = 1.5


class _Rows:
    """The log's arrays with room to grow: the data a look returns are read-only views of their first
    ``used`` rows, so writing appended rows after them leaves every earlier look's data as it was."""

    def __init__(self, data: TimedData, capacity: int):
        n = data.n
        self.probs = np.empty((capacity, *data.probs.shape[1:]), dtype=data.probs.dtype)
        self.labels = np.empty(capacity, dtype=data.labels.dtype)
        self.time = np.empty(capacity, dtype=data.time.values.dtype)
        self.probs[:n], self.labels[:n], self.time[:n] = data.probs, data.labels, data.time.values
        self.used = n

    def holds(self, data: TimedData, new: TimedData) -> bool:
        """Whether ``new``'s rows can be written after ``data``'s (the last rows written) in place."""
        k = new.n
        return (self.used == data.n and self.time.shape[0] >= data.n + k
                and self.probs.dtype == new.probs.dtype and self.labels.dtype == new.labels.dtype
                and self.time.dtype == new.time.values.dtype)

    def extend(self, data: TimedData, new: TimedData) -> TimedData:
        n, k = data.n, new.n
        self.probs[n:n + k], self.labels[n:n + k], self.time[n:n + k] = new.probs, new.labels, new.time.values
        self.used = n + k
        time = TimeColumn(_readonly_view(self.time[:n + k]), data.time.kind)
        return TimedData(_readonly_view(self.probs[:n + k]), _readonly_view(self.labels[:n + k]),
                         data.confidence_form, time=time, window=data.window)


class LogWatcher:
    """A prediction log on disk and the last state read of it.

    ``read(path)`` reads one file as :class:`~calviz._timed.TimedData` (the command line's readers and
    column options).  :meth:`poll` returns the whole log when it changed since the last look, else None.
    """

    def __init__(self, path, read: Callable[[str], TimedData]):
        self.path = Path(path)
        self.read = read
        self._stamps: dict[str, tuple] = {}
        self._marks: dict[str, object] = {}  # per file: what tells that it only grew (:meth:`_mark`)
        self._rows: _Rows | None = None
        self.window = AUTO_WINDOW
        self.data: TimedData | None = None

    def fork(self) -> LogWatcher:
        """A watcher of the same log that starts from this one's last look (one per browser session; they
        share the arrays, and the one whose data are not the last written copies them before appending)."""
        other = LogWatcher(self.path, self.read)
        other._stamps, other._marks, other._rows = dict(self._stamps), dict(self._marks), self._rows
        other.window, other.data = self.window, self.data
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
        if self.data is not None and stamps == self._stamps:
            return None
        if not stamps:
            raise InputError(f"{self.path}: no Parquet files to watch")
        new = self._new_rows(stamps) if self.data is not None else None
        if new is None:  # the first look, or not only grown: the whole log read again
            data = concat_timed([self.read(name) for name in stamps])
            self._rows = None
        else:
            data = self._extended(new)
        self._marks = {name: self._marks.get(name) if self._stamps.get(name) == stamp
                       else self._mark(name, stamp) for name, stamp in stamps.items()}
        self._stamps = stamps
        if self.window == AUTO_WINDOW:  # fixed once: the windows must not move as the log grows
            self.window = data.window if data.window != AUTO_WINDOW else auto_window(data.time)
        self.data = TimedData(data.probs, data.labels, data.confidence_form, time=data.time,
                              window=self.window)
        return self.data

    # -- reading only what is new ---------------------------------------------------------------------
    def _new_rows(self, stamps: dict) -> TimedData | None:
        """The rows added since the last look (None: the log changed otherwise, or cannot tell)."""
        known = list(self._stamps)
        if any(name not in stamps for name in known):
            return None
        added = [name for name in stamps if name not in self._stamps]
        if known and added and min(added) < known[-1]:
            return None  # a new file that sorts before a known one: rows in the middle of the log
        parts = []
        for i, name in enumerate(known):
            if stamps[name] == self._stamps[name]:
                continue
            if i != len(known) - 1:
                return None  # (a file before the last changed)
            tail = self._tail(name, self._stamps[name], stamps[name])
            if tail is None:
                return None
            parts.append(tail)
        parts += [self.read(name) for name in added]
        parts = [part for part in parts if part.n]
        return concat_timed(parts) if parts else None

    def _mark(self, name: str, stamp: tuple):
        """What a later look compares to tell that ``name``, read at ``stamp``, only grew: a CSV file's first
        line and the bytes before its end, a Parquet file's row groups (rows, bytes) — None for other files,
        and when the file changed since the stamp (what was read is then unknown: the next change reads the
        whole log)."""
        path = Path(name)
        suffix = path.suffix.lower()
        if self._stamp(path) != stamp:
            return None
        if suffix in (".csv", ".tsv", ".txt"):
            size = stamp[0]
            with open(path, "rb") as f:
                header = f.readline()
                f.seek(max(size - _TAIL_MARK_BYTES, 0))
                return (header, f.read(_TAIL_MARK_BYTES))
        if suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            meta = pq.ParquetFile(path).metadata
            return (meta.schema.to_arrow_schema(),
                    tuple((meta.row_group(i).num_rows, meta.row_group(i).total_byte_size)
                          for i in range(meta.num_row_groups)))
        return None

    def _tail(self, name: str, old: tuple, new: tuple) -> TimedData | None:
        """The rows appended to the file ``name`` since its stamp ``old`` (None: it did not only grow)."""
        mark = self._marks.get(name)
        if mark is None or new[0] <= old[0]:
            return None
        path = Path(name)
        import tempfile

        with tempfile.TemporaryDirectory(prefix="calviz-watch-") as tmp:
            part = Path(tmp) / f"appended{path.suffix}"
            if path.suffix.lower() in (".parquet", ".pq"):
                import pyarrow.parquet as pq

                schema, groups = mark
                reader = pq.ParquetFile(path)
                meta = reader.metadata
                now = tuple((meta.row_group(i).num_rows, meta.row_group(i).total_byte_size)
                            for i in range(meta.num_row_groups))
                if meta.schema.to_arrow_schema() != schema or now[:len(groups)] != groups or \
                        len(now) == len(groups):
                    return None
                pq.write_table(reader.read_row_groups(range(len(groups), len(now))), part)
            else:
                header, before = mark
                with open(path, "rb") as f:
                    if f.readline() != header:
                        return None
                    f.seek(old[0] - len(before))
                    if f.read(len(before)) != before or not before.endswith((b"\n", b"\r")):
                        return None
                    appended = f.read(new[0] - old[0])
                part.write_bytes(header + appended)
            try:
                return self.read(str(part))
            except InputError:  # (e.g. one row alone, or a bad cell: the whole file's reading says which)
                return None

    def _extended(self, new: TimedData) -> TimedData:
        """The last look's data with ``new``'s rows after them: written in place into the arrays with room
        to grow (O(new rows)); batch ids, or rows of another kind, through :func:`concat_timed`."""
        data = self.data
        if (data.time.kind == "label" or new.time.kind != data.time.kind or new.probs.shape[1:]
                != data.probs.shape[1:] or new.probs.ndim != data.probs.ndim
                or new.confidence_form != data.confidence_form):
            self._rows = None
            return concat_timed([data, new])
        if self._rows is None or not self._rows.holds(data, new):
            self._rows = _Rows(data, int((data.n + new.n) * _GROWTH) + (1 << 16))
        return self._rows.extend(data, new)


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
    name = app.controls.dataset
    if _seed_appended(app, app.data, new):
        # the over-time view is drawn now; the page's other views (computed afresh on the grown log)
        # follow on the next tick, after the view's patches have gone to the browser
        app._schedule(lambda: app._add_dataset(name, new))
    else:
        app._add_dataset(name, new)
    return True


def _seed_appended(app, old, new: TimedData) -> bool:
    """Put the over-time result of ``new`` in the store and show it, when ``new`` is ``old`` with rows
    appended: the previous result with the new rows merged in (nothing else recomputed).  Returns whether
    it did."""
    if not isinstance(old, CalibrationData) or getattr(old, "time", None) is None or new.n <= old.n:
        return False
    if old.over_time_window() != new.over_time_window() or old.time.kind != new.time.kind:
        return False
    old_options = app.controls.options(old.n)
    if old_options.n is not None:  # the shown result was of a subsample: computed afresh on the new rows
        return False
    # new data are shown on all rows (the sidebar's size follows the data: Controls.fit_to)
    options = old_options.replace(n=None)
    previous = app.store.cached("over_time", old, old_options)
    if previous is None:
        return False
    rows = slice(old.n, new.n)
    try:
        appended = previous.append(new.labels[rows], new.probs[rows],
                                   time=new.time.show(new.time.values[rows]))
    except InputError:  # rows earlier than the log's last time, or rewritten rows: computed afresh
        return False
    app.store.seed("over_time", new, options, appended, show=True)
    return True


def follow(app, watcher: LogWatcher, period: float = WATCH_PERIOD_S):
    """Poll ``watcher`` every ``period`` seconds on the session's event loop (a served page) and return
    the periodic callback."""
    import panel as pn

    return pn.state.add_periodic_callback(lambda: poll(app, watcher), period=int(period * 1000))
