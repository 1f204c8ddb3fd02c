"""calviz.io: round trips in every format and layout, and one clear InputError for each malformed file."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pandas as pd
import pytest

from calviz._data import CalibrationData, InputError
from calviz.io import read_predictions, read_predictions_bytes, write_predictions

FORMATS = ["csv", "parquet", "npz", "npy"]


@pytest.fixture
def multiclass():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(4), size=50)
    y = rng.integers(0, 4, size=50)
    return y, p


@pytest.fixture
def binary():
    rng = np.random.default_rng(1)
    p = rng.random(40)
    p[:3] = [0.0, 1.0, 0.5]
    return (rng.random(40) < p).astype(int), p


def _same(data: CalibrationData, y, p, exact=True):
    assert isinstance(data, CalibrationData)
    np.testing.assert_array_equal(data.labels, y)
    if exact:
        np.testing.assert_array_equal(data.probs, p)  # %.17g / binary formats: exact round trip
    else:
        np.testing.assert_allclose(data.probs, p, rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_multiclass_and_binary(tmp_path, fmt, multiclass, binary):
    for name, (y, p) in {"multi": multiclass, "bin": binary}.items():
        path = write_predictions(tmp_path / f"{name}.{fmt}", y, p)
        _same(read_predictions(path), y, p)
        _same(read_predictions(str(path)), y, p)
        raw = path.read_bytes()
        _same(read_predictions_bytes(raw, f"upload.{fmt}"), y, p)
        _same(read_predictions(io.BytesIO(raw), format=fmt), y, p)
        _same(read_predictions(raw), y, p)  # format sniffed from the first bytes (text → CSV)


def test_write_accepts_calibration_data_and_odd_names(tmp_path, binary):
    from calviz._data import as_calibration_data

    data = as_calibration_data(*binary)
    path = write_predictions(tmp_path / "preds.npz", data)
    _same(read_predictions(path), *binary)
    # a name without the extension still gets the requested format (numpy would append .npz)
    path = write_predictions(tmp_path / "noext", data, format="npz")
    assert path.exists() and path.name == "noext"
    _same(read_predictions(path, format="npz"), *binary)
    _same(read_predictions(path), *binary)  # zip magic


def test_csv_layouts_and_configurable_names(tmp_path):
    (tmp_path / "a.csv").write_text("label,score\n0,0.2\n1,0.9\n1,0.6\n")
    d = read_predictions(tmp_path / "a.csv", y_true="label", y_prob="score")
    _same(d, [0, 1, 1], [0.2, 0.9, 0.6])
    (tmp_path / "b.csv").write_text("conf,ok\n0.9,True\n0.6,False\n0.7,True\n")
    d = read_predictions(tmp_path / "b.csv", confidence="conf", correct="ok")
    _same(d, [1, 0, 1], [0.9, 0.6, 0.7])
    (tmp_path / "c.csv").write_text("y,q1,q0,q2\n2,0.3,0.5,0.2\n0,0.1,0.8,0.1\n")  # columns in any order
    d = read_predictions(tmp_path / "c.csv", y_true="y", prob_prefix="q")
    _same(d, [2, 0], [[0.5, 0.3, 0.2], [0.8, 0.1, 0.1]])
    (tmp_path / "d.tsv").write_text("y_true\ty_prob\n0\t0.25\n1\t0.75\n")
    _same(read_predictions(tmp_path / "d.tsv"), [0, 1], [0.25, 0.75])
    (tmp_path / "e.csv").write_text("y_true,p_0,p_1,id\n0,0.6,0.4,a\n1,0.2,0.8,b\n")  # extra columns ignored
    _same(read_predictions(tmp_path / "e.csv"), [0, 1], [[0.6, 0.4], [0.2, 0.8]])


def test_float32_storage_and_renormalize(tmp_path):
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(10), size=200).astype(np.float32)
    y = rng.integers(0, 10, 200)
    pd.DataFrame({"y_true": y, **{f"p_{k}": p[:, k] for k in range(10)}}).to_parquet(tmp_path / "f.parquet")
    d = read_predictions(tmp_path / "f.parquet")
    assert d.probs.dtype == np.float64 and d.n_classes == 10
    (tmp_path / "g.csv").write_text("y_true,p_0,p_1\n0,0.2,0.2\n1,0.1,0.3\n")
    with pytest.raises(InputError, match="sum to 1"):
        read_predictions(tmp_path / "g.csv")
    _same(read_predictions(tmp_path / "g.csv", renormalize=True), [0, 1], [[0.5, 0.5], [0.25, 0.75]], False)
    (tmp_path / "h.csv").write_text("y_true,p_0,p_1\n0,2,2\n1,1,3\n")  # unnormalised scores
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        read_predictions(tmp_path / "h.csv")
    _same(read_predictions(tmp_path / "h.csv", renormalize=True), [0, 1], [[0.5, 0.5], [0.25, 0.75]], False)


def _err(tmp_path, name, content, **kw) -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(InputError) as info:
        read_predictions(path, **kw)
    message = str(info.value)
    assert message.startswith(name + ":"), message  # every message names the file first
    return message


def test_malformed_csv_messages(tmp_path):
    m = _err(tmp_path, "cells.csv", "y_true,p_0,p_1\n0,0.5,0.5\n1,abc,0.3\n")
    assert "'p_0'" in m and "'abc'" in m and "row 1" in m and "line 3" in m
    m = _err(tmp_path, "empty_cell.csv", "y_true,y_prob\n0,0.5\n1,\n")
    assert "'y_prob'" in m and "row 1" in m and "empty" in m
    m = _err(tmp_path, "label.csv", "y_true,p_0,p_1\n0,0.5,0.5\n3,0.7,0.3\n")
    assert "'y_true'" in m and "row 1" in m and "0..1" in m.replace("{0, 1}", "0..1")
    m = _err(tmp_path, "fraction_label.csv", "y_true,y_prob\n0,0.5\n0.5,0.7\n")
    assert "'y_true'" in m and "row 1" in m
    m = _err(tmp_path, "sum.csv", "y_true,p_0,p_1\n0,0.5,0.5\n1,0.7,0.4\n")
    assert "row 1" in m and "sum to 1" in m and "renormalize" in m
    m = _err(tmp_path, "range.csv", "y_true,p_0,p_1\n0,0.5,0.5\n1,-0.2,1.2\n")
    assert "row 1" in m and "'p_0'" in m and "[0, 1]" in m
    m = _err(tmp_path, "range1d.csv", "y_true,y_prob\n0,0.5\n1,1.5\n")
    assert "'y_prob'" in m and "row 1" in m and "1.5" in m
    m = _err(tmp_path, "nan.csv", "y_true,y_prob\n0,0.5\n1,nan\n")
    assert "row 1" in m and "'y_prob'" in m
    m = _err(tmp_path, "columns.csv", "a,b\n0,0.5\n")
    assert "found columns ['a', 'b']" in m and "'y_prob'" in m
    m = _err(tmp_path, "nolabel.csv", "p_0,p_1\n0.5,0.5\n0.2,0.8\n")
    assert "missing label column 'y_true'" in m and "found columns ['p_0', 'p_1']" in m
    m = _err(tmp_path, "gap.csv", "y_true,p_0,p_2\n0,0.5,0.5\n")
    assert "missing p_1" in m
    m = _err(tmp_path, "single.csv", "y_true,p_0\n0,1.0\n0,1.0\n")
    assert "single class" in m
    m = _err(tmp_path, "empty.csv", "")
    assert "empty" in m
    m = _err(tmp_path, "header_only.csv", "y_true,y_prob\n")
    assert "no data rows" in m
    m = _err(tmp_path, "one_row.csv", "y_true,y_prob\n0,0.5\n")
    assert "at least 2 samples" in m
    m = _err(tmp_path, "ragged.csv", "y_true,p_0,p_1\n0,0.5,0.5\n1,0.3,0.7,5,6\n")
    assert "parse" in m
    m = _err(tmp_path, "binary.csv", b"\xff\xfe\x00\x01garbage\x00")
    assert "CSV" in m or "parse" in m


def test_malformed_binary_formats(tmp_path):
    buf = io.BytesIO()
    np.save(buf, np.array([[0, "a"], [1, "b"]], dtype=object), allow_pickle=True)
    m = _err(tmp_path, "pickled.npy", buf.getvalue())
    assert "pickle" in m
    buf = io.BytesIO()
    np.savez(buf, y_true=np.array([0, 1]), y_prob=np.array([None, 0.3], dtype=object))
    m = _err(tmp_path, "pickled.npz", buf.getvalue())
    assert "pickle" in m and "'y_prob'" in m
    buf = io.BytesIO()
    np.savez(buf, labels=np.array([0, 1]), probs=np.array([0.1, 0.3]))
    m = _err(tmp_path, "keys.npz", buf.getvalue())
    assert "found arrays ['labels', 'probs']" in m
    # the same archive with configured names reads fine
    d = read_predictions_bytes(buf.getvalue(), "keys.npz", y_true="labels", y_prob="probs")
    _same(d, [0, 1], [0.1, 0.3])
    buf = io.BytesIO()
    np.save(buf, np.array([0.1, 0.2]))
    m = _err(tmp_path, "one_d.npy", buf.getvalue())
    assert "2-D" in m and "(2,)" in m
    m = _err(tmp_path, "truncated.npy", b"\x93NUMPY\x01\x00garbage")
    assert "NPY" in m
    m = _err(tmp_path, "notzip.npz", b"PK\x03\x04 this is not a zip")
    assert "NPZ" in m
    m = _err(tmp_path, "bad.parquet", b"PAR1 nope PAR1")
    assert "Parquet" in m
    m = _err(tmp_path, "empty.npy", b"")
    assert "empty" in m
    buf = io.BytesIO()
    np.save(buf, np.array([[0.0, 0.5, 0.5], [2.0, 0.5, 0.5]]))
    m = _err(tmp_path, "labels.npy", buf.getvalue())
    assert "'array column 0'" in m and "row 1" in m
    buf = io.BytesIO()
    np.save(buf, np.array([[0.0, 0.5, 0.5], [1.0, 0.9, 0.5]]))
    m = _err(tmp_path, "sums.npy", buf.getvalue())
    assert "row 1" in m and "sum to 1" in m


def test_parquet_non_numeric_column(tmp_path):
    """A typed (Parquet) column of text is refused like a string array, numeric text included."""
    pd.DataFrame({"y_true": [0, 1, 1], "y_prob": ["0.1", "0.5", "high"]}).to_parquet(tmp_path / "s.parquet")
    with pytest.raises(InputError) as info:
        read_predictions(tmp_path / "s.parquet")
    m = str(info.value)
    assert m.startswith("s.parquet:") and "'y_prob' must be real numbers; got strings" in m


def test_unknown_format_missing_file_and_size_limit(tmp_path, binary):
    (tmp_path / "x.xlsx").write_bytes(b"PK\x05\x06" + b"\x00" * 20)
    with pytest.raises(InputError, match="unknown format"):
        read_predictions(tmp_path / "x.xlsx")
    with pytest.raises(InputError, match=r"^The 'format' parameter of read_predictions .+; got 'xls'\.$"):
        read_predictions(tmp_path / "x.xlsx", format="xls")
    with pytest.raises(InputError, match="no such file"):
        read_predictions(tmp_path / "missing.csv")
    with pytest.raises(InputError, match="directory"):
        read_predictions(tmp_path)
    with pytest.raises(InputError, match="unknown format"):
        read_predictions_bytes(b"\x00\x01\x02", "upload")
    with pytest.raises(InputError, match="expected a path"):
        read_predictions(12345)
    path = write_predictions(tmp_path / "big.csv", *binary)
    with pytest.raises(InputError, match="max_bytes"):
        read_predictions(path, max_bytes=100)
    with pytest.raises(InputError, match="max_bytes"):
        read_predictions_bytes(path.read_bytes(), "big.csv", max_bytes=100)
    with pytest.raises(InputError, match="max_bytes"):
        read_predictions(io.BytesIO(path.read_bytes()), format="csv", max_bytes=100)
    assert read_predictions(path, max_bytes=None).n == 40


def test_npz_bomb_is_refused_by_uncompressed_size(tmp_path):
    buf = io.BytesIO()
    np.savez_compressed(buf, y_true=np.zeros(1_000_000, dtype=np.int64), y_prob=np.zeros(1_000_000))
    raw = buf.getvalue()
    assert len(raw) < 100_000  # compresses extremely well
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        assert sum(i.file_size for i in zf.infolist()) > 10_000_000
    with pytest.raises(InputError, match="uncompressed size"):
        read_predictions_bytes(raw, "bomb.npz", max_bytes=1_000_000)


def test_confidence_correct_npz(tmp_path):
    buf = io.BytesIO()
    np.savez(buf, confidence=np.array([0.9, 0.6]), correct=np.array([True, False]))
    _same(read_predictions_bytes(buf.getvalue(), "top1.npz"), [1, 0], [0.9, 0.6])


def test_a_named_probability_column_must_exist_never_a_fallback(tmp_path):
    """A ``y_prob`` the caller names (not the default) is required: the reader does not fall back to
    the ``p_*`` columns; a listed set of columns is taken as given, in its order."""
    from calviz.io import COLUMN_NAMES, select_columns

    found = ["y_true", "p_0", "p_1", "score"]
    with pytest.raises(InputError, match=r"missing probability column\(s\) \['scor'\]"):
        select_columns(found, {**COLUMN_NAMES, "y_prob": "scor"})
    assert select_columns(found, {**COLUMN_NAMES, "y_prob": "score"}) == ("y_true", ["score"])
    assert select_columns(found, {**COLUMN_NAMES, "y_prob": ["p_1", "p_0"]}) == ("y_true", ["p_1", "p_0"])
    (tmp_path / "m.csv").write_text("y_true,p_0,p_1\n0,0.7,0.3\n1,0.2,0.8\n")
    with pytest.raises(InputError, match="scor"):
        read_predictions(tmp_path / "m.csv", y_prob="scor")


def test_one_named_probability_column_is_binary_however_it_is_named(tmp_path):
    """A single named column (a str or a one-item list) is P(y = 1), also when its name looks like one of
    the p_0..p_{K-1} columns; the default detection still wants all of them."""
    from calviz.io import COLUMN_NAMES, select_columns

    found = ["y_true", "p_1", "y_prob"]
    for given in ("p_1", ["p_1"]):
        assert select_columns(found, {**COLUMN_NAMES, "y_prob": given}) == ("y_true", ["p_1"])
    assert select_columns(found, {**COLUMN_NAMES, "y_prob": ["y_prob"]}) == ("y_true", ["y_prob"])
    (tmp_path / "one.csv").write_text("y_true,p_1\n0,0.3\n1,0.8\n")
    for given in ("p_1", ["p_1"]):
        data = read_predictions(tmp_path / "one.csv", y_prob=given)
        assert data.is_binary and data.probs.tolist() == [0.3, 0.8]
    with pytest.raises(InputError, match="missing p_0"):
        read_predictions(tmp_path / "one.csv")


def _npz(path, **arrays):
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize("keep_matrix", [True, False])
def test_npz_one_array_per_column_as_the_csv_columns(tmp_path, multiclass, monkeypatch, keep_matrix):
    """An NPZ holds the tabular layouts too, one array per column: ``y_true`` + ``p_0..p_{K-1}`` (any
    prefix, listed arrays), read as the CSV with the same columns — also a block of rows at a time (the
    matrix never held: keep_matrix=False), with the CSV's messages naming the array."""
    import calviz.io._blocks as io_blocks

    monkeypatch.setattr(io_blocks, "BLOCK_ROWS", 7)  # several blocks of rows
    y, p = multiclass
    columns = {f"p_{k}": p[:, k] for k in range(4)}
    write_predictions(tmp_path / "m.csv", y, p)
    csv = read_predictions(tmp_path / "m.csv", keep_matrix=keep_matrix)
    for name, arrays, options in [
        ("p.npz", {"y_true": y, **columns}, {}),
        ("q.npz", {"label": y, **{f"q{k}": p[:, k].astype(np.float32) for k in range(4)}},
         {"y_true": "label", "prob_prefix": "q"}),
        ("listed.npz", {"y_true": y, **{f"c{k}": p[:, k] for k in range(4)}},
         {"y_prob": ["c0", "c1", "c2", "c3"]}),
    ]:
        data = read_predictions(_npz(tmp_path / name, **arrays), keep_matrix=keep_matrix, **options)
        assert type(data) is type(csv) and (type(data).__name__ == "FileBackedData") == (not keep_matrix)
        _same(data, y, p if name != "q.npz" else p.astype(np.float32).astype(np.float64))
    bad = dict(columns, p_1=np.where(np.arange(50) == 9, 1.5, p[:, 1]))
    with pytest.raises(InputError) as npz:
        read_predictions(_npz(tmp_path / "bad.npz", y_true=y, **bad), keep_matrix=keep_matrix)
    pd.DataFrame({"y_true": y, **bad}).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(InputError) as table:
        read_predictions(tmp_path / "bad.csv", keep_matrix=keep_matrix)
    assert "row 9, column 'p_1' has 1.5" in str(npz.value)
    assert str(npz.value).removeprefix("bad.npz: ") == str(table.value).removeprefix("bad.csv: ")


def test_npz_columns_refused_as_the_csv_columns(tmp_path, multiclass):
    y, p = multiclass
    m = _err(tmp_path, "gap.npz", _npz(io.BytesIO(), y_true=y, p_0=p[:, 0], p_2=p[:, 2]).getvalue())
    assert m == "gap.npz: probability arrays p_0..p_2 must all be present; missing p_1"
    m = _err(tmp_path, "one.npz", _npz(io.BytesIO(), y_true=y, p_0=p[:, 0]).getvalue())
    assert "only one probability array 'p_0'" in m
    m = _err(tmp_path, "short.npz", _npz(io.BytesIO(), y_true=y, p_0=p[:, 0], p_1=p[:7, 1]).getvalue())
    assert "must be 1-D and of one length" in m and "'p_1' (7,)" in m
    m = _err(tmp_path, "nolabel.npz", _npz(io.BytesIO(), p_0=p[:, 0], p_1=p[:, 1]).getvalue())
    assert m == "nolabel.npz: missing label array 'y_true'; found arrays ['p_0', 'p_1']"
    m = _err(tmp_path, "named.npz", _npz(io.BytesIO(), y_true=y, p_0=p[:, 0], p_1=p[:, 1]).getvalue(),
             y_prob=["p_0", "p_9"])
    assert "missing probability array(s) ['p_9']" in m
    # a 2-D y_prob still wins over p_* arrays, as y_prob wins over p_* columns
    raw = _npz(io.BytesIO(), y_true=y, y_prob=p, p_0=p[:, 1], p_1=p[:, 0]).getvalue()
    _same(read_predictions_bytes(raw, "both.npz"), y, p)


def test_cli_reads_npz_columns_with_the_prefix_option(tmp_path, multiclass, capsys):
    """``--prob-prefix`` is listed under "file columns (CSV / Parquet / NPZ)": it selects NPZ arrays."""
    from calviz.cli import main

    y, p = multiclass
    path = _npz(tmp_path / "q.npz", y_true=y, **{f"q_{k}": p[:, k] for k in range(4)})
    assert main(["check", str(path), "--prob-prefix", "q_", "--resampling", "analytic", "--json"]) == 0
    assert '"n_classes": 4' in capsys.readouterr().out
