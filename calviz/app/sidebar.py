"""The dashboard's sidebar: widgets generated from the controls, the upload, the Dask source and the
report export."""

from __future__ import annotations

import panel as pn

from calviz.analysis.options import OPTIONS
from calviz.app import sources
from calviz.app.texts import Text, heading
from calviz.present.labels import byte_size
from calviz.present.report import DEFAULT_REPORT_NAME
from calviz.sampling import SAMPLED_ROWS

__all__ = ["sidebar"]


def sidebar(app) -> pn.Column:
    """The sidebar of a :class:`~calviz.app.page.CalvizApp`; ``.n_widget`` is the subsample slider
    (disabled for Dask data, which is analysed on all rows)."""
    w, p = pn.widgets, app.controls.param
    stretch = dict(sizing_mode="stretch_width")
    controls = app.controls
    made = {o.name: option_widget(app, o, **stretch) for o in OPTIONS}  # one widget per option of the schema
    class_index, top_k, kernel, bandwidth = (made[name] for name in ("class_index", "top_k", "kernel",
                                                                       "bandwidth"))

    def visibility(*_):
        class_index.visible = controls.target == "classwise"
        top_k.visible = controls.target == "topk"

    controls.param.watch(visibility, ["target"])
    visibility()

    def smooth_inputs(*_):  # the smooth curve's settings, usable while the curve is shown
        kernel.disabled = bandwidth.disabled = not controls.show_smooth

    controls.param.watch(smooth_inputs, ["show_smooth"])
    smooth_inputs()
    n_widget = made["n"]
    label_column = w.TextInput(name="label column (y_true / correct)", placeholder="auto", **stretch)
    prob_column = w.TextInput(name="probability column (or p_ prefix)", placeholder="auto", **stretch)
    # a time column adds the over-time card (calibration per window, the monitor)
    time_column = w.TextInput(name="time column (calibration over time)", placeholder="none", **stretch)
    # sample weights for the views that take them (the others are named as not weighted)
    weight_column = w.TextInput(name="weight column (sample weights)", placeholder="none", **stretch)
    # binary files whose labels are class names (no/yes) or not 0/1: which one y_prob is the probability of
    pos_label = w.TextInput(name="positive label (names or not 0/1)", placeholder="1", **stretch)
    accept = ".csv,.parquet,.pq,.npz,.npy"
    # the reader's renormalize= / logits= keywords, for the next upload (error messages name these boxes)
    renormalize = w.Checkbox(name="rescale rows to sum to 1", value=False)
    logits = w.Checkbox(name="scores are logits", value=False)

    def columns() -> dict:
        flags = {name: True for name, box in (("renormalize", renormalize), ("logits", logits)) if box.value}
        timed = {"time_column": time_column.value.strip()} if time_column.value.strip() else {}
        weighted = {"weight_column": weight_column.value.strip()} if weight_column.value.strip() else {}
        positive = {"pos_label": pos_label.value.strip()} if pos_label.value.strip() else {}
        return {**sources.column_options(label_column.value, prob_column.value), **flags, **timed, **weighted,
                **positive}

    if app.served:  # the size is checked in the browser, the file sent in pieces (see calviz.app.upload)
        from calviz.app.upload import UploadInput

        def on_refused(filename: str, size: int) -> None:
            with app._hold():  # a message event, maybe run unlocked: see CalvizApp.open_dask_in_background
                app.status.show_error(
                    "Could not read the file. " + sources.too_large(filename, size, app.upload_limit)
                )

        file_input = UploadInput(
            accept=accept,
            max_bytes=app.upload_limit,
            on_file=lambda content, filename: app.load_file(content, filename, **columns()),
            on_refused=on_refused,
            height=40,
            **stretch,
        )
    else:
        file_input = w.FileInput(accept=accept, **stretch)

        def on_upload(event) -> None:
            if file_input.value is not None:
                app.load_file(file_input.value, file_input.filename or "upload", **columns())
                file_input.clear()  # selecting the same file again (e.g. after fixing the columns) loads it

        file_input.param.watch(on_upload, "value")
    export = w.FileDownload(
        callback=app.export_report,
        filename=DEFAULT_REPORT_NAME,
        color="primary",
        label="Export report",
        **stretch,
    )
    column = pn.Column(
        w.Select.from_param(p.dataset, name="dataset", **stretch),
        made["target"],
        class_index,
        top_k,
        n_widget,
        heading("Binning"),
        made["scheme"],
        made["n_bins"],
        heading("Smooth curve"),
        _live(w.Checkbox.from_param(p.show_smooth, name="smooth reliability curve"), app),
        kernel,
        bandwidth,
        heading("Testing"),
        made["alpha"],
        made["resampling"],
        *made["n_resamples"],
        made["seed"],
        made["all_rows"],
        heading(f"Your predictions (CSV, Parquet, NPZ, NPY; ≤ {byte_size(app.upload_limit)})"),
        label_column,
        prob_column,
        time_column,
        weight_column,
        pos_label,
        renormalize,
        logits,
        file_input,
        *(_dask_inputs(app, columns) if app.data_root is not None else []),
        app.comparison.widgets(),
        export,
        **stretch,
    )
    column.n_widget = n_widget
    return column


#: buttons of a radio group with room for their labels in the sidebar's width: Bokeh's 12 px side padding
#: cut "CORP (isotonic)" beside "equal width" and "equal mass" (the labels, not the padding, are the content)
_TIGHT_BUTTONS = ".bk-btn { padding-left: 4px; padding-right: 4px; }"

def option_widget(app, o, **stretch):
    """The widget of one option of the schema (``Option.widget``, ``Option.label``), bound to its control
    (whose bounds are the option's: a slider shows the soft range). The resamples box is a list: the box
    and its note (:func:`_resamples_input`)."""
    w, parameter = pn.widgets, app.controls.param[o.name]
    if o.name == "n_resamples":
        return _resamples_input(app, app.controls, label=o.label, **stretch)
    if o.widget == "radio":  # the chosen one filled, the other outlined (light and grey look alike)
        widget = w.RadioButtonGroup.from_param(parameter, button_type="primary", button_style="outline",
                                               stylesheets=[_TIGHT_BUTTONS], **stretch)
    elif o.widget == "checkbox":
        rows = max(SAMPLED_ROWS.values())
        suffix = f" (slow views use ≤ {rows:,} rows otherwise)" if o.name == "all_rows" else ""
        widget = w.Checkbox.from_param(parameter, name=o.label + suffix)
    else:
        kind = {"select": w.Select, "int_slider": w.IntSlider, "float_slider": w.FloatSlider,
                "int_input": w.IntInput}[o.widget]
        extra = {"format": "0.000"} if o.widget == "float_slider" else {}
        widget = kind.from_param(parameter, name=o.label, **extra, **stretch)
    return _live(widget, app)


def _live(widget, app):
    """``widget``, applying a change made in the browser on the session's next tick instead of 50 ms later,
    and on a served page under the page's hold.
    Panel waits ``Reactive._debounce`` (50 ms) after each browser change before applying it, to fold a
    burst of changes into one; on this page that wait was a quarter of a change's time to the screen (and
    a sixth of a target switch's at 10⁷ rows).  A burst still folds: while one change waits for the
    session's thread, later ones only replace its value (Panel's pending ``_events``), and the store waits
    before starting background work (``DEBOUNCE_S``).  Every option's widget is live, the target's too:
    a target switch that builds new figures (top-k, full) sends them in the same held message as the
    views (``test_browser_app.py::test_rapid_target_switches_keep_the_page_consistent``).  The dataset
    select and the comparison mode's controls keep Panel's wait: they replace the data or add a card.

    Under the hold, all that a change alters leaves in one message: the views, and the sidebar's inputs
    that follow the target (the class slider, the k input), whose own watcher runs after the views' and
    sent its change in a message of its own, which the browser applied and laid out before it painted the
    views."""
    widget._debounce = 0
    if app.served:
        process = widget._process_events

        def process_held(events) -> None:
            with app._hold():
                process(events)

        widget._process_events = process_held
    return widget


def _resamples_input(app, controls, *, label: str, **kwargs) -> list:
    """The resamples box and a note under it: a value outside the box's bounds (typed, not stepped) is
    set to the nearest bound, and the note says so — never silently ignored."""
    low, high = controls.param.n_resamples.bounds
    box = _live(pn.widgets.IntInput(
        name=label, value=controls.n_resamples, start=low, end=high, step=100, **kwargs,
        description=f"between {low} and {high}: resamples of the bootstrap ECE interval and of the smooth "
                    "curve's band (T-Cal resamples until its decision is settled, whatever this says)"), app)
    note = Text(visible=False, styles={"color": "#8a6d3b"})

    def on_box(event) -> None:
        value = controls.n_resamples if event.new is None else int(event.new)
        kept = min(max(value, low), high)
        with app._hold():  # the note, the box and the views change together (as the other sidebar callbacks)
            controls.n_resamples = kept
            if kept != value:
                box.value = kept  # the box shows what is used (this call runs on_box once more, with kept)
            clamped = kept != value
            note.object = f"resamples must be between {low} and {high}: set to {kept}." if clamped else ""
            note.visible = clamped

    box.param.watch(on_box, "value")
    controls.param.watch(lambda event: setattr(box, "value", event.new), "n_resamples")
    return [box, note]


def _dask_inputs(app, columns) -> list:
    """Inputs that open a Parquet file/directory under the data root on a Dask scheduler (``calviz serve
    --data-root DIR``, on a loopback address only)."""
    path = pn.widgets.TextInput(
        name="Parquet file or directory (on this machine)",
        placeholder=f"under {app.data_root}",
        sizing_mode="stretch_width",
    )
    scheduler = pn.widgets.TextInput(
        name="Dask scheduler",
        value="local",
        placeholder="local or tcp://host:8786",
        sizing_mode="stretch_width",
    )
    button = pn.widgets.Button(name="Open on Dask", button_type="default", sizing_mode="stretch_width")

    def on_click(event=None) -> None:
        if not path.value.strip():
            # held: Panel may run the click outside the document lock (see CalvizApp.open_dask_in_background)
            with app._hold():
                app.status.show_error("Enter the path of a Parquet file or directory first.")
            return
        app.open_dask_in_background(path.value.strip(), scheduler.value.strip() or "local", columns())

    button.on_click(on_click)
    return [
        heading("Larger than memory"),
        Text("All rows analysed on Dask; the distance measures on a uniform subsample."),
        path,
        scheduler,
        button,
    ]
