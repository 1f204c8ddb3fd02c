"""The options of the data-loading entry points are checked like every estimator's option.

``as_calibration_data``, the ``CalibrationData`` methods, ``calviz.io.read_predictions`` /
``read_predictions_bytes`` / ``write_predictions`` and ``calviz.datasets.load_dataset`` /
``dataset_info`` refuse an option of the wrong type or out of range with the one message of
:mod:`calviz._params` ("The 'n' parameter of load_dataset must be an int in [2, inf) or None; got 1."),
an :class:`~calviz.InputError` that is both a ValueError and a TypeError.  Good values (defaults, the
edges of the ranges, numpy integers and bools) still load the same data; data problems keep their own
messages.
"""

from __future__ import annotations

import re
from argparse import Namespace

import numpy as np
import pytest

import calviz
from calviz import InputError
from calviz.datasets import dataset_info, load_dataset
from calviz.io import read_predictions, read_predictions_bytes, write_predictions

Y = np.array([0, 1, 1, 0, 1])
P = np.array([0.2, 0.9, 0.6, 0.3, 0.7])
Y3 = np.array([0, 2, 1, 1, 0])
P3 = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3], [0.3, 0.4, 0.3], [0.5, 0.25, 0.25]])
#: what renormalize=True makes of P3 (each row divided by its float sum: equal to P3 within 1 ulp)
P3_RENORMALIZED = P3 / P3.sum(axis=1)[:, None]
CSV = b"y_true,y_prob\n0,0.2\n1,0.9\n1,0.6\n0,0.3\n1,0.7\n"
CSV3 = b"y_true,p_0,p_1,p_2\n0,0.7,0.2,0.1\n2,0.1,0.3,0.6\n1,0.2,0.5,0.3\n1,0.3,0.4,0.3\n0,0.5,0.25,0.25\n"
SCENARIO = "scenario-tcal_p0"


def _uniform(param: str, caller: str) -> str:
    return rf"^The '{re.escape(param)}' parameter of {re.escape(caller)} must be .+; got .+\.$"


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("loading") / "ok.csv"
    path.write_bytes(CSV)
    return path


@pytest.fixture(scope="module")
def csv3_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("loading3") / "multi.csv"
    path.write_bytes(CSV3)
    return path


def _multi():
    return calviz.as_calibration_data(Y3, P3)


# (caller, parameter, value, call(value, paths)) — each a value the option's constraint refuses:
# the wrong type, just outside the range, a bool where an int is expected, a truthy string for a bool
BAD = []


def _bad(caller, param, values, call):
    BAD.extend(pytest.param(caller, param, v, call, id=f"{caller}-{param}-{v!r}") for v in values)


_bad("as_calibration_data", "renormalize", ["no", "yes", 1, None],
     lambda v, paths: calviz.as_calibration_data(Y3, P3, renormalize=v))
_bad("as_calibration_data", "logits", ["no", 0, 1.0, None],
     lambda v, paths: calviz.as_calibration_data(Y, P, logits=v))
_bad("as_calibration_data", "min_samples", [-1, 1.5, True, "2", None, np.float64(2.0)],
     lambda v, paths: calviz.as_calibration_data(Y, P, min_samples=v))
_bad("as_calibration_data", "min_samples", [-1, 2.0],
     lambda v, paths: calviz.as_calibration_data(calviz.as_calibration_data(Y, P), min_samples=v))

_bad("read_predictions", "format", ["xls", "", 3, b"csv"],
     lambda v, paths: read_predictions(paths[0], format=v))
for _name in ("y_true", "prob_prefix", "confidence", "correct"):
    _bad("read_predictions", _name, [3, None, b"x"],
         lambda v, paths, _name=_name: read_predictions(paths[0], **{_name: v}))
_bad("read_predictions", "y_prob", [3, None, [], ["p_0", 1], {"p_0"}],
     lambda v, paths: read_predictions(paths[0], y_prob=v))
_bad("read_predictions", "renormalize", ["x", "no", 1],
     lambda v, paths: read_predictions(paths[1], renormalize=v))
_bad("read_predictions", "logits", ["no", 0],
     lambda v, paths: read_predictions(paths[0], logits=v))
_bad("read_predictions", "keep_matrix", ["x", 0, None],
     lambda v, paths: read_predictions(paths[1], keep_matrix=v))
_bad("read_predictions", "max_bytes", ["big", -1, -5, 1.5, 2e9, True, np.float64(100.0)],
     lambda v, paths: read_predictions(paths[0], max_bytes=v))

_bad("read_predictions_bytes", "format", ["xls", 3],
     lambda v, paths: read_predictions_bytes(CSV, "upload.csv", format=v))
_bad("read_predictions_bytes", "max_bytes", [-1, "big", False],
     lambda v, paths: read_predictions_bytes(CSV, "upload.csv", max_bytes=v))
_bad("read_predictions_bytes", "renormalize", ["x"],
     lambda v, paths: read_predictions_bytes(CSV3, "upload.csv", renormalize=v))
_bad("read_predictions_bytes", "logits", ["no"],
     lambda v, paths: read_predictions_bytes(CSV, "upload.csv", logits=v))
_bad("read_predictions_bytes", "y_true", [3],
     lambda v, paths: read_predictions_bytes(CSV, "upload.csv", y_true=v))

_bad("write_predictions", "format", ["xls", 3],
     lambda v, paths: write_predictions(paths[2] / "out.csv", Y, P, format=v))
_bad("write_predictions", "prob_prefix", [3, None],
     lambda v, paths: write_predictions(paths[2] / "out.csv", Y3, P3, prob_prefix=v))

_bad("load_dataset", "name", [3, None, b"digits-gnb"], lambda v, paths: load_dataset(v))
_bad("load_dataset", "n", [1, 0, -3, 2.0, 300.0, True, "10"], lambda v, paths: load_dataset(SCENARIO, n=v))
_bad("load_dataset", "seed", [-3, "a", 1.5, True], lambda v, paths: load_dataset(SCENARIO, n=50, seed=v))
_bad("load_dataset", "seed", [-1], lambda v, paths: load_dataset("digits-gnb", seed=v))
_bad("dataset_info", "name", [3, None], lambda v, paths: dataset_info(v))

_bad("CalibrationData.subsample", "n", [1, 0, 2.5, 3.0, True, "3", None],
     lambda v, paths: _multi().subsample(v))
_bad("CalibrationData.subsample", "seed", [-1, "a", 0.5], lambda v, paths: _multi().subsample(2, seed=v))
_bad("CalibrationData.subsample_rows", "n", [-1, 6, 2.7, True], lambda v, paths: _multi().subsample_rows(v))
_bad("CalibrationData.topk", "k", [0, 4, 1.0, True, "2"], lambda v, paths: _multi().topk(v))
_bad("CalibrationData.classwise", "class_index", [-1, 3, 0.0, True, None],
     lambda v, paths: _multi().classwise(v))
_bad("CalibrationData.classwise", "cache", ["x", 0], lambda v, paths: _multi().classwise(0, cache=v))
_bad("CalibrationData.view", "top_k", [0, 4, 2.0], lambda v, paths: _multi().view("topk", top_k=v))
_bad("CalibrationData.view", "class_index", [-1, 3],
     lambda v, paths: _multi().view("classwise", class_index=v))
_bad("CalibrationData.view", "target", ["x"], lambda v, paths: _multi().view(v))


@pytest.mark.parametrize(("caller", "param", "value", "call"), BAD)
def test_bad_option_gets_the_uniform_message(caller, param, value, call, csv_path, csv3_path, tmp_path):
    with pytest.raises(InputError, match=_uniform(param, caller)) as info:
        call(value, (csv_path, csv3_path, tmp_path))
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)


def test_logits_no_is_no_longer_read_as_true():
    """The silently wrong number: a truthy string made probabilities be read as logits."""
    with pytest.raises(InputError, match=_uniform("logits", "as_calibration_data")):
        calviz.as_calibration_data(Y, P, logits="no")
    with pytest.raises(InputError, match=_uniform("logits", "read_predictions")):
        read_predictions(CSV, format="csv", logits="no")


def test_messages_quote_the_range():
    with pytest.raises(InputError) as info:
        load_dataset(SCENARIO, n=1)
    assert str(info.value) == "The 'n' parameter of load_dataset must be an int in [2, inf) or None; got 1."
    with pytest.raises(InputError) as info:
        _multi().topk(4)
    assert str(info.value) == ("The 'k' parameter of CalibrationData.topk must be an int in [1, 3] "
                               "(the number of classes); got 4.")
    with pytest.raises(InputError) as info:
        read_predictions(CSV, format="xls")
    assert str(info.value) == ("The 'format' parameter of read_predictions must be a str among "
                               "{'csv', 'parquet', 'npz', 'npy'} or None; got 'xls'.")


# -- good values ------------------------------------------------------------------------------------
def _same(data, y, p):
    np.testing.assert_array_equal(data.labels, y)
    np.testing.assert_array_equal(data.probs, p)


@pytest.mark.parametrize("options", [
    {}, {"renormalize": False, "logits": False, "min_samples": 2},
    {"renormalize": np.True_}, {"min_samples": 0}, {"min_samples": 5}, {"min_samples": np.int64(5)},
    {"renormalize": True, "min_samples": np.int32(1)},
])
def test_good_options_give_the_same_data(options):
    _same(calviz.as_calibration_data(Y, P, **options), Y, P)
    expected = P3_RENORMALIZED if options.get("renormalize") else P3
    _same(calviz.as_calibration_data(Y3, P3, **options), Y3, expected)
    data = calviz.as_calibration_data(Y, P)
    assert calviz.as_calibration_data(data, **options) is data


def test_min_samples_keeps_its_data_message():
    with pytest.raises(InputError, match=r"^need at least 6 samples; got 5$"):
        calviz.as_calibration_data(Y, P, min_samples=6)


def test_min_samples_zero_as_the_dask_partitions_pass_it():
    data = calviz.as_calibration_data(np.zeros(0, dtype=np.int64), np.zeros(0), min_samples=0)
    assert data.n == 0


def test_logits_true_still_applies_the_sigmoid():
    scores = np.array([-1.0, 2.0, 0.5, -0.3, 0.0])
    _same(calviz.as_calibration_data(Y, scores, logits=np.True_), Y, calviz.from_logits(scores))


@pytest.mark.parametrize("options", [
    {}, {"format": "csv"}, {"format": "CSV"}, {"format": ".csv"}, {"format": None}, {"max_bytes": None},
    {"max_bytes": len(CSV)}, {"max_bytes": np.int64(len(CSV))}, {"renormalize": np.False_},
    {"keep_matrix": False}, {"y_true": "y_true", "y_prob": "y_prob", "prob_prefix": "p_"},
    {"confidence": "confidence", "correct": "correct"},  # (the default names: not the confidence form)
])
def test_read_predictions_good_options(csv_path, options):
    _same(read_predictions(csv_path, **options), Y, P)
    _same(read_predictions(CSV, **{"format": "csv", **options}), Y, P)
    upload = {k: v for k, v in options.items() if k != "keep_matrix"}
    _same(read_predictions_bytes(CSV, "upload.csv", **upload), Y, P)


@pytest.mark.parametrize("options", [
    {}, {"keep_matrix": False}, {"keep_matrix": np.True_}, {"renormalize": True},
    {"y_prob": ["p_0", "p_1", "p_2"]}, {"y_prob": ("p_0", "p_1", "p_2")}, {"prob_prefix": "p_"},
])
def test_read_predictions_multiclass_good_options(csv3_path, options):
    _same(read_predictions(csv3_path, **options), Y3, P3_RENORMALIZED if options.get("renormalize") else P3)


def test_max_bytes_edges_keep_the_size_message(csv_path):
    """0 and one byte short are valid limits; the file is refused for its size, naming it."""
    for limit in (0, len(CSV) - 1):
        with pytest.raises(InputError, match=r"^ok\.csv: .* exceeds the size limit max_bytes="):
            read_predictions(csv_path, max_bytes=limit)


def test_unknown_extension_keeps_the_file_format_message(tmp_path):
    path = tmp_path / "x.xlsx"
    path.write_bytes(b"PK\x05\x06" + b"\x00" * 20)
    with pytest.raises(InputError, match=r"^x\.xlsx: unknown format \(extension \.xlsx\)"):
        read_predictions(path)


@pytest.mark.parametrize("fmt", ["csv", "parquet", "npz", "npy", "CSV", ".parquet", "pq", "tsv"])
def test_write_predictions_good_options_round_trip(tmp_path, fmt):
    path = write_predictions(tmp_path / "out.data", Y3, P3, format=fmt, prob_prefix="q_")
    _same(read_predictions(path, format=fmt, prob_prefix="q_"), Y3, P3)
    _same(read_predictions(write_predictions(tmp_path / "bin.data", Y, P, format=fmt), format=fmt), Y, P)


def test_load_dataset_good_options():
    a = load_dataset(SCENARIO, n=300, seed=1)
    _same(load_dataset(SCENARIO, n=np.int64(300), seed=np.int64(1)), a.labels, a.probs)
    assert load_dataset(SCENARIO, n=2).n == 2
    default = load_dataset(SCENARIO, n=40)
    _same(load_dataset(SCENARIO, n=40, seed=0), default.labels, default.probs)
    assert load_dataset(SCENARIO, n=40, seed=np.random.default_rng(3)).n == 40
    assert load_dataset(SCENARIO, n=None).n == calviz.datasets.SCENARIO_DEFAULT_N
    assert dataset_info(SCENARIO).name == SCENARIO


def test_load_dataset_keeps_its_unknown_name_message():
    with pytest.raises(InputError, match=r"^unknown dataset 'nope'; choose one of: .*scenario-"):
        load_dataset("nope")
    with pytest.raises(InputError, match=r"^unknown dataset 'nope'; choose one of:"):
        dataset_info("nope")


def test_calibration_data_methods_good_values():
    data = _multi()
    assert data.subsample(5) is data and data.subsample(10) is data
    a = data.subsample(np.int64(2), seed=np.int64(5))
    b = data.subsample(2, seed=5)
    _same(a, b.labels, b.probs)
    assert a.n == 2
    assert data.subsample_rows(0, seed=1).tolist() == []
    assert data.subsample_rows(np.int64(5), seed=1).tolist() == [0, 1, 2, 3, 4]
    np.testing.assert_array_equal(data.topk(np.int64(3))[0], np.sort(P3, axis=1)[:, ::-1])
    np.testing.assert_array_equal(data.topk(1)[0][:, 0], data.top1()[0])
    z, y = data.classwise(np.int64(2), cache=np.False_)
    np.testing.assert_array_equal(z, P3[:, 2])
    np.testing.assert_array_equal(y, (Y3 == 2).astype(float))
    np.testing.assert_array_equal(data.classwise(0)[0], P3[:, 0])
    np.testing.assert_array_equal(data.view("classwise", class_index=np.int64(1))[0], P3[:, 1])
    assert data.view("topk", top_k=3)[0].shape == (5, 3)


def test_cli_reader_options_are_valid(csv3_path):
    """The command line passes its file flags through: each is a value the reader accepts."""
    from calviz.cli import _reader_kwargs

    args = Namespace(y_true="y_true", y_prob=None, prob_prefix="p_", confidence=None, correct=None,
                     format="csv", renormalize=True, logits=False)
    kwargs = _reader_kwargs(args)
    assert kwargs["max_bytes"] is None
    _same(read_predictions(csv3_path, keep_matrix=False, **kwargs), Y3, P3_RENORMALIZED)
