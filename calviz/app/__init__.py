"""The calviz dashboard, as the Panel documentation structures apps.

* :mod:`calviz.app.controls` — the parameters the user sets (nothing else);
* :mod:`calviz.app.store` — results cached by their inputs, background jobs, one reactive value per
  result (the only module that starts background work);
* :mod:`calviz.app.views` — one class per card, drawing the store's results with plain Bokeh figures
  whose data are replaced in place;
* :mod:`calviz.app.sources` — embedded datasets, uploads, Parquet on Dask;
* :mod:`calviz.app.sidebar` and :mod:`calviz.app.page` — the widgets, the page and the entry points
  (:func:`calviz.dashboard`, ``calviz serve``, ``panel serve apps/calviz_app.py``).
"""

from calviz.app.page import CalvizApp, create_app, dashboard

__all__ = ["CalvizApp", "create_app", "dashboard"]
