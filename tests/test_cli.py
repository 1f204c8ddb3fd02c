"""The ``calviz`` command line: check (text / JSON / exit codes), report, datasets, serve."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calviz
from calviz._synthetic import SCENARIOS
from calviz.cli import main, websocket_origins
from calviz.datasets import DEFAULT_DATASET, load_dataset

REPO = Path(__file__).resolve().parents[1]


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_cli(*args, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m calviz ARGS`` in a fresh process (real exit status, real stderr)."""
    return subprocess.run([sys.executable, "-m", "calviz", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, env=_env(), timeout=timeout)


def write_multiclass_csv(path: Path, data) -> Path:
    frame = pd.DataFrame(data.probs, columns=[f"p_{k}" for k in range(data.n_classes)])
    frame.insert(0, "y_true", data.labels)
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def miscalibrated_csv(tmp_path_factory) -> Path:
    """Naive Bayes on the 4-class tabular problem: 12 000 rows, top-1 ECE ≈ 0.17 — T-Cal rejects."""
    return write_multiclass_csv(tmp_path_factory.mktemp("cli") / "nb.csv", load_dataset("tabular-gnb"))


@pytest.fixture(scope="module")
def calibrated_csv(tmp_path_factory) -> Path:
    """T-Cal's P0 (Z ~ U[0,1], Y ~ Ber(Z)): calibrated by construction, binary columns y_true, y_prob."""
    scenario = SCENARIOS["tcal_p0"](2000, 0)
    path = tmp_path_factory.mktemp("cli") / "p0.csv"
    pd.DataFrame({"y_true": scenario.y_true, "y_prob": scenario.y_prob}).to_csv(path, index=False)
    return path


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"calviz {calviz.__version__}"


def test_bare_calviz_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    err = capsys.readouterr().err
    assert "usage: calviz" in err and "serve" in err and "report" in err


def test_help_shows_defaults():
    text = build_parser_help("check")
    for default in ("(default: 15)", "(default: 0.05)", "(default: auto)", "(default: 500)", "(default: 0)"):
        assert default in text, default
    assert "--logits" in text and "CLASS_INDEX" not in text and "TOP_K" not in text


def build_parser_help(command: str) -> str:
    from calviz.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices[command].format_help()


def test_logits_flag_applies_a_softmax(tmp_path, capsys):
    rng = np.random.default_rng(3)
    logits = rng.normal(scale=4.0, size=(400, 3))
    frame = pd.DataFrame(logits, columns=["p_0", "p_1", "p_2"])
    frame.insert(0, "y_true", rng.integers(0, 3, 400))
    path = tmp_path / "logits.csv"
    frame.to_csv(path, index=False)
    # without the flag: refused, and the message names the flag that exists here
    assert main(["check", str(path), "--resampling", "analytic"]) == 2
    err = capsys.readouterr().err
    assert "must lie in [0, 1]" in err and "--logits" in err and "logits=True" not in err
    assert main(["check", str(path), "--logits", "--resampling", "analytic", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["summary"]["n"] == 400
    # binary logits: one column, a sigmoid
    binary = pd.DataFrame({"y_true": rng.integers(0, 2, 300), "y_prob": rng.normal(scale=3.0, size=300)})
    binary.to_csv(tmp_path / "binary.csv", index=False)
    assert main(["check", str(tmp_path / "binary.csv"), "--logits", "--resampling", "analytic"]) == 0
    assert "n = 300" in capsys.readouterr().out


def test_rows_not_summing_to_one_suggest_the_flag(tmp_path, capsys):
    frame = pd.DataFrame({"y_true": [0, 1, 1, 0], "p_0": [0.5, 0.2, 0.3, 0.6], "p_1": [0.6, 0.8, 0.7, 0.4]})
    frame.to_csv(tmp_path / "rows.csv", index=False)
    assert main(["check", str(tmp_path / "rows.csv")]) == 2
    err = capsys.readouterr().err
    assert "--renormalize" in err and "renormalize=True" not in err


def test_report_refuses_a_missing_output_directory_at_once(tmp_path):
    # exits before reading the input: the input does not even exist
    result = run_cli("report", tmp_path / "absent.csv", "-o", tmp_path / "missing_dir" / "r.html")
    assert result.returncode == 2
    assert "missing_dir" in result.stderr and "does not exist" in result.stderr
    assert "absent.csv" not in result.stderr


def test_cli_output_names_papers_not_internal_files(miscalibrated_csv, capsys):
    """What the command line prints (help, dataset list, check) never cites internal file names."""
    texts = [build_parser_help(c) for c in ("serve", "report", "check")]
    assert main(["datasets"]) == 0
    texts.append(capsys.readouterr().out)
    assert main(["check", str(miscalibrated_csv), "--resampling", "analytic"]) == 0
    texts.append(capsys.readouterr().out)
    for text in texts:
        assert not re.search(r"seed[ -]?00", text, flags=re.I) and "estimators.md" not in text
    assert "Błasiok et al. 2023" in texts[-1]  # the bounds cite the paper by its authors
    # ... without the lemma numbers and inequalities, which --json gives
    assert "Lemma" not in texts[-1] and "LP_ε" not in texts[-1]
    assert re.search(r"distance to calibration of these predictions: between \d\.\d{4} and \d\.\d{4}\n"
                     r"    lower bound from \S.*, upper bound from \S", texts[-1]), texts[-1]


def test_datasets_lists_the_embedded_data(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert DEFAULT_DATASET in out and "(default)" in out and "digits-gnb-temperature" in out


def test_check_json_on_miscalibrated_csv(miscalibrated_csv, capsys):
    code = main(["check", str(miscalibrated_csv), "--json", "--fail-on-reject", "--alpha", "0.05"])
    out = json.loads(capsys.readouterr().out)  # valid JSON (no NaN / Infinity tokens)
    assert out["errors"] == {}, out["errors"]
    assert out["decision"] == "reject" and out["reject"] is True
    assert 0.0 <= out["pvalue"] <= 0.05
    ece = out["ece"]
    assert ece["low"] <= ece["estimate"] <= ece["high"] and ece["low"] > 0
    assert ece["level"] == pytest.approx(0.95)
    assert isinstance(out["bounds"], dict) and out["bounds"]
    assert out["summary"]["n"] == 12_000 and out["summary"]["n_classes"] == 4
    assert out["options"]["alpha"] == 0.05
    assert code == 1  # --fail-on-reject and T-Cal rejects


def test_check_calibrated_csv_does_not_fail(calibrated_csv, capsys):
    code = main(["check", str(calibrated_csv), "--json", "--fail-on-reject", "--alpha", "0.01"])
    out = json.loads(capsys.readouterr().out)
    assert out["decision"] == "not rejected", out["tcal"]
    assert out["pvalue"] > 0.01
    assert code == 0


def test_check_text_output(miscalibrated_csv, capsys):
    assert main(["check", str(miscalibrated_csv), "--n-bins", "10"]) == 0  # no --fail-on-reject: 0
    out = capsys.readouterr().out
    assert "REJECTS calibration" in out and "ECE" in out and "10 bins" in out
    assert "distance to calibration" in out
    measures = next(line for line in out.splitlines() if line.strip().startswith("measures:"))
    for name in ("smCE", r"dCE_lower \(LP\)", "SintCE", r"kCE \(Laplace\)"):  # display names and values
        assert re.search(rf"{name} \d+\.\d{{4}}", measures), measures


@pytest.mark.parametrize("flags, refused", [
    (["--target", "classwise", "--class-index", "7"], "--class-index must be an int in [0, 3]"),
    (["--target", "topk", "--top-k", "10"], "--top-k must be an int in [1, 4] (the number of classes)"),
])
@pytest.mark.parametrize("command", ["check", "report"])
def test_a_class_or_k_the_data_lack_is_refused_naming_the_flag(miscalibrated_csv, tmp_path, command, flags,
                                                             refused, capsys):
    """The 4-class file has no class 7 and no top-10: refused once the file is read, naming the flag (they
    were clipped to class 3 and k = 4, and the output showed class 3's numbers under class_index 7)."""
    output = ["-o", str(tmp_path / "r.html")] if command == "report" else []
    assert main([command, str(miscalibrated_csv), *flags, *output]) == 2
    assert refused in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()
    refused_in_python = r"'class_index' parameter of analyze must be an int in \[0, 3\]"
    with pytest.raises(calviz.InputError, match=refused_in_python):
        calviz.analyze(miscalibrated_csv, target="classwise", class_index=4, resampled=False)


def test_check_text_names_the_class_and_every_other_target(miscalibrated_csv, capsys):
    """A classwise check names its class; under topk, each line analysed through another target says which
    (T-Cal tests the full vector, the distance measures the top-1 confidence)."""
    assert main(["check", str(miscalibrated_csv), "--target", "classwise", "--class-index", "2"]) == 0
    assert "target = classwise (class 2)" in capsys.readouterr().out
    assert main(["check", str(miscalibrated_csv), "--target", "topk", "--top-k", "2"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert "target = topk" in lines["data"]
    assert lines["T-Cal"].endswith("[full target]") and lines["distance"].endswith("[top1 target]")
    assert "target]" not in lines["ECE"]


@pytest.mark.parametrize("flags, refused", [
    (["--recalibrate", "platt", "--calibration-size", "1.5"], "--calibration-size must be a float in (0, 1)"),
    (["--group-by", "y_true", "--min-group-size", "-1"], "--min-group-size must be an int in [2, inf)"),
])
def test_comparison_flags_are_checked_before_the_analysis(flags, refused, monkeypatch, capsys):
    """They were checked by recalibrate / calibration_by_group after the whole analysis, naming Python
    parameters."""
    import calviz.cli as cli

    monkeypatch.setattr(cli, "load_input", lambda *a, **k: pytest.fail("the file was read"))
    assert main(["check", "dataset:breast-cancer-gnb", *flags]) == 2
    assert refused in capsys.readouterr().err


def test_check_column_options(tmp_path, capsys):
    rng = np.random.default_rng(1)
    p = rng.uniform(size=500)
    frame = pd.DataFrame({"label": (rng.uniform(size=500) < p).astype(int), "score": p})
    path = tmp_path / "renamed.csv"
    frame.to_csv(path, index=False)
    assert main(["check", str(path), "--json", "--y-true", "label", "--y-prob", "score"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["n"] == 500


def test_check_embedded_dataset(capsys):
    assert main(["check", "dataset:breast-cancer-logreg", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["n"] == 228


def test_check_text_names_a_test_it_could_not_compute_like_the_others(capsys):
    """digits-gnb's 719 top-1 confidences are too concentrated for Hosmer–Lemeshow's groups: the line names
    the test as the others do, not by its identifier."""
    assert main(["check", "dataset:digits-gnb", "--resampling", "analytic"]) == 0
    line = next(s for s in capsys.readouterr().out.splitlines() if "not computed" in s)
    assert line.strip().startswith("Hosmer–Lemeshow") and "hosmer_lemeshow" not in line, line


@pytest.mark.parametrize(
    "content, needle",
    [
        ("y_true,y_prob\n0,0.2\n1,1.5\n0,0.3\n", "row 1"),      # probability outside [0, 1], row named
        ("y_true,y_prob\n0,0.2\n1,nan\n0,0.3\n", "row 1"),      # NaN
        ("a,b\n1,2\n", "columns"),                              # columns missing
    ],
)
def test_check_bad_file_exits_2_with_one_line(tmp_path, content, needle, capsys):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    assert main(["check", str(path), "--json"]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("calviz check: error:"), err
    assert needle in lines[0] and "bad.csv" in lines[0]
    assert out == ""


def test_bad_file_in_a_real_process_has_no_traceback(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("y_true,y_prob\n0,0.2\n1,1.5\n0,0.3\n")
    proc = run_cli("check", path, "--json", "--fail-on-reject")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "row 1" in proc.stderr


def test_check_missing_file_exits_2(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nope.csv")]) == 2
    err = capsys.readouterr().err
    assert "no such file" in err and err.count("\n") == 1


def test_report_writes_self_contained_file(miscalibrated_csv, tmp_path, capsys):
    out = tmp_path / "report.html"
    assert main(["report", str(miscalibrated_csv), "-o", str(out), "--n-bins", "10",
                 "--n-resamples", "50"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "<script src=" not in text
    for name in ("reliability", "tcal", "interval", "distance"):
        assert f'"calviz-{name}"' in text
    assert "nb.csv" in text and "bins</th><td>10" in text
    assert str(miscalibrated_csv.parent) not in text  # only the file's base name
    assert str(out) in capsys.readouterr().out


def test_serve_refuses_bad_arguments_before_starting(tmp_path, capsys):
    assert main(["serve", "--no-show", "--dataset", "nope"]) == 2
    assert "unknown dataset 'nope'" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    bad.write_text("y_true,y_prob\n0,0.5\n2,0.5\n")
    assert main(["serve", "--no-show", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("calviz serve: error:") and "row 1" in err


def test_serve_data_root_only_on_loopback(tmp_path, capsys):
    """The Dask box reads files on the server: its data root is refused on a non-loopback address."""
    assert main(["serve", "--no-show", "--address", "0.0.0.0", "--data-root", str(tmp_path)]) == 2
    assert "loopback" in capsys.readouterr().err
    assert main(["serve", "--no-show", "--data-root", str(tmp_path / "missing")]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_serve_parquet_directory_refuses_bad_partition_before_starting(tmp_path, capsys):
    """`calviz serve DIR` validates every partition on Dask before the server starts."""
    import numpy as np
    import pandas as pd

    assert main(["serve", "--no-show", "--scheduler", "local"]) == 2
    assert "--scheduler needs FILE" in capsys.readouterr().err
    for i, p in enumerate(([0.2, 0.9, 0.4], [0.5, np.nan])):
        pd.DataFrame({"y_true": [0, 1, 1][: len(p)], "y_prob": p}).to_parquet(tmp_path / f"part{i}.parquet")
    assert main(["serve", "--no-show", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("calviz serve: error:") and "row 4" in err and "partition" in err, err


def test_session_factory_builds_independent_apps():
    from calviz.cli import session_factory

    new_session = session_factory(None, "breast-cancer-logreg")
    first, second = new_session(), new_session()
    assert first is not second and first.app is not second.app
    assert first.app.controls.dataset == second.app.controls.dataset == "breast-cancer-logreg"
    data = load_dataset("digits-logreg")
    page = session_factory(data)()
    assert page.app.data.n == data.n and page.app.data.n_classes == 10


def test_websocket_origins_stay_local():
    assert websocket_origins("127.0.0.1", 5006) == ["localhost:5006", "127.0.0.1:5006"]
    assert "10.0.0.5:80" in websocket_origins("10.0.0.5", 80)


@pytest.fixture(scope="module")
def served_url(tmp_path_factory):
    """``calviz serve --no-show --port 0`` in a subprocess; yields the URL it prints, kills it after."""
    env = _env()  # (the run's dataset cache: conftest's dataset_cache)
    proc = subprocess.Popen([sys.executable, "-m", "calviz", "serve", "--no-show", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    try:
        try:
            first = lines.get(timeout=300)
        except queue.Empty:
            pytest.fail("calviz serve printed no URL")
        assert first.startswith("calviz dashboard at http://127.0.0.1:"), first
        yield first.split()[3]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_serve_answers_http_200(served_url):
    with urllib.request.urlopen(served_url, timeout=300) as response:
        assert response.status == 200
        body = response.read().decode("utf-8", "replace")
    assert "bokeh" in body.lower() and "calviz" in body


@pytest.mark.browser
def test_serve_screenshot(served_url, chromium_browser):
    """The served app at 1280×800 in headless Chromium, with no console errors.  The screenshot goes to
    artifacts/screenshot.png; with CALVIZ_UPDATE_SCREENSHOT=1 (or when it is missing) also to the
    README's assets/screenshot.png."""
    page = chromium_browser.new_page(viewport={"width": 1280, "height": 800})
    errors = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(served_url, timeout=300_000)
        page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0", timeout=300_000)
        # the four views are drawn (reliability diagram + histogram + ... : at least one canvas each)
        page.locator("canvas").nth(3).wait_for(state="attached", timeout=300_000)
        page.wait_for_load_state("networkidle", timeout=300_000)
        # let the background results (bootstrap interval, smooth band, distance family and witness) arrive:
        # the status line ("last update …") is written once the first views are drawn and their jobs
        # queued; while any job runs, the status line lists it after "computing: " and the views say
        # "computing…", and the page says "preparing" until the views arrive (events, not a fixed delay)
        page.wait_for_function("() => { for (const d of Bokeh.documents) for (const m of d.all_models)"
                               " if (typeof m.text === 'string' && m.text.includes('last update'))"
                               " return true; return false; }", timeout=300_000)
        settled = ("() => { for (const d of Bokeh.documents) for (const m of d.all_models)"
                   " if (typeof m.text === 'string' && m.visible !== false && (m.text.includes('computing')"
                   " || m.text.startsWith('preparing'))) return false;"
                   " return true; }")
        page.wait_for_function(settled, timeout=300_000)
        from conftest import ARTIFACTS

        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "screenshot.png"
        page.screenshot(path=str(shot))
    finally:
        page.close()
    assert errors == [], f"console errors: {errors}"
    assert shot.stat().st_size > 20_000
    target = REPO / "assets" / "screenshot.png"
    if os.environ.get("CALVIZ_UPDATE_SCREENSHOT") == "1" or not target.exists():
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(shot.read_bytes())



def test_check_parquet_directory_on_dask_matches_in_memory(tmp_path, capsys, local_cluster):
    """`calviz check DIR --scheduler ADDRESS` analyses a Parquet directory out of core and gives the
    in-memory T-Cal decision and ECE interval.  (On the run's shared cluster: ``--scheduler local`` would
    start a cluster of its own in this process, kept until the process ends; the local one is started by
    the command in test_dask_dashboard's bad-partition test.)"""
    import json

    import numpy as np
    import pandas as pd

    from calviz.cli import main

    rng = np.random.default_rng(5)
    parts = []
    for i in range(3):
        p = rng.uniform(size=3000)
        y = (rng.uniform(size=3000) < p**1.5).astype("int64")
        parts.append(pd.DataFrame({"y_true": y, "y_prob": p}))
        parts[-1].to_parquet(tmp_path / f"part{i}.parquet")
    from calviz.dask import _app

    try:
        assert main(["check", str(tmp_path), "--scheduler", local_cluster.scheduler_address, "--json"]) == 0
    finally:  # (the command's client would outlive the cluster, reconnecting to it at the run's end)
        client = _app._CLIENTS.pop(local_cluster.scheduler_address, None)
        if client is not None:
            client.close()
    distributed = json.loads(capsys.readouterr().out)
    whole = pd.concat(parts, ignore_index=True)
    csv = tmp_path / "all.csv"
    whole.to_csv(csv, index=False)
    assert main(["check", str(csv), "--json"]) == 0
    in_memory = json.loads(capsys.readouterr().out)
    assert distributed["summary"]["n"] == 9000
    assert distributed["decision"] == in_memory["decision"] == "reject"
    for key in ("estimate", "low", "high"):
        assert np.isclose(distributed["ece"][key], in_memory["ece"][key], rtol=1e-12, atol=0)


def test_every_way_of_exporting_a_report_gives_it_the_same_default_name(miscalibrated_csv, tmp_path,
                                                                        monkeypatch):
    import inspect

    from calviz.cli import build_parser
    from calviz.present.report import DEFAULT_REPORT_NAME, report

    assert inspect.signature(report).parameters["path"].default == DEFAULT_REPORT_NAME
    args = build_parser().parse_args(["report", "x.csv"])
    assert args.output == DEFAULT_REPORT_NAME
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(miscalibrated_csv), "--n-bins", "10", "--resampling", "analytic"]) == 0
    assert (tmp_path / DEFAULT_REPORT_NAME).stat().st_size > 10_000  # (the app's button: test_dashboard)


@pytest.mark.parametrize("flags, refused", [
    (["--class-index", "2"], "--class-index applies to --target classwise only; got --target auto"),
    (["--target", "top1", "--top-k", "3"], "--top-k applies to --target topk only; got --target top1"),
])
def test_a_flag_of_another_target_is_refused(miscalibrated_csv, flags, refused, capsys):
    """--class-index without --target classwise was silently ignored (the output was top-1's)."""
    assert main(["check", str(miscalibrated_csv), *flags]) == 2
    assert refused in capsys.readouterr().err


def test_readme_shows_what_calviz_check_prints(tmp_path, capsys):
    """README's `calviz check preds.csv` block is the command's output on the default dataset as a CSV
    (it went stale when the distance lines changed)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("$ calviz check preds.csv ", 1)[1].split("\n$ ", 1)[0].splitlines()[1:]
    data = load_dataset(DEFAULT_DATASET)
    table = {"y_true": data.labels, **{f"p_{k}": data.probs[:, k] for k in range(data.n_classes)}}
    pd.DataFrame(table).to_csv(tmp_path / "preds.csv", index=False)  # (shortest round-trip floats)
    assert main(["check", str(tmp_path / "preds.csv")]) == 0
    printed = capsys.readouterr().out.replace(str(tmp_path / "preds.csv"), "preds.csv").splitlines()
    assert printed == block


def test_check_of_a_parquet_file_imports_neither_pandas_nor_scipy_stats(tmp_path):
    """Start-up is part of every ``calviz check``: reading Parquet takes Arrow's buffers without pandas,
    and the classical tests' p-values come from scipy.special (each import costs about half a second)."""
    from calviz._synthetic import dirichlet_temperature
    from calviz.io import write_predictions

    data = dirichlet_temperature(3000, seed=4, n_classes=4, beta=1.5)
    path = tmp_path / "p.parquet"
    write_predictions(path, data.y_true, np.asarray(data.y_prob))
    code = ("import io, sys, contextlib; from calviz.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()): main(['check', {str(path)!r}])\n"
            "print(sorted(m for m in ('pandas', 'scipy.stats') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
