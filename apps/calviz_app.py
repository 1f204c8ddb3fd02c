"""`panel serve apps/calviz_app.py` entry point: one CalvizApp per browser session.

An optional data file can be given with `panel serve apps/calviz_app.py --args FILE`.  Uploads need no
server option: the page checks the app's 20 MB limit before sending a file and sends it in pieces below
Bokeh's websocket message limit.
"""

import sys

import panel as pn

from calviz.app import create_app

pn.extension(notifications=False)

_file = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].endswith(".py") else None
create_app(_file).servable(title="calviz")
