"""The one overall verdict (:func:`calviz.present.verdict.overall_verdict`) on three cases: the binary
breast-cancer Gaussian naive Bayes model (n = 228 test rows), where T-Cal and the classical tests reject,
the bootstrap interval excludes 0 and the asymptotic interval includes it; an oscillating miscalibration
that only some classical tests see; a calibrated model.  The same text is shown by the app, the report
and ``calviz check``."""

from __future__ import annotations

import numpy as np
import pytest

import calviz
from calviz.analysis import AnalysisOptions, analyze
from calviz.datasets import load_dataset
from calviz.present.verdict import overall_verdict


@pytest.fixture(scope="module")
def gnb():
    data = load_dataset("breast-cancer-gnb")  # scikit-learn's breast cancer, GaussianNB, 228 test rows
    assert data.n == 228 and data.is_binary
    views = ["tcal", "interval", "bootstrap", "classical"]
    return analyze(data, AnalysisOptions(n_resamples=200), views=views)


def test_breast_cancer_gnb_verdict_reconciles_the_intervals(gnb):
    assert gnb.tcal.reject and gnb.interval.confidence_interval()[0] == 0
    assert gnb.bootstrap.confidence_interval()[0] > 0
    verdict, reasons = overall_verdict(tcal=gnb.tcal, interval=gnb.interval, bootstrap=gnb.bootstrap,
                                            classical=gnb.classical)
    assert verdict == ("Miscalibrated: T-Cal rejects, all 4 classical tests reject, the ECE interval "
                       "includes 0 and the bootstrap interval excludes 0.")
    joined = " ".join(reasons)
    assert "not that the model is calibrated" in reasons[0] and "n = 228" in reasons[0]
    assert "bootstrap interval is too narrow" in reasons[1]
    assert "With 228 rows the classical p-values are exact or resampled" in joined


def _oscillating(n, amplitude, frequency, seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, n)
    q = np.clip(p + amplitude * np.sin(frequency * np.pi * p), 0, 1)
    return (rng.uniform(size=n) < q).astype(int), p


def test_oscillating_miscalibration_says_why_some_classical_tests_do_not_reject():
    y, p = _oscillating(3000, 0.15, 8, seed=1)
    verdict, reasons = overall_verdict(
        tcal=calviz.adaptive_tcal(y, p, resampling="analytic"), interval=calviz.ece_interval(y, p),
        classical=calviz.classical_tests(y, p))
    assert verdict.startswith("Miscalibrated: T-Cal rejects, ")
    assert "of the 5 classical tests reject" in verdict
    assert len(reasons) == 1 and "not reject: each classical test looks for one pattern" in reasons[0]


def _calibrated(seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=3000)
    y = (rng.uniform(size=3000) < p).astype(int)
    return overall_verdict(tcal=calviz.adaptive_tcal(y, p, resampling="analytic"),
                                interval=calviz.ece_interval(y, p), classical=calviz.classical_tests(y, p))


def test_calibrated_model_has_one_plain_verdict_or_says_why_a_test_disagrees():
    verdict, reasons = _calibrated(seed=2)
    assert verdict == ("No evidence of miscalibration: T-Cal does not reject, none of the 5 classical tests "
                       "rejects and the ECE interval includes 0.")
    assert reasons == []
    # the same calibrated model on another sample: two classical tests (p = 0.0009, 0.014) and the interval
    # see an error T-Cal does not confirm — the verdict stays T-Cal's and the reasons say why they differ
    verdict, reasons = _calibrated(seed=0)
    assert verdict == ("No evidence of miscalibration: T-Cal does not reject, 2 of the 5 classical tests "
                       "reject and the ECE interval excludes 0.")
    assert "interval looks at one binning" in reasons[0]
    assert reasons[1].startswith("Hosmer–Lemeshow, Kuiper reject: a test aimed at one pattern")
    assert overall_verdict() == ("No verdict: no test could be computed.", [])


class _Tests:
    """Classical-test results as the verdict reads them: rows with a test name and a decision."""

    def __init__(self, *rejects):
        self._rows = [{"test": f"test {i}", "reject": r} for i, r in enumerate(rejects)]

    def rows(self, alpha):
        return self._rows


@pytest.mark.parametrize("rejects, phrase", [
    ((True, False), "1 of the 2 classical tests rejects"),
    ((True, True, False), "2 of the 3 classical tests reject"),
    ((False, False), "none of the 2 classical tests rejects"),
    ((True, True), "all 2 classical tests reject"),
    ((True,), "the one classical test rejects"),
    ((False,), "the one classical test does not reject"),
])
def test_the_classical_count_agrees_with_its_verb(rejects, phrase):
    verdict, _ = overall_verdict(classical=_Tests(*rejects), alpha=0.05)
    assert phrase in verdict
