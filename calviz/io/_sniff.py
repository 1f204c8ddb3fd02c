"""Sniffing and limits: a source opened within its byte limit, its format from the name or the first
bytes."""

from __future__ import annotations

import io as _io
import os
from pathlib import Path
from typing import BinaryIO

from calviz._data import InputError
from calviz._params import LimitExceeded, Options

#: Supported formats and the file extensions that select them.
FORMATS = {
    "csv": (".csv", ".txt", ".tsv"),
    "parquet": (".parquet", ".pq"),
    "npz": (".npz",),
    "npy": (".npy",),
}

#: Default size limit (bytes) of a file, or of the uncompressed arrays in an NPZ / columns in a Parquet file.
DEFAULT_MAX_BYTES = 2**31
#: The decoded arrays of a file (rows × columns × 8 bytes) may be this many times ``max_bytes``: the most
#: a CSV file of ``max_bytes`` holds (two characters, a digit and a separator, per 8-byte value), so a text
#: file within the byte limit always passes and a compressed one decodes to no more than that.
DECODED_PER_FILE_BYTE = 4
#: Bytes a value takes once decoded (float64 probabilities, int64 or float64 labels).
DECODED_VALUE_BYTES = 8

_MAGIC = ((b"\x93NUMPY", "npy"), (b"PK\x03\x04", "npz"), (b"PAR1", "parquet"))


def _format_name(value: str) -> str:
    """A format name as given (any case, with or without a leading dot; an extension such as "pq" or
    "tsv" names its format) → one of :data:`FORMATS`, or the normalised text when it names none."""
    fmt = value.lower().lstrip(".")
    return {"pq": "parquet", "txt": "csv", "tsv": "csv"}.get(fmt, fmt)


class _Format(Options):
    """``format``: one of :data:`FORMATS`, spelt in any case or as an extension (".csv", "pq")."""

    def accepts(self, value) -> bool:
        return isinstance(value, str) and _format_name(value) in self.values



# -- opening and format detection -------------------------------------------------------------------
def _open(source, max_bytes) -> tuple[bytes | Path, str]:
    """(raw bytes or a Path, display name).  Size limits are checked before anything is parsed."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        label = path.name or str(path)
        if not path.exists():
            raise InputError(f"{label}: no such file ({path})")
        if path.is_dir():
            raise InputError(f"{label}: is a directory, expected a predictions file")
        size = path.stat().st_size
        _check_size(size, max_bytes, label)
        if size == 0:
            raise InputError(f"{label}: the file is empty")
        return path, label
    if isinstance(source, (bytes, bytearray, memoryview)):
        raw, label = bytes(source), "<bytes>"
    elif hasattr(source, "read"):
        label = Path(str(getattr(source, "name", "") or "<buffer>")).name
        raw = _read_limited(source, max_bytes, label)
        if isinstance(raw, str):
            raw = raw.encode()
    else:
        raise InputError(f"expected a path, bytes or a binary file object; got {type(source).__name__}")
    _check_size(len(raw), max_bytes, label)
    if len(raw) == 0:
        raise InputError(f"{label}: the file is empty")
    return raw, label


def _read_limited(stream: BinaryIO, max_bytes, label) -> bytes:
    if max_bytes is None:
        return stream.read()
    raw = stream.read(int(max_bytes) + 1)
    _check_size(len(raw), max_bytes, label)
    return raw


class SizeLimitError(LimitExceeded):
    """A file refused for its size: its bytes (``decoded`` None) or the arrays it decodes to, from its
    metadata before anything is decoded (``decoded``: "rows × columns")."""

    def __init__(self, message: str, size: int, limit: int, decoded: str | None = None):
        super().__init__(message)
        self.size, self.limit, self.decoded = int(size), int(limit), decoded

    def prefixed(self, label: str) -> SizeLimitError:
        """The same refusal, its message starting with the file's name."""
        return SizeLimitError(f"{label}: {self}", self.size, self.limit, self.decoded)


def _check_size(size: int, max_bytes, label: str) -> None:
    if max_bytes is not None and size > max_bytes:
        raise SizeLimitError(f"{label}: {size:,} bytes exceeds the size limit max_bytes={int(max_bytes):,}",
                             size, max_bytes)


def check_decoded_size(rows: int, columns: int, max_bytes) -> None:
    """Refuse a file whose ``rows`` × ``columns`` values, read from its metadata (a Parquet footer, NPY
    headers, a CSV header and its line breaks), decode to more than :data:`DECODED_PER_FILE_BYTE` ×
    ``max_bytes`` bytes: checked before anything is decoded, in O(1), whatever the file's compression."""
    if max_bytes is None:
        return
    size = int(rows) * int(columns) * DECODED_VALUE_BYTES
    limit = DECODED_PER_FILE_BYTE * int(max_bytes)
    if size > limit:
        shape = f"{int(rows):,} rows × {int(columns):,} columns"
        raise SizeLimitError(
            f"{shape} decode to {size:,} bytes, which exceeds the decoded size limit "
            f"{DECODED_PER_FILE_BYTE} × max_bytes = {limit:,} bytes "
            "(read it with a larger max_bytes, or a subsample of its rows)",
            size, limit, shape)


def _resolve_format(format, label: str, raw) -> str:
    if format is not None:  # checked by the public functions (validate_params)
        return _format_name(format)
    name = label.lower()
    for fmt, extensions in FORMATS.items():
        if name.endswith(extensions):
            return fmt
    head = raw[:8] if isinstance(raw, bytes) else _head(raw)
    for magic, fmt in _MAGIC:
        if head.startswith(magic):
            return fmt
    if not Path(label).suffix and _looks_like_text(raw):  # unnamed bytes / buffers: CSV is the text format
        return "csv"
    suffix = Path(label).suffix or "(none)"
    raise InputError(
        f"{label}: unknown format (extension {suffix}); use one of "
        f"{', '.join(e for exts in FORMATS.values() for e in exts)} or pass format="
    )


def _looks_like_text(raw) -> bool:
    sample = raw[:4096] if isinstance(raw, bytes) else b""
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return bool(sample) and b"\x00" not in sample


def _head(path: Path) -> bytes:
    with open(path, "rb") as f:
        return f.read(8)


def _last_byte(raw) -> bytes:
    if isinstance(raw, bytes):
        return raw[-1:]
    with open(raw, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1)


def _as_stream(raw):
    return _io.BytesIO(raw) if isinstance(raw, bytes) else open(raw, "rb")  # noqa: SIM115 (closed by caller)

