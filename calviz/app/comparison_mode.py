"""The dashboard's comparison mode: its controls, its sidebar section, and the request it asks the
comparison store for.

* before/after recalibration: the chosen method's map is fitted on half of the rows, and before and
  after are both judged on the other half;
* model A vs model B on the same examples: model B is an embedded model of the same test set (on an
  embedded dataset, by default its temperature-scaled version, or the base model of a recalibrated
  one), a second uploaded file (read with the default column names) or a second set of probability
  columns of the uploaded file; its labels must equal model A's;
* by group: a column of the uploaded file, or the label (``y_true``; the only column an embedded
  dataset has).

A bad second file or column shows a message in the comparison card; the loaded data and the last
comparison stay.
"""

from __future__ import annotations

import numpy as np
import panel as pn
import param

from calviz.analysis import is_distributed
from calviz.analysis.comparisons import unweighted_parts
from calviz.app import sources
from calviz.app.comparison_store import METHODS, MODES, ComparisonRequest, ComparisonStore
from calviz.app.comparison_view import ComparisonView
from calviz.app.controls import Controls
from calviz.app.store import DEBOUNCE_S
from calviz.app.texts import Text, heading
from calviz.present import text

__all__ = ["ComparisonControls", "ComparisonMode", "SECOND_FILE", "OTHER_COLUMNS"]

SECOND_FILE = "a second file"
OTHER_COLUMNS = "other columns of this file"
_LABEL = "y_true"
_RECALIBRATED = ("-platt", "-isotonic", "-temperature")


class ComparisonControls(param.Parameterized):
    """What the comparison mode compares (parameters only)."""

    mode = param.Selector(
        default="off", objects={label: mode for mode, label in MODES.items()}, doc="What to compare"
    )
    method = param.Selector(default="temperature", objects=list(METHODS), doc="Recalibration method")
    other = param.Selector(default=SECOND_FILE, objects=[SECOND_FILE, OTHER_COLUMNS], doc="Model B")
    other_columns = param.String(default="", doc="Model B's probability column (or prefix ending in _)")
    group_column = param.String(default=_LABEL, doc="Group column (the label column groups by label)")


# -- the mode -------------------------------------------------------------------------------------------
class ComparisonMode:
    """The comparison mode of one :class:`~calviz.app.page.CalvizApp`: its controls, store, card and
    sidebar section.  Recomputes when the app's data or analysis controls change or its own controls do."""

    def __init__(self, app):
        self.app = app
        self.controls = ComparisonControls(name="compare")
        self.store = ComparisonStore(
            app.store, schedule=app._schedule, debounce=DEBOUNCE_S if app.served else 0, inline=not app.served
        )
        self._view: ComparisonView | None = None  # built when a mode is first chosen (see .view)
        # the card is in the page only while the mode is on: hidden Bokeh models still take part in every
        # style and layout pass of the browser, which made each live change of the other views ~2× slower
        self.panel = pn.Column(sizing_mode="stretch_width", margin=0, visible=False)
        self.uploads: dict[str, tuple[bytes, str]] = {}  # dataset name → (content, filename)
        self.second = None  # (name, CalibrationData) of the second uploaded file
        self._arrays: dict[tuple, object] = {}  # (dataset, column/prefix) → model B or group values
        self._models: dict[str, object] = {}
        self._widgets = None
        self._fitted_for = None  # the dataset model B's default was chosen for
        self._names = sources.dataset_names()[0]
        self.controls.param.watch(
            self._on_controls, ["mode", "method", "other", "other_columns", "group_column"]
        )
        app.controls.param.watch(lambda *_: self.refresh(), [*Controls.ANALYSIS, "dataset"])
        self._fit_other()

    @property
    def view(self) -> ComparisonView:
        """The comparison card, built on first use: its figures are a third of a session's start-up
        (every page is built per browser session), and most sessions never compare."""
        if self._view is None:
            self._view = ComparisonView(self.store)
        return self._view

    # -- inputs -------------------------------------------------------------------------------------
    def remember_upload(self, name: str, content: bytes, filename: str) -> None:
        """The bytes of an upload loaded as dataset ``name`` (its other columns: model B, groups)."""
        self.uploads[name] = (bytes(content), filename)

    def load_second(self, content: bytes, filename: str) -> bool:
        """Model B from a second file; on failure the message shows and the loaded data stay."""
        from calviz._comparison import check_same_examples

        with self.app._hold():  # the alert's Div too (see refresh and CalvizApp.open_dask_in_background)
            try:
                data = sources.read_upload(content, filename, limit=self.app.upload_limit, columns={})
                check_same_examples(self.app.data, data, (_short(str(self.app.controls.dataset)), filename))
            except Exception as exc:
                self.view.show_error(f"Could not use the second file. {exc}")
                return False
            self.second = (filename, data)
            self.controls.other = SECOND_FILE
            self.refresh()
            return True

    def _on_controls(self, *events) -> None:
        self.app.moved_on()
        self._fit_other()
        self.refresh()

    def _fit_other(self) -> None:
        """Model B's choices: a second file, other columns of an uploaded file, and the embedded models;
        on an embedded dataset the default is its temperature-scaled version (same test set)."""
        names = self._names
        current = str(self.app.controls.dataset)
        choices = [
            SECOND_FILE,
            *([OTHER_COLUMNS] if current in self.uploads else []),
            *[n for n in names if n != current],
        ]
        p = self.controls.param.other
        if p.objects != choices:
            p.objects = choices
        if current != self._fitted_for:  # new data: model B defaults to its partner, else a second file
            self._fitted_for = current
            value = self._partner(current, names) or SECOND_FILE
            if self.controls.other != value:
                self.controls.other = value
        elif self.controls.other not in choices:
            self.controls.other = SECOND_FILE

    @staticmethod
    def _partner(current: str, names: list[str]) -> str | None:
        for suffix in _RECALIBRATED:
            if current.endswith(suffix) and current[: -len(suffix)] in names:
                return current[: -len(suffix)]
        return f"{current}-temperature" if f"{current}-temperature" in names else None

    def _model_b(self, data, dataset: str):
        other = self.controls.other
        if other == SECOND_FILE:
            if self.second is None:
                raise ValueError(
                    "choose the second model's predictions file (same examples, same order) "
                    "with 'model B file' below"
                )
            return self.second[0], self.second[1]
        if other == OTHER_COLUMNS:
            typed = self.controls.other_columns.strip()
            if not typed:
                raise ValueError(
                    "type model B's probability column (or its prefix ending in _, e.g. q_ for "
                    "q_0, q_1, …) under 'model B probability column(s)'"
                )
            key = (dataset, "columns", typed)
            if key not in self._arrays:
                content, filename = self.uploads[dataset]
                self._arrays[key] = sources.read_upload(
                    content, filename, limit=self.app.upload_limit, columns=sources.column_options("", typed)
                )
            if np.array_equal(self._arrays[key].probs, data.probs):
                raise ValueError(
                    f"{typed!r} names no probability column(s) of this file other than model A's"
                )
            return typed, self._arrays[key]
        if other not in self._models:
            self._models[other] = sources.load_named(other)
        return other, self._models[other]

    def _groups(self, data, dataset: str):
        from calviz.io import read_group_column

        column = self.controls.group_column.strip() or _LABEL
        key = (dataset, "groups", column)
        if key not in self._arrays:
            if column == _LABEL:
                self._arrays[key] = np.asarray(data.labels)
            elif dataset not in self.uploads:
                raise ValueError(
                    f"this dataset has no column {column!r}: group by the label ({_LABEL}) or "
                    "upload a file with a group column"
                )
            else:
                content, filename = self.uploads[dataset]
                self._arrays[key] = read_group_column(filename, column, data.n, content=content)
        return column, self._arrays[key]

    def request(self) -> ComparisonRequest | None:
        """The comparison the controls ask for (None: off); raises ValueError with the user's message."""
        from calviz._comparison import check_same_examples

        mode, data, dataset = self.controls.mode, self.app.data, str(self.app.controls.dataset)
        if mode == "off":
            return None
        if is_distributed(data):
            raise ValueError("comparisons need the predictions in memory; Dask data is analysed as one model")
        options = self.app.controls.options(data.n)
        # what the comparison analyses unweighted: said wherever the data carry sample weights
        unweighted = (" " + text.weights_note("", unweighted_parts(mode))
                      if getattr(data, "weights", None) is not None else "")
        if mode == "recalibration":
            return ComparisonRequest("recalibration", data, options, method=self.controls.method,
                                     source=unweighted.strip())
        if mode == "groups":
            column, values = self._groups(data, dataset)
            return ComparisonRequest(
                "groups", data, options, groups=values, source=f"Groups: column {column!r}.{unweighted}"
            )
        name_b, other = self._model_b(data, dataset)
        a, b = _short(dataset), _short(name_b)
        names = (a, b) if a != b else (f"A ({a})", f"B ({b})")
        check_same_examples(data, other, names)
        return ComparisonRequest(
            "models",
            data,
            options,
            other=other,
            names=names,
            source=f"Model A: {dataset}; model B: {name_b}.{unweighted}",
        )

    def refresh(self) -> None:
        # One hold for the whole change, as CalvizApp.refresh does.  Called from a widget's callback, the
        # card's Bokeh models (the verdict's "computing…" line) would otherwise be sent by Bokeh itself
        # once the callback returns, while Panel sends its own layouts' changes at once — or, when the
        # socket is still writing another message, queues them for a few ms.  The verdict's patch could
        # then reach the browser before the patch defining the card it is in (BokehJS: "reference pNNNN
        # isn't known"); held, every change of this refresh leaves as one patch, in order.
        with self.app._hold():
            self._refresh()

    def _refresh(self) -> None:
        off = self.controls.mode == "off"
        self.panel.visible = not off
        self.panel.objects = [] if off else [self.view.panel]
        if self._widgets is not None:
            self._visibility()
        if off:  # nothing to compute or to check while the mode is off
            if self._view is not None:
                self._view.clear_error()
            self.store.update(None)
            return
        self._fit_other()
        try:
            request = self.request()
        except Exception as exc:  # a bad second file / column: say so, keep what is shown
            self.view.show_error(sources.shorten(str(exc)))
            return
        self.view.clear_error()
        self.store.update(request)

    def report_sections(self) -> str:
        """The exported report's comparison section for the comparison shown ("" when none)."""
        from calviz.present.comparisons import comparison_html, comparison_summary

        outcome = self.store.entry.result
        if self.controls.mode == "off" or outcome is None:
            return ""
        if outcome.mode == "groups":
            results = {"groups": outcome.groups}
        elif outcome.mode == "recalibration":
            results = {"recalibration": (outcome.recalibration, outcome.comparison)}
        else:
            results = {"comparison": outcome.comparison}
        return comparison_html(comparison_summary(results))

    # -- the sidebar section ------------------------------------------------------------------------
    def widgets(self) -> pn.Column:
        w, p = pn.widgets, self.controls.param
        stretch = dict(sizing_mode="stretch_width")
        self.mode_widget = w.Select.from_param(p.mode, name="compare", **stretch)
        self.method_widget = w.Select.from_param(p.method, name="recalibration method", **stretch)
        self.other_widget = w.Select.from_param(p.other, name="model B", **stretch)
        self.columns_widget = w.TextInput.from_param(
            p.other_columns, name="model B probability column(s)", **stretch
        )
        self.file_widget = w.FileInput(accept=".csv,.parquet,.pq,.npz,.npy", **stretch)
        self.group_widget = w.TextInput.from_param(p.group_column, name="group column", **stretch)

        def on_file(event) -> None:
            if self.file_widget.value is not None:
                self.load_second(self.file_widget.value, self.file_widget.filename or "second file")
                self.file_widget.clear()

        self.file_widget.param.watch(on_file, "value")
        self._file_label = Text("model B file")
        self._heading = heading("Compare")
        self._widgets = pn.Column(**stretch)
        self._visibility()
        return self._widgets

    def _visibility(self) -> None:
        """Only the widgets of the chosen mode are in the page (so the page has one file input until a
        second file is asked for)."""
        mode, other = self.controls.mode, self.controls.other
        shown = [self._heading, self.mode_widget]
        if mode == "recalibration":
            shown.append(self.method_widget)
        elif mode == "models":
            shown.append(self.other_widget)
            if other == OTHER_COLUMNS:
                shown.append(self.columns_widget)
            elif other == SECOND_FILE:
                shown += [self._file_label, self.file_widget]
        elif mode == "groups":
            shown.append(self.group_widget)
        if [id(o) for o in self._widgets.objects[1:]] != [id(o) for o in shown[1:]]:
            self._widgets[:] = shown


def _short(name: str) -> str:
    return name[len(sources.UPLOADED_PREFIX) :] if name.startswith(sources.UPLOADED_PREFIX) else name
