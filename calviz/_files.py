"""Files calviz writes (reports): written whole or not at all, and only over regular files."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
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
    temporary = None
    try:
        # named before it is created, inside the cleanup's reach: a stop raised by a signal right after the
        # file exists removes it too (mkstemp creates the file before it returns the name)
        for _ in range(tempfile.TMP_MAX):
            temporary = target.parent / f".{target.name}.{secrets.token_hex(6)}.partial"
            try:
                fd = os.open(temporary, _CREATE_FLAGS, 0o600)
                break
            except FileExistsError:  # (another file's name: not ours to remove)
                temporary = None
            except OSError as exc:  # (named after the file asked for, not the temporary one)
                temporary = None
                raise type(exc)(exc.errno, exc.strerror, str(path)) from None
        else:
            raise FileExistsError(errno.EEXIST, "no free temporary file name", str(path))
        os.chmod(temporary, 0o644)  # created 0600 (as mkstemp does): readable by all once complete
        with os.fdopen(fd, "w", encoding=encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        check_target(path)  # (still: it may have been replaced meanwhile)
        os.replace(temporary, target)
    except BaseException:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise


#: the temporary file's creation: a new file (never an existing one, nor through a link), as mkstemp's
_CREATE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
