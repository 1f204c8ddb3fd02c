"""Files calviz writes (reports): written whole or not at all, and only over regular files."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["atomic_text", "check_target"]


def check_target(path) -> Path:
    """The file to write for ``path``: a symbolic link's target (the link stays), refused — with an
    ``OSError`` naming ``path`` — when it is a directory or anything but a regular file (a device node,
    a FIFO, a socket: replacing one with a report would destroy it, writing to one may block)."""
    path = Path(path)
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return target


@contextlib.contextmanager
def atomic_text(path, *, encoding: str = "utf-8") -> Iterator[IO[str]]:
    """Write a text file atomically: yields a handle on a temporary file beside ``path`` (created at once,
    so a missing directory or a read-only place fails before anything is computed); only a complete
    write is renamed over ``path``.  Anything else — an error, a disk full, Ctrl+C or SIGTERM raised as
    ``KeyboardInterrupt`` — removes the temporary file and leaves a previous ``path`` intact.  See
    :func:`check_target` for the targets refused."""
    target = check_target(path)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    except OSError as exc:  # (named after the file asked for, not the temporary one)
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    try:
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would make the file private to its writer
        with os.fdopen(fd, "w", encoding=encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        check_target(path)  # (still: it may have been replaced meanwhile)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
