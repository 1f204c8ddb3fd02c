import os
import signal
import sys


def _stopped_while_starting(*_) -> None:
    # SIGTERM or Ctrl+C while the command line's modules load (seconds on a busy machine): nothing has been
    # opened or written yet, so the stop the user asked for ends the process at once, status 0, one line
    # (:func:`calviz.cli.main` installs the commands' own stop before it runs one)
    command = next((a for a in sys.argv[1:] if not a.startswith("-")), None)
    print(f"calviz {command}: stopped" if command else "calviz: stopped", file=sys.stderr, flush=True)
    os._exit(0)


for _each in (signal.SIGINT, signal.SIGTERM):
    signal.signal(_each, _stopped_while_starting)

from calviz.cli import main  # noqa: E402

sys.exit(main())
