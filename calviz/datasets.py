"""Embedded datasets: the papers' scenarios and real models trained locally — all offline.

Two kinds of dataset ship with calviz (``list_datasets()`` lists them, ``load_dataset(name)`` loads one
as a validated :class:`calviz.CalibrationData`):

* ``kind="scenario"``: the papers' simulation settings from :data:`calviz.synthetic.SCENARIOS`, generated
  on the fly for any ``n`` and ``seed`` (default ``n`` = :data:`SCENARIO_DEFAULT_N`).
* ``kind="model"``: held-out predictions of scikit-learn classifiers trained at first use on data that
  needs no download:

  - ``digits`` — the 8×8 handwritten digits bundled with scikit-learn (1 797 rows, K = 10);
  - ``breast-cancer`` — the Wisconsin breast-cancer data bundled with scikit-learn (569 rows, binary);
  - ``tabular`` — a 4-class ``make_classification`` problem generated locally (30 000 rows,
    20 features of which 8 informative and 6 redundant, 3 % label noise).  It exists so that the
    held-out set (12 000 rows) is large enough for the sample-size slider and for tests of power.

  Models: ``gnb`` (Gaussian naive Bayes — badly calibrated: its independence assumption makes it
  overconfident), ``logreg`` (multinomial logistic regression — usually close to calibrated) and ``rf``
  (a random forest — typically underconfident), plus recalibrated versions of ``gnb`` and ``rf``:
  ``-platt`` (sigmoid, one-vs-rest, via ``CalibratedClassifierCV``), ``-isotonic`` (isotonic, via
  ``CalibratedClassifierCV``) and ``-temperature`` (one temperature T > 0 fitted by maximum likelihood on
  the held-out calibration logits, softmax(logits / T); Guo et al. 2017).

  Each dataset is split once (stratified, fixed seed) into 40 % training, 20 % calibration (used only
  by the recalibration maps) and 40 % test; the predictions returned are those on the test split.
  They are cached as NPZ files in ``$CALVIZ_CACHE_DIR`` (default ``$XDG_CACHE_HOME/calviz`` or
  ``~/.cache/calviz``), keyed by the calviz and scikit-learn versions; when the cache directory is not
  writable the predictions are simply recomputed.

Dataset names are ``<family>-<model>[-<recalibration>]`` for models (e.g. ``digits-gnb-temperature``) and
``scenario-<name>`` for scenarios.  :data:`DEFAULT_DATASET` is what the dashboard opens on.
"""

from __future__ import annotations

import functools
import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from calviz._data import CalibrationData, InputError, as_calibration_data
from calviz._params import SEED, STR, Interval, NoneOr, validate_params
from calviz._recalibration import calibrated_classifier, fit_temperature, softmax
from calviz._results import ResultMixin

__all__ = [
    "DatasetInfo",
    "list_datasets",
    "dataset_names",
    "load_dataset",
    "dataset_info",
    "DEFAULT_DATASET",
    "SCENARIO_DEFAULT_N",
    "cache_dir",
    "fit_temperature",
]

#: The dataset the dashboard and ``calviz serve`` open on: an overconfident naive Bayes model on a
#: 4-class problem, 12 000 held-out predictions — T-Cal rejects, the ECE interval excludes 0.
DEFAULT_DATASET = "tabular-gnb"

#: Rows generated for a scenario when ``load_dataset`` is called without ``n``.
SCENARIO_DEFAULT_N = 10_000

_SPLIT_SEED = 0  # fixed: the cached predictions must not depend on the caller's seed
_TEST_FRACTION = 0.4  # of all rows; the remaining 60 % are split 2:1 into training and calibration
_CALIB_FRACTION_OF_REST = 1.0 / 3.0


@dataclass(frozen=True, repr=False)
class DatasetInfo(ResultMixin):
    """One embedded dataset.

    Attributes
    ----------
    name : str
        Pass it to :func:`load_dataset`.
    kind : {"scenario", "model"}
        A simulated scenario from a paper, or a trained model's held-out predictions.
    description : str
        One line.
    K : int
        Number of classes (2 for binary).
    n : int
        Rows loaded by default (the held-out test split for models).
    """

    name: str
    kind: Literal["scenario", "model"]
    description: str
    K: int
    n: int


# --------------------------------------------------------------------------------------------------
# real models
# --------------------------------------------------------------------------------------------------
_FAMILIES = {
    "digits": ("handwritten digits 8x8 (scikit-learn bundled)", 10, 1797),
    "breast-cancer": ("Wisconsin breast cancer, binary (scikit-learn bundled)", 2, 569),
    "tabular": ("4-class make_classification, 20 features, generated locally", 4, 30_000),
}
_MODELS = {
    "gnb": "Gaussian naive Bayes (overconfident)",
    "logreg": "logistic regression",
    "rf": "random forest (underconfident)",
}
_RECALIBRATIONS = {
    "platt": "Platt / sigmoid recalibration",
    "isotonic": "isotonic recalibration",
    "temperature": "temperature scaling",
}
_RECALIBRATED_MODELS = ("gnb", "rf")


def _model_names() -> list[tuple[str, str, str, str | None]]:
    out = []
    for family in _FAMILIES:
        for model in _MODELS:
            out.append((f"{family}-{model}", family, model, None))
            if model in _RECALIBRATED_MODELS:
                for recal in _RECALIBRATIONS:
                    out.append((f"{family}-{model}-{recal}", family, model, recal))
    return out


def _test_size(family: str) -> int:
    # train_test_split rounds the test part up: this mirrors _split exactly
    return math.ceil(_FAMILIES[family][2] * _TEST_FRACTION)


@functools.cache
def _load_family(family: str) -> tuple[np.ndarray, np.ndarray]:
    if family == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        X = X / 16.0
    elif family == "breast-cancer":
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
    elif family == "tabular":
        from sklearn.datasets import make_classification

        X, y = make_classification(
            n_samples=_FAMILIES["tabular"][2], n_features=20, n_informative=8, n_redundant=6,
            n_classes=4, n_clusters_per_class=2, class_sep=1.0, flip_y=0.03, random_state=_SPLIT_SEED,
        )
    else:  # pragma: no cover - guarded by the name table
        raise InputError(f"unknown dataset family {family!r}")
    return np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.int64)


@functools.cache
def _split(family: str):
    """Stratified 40/20/40 train / calibration / test split with a fixed seed."""
    from sklearn.model_selection import train_test_split

    X, y = _load_family(family)
    X_rest, X_test, y_rest, y_test = train_test_split(
        X, y, test_size=_TEST_FRACTION, stratify=y, random_state=_SPLIT_SEED
    )
    X_train, X_cal, y_train, y_cal = train_test_split(
        X_rest, y_rest, test_size=_CALIB_FRACTION_OF_REST, stratify=y_rest, random_state=_SPLIT_SEED
    )
    return X_train, y_train, X_cal, y_cal, X_test, y_test


@functools.cache
def _fitted_model(family: str, model: str):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X_train, y_train = _split(family)[:2]
    if model == "gnb":
        # digits has constant border pixels: with the default var_smoothing their near-zero variances
        # make log-likelihood gaps ~1e9 (probabilities exactly 0/1); 1e-2 keeps the model overconfident
        # but finite so that recalibration has something to work with
        est = GaussianNB(var_smoothing=1e-2 if family == "digits" else 1e-9)
    elif model == "logreg":
        est = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))
    elif model == "rf":
        # small forest: first load must stay fast; min_samples_leaf keeps leaves non-degenerate
        est = RandomForestClassifier(n_estimators=40, min_samples_leaf=2, random_state=_SPLIT_SEED, n_jobs=1)
    else:  # pragma: no cover
        raise InputError(f"unknown model {model!r}")
    return est.fit(X_train, y_train)


def _logits(est, X: np.ndarray) -> np.ndarray:
    """(n, K) logits whose softmax is ``est.predict_proba(X)``.  Naive Bayes exposes its joint
    log-likelihood (exact even where predict_proba rounds to 0/1); others use clipped log-probabilities."""
    if hasattr(est, "predict_joint_log_proba"):
        return est.predict_joint_log_proba(X)
    return np.log(np.clip(est.predict_proba(X), 1e-6, 1.0))


def _compute_model_predictions(family: str, model: str, recal: str | None) -> tuple[np.ndarray, np.ndarray]:
    """(y_test, probs_test): probs (n, K), rows on the simplex."""
    _, _, X_cal, y_cal, X_test, y_test = _split(family)
    est = _fitted_model(family, model)
    if recal is None:
        probs = est.predict_proba(X_test)
    elif recal in ("platt", "isotonic"):
        method = "sigmoid" if recal == "platt" else "isotonic"
        probs = calibrated_classifier(est, method).fit(X_cal, y_cal).predict_proba(X_test)
    elif recal == "temperature":
        t = fit_temperature(_logits(est, X_cal), y_cal)
        probs = softmax(_logits(est, X_test) / t)
    else:  # pragma: no cover
        raise InputError(f"unknown recalibration {recal!r}")
    probs = np.clip(np.asarray(probs, dtype=np.float64), 0.0, 1.0)
    probs /= probs.sum(axis=1, keepdims=True)  # exact simplex rows after clipping round-off
    return y_test.astype(np.int64), probs


# --------------------------------------------------------------------------------------------------
# cache
# --------------------------------------------------------------------------------------------------
def cache_dir() -> Path:
    """Where model predictions are cached.

    Returns
    -------
    pathlib.Path
        ``$CALVIZ_CACHE_DIR``, else ``$XDG_CACHE_HOME/calviz``, else ``~/.cache/calviz``.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> from calviz.datasets import cache_dir
    >>> with mock.patch.dict(os.environ, {"CALVIZ_CACHE_DIR": "/tmp/calviz-cache"}):
    ...     print(cache_dir().as_posix())
    /tmp/calviz-cache
    """
    env = os.environ.get("CALVIZ_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "calviz"


def _cache_path(name: str) -> Path:
    from calviz import __version__

    return cache_dir() / f"datasets-calviz{__version__}-sklearn{_sklearn_version()}" / f"{name}.npz"


@functools.cache
def _sklearn_version() -> str:
    """scikit-learn's version, read from its installed metadata: importing scikit-learn costs 1-2 CPU-s,
    which a dataset read from the cache (every server, kernel and command after the first) never needs."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("scikit-learn")
    except PackageNotFoundError:  # (not installed as a distribution: its module says)
        import sklearn

        return sklearn.__version__


def _read_cache(path: Path):
    try:
        with np.load(path, allow_pickle=False) as f:
            return f["y_true"], f["y_prob"]
    except (OSError, KeyError, ValueError, EOFError):  # missing, unreadable or truncated: recompute
        return None


def _write_cache(path: Path, y_true: np.ndarray, y_prob: np.ndarray) -> None:
    """Atomic write (temp file + rename) so parallel test workers never read half a file; silently
    skipped when the directory is not writable."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, y_true=y_true, y_prob=y_prob)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass


def _model_predictions(name: str, family: str, model: str, recal: str | None):
    path = _cache_path(name)
    cached = _read_cache(path)
    if cached is not None:
        return cached
    y_true, probs = _compute_model_predictions(family, model, recal)
    y_prob = probs[:, 1].copy() if probs.shape[1] == 2 else probs  # binary: store P(y = 1)
    _write_cache(path, y_true, y_prob)
    return y_true, y_prob


# --------------------------------------------------------------------------------------------------
# scenarios
# --------------------------------------------------------------------------------------------------
_SCENARIO_PREFIX = "scenario-"


def _scenarios() -> dict:
    try:
        from calviz._synthetic import SCENARIOS
    except ImportError:  # synthetic.py not available: model datasets still work
        return {}
    return dict(SCENARIOS)


def _scenario_arrays(result) -> tuple[np.ndarray, np.ndarray]:
    if hasattr(result, "y_true") and hasattr(result, "y_prob"):
        return result.y_true, result.y_prob
    y_true, y_prob = result[0], result[1]
    return y_true, y_prob


@functools.cache
def _scenario_meta(key: str) -> tuple[int, str]:
    """(K, one-line description) of a scenario, from a small sample (scenarios are cheap to draw)."""
    func = _scenarios()[key]
    sample = func(200, 0)
    _, y_prob = _scenario_arrays(sample)
    y_prob = np.asarray(y_prob)
    k = 2 if y_prob.ndim == 1 else int(y_prob.shape[1])
    doc = getattr(sample, "description", None) or (func.__doc__ or "")
    line = doc.strip().splitlines()[0].strip() if doc.strip() else ""
    return k, line or "paper scenario"


# --------------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------------
def dataset_names() -> list[str]:
    """The names of the embedded datasets, in the order of :func:`list_datasets`.

    Unlike :func:`list_datasets` it draws no sample of the scenarios (to learn their class counts), so
    it is cheap: a served dashboard lists the names for every new browser session.

    Returns
    -------
    list of str
        First the trained models, then the paper scenarios (``scenario-…``).

    Examples
    --------
    >>> from calviz.datasets import dataset_names, list_datasets
    >>> dataset_names() == [d.name for d in list_datasets()]
    True
    """
    return [name for name, *_ in _model_names()] + [_SCENARIO_PREFIX + key for key in _scenarios()]


def list_datasets() -> list[DatasetInfo]:
    """All embedded datasets: first the trained models, then the paper scenarios.

    Returns
    -------
    list of DatasetInfo
        Name, kind, description, classes and default rows of each.

    Examples
    --------
    >>> from calviz.datasets import list_datasets
    >>> [d.name for d in list_datasets() if d.name.startswith("digits-gnb")]
    ['digits-gnb', 'digits-gnb-platt', 'digits-gnb-isotonic', 'digits-gnb-temperature']
    """
    out = []
    for name, family, model, recal in _model_names():
        fam_doc, k, _ = _FAMILIES[family]
        desc = f"{_MODELS[model]} on {fam_doc}"
        if recal:
            desc += f", after {_RECALIBRATIONS[recal]}"
        out.append(DatasetInfo(name=name, kind="model", description=desc, K=k, n=_test_size(family)))
    for key in _scenarios():
        k, description = _scenario_meta(key)
        out.append(DatasetInfo(
            name=_SCENARIO_PREFIX + key, kind="scenario", description=description, K=k, n=SCENARIO_DEFAULT_N,
        ))
    return out


@validate_params({"name": STR})
def dataset_info(name: str) -> DatasetInfo:
    """The :class:`DatasetInfo` of one embedded dataset.

    Parameters
    ----------
    name : str
        A name from :func:`list_datasets`.

    Returns
    -------
    DatasetInfo
        Its description.

    Raises
    ------
    InputError
        For an unknown name (the message lists the names); a name that is not a str is refused with
        the uniform parameter message.

    Examples
    --------
    >>> from calviz.datasets import dataset_info
    >>> info = dataset_info("scenario-tcal_p0")
    >>> info.kind, info.K, info.description
    ('scenario', 2, 'calibrated binary model, uniform predictions (Lee et al. 2023, null P0)')
    """
    for info in list_datasets():
        if info.name == name:
            return info
    raise InputError(_unknown(name))


def _unknown(name: str) -> str:
    names = [info.name for info in list_datasets()]
    return f"unknown dataset {name!r}; choose one of: {', '.join(names)}"


@validate_params({"name": STR, "n": NoneOr(Interval(int, 2, None)), "seed": SEED})
def load_dataset(name: str = DEFAULT_DATASET, *, n: int | None = None, seed: int = 0) -> CalibrationData:
    """Load an embedded dataset as validated :class:`calviz.CalibrationData`.

    Model datasets are fixed held-out predictions (computed once, then read from the cache); ``n``
    draws a uniform subsample of that many rows (``seed`` chooses it) and may not exceed the held-out
    size.  Scenarios are generated with ``n`` rows (default ``SCENARIO_DEFAULT_N``) from ``seed``.  The
    same ``(name, n, seed)`` always gives the same data.

    Parameters
    ----------
    name : str, default "tabular-gnb"
        A name from :func:`list_datasets`.
    n : int, optional
        Rows (an int ≥ 2; for a model dataset at most its held-out size).
    seed : int, None or numpy.random.Generator, default 0
        Seed of the subsample or the scenario (an int ≥ 0, as everywhere in calviz).

    Returns
    -------
    CalibrationData
        The predictions and labels.

    Raises
    ------
    InputError
        For an unknown name (the message lists the names) or ``n`` above a model dataset's held-out
        size; an option of the wrong type or out of range is refused with the uniform parameter
        message.

    Examples
    --------
    >>> import calviz
    >>> from calviz.datasets import load_dataset
    >>> data = load_dataset("scenario-tcal_p0", n=1000, seed=1)
    >>> data.n, data.n_classes
    (1000, 2)
    >>> calviz.tcal(data).reject                    # a calibrated scenario
    False
    """
    if n is not None:
        n = int(n)  # a numpy integer too
    for model_name, family, model, recal in _model_names():
        if model_name == name:
            y_true, y_prob = _model_predictions(name, family, model, recal)
            data = as_calibration_data(y_true, y_prob)
            if n is not None:
                if n > data.n:
                    raise InputError(f"dataset {name!r} has {data.n} held-out rows; cannot load n={n}")
                data = data.subsample(n, seed=seed)
            return data
    if name.startswith(_SCENARIO_PREFIX):
        scenarios = _scenarios()
        key = name[len(_SCENARIO_PREFIX):]
        if key in scenarios:
            y_true, y_prob = _scenario_arrays(scenarios[key](SCENARIO_DEFAULT_N if n is None else n, seed))
            return as_calibration_data(y_true, y_prob)
    raise InputError(_unknown(name))
