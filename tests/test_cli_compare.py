"""``calviz check`` / ``calviz report`` with --compare, --group-by and --recalibrate."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calviz
from calviz.cli import main
from calviz.datasets import load_dataset


def _csv(path: Path, labels, probs, **extra) -> Path:
    frame = pd.DataFrame(probs, columns=[f"p_{k}" for k in range(probs.shape[1])])
    frame.insert(0, "y_true", labels)
    for name, values in extra.items():
        frame[name] = values
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Naive Bayes before and after temperature scaling on the same 12 000 held-out rows, plus a region
    column with one tiny group."""
    before, after = load_dataset("tabular-gnb"), load_dataset("tabular-gnb-temperature")
    assert np.array_equal(before.labels, after.labels)
    region = np.array(["north", "south", "west"], dtype=object)[np.arange(before.n) % 3]
    region[:7] = "island"
    d = tmp_path_factory.mktemp("cmp")
    return {
        "before": _csv(d / "before.csv", before.labels, before.probs, region=region),
        "after": _csv(d / "after.csv", after.labels, after.probs),
        "shuffled": _csv(d / "shuffled.csv", after.labels[::-1], after.probs[::-1]),
        "data": (before, after, region),
    }


def _json(capsys, *argv) -> dict:
    assert main(["check", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_check_compare_json_equals_calviz_compare(pair, capsys):
    out = _json(capsys, pair["before"], "--compare", pair["after"])
    c = out["comparison"]
    before, after, _ = pair["data"]
    ref = calviz.compare(before.labels, before.probs, after.probs, names=("before.csv", "after.csv"))
    assert c["names"] == ["before.csv", "after.csv"]
    for key in ("difference", "low", "high", "se", "pvalue"):
        assert c[key] == pytest.approx(getattr(ref, key), rel=1e-12, abs=1e-300)
    assert c["reject"] and c["better"] == "after.csv"
    assert c["models"]["before.csv"]["tcal"]["reject"] is True
    assert c["models"]["after.csv"]["ece"]["estimate"] == pytest.approx(ref.ece_b.estimate)
    assert out["decision"] == "reject"  # the first file's own check is unchanged


def test_check_compare_text(pair, capsys):
    assert main(["check", str(pair["before"]), "--compare", str(pair["after"])]) == 0
    text = capsys.readouterr().out
    assert "compare  before.csv vs after.csv on the same 12000 examples" in text
    assert "after.csv is better calibrated than before.csv" in text


def test_check_compare_refuses_other_examples(pair, tmp_path, capsys):
    assert main(["check", str(pair["before"]), "--compare", str(pair["shuffled"])]) == 2
    assert "labels differ" in capsys.readouterr().err
    assert main(["check", str(pair["before"]), "--compare", str(tmp_path / "missing.csv")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_check_group_by_lists_the_tiny_group_and_equals_calibration_by_group(pair, capsys):
    out = _json(capsys, pair["before"], "--group-by", "region")
    g = out["groups"]
    before, _, region = pair["data"]
    # the command line's T-Cal is the library's default decision rule (y-only resampling), seed 0
    ref = calviz.calibration_by_group(before.labels, before.probs, region, resampling="y_only", seed=0)
    assert [row["group"] for row in g["groups"]] == ["island", "north", "south", "west"]
    island = g["groups"][0]
    assert island["status"] == "too small" and island["n"] == 7 and island["reject"] is None
    assert g["too_small"] == ["island"] and g["correction"] == "Holm"
    for row, r in zip(g["groups"][1:], ref.groups[1:], strict=True):
        assert row["ece"]["estimate"] == pytest.approx(r.interval.estimate)
        assert row["adjusted_pvalue"] == pytest.approx(r.adjusted_pvalue, abs=1e-300)
    assert g["worst_group"] == ref.worst_group
    assert main(["check", str(pair["before"]), "--group-by", "region"]) == 0
    text = capsys.readouterr().out
    assert "island" in text and "too small" in text and "worst group" in text


def test_check_group_by_label_column_works_for_embedded_datasets(capsys):
    out = _json(capsys, "dataset:breast-cancer-gnb", "--group-by", "y_true")
    assert [row["group"] for row in out["groups"]["groups"]] == [0, 1]


def test_check_group_by_unknown_column(pair, capsys):
    assert main(["check", str(pair["before"]), "--group-by", "nope"]) == 2
    assert "nope" in capsys.readouterr().err
    assert main(["check", "dataset:tabular-gnb", "--group-by", "region"]) == 2
    assert "no column 'region'" in capsys.readouterr().err


def test_check_recalibrate_evaluates_on_held_out_rows(pair, capsys):
    out = _json(capsys, pair["before"], "--recalibrate", "temperature", "--calibration-size", "0.25")
    r = out["recalibration"]
    assert r["n_calibration"] == 3000 and r["n_eval"] == 9000 and r["temperature"] > 1
    assert r["comparison"]["n"] == 9000 and r["comparison"]["better"] == "after"
    assert main(["check", str(pair["before"]), "--recalibrate", "platt"]) == 0
    assert "recalibrate platt: fitted on 6000 rows, evaluated on the other 6000" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["check", str(pair["before"]), "--recalibrate", "magic"])


def test_report_gets_the_comparison_sections(pair, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", str(pair["before"]), "-o", str(out), "--compare", str(pair["after"]),
                 "--group-by", "region", "--recalibrate", "isotonic", "--n-resamples", "50"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "Model comparison: before.csv vs after.csv" in text
    assert "Before / after isotonic recalibration" in text
    assert "Calibration by group" in text and "island" in text and "too small" in text


def test_group_column_from_parquet_and_npz(tmp_path):
    from calviz._data import InputError
    from calviz.io import read_group_column

    rng = np.random.default_rng(0)
    labels, probs = rng.integers(0, 2, 50), rng.random(50)
    region = np.array(["a", "b"], dtype=object)[np.arange(50) % 2]
    pq = tmp_path / "p.parquet"
    pd.DataFrame({"y_true": labels, "y_prob": probs, "region": region}).to_parquet(pq)
    npz = tmp_path / "p.npz"
    np.savez(npz, y_true=labels, y_prob=probs, region=region.astype(str))
    for path in (pq, npz):
        values = read_group_column(str(path), "region", 50)
        assert list(values[:3]) == ["a", "b", "a"]
        with pytest.raises(InputError):
            read_group_column(str(path), "nope", 50)
        with pytest.raises(InputError):
            read_group_column(str(path), "region", 49)
    np.testing.assert_array_equal(read_group_column(str(npz), "y_true", 50, labels=labels + 0), labels)


def test_tables_show_undecided_tests_and_bounded_pvalues():
    """An undecided T-Cal (resampling cap reached) is not shown as a plain "not rejected", and a p-value a
    tail bound settled is shown as a bound (the group table read "T-Cal p 0.0351 · Holm p 0.1402 ·
    rejects")."""
    from calviz.cli_compare import comparison_html

    def group(name, reject, reason, p, bound):
        tcal = {"reject": reject, "decision": "reject" if reject else "undecided", "pvalue": p,
                "pvalue_is_bound": bound, "sequential": True}
        return {"group": name, "n": 70, "status": "tested", "reason": reason,
                "ece": {"estimate": 0.07, "low": 0.0, "high": 0.17, "level": 0.95}, "tcal": tcal,
                "pvalue": p, "adjusted_pvalue": min(1.0, 4 * p), "reject": reject,
                "decision": tcal["decision"]}

    undecided = "undecided at the Holm level α/3 = 0.0167 (resampling cap reached, …): not rejected"
    summary = {"groups": {"groups": [group("a", True, "", 0.0351, True), group("b", False, undecided, 0.02,
                                                                                 False)],
                          "verdict": "calibration rejected in a", "rejected": ["a"], "alpha": 0.05}}
    text = comparison_html(summary)
    assert "≤ 0.0351" in text and "≤ 0.1404" in text and "rejects" in text
    assert "undecided (not rejected)" in text and html_escape(undecided) in text
    assert "Holm's step-down procedure" in text
    for row in summary["groups"]["groups"]:  # analytic critical values: no sequential tests
        row["tcal"]["sequential"] = False
    text = comparison_html(summary)
    assert "Holm's step-down" not in text and "Holm-adjusted p-value is at most α = 0.05" in text
    pair = {"names": ["A", "B"], "difference": 0.01, "low": 0.0, "high": 0.02, "level": 0.95, "pvalue": 0.2,
            "method": "asymptotic", "reject": False, "verdict": "no difference",
            "models": {"A": {"ece": None, "tcal": {"reject": False, "decision": "undecided", "pvalue": 0.04,
                                                   "pvalue_is_bound": False}},
                       "B": {"ece": None, "tcal": None}}}
    assert "undecided (not rejected)" in comparison_html({"comparison": pair})


def html_escape(text: str) -> str:
    import html

    return html.escape(text)


def test_tcal_caption_shows_a_tail_bound_as_a_bound():
    """y-only T-Cal at n = 50 (seed 0) rejects by its tail bound before any resample: its p-value is only
    an upper bound, and the caption and calviz check say "≤"."""
    from calviz import plots

    rng = np.random.default_rng(0)
    p = rng.uniform(size=50)
    y = (rng.uniform(size=50) < p ** 3).astype(int)
    for seed in range(20):
        result = calviz.adaptive_tcal(y, p, seed=seed)
        if result.pvalue_is_bound:
            break
    assert result.pvalue_is_bound and result.n_resamples == 0 and result.reject
    assert f"adjusted p ≤ {result.pvalue:.4f}" in plots.tcal_caption(result)
    exact = calviz.adaptive_tcal(y, p, resampling="analytic")
    assert not exact.pvalue_is_bound and "≤" not in plots.tcal_caption(exact)


# ------------------------------------------------------------------------------------------------
# calviz compare A B / calviz compare A --by COLUMN
# ------------------------------------------------------------------------------------------------
def _compare_json(capsys, *argv) -> dict:
    assert main(["compare", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_compare_command_equals_check_compare(pair, capsys):
    out = _compare_json(capsys, pair["before"], pair["after"])
    check = _json(capsys, pair["before"], "--compare", pair["after"])
    assert out["comparison"] == check["comparison"]
    assert set(out) == {"comparison"}  # the comparison only: no analysis of model A


def test_compare_command_reads_model_b_from_columns_of_the_file(pair, capsys, tmp_path):
    before, after, _ = pair["data"]
    frame = pd.read_csv(pair["before"])
    for k in range(after.probs.shape[1]):
        frame[f"q_{k}"] = after.probs[:, k]
    both = tmp_path / "both.csv"
    frame.to_csv(both, index=False)
    out = _compare_json(capsys, both, "--b-prefix", "q_")
    ref = calviz.compare(before.labels, before.probs, after.probs)
    c = out["comparison"]
    assert c["names"] == ["both.csv", "both.csv:q_*"]
    for key in ("difference", "low", "high", "pvalue"):
        assert c[key] == pytest.approx(getattr(ref, key), rel=1e-12, abs=1e-300)


def test_compare_command_by_column_equals_check_group_by(pair, capsys):
    out = _compare_json(capsys, pair["before"], "--by", "region")
    check = _json(capsys, pair["before"], "--group-by", "region")
    assert out["groups"] == check["groups"]
    assert "island" in out["groups"]["too_small"]


def test_compare_command_text_and_report(capsys, tmp_path):
    report = tmp_path / "cmp.html"
    a, b = "dataset:breast-cancer-gnb", "dataset:breast-cancer-gnb-temperature"
    assert main(["compare", a, b, "--report", str(report), "--resampling", "analytic"]) == 0
    text = capsys.readouterr().out
    assert "breast-cancer-gnb vs breast-cancer-gnb-temperature on the same 228 examples" in text
    assert "verdict:" in text and f"wrote {report}" in text
    page = report.read_text(encoding="utf-8")
    assert "Model comparison: breast-cancer-gnb vs breast-cancer-gnb-temperature" in page


@pytest.mark.parametrize("argv,message", [
    (["dataset:breast-cancer-gnb"], "give model B"),
    (["dataset:breast-cancer-gnb", "dataset:breast-cancer-gnb-platt", "--by", "y_true"], "not both"),
    (["dataset:breast-cancer-gnb", "dataset:breast-cancer-gnb-platt", "--b-column", "p"],
     "give model B once"),
])
def test_compare_command_refuses_ambiguous_requests(argv, message, capsys):
    assert main(["compare", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("calviz compare: error:") and message in err


def test_the_two_decompositions_side_by_side(pair, capsys, tmp_path):
    """compare's decompositions are each model's score_decomposition on the compared target (engine), in
    calviz check's --json and text and in the report's comparison table."""
    before, after, _ = pair["data"]
    ref = calviz.compare(before.labels, before.probs, after.probs, names=("a", "b"), tcal=False)
    for split, probs in ((ref.decomposition_a, before.probs), (ref.decomposition_b, after.probs)):
        direct = calviz.score_decomposition(before.labels, probs, target="top1")
        for key in ("mean_score", "mcb", "dsc", "unc"):
            assert getattr(split, key) == pytest.approx(getattr(direct, key), rel=1e-12, abs=1e-15)
        assert split.target == ref.target
    out = _json(capsys, pair["before"], "--compare", pair["after"])
    shown = out["comparison"]["models"]
    assert shown["before.csv"]["decomposition"]["mcb"] == pytest.approx(ref.decomposition_a.mcb, rel=1e-12)
    assert shown["after.csv"]["decomposition"]["dsc"] == pytest.approx(ref.decomposition_b.dsc, rel=1e-12)
    assert main(["check", str(pair["before"]), "--compare", str(pair["after"])]) == 0
    text = capsys.readouterr().out
    from calviz.present.comparisons import decomposition_text

    assert decomposition_text(shown["before.csv"]["decomposition"]) in text
    assert decomposition_text(shown["after.csv"]["decomposition"]) in text
    page = tmp_path / "r.html"
    assert main(["report", str(pair["before"]), "-o", str(page), "--compare", str(pair["after"]),
                 "--resampling", "analytic"]) == 0
    assert "<th>MCB</th><th>DSC</th>" in page.read_text(encoding="utf-8")
