"""The calviz dashboard: one ``param.Parameterized`` state object, widgets bound to it, four live views.

Flow: widget → parameter of :class:`CalvizApp` → (only the views whose inputs changed) →
``calviz.analysis`` compute function (cached by its inputs) → ``calviz.plots`` element → pane.

* Each view's updater has a watch list of exactly that view's inputs (:attr:`CalvizApp.VIEW_UPDATERS`,
  built from :data:`calviz.analysis.VIEW_INPUTS`, the single table of which options each computation
  reads), and results are cached by the same inputs, so e.g. moving the bin-count slider recomputes the
  reliability diagram and the ECE interval but neither T-Cal nor the distance bounds.  One watcher
  dispatches a change to the updaters whose inputs it touches, all inside one freeze of the Bokeh
  document (see :meth:`CalvizApp._frozen`).
* Resampling work (resampled T-Cal, bootstrap interval) runs in a background thread.  The analytic
  T-Cal result is shown at once and replaced when the resampled one arrives; a newer change bumps a
  generation counter so stale results are dropped (the running computation cannot be interrupted, but
  its result is ignored and queued stale jobs never start).
* Every browser session builds its own :class:`CalvizApp` (see :func:`create_app`), so sessions never
  share state.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import html
import io
import multiprocessing
import os
import sys
import threading
import time
import types
from collections import OrderedDict, defaultdict
from functools import partial

import holoviews as hv
import numpy as np
import panel as pn
import param

from calviz import plots
from calviz.analysis import (
    RESAMPLINGS,
    TARGETS,
    VIEW_INPUTS,
    AnalysisOptions,
    is_distributed,
    prepare,
    resolve_target,
    run_view,
    scalar_reliability,
    scalar_target,
    view_key,
)
from calviz.data import CalibrationData, InputError, as_calibration_data

__all__ = ["CalvizApp", "dashboard", "create_app", "UPLOAD_LIMIT_BYTES", "FALLBACK_DATASET"]

#: Uploads larger than this are refused with a message (Bokeh's default websocket message limit is
#: 20 MB; ``calviz serve`` may raise both).
UPLOAD_LIMIT_BYTES = 20 * 1024 * 1024

#: Name of the inline dataset used when ``calviz.datasets`` is not available.
FALLBACK_DATASET = "inline-overconfident"

_UPLOADED_PREFIX = "uploaded: "
_CACHE_SIZE = 64
# s: background jobs of a served session start this long after the change — after the server has sent
# the change's plots and (on a 2-core machine) while the browser draws them; starting at 0.3 s instead put
# the worker on the CPU mid-render and added ~0.1–0.3 s to the browser's latency (paired benchmark runs)
_JOB_DELAY = 0.8
_REL_HEIGHT = 430  # first row: reliability diagram (3 stacked panels) beside T-Cal
_LOW_HEIGHT = 280  # second row: ECE interval beside the distance bounds
_CLASS_PANEL_HEIGHT = 150  # full target: height of each per-class reliability panel (the pane grows)
_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"


def _dataset_names() -> tuple[list[str], str]:
    try:
        from calviz import datasets

        names = [info.name for info in datasets.list_datasets()]
        if names:
            return names, datasets.DEFAULT_DATASET
    except Exception:  # datasets not installed / failed: the app still works on inline data
        pass
    return [FALLBACK_DATASET], FALLBACK_DATASET


def _load_named(name: str) -> CalibrationData:
    if name == FALLBACK_DATASET:
        # an overconfident binary model: P(y=1 | z) = logistic(0.6 * logit z); seeded, 10 000 rows
        rng = np.random.default_rng(0)
        z = rng.beta(0.7, 0.7, size=10_000)
        logit = np.log(np.clip(z, 1e-9, 1)) - np.log(np.clip(1 - z, 1e-9, 1))
        y = rng.random(z.shape) < 1.0 / (1.0 + np.exp(-0.6 * logit))
        return as_calibration_data(y.astype(np.int64), z)
    from calviz import datasets

    return datasets.load_dataset(name)


def _read_upload(content: bytes, filename: str, columns: dict) -> CalibrationData:
    """Parse an uploaded file with calviz.io (NPZ/NPY are read with allow_pickle=False there)."""
    try:
        from calviz import io as calviz_io
    except ImportError as exc:
        raise InputError(f"file upload needs calviz.io, which is not available yet ({exc})") from None
    reader = getattr(calviz_io, "read_predictions_bytes", None)
    if reader is None:
        raise InputError("file upload needs calviz.io.read_predictions_bytes, which is not available yet")
    from calviz.analysis import _call

    result = _call(
        reader, content, filename, **{k: v for k, v in columns.items() if v is not None and v != ""}
    )
    return as_calibration_data(result)


class CalvizApp(param.Parameterized):
    """The state of one dashboard session; widgets are generated from these parameters."""

    dataset = param.Selector(default=None, objects=[], doc="Embedded dataset or uploaded file")
    target = param.Selector(
        default="auto",
        objects=list(TARGETS),
        doc="Calibration target: auto = binary for binary data, top-1 otherwise",
    )
    class_index = param.Integer(default=0, bounds=(0, 1), doc="Class for the classwise (one-vs-rest) view")
    top_k = param.Integer(default=2, bounds=(1, 2), doc="k for top-1-to-k calibration")
    n = param.Integer(default=2, bounds=(2, 2), doc="Subsample size (all rows by default)")
    scheme = param.Selector(
        default="equal_width", objects=["equal_width", "equal_mass"], doc="Binning scheme"
    )
    n_bins = param.Integer(default=15, bounds=(2, 100), doc="Number of bins (per axis)")
    show_smooth = param.Boolean(default=True, doc="Overlay the smooth reliability curve")
    kernel = param.Selector(
        default="reflected_gaussian",
        objects=["reflected_gaussian", "logit_gaussian"],
        doc="Kernel of the smooth reliability curve",
    )
    bandwidth = param.Number(
        default=0.0, bounds=(0.0, 0.5), step=0.005, doc="Kernel bandwidth (0 = automatic)"
    )
    alpha = param.Number(default=0.05, bounds=(0.001, 0.5), step=0.001, doc="Level α (1 − confidence)")
    resampling = param.Selector(default=AnalysisOptions().resampling, objects=list(RESAMPLINGS),
                                doc="Critical values of T-Cal")
    n_resamples = param.Integer(default=500, bounds=(20, 5000), doc="Number of resamples")
    seed = param.Integer(default=0, bounds=(0, None), doc="Random seed (subsample and resampling)")

    data = param.Parameter(
        precedence=-1, doc="The loaded data: CalibrationData, or a calviz.dask.DistributedSource"
    )

    def __init__(
        self,
        data=None,
        *,
        y_true=None,
        y_prob=None,
        upload_limit: int = UPLOAD_LIMIT_BYTES,
        datasets: list[str] | None = None,
        defer_initial: bool = False,
        allow_paths: bool = True,
        **params,
    ):
        names, default = _dataset_names() if datasets is None else (list(datasets), datasets[0])
        self._datasets_loaded: dict[str, CalibrationData] = {}
        if data is None and y_prob is not None:
            data = as_calibration_data(y_true, y_prob)
        elif data is not None and not isinstance(data, CalibrationData) and not is_distributed(data):
            data = as_calibration_data(*data) if isinstance(data, tuple) else as_calibration_data(data)
        if data is not None:
            mine = "your data (Dask)" if is_distributed(data) else "your data"
            names = [mine] + names
            self._datasets_loaded[mine] = data
            default = mine
        self.param.dataset.objects = names
        params.setdefault("dataset", default)
        super().__init__(**params)
        self.upload_limit = int(upload_limit)
        self.allow_paths = bool(allow_paths)
        self._cache: OrderedDict = OrderedDict()
        self._lock = threading.RLock()
        self.calls: dict[str, int] = {}
        self._pending_timings: dict[str, float] = {}
        self._last_timings: dict[str, float] = {}
        self._errors: dict[str, str] = {}
        self._generation: dict[str, int] = defaultdict(int)
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="calviz")
        self._jobs: dict[str, concurrent.futures.Future] = {}
        self._doc = pn.state.curdoc
        self._pipes: dict[str, dict] = {}  # view → {panel: the Pipe feeding its DynamicMap}
        self._signatures: dict[str, dict] = {}  # view → {panel: signature of the elements it draws}
        self._n_widget = None
        self._structure: dict[str, tuple | None] = {}
        self._inline_jobs = False
        self._build_panes()
        self._set_data(self._load(self.dataset), initial=True, compute=not defer_initial)
        if defer_initial:  # the first results arrive with start(): the page can be served before them
            for pane in (self.reliability_pane, self.tcal_pane, self.interval_pane, self.distance_pane):
                pane.loading = True
        inputs = sorted(set().union(*(watched for _, watched in self.VIEW_UPDATERS)))
        self.param.watch(self._on_inputs, inputs)
        self.param.watch(self._finish_update, [p for p in self.param if p != "name"], precedence=100)

    # -- data ---------------------------------------------------------------------------------------
    def _load(self, name: str) -> CalibrationData:
        if name not in self._datasets_loaded:
            self._datasets_loaded[name] = _load_named(name)
        return self._datasets_loaded[name]

    def start(self) -> None:
        """Compute and show the first results (``defer_initial=True`` apps; a served page calls this from
        ``pn.state.onload`` so the page itself is served at once)."""
        self._refresh_all()
        for pane in (self.reliability_pane, self.tcal_pane, self.interval_pane, self.distance_pane):
            pane.loading = False

    def _set_data(self, data: CalibrationData, *, initial: bool = False, compute: bool = True) -> None:
        k = data.n_classes
        with param.parameterized.discard_events(self) if initial else contextlib.nullcontext():
            self.param.class_index.bounds = (0, k - 1)
            self.param.top_k.bounds = (1, max(2, k))
            self.param.n.bounds = (min(data.n, 20), data.n)
        if self._n_widget is not None:
            self._n_widget.disabled = is_distributed(data)
        updates = {
            "n": data.n,
            "class_index": min(self.class_index, k - 1),
            "top_k": min(max(self.top_k, 1), k),
        }
        if initial:
            with param.parameterized.discard_events(self):
                self.param.update(**updates)
                self.data = data
            if compute:
                self._refresh_all()
        else:
            self.param.update(data=data, **updates)

    @param.depends("dataset", watch=True)
    def _on_dataset(self):
        try:
            data = self._load(self.dataset)
        except Exception as exc:
            self._show_error(f"Could not load dataset {self.dataset!r}: {exc}")
            return
        self._clear_error()
        self._set_data(data)

    def load_file(self, content: bytes, filename: str, **columns) -> bool:
        """Load an uploaded file; on failure show the error and keep the current data.  Returns success."""
        if content is None:
            return False
        if len(content) > self.upload_limit:
            self._show_error(
                f"{filename}: {len(content) / 1e6:.1f} MB is above the upload limit of "
                f"{self.upload_limit / 1e6:.1f} MB; use `calviz serve FILE` or `calviz report FILE`."
            )
            return False
        try:
            data = _read_upload(content, filename, {**columns, "max_bytes": self.upload_limit})
        except Exception as exc:  # every reader failure becomes a message; the app keeps its data
            message = str(exc) if filename in str(exc) else f"{filename}: {exc}"
            self._show_error(f"Could not read the file. {html.escape(message)}")
            return False
        self._clear_error()
        self._add_dataset(_UPLOADED_PREFIX + filename, data)
        return True

    def _add_dataset(self, name: str, data) -> None:
        """Offer loaded data first in the dataset selector and switch to it."""
        self._datasets_loaded[name] = data
        self.param.dataset.objects = [name] + [o for o in self.param.dataset.objects if o != name]
        if self.dataset == name:
            self._set_data(data)
        else:
            self.dataset = name

    def _on_upload(self, event) -> None:
        content = self._file_input.value
        if content is None:
            return
        self.load_file(content, self._file_input.filename or "upload", **self._column_options())

    def _column_options(self) -> dict:
        """The column mapping typed in the sidebar (empty: the reader's default): ``y_true`` and either
        ``y_prob`` or, for a name ending in "_", ``prob_prefix`` (columns <prefix>0..<prefix>K-1)."""
        columns = {"y_true": self._col_true.value.strip() or None}
        prob = self._col_prob.value.strip()
        columns["prob_prefix" if prob.endswith("_") else "y_prob"] = prob or None
        return columns

    # -- options, cache -----------------------------------------------------------------------------
    @property
    def options(self) -> AnalysisOptions:
        data = self.data
        n = None if data is None or self.n >= data.n else int(self.n)
        return AnalysisOptions(
            target=self.target,
            class_index=int(self.class_index),
            top_k=int(self.top_k),
            n=n,
            scheme=self.scheme,
            n_bins=int(self.n_bins),
            kernel=self.kernel,
            bandwidth=None if not self.bandwidth else float(self.bandwidth),
            alpha=float(self.alpha),
            resampling=self.resampling,
            n_resamples=int(self.n_resamples),
            seed=int(self.seed),
        )

    def result(
        self,
        view: str,
        options: AnalysisOptions | None = None,
        data: CalibrationData | None = None,
        *,
        remote: bool = False,
    ):
        """The (cached) result of one view's computation for the current (or given) options.

        ``remote=True`` computes in the shared worker process (resampling jobs): numba kernels hold the
        GIL while they run, so a kernel in a mere thread would still freeze the session's event loop."""
        options = options or self.options
        data = data if data is not None else self.data
        key = view_key(view, data, options)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        result, seconds, error = _run_remote(view, data, options) if remote else run_view(view, data, options)
        with self._lock:
            self.calls[view] = self.calls.get(view, 0) + 1
            self._pending_timings[view] = seconds
            if error:
                self._errors[view] = error
            else:
                self._errors.pop(view, None)
            self._cache[key] = result
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return result

    def analysis(self):
        """The :class:`calviz.analysis.Analysis` the app currently shows (from its cache: the exported
        report shows exactly these results; only missing ones are computed)."""
        from calviz.analysis import Analysis, DataSummary, prepare

        options, data = self.options, self.data
        views = ["reliability", "smooth", "tcal", "interval", "bootstrap", "distance"]
        if not scalar_reliability(data, options):  # no smooth curve beside per-rank / per-class diagrams
            views.remove("smooth")
        if options.resampling != "analytic":
            views.append("tcal_resampled")
        results = {view: self.result(view, options, data) for view in views}
        distance = results.pop("distance")
        return Analysis(
            options=options,
            summary=DataSummary.of(prepare(data, options), options, n_total=data.n),
            distance=distance[0] if distance is not None else None,
            witness=distance[1] if distance is not None else None,
            timings=dict(self._last_timings),
            errors=dict(self._errors),
            **results,
        )

    # -- panes --------------------------------------------------------------------------------------
    def _build_panes(self) -> None:
        opts = dict(sizing_mode="stretch_width", min_width=320, linked_axes=False)
        self.reliability_pane = pn.pane.HoloViews(None, height=_REL_HEIGHT, **opts)
        self.tcal_pane = pn.pane.HoloViews(None, height=_REL_HEIGHT, **opts)
        self.interval_pane = pn.pane.HoloViews(None, height=_LOW_HEIGHT, **opts)
        self.distance_pane = pn.pane.HoloViews(None, height=_LOW_HEIGHT, **opts)
        md = dict(sizing_mode="stretch_width", margin=(0, 10), styles={"font-size": "12px"})
        self.reliability_note = pn.pane.Markdown("", **md)
        self.tcal_note = pn.pane.Markdown("", **md)
        self.interval_note = pn.pane.Markdown("", **md)
        self.distance_note = pn.pane.Markdown("", **md)
        self.status = pn.pane.Markdown(
            "", sizing_mode="stretch_width", margin=(0, 10), css_classes=["calviz-status"]
        )
        self.progress = pn.indicators.Progress(
            active=False, visible=False, width=160, height=14, margin=(8, 10), bar_color="info"
        )
        self.progress_text = pn.pane.Str("", visible=False, margin=(4, 0), styles={"font-size": "12px"})
        self.alert = pn.pane.Alert("", alert_type="danger", visible=False, sizing_mode="stretch_width")
        self._file_input = pn.widgets.FileInput(
            accept=".csv,.parquet,.pq,.npz,.npy", sizing_mode="stretch_width"
        )
        self._col_true = pn.widgets.TextInput(
            label="label column (y_true / correct)", placeholder="auto", sizing_mode="stretch_width"
        )
        self._col_prob = pn.widgets.TextInput(
            label="probability column (or p_ prefix)",
            placeholder="auto",
            sizing_mode="stretch_width",
        )
        self._file_input.param.watch(self._on_upload, "value")
        self._build_dask_inputs()
        self.export_button = self._build_export()

    def _build_export(self):
        available = True
        try:
            from calviz import report as _report

            available = hasattr(_report, "render_report")
        except Exception:
            available = False
        button = pn.widgets.FileDownload(
            callback=self._export_report,
            filename="calviz_report.html",
            color="primary",
            label="Export report" if available else "Export report (not available yet)",
            disabled=not available,
            sizing_mode="stretch_width",
        )
        return button

    def _export_report(self):
        from calviz import report as _report
        from calviz.analysis import _call

        out = _call(
            _report.render_report,
            self.data,
            options=self.options,
            analysis=self.analysis(),
            title=f"calviz report — {self.dataset}",
        )
        if isinstance(out, str):
            out = out.encode("utf-8")
        return io.BytesIO(out)

    def widgets(self) -> pn.Column:
        """The sidebar: widgets generated from the parameters, upload, export."""
        w = pn.widgets
        p = self.param
        stretch = dict(sizing_mode="stretch_width")
        target = w.Select.from_param(p.target, name="calibration target", **stretch)
        class_index = w.IntSlider.from_param(p.class_index, name="class (classwise)", **stretch)
        top_k = w.IntSlider.from_param(p.top_k, name="k (top-1-to-k)", **stretch)

        def _visibility(*_):
            class_index.visible = self.target == "classwise"
            top_k.visible = self.target == "topk"

        self.param.watch(_visibility, ["target"])
        _visibility()
        self._n_widget = w.IntSlider.from_param(p.n, name="sample size n (subsample)", **stretch)
        self._n_widget.disabled = is_distributed(self.data)
        self.bins_slider = w.IntSlider.from_param(p.n_bins, name="bins (m)", **stretch)
        self.alpha_slider = w.FloatSlider.from_param(p.alpha, name="level α", format="0.000", **stretch)
        return pn.Column(
            w.Select.from_param(p.dataset, name="dataset", **stretch),
            target,
            class_index,
            top_k,
            self._n_widget,
            pn.pane.Markdown("**Binning**", margin=(10, 10, 0, 10)),
            w.RadioButtonGroup.from_param(p.scheme, **stretch),
            self.bins_slider,
            pn.pane.Markdown("**Smooth curve and kernels**", margin=(10, 10, 0, 10)),
            w.Checkbox.from_param(p.show_smooth, name="smooth reliability curve"),
            w.Select.from_param(p.kernel, name="kernel", **stretch),
            w.FloatSlider.from_param(
                p.bandwidth, name="bandwidth (0 = automatic)", format="0.000", **stretch
            ),
            pn.pane.Markdown("**Testing**", margin=(10, 10, 0, 10)),
            self.alpha_slider,
            w.Select.from_param(p.resampling, name="T-Cal critical values", **stretch),
            w.IntInput.from_param(p.n_resamples, name="resamples", **stretch),
            w.IntInput.from_param(p.seed, name="seed", **stretch),
            pn.pane.Markdown(
                f"**Your predictions** (CSV, Parquet, NPZ, NPY; ≤ {self.upload_limit // (1024 * 1024)} MB)",
                margin=(10, 10, 0, 10),
            ),
            self._col_true,
            self._col_prob,
            self._file_input,
            *self._dask_widgets(),
            self.export_button,
            sizing_mode="stretch_width",
        )

    def _dask_widgets(self) -> list:
        """Sidebar inputs that open a Parquet file/directory on a Dask scheduler (only when the app may read
        paths on its machine: ``calviz serve`` allows it when bound to a loopback address)."""
        if not self.allow_paths:
            return []
        return [
            pn.pane.Markdown(
                "**Larger than memory** (all rows analysed on Dask; the distance measures on a uniform "
                "subsample)",
                margin=(10, 10, 0, 10),
            ),
            self.parquet_path,
            self.scheduler_address,
            self.open_dask_button,
        ]

    def _build_dask_inputs(self) -> None:
        self.parquet_path = pn.widgets.TextInput(
            name="Parquet file or directory (on this machine)",
            placeholder="/data/predictions/",
            sizing_mode="stretch_width",
        )
        self.scheduler_address = pn.widgets.TextInput(
            name="Dask scheduler", value="local", placeholder="local or tcp://host:8786",
            sizing_mode="stretch_width",
        )
        self.open_dask_button = pn.widgets.Button(
            name="Open on Dask", button_type="default", sizing_mode="stretch_width"
        )
        self.open_dask_button.on_click(self._on_open_dask)

    def _on_open_dask(self, event=None) -> None:
        path, scheduler = self.parquet_path.value.strip(), self.scheduler_address.value.strip() or "local"
        if not path:
            self._show_error("Enter the path of a Parquet file or directory first.")
            return
        self.open_dask_button.disabled = True
        self._start_progress(f"opening {path} on Dask ({scheduler})…")
        columns = self._column_options()
        if self._inline_jobs or not self._served():
            self._open_dask(path, scheduler, columns)
        else:
            threading.Thread(
                target=self._open_dask, args=(path, scheduler, columns), name="calviz-open-dask", daemon=True
            ).start()

    def open_dask(self, path, scheduler: str = "local", **columns) -> bool:
        """Open a Parquet file/directory on a Dask scheduler ("local" or "tcp://host:port") as the current
        dataset (see :func:`calviz.dask.open_source`); on failure show the error and keep the current data.
        Returns success."""
        return self._open_dask(str(path), scheduler, columns)

    def _open_dask(self, path: str, scheduler: str, columns: dict) -> bool:
        try:
            from calviz import dask as calviz_dask

            source = calviz_dask.open_source(path, scheduler=scheduler, **columns)
        except ImportError as exc:
            message, source = f"Dask is needed for this (pip install 'calviz[dask]'): {exc}", None
        except Exception as exc:  # every failure becomes a message; the app keeps its data
            message, source = f"{path}: {str(exc).strip().splitlines()[0]}", None
        ok = source is not None
        self._schedule(partial(self._dask_opened, path, scheduler, source, None if ok else message))
        return ok

    def _dask_opened(self, path, scheduler, source, message) -> None:
        self.open_dask_button.disabled = False
        self._stop_progress("open")
        if source is None:
            self._show_error(html.escape(message))
            return
        self._clear_error()
        self._add_dataset(f"dask: {path} ({scheduler})", source)

    def main_area(self) -> pn.Column:
        def card(title, pane, note):
            return pn.Column(
                pn.pane.Markdown(f"#### {title}", margin=(0, 10)),
                pane,
                note,
                sizing_mode="stretch_width",
                margin=(5, 5),
            )

        return pn.Column(
            pn.Row(self.status, self.progress_text, self.progress, sizing_mode="stretch_width"),
            self.alert,
            pn.Row(
                card("1 · Reliability diagram", self.reliability_pane, self.reliability_note),
                card("2 · Multi-scale T-Cal", self.tcal_pane, self.tcal_note),
                sizing_mode="stretch_width",
            ),
            pn.Row(
                card("3 · ECE with confidence interval", self.interval_pane, self.interval_note),
                card("4 · Distance to calibration", self.distance_pane, self.distance_note),
                sizing_mode="stretch_width",
            ),
            sizing_mode="stretch_width",
        )

    def layout(self) -> pn.Row:
        """A plain Panel layout (sidebar + main) — renders inline in Jupyter."""
        return pn.Row(pn.Column(self.widgets(), width=300), self.main_area(), sizing_mode="stretch_width")

    def template(self) -> pn.template.FastListTemplate:
        """The served page: FastListTemplate with the widgets in the sidebar and the views in main."""
        return pn.template.FastListTemplate(
            title="calviz — is this classifier calibrated?",
            sidebar=[self.widgets()],
            main=[self.main_area()],
            sidebar_width=300,
            accent_base_color=plots.CALIBRATED,
            header_background="#134e4a",
            main_layout=None,
            font=_FONT,
            font_url="",
            design=_offline_fast_design(),
        )

    def view(self):
        return self.layout()

    def servable(self, title: str = "calviz"):
        return self.template().servable(title=title)

    def __panel__(self):
        return self.layout()

    # -- view updaters, each with its view's minimal watch list --------------------------------------
    #: (updater, the parameters it reads), in the order a change updates the views: the reliability
    #: diagram first (it also draws the smooth curve, whose band is resampled: n_resamples, seed)
    VIEW_UPDATERS = (
        (
            "_update_reliability",
            frozenset(
                ("data", *VIEW_INPUTS["reliability"], "seed", "show_smooth", "kernel", "bandwidth",
                 "n_resamples")
            ),
        ),
        ("_update_tcal", frozenset(("data", *VIEW_INPUTS["tcal_resampled"]))),
        ("_update_interval", frozenset(("data", *VIEW_INPUTS["bootstrap"], "seed"))),
        ("_update_distance", frozenset(("data", *VIEW_INPUTS["distance"], "seed"))),
    )

    def _on_inputs(self, *events) -> None:
        changed = {event.name for event in events}
        with self._frozen():
            for updater, watched in self.VIEW_UPDATERS:
                if changed & watched:
                    getattr(self, updater)()

    def _frozen(self):
        """Hold the Bokeh document's model-graph bookkeeping until every view of one change is updated.
        Each HoloViews plot update freezes the document by itself, and each thaw walks every model of the
        page (``Document.models.recompute``): on the served page that walk was 40 % of the server's time
        for an α change, once per view; nested freezes thaw once, at the outermost."""
        doc = self._doc
        return doc.models.freeze() if doc is not None else contextlib.nullcontext()

    def _update_reliability(self):
        data, options = self.data, self.options
        rel = self._ready("reliability", options, data)
        smooth = None
        # the smooth diagram belongs to scalar diagrams and needs the sample in memory (not on Dask)
        if self.show_smooth and scalar_reliability(data, options) and not is_distributed(data):
            smooth = self._cached("smooth", options, data)
            if smooth is None:  # curve now (no resampling), the band from a background job
                smooth = self.result("smooth_curve", options, data)
                self._submit("smooth", "smooth", data, options)
            else:
                self._cancel("smooth")
        self._render_reliability(rel, smooth, options, data)

    def _render_reliability(self, rel, smooth, options, data):
        if plots.is_multi(rel) or not scalar_reliability(data, options):
            self._render_multi_reliability(rel)
            return
        witness = None
        dist = self._cached("distance", options, data)
        if dist is not None:
            witness = dist[1]
        used = scalar_target(data, resolve_target(data, options))
        n_used = prepare(data, options).n
        label = {
            "binary": "predicted P(y = 1)",
            "top1": "top-1 confidence",
            "classwise": f"predicted P(class {self.class_index})",
        }.get(used, "confidence")
        m = int(np.asarray(plots.field(rel, "counts", default=[])).size) if rel is not None else 0
        title = f"{used} · {m} {self.scheme.replace('_', '-')} bins · n = {n_used:,}"
        self._show(
            "reliability",
            plots.reliability_elements(
                rel, smooth=smooth, witness=witness, title=title, xlabel=label, height=_REL_HEIGHT - 190
            ),
            structure=("scalar",),
        )
        note = "Bars: observed frequency per bin; whiskers: per-bin interval at level 1 − α. "
        note += (
            f"<span style='color:{plots.MISCALIBRATED}'>Crimson</span> bins' intervals miss the diagonal, "
            f"<span style='color:{plots.CALIBRATED}'>teal</span> ones cover it."
        )
        if used != resolve_target(data, options):
            # binary data: top-k and full calibration of a binary model are its binary calibration
            note += f" (For binary data the {resolve_target(data, options)} target is this binary diagram.)"
        if is_distributed(data):
            note += (" All rows computed on Dask; the smooth curve is not available there (it needs the "
                     "whole sample in one process).")
        bandwidth = plots.field(smooth, "bandwidth")
        if bandwidth is not None:
            band = (
                "with its pointwise band"
                if plots.field(smooth, "band_low") is not None
                else "(band computing…)"
            )
            note += f" Blue: smooth curve {band}, bandwidth σ = {float(bandwidth):.3f}."
        self.reliability_note.object = note + self._error_text("reliability", "smooth", "smooth_curve")

    def _render_multi_reliability(self, rel):
        """Top-k: one curve per rank with the ranks' histograms; full: a grid of per-class diagrams."""
        scheme = self.scheme.replace("_", "-")
        if plots.field(rel, "kind") == "class":
            panels = list(plots.field(rel, "panels", default=()))
            ncols = plots.class_grid_columns(len(panels))
            rows = max(1, -(-len(panels) // ncols))
            panel_height = max(_CLASS_PANEL_HEIGHT, min(200, (_REL_HEIGHT - 10) // rows))
            elements = plots.class_reliability_elements(rel, panel_height=panel_height)
            height = max(_REL_HEIGHT, rows * panel_height + 10)
            self._show("reliability", elements, structure=("class", tuple(elements), ncols), height=height)
        else:
            k = len(plots.field(rel, "panels", default=()))
            n = plots.field(rel, "n", default=0)
            title = f"top-{k} · {self.n_bins} {scheme} bins · n = {int(n):,}"
            elements = plots.rank_reliability_elements(rel, title=title, height=_REL_HEIGHT - 120)
            self._show("reliability", elements, structure=("rank", k))
        note = html.escape(plots.reliability_caption(rel))
        note += (
            " <i>The smooth curve and the smCE witness are defined for scalar predictions and are omitted for"
            " this target (select top1 or classwise to see them).</i>"
        )
        self.reliability_note.object = note + self._error_text("reliability")

    def _show(self, view: str, elements, *, structure=None, height: int | None = None) -> None:
        """Stream new plot elements into the view.  The first call builds one DynamicMap per panel, each
        fed by its own Pipe; later calls only send data, so Bokeh updates the existing figures in place
        (their data sources, ranges and titles) instead of replacing them — the difference between ~1 s
        and ~0.1 s per update — and only to the panels whose drawing changed
        (:func:`calviz.plots.element_signature`): an α change redraws the bars' whiskers but neither the
        confidence histogram nor the witness.

        ``elements``: one element, or a dict of panels (the reliability view).  Its panels depend on the
        target (``structure``: scalar diagram; one curve per rank, so k layers; one panel per class):
        when the structure changes the figures are rebuilt once, and the pane takes ``height`` (the
        per-class grid is taller than the default)."""
        panels = elements if isinstance(elements, dict) else {None: elements}
        signatures = {key: plots.element_signature(element) for key, element in panels.items()}
        pipes = self._pipes.get(view)
        if pipes is not None and self._structure.get(view) == structure and pipes.keys() == panels.keys():
            for key, element in panels.items():
                if self._signatures[view][key] != signatures[key]:
                    pipes[key].send(element)
            self._signatures[view] = signatures
            return
        pipes = self._pipes[view] = {key: hv.streams.Pipe(data=element) for key, element in panels.items()}
        self._signatures[view] = signatures
        self._structure[view] = structure
        pane = getattr(self, f"{view}_pane")
        maps = [hv.DynamicMap(_identity, streams=[pipe]) for pipe in pipes.values()]
        if view == "reliability":
            kind = structure[0] if structure else "scalar"
            ncols = structure[2] if kind == "class" else 1
            layout = (
                hv.Layout(maps)
                .cols(ncols)
                .opts(hv.opts.Layout(shared_axes=kind != "class", merge_tools=True, toolbar="right"))
            )
            pane.height = int(height or _REL_HEIGHT)
            pane.object = layout
        else:
            pane.object = maps[0]

    def shown(self, view: str):
        """The elements the view draws now: one element, or the dict of panels (reliability)."""
        pipes = self._pipes.get(view)
        if pipes is None:
            return None
        return pipes[None].data if None in pipes else {key: pipe.data for key, pipe in pipes.items()}

    def _ready(self, view, options, data):
        """The view's result.  In-memory data: computed on this thread (milliseconds).  Distributed data: a
        pass over all rows may take seconds, so an uncached result is computed by a background job that
        runs the view's updater again when it is done; meanwhile ``None`` (the view says it is computing)."""
        if not is_distributed(data) or self._inline_jobs or self._has(view, options, data):
            return self.result(view, options, data)
        self._submit(f"dask:{view}", view, data, options)
        return None

    def _cached(self, view, options, data):
        with self._lock:
            return self._cache.get(view_key(view, data, options))

    def _update_tcal(self):
        data, options = self.data, self.options
        analytic = self._ready("tcal", options, data)
        if analytic is None and is_distributed(data) and not self._has("tcal", options, data):
            # the resampled test starts once the analytic one is in (this updater runs again then)
            self._show_tcal(None, pending="computing on Dask…")
            return
        pending = None
        if options.resampling != "analytic":
            cached = self._cached("tcal_resampled", options, data)
            if self._has("tcal_resampled", options, data):
                self._show_tcal(cached or analytic)
                self._cancel("tcal")
                return
            pending = f"{options.resampling} resampling running…"
            self._submit("tcal", "tcal_resampled", data, options)
        else:
            self._cancel("tcal")
        self._show_tcal(analytic, pending=pending)

    def _show_tcal(self, result, pending=None):
        title = None
        if result is not None:
            title = plots.tcal_verdict(result)[0]
        self._show("tcal", plots.tcal_plot(result, title=title, pending=pending, height=_REL_HEIGHT - 20))
        note = plots.tcal_caption(result) + ". Solid line: statistic Tᵈ per scale; dashed: critical value"
        floor = plots.field(result, "min_attainable_pvalue")
        if floor is not None and float(floor) > float(plots.field(result, "alpha", default=1.0)):
            resamples = plots.field(result, "n_resamples")
            note += (
                f". With {resamples} resamples the smallest attainable p-value is {float(floor):.3g} > α,"
                " so this test cannot reject: raise the number of resamples"
            )
        if pending:
            note += f" — *{pending} (the analytic result is shown meanwhile)*"
        colour = (
            plots.MISCALIBRATED if result is not None and plots.field(result, "reject") else plots.CALIBRATED
        )
        self.tcal_note.object = f"<b style='color:{colour}'>{html.escape(note)}</b>" + self._error_text(
            "tcal", "tcal_resampled"
        )

    def _update_interval(self):
        data, options = self.data, self.options
        interval = self._ready("interval", options, data)
        boot = self._cached("bootstrap", options, data)
        pending = None
        if boot is None:
            pending = "bootstrap…"
            self._submit("bootstrap", "bootstrap", data, options)
        else:
            self._cancel("bootstrap")
        self._show_interval(interval, boot, pending)

    def _show_interval(self, interval, boot, pending=None):
        title = None
        if interval is not None:
            level = 100 * float(plots.field(interval, "level", default=0.0))
            title = f"{level:.0f}% intervals · {self.n_bins} bins" + (f" · {pending}" if pending else "")
        self._show(
            "interval",
            plots.interval_plot(interval, boot, pending=pending, height=_LOW_HEIGHT - 20, title=title),
        )
        self.interval_note.object = html.escape(plots.interval_caption(interval)) + self._error_text(
            "interval", "bootstrap"
        )

    def _update_distance(self):
        # the distance family (exact smCE, LP for dCE_lower, …) takes ~0.5 s at n = 10⁵: computed in the
        # worker process like the resampling jobs, so it never blocks the session
        data, options = self.data, self.options
        if self._has("distance", options, data):
            self._cancel("distance")
            self._show_distance(self._cached("distance", options, data))
        else:
            self._show_distance(None, pending=True)
            self._submit("distance", "distance", data, options)

    def _show_distance(self, dist, pending: bool = False):
        bounds = dist[0] if dist is not None else None
        title = "computing the distance bounds…" if pending else None
        if bounds is not None and plots.field(bounds, "lower") is not None:
            lo, hi = plots.field(bounds, "lower"), plots.field(bounds, "upper")
            title = f"implied dCE ∈ [{plots._fmt(lo)}, {plots._fmt(hi)}]"
        self._show("distance", plots.distance_plot(bounds, height=_LOW_HEIGHT - 20, title=title))
        note = "Computing…" if pending else html.escape(plots.distance_caption(bounds))
        data, options = self.data, self.options
        target = resolve_target(data, options)
        if not data.is_binary and target in ("topk", "full"):
            note += " (The distance family is defined for scalar predictions: shown for the top-1 reduction"
            note += f" of the {target} target.)"
        self.distance_note.object = note + self._error_text("distance")

    def _has(self, view, options, data) -> bool:
        with self._lock:
            return view_key(view, data, options) in self._cache

    def _refresh_all(self):
        self._inline_jobs = not self._served()
        try:
            with self._frozen():
                self._update_distance()
                self._update_reliability()
                self._update_tcal()
                self._update_interval()
        finally:
            self._inline_jobs = False
        self._finish_update()

    def _error_text(self, *views) -> str:
        msgs = [self._errors[v] for v in views if v in self._errors]
        if not msgs:
            return ""
        return "<br><span style='color:#8a6d3b'>" + "<br>".join(html.escape(m) for m in msgs) + "</span>"

    def _finish_update(self, *events) -> None:
        with self._lock:
            if self._pending_timings:
                self._last_timings = dict(self._pending_timings)
                self._pending_timings.clear()
        data = self.data
        total = sum(self._last_timings.values())
        parts = ", ".join(f"{k} {1000 * v:.0f}" for k, v in self._last_timings.items())
        target = resolve_target(data, self.options)
        where = f" · on **Dask** ({html.escape(data.scheduler)})" if is_distributed(data) else ""
        self.status.object = (
            f"**n** = {min(self.n, data.n):,} of {data.n:,} · **K** = {data.n_classes}{where} · "
            f"target **{target}** · last update **{1000 * total:.0f} ms**"
            + (f" <small>({parts} ms)</small>" if parts else "")
        )

    # -- background resampling ----------------------------------------------------------------------
    def _submit(self, kind: str, view: str, data, options) -> None:
        with self._lock:
            self._generation[kind] += 1
            generation = self._generation[kind]
        if self._inline_jobs:
            # outside a server the first render of the figures happens on the caller's thread (a notebook
            # displaying the layout): a job finishing meanwhile would update them from another thread,
            # which HoloViews does not support — so the first results are computed before returning
            self.result(view, options, data)
            self._apply_job(kind, generation, options, data)
            return
        self._start_progress()  # before the job exists: a job that ends at once hides the bar again
        self._jobs[kind] = self._executor.submit(self._run_job, kind, generation, view, data, options)
        running = [_job_label(k) for k, fut in self._jobs.items() if not fut.done()]
        self.progress_text.object = "computing: " + ", ".join(running) + "…"

    def _cancel(self, kind: str) -> None:
        """Results of earlier jobs of this kind are no longer wanted (the current one is cached)."""
        with self._lock:
            self._generation[kind] += 1
        self._stop_progress(kind)

    def _run_job(self, kind, generation, view, data, options):
        if self._served():
            # debounce: while a slider is dragged only the last value's job starts, and the browser gets
            # the new plots before the worker competes for the CPU
            time.sleep(_JOB_DELAY)
        if self._generation[kind] != generation:
            return  # superseded before it started
        self.result(view, options, data, remote=True)
        if self._generation[kind] != generation:
            return  # superseded while running: drop the stale result (it stays cached)
        self._schedule(partial(self._apply_job, kind, generation, options, data))

    def _apply_job(self, kind, generation, options, data):
        if self._generation[kind] != generation:
            return
        with self._frozen():
            self._apply_result(kind, options, data)

    def _apply_result(self, kind, options, data):
        if kind.startswith("dask:"):  # a view of distributed data is ready: its updater now finds it cached
            self._stop_progress(kind)
            view = kind.split(":", 1)[1]
            {"reliability": self._update_reliability, "tcal": self._update_tcal,
             "interval": self._update_interval}[view]()
            self._finish_update()
            return
        if kind == "tcal":
            self._show_tcal(self._cached("tcal_resampled", options, data))
        elif kind in ("smooth", "distance"):  # the band, or the smCE witness, joins the reliability diagram
            if kind == "distance":
                self._show_distance(self._cached("distance", options, data))
            current, current_data = self.options, self.data  # other widgets may have moved meanwhile
            rel = self._cached("reliability", current, current_data)
            smooth = None
            if self.show_smooth:
                smooth = self._cached("smooth", current, current_data) or self._cached(
                    "smooth_curve", current, current_data
                )
            if rel is not None:
                self._render_reliability(rel, smooth, current, current_data)
        else:
            self._show_interval(
                self._cached("interval", options, data), self._cached("bootstrap", options, data)
            )
        self._stop_progress(kind)
        self._finish_update()

    def _start_progress(self, text: str | None = None) -> None:
        self.progress.visible = self.progress_text.visible = True
        self.progress.active = True
        if text is not None:
            self.progress_text.object = text

    def _stop_progress(self, kind) -> None:
        running = [k for k, fut in self._jobs.items() if k != kind and not fut.done()]
        if not running:
            self.progress.active = False
            self.progress.visible = self.progress_text.visible = False

    def _served(self) -> bool:
        doc = self._doc
        return doc is not None and getattr(doc, "session_context", None) is not None

    def _schedule(self, callback) -> None:
        if self._served():
            self._doc.add_next_tick_callback(callback)
        else:
            callback()

    def wait(self, timeout: float = 60.0) -> None:
        """Block until background resampling has finished (tests, scripts)."""
        deadline = time.monotonic() + timeout
        for fut in list(self._jobs.values()):
            fut.result(timeout=max(0.0, deadline - time.monotonic()))

    # -- messages -----------------------------------------------------------------------------------
    def _show_error(self, message: str) -> None:
        self.alert.object = f"**Input refused.** {message} The previous dataset stays loaded."
        self.alert.visible = True

    def _clear_error(self) -> None:
        self.alert.visible = False
        self.alert.object = ""


# -- the worker process for resampling jobs ----------------------------------------------------------
_POOL: concurrent.futures.ProcessPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _worker_pool() -> concurrent.futures.ProcessPoolExecutor | None:
    """One process pool shared by all sessions (sessions share no state, only these workers)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            try:
                workers = max(1, min(2, os.cpu_count() or 1))
                _POOL = concurrent.futures.ProcessPoolExecutor(
                    max_workers=workers,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_warm_worker,
                )
            except Exception:  # no process support: compute in threads instead
                return None
        return _POOL


def shutdown_workers() -> None:
    """Stop the shared worker processes (``calviz serve`` calls this when it stops)."""
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)
        for process in list(getattr(pool, "_processes", {}).values()):  # a job may still be running
            process.terminate()


def _exit_with_parent(parent: int) -> None:
    """A worker whose server died (killed, so it could not shut its pool down) is re-parented: exit then,
    instead of lingering — and finishing a stale job — forever."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(0)


def _warm_worker() -> None:
    """Import the engine in a new worker (and load numba's cached kernels) before the first job."""
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), name="calviz-parent-watch",
                     daemon=True).start()
    for module in ("calviz.tcal", "calviz.intervals", "calviz.smooth"):
        try:
            __import__(module)
        except Exception:
            pass


def _compute_in_worker(view, probs, labels, options):
    return run_view(view, CalibrationData(probs, labels), options)


def _run_remote(view, data, options):
    """run_view in the worker process; falls back to this process if the pool is unusable."""
    global _POOL
    if is_distributed(data):  # the work runs on the Dask workers; this thread only waits for it
        return run_view(view, data, options)
    pool = _worker_pool()
    if pool is not None:
        try:
            return pool.submit(_compute_in_worker, view, data.probs, data.labels, options).result()
        except concurrent.futures.process.BrokenProcessPool:
            with _POOL_LOCK:
                _POOL = None
        except Exception:
            pass
    return run_view(view, data, options)


_JOB_LABELS = {
    "tcal": "T-Cal",
    "bootstrap": "bootstrap interval",
    "smooth": "smooth band",
    "distance": "distance bounds",
}


def _job_label(kind: str) -> str:
    if kind.startswith("dask:"):
        return f"{kind.split(':', 1)[1]} on Dask"
    return _JOB_LABELS.get(kind, kind)


def _identity(data):
    return data


def _offline_fast_design():
    """The Fast design without its Google web font, so the page makes no external request offline."""
    from panel.theme.fast import Fast

    class OfflineFast(Fast):
        _resources = {k: v for k, v in Fast._resources.items() if k != "font"}

    # resources such as 'js/fast_design.js' are resolved relative to the defining module's file
    # and the class name ('fast/js/fast_design.js'), so the subclass keeps both
    OfflineFast.__module__ = Fast.__module__
    OfflineFast.__name__ = OfflineFast.__qualname__ = Fast.__name__

    return OfflineFast


def dashboard(y_true=None, y_prob=None, **params) -> pn.Row:
    """The dashboard as a Panel layout that renders inline in Jupyter.

    ``calviz.dashboard(y_true, y_prob)`` opens on your predictions (validated with the usual rules);
    ``calviz.dashboard(calviz.dask.open_source("preds/", scheduler="local"))`` on distributed data (every
    view computed by Dask on all rows); without data it opens on the embedded default.  Keywords set
    initial parameters of :class:`CalvizApp` (``n_bins=20``, ``alpha=0.1``, ``target="classwise"`` …).
    """
    pn.extension(notifications=False)
    if y_prob is None and y_true is not None:  # CalibrationData, (y_true, y_prob) or a DistributedSource
        app = CalvizApp(y_true, **params)
    else:
        app = CalvizApp(y_true=y_true, y_prob=y_prob, **params)
    layout = app.layout()
    layout.app = app  # keep a handle for users who want the state object
    return layout


def create_app(file: str | None = None, *, data=None, **params) -> pn.template.FastListTemplate:
    """Build one session's app (call inside the served function: each browser session gets its own).

    ``file``: a predictions file to open on (read with ``calviz.io.read_predictions``); ``data``: already
    validated ``CalibrationData`` (immutable, so sessions may share it)."""
    if data is None and file:
        from calviz import io as calviz_io

        data = as_calibration_data(calviz_io.read_predictions(file))
    app = CalvizApp(data, defer_initial=True, **params)
    page = app.template()
    page.app = app
    # served: the page goes out at once and the views fill in when the browser has loaded it
    # (outside a server, onload runs the callback immediately)
    pn.state.onload(app.start)
    return page


class _CallableModule(types.ModuleType):
    """``calviz.dashboard`` is both this module and the public function :func:`dashboard`: importing the
    submodule (``from calviz.dashboard import CalvizApp``) rebinds the package attribute to the module,
    so the module itself forwards calls to the function."""

    def __call__(self, *args, **kwargs):
        return dashboard(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
