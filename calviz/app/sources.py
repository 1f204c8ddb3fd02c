"""Where the dashboard's data comes from: embedded datasets, uploaded files, Parquet on Dask.

Every function returns validated data or raises an exception whose message is shown to the user as is;
the app keeps its current data when one does.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from calviz._data import CalibrationData, InputError, as_calibration_data

__all__ = [
    "UPLOAD_LIMIT_BYTES",
    "FALLBACK_DATASET",
    "UPLOADED_PREFIX",
    "dataset_names",
    "load_named",
    "read_upload",
    "open_dask",
]

#: Uploads larger than this are refused with a message (on a served page by the browser, before
#: sending the file).
UPLOAD_LIMIT_BYTES = 20 * 1024 * 1024

#: Name of the inline dataset used when ``calviz.datasets`` is not available.
FALLBACK_DATASET = "inline-overconfident"

UPLOADED_PREFIX = "uploaded: "


def dataset_names() -> tuple[list[str], str]:
    """The embedded datasets and the default one (the inline fallback when none can be listed)."""
    try:
        from calviz import datasets

        names = datasets.dataset_names()
        if names:
            return names, datasets.DEFAULT_DATASET
    except Exception:  # datasets not installed / failed: the app still works on inline data
        pass
    return [FALLBACK_DATASET], FALLBACK_DATASET


def load_named(name: str) -> CalibrationData:
    """An embedded dataset by name."""
    if name == FALLBACK_DATASET:
        # an overconfident binary model: P(y=1 | z) = logistic(0.6 * logit z); seeded, 10 000 rows
        rng = np.random.default_rng(0)
        z = rng.beta(0.7, 0.7, size=10_000)
        logit = np.log(np.clip(z, 1e-9, 1)) - np.log(np.clip(1 - z, 1e-9, 1))
        y = rng.random(z.shape) < 1.0 / (1.0 + np.exp(-0.6 * logit))
        return as_calibration_data(y.astype(np.int64), z)
    from calviz import datasets

    return datasets.load_dataset(name)


def column_options(label_column: str, prob_column: str) -> dict:
    """The reader's column keywords for what was typed in the sidebar (empty: the reader's default):
    ``y_true`` and either ``y_prob`` or, for a name ending in "_", ``prob_prefix`` (columns
    <prefix>0..<prefix>K-1)."""
    columns = {}
    if label_column.strip():
        columns["y_true"] = label_column.strip()
    prob = prob_column.strip()
    if prob:
        columns["prob_prefix" if prob.endswith("_") else "y_prob"] = prob
    return columns


def read_upload(content: bytes, filename: str, *, limit: int, columns: dict) -> CalibrationData:
    """An uploaded file's predictions (``calviz.io`` reads NPZ/NPY with ``allow_pickle=False``)."""
    if not content:
        raise InputError(f"{filename}: the file is empty")
    if len(content) > limit:
        raise InputError(too_large(filename, len(content), limit))
    columns = dict(columns)
    time_column = columns.pop("time_column", None)
    weight_column = columns.pop("weight_column", None)
    from calviz import io as calviz_io

    try:
        data = calviz_io.read_predictions_bytes(content, filename, max_bytes=limit, **columns)
    except calviz_io.SizeLimitError as exc:  # decoding to more than the limit allows, from the metadata
        raise InputError(too_large(filename, exc.size, exc.limit, exc.decoded)) from None
    except Exception as exc:  # every reader failure becomes a message naming the file
        message = str(exc) if filename in str(exc) else f"{filename}: {exc}"
        raise InputError(shorten(message)) from None
    data = as_calibration_data(data)
    data = data if time_column is None else _with_upload_time(data, content, filename, time_column)
    return data if weight_column is None else _with_upload_weights(data, content, filename, weight_column)


def _with_upload_weights(data, content: bytes, filename: str, column: str):
    """The uploaded predictions carrying their weight column (read and validated as ``calviz serve
    --weight-column`` does)."""
    from calviz._weights import with_weights
    from calviz.io import read_weight_column

    return with_weights(data, read_weight_column(filename, column, data.n, content=content),
                        name=f"{filename}: weight column {column!r}")


def _with_upload_time(data, content: bytes, filename: str, column: str):
    """The uploaded predictions with their time column (read as ``calviz serve --time-column`` reads it)."""
    import tempfile

    from calviz._timed import with_time
    from calviz.cli_monitor import read_time_column

    suffix = Path(filename).suffix.lower() or ".csv"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"upload{suffix}"
        path.write_bytes(content)
        try:
            time = read_time_column(str(path), column, data.n)
        except InputError as exc:  # (named by the upload's name, not the temporary file's)
            raise InputError(str(exc).replace(str(path), filename)) from None
    try:
        return with_time(data, time)
    except InputError as exc:
        raise InputError(f"{filename}: time column {column!r}: {exc}") from None


def too_large(filename: str, size: int, limit: int, decoded: str | None = None) -> str:
    """Why a file of ``size`` bytes is refused (the browser checks the size before sending the file), or
    (``decoded``: its "rows × columns", read from its metadata) a file that decodes to ``size`` bytes,
    above the decoded limit."""
    from calviz.present.labels import byte_size

    what = byte_size(size) if decoded is None else f"{decoded} decode to {byte_size(size)}, which"
    limit_name = "upload limit" if decoded is None else "upload limit for decoded data"
    return (
        f"{filename}: {what} is above the {limit_name} of {byte_size(limit)}; "
        "use `calviz serve FILE` or `calviz report FILE`."
    )


def path_under_root(path: str, root) -> Path:
    """The file or directory ``path`` names under the data root ``root`` (relative to it, or absolute
    inside it).  Anything else — outside the root (``..``, symbolic links out of it), missing,
    unreadable, a URL — is refused with one and the same message, so the box tells a client nothing
    about the server's other files."""
    refused = InputError(f"{path}: no readable Parquet file or directory under the data root")
    if _URL.match(path) or "\x00" in path:
        raise refused
    base = Path(root).resolve()
    try:
        target = (base / path).resolve()
    except (OSError, RuntimeError):
        raise refused from None
    if not target.is_relative_to(base) or not target.exists() or not os.access(target, os.R_OK):
        raise refused
    if target.is_dir() and _links_out_of(target, base):  # a dataset's files are opened one by one
        raise refused
    return target


def _links_out_of(directory: Path, base: Path) -> bool:
    """Whether a symbolic link anywhere under ``directory`` (followed, link after link) leads out of
    ``base``: a Parquet dataset's reader would open what it points to."""
    for folder, dirs, files in os.walk(directory):  # (links to folders are listed, not entered)
        for name in (*dirs, *files):
            entry = Path(folder) / name
            if entry.is_symlink():
                try:
                    if not entry.resolve().is_relative_to(base):
                        return True
                except (OSError, RuntimeError):  # a loop of links
                    return True
    return False


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def shorten(message: str, limit: int = 400) -> str:
    """A message cut to ``limit`` characters (a reader may quote a whole, huge cell)."""
    return message if len(message) <= limit else message[: limit - 1] + "…"


#: a websocket message limit that fits a whole upload of ``UPLOAD_LIMIT_BYTES`` base64-encoded (4/3 of
#: its size) in one JSON message: ``calviz serve`` sets it, for clients that send a file in one piece (the
#: served page sends pieces, see :mod:`calviz.app.upload`)
WEBSOCKET_LIMIT_BYTES = UPLOAD_LIMIT_BYTES * 4 // 3 + 1024 * 1024


def open_dask(path: str, scheduler: str, columns: dict):
    """A ``calviz.dask.DistributedSource`` on a Parquet file or directory of this machine."""
    try:
        from calviz import dask as calviz_dask
    except ImportError as exc:
        raise InputError(f"Dask is needed for this (pip install 'calviz[dask]'): {exc}") from None
    try:
        return calviz_dask.open_source(path, scheduler=scheduler, **columns)
    except Exception as exc:
        raise InputError(shorten(f"{path}: {str(exc).strip().splitlines()[0]}")) from None
