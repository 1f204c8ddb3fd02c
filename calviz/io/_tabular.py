"""Tabular readers: CSV and Parquet, through Arrow a block of rows at a time, or whole through pandas
(the reader of record for messages naming a bad cell)."""

from __future__ import annotations

import numpy as np

from calviz._data import InputError, check_unique_columns
from calviz._params import MAX_CLASSES, LimitExceeded
from calviz.io import _blocks
from calviz.io._blocks import _Blocks, _NotFast
from calviz.io._columns import _from_frame, select_columns
from calviz.io._sniff import _as_stream, _last_byte, check_decoded_size


# -- readers: each returns (y_true array, y_prob array, names of the probability columns) -------------
def _read_csv(raw, names, max_bytes):
    # the values the file can hold — its header's columns on each line — before anything is parsed
    breaks = _line_breaks(raw)
    separator = _csv_separator(names)
    header = _first_line(raw)
    fields = header.count(separator.encode()) + 1  # (quoted separators aside: a bound)
    check_decoded_size(max(breaks - 1, 0), fields, max_bytes)
    if fields > MAX_CLASSES + 1:  # more classes than allowed? Said before any parser sees the wide header
        try:
            select_columns(_header_names(header, separator), names)
        except LimitExceeded:
            raise
        except InputError:
            pass  # (any other problem is said by the parsers, in the words of the parsed header)
    blocks = _csv_blocks(raw, names, breaks)
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
    found = [str(c) for c in meta.schema.names]
    try:
        label_col, prob_cols = select_columns(found, names)
        wanted = [label_col, *prob_cols]
    except LimitExceeded:
        raise
    except InputError:
        wanted = None  # (the reader says what is missing, in the words of a table's columns)
    # the columns read, as the footer declares them, before any page is decoded (the pages' own sizes,
    # after dictionary and run-length encoding, say nothing: 10⁸ equal rows take 0.8 MB)
    # (the row groups' own counts too: the file's total is a separate field a crafted footer can understate)
    rows = max(meta.num_rows, sum(meta.row_group(i).num_rows for i in range(meta.num_row_groups)))
    check_decoded_size(rows, len(wanted or found), max_bytes)
    try:
        blocks = _parquet_blocks(raw, meta, names)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"not a readable Parquet file ({type(exc).__name__}: {exc})") from None
    return blocks if blocks is not None else _read_parquet_frame(raw, names, wanted)


def _read_parquet_frame(raw, names, columns=None):
    """The whole file (its ``columns`` only, when given) through pandas; text columns are read as
    dictionaries, so a short string repeated on every row is decoded once."""
    import pandas as pd
    import pyarrow.parquet as pq

    try:
        with _as_stream(raw) as stream:
            schema = pq.ParquetFile(stream).schema_arrow
            text = [f.name for f in schema if _is_text(f.type) and (columns is None or f.name in columns)]
            stream.seek(0)
            frame = pd.read_parquet(stream, engine="pyarrow", columns=columns, read_dictionary=text or None)
    except Exception as exc:
        raise InputError(f"not a readable Parquet file ({type(exc).__name__}: {exc})") from None
    return _from_frame(frame, names, header_lines=None)


def _is_text(arrow_type) -> bool:
    import pyarrow as pa

    return pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) or (
        pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type))



#: floating point holds every integer below this exactly; a label beyond it is shown as read, not rounded
_EXACT_FLOAT_INTEGERS = 2.0**53


def _arrow_block(batch) -> tuple[np.ndarray, np.ndarray]:
    """(labels, probabilities) of an Arrow record batch whose first column holds the labels."""
    if any(column.null_count for column in batch.columns) or not _is_number(batch.schema.field(0).type):
        raise _NotFast
    y = _values(batch.column(0))
    if y.dtype.kind == "f" and (np.abs(y) >= _EXACT_FLOAT_INTEGERS).any():
        # an integer label beyond int64 (Arrow then infers floating point): the DataFrame reader keeps it
        # as written (uint64, or a Python int), so that a message shows the label as given
        raise _NotFast
    probs = [_values(batch.column(j)) for j in range(1, batch.num_columns)]
    if len(probs) == 1:
        return y, probs[0]
    if all(p.dtype == np.float64 for p in probs):
        return y, np.stack(probs).T  # (rows, K) stored by class: copied without interleaving (see _spill)
    return y, np.column_stack(probs)


#: numpy dtypes of the Arrow number types whose values buffer is a plain array of them
_PLAIN_TYPES = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
                "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "halffloat": np.float16,
                "float": np.float32, "double": np.float64}


def _values(column) -> np.ndarray:
    """A null-free Arrow number column as a read-only numpy view of its values buffer (Arrow's own
    ``to_numpy`` imports pandas, a second or more of start-up, for nothing here)."""
    dtype = _PLAIN_TYPES.get(str(column.type))
    if dtype is None or column.null_count:
        return column.to_numpy(zero_copy_only=False)
    return np.frombuffer(column.buffers()[1], dtype=dtype, count=len(column), offset=column.offset
                         * np.dtype(dtype).itemsize)


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


def _csv_blocks(raw, names, line_breaks: int) -> _Blocks | None:
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

    return _Blocks({"y_true": label_col, "y_prob": prob_cols}, line_breaks, batches,
                   lambda: _read_csv_frame(raw, names))


def _first_line(raw) -> bytes:
    """A CSV file's first line, without its line break."""
    def cut(chunk: bytes) -> int:
        return min((i for i in (chunk.find(b"\n"), chunk.find(b"\r")) if i >= 0), default=-1)

    if isinstance(raw, bytes):
        end = cut(raw)
        return raw if end < 0 else raw[:end]
    parts = []
    with open(raw, "rb") as f:
        while chunk := f.read(1 << 20):
            end = cut(chunk)
            parts.append(chunk if end < 0 else chunk[:end])
            if end >= 0:
                break
    return b"".join(parts)


def _header_names(line: bytes, separator: str) -> list[str]:
    """The names of a CSV header line, split at the separator (quotes stripped, not parsed)."""
    text = line.decode("utf-8", errors="replace").lstrip("\ufeff")
    return [name.strip().strip('"') for name in text.split(separator)]


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


