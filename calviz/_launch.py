"""The ``calviz`` command's entry point (``python -m calviz`` and the installed ``calviz`` script).

It is kept free of heavy imports so that a stop asked for while the command line's modules load (seconds on
a busy machine: NumPy, numba, Panel) ends the process at once, with status 0 and one line, instead of
Python's ``KeyboardInterrupt`` traceback; :func:`calviz.cli.main` then installs the commands' own stop before
it runs one.
"""

from __future__ import annotations

import os
import signal
import sys


def _stopped_while_starting(*_) -> None:
    # nothing has been opened or written yet, so the stop ends the process without any cleanup
    command = next((a for a in sys.argv[1:] if not a.startswith("-")), None)
    print(f"calviz {command}: stopped" if command else "calviz: stopped", file=sys.stderr, flush=True)
    os._exit(0)


def main() -> int:
    """Run the command line of ``sys.argv``; SIGTERM or Ctrl+C during its imports exit 0."""
    for each in (signal.SIGINT, signal.SIGTERM):
        signal.signal(each, _stopped_while_starting)
    from calviz.cli import main as run_command

    return run_command()
