"""Windows of a partitioned log on Dask: per-partition window sums merged, equal to the in-memory windows
(every statistic but T-Cal), on the suite's LocalCluster; windows that span partitions out of order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calviz
from calviz._data import InputError

pytest.importorskip("dask.dataframe")
cdask = pytest.importorskip("calviz.dask")

FIELDS = ("n", "mean_prediction", "mean_prediction_low", "mean_prediction_high", "observed_rate",
          "observed_low", "observed_high", "gap", "gap_low", "gap_high", "ece", "ece_low", "ece_high")


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    """Five days of a binary log written as 4 Parquet files in shuffled row order (every window spans
    several partitions), plus a 3-class log with numeric batch times."""
    rng = np.random.default_rng(11)
    n = 8000
    time = np.datetime64("2026-04-01") + np.sort(rng.integers(0, 5 * 86400, n)).astype("timedelta64[s]")
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p ** 1.3).astype(int)
    directory = tmp_path_factory.mktemp("log")
    shuffled = rng.permutation(n)
    for i, rows in enumerate(np.array_split(shuffled, 4)):
        pd.DataFrame({"ts": time[rows], "y_true": y[rows], "y_prob": p[rows]}).to_parquet(
            directory / f"part-{i}.parquet")
    probs = rng.dirichlet(np.ones(3), size=n)
    labels = np.array([rng.choice(3, p=row) for row in probs])
    batch = rng.integers(0, 7, n)
    multi = tmp_path_factory.mktemp("multi")
    for i, rows in enumerate(np.array_split(np.arange(n), 3)):
        columns = {"batch": batch[rows], "label": labels[rows], **{f"p{k}": probs[rows, k] for k in range(3)}}
        pd.DataFrame(columns).to_parquet(multi / f"part-{i}.parquet")
    return dict(time=time, p=p, y=y, directory=directory, probs=probs, labels=labels, batch=batch,
                multi=multi)


def test_dask_windows_equal_the_in_memory_windows(log, local_cluster_client):
    on_dask = cdask.calibration_over_time(log["directory"], time_column="ts", window="1D", n_bins=12,
                                          client=local_cluster_client)
    in_memory = calviz.calibration_over_time(log["y"], log["p"], time=log["time"], window="1D", n_bins=12,
                                             tcal=False)
    assert on_dask.n_windows == in_memory.n_windows == 5
    np.testing.assert_array_equal(on_dask.start, in_memory.start)
    for field in FIELDS:
        np.testing.assert_allclose(getattr(on_dask, field), getattr(in_memory, field), rtol=1e-12, atol=1e-15,
                                   err_msg=field)
    assert np.isnan(on_dask.tcal_pvalue).all() and not on_dask.reject.any()
    diagram, expected = on_dask.reliability(3), in_memory.reliability(3)
    np.testing.assert_array_equal(diagram.counts, expected.counts)
    np.testing.assert_allclose(diagram.observed_frequency, expected.observed_frequency, rtol=1e-12)


def test_top1_windows_per_batch_id(log, local_cluster_client):
    on_dask = cdask.calibration_over_time(log["multi"], time_column="batch", y_true="label",
                                          y_prob=["p0", "p1", "p2"], window=None, client=local_cluster_client)
    in_memory = calviz.calibration_over_time(log["labels"], log["probs"], time=log["batch"], window=None,
                                             tcal=False)
    assert on_dask.target == in_memory.target == "top1"
    np.testing.assert_array_equal(on_dask.start, in_memory.start)
    for field in FIELDS:
        np.testing.assert_allclose(getattr(on_dask, field), getattr(in_memory, field), rtol=1e-12, atol=1e-15,
                                   err_msg=field)


def test_row_windows_are_refused_with_the_reason(log):
    with pytest.raises(InputError, match="global row order"):
        cdask.calibration_over_time(log["directory"], time_column="ts", window="1000 rows")
