"""`panel serve apps/calviz_app.py` entry point: one CalvizApp per browser session.

An optional data file can be given with `panel serve apps/calviz_app.py --args FILE`.  Uploads up to the
app's 20 MB limit need a larger websocket message limit than Bokeh's default:
`panel serve apps/calviz_app.py --websocket-max-message-size 29000000` (``calviz serve`` sets it itself).
"""

import sys

import panel as pn

from calviz.app import create_app

pn.extension(notifications=False)

_file = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].endswith(".py") else None
create_app(_file).servable(title="calviz")
