"""The dashboard page: controls, the result store and the views, composed for one session.

Flow: widget → :class:`~calviz.app.controls.Controls` parameter → :meth:`CalvizApp.refresh` →
:meth:`~calviz.app.store.ResultStore.update` (under one ``pn.io.hold``, so one change's patches go to
the browser together) → the store's entries → the views redraw the parts whose entries changed.
Every browser session builds its own :class:`CalvizApp` (:func:`create_app`): sessions share no state.
"""

from __future__ import annotations

import contextlib
import io
import numbers
import threading
from functools import partial

import panel as pn

from calviz._data import CalibrationData, InputError, as_calibration_data, message_for
from calviz._small_n import sample_size_note
from calviz.analysis import Analysis, DataSummary, is_distributed, prepare, result_fields, selected_views
from calviz.analysis.views import REGISTRY
from calviz.app import sources
from calviz.app.controls import Controls
from calviz.app.draw_more import DrawMore
from calviz.app.over_time import OWN_CARDS, OverTimeView
from calviz.app.painted import AfterPaint, after_sent
from calviz.app.store import DEBOUNCE_S, ResultStore
from calviz.app.texts import TEXTS_IN_PLACE_JS
from calviz.app.views import (
    ClassicalView,
    DistanceView,
    IntervalView,
    ReliabilityView,
    StatusView,
    TableView,
    TCalView,
    VerdictView,
)
from calviz.app.workers import share_data, share_named
from calviz.present import frames

__all__ = ["CalvizApp", "dashboard", "create_app"]

_CARD_MIN_WIDTH = 440  # px: below twice this, the notebook layout shows the cards one a row
_PREPARING = ("preparing: loading the compiled kernels — on a first run, compiling them (numba JIT on a cold "
              "cache; the time it took is shown when done)…")
_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"


class CalvizApp:
    """One session of the dashboard: its controls, data and views.

    Parameters
    ----------
    data : CalibrationData, (y_true, y_prob) or DistributedSource, optional
        Predictions to open on (default: the embedded default dataset).
    upload_limit : int
        Largest upload accepted, in bytes.
    datasets : list of str, optional
        The embedded datasets offered (default: all).
    data_root : path-like, optional
        Directory whose prediction files may be opened by name.
    **params
        Initial :class:`~calviz.app.controls.Controls` values (``n_bins=20``, ``alpha=0.1`` …).

    Attributes
    ----------
    controls : Controls
        The widgets' values.
    loaded : dict
        Data opened in this session, by name.
    """

    def __init__(
        self,
        data=None,
        *,
        upload_limit: int = sources.UPLOAD_LIMIT_BYTES,
        datasets: list[str] | None = None,
        data_root=None,
        **params,
    ):
        names, default = sources.dataset_names() if datasets is None else (list(datasets), datasets[0])
        self.loaded: dict[str, object] = {}
        if data is not None:
            if not isinstance(data, CalibrationData) and not is_distributed(data):
                data = as_calibration_data(*data) if isinstance(data, tuple) else as_calibration_data(data)
            default = "your data (Dask)" if is_distributed(data) else "your data"
            names = [default, *names]
            self.loaded[default] = data
        self.controls = Controls(dataset=default, name="calviz")
        fitted = {k: params.pop(k) for k in Controls.DATA_DEPENDENT if k in params}  # (bounds: the data's)
        self.controls.param.update(**self.controls.check(params, "CalvizApp"))
        self.controls.param.dataset.objects = names
        self.upload_limit = int(upload_limit)
        # Parquet paths typed into the page are read on the server: only under this folder (None: no box)
        self.data_root = data_root
        self._doc = pn.state.curdoc
        served = self._doc is not None and getattr(self._doc, "session_context", None) is not None
        self.served = served
        self._drawn_first = False  # (served: the first views drawn into the page's first document)
        self.store = ResultStore(
            schedule=self._schedule, debounce=DEBOUNCE_S if served else 0
        )
        self.status = StatusView(self.store, self.controls)
        self.verdict = VerdictView(self.store)
        self.views = [
            ReliabilityView(self.store),
            TCalView(self.store),
            IntervalView(self.store),
            DistanceView(self.store),
        ]
        # every view drawn as a table that has a slot of the store: one generic card each, after the four
        self.tables = [TableView(self.store, r.name) for r in REGISTRY
                       if r.frame is not None and r.slot in self.store.SLOTS and r.name not in OWN_CARDS]
        self.over_time = OverTimeView(self.store)  # (shown when the data have a time column)
        self.classical = ClassicalView(self.store)  # drawn below T-Cal, in the T-Cal card's room for it
        self.views[1].extra.append(self.classical.panel)
        self.draw_more = DrawMore(self)  # (under an undecided resampled T-Cal)
        self.views[1].extra.insert(0, self.draw_more.panel)
        self.data = self._sidebar = None
        self._fitting = False
        self._set_data(self._load(self.controls.dataset), refresh=False)
        n = fitted.get("n")
        if isinstance(n, numbers.Integral) and not isinstance(n, bool) and n > self.data.n:
            fitted["n"] = self.data.n  # as analyze(n=...): a subsample as large as the data is all of it
        self.controls.param.update(**self.controls.check(fitted, "CalvizApp"))
        self.controls.param.watch(self.refresh, list(Controls.ANALYSIS))
        self.controls.param.watch(self._on_dataset, ["dataset"])
        from calviz.app.comparison_mode import ComparisonMode

        self.comparison = ComparisonMode(self)  # the comparison card and its sidebar section
        if served:  # in the page's first document: the views fill in after the browser has loaded it
            self.status.show_preparing(_PREPARING)
            # (the other cards once the browser has painted the four views: see calviz.app.painted)
            timeout = self._doc.add_timeout_callback
            self.after_paint = AfterPaint(self.status.text.div, self._schedule, timeout)
            self.draw_after_main_views(self.after_paint)
            # data whose first page the server's start computed (large data), every result of this page
            # cached: the views are drawn on the session's first tick, before the browser — still loading
            # BokehJS — asks for the document, so they arrive in it and are drawn with it, instead of after it
            # in a patch (computed nothing: they need no kernels, so this waits for no warm-up).  Other pages
            # say "preparing" until the kernels are ready and their views are computed.
            from calviz.app.precomputed import first_views_done

            self._drawn_first = first_views_done(self.data) and self.store.all_cached(
                self.data, self.controls.options(self.data.n), show_smooth=self.controls.show_smooth)
            if self._drawn_first:
                self.after_paint.wait_for_load()  # (the other cards: once the browser has drawn the views)
                self._schedule(self._first_refresh)

    def draw_after_main_views(self, schedule) -> None:
        """The cards other than the four views and the status line — the overall verdict, the classical
        tests, the tables, the over-time card — redraw through ``schedule`` (on a served page: once the
        browser has painted the message being sent, :class:`~calviz.app.painted.AfterPaint`; all of them in
        one message).  A change's first message then carries only the four views and the status line: the
        browser shows them without first applying and laying out the other cards."""
        later = (self.verdict, self.classical, *self.tables, self.over_time)
        for view in later:
            view.draw_later(schedule)
        at_once = {slot for view in (self.status, *self.views) for slot in view.slots}
        # (what only those cards show is also computed after the views drawn at once are sent)
        self.store.compute_later({slot for view in later for slot in view.slots} - at_once)

    # -- data ---------------------------------------------------------------------------------------
    def _load(self, name: str):
        if name not in self.loaded:  # served: one copy per server, which the worker processes map
            load = sources.load_named
            self.loaded[name] = share_named(name, load) if self.served else load(name)
        return self.loaded[name]

    def _set_data(self, data, *, refresh: bool = True) -> None:
        self.data = self.status.data = data
        self._fitting = True  # the widgets follow the new bounds and values; one refresh follows below
        try:
            self.controls.param.update(**self.controls.fit_to(data.n, data.n_classes, data.is_binary))
        finally:
            self._fitting = False
        if self._sidebar is not None:
            self._n_widget.disabled = is_distributed(data)
        if refresh:
            self.refresh()

    def _on_dataset(self, event) -> None:
        with self._hold():  # the alert's Div and the views change together (see open_dask_in_background)
            try:
                data = self._load(event.new)
            except Exception as exc:
                self.status.show_error(f"Could not load dataset {event.new!r}: {exc}")
                return
            self.status.clear_error()
            self._set_data(data)

    def _add_dataset(self, name: str, data) -> None:
        """Offer loaded data first in the dataset selector and switch to it."""
        self.loaded[name] = data
        objects = self.controls.param.dataset.objects
        self.controls.param.dataset.objects = [name, *[o for o in objects if o != name]]
        if self.controls.dataset == name:
            self._set_data(data)
        else:
            self.controls.dataset = name

    def load_file(self, content: bytes, filename: str, **columns) -> bool:
        """Load an uploaded file; on failure show the error and keep the current data.  Returns success."""
        if content is None:
            return False
        with self._hold():  # called from the upload's message event: see open_dask_in_background
            try:
                data = sources.read_upload(content, filename, limit=self.upload_limit, columns=columns)
                data = share_data(data) if self.served else data  # (mapped by the worker processes)
            except Exception as exc:
                self.status.show_error(f"Could not read the file. {message_for(str(exc), 'app')}")
                return False
            self.status.clear_error()
            self.comparison.remember_upload(sources.UPLOADED_PREFIX + filename, content, filename)
            self._add_dataset(sources.UPLOADED_PREFIX + filename, data)
            if note := sample_size_note(data.n):  # accepted, but a tiny sample: say what that means
                self.status.show_error(note, refused="Few rows.", kept="The file is loaded.")
            return True

    def open_dask(self, path, scheduler: str = "local", **columns) -> bool:
        """Open a Parquet file/directory on a Dask scheduler ("local" or "tcp://host:port") as the current
        dataset; on failure show the error and keep the current data.  Returns success."""
        try:
            source = sources.open_dask(str(path), scheduler, columns)
        except Exception as exc:
            self._schedule(partial(self.status.show_error, str(exc)))
            return False
        self._schedule(partial(self.status.clear_error))
        self._schedule(partial(self._add_dataset, f"dask: {path} ({scheduler})", source))
        return True

    # -- updates ------------------------------------------------------------------------------------
    def _hold(self):
        return pn.io.hold(self._doc) if self.served else _notebook_hold()

    def _schedule(self, callback) -> None:
        """Run ``callback`` on the session's thread, its patches sent together; on a served page once the
        patch being sent has left (:func:`~calviz.app.painted.after_sent`)."""

        def held():
            with self._hold():
                callback()

        if self.served:
            after_sent(self._doc, held)
        else:
            held()

    def moved_on(self) -> None:
        """The user changed a control: the alert of a refused input goes (it would read as news about the
        change just made)."""
        if self.status.alert.visible:
            self.status.clear_error()

    def refresh(self, *events, inline: bool = False, start_now: bool = False) -> None:
        if self._fitting:
            return
        with self._hold():
            if events:
                self.moved_on()
                if self.served:  # (the other cards wait for this change's paint: not drawn per drag step)
                    self.after_paint.renew()
            options = self.controls.options(self.data.n)
            try:
                self.store.update(
                    self.data, options, show_smooth=self.controls.show_smooth, inline=inline,
                    start_now=start_now,
                )
            except InputError as exc:
                # a setting these data cannot have: said on the page, and the control goes back to the
                # value the views show (an uncaught error froze every view, with nothing on the page)
                self._fitting = True
                try:
                    self.controls.param.update(**{event.name: event.old for event in events})
                finally:
                    self._fitting = False
                self.status.show_error(str(exc), refused="Setting refused.",
                                       kept="The views keep the previous settings.")
                return
            self.status.draw()

    def start(self) -> None:
        """Compute and show the first results: at once outside a server (a notebook renders them); on a
        served page as soon as the server has loaded the compiled kernels — the page is shown at once,
        with a "preparing" line until then."""
        if not self.served:
            self.refresh(inline=True)
            return
        if self._drawn_first:  # (in the document the browser has drawn: the other cards follow its paint)
            self.after_paint.load()
            self.store.when_warm(partial(self._schedule, self._say_kernels_ready))
            return
        self.store.when_warm(partial(self._schedule, self._first_refresh))

    def _say_kernels_ready(self) -> None:
        """The status line of views drawn before the kernels were ready says how long the kernels took."""
        self._set_kernels_ready()
        self.status.draw()

    def _set_kernels_ready(self) -> None:
        from calviz.app.workers import WARMED
        from calviz.present.progress import kernels_ready

        if WARMED:
            self.status.kernels = kernels_ready(WARMED["seconds"], WARMED["compiled"])

    def _first_refresh(self) -> None:
        """The served page's first update, once the kernels are ready: the status line says how long the
        compile step (or loading the compiled kernels) took on this machine."""
        self._set_kernels_ready()
        # the views build their figures and tables now: Bokeh walks every model of the document again after
        # each one joins it (5 walks of the page's ~500 models), frozen only once, before the patch is sent
        with self._doc.models.freeze():
            self.refresh(start_now=True)

    def wait(self, timeout: float = 120.0) -> None:
        """Block until background work has finished (tests, scripts)."""
        self.store.wait(timeout)

    def analysis(self) -> Analysis:
        """The :class:`calviz.analysis.Analysis` the app shows now (from the store's cache: the exported
        report shows exactly these results; only missing ones are computed)."""
        data, options = self.data, self.controls.options(self.data.n)
        # the views of the analysis that apply (the registry's records), each from the store's cache
        results: dict = {}
        for name in selected_views(data, options):
            results.update(result_fields(name, self.store.result(name, data, options)))
        return Analysis(
            options=options,
            summary=DataSummary.of(prepare(data, options), options, n_total=data.n),
            timings=dict(self.store.timings),
            **results,
        )

    def export_report(self) -> io.BytesIO:
        from calviz.present import report

        html = report.render_report(
            self.data,
            self.controls.options(self.data.n),
            analysis=self.analysis(),
            title=f"calviz report — {self.controls.dataset}",
            extra_sections=self.comparison.report_sections(),
            source=str(self.controls.dataset),
        )
        return io.BytesIO(html.encode("utf-8"))

    # -- the page -----------------------------------------------------------------------------------
    def widgets(self) -> pn.Column:
        """The sidebar: widgets generated from the controls, upload, Dask source, export."""
        from calviz.app.sidebar import sidebar

        if self._sidebar is None:
            self._sidebar = sidebar(self)
            self._n_widget = self._sidebar.n_widget
            self._n_widget.disabled = is_distributed(self.data)
        return self._sidebar

    def main_area(self) -> pn.Column:
        """The status line, the four views in two rows and the comparison card (one layout, for Jupyter)."""
        rel, tcal, interval, distance = cards = [view.panel for view in self.views]
        for card in cards:  # two cards a row where there is room for two, else one (a narrow notebook output)
            card.styles = {**card.styles, "flex": f"1 1 {_CARD_MIN_WIDTH}px", "min-width": "0"}
        # a Row is a CSS flex box: its cards wrap below _CARD_MIN_WIDTH each.  Panel gives a Row the sum of
        # its cards' minimum widths as its own (right for cards side by side, not for cards that wrap): with
        # it, the second row kept 620 px in a 548 px notebook output and its figures were cut
        wrap = {"flex-wrap": "wrap", "min-width": "0"}
        return pn.Column(
            self.status.panel,
            self.verdict.panel,
            pn.Row(rel, tcal, sizing_mode="stretch_width", styles=wrap),
            pn.Row(interval, distance, sizing_mode="stretch_width", styles=wrap),
            *(table.panel for table in self.tables),
            self.over_time.panel,
            self.comparison.panel,
            sizing_mode="stretch_width",
            # a flex item is never narrower than its content by default: without this the main area kept
            # its first width in a narrower notebook output and was cut at the output's right edge
            styles={"min-width": "0"},
        )

    def layout(self) -> pn.Row:
        """A plain Panel layout (sidebar + main) — renders inline in Jupyter."""
        # the served page names its controls when its document is ready (see template); a notebook's
        # document never is to BokehJS (Panel's comm and location models are roots without a view), so
        # here a script runs when the sidebar is drawn (Panel's HTML pane runs the scripts it holds)
        names = pn.pane.HTML(f"<script>{_ACCESSIBLE_NAMES_JS}</script>", width=0, height=0, margin=0)
        return pn.Row(pn.Column(self.widgets(), names, width=300), self.main_area(),
                      sizing_mode="stretch_width", styles={"min-width": "0"})

    def template(self) -> pn.template.FastListTemplate:
        """The served page: the widgets in the sidebar, the views in main."""
        page = pn.template.FastListTemplate(
            title="calviz — is this classifier calibrated?",
            sidebar=[self.widgets()],
            # one Bokeh root per card, placed two by two by _MAIN_GRID_CSS: Bokeh lays out the whole root
            # a changed caption or title is in again (measuring every element of it), so with one root per
            # card a live change costs the cards it touches, not the whole page
            main=[self.status.panel, self.verdict.panel, *(view.panel for view in self.views),
                  *(t.panel for t in self.tables), self.over_time.panel, self.comparison.panel],
            raw_css=[_MAIN_GRID_CSS, _LOADING_CSS],
            sidebar_width=300,
            accent_base_color=frames.CALIBRATED,
            header_background="#134e4a",
            main_layout=None,
            font=_FONT,
            font_url="",
            design=_offline_fast_design(),
            # no header spinner: it would send two more patches per change and animate while the change
            # is drawn; the status line shows the background jobs
            busy_indicator=None,
        )
        _without_mathjax(page)
        _built_frozen(page)
        if self._doc is not None:
            from bokeh.models import CustomJS

            self._doc.js_on_event("document_ready", CustomJS(code=TEXTS_IN_PLACE_JS + _ACCESSIBLE_NAMES_JS))
        return page

    def __panel__(self):
        return self.layout()

    def open_dask_in_background(self, path: str, scheduler: str, columns: dict) -> None:
        """The sidebar's "Open on Dask": a path under the data root, opened off the session's thread."""
        # One hold for the whole change.  Panel runs a button's click outside the session's document lock
        # when another widget's change is still pending (the path just typed, debounced): a raw Bokeh
        # change there (the alert's or the progress line's Div) reached Bokeh's session unlocked, which
        # raised "_pending_writes should be non-None ..." and the refusal never showed.  Held, Panel
        # collects the changes and sends them as one patch, locked and in order.
        with self._hold():
            try:
                path = str(sources.path_under_root(path, self.data_root))
            except Exception as exc:
                self.status.show_error(str(exc))
                return
            self.status.show_preparing(f"opening {path} on Dask ({scheduler})…")
        if self.served:
            self.store.in_background(self.open_dask, path, scheduler, **columns)
        else:
            self.open_dask(path, scheduler, **columns)


# the template's main area: status line and comparison card across the page, the four views two by two
# (one column on narrow screens)
_MAIN_GRID_CSS = """
#main { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); align-content: start; }
#main > .card-margin { margin: 4px 0; }
#main > .card-margin:first-child, #main > .card-margin:nth-child(2), #main > .card-margin:last-child {
  grid-column: 1 / -1; }
@media (max-width: 1000px) { #main { grid-template-columns: minmax(0, 1fr); } }
"""

# Accessible names for the controls whose Bokeh views leave them unnamed (slider handles, check boxes, the
# spinners' up/down buttons, file choosers): each gets its widget's title (or label) as aria-label.  Run when
# the page's document is ready (a notebook: when its sidebar is drawn) and again after changes (a widget
# shown later, the comparison mode's controls), at most once per animation frame; elements that already
# have a name keep it (changes that draw no control — data, texts, ranges — start no walk).
_ACCESSIBLE_NAMES_JS = """
const label = () => {
  const seen = new Set();
  const walk = (view) => {
    if (!view || seen.has(view)) return;
    seen.add(view);
    const m = view.model, root = view.shadow_el;
    const text = (v) => (typeof v === 'string' ? v : '').trim();
    const only = m && m.labels && m.labels.length === 1 ? text(m.labels[0]) : '';
    const name = m ? (text(m.title) || text(m.label) || only) : '';
    const set = (el, value) => {
      if (!el.getAttribute('aria-label')) el.setAttribute('aria-label', value);
    };
    // a file chooser without a title (the notebook's upload, model B's file) is named by what it takes
    if (root) for (const el of root.querySelectorAll('input[type=file]')) set(el, name || 'predictions file');
    if (root && name) {
      for (const el of root.querySelectorAll('[role=slider], input[type=checkbox]')) set(el, name);
      for (const el of root.querySelectorAll('button.bk-spin-btn-up')) set(el, `increase ${name}`);
      for (const el of root.querySelectorAll('button.bk-spin-btn-down')) set(el, `decrease ${name}`);
    }
    let children = [];
    try { children = [...view.children()]; } catch (e) { children = view.child_views || []; }
    for (const child of children) walk(child);
  };
  const roots = Bokeh.index instanceof Map ? [...Bokeh.index.values()] : Object.values(Bokeh.index);
  for (const root of roots) walk(root);
};
if (!window._calviz_names) {
  window._calviz_names = true;
  let queued = false;
  const soon = () => {
    if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; label(); }); }
  };
  // new data, a new text, axis range or progress state draws no control: no walk in the frame that paints
  // a live change (every view of the page, searched element by element); nor does the page's answer that it
  // painted a change (a CustomJS model's tags, calviz.app.painted), a control's new value (the user's own
  // change: while a slider is dragged, a walk per frame would compete with drawing the change), or what the
  // page reports back after drawing it (a plot's new size, an automatic axis range)
  const noControl = new Set(['ColumnDataSource', 'Div', 'Title', 'Range1d', 'DataRange1d',
                             'panel.models.widgets.Progress', 'CustomJS']);
  const noNewControl = new Set(['value', 'value_throttled', 'value_input', 'active', 'inner_width',
                                'inner_height', 'outer_width', 'outer_height']);
  for (const doc of Bokeh.documents)
    doc.on_change((event) => {
      if (!(event.model && (noControl.has(event.model.type) || noNewControl.has(event.attr)))) soon();
    });
  soon();
}
"""

# the page's HTML already says "preparing", before BokehJS has drawn the first card: on a first run the
# browser spends about a second loading and running BokehJS and Panel, and the page would be blank meanwhile.
# The status card's placeholder is empty until Bokeh draws the card into it (whose own line then says the
# same), so the text goes as soon as the card is there.
_LOADING_CSS = f"""
#main > .card-margin:first-child [data-root-id]:empty::before {{
  content: "{_PREPARING}"; display: block; padding: 8px 12px; font-size: 14px; color: #475569;
}}
"""

# The first bytes of the served page, sent before the session's document is built: Bokeh writes the page
# only once the session exists (0.5-1 s here, longer while a first run compiles) and the browser then runs
# BokehJS before it draws, so the tab would be blank for a second or two.  The page that follows is a whole
# HTML document; the HTML parser files its head's elements into this body (scripts and styles work there)
# and merges its <html>/<body> attributes, and the first DOCTYPE keeps standards mode.  The line hides as
# soon as the status card's placeholder is in the page, where _LOADING_CSS shows the same words.
_PREPARING_FIRST = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><style>
#calviz-preparing {{ position: fixed; inset: 0 0 auto 0; margin: 0; padding: 26px 24px; font: 14px {_FONT};
  color: #475569; border-top: 56px solid #134e4a; background: #fff; }}
body:has(#main [data-root-id]) #calviz-preparing {{ display: none; }}
</style></head><body><p id="calviz-preparing" role="status">{_PREPARING}</p>
"""


def say_preparing_first(server, then=None) -> bool:
    """Make a Panel/Bokeh ``server``'s page handler send :data:`_PREPARING_FIRST` at once, then the page;
    ``then()`` is called once the page has been sent.

    Only for servers calviz starts itself (``calviz serve``: no login, no URL prefix, whose redirects
    cannot follow bytes already sent).  Returns whether the page handler was found."""
    from panel.io.server import DocHandler

    class PreparingFirst(DocHandler):
        async def get(self, *args, **kwargs):
            # headers go with the first bytes: the page handler's own ones would come too late
            self.set_header("Content-Type", "text/html; charset=UTF-8")
            self.set_header("Cache-Control", "no-store")
            self.write(_PREPARING_FIRST)
            await self.flush()
            await super().get(*args, **kwargs)
            if then is not None:
                then()

    found = False
    for rule in server._tornado.wildcard_router.rules:  # (Bokeh has no public hook for its page handler)
        if rule.target is DocHandler:
            rule.target, found = PreparingFirst, True
    return found


def _built_frozen(page) -> None:
    """The served page's document built with its model graph frozen: Bokeh walks every model of the
    document again whenever a root or a model joins it (17 walks of the page's ~300 models while Panel adds
    the template's roots, ~0.3 s each at load 18); frozen, it walks them once, when the page is built."""
    build = page.server_doc

    def server_doc(doc=None, *args, **kwargs):
        if doc is None or not hasattr(doc, "models"):
            return build(doc, *args, **kwargs)
        with doc.models.freeze():
            return build(doc, *args, **kwargs)

    page.server_doc = server_doc


def _without_mathjax(page) -> None:
    """Any Panel HTML pane in a served page makes Panel send MathJax with it — 1.8 MB of JavaScript that
    the browser parses before it draws anything (~0.2 s here) — and no text of this page needs it (the
    texts are Bokeh Divs, see :class:`~calviz.app.texts.Text`).  The one HTML pane left is the template's
    empty ``js_area`` root, which nothing in Panel writes to: an empty spacer takes its place."""
    js_area = page._render_items.get("js_area")
    if js_area is not None and isinstance(js_area[0], pn.pane.HTML) and not js_area[0].object:
        page._js_area = pn.Spacer(width=0, height=0, margin=0)
        page._render_items["js_area"] = (page._js_area, [])


def _offline_fast_design():
    """The Fast design without its Google web font, so the page makes no external request offline."""
    from panel.theme.fast import Fast

    class OfflineFast(Fast):
        _resources = {k: v for k, v in Fast._resources.items() if k != "font"}

    # resources such as 'js/fast_design.js' are resolved relative to the defining module's file and the
    # class name ('fast/js/fast_design.js'), so the subclass keeps both
    OfflineFast.__module__ = Fast.__module__
    OfflineFast.__name__ = OfflineFast.__qualname__ = Fast.__name__
    return OfflineFast


_NOTEBOOK_RESOURCES_LOADED = False
_NOTEBOOK_LOCK = threading.RLock()


@contextlib.contextmanager
def _notebook_hold():
    """Outside a server: one change's patches leave for the notebook together, with every stylesheet
    inline.  Panel inlines a notebook output's stylesheets at its first render only; an in-place update
    of a text pane sends the pane's stylesheets again as CDN URLs, which an offline notebook cannot load.
    The updates are held (job threads and the kernel's thread take turns), the stylesheets inlined, then
    sent (a document held with the 'combine' policy keeps only the last value of each property)."""
    with _NOTEBOOK_LOCK:
        if not pn.config.inline or pn.state._hold:  # CDN resources, or inside an outer hold
            yield
            return
        from bokeh.models import UIElement
        from panel.io.notebook import block_comm, patch_inline_stylesheets, push

        try:
            with block_comm():
                yield
        finally:
            for _, root, doc, comm in list(pn.state._views.values()):
                if comm is None:
                    continue
                for model in root.select({"type": UIElement}):
                    patch_inline_stylesheets(model)
                push(doc, comm)


def _load_notebook_resources() -> None:
    """BokehJS and Panel's JavaScript/CSS, inline (notebooks are often offline: no CDN), published once
    per kernel: each ``pn.extension`` call in a notebook sends the whole bundle again."""
    global _NOTEBOOK_RESOURCES_LOADED
    if not _NOTEBOOK_RESOURCES_LOADED:
        pn.extension(notifications=False, inline=True)
        _NOTEBOOK_RESOURCES_LOADED = True


def dashboard(y_true=None, y_prob=None, **params) -> pn.Row:
    """The live dashboard as a Panel layout that renders inline in Jupyter.

    The four views — reliability diagram, multi-scale T-Cal, ECE interval, distance bounds — with their
    controls, recomputed as the controls change; the exported report shows exactly what it shows.

    Parameters
    ----------
    y_true : array-like, CalibrationData or DistributedSource, optional
        Labels (then pass ``y_prob``), validated data, or distributed data
        (``calviz.dask.open_source("preds/", scheduler="local")``: every view computed by Dask on all
        rows).  Without data it opens on the embedded default.
    y_prob : array-like, optional
        The predicted probabilities.
    **params
        Initial controls (``n_bins=20``, ``alpha=0.1``, ``target="classwise"`` …).

    Returns
    -------
    panel.Row
        The layout; display it in a notebook cell, or ``.servable()`` it.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 1.5).astype(int)
    >>> app = calviz.dashboard(y, p, n_bins=10)
    >>> type(app).__name__
    'Row'
    """
    _load_notebook_resources()
    if y_prob is None:  # CalibrationData, (y_true, y_prob) or a DistributedSource — or nothing
        app = CalvizApp(y_true, **params)
    else:
        app = CalvizApp(as_calibration_data(y_true, y_prob), **params)
    app.start()
    layout = app.layout()
    layout.app = app  # keep a handle for users who want the state object
    return layout


def create_app(file: str | None = None, *, data=None, **params) -> pn.template.FastListTemplate:
    """Build one session's app (call inside the served function: each browser session gets its own).

    ``file``: a predictions file to open on (``calviz.io.read_predictions``); ``data``: already validated
    ``CalibrationData`` (immutable, so sessions may share it)."""
    if data is None and file:
        from calviz import io as calviz_io

        data = as_calibration_data(calviz_io.read_predictions(file))
    app = CalvizApp(data, **params)
    page = app.template()
    page.app = app
    # served: the page goes out at once and the views fill in when the browser has loaded it (outside a
    # server, onload runs the callback immediately)
    pn.state.onload(app.start)
    if app.served:
        pn.state.on_session_destroyed(lambda context: app.store.close())
    return page
