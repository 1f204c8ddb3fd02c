"""calviz.io's block readers against the whole-file readers on small files.

``read_predictions(..., keep_matrix=False)`` validates a multiclass CSV / Parquet file a block of rows
at a time and keeps only the labels and the top-1 view (``FileBackedData``); the CSV reader parses with
Arrow first and pandas second.  Here the blocks are made a few rows long, so that every file has many
blocks, a ragged last block, or a single block, and each result is compared with the in-memory path:
the same numbers for every view, and the same error message for a bad row in any block.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import calviz.io as cio
import calviz.io._blocks as io_blocks
import calviz.io._tabular as io_tabular
from calviz._data import CalibrationData, InputError, as_calibration_data
from calviz.analysis import AnalysisOptions, analyze
from calviz.io import FileBackedData, read_predictions, write_predictions

N, K = 103, 4
VIEWS = ("reliability", "tcal", "interval", "distance", "classical")


@pytest.fixture(params=[7, 10, 1000], ids=["many blocks", "ragged last block", "one block"])
def block_rows(request, monkeypatch):
    """Parquet blocks of 7 rows (103 = 14·7 + 5: a ragged last block), 10 rows (…+ 3) or one block;
    CSV blocks of a few rows' worth of text."""
    monkeypatch.setattr(io_blocks, "BLOCK_ROWS", request.param)
    monkeypatch.setattr(io_blocks, "CSV_BLOCK_BYTES", 60 * request.param)
    return request.param


def _sample(seed=0, n=N, k=K):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(k, 0.7), size=n)
    p[:5] = np.round(p[:5], 1)  # ties in the top class: argmax keeps the lower index
    p[:5] /= p[:5].sum(axis=1, keepdims=True)
    p[3] = [0.4, 0.4, 0.1, 0.1][:k] if k == 4 else p[3]
    y = rng.integers(0, k, size=n)
    return y, p


def _write(tmp_path: Path, fmt: str, y, p, *, float32=False, labels=None) -> Path:
    if fmt == "parquet":
        columns = {"y_true": pa.array(y if labels is None else labels)}
        for c in range(p.shape[1]):
            columns[f"p_{c}"] = pa.array(p[:, c].astype(np.float32) if float32 else p[:, c])
        path = tmp_path / "m.parquet"
        pq.write_table(pa.table(columns), path, row_group_size=40)  # row groups across the blocks too
        return path
    labels = np.asarray(y if labels is None else labels)
    if fmt == "npy":  # one array: labels in column 0
        path = tmp_path / "m.npy"
        np.save(path, np.column_stack([labels.astype(np.float64), p]))
        return path
    if fmt in ("npz", "npz compressed"):
        path = tmp_path / "m.npz"
        (np.savez if fmt == "npz" else np.savez_compressed)(path, y_true=labels, y_prob=p)
        return path
    path = tmp_path / f"m.{fmt}"
    sep = "\t" if fmt == "tsv" else ","
    header = sep.join(["y_true", *(f"p_{c}" for c in range(p.shape[1]))])
    label_text = [str(v) for v in np.asarray(y if labels is None else labels).tolist()]
    rows = [sep.join([lab, *(f"{v:.17g}" for v in row)]) for lab, row in zip(label_text, p, strict=True)]
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


def _frame_reference(path: Path, **kw) -> CalibrationData:
    """The whole file through the DataFrame (pandas) reader of record."""
    names = {"y_true": "y_true", "y_prob": "y_prob", "prob_prefix": "p_", "confidence": "confidence",
             "correct": "correct", "_label": path.name}
    reader = io_tabular._read_csv_frame if path.suffix in (".csv", ".tsv") else io_tabular._read_parquet_frame
    y, p, columns = reader(path, names)
    return cio._validate(y, p, columns, kw.get("renormalize", False), kw.get("logits", False))


def _analysis(data, target: str) -> dict:
    options = AnalysisOptions(target=target, class_index=2, resampling="analytic", n_bins=8)
    out = analyze(data, options, views=VIEWS).to_dict()
    out.pop("timings")
    return json.loads(json.dumps(out, default=repr))


@pytest.mark.parametrize("fmt", ["parquet", "csv", "tsv", "npy", "npz", "npz compressed"])
def test_file_backed_data_gives_the_in_memory_numbers(tmp_path, fmt, block_rows):
    y, p = _sample()
    path = _write(tmp_path, fmt, y, p)
    whole = read_predictions(path)
    lean = read_predictions(path, keep_matrix=False)
    assert type(whole) is CalibrationData and isinstance(lean, FileBackedData)
    assert (lean.n, lean.n_classes, lean.is_binary, repr(lean)) == (N, K, False, repr(whole))
    reference = as_calibration_data(y, p)  # the arrays themselves
    np.testing.assert_array_equal(whole.probs, reference.probs)
    np.testing.assert_array_equal(lean.labels, reference.labels)
    for got, want in zip(lean.top1(), reference.top1(), strict=True):
        np.testing.assert_array_equal(got, want)
    for c in range(K):
        for got, want in zip(lean.classwise(c, cache=False), reference.classwise(c), strict=True):
            np.testing.assert_array_equal(got, want)
    # a subsample of the file-backed data is the subsample of the whole data, views included
    sub, sub_whole = lean.subsample(30, seed=4), whole.subsample(30, seed=4)
    assert isinstance(sub, FileBackedData)
    np.testing.assert_array_equal(sub.labels, sub_whole.labels)
    np.testing.assert_array_equal(sub.top1()[0], sub_whole.top1()[0])
    np.testing.assert_array_equal(sub.classwise(3)[0], sub_whole.classwise(3)[0])
    np.testing.assert_array_equal(sub.subsample(9, seed=1).classwise(1)[0],
                                  sub_whole.subsample(9, seed=1).classwise(1)[0])
    np.testing.assert_array_equal(lean.probs, reference.probs)  # assembled on demand (topk / full)
    for target in ("top1", "classwise"):
        assert _analysis(lean, target) == _analysis(whole, target)


def test_float32_columns_are_read_as_stored(tmp_path, block_rows):
    y, p = _sample(1)
    path = _write(tmp_path, "parquet", y, p, float32=True)
    p32 = p.astype(np.float32).astype(np.float64)
    rows_ok = np.abs(p32.sum(axis=1) - 1) <= 1e-6
    y, p32 = y[rows_ok], p32[rows_ok]
    path = _write(tmp_path, "parquet", y, p32, float32=True)
    lean = read_predictions(path, keep_matrix=False)
    np.testing.assert_array_equal(lean.top1()[0], as_calibration_data(y, p32).top1()[0])
    np.testing.assert_array_equal(lean.probs, p32)


def test_renormalize_and_logits_per_block(tmp_path, block_rows):
    y, p = _sample(2)
    scores = np.log(p + 1e-3) + 3.0  # logits
    for values, kw in ((p * 2.5, {"renormalize": True}), (scores, {"logits": True})):
        path = _write(tmp_path, "parquet", y, values)
        lean, whole = read_predictions(path, keep_matrix=False, **kw), read_predictions(path, **kw)
        np.testing.assert_array_equal(lean.probs, whole.probs)
        np.testing.assert_array_equal(lean.top1()[1], whole.top1()[1])


def _break(p, y, kind: str, row: int):
    p, y = p.copy(), y.astype(float if kind == "half label" else y.dtype).copy()
    if kind == "inf":
        p[row, 1] = np.inf
    elif kind == "above 1":
        p[row, 2] = 1.5
    elif kind == "negative":
        p[row, 0] = -0.25
    elif kind == "row sum":
        p[row, 3] += 0.01
    elif kind == "label out of range":
        y[row] = K
    elif kind == "half label":
        y[row] = 0.5
    return p, y


KINDS = ["inf", "above 1", "negative", "row sum", "label out of range", "half label"]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("row", [0, 6, 50, 102], ids=["first row", "end of block 1", "middle", "last row"])
def test_a_bad_row_in_any_block_gives_the_in_memory_message(tmp_path, fmt, kind, row, block_rows):
    path, whole, lean = _bad_file_messages(tmp_path, fmt, kind, row)
    with pytest.raises(InputError) as frame:
        _frame_reference(path)
    assert lean == whole
    assert whole.endswith(str(frame.value))  # read_predictions prefixes the file name
    assert f"row {row}" in lean or kind == "inf" and fmt == "csv"


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("logit_row", [3, 60, None], ids=["logits first", "logits later", "no logits"])
def test_rows_summing_to_more_than_1_get_the_rescale_hint_in_every_reader(tmp_path, fmt, logit_row,
                                                                          block_rows):
    """Probabilities scaled by 1.1 (each row sums to 1.1; a confident row's top value passes 1): the fix
    is to rescale the rows, not a softmax — whole or in blocks, whatever a later block holds.  A row with
    a negative value (logits) that comes first gets the logits hint instead, in both readers alike."""
    y, p = _sample(7)
    p = 1.1 * p
    first_above = int(np.flatnonzero((p > 1).any(axis=1))[0])
    assert 3 < first_above < 60  # (the sample: rows above 1 before, and after, the logits rows)
    if logit_row is not None:
        p[logit_row] = [2.0, -1.0, 0.5, 0.0]
    path = _write(tmp_path, fmt, y, p)
    whole, lean = _refusals(path)
    assert lean == whole
    first = first_above if logit_row is None else min(first_above, logit_row)
    assert f"row {first}, column" in whole
    if first == logit_row:
        assert "logits=True" in whole and "renormalize" not in whole
    else:
        total = float(p[first].sum())
        assert abs(total - 1.1) < 1e-12
        assert whole.endswith(f"(its row sums to {total!r}). Pass renormalize=True to rescale rows.")
        assert "logits" not in whole


def _bad_file_messages(tmp_path, fmt, kind, row) -> tuple:
    """A file with one bad row (``_break``): its path and the messages of the whole and the block reader."""
    y, p = _sample(3)
    p, y = _break(p, y, kind, row)
    path = _write(tmp_path, fmt, y, p)
    return (path, *_refusals(path))


def _refusals(path) -> tuple[str, str]:
    """The messages of the whole reader and of the block reader (``keep_matrix=False``) refusing ``path``."""
    messages = []
    for keep in (True, False):
        with pytest.raises(InputError) as exc:
            read_predictions(path, keep_matrix=keep)
        messages.append(str(exc.value))
    return messages[0], messages[1]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_the_error_reported_is_the_first_rule_broken_not_the_first_block(tmp_path, fmt, block_rows):
    """as_calibration_data checks the whole matrix for one rule before the next: a row-sum error in the
    first block loses to a range error in a later block, and labels come last."""
    y, p = _sample(4)
    p, y = _break(p, y, "row sum", 2)
    p, y = _break(p, y, "label out of range", 1)
    p, y = _break(p, y, "above 1", 60)
    p, y = _break(p, y, "negative", 90)
    path = _write(tmp_path, fmt, y, p)
    with pytest.raises(InputError, match=r"must lie in \[0, 1\]; row 60, column 'p_2' has 1.5") as lean:
        read_predictions(path, keep_matrix=False)
    with pytest.raises(InputError) as whole:
        read_predictions(path)
    assert str(lean.value) == str(whole.value)
    for kw in ({"renormalize": True}, {}):
        z, q = _sample(5)
        q, z = _break(q, z, "label out of range", 80)
        q, z = _break(q, z, "row sum", 95)
        path = _write(tmp_path, fmt, z, q * (2.0 if kw else 1.0))
        messages = set()
        for keep in (True, False):
            with pytest.raises(InputError) as exc:
                read_predictions(path, keep_matrix=keep, **kw)
            messages.add(str(exc.value))
        assert len(messages) == 1
        assert ("row 80" if kw else "row 95") in messages.pop()


def test_csv_cells_pandas_names_still_name_their_line(tmp_path, monkeypatch):
    """Text, empty cells, a cut last line, repeated columns, a bool label column: the Arrow reader
    gives way and the message is the DataFrame reader's."""
    monkeypatch.setattr(io_blocks, "CSV_BLOCK_BYTES", 200)
    y, p = _sample(6)
    good = _write(tmp_path, "csv", y, p).read_text().splitlines()
    cases = {
        "text": (70, lambda cells: cells[:2] + ["abc"] + cells[3:],
                 r"non-numeric cell 'abc' at row 69 \(line 71"),
        "empty": (40, lambda cells: cells[:1] + [""] + cells[2:], r"empty or NaN cell at row 39 \(line 41"),
        "nan": (90, lambda cells: cells[:1] + ["nan"] + cells[2:], r"empty or NaN cell at row 89"),
    }
    for name, (line, edit, message) in cases.items():
        lines = list(good)
        lines[line] = ",".join(edit(lines[line].split(",")))
        path = tmp_path / f"{name}.csv"
        path.write_text("\n".join(lines) + "\n")
        for keep in (True, False):
            with pytest.raises(InputError, match=message):
                read_predictions(path, keep_matrix=keep)
    cut = tmp_path / "cut.csv"
    cut.write_text("\n".join(good))
    with pytest.raises(InputError, match="does not end with a line break"):
        read_predictions(cut, keep_matrix=False)
    twice = tmp_path / "twice.csv"
    twice.write_text("\n".join([good[0] + ",p_0"] + [r + ",0.1" for r in good[1:]]) + "\n")
    with pytest.raises(InputError, match="duplicate column name 'p_0'"):
        read_predictions(twice, keep_matrix=False)
    labels = tmp_path / "bool.csv"
    labels.write_text("y_true,y_prob\nTrue,0.9\nFalse,0.2\nTrue,0.6\n")
    np.testing.assert_array_equal(read_predictions(labels).labels, [1, 0, 1])


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_binary_and_tiny_files_read_whole(tmp_path, fmt, block_rows):
    rng = np.random.default_rng(7)
    p = rng.random(N)
    y = (rng.random(N) < p).astype(int)
    path = write_predictions(tmp_path / f"b.{fmt}", y, p)
    data = read_predictions(path, keep_matrix=False)  # one probability column: nothing to leave out
    assert type(data) is CalibrationData
    np.testing.assert_array_equal(data.probs, p)
    np.testing.assert_array_equal(data.labels, y)
    tiny = _write(tmp_path, fmt, np.array([1]), np.array([[0.2, 0.8]]))
    with pytest.raises(InputError, match="need at least 2 samples; got 1"):
        read_predictions(tiny, keep_matrix=False)


def test_temporary_columns_are_removed_with_the_data(tmp_path):
    y, p = _sample(8)
    data = read_predictions(_write(tmp_path, "parquet", y, p), keep_matrix=False)
    directory = Path(data._columns._directory.name)
    assert sorted(f.name for f in directory.iterdir()) == [f"p_{c}.f8" for c in range(K)]
    sub = data.subsample(20, seed=0)
    del data
    gc.collect()
    assert directory.exists()  # the subsample still reads them
    expected = as_calibration_data(y, p).subsample(20, seed=0).probs[:, 0]
    np.testing.assert_array_equal(sub.classwise(0)[0], expected)
    del sub
    gc.collect()
    assert not directory.exists()


def test_cli_reads_the_matrix_only_when_the_options_need_it(tmp_path, monkeypatch, capsys):
    from calviz import cli

    y, p = _sample(9, n=400)
    path = _write(tmp_path, "parquet", y, p)
    seen = []
    real = cli.load_input

    def spy(file, args=None, *, keep_matrix=True):
        data = real(file, args, keep_matrix=keep_matrix)
        seen.append(type(data).__name__)
        return data

    monkeypatch.setattr(cli, "load_input", spy)
    outputs = {}
    for flags in ([], ["--target", "top1"], ["--target", "classwise", "--class-index", "1"],
                  ["--target", "topk", "--top-k", "2"], ["--target", "full", "--n-bins", "2"]):
        assert cli.main(["check", str(path), "--json", "--resampling", "analytic", *flags]) in (0, 1)
        outputs[tuple(flags)] = json.loads(capsys.readouterr().out)
    assert seen == ["FileBackedData"] * 3 + ["CalibrationData"] * 2
    # the same numbers as the in-memory data
    whole = read_predictions(path)
    options = AnalysisOptions(resampling="analytic")
    expected = cli.check_summary(whole, options, source=str(path))
    got = outputs[()]
    for key in ("decision", "pvalue", "ece", "bounds", "summary", "classical", "errors"):
        assert got[key] == json.loads(json.dumps(expected[key])), key


NUMPY_FORMATS = ["npy", "npz", "npz compressed"]


@pytest.mark.parametrize("fmt", NUMPY_FORMATS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("row", [0, 6, 50, 102], ids=["first row", "end of block 1", "middle", "last row"])
def test_numpy_files_a_bad_row_in_any_block_gives_the_whole_array_message(tmp_path, fmt, kind, row,
                                                                          block_rows):
    path, whole, lean = _bad_file_messages(tmp_path, fmt, kind, row)
    with pytest.raises(InputError) as from_bytes:
        cio.read_predictions_bytes(path.read_bytes(), path.name)  # a buffer: always read whole
    assert lean == whole == str(from_bytes.value)
    assert f"row {row}" in lean


@pytest.mark.parametrize("fmt", NUMPY_FORMATS)
def test_numpy_files_from_bytes_and_streams_are_read_in_blocks_too(tmp_path, fmt, block_rows):
    import io

    y, p = _sample(6)
    path = _write(tmp_path, fmt, y, p)
    whole = read_predictions(path)
    for source in (path.read_bytes(), io.BytesIO(path.read_bytes())):
        lean = read_predictions(source, format=path.suffix, keep_matrix=False)
        assert isinstance(lean, FileBackedData)
        np.testing.assert_array_equal(lean.probs, whole.probs)
        np.testing.assert_array_equal(lean.labels, whole.labels)


def test_numpy_layouts_the_block_reader_does_not_take_are_read_whole(tmp_path, block_rows):
    """Binary predictions, a Fortran-ordered matrix, one-hot labels, lengths that differ and a single
    row are read by the whole-array reader (same result, same message)."""
    y, p = _sample(7)
    rng = np.random.default_rng(7)
    q = rng.random(N)
    binary = tmp_path / "b.npz"
    np.savez(binary, y_true=(rng.random(N) < q).astype(int), y_prob=q)
    fortran = tmp_path / "f.npy"
    np.save(fortran, np.asfortranarray(np.column_stack([y.astype(float), p])))
    onehot = tmp_path / "o.npz"
    np.savez(onehot, y_true=np.eye(K)[y], y_prob=p)
    for path in (binary, fortran, onehot):
        data = read_predictions(path, keep_matrix=False)
        assert type(data) is CalibrationData
        np.testing.assert_array_equal(data.probs, read_predictions(path).probs)
    short = tmp_path / "s.npz"
    np.savez(short, y_true=y[:-1], y_prob=p)
    one = tmp_path / "one.npy"
    np.save(one, np.array([[1.0, 0.2, 0.8]]))
    for path in (short, one):
        whole, lean = _refusals(path)
        assert whole == lean


@pytest.mark.parametrize("fmt", NUMPY_FORMATS)
def test_numpy_files_corrupt_or_cut_members_give_the_whole_array_message(tmp_path, fmt, block_rows):
    import zipfile

    y, p = _sample(8, n=2000)  # members larger than one zip read, so the damage is met in the data
    path = _write(tmp_path, fmt, y, p)
    raw = bytearray(path.read_bytes())
    if fmt == "npy":
        cut = tmp_path / "cut.npy"
        cut.write_bytes(bytes(raw[:-100]))  # the header declares more than the file holds
        damaged = [cut]
    else:
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo("y_prob.npy")
        # the byte is inside the member's data: a stored member fails its CRC, a compressed one its CRC
        # or its deflate stream
        raw[info.header_offset + 30 + len(info.filename) + info.compress_size // 2] ^= 0x5A
        bad = tmp_path / "bad.npz"
        bad.write_bytes(bytes(raw))
        damaged = [bad]
    for damaged_path in damaged:
        whole, lean = _refusals(damaged_path)
        assert whole == lean


@pytest.mark.parametrize("fmt", ["parquet", *NUMPY_FORMATS])
def test_check_json_is_the_same_with_and_without_the_matrix(tmp_path, fmt):
    from calviz import cli

    y, p = _sample(10, n=600)
    path = _write(tmp_path, fmt, y, p)
    options = AnalysisOptions()  # the defaults of calviz check (resampled T-Cal included)
    lean, whole = read_predictions(path, keep_matrix=False), read_predictions(path)
    assert isinstance(lean, FileBackedData)
    got = cli.check_summary(lean, options, source=str(path))
    want = cli.check_summary(whole, options, source=str(path))
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)


def test_read_ahead_keeps_order_passes_errors_and_closes_its_source():
    import threading

    assert list(io_blocks._read_ahead(iter(range(50)), depth=3)) == list(range(50))
    assert list(io_blocks._read_ahead(iter([]))) == []

    class Broken(Exception):
        pass

    def failing():
        yield 1
        yield 2
        raise Broken("block 3 is unreadable")

    got = []
    with pytest.raises(Broken, match="block 3"):
        for item in io_blocks._read_ahead(failing()):
            got.append(item)
    assert got == [1, 2]

    closed = threading.Event()

    def endless():
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            closed.set()

    reader = io_blocks._read_ahead(endless(), depth=2)
    assert [next(reader) for _ in range(5)] == [0, 1, 2, 3, 4]
    reader.close()  # the caller stops early: the producer stops and closes the source
    assert closed.is_set()
    assert not any(t.name == "calviz-read-ahead" for t in threading.enumerate())


@pytest.mark.parametrize("arrow_type", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                        "uint64", "float16", "float32", "float64", "bool"])
def test_arrow_values_are_arrow_s_own_numbers(arrow_type):
    """The block reader's view of an Arrow column's values buffer equals ``to_numpy`` (dtype and values),
    for every number type and for slices (an offset into the buffer); columns with nulls are Arrow's."""
    rng = np.random.default_rng(3)
    dtype = pa.from_numpy_dtype(np.dtype(arrow_type)) if arrow_type != "bool" else pa.bool_()
    values = (rng.integers(0, 100, 40) if arrow_type != "bool" else rng.integers(0, 2, 40).astype(bool))
    column = pa.array(values.astype(np.dtype(arrow_type)), type=dtype)
    for part in (column, column.slice(7), column.slice(3, 11), column.slice(40)):
        got, want = io_tabular._values(part), part.to_numpy(zero_copy_only=False)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    with_null = pa.array([1.0, None, 0.5], type=pa.float64())
    np.testing.assert_array_equal(io_tabular._values(with_null), with_null.to_numpy(zero_copy_only=False))


def test_checks_by_class_are_the_row_major_checks():
    """The one-pass check and top-1 view of probabilities stored by class answer as the row-major kernels
    do, row by row: ties (the first maximum), values at 0 and 1, row sums at the tolerance, NaN, labels
    out of range."""
    from calviz._data import ROW_SUM_LIMIT
    from calviz._kernels.validation import class_columns_top1, int_labels_in_range_rows, simplex_rows_ok
    from calviz._kernels.views import top1_rows_into

    rng = np.random.default_rng(11)
    k = 5
    p = rng.dirichlet(np.ones(k), size=400)
    p[:50] = np.round(p[:50] * 4) / 4  # ties
    p[50:60] = np.eye(k)[rng.integers(0, k, 10)]  # 0 and 1
    p[60] = 1.0 / k
    p[61, 0] += ROW_SUM_LIMIT * 0.999  # a sum within the tolerance
    labels = rng.integers(0, k, 400)
    breaks = {"none": lambda q, y: None,
              "above 1": lambda q, y: q.__setitem__((70, 1), 1.5),
              "negative": lambda q, y: q.__setitem__((71, 2), -0.25),
              "nan": lambda q, y: q.__setitem__((72, 3), np.nan),
              "sum": lambda q, y: q.__setitem__((73, 0), q[73, 0] + 3 * ROW_SUM_LIMIT),
              "label": lambda q, y: y.__setitem__(74, k),
              "negative label": lambda q, y: y.__setitem__(75, -1),
              "nan first": lambda q, y: q.__setitem__((76, 0), np.nan),
              "inf": lambda q, y: q.__setitem__((77, k - 1), np.inf),
              "-inf": lambda q, y: q.__setitem__((78, 1), -np.inf),
              "above 1 by an ulp": lambda q, y: q.__setitem__((79, 0), 1.0 + 4e-16),
              "last row": lambda q, y: q.__setitem__((399, k - 1), -1e-300)}
    for name, spoil in breaks.items():
        q, y = p.copy(), labels.copy()
        spoil(q, y)
        conf, correct = np.empty(400), np.empty(400)
        ok = class_columns_top1(np.ascontiguousarray(q.T), y, ROW_SUM_LIMIT, conf, correct)
        row_major = simplex_rows_ok(q, ROW_SUM_LIMIT, 0, 400) and int_labels_in_range_rows(y, k, 0, 400)
        assert ok == row_major, name
        if ok:
            want_conf, want_correct = np.empty(400), np.empty(400)
            top1_rows_into(q, y, 0, 400, want_conf, want_correct)
            np.testing.assert_array_equal(conf, want_conf)
            np.testing.assert_array_equal(correct, want_correct)
        assert name == "none" or not ok
