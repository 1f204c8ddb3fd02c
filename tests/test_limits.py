"""Costs bounded by the data, not by an argument or a file's compression: each fault below is
reproduced and refused (or answered) from the sizes alone, before the work it would cost.

* a small Parquet / NPZ / NPY / CSV file that decodes to far more than its size: refused from its
  metadata (rows × columns × 8 bytes against 4 × ``max_bytes``) before any page is decoded;
* a wide file (more than ``MAX_CLASSES`` probability columns), and as many groups as rows: refused with
  the limit and the way around it;
* the full target with a huge ``n_bins``: the refusal names the largest bin count that fits, found by
  bisection (it used to try every count up to ``n_bins``);
* interval ends outside the quantity's range, a uint64 label shown as −1, and a symbolic link in a
  folder under the data root that leads out of it.

Timings and memory of the same faults at full size are in ``benchmarks/bench_limits.py``.
"""

import io
import re
import zipfile

import numpy as np
import pyarrow as pa
import pyarrow.csv  # noqa: F401 (pa.csv)
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calviz
import calviz.io._tabular as io_tabular
from calviz._binning import _INT64_MAX, check_simplex_bins, largest_simplex_bins, simplex_key_space
from calviz._comparison import paired_difference
from calviz._data import InputError
from calviz._params import MAX_CLASSES, MAX_GROUPS
from calviz._results import clip_interval
from calviz.app.sources import path_under_root, read_upload
from calviz.io import DECODED_PER_FILE_BYTE, SizeLimitError, read_predictions, read_predictions_bytes
from calviz.sampling import subsample_interval


def _constant_parquet(rows: int, row_group: int = 100_000) -> bytes:
    """``rows`` rows of y_true = 1, y_prob = 0.5 (zstd): a few KB that decode to rows × 16 bytes."""
    table = pa.table({"y_true": np.ones(row_group, dtype=np.int64), "y_prob": np.full(row_group, 0.5)})
    buffer = io.BytesIO()
    with pq.ParquetWriter(buffer, table.schema, compression="zstd") as writer:
        for _ in range(rows // row_group):
            writer.write_table(table)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def hostile_parquet() -> bytes:
    return _constant_parquet(1_000_000)


def _no_decoding(monkeypatch):
    """Make any decoding of a Parquet file fail the test: the refusal must come from the footer."""
    def decoded(*args, **kwargs):
        raise AssertionError("the file was decoded")

    monkeypatch.setattr(io_tabular, "_parquet_blocks", decoded)
    monkeypatch.setattr(io_tabular, "_read_parquet_frame", decoded)


def test_small_parquet_decoding_to_many_rows_is_refused_from_its_footer(hostile_parquet, monkeypatch):
    """10⁶ equal rows take a few KB; decoded they are 16 MB: refused by the footer's num_rows × columns
    before any page is decoded (the old check added up the pages' sizes after encoding: ~10 KB)."""
    assert len(hostile_parquet) < 50_000
    meta = pq.ParquetFile(io.BytesIO(hostile_parquet)).metadata
    assert sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)) < 1_000_000
    _no_decoding(monkeypatch)
    with pytest.raises(SizeLimitError) as refused:
        read_predictions_bytes(hostile_parquet, "hostile.parquet", max_bytes=1_000_000)
    message = str(refused.value)
    assert message.startswith("hostile.parquet: 1,000,000 rows × 2 columns decode to 16,000,000 bytes")
    assert f"{DECODED_PER_FILE_BYTE} × max_bytes = 4,000,000 bytes" in message
    assert (refused.value.size, refused.value.limit) == (16_000_000, 4_000_000)


def test_upload_decoding_beyond_the_limit_is_refused_like_an_oversized_upload(hostile_parquet, monkeypatch):
    _no_decoding(monkeypatch)
    with pytest.raises(InputError) as refused:
        read_upload(hostile_parquet, "hostile.parquet", limit=1_000_000, columns={})
    assert str(refused.value) == (
        "hostile.parquet: 1,000,000 rows × 2 columns decode to 15.3 MiB, which is above the upload limit "
        "for decoded data of 3.8 MiB; use `calviz serve FILE` or `calviz report FILE`.")
    with pytest.raises(InputError, match=r"^big\.csv: 20 bytes is above the upload limit of 5 bytes"):
        read_upload(b"y_true,y_prob\n1,0.5\n", "big.csv", limit=5, columns={})


def test_parquet_within_the_decoded_limit_is_read(hostile_parquet):
    data = read_predictions_bytes(hostile_parquet, "ok.parquet", max_bytes=4_000_000)
    assert data.n == 1_000_000 and np.all(data.probs == 0.5) and np.all(data.labels == 1)


def test_parquet_counts_only_the_columns_it_reads(tmp_path):
    """Extra columns (ids, text) are not decoded, so they do not count; the whole-table reader reads
    only the columns it needs too, text as dictionaries."""
    n = 10_000
    table = pa.table({"y_true": np.zeros(n, dtype=np.int64), "y_prob": np.full(n, 0.25),
                      **{f"feature_{j}": np.zeros(n) for j in range(20)}, "note": ["x" * 50] * n})
    pq.write_table(table, tmp_path / "wide.parquet")
    assert (tmp_path / "wide.parquet").stat().st_size < 30_000
    assert read_predictions(tmp_path / "wide.parquet", max_bytes=50_000).n == n  # 160 of 200 kB allowed
    with pytest.raises(SizeLimitError, match="10,000 rows × 2 columns"):
        read_predictions(tmp_path / "wide.parquet", max_bytes=30_000)
    text = pa.table({"y_true": [0, 1, 1], "y_prob": ["a" * 1000, "b", "c"]})
    pq.write_table(text, tmp_path / "text.parquet")
    with pytest.raises(InputError, match="'y_prob' must be real numbers; got strings"):
        read_predictions(tmp_path / "text.parquet")


def test_npy_and_npz_decoded_size_from_their_headers():
    """int8 arrays decode to 8 bytes a value: refused by the header's shape, before being read."""
    npy = io.BytesIO()
    np.save(npy, np.zeros((100_000, 3), dtype=np.int8))
    raw = npy.getvalue()
    with pytest.raises(SizeLimitError, match="100,000 rows × 3 columns decode to 2,400,000 bytes"):
        read_predictions_bytes(raw, "small.npy", max_bytes=350_000)  # 1.4 MB allowed decoded
    npz = io.BytesIO()
    np.savez_compressed(npz, y_true=np.zeros(10**6, dtype=np.int8), y_prob=np.zeros(10**6, np.float16))
    raw = npz.getvalue()
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        assert sum(i.file_size for i in archive.infolist()) < 3_100_000  # within the uncompressed limit
    with pytest.raises(SizeLimitError, match="1,000,000 rows × 2 columns decode to 16,000,000 bytes"):
        read_predictions_bytes(raw, "small.npz", max_bytes=3_500_000)


def test_csv_of_empty_cells_refused_before_parsing(monkeypatch):
    """",\\n" is two bytes a row and two values (16 bytes): the only text that decodes to more than
    4 × its size; refused from the header and the line breaks before a parser runs."""
    monkeypatch.setattr(io_tabular, "_csv_blocks", lambda *a: pytest.fail("parsed"))
    raw = b"y_true,y_prob\n" + b",\n" * 100_000
    with pytest.raises(SizeLimitError, match="100,000 rows × 2 columns"):
        read_predictions_bytes(raw, "empty.csv", max_bytes=len(raw))


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(2, 200), classes=st.integers(2, 6), digits=st.integers(0, 3))
def test_a_csv_within_the_byte_limit_always_passes_the_decoded_limit(rows, classes, digits):
    """Every value of a CSV takes at least two bytes (a digit and a separator): a file within
    ``max_bytes`` never decodes to more than 4 × ``max_bytes``."""
    value = "1" if digits == 0 else "0." + "5" * digits
    header = "y_true," + ",".join(f"p_{k}" for k in range(classes))
    raw = (header + "\n" + ("0," + ",".join([value] * classes) + "\n") * rows).encode()
    try:
        read_predictions_bytes(raw, "ok.csv", max_bytes=len(raw))
    except SizeLimitError:
        pytest.fail("a CSV within the byte limit was refused for its decoded size")
    except InputError:
        pass  # (rows that do not sum to 1: refused for that, after the size checks)


def test_parquet_group_column_of_long_text_decoded_once():
    """A group column the predictions' size check did not count: 1,000 rows of the same 100 kB text take
    a few kB in the file and are decoded once (100 MB as one string per row)."""
    from calviz.io import read_group_column

    buffer = io.BytesIO()
    pq.write_table(pa.table({"y_true": [0, 1] * 500, "y_prob": [0.5] * 1000, "g": ["x" * 100_000] * 1000,
                             "h": ["a", None] * 500}), buffer)
    assert len(buffer.getvalue()) < 50_000
    values = read_group_column("f.parquet", "g", 1000, content=buffer.getvalue())
    assert values.shape == (1000,) and values[0] == "x" * 100_000 and values[0] is values[999]
    missing = read_group_column("f.parquet", "h", 1000, content=buffer.getvalue())
    assert missing[:3].tolist() == ["a", None, "a"]


# -- wide files: more classes than MAX_CLASSES ----------------------------------------------------------
def _wide_csv(classes: int) -> bytes:
    header = "y_true," + ",".join(f"p_{k}" for k in range(classes))
    row = ",".join(["0"] * classes)
    return f"{header}\n0,{row}\n1,{row}\n".encode()


def test_wide_csv_refused_from_its_header_naming_the_limit_and_the_way_around(monkeypatch):
    """The 2-row CSV with 2·10⁵ probability columns (minutes and GBs before): refused from its first
    line, before Arrow or pandas parse it."""
    monkeypatch.setattr(io_tabular, "_csv_blocks", lambda *a: pytest.fail("parsed"))
    monkeypatch.setattr(io_tabular, "_read_csv_frame", lambda *a: pytest.fail("parsed"))
    with pytest.raises(InputError) as refused:
        read_predictions_bytes(_wide_csv(199_999), "wide.csv")
    message = str(refused.value)
    assert message.startswith("wide.csv: 199,999 classes exceed calviz's limit of MAX_CLASSES = 1,000")
    assert "'confidence' + 'correct'" in message


def test_a_huge_column_number_is_refused_in_o_k():
    """``p_0, p_99999999999``: the first missing column is found among the K names given (it was looked
    for among all the numbers up to 10¹¹)."""
    raw = b"y_true,p_0,p_99999999999\n0,0.5,0.5\n1,0.5,0.5\n"
    with pytest.raises(InputError, match=r"p_0\.\.p_99999999999 must all be present; missing p_1$"):
        read_predictions_bytes(raw, "gap.csv")


def test_class_limit_everywhere():
    """In-memory arrays (every estimator), Parquet, NPY and NPZ, at the limit and one above."""
    over = MAX_CLASSES + 1
    p = np.full((2, over), 1.0 / over)
    with pytest.raises(InputError, match="1,001 classes exceed"):
        calviz.ace(np.array([0, 1]), p)
    with pytest.raises(InputError, match="1,001 classes exceed"):
        calviz.as_calibration_data(np.array([0, 1]), p)
    assert calviz.as_calibration_data(np.array([0, 1]), p[:, :MAX_CLASSES] * over / MAX_CLASSES).n_classes \
        == MAX_CLASSES
    npy = io.BytesIO()
    np.save(npy, np.column_stack([[0, 1], p]))
    with pytest.raises(InputError, match="1,001 classes exceed"):
        read_predictions_bytes(npy.getvalue(), "wide.npy")
    npz = io.BytesIO()
    np.savez(npz, y_true=np.array([0, 1]), y_prob=p)
    with pytest.raises(InputError, match="1,001 classes exceed"):
        read_predictions_bytes(npz.getvalue(), "wide.npz")
    buffer = io.BytesIO()
    pq.write_table(pa.table({"y_true": [0, 1], **{f"p_{k}": p[:, k] for k in range(over)}}), buffer)
    with pytest.raises(InputError, match="1,001 classes exceed"):
        read_predictions_bytes(buffer.getvalue(), "wide.parquet")


# -- groups ---------------------------------------------------------------------------------------------
def test_as_many_groups_as_pairs_of_rows_refused_before_any_group_is_computed():
    """5,000 groups of 2 rows at n = 10⁴ (never returned): refused with the limit and the way around."""
    rng = np.random.default_rng(0)
    p = rng.uniform(size=10_000)
    y = (rng.uniform(size=10_000) < p).astype(int)
    with pytest.raises(InputError) as refused:
        calviz.calibration_by_group(y, p, groups=np.repeat(np.arange(5_000), 2))
    assert str(refused.value).startswith("5,000 groups exceed calviz's limit of MAX_GROUPS = 1,000")
    assert "coarser" in str(refused.value)
    groups = np.repeat(np.arange(MAX_GROUPS), 2)[:200]  # within the limit: answered
    assert len(calviz.calibration_by_group(y[:200], p[:200], groups=groups).groups) == 100


# -- the full target's simplex bins -----------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(classes=st.integers(2, 25), n_bins=st.integers(2, 400))
def test_largest_simplex_bins_is_the_brute_force_answer(classes, n_bins):
    brute = max((b for b in range(2, n_bins + 1) if simplex_key_space(classes, b) <= _INT64_MAX), default=0)
    assert largest_simplex_bins(classes, n_bins) == brute


@pytest.mark.parametrize("estimator", [calviz.binned_ece, calviz.mce])
def test_full_target_with_a_huge_n_bins_is_refused_with_the_largest_that_fits(estimator):
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(4), 300)
    y = rng.integers(0, 4, 300)
    with pytest.raises(InputError, match=r"n_bins = 1099511627776: use at most n_bins = 2097151, or"):
        estimator(y, p, target="full", n_bins=2**40)
    assert simplex_key_space(4, 2097151) <= _INT64_MAX < simplex_key_space(4, 2097152)
    with pytest.raises(InputError, match="no number of bins fits"):
        check_simplex_bins(200_000, 2**40)  # K! never computed (a million digits)


# -- interval ends within the quantity's range ------------------------------------------------------------
def test_clip_interval_keeps_floats_arrays_and_nan():
    assert clip_interval(-3.58, 3.58, -1.0, 1.0) == (-1.0, 1.0)
    low, high = clip_interval(np.array([np.nan, -0.5, 0.25]), np.array([2.0, 0.5, np.nan]), 0.0, 1.0)
    np.testing.assert_array_equal(low, [np.nan, 0.0, 0.25])
    np.testing.assert_array_equal(high, [1.0, 0.5, np.nan])


def test_compare_interval_within_the_range_of_a_difference_of_ece_squares():
    """Two rows: the normal interval D ± z·se reaches past ±1, where no difference of two ECE² lies."""
    y, p_a, p_b = np.array([0, 1]), np.array([0.5, 0.0]), np.array([0.99, 0.99])
    paired = paired_difference(p_a, y.astype(float), p_b, y.astype(float), n_bins=4)
    assert paired.difference + 1.64 * paired.se > 1.0  # the raw interval leaves [−1, 1]
    result = calviz.compare(y, p_a, p_b, n_bins=4, tcal=False)
    assert (result.low, result.high) == (-1.0, 1.0)
    assert result.low <= result.difference <= result.high


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 12), seed=st.integers(0, 2**32 - 1), n_bins=st.integers(1, 6))
def test_compare_interval_is_always_in_range(n, seed, n_bins):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p_a, p_b = rng.choice([0.0, 0.01, 0.5, 0.99, 1.0], (2, n))
    result = calviz.compare(y, p_a, p_b, n_bins=n_bins, tcal=False)
    assert -1.0 <= result.low <= result.high <= 1.0


@pytest.mark.parametrize("grid_step", [1.0, 0.5, 0.25])
def test_lower_dce_bracket_within_zero_one(grid_step):
    """v ≡ 0 with y ≡ 1 is at distance 1, the most any sample is: the bracket [value − 2ε, value + ε] is
    clipped there (its upper end was 2.0 at ε = 1)."""
    result = calviz.lower_dce(np.ones(10, dtype=int), np.zeros(10), grid_step=grid_step)
    assert result.value == pytest.approx(1.0)
    assert 0.0 <= result.lower <= result.value <= result.upper == 1.0


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 40), seed=st.integers(0, 2**32 - 1), m=st.sampled_from([1, 2, 4, 10]))
def test_lower_dce_bracket_always_in_range(n, seed, m):
    rng = np.random.default_rng(seed)
    p = rng.choice([0.0, 0.05, 0.5, 0.95, 1.0], n)
    y = rng.integers(0, 2, n)
    result = calviz.lower_dce(y, p, grid_step=1.0 / m)
    assert 0.0 <= result.lower <= result.upper <= 1.0


@pytest.mark.parametrize("measure", ["smce", "lower_dce", "sintce"])
def test_subsample_interval_within_zero_one(measure):
    """A subsample of 4 rows of 10⁶: the deviation bound is wider than the range [0, 1] itself."""
    y = np.array([1, 1, 0, 1])
    p = np.array([0.0, 0.1, 1.0, 0.0])
    result = getattr(calviz, measure)(y, p)
    low, high, _ = subsample_interval(measure, result, n=10**6, positives=3, positive_fraction=0.75)
    assert 0.0 <= low <= result.value <= high <= 1.0


_EXTREME = [0.0, 0.01, 0.5, 0.99, 1.0]


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 15), seed=st.integers(0, 2**32 - 1), n_bins=st.integers(1, 5),
       method=st.sampled_from(["asymptotic", "bootstrap"]))
def test_ece_interval_within_the_range_of_the_ece(n, seed, n_bins, method):
    """Binned ℓ2 ECE of a scalar target ∈ [0, 1]; of a full probability vector ∈ [0, √2]."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    result = calviz.ece_interval(y, rng.choice(_EXTREME, n), n_bins=n_bins, method=method,
                                 n_resamples=50, seed=0)
    assert 0.0 <= result.low <= result.high <= 1.0
    p = rng.dirichlet(np.full(3, 0.2), n)
    full = calviz.ece_interval(rng.integers(0, 3, n), p, n_bins=n_bins, target="full")
    assert 0.0 <= full.low <= full.high <= np.sqrt(2.0) + 1e-12


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 15), seed=st.integers(0, 2**32 - 1), n_bins=st.integers(1, 5),
       interval=st.sampled_from(["wilson", "jeffreys"]))
def test_reliability_bin_intervals_within_zero_one(n, seed, n_bins, interval):
    rng = np.random.default_rng(seed)
    result = calviz.reliability(rng.integers(0, 2, n), rng.choice(_EXTREME, n), n_bins=n_bins,
                                interval=interval)
    low, high = result.confidence_interval()
    seen = ~np.isnan(low)
    assert np.all((0.0 <= low[seen]) & (low[seen] <= high[seen]) & (high[seen] <= 1.0))


def test_smooth_reliability_band_within_zero_one():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 12)
    result = calviz.smooth_reliability(y, rng.choice(_EXTREME, 12), n_resamples=20, grid_size=51, seed=0)
    low, high = result.confidence_interval()
    assert np.all((0.0 <= low) & (low <= high) & (high <= 1.0))


# -- labels as given, paths under the data root -----------------------------------------------------------
U64 = np.iinfo(np.uint64).max


@pytest.mark.parametrize("keep_matrix", [True, False])
@pytest.mark.parametrize("layout", ["binary", "multiclass"])
def test_uint64_label_shown_as_given(tmp_path, layout, keep_matrix):
    """A uint64 label above 2^63 was converted to int64 by the block reader and shown as −1."""
    y = np.array([0, U64, 1], dtype=np.uint64)
    probs = ({"y_prob": [0.2, 0.7, 0.5]} if layout == "binary"
             else {"p_0": [0.2, 0.7, 0.5], "p_1": [0.8, 0.3, 0.5]})
    pq.write_table(pa.table({"y_true": y, **probs}), tmp_path / "u.parquet")
    np.savez(tmp_path / "u.npz", y_true=y, **{k: np.array(v) for k, v in probs.items()})
    for name in ("u.parquet", "u.npz"):
        with pytest.raises(InputError, match=f"row 1 has {U64}( \\(other labels|$)"):
            read_predictions(tmp_path / name, keep_matrix=keep_matrix)
    with pytest.raises(InputError, match=f"row 1 has {U64}( \\(other labels|$)"):
        calviz.as_calibration_data(y, np.array(probs["y_prob"]) if layout == "binary" else
                                   np.column_stack(list(probs.values())))


@pytest.mark.parametrize("label", [str(U64), str(2**63), str(-(2**63) - 1), str(2**64), str(2**53 + 1)])
@pytest.mark.parametrize("block_bytes", [None, 64], ids=["one block", "label in a later block"])
def test_integer_label_beyond_int64_in_a_csv_shown_as_written(tmp_path, monkeypatch, label, block_bytes):
    """A CSV label that overflows int64 (Arrow and pandas then read floating point, 1.84467e+19) or that
    floating point rounds (2^53 + 1) is shown in the message digit for digit, from a file read whole or
    in blocks, by read_predictions, an upload and calviz.as_calibration_data on Python integers."""
    if block_bytes is not None:
        monkeypatch.setattr("calviz.io._blocks.CSV_BLOCK_BYTES", block_bytes)
    body = "".join(f"{i % 2},0.{i % 9 + 1}\n" for i in range(40)) + f"{label},0.7\n1,0.4\n"
    raw = f"y_true,y_prob\n{body}".encode()
    (tmp_path / "u.csv").write_bytes(raw)
    message = f"row 40 has {label}( \\(other labels|$)"
    with pytest.raises(InputError, match=message):
        read_predictions(tmp_path / "u.csv")
    with pytest.raises(InputError, match=message):
        read_predictions_bytes(raw, "u.csv")
    with pytest.raises(InputError, match=f"row 1 has {label}( \\(other labels|$)"):
        calviz.as_calibration_data(np.array([0, int(label)], dtype=object), [0.2, 0.7])


def test_a_label_written_as_a_float_is_still_shown_as_a_float():
    for labels, shown in [([0, 2.5], "2.5"), ([0.0, 1e20], "1e+20"),
                          (np.array([0.0, 2.0**64]), "1.84467e+19")]:
        with pytest.raises(InputError, match=re.escape(f"row 1 has {shown}") + r"( \(other labels|$)"):
            calviz.as_calibration_data(labels, [0.2, 0.7])


def test_symlink_inside_a_folder_under_the_data_root_is_refused(tmp_path):
    """A folder under the root is a Parquet dataset whose files are opened one by one: a link in it (or in
    a folder below it) that leads out of the root is refused with the one message; links inside are fine."""
    root = tmp_path / "root"
    (root / "data" / "deeper").mkdir(parents=True)
    (root / "data" / "part-0.parquet").write_bytes(b"x")
    (tmp_path / "secret.parquet").write_bytes(b"x")
    (root / "inside").mkdir()
    (root / "inside" / "link-in.parquet").symlink_to(root / "data" / "part-0.parquet")
    assert path_under_root("inside", root) == (root / "inside").resolve()
    (root / "data" / "deeper" / "part-1.parquet").symlink_to(tmp_path / "secret.parquet")
    (root / "loop").mkdir()
    (root / "loop" / "a").symlink_to(root / "loop" / "b")
    (root / "loop" / "b").symlink_to(root / "loop" / "a")
    for path in ("data", "data/deeper", str(root / "data"), "loop", "."):
        with pytest.raises(InputError, match=r"no readable Parquet file or directory under the data root$"):
            path_under_root(path, root)
    assert path_under_root("data/part-0.parquet", root) == (root / "data" / "part-0.parquet").resolve()


def test_class_limit_on_dask():
    pytest.importorskip("dask")
    import dask.array as da
    import pandas as pd

    import calviz.dask as cdask

    over = MAX_CLASSES + 1
    with pytest.raises(InputError, match="1,001 classes exceed"):
        cdask.from_dask(da.zeros(2, chunks=2), da.full((2, over), 1.0 / over, chunks=(2, over)))
    import dask.dataframe as dd

    frame = pd.DataFrame(np.full((2, over), 1.0 / over), columns=[f"p_{k}" for k in range(over)])
    frame.insert(0, "y_true", [0, 1])
    with pytest.raises(InputError, match="1,001 classes exceed"):
        cdask.from_dataframe(dd.from_pandas(frame, npartitions=1))


# -- the command line: exit 2 with the one line -------------------------------------------------------------
def test_cli_refuses_the_wide_csv_and_too_many_groups(tmp_path, capsys):
    from calviz.cli import main

    (tmp_path / "wide.csv").write_bytes(_wide_csv(MAX_CLASSES + 1))
    assert main(["check", str(tmp_path / "wide.csv")]) == 2
    assert "1,001 classes exceed calviz's limit of MAX_CLASSES" in capsys.readouterr().err
    rng = np.random.default_rng(2)
    p = rng.uniform(size=2_004)
    frame = {"y_true": (rng.uniform(size=2_004) < p).astype(int), "y_prob": p, "id": np.arange(2_004) // 2}
    pa.csv.write_csv(pa.table(frame), tmp_path / "groups.csv")
    assert main(["check", str(tmp_path / "groups.csv"), "--group-by", "id", "--resampling", "analytic"]) == 2
    assert "1,002 groups exceed calviz's limit of MAX_GROUPS = 1,000" in capsys.readouterr().err
