"""pos_label and class-name labels in files and on the command line (scikit-learn's convention): a file's
label column of names ("no"/"yes") or of two labels other than 0/1 is read with ``pos_label`` exactly as
``as_calibration_data`` reads the arrays, and every mistake gets one clear message."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

import calviz
from calviz._data import InputError
from calviz.cli import main
from calviz.io import read_predictions


def _names(n=400, seed=0):
    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(0.02, 0.98, n), 3)
    positive = rng.random(n) < p ** 1.3
    return np.where(positive, "yes", "no"), positive.astype(int), p


def _csv(frame: pd.DataFrame) -> io.BytesIO:
    return io.BytesIO(frame.to_csv(index=False).encode())


def _same(a, b):
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.probs, b.probs)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_class_names_with_pos_label_equal_the_0_1_labels(fmt):
    names, labels, p = _names()
    frame = pd.DataFrame({"y_true": names, "y_prob": p})
    if fmt == "csv":
        source = _csv(frame)
    else:
        source = io.BytesIO()
        frame.to_parquet(source)
        source.seek(0)
    data = read_predictions(source, format=fmt, pos_label="yes")
    _same(data, calviz.as_calibration_data(labels, p))
    _same(data, calviz.as_calibration_data(names, p, pos_label="yes"))
    # the other class as positive: y = 1 for "no", with the same probabilities as P(no)
    source.seek(0)
    flipped = read_predictions(source, format=fmt, pos_label="no")
    np.testing.assert_array_equal(flipped.labels, 1 - labels)


def test_numeric_labels_other_than_0_1_take_pos_label_as_text_or_number():
    _, labels, p = _names(seed=1)
    frame = pd.DataFrame({"y_true": np.where(labels == 1, 1, -1), "y_prob": p})
    for pos_label in ("1", 1):
        _same(read_predictions(_csv(frame), format="csv", pos_label=pos_label),
              calviz.as_calibration_data(labels, p))
    with pytest.raises(InputError, match=r"must be \{0, 1\}; row \d+ has -1 .*pos_label"):
        read_predictions(_csv(frame), format="csv")
    with pytest.raises(InputError, match=r"pos_label 'yes' is not a label of 'y_true', which holds numbers"):
        read_predictions(_csv(frame), format="csv", pos_label="yes")
    with pytest.raises(InputError, match=r"pos_label=2 is not one of the labels \{-1, 1\}"):
        read_predictions(_csv(frame), format="csv", pos_label="2")


def test_clear_errors_for_names_without_pos_label_unknown_pos_label_and_three_names():
    names, _, p = _names(seed=2)
    frame = pd.DataFrame({"y_true": names, "y_prob": p})
    strings = r"'y_true' holds strings, the labels \{'no', 'yes'\}; .*--pos-label"
    with pytest.raises(InputError, match=strings):
        read_predictions(_csv(frame), format="csv")
    with pytest.raises(InputError, match=r"pos_label='maybe' is not one of the labels \{'no', 'yes'\}"):
        read_predictions(_csv(frame), format="csv", pos_label="maybe")
    three = frame.assign(y_true=np.where(np.arange(len(names)) % 3 == 0, "maybe", names))
    with pytest.raises(InputError, match=r"holds 3 labels \{'maybe', 'no', 'yes'\} but 'y_prob' is binary"):
        read_predictions(_csv(three), format="csv", pos_label="yes")


def test_multiclass_names_map_to_the_columns_in_sorted_order_and_refuse_pos_label():
    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.ones(3), size=300)
    ids = np.array([rng.choice(3, p=row) for row in probs])
    ids[:3] = [0, 1, 2]  # every class occurs
    classes = np.array(["bird", "cat", "dog"])  # sorted: bird -> p_0, cat -> p_1, dog -> p_2
    frame = pd.DataFrame({"y_true": classes[ids], **{f"p_{k}": probs[:, k] for k in range(3)}})
    _same(read_predictions(_csv(frame), format="csv"), calviz.as_calibration_data(ids, probs))
    with pytest.raises(InputError, match="pos_label is for binary predictions"):
        read_predictions(_csv(frame), format="csv", pos_label="cat")
    # the scalar-target reader (keep_matrix=False) refuses it as well (never silently ignored)
    with pytest.raises(InputError, match="pos_label is for binary predictions"):
        read_predictions(_csv(frame), format="csv", pos_label="cat", keep_matrix=False)


def test_calviz_check_pos_label(tmp_path, capsys):
    names, labels, p = _names(seed=4)
    path = tmp_path / "preds.csv"
    pd.DataFrame({"y_true": names, "y_prob": p}).to_csv(path, index=False)
    assert main(["check", str(path), "--pos-label", "yes", "--resampling", "analytic", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    expected = calviz.ece_interval(labels, p, n_bins=summary["options"]["n_bins"])
    assert summary["summary"]["n"] == len(p)
    assert summary["ece"]["estimate"] == pytest.approx(expected.estimate, rel=1e-12)
    assert main(["check", str(path), "--resampling", "analytic"]) == 2
    err = capsys.readouterr().err
    assert "holds strings, the labels {'no', 'yes'}" in err and "--pos-label" in err


def test_an_upload_with_the_sidebars_positive_label():
    """The app's upload box passes the sidebar's "positive label" to the reader (sources.read_upload)."""
    from calviz.app import sources

    names, labels, p = _names(seed=5)
    content = pd.DataFrame({"y_true": names, "y_prob": p}).to_csv(index=False).encode()
    data = sources.read_upload(content, "up.csv", limit=10**7, columns={"pos_label": "yes"})
    _same(data, calviz.as_calibration_data(labels, p))
    with pytest.raises(InputError, match=r"up.csv: 'y_true' holds strings"):
        sources.read_upload(content, "up.csv", limit=10**7, columns={})
