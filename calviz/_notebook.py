"""HoloViews figures in notebooks: the display state of this process.

Loading HoloViews' Bokeh backend prints BokehJS (about 3 MB) into a notebook cell; this module remembers
whether that happened, so a notebook gets it once, with every resource inline (offline notebooks cannot
reach a CDN), and a cell that only writes a report (:func:`no_notebook_output`) gets none.  The figures
themselves (:mod:`calviz.plots`) keep no state.
"""

from __future__ import annotations

import contextlib
import sys

from calviz._lazy import LazyModule

hv = LazyModule("holoviews")

__all__ = ["ensure_backend", "no_notebook_output"]


#: whether HoloViews' Bokeh backend is loaded in this process
_BACKEND_LOADED = False
#: whether BokehJS has been sent to this notebook kernel's page (by a display, not by a report)
_NOTEBOOK_SHOWN = False
#: > 0 while figures are built for a file only (:func:`no_notebook_output`)
_QUIET = 0


def _notebook_shell():
    """The IPython shell of a notebook kernel, or None (a served page, a script, a terminal IPython)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell if getattr(shell, "kernel", None) is not None else None


def ensure_backend() -> None:
    """Load HoloViews' Bokeh backend once per process (and, in a notebook, send BokehJS once).

    Checking ``hv.Store.renderers`` is not enough: importing ``holoviews.plotting.bokeh`` (Panel does)
    registers the renderer but not the ``hv.opts`` builders, which only ``hv.extension`` sets up.  In a
    notebook, ``hv.extension`` also prints BokehJS (about 3 MB) into the cell: only a cell that will
    display plots gets it, not one that writes a report (:func:`no_notebook_output`).

    Returns
    -------
    None

    Examples
    --------
    >>> import holoviews as hv
    >>> from calviz._notebook import ensure_backend
    >>> ensure_backend()
    >>> "bokeh" in hv.Store.renderers
    True
    """
    global _BACKEND_LOADED, _NOTEBOOK_SHOWN
    shell = _notebook_shell()
    if _BACKEND_LOADED and (shell is None or _NOTEBOOK_SHOWN or _QUIET):
        return
    if shell is not None and _QUIET:
        from IPython.utils.capture import capture_output

        with capture_output(stdout=False, stderr=False, display=True):
            hv.extension("bokeh", logo=False, inline=True)
    else:
        hv.extension("bokeh", logo=False, inline=True)  # in a notebook: BokehJS inline, no CDN
        if shell is not None:
            _show_offline_in_notebooks(shell)
            _NOTEBOOK_SHOWN = True
    _BACKEND_LOADED = True


@contextlib.contextmanager
def no_notebook_output():
    """Build figures for a file (a report) without printing BokehJS into a notebook cell.

    In a notebook, loading HoloViews' Bokeh backend prints BokehJS (about 3 MB) into the cell; inside this
    context it prints nothing, and the first plot displayed afterwards sends it to the page.  Outside a
    notebook it changes nothing.

    Returns
    -------
    contextlib.AbstractContextManager
        The context (it yields None).

    Examples
    --------
    >>> import calviz
    >>> from calviz import plots
    >>> with plots.no_notebook_output():
    ...     figure = plots.reliability_plot(calviz.reliability([0, 1, 1, 0], [0.2, 0.7, 0.9, 0.4]))
    >>> type(figure).__name__
    'Layout'
    """
    global _QUIET
    _QUIET += 1
    try:
        yield
    finally:
        _QUIET -= 1


def _show_offline_in_notebooks(shell) -> None:
    """In a notebook kernel, show HoloViews objects through Panel with every stylesheet inline.
    HoloViews' own display builds the Panel models around a plot with stylesheets that point at Panel's
    CDN, which an offline notebook cannot load; Panel's display inlines them when its config says inline."""
    import panel as pn

    pn.config.inline = True
    shell.display_formatter.mimebundle_formatter.for_type(
        hv.core.Dimensioned,
        lambda obj, include=None, exclude=None: pn.panel(obj)._repr_mimebundle_(include, exclude),
    )
