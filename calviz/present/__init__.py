"""Presentation: results in words, numbers and drawing tables, for every surface.

:mod:`calviz.present.labels` names measures and methods and formats numbers; :mod:`calviz.present.frames`
turns results into the tables a view draws (columns, colours, tooltips); :mod:`calviz.present.text` writes
every sentence of the views (titles, captions, verdicts, notes); :mod:`calviz.present.comparisons` writes
the comparisons (model vs model, groups, recalibration) as JSON, text and report sections;
:mod:`calviz.present.report` renders the static HTML report.  Nothing here computes a statistic, and no
module imports a GUI library at import time: the app, the report, the command line and notebooks read the
same words and tables.
"""
