"""Server-side cost of updating one dashboard table: a new ColumnDataSource per change against the rows
replaced in the table's own source (what ``calviz.app.views._set_rows`` does).

The default dashboard's layout is put in a Bokeh document (as a served session's is), then its score
decomposition table gets new rows, alternately by both ways; medians after 5 warm-up rounds.  A new model
in a document makes Bokeh walk every model of it (``Document.models.invalidate``); rows replaced in place
send one data patch.

    nice python benchmarks/bench_table_update.py --reps 40
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=40)
    args = parser.parse_args(argv)
    from bokeh.document import Document
    from bokeh.models import ColumnDataSource

    from calviz.app import views
    from calviz.app.page import CalvizApp

    app = CalvizApp()
    app.start()
    app.wait()
    doc = Document()
    doc.add_root(app.layout().get_root(doc))
    table = next(t for t in app.tables if t.name == "decomposition").table
    rows = {k: np.asarray(v) for k, v in table.source.data.items()}
    size = len(next(iter(rows.values())))

    def new_source(i):
        table.source = ColumnDataSource({**rows, "change": np.full(size, i)})

    def in_place(i):
        views._set_rows(table, {**rows, "change": np.full(size, i)})

    ways = {"a new ColumnDataSource": new_source, "rows in place (views._set_rows)": in_place}
    times = {name: [] for name in ways}
    for i in range(args.reps + 5):
        for name, way in ways.items():
            start = time.perf_counter()
            way(i)
            if i >= 5:
                times[name].append(time.perf_counter() - start)
    print(f"models in the document: {len(doc.models)}; cores = {os.cpu_count()}; load {os.getloadavg()}")
    for name, values in times.items():
        print(f"{name}: median {1e3 * statistics.median(values):.2f} ms, "
              f"p90 {1e3 * float(np.percentile(values, 90)):.2f} ms ({len(values)} changes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
