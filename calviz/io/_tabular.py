"""Tabular readers: CSV and Parquet, through Arrow a block of rows at a time, or whole through pandas
(the reader of record for messages naming a bad cell)."""

from __future__ import annotations

import numpy as np

from calviz._data import InputError, check_unique_columns
from calviz.io import _blocks
from calviz.io._blocks import _Blocks, _NotFast
from calviz.io._columns import _from_frame, select_columns
from calviz.io._sniff import _as_stream, _last_byte


# -- readers: each returns (y_true array, y_prob array, names of the probability columns) -------------
def _read_csv(raw, names, max_bytes):
    blocks = _csv_blocks(raw, names)
    if blocks is not None:
        return blocks
    return _read_csv_frame(raw, names)


def _csv_separator(names) -> str:
    return "\t" if names.get("_label", "").lower().endswith(".tsv") else ","


def _read_csv_frame(raw, names):
    """The whole CSV file through pandas (the reader of record: its messages name the line of a bad
    cell)."""
    import pandas as pd

    sep = _csv_separator(names)
    try:
        with _as_stream(raw) as stream:
            frame = pd.read_csv(stream, sep=sep, engine="c")
        with _as_stream(raw) as stream:
            header = pd.read_csv(stream, sep=sep, engine="c", header=None, nrows=1, dtype=str)
    except pd.errors.EmptyDataError:
        raise InputError("the file is empty (no header and no rows)") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"could not parse as CSV: {first}") from None
    check_unique_columns(header.iloc[0].tolist())  # pandas would rename a repeated name to "name.1"
    if len(frame) and _last_byte(raw) not in (b"\n", b"\r"):
        # a complete CSV ends its last row with a line break; without one the row may be cut short
        # ("0,0.35" cut to "0,0.3" still parses)
        raise InputError(
            f"the last line (line {len(frame) + 1}) does not end with a line break: the file may be cut "
            "mid-row (add a newline at the end if it is complete)"
        )
    return _from_frame(frame, names, header_lines=1)


def _read_parquet(raw, names, max_bytes):
    import pyarrow.parquet as pq

    try:
        with _as_stream(raw) as stream:
            meta = pq.ParquetFile(stream).metadata
    except Exception as exc:  # pyarrow's ArrowInvalid and friends
        raise InputError(f"not a readable Parquet file ({type(exc).__name__}: {exc})") from None
    check_unique_columns(meta.schema.names)
    uncompressed = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if max_bytes is not None and uncompressed > max_bytes:
        raise InputError(f"uncompressed size {uncompressed:,} bytes exceeds max_bytes={int(max_bytes):,}")
    try:
        blocks = _parquet_blocks(raw, meta, names)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"not a readable Parquet file ({type(exc).__name__}: {exc})") from None
    return blocks if blocks is not None else _read_parquet_frame(raw, names)


def _read_parquet_frame(raw, names):
    import pandas as pd

    try:
        with _as_stream(raw) as stream:
            frame = pd.read_parquet(stream, engine="pyarrow")
    except Exception as exc:
        raise InputError(f"not a readable Parquet file ({type(exc).__name__}: {exc})") from None
    return _from_frame(frame, names, header_lines=None)



def _arrow_block(batch) -> tuple[np.ndarray, np.ndarray]:
    """(labels, probabilities) of an Arrow record batch whose first column holds the labels."""
    if any(column.null_count for column in batch.columns) or not _is_number(batch.schema.field(0).type):
        raise _NotFast
    y = batch.column(0).to_numpy(zero_copy_only=False)
    probs = [batch.column(j).to_numpy(zero_copy_only=False) for j in range(1, batch.num_columns)]
    return y, probs[0] if len(probs) == 1 else np.column_stack(probs)


def _is_number(arrow_type) -> bool:
    import pyarrow as pa

    return pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type)


def _parquet_blocks(raw, meta, names) -> _Blocks | None:
    """The needed columns of a Parquet file in blocks of :data:`_blocks.BLOCK_ROWS` rows, when they are all
    integer or floating point (``None`` otherwise: the DataFrame reader then names the bad cell)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = meta.schema.to_arrow_schema()
    found = [str(c) for c in schema.names]
    if meta.num_rows == 0 or len(found) != len(schema.names):
        return None
    label_col, prob_cols = select_columns(found, names)
    wanted = [label_col, *prob_cols]
    if not all(_is_number(schema.field(c).type) for c in wanted):
        return None
    n = int(meta.num_rows)
    # a path is read by Arrow's own file reader (through a Python file object every page read would be
    # copied into a Python bytes object first: the file's size again in memory)
    source = pa.BufferReader(raw) if isinstance(raw, bytes) else str(raw)

    def batches():
        rows = 0
        try:
            # no pre-buffering (it holds whole row groups, kept by Arrow's allocator: +1 GB at 10⁷ × 10);
            # buffered 1 MB reads instead
            with pq.ParquetFile(source, pre_buffer=False, buffer_size=1 << 20) as reader:
                for batch in reader.iter_batches(batch_size=_blocks.BLOCK_ROWS, columns=wanted):
                    rows += batch.num_rows
                    yield _arrow_block(batch)
        except pa.ArrowException as exc:
            raise InputError(f"not a readable Parquet file ({type(exc).__name__}: {exc})") from None
        finally:
            pa.default_memory_pool().release_unused()  # Arrow's allocator keeps freed pages (50 MB at 10⁷)
        if rows != n:
            raise InputError(f"the file declares {n:,} rows but holds {rows:,}: it is truncated or corrupt")

    return _Blocks({"y_true": label_col, "y_prob": prob_cols}, n, batches,
                   lambda: _read_parquet_frame(raw, names))


def _csv_blocks(raw, names) -> _Blocks | None:
    """The needed columns of a CSV file parsed by Arrow's streaming reader in blocks of
    :data:`_blocks.CSV_BLOCK_BYTES` (probability
    columns as float64, labels as Arrow infers them: integer or floating point).  ``None`` — and any
    problem while reading raises :class:`_NotFast` — when the file is not plain numeric CSV (a missing
    line break at the end, repeated or missing column names, empty cells, text): pandas then reads it and
    names the offending line."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if _last_byte(raw) not in (b"\n", b"\r"):
        return None
    parse = pacsv.ParseOptions(delimiter=_csv_separator(names))

    def open_reader(convert):
        source = pa.BufferReader(raw) if isinstance(raw, bytes) else str(raw)
        return pacsv.open_csv(source, read_options=pacsv.ReadOptions(block_size=_blocks.CSV_BLOCK_BYTES),
                              parse_options=parse, convert_options=convert)

    try:
        with open_reader(pacsv.ConvertOptions()) as reader:
            found = list(reader.schema.names)
        if len(set(found)) != len(found):
            return None
        label_col, prob_cols = select_columns(found, names)
    except (pa.ArrowException, InputError, OSError):
        return None
    convert = pacsv.ConvertOptions(include_columns=[label_col, *prob_cols],
                                   column_types={c: pa.float64() for c in prob_cols})

    def batches():
        try:
            with open_reader(convert) as reader:
                for batch in reader:
                    if batch.num_rows:
                        yield _arrow_block(batch)
        except pa.ArrowException:
            raise _NotFast from None
        finally:
            pa.default_memory_pool().release_unused()

    return _Blocks({"y_true": label_col, "y_prob": prob_cols}, _line_breaks(raw), batches,
                   lambda: _read_csv_frame(raw, names))


def _line_breaks(raw) -> int:
    """The number of line breaks (``\\n``, or ``\\r`` for old Mac files): at least the number of rows."""
    if isinstance(raw, bytes):
        return max(raw.count(b"\n"), raw.count(b"\r"))
    newlines = returns = 0
    with open(raw, "rb") as f:
        while chunk := f.read(1 << 24):
            newlines += chunk.count(b"\n")
            returns += chunk.count(b"\r")
    return max(newlines, returns)


