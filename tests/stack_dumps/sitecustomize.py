"""Imported at start-up by every Python process that a browser test's server starts (their ``PYTHONPATH``
names this folder; the worker processes inherit it): SIGUSR1 writes every thread's stack to stderr, the
server's log.  A test that waited in vain for a served page shows where the server and its workers were
(``conftest.served_app_stacks``)."""

import faulthandler
import signal

faulthandler.register(signal.SIGUSR1, all_threads=True)
