"""Validated, immutable calibration data and its views.

Every public estimator validates its input exactly once, here, and then hands contiguous float64 /
int64 arrays to the jitted kernels.  Validation errors are :class:`InputError` (a ``ValueError``)
whose message names the offending row or column and the rule broken.

Input conventions (scikit-learn order, ``y_true`` first):

* binary: ``y_prob`` of shape (n,) is P(y = 1); ``y_true`` in {0, 1}.
* multiclass: ``y_prob`` of shape (n, K), rows on the simplex (tolerance 1e-6); ``y_true`` integer class
  ids 0..K-1 or one-hot (n, K).
* confidence form: ``(correct, confidence)`` is simply the binary form with y = correct, p = confidence.
* logits: :func:`from_logits`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace

import numpy as np

from calviz._errors import InputError
from calviz._kernels.validation import (
    all_in_unit,
    int_labels_in_range,
    labels_to_int64,
    max_row_sum_deviation,
    on_simplex,
    on_simplex_top1,
)
from calviz._params import (
    BOOLEAN,
    MAX_CLASSES,
    NON_NEGATIVE_INT,
    SEED,
    UNIT_OPEN,
    Instance,
    Interval,
    NoneOr,
    as_generator,
    check_int_in,
    check_n_classes,
    check_param,
    positional_deprecated,
    validate_params,
)
from calviz.targets import SCALAR_TARGETS, resolve_once

__all__ = [
    "InputError",
    "CalibrationData",
    "as_calibration_data",
    "validate_once",
    "binary_view",
    "from_logits",
    "message_for",
    "SIMPLEX_TOLERANCE",
    "check_alpha",
]

#: Row sums of a multiclass ``y_prob`` may deviate from 1 by this much (float32 storage round-off).
SIMPLEX_TOLERANCE = 1e-6
#: the deviation refused: the tolerance plus the round-off of adding up a row (a row written as decimals
#: summing to exactly 1 + 1e-6 adds up to 1.0000010000000001 in binary floating point)
ROW_SUM_LIMIT = SIMPLEX_TOLERANCE + 1e-12


def _first_bad(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask.reshape(mask.shape[0], -1).any(axis=1))[0])


def _as_array(values, name: str) -> np.ndarray:
    """np.asarray that turns every failure (ragged nesting, exotic objects) into an InputError."""
    if isinstance(values, np.ndarray):
        return values
    try:
        return np.asarray(values)
    except Exception as exc:  # ragged lists, objects whose __array__ fails, ...
        raise InputError(
            f"{name} could not be read as a numeric array ({type(exc).__name__}: {exc})"
        ) from None


#: The fixes an error message suggests, as API keywords ("pass renormalize=True"); :func:`message_for`
#: names the same fix where the user is: (verb, what) for a command-line flag or a sidebar control.
FIXES = {
    "renormalize=True": {"cli": ("add", "--renormalize"),
                         "app": ("tick", "\u201crescale rows to sum to 1\u201d in the sidebar")},
    "logits=True": {"cli": ("add", "--logits"),
                    "app": ("tick", "\u201cscores are logits\u201d in the sidebar")},
    "target='topk'": {"cli": ("use", "--target topk"), "app": ("choose", "the calibration target topk")},
    "target='classwise'": {"cli": ("use", "--target classwise"),
                           "app": ("choose", "the calibration target classwise")},
}
#: appended to "probabilities must lie in [0, 1]" when the row has a negative value (or is a binary
#: probability): the input may be scores rather than probabilities
LOGITS_HINT = " If these are logits (unnormalised scores), pass logits=True to apply a softmax."
#: appended instead when the row's values are all non-negative: probabilities that do not add up to 1
RESCALE_HINT = " (its row sums to {total!r}). Pass renormalize=True to rescale rows."


def message_for(message: str, place: str) -> str:
    """``message`` with each suggested fix named as it exists in ``place``: ``"cli"`` (command-line
    flags: "Pass renormalize=True to …" → "Add --renormalize to …") or ``"app"`` (sidebar controls);
    ``"api"`` leaves the keyword arguments as they are."""
    for keyword, where in FIXES.items():
        if place not in where:
            continue
        verb, what = where[place]
        for said in ("pass", "use"):
            message = message.replace(f"{said.capitalize()} {keyword}", f"{verb.capitalize()} {what}")
            message = message.replace(f"{said} {keyword}", f"{verb} {what}")
        message = message.replace(keyword, what)
    return message


#: Longest cell shown in an error message (a 5 MB cell must not be echoed whole).
MAX_CELL_CHARS = 40


def cell_repr(value) -> str:
    """repr of a cell for an error message, cut to ``MAX_CELL_CHARS`` characters."""
    text = repr(value)
    return text if len(text) <= MAX_CELL_CHARS else f"{text[:MAX_CELL_CHARS]}… ({len(text):,} characters)"


def strings_refused(name: str, example) -> InputError:
    """The one message for text where numbers are expected — string arrays, object arrays and pandas or
    Parquet string columns holding numeric text alike (``"0.5"`` is not the number 0.5)."""
    if isinstance(example, np.generic):
        example = example.item()
    return InputError(f"{name} must be real numbers; got strings (e.g. {cell_repr(example)})")


def check_unique_columns(columns) -> None:
    """A file or frame naming the same column twice is refused (which one was meant is unknown)."""
    seen = set()
    for c in columns:
        if c in seen:
            raise InputError(f"duplicate column name {cell_repr(c)}: each column must be named once")
        seen.add(c)


def _as_float_array(values, name: str, *, keep_float32: bool = False) -> np.ndarray:
    """A contiguous float64 array (no copy when the input already is one); with ``keep_float32`` a
    float32 array of two or more dimensions stays float32 (contiguous; no copy when it already is).

    Accepts bool, integer and floating dtypes, and object arrays of numbers; rejects strings (also
    numeric text such as ``"0.5"``, in string and object arrays alike), complex numbers (casting would
    silently drop the imaginary part), dates and anything else non-numeric."""
    arr = _as_array(values, name)
    kind = arr.dtype.kind
    if kind == "O":
        text = next((v for v in arr.ravel() if isinstance(v, (str, bytes))), None)
        if text is not None:
            raise strings_refused(name, text)
        try:
            arr = arr.astype(np.float64)
        except Exception:
            bad = next((v for v in arr.ravel() if not _is_real_number(v)), None)
            raise InputError(
                f"{name} must be numeric; it contains {cell_repr(bad)} ({type(bad).__name__})"
            ) from None
    elif kind in "US":
        raise strings_refused(name, arr.ravel()[0] if arr.size else "")
    elif kind not in "biuf":
        what = {"c": "complex numbers", "M": "dates", "m": "time deltas"}
        raise InputError(
            f"{name} must be real numbers; got {what.get(kind, 'values')} of dtype {arr.dtype} "
            f"(e.g. {cell_repr(arr.ravel()[:1].tolist())})"
        )
    if arr.ndim == 0:  # ascontiguousarray would silently promote a scalar to shape (1,)
        return arr.astype(np.float64)
    if keep_float32 and arr.dtype == np.float32 and arr.ndim >= 2:
        return np.ascontiguousarray(arr)
    return np.ascontiguousarray(arr, dtype=np.float64)


def _is_real_number(v) -> bool:
    try:
        float(v)
    except Exception:
        return False
    return not isinstance(v, (str, bytes, complex))


def _readonly_view(arr: np.ndarray) -> np.ndarray:
    """A read-only view: CalibrationData cannot be changed through it, and the caller's own array keeps
    its flags (validation never copies large inputs and never makes the user's array read-only)."""
    view = arr.view()
    view.flags.writeable = False
    return view


def _within_unit(arr: np.ndarray) -> bool:
    """Fast path: one branch-free jitted pass checks finiteness and the [0, 1] range together."""
    return bool(all_in_unit(arr.reshape(-1)))


def _check_finite_unit(arr: np.ndarray, name: str) -> None:
    if _within_unit(arr):
        return
    bad = ~np.isfinite(arr)
    if bad.any():
        i = _first_bad(bad)
        col = "" if arr.ndim == 1 else f", column {int(np.flatnonzero(bad[i])[0])}"
        raise InputError(f"{name} has a non-finite value (NaN or inf) at row {i}{col}")
    raise _out_of_range(arr, (arr < 0.0) | (arr > 1.0), name)


def _out_of_range(arr: np.ndarray, bad: np.ndarray, name: str = "y_prob") -> InputError:
    """The one refusal of a probability outside [0, 1] (``bad`` marks the values refused), with the fix
    that fits the first bad row: a multiclass row without a negative value (say 0.6, 0.5, 0.05: it sums to
    1.15) holds probabilities that do not add up to 1, to be rescaled; a negative value, or a binary
    probability above 1, looks like logits.

    The message depends on that row alone, and names it once (readers of blocks and partitions renumber
    the first "row N"): a file gets the same message read whole (:func:`as_calibration_data`), in blocks
    (``calviz.io``) or in Dask partitions (``calviz.dask``), each of which validates its rows here."""
    i = _first_bad(bad)
    if arr.ndim == 1:
        return InputError(f"{name} must lie in [0, 1]; row {i} has {float(arr[i])!r}.{LOGITS_HINT}")
    j = int(np.flatnonzero(bad[i])[0])
    row = arr[i]
    hint = RESCALE_HINT.format(total=float(row.sum())) if bool(row.min() >= 0.0) else f".{LOGITS_HINT}"
    return InputError(f"{name} must lie in [0, 1]; row {i}, column {j} has {float(arr[i, j])!r}{hint}")


def _labels_from(arr: np.ndarray, n: int, n_classes: int) -> np.ndarray:
    if arr.ndim == 2:
        if arr.shape != (n, n_classes):
            raise InputError(
                f"one-hot y_true has shape {arr.shape}, expected ({n}, {n_classes}) to match y_prob"
            )
        onehot = _as_float_array(arr, "y_true")
        bad = ~((onehot == 0.0) | (onehot == 1.0))
        bad_rows = bad.any(axis=1) | (onehot.sum(axis=1) != 1.0)
        if bad_rows.any():
            i = int(np.flatnonzero(bad_rows)[0])
            raise InputError(f"one-hot y_true row {i} is not a one-hot vector: {onehot[i].tolist()}")
        return np.ascontiguousarray(onehot.argmax(axis=1), dtype=np.int64)
    if arr.ndim != 1:
        raise InputError(f"y_true must be 1-D labels or a 2-D one-hot array; got shape {arr.shape}")
    if arr.shape[0] != n:
        raise InputError(f"y_true has {arr.shape[0]} rows but y_prob has {n}; lengths must match")
    allowed = "{0, 1}" if n_classes == 2 else f"integers 0..{n_classes - 1}"
    # (binary labels other than 0/1 are a class's name: scikit-learn's pos_label says which is positive)
    other = " (other labels, e.g. −1/1: name the positive one with pos_label)" if n_classes == 2 else ""
    kind = arr.dtype.kind
    if kind == "b":  # always a valid class id (K >= 2)
        return arr.astype(np.int64)
    if kind in "iu":
        # one jitted pass, no temporaries; int64 input is not even copied
        if int_labels_in_range(np.ascontiguousarray(arr), n_classes):
            return np.ascontiguousarray(arr, dtype=np.int64)
        bad = (arr < 0) | (arr > n_classes - 1)
        i = _first_bad(bad)
        raise InputError(f"y_true must be {allowed}; row {i} has {int(arr[i])}{other}")
    labels = _as_float_array(arr, "y_true")
    as_int, ok = labels_to_int64(labels, n_classes)  # one pass: convert and check together
    if ok:
        return as_int
    bad = ~np.isfinite(labels)
    if bad.any():
        raise InputError(f"y_true has a non-finite value (NaN or inf) at row {_first_bad(bad)}")
    bad = (labels != np.floor(labels)) | (labels < 0) | (labels > n_classes - 1)
    i = _first_bad(bad)
    given = arr[i]  # (an integer as given: a float would round one beyond 2**53)
    shown = int(given) if isinstance(given, (int, np.integer)) and not isinstance(given, bool) else (
        f"{float(labels[i]):g}")
    raise InputError(f"y_true must be {allowed}; row {i} has {shown}{other}")


def _is_text(arr: np.ndarray) -> bool:
    return arr.dtype.kind in "US" or (
        arr.dtype.kind == "O" and any(isinstance(v, (str, bytes)) for v in arr.ravel()))


def _shown(values) -> str:
    """Labels as the user gave them, for a message: {'no', 'yes'}."""
    values = [v.item() if isinstance(v, np.generic) else v for v in values]
    text = ", ".join(cell_repr(v) for v in values[:6]) + (", …" if len(values) > 6 else "")
    return "{" + text + "}"


def encode_labels(labels: np.ndarray, n_classes: int, pos_label=None, *,
                  binary: bool = True) -> np.ndarray | None:
    """Class names → class ids, scikit-learn's convention, or None when ``labels`` are ids already.

    Binary predictions P(y = 1): ``pos_label`` names the class whose probability ``y_prob`` is (y = 1 for
    it, 0 for the other); text labels need ``pos_label``, and so do labels other than 0/1 (e.g. {−1, 1}).
    Multiclass (n, K) predictions: text labels are mapped to the columns in sorted order (a fitted
    classifier's ``classes_``), so all K classes must occur."""
    text = _is_text(labels) if labels.ndim == 1 else False
    if pos_label is None and not text:
        return None
    if labels.ndim != 1:
        raise InputError("pos_label and class names need 1-D y_true (one label per row)")
    distinct = np.unique(labels.astype(str) if text and labels.dtype.kind == "O" else labels)
    if binary:
        if pos_label is None:
            raise InputError(f"y_true holds strings, the labels {_shown(distinct)}; pass pos_label= to "
                             "calviz.as_calibration_data or calviz.io.read_predictions (--pos-label on the "
                             "command line) to say which one y_prob is the probability of, and give its "
                             "result to the estimator (numeric 0/1 labels need none)")
        if distinct.shape[0] > 2:
            raise InputError(f"y_true holds {distinct.shape[0]} labels {_shown(distinct)} but y_prob is "
                             "binary (P(y = pos_label)): at most two labels are possible")
        if distinct.shape[0] == 2 and not (distinct == pos_label).any():
            raise InputError(f"pos_label={pos_label!r} is not one of the labels {_shown(distinct)} of y_true")
        return np.ascontiguousarray(labels == pos_label, dtype=np.int64)
    if pos_label is not None:
        raise InputError("pos_label is for binary predictions (1-D y_prob); multiclass labels are mapped "
                         "to the columns of y_prob in sorted order")
    if distinct.shape[0] != n_classes:
        raise InputError(f"y_true holds {distinct.shape[0]} class names {_shown(distinct)} but y_prob has "
                         f"{n_classes} columns: names are mapped to the columns in sorted order, so every "
                         "class must occur (or pass class ids 0..K−1)")
    keys = labels.astype(str) if labels.dtype.kind == "O" else labels
    return np.ascontiguousarray(np.searchsorted(distinct, keys), dtype=np.int64)


class _WidenedOnRead:
    """The ``probs`` field of :class:`CalibrationData`: an (n, K) float32 matrix is held as given and
    replaced by its float64 copy the first time ``probs`` is read; anything else is returned as stored.

    Why: :func:`as_calibration_data` checks a float32 matrix and forms its top-1 view (the default target
    of multiclass data) in one read of the float32 bytes, so the data of that target never pay for the
    float64 copy (8·K bytes a row of new pages: at 10⁷ × 10, 800 MB and most of the time of building the
    data).  Every other view reads ``probs`` and gets the float64 matrix as before: float32 → float64 is
    exact, so every number is the one of the widened input.  The copy is made once, under a lock (views
    are formed from several threads)."""

    _lock = threading.Lock()

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, data, owner=None):
        if data is None:  # (no class-level value: the dataclass field has no default)
            raise AttributeError(self.name)
        stored = data.__dict__[self.name]
        if _is_narrow_matrix(stored):
            with self._lock:
                stored = data.__dict__[self.name]
                if _is_narrow_matrix(stored):
                    stored = _readonly_view(stored.astype(np.float64))
                    data.__dict__[self.name] = stored
        return stored

    def __set__(self, data, value) -> None:
        data.__dict__[self.name] = value


def _is_narrow_matrix(probs) -> bool:
    """Whether ``probs`` is an (n, K) float32 matrix (held as given by :class:`_WidenedOnRead`)."""
    return isinstance(probs, np.ndarray) and probs.dtype == np.float32 and probs.ndim == 2


#: how many views of one kind a :class:`CalibrationData` keeps (16 bytes a row each, 16·k for top-k): one
#: class's one-vs-rest view, one top-k view.  Going through the classes (the dashboard's class slider, a
#: server's sessions) kept every class's pair before, K·n·16 bytes beside the n·K·8 of the matrix (1.6 GB
#: at 10⁷ × 10, in the server and again in each worker process); a class shown again after another is
#: formed again, one pass over its column.
_VIEWS_KEPT = {"classwise": 1, "topk": 1}
_VIEWS_LOCK = threading.Lock()


@dataclass(frozen=True, repr=False)
class CalibrationData:
    """Validated predictions and labels, the input every calviz function accepts.

    Build it with :func:`as_calibration_data` (or :func:`calviz.io.read_predictions`,
    :func:`calviz.datasets.load_dataset`); every estimator takes it in place of ``(y_true, y_prob)`` and
    does not validate it again.  Instances are immutable (the arrays are read-only) so views are cached.

    Attributes
    ----------
    probs : ndarray of shape (n,) or (n, K)
        P(y = 1) for binary data; one probability row per sample for K classes (float64: an (n, K)
        float32 matrix given to :func:`as_calibration_data` is held as given and widened, exactly, the
        first time ``probs`` is read — the top-1 view never reads it).
    labels : ndarray of shape (n,)
        int64 class ids (0/1 for binary data).
    n, n_classes, is_binary : int, int, bool
        Sample size, number of classes K (2 for binary data) and whether ``probs`` is 1-D.
    confidence_form : bool
        Whether the data are the top-1 reduction of a classifier, (confidence, correct) pairs — read from
        ``confidence`` + ``correct`` columns by :func:`calviz.io.read_predictions`.  They are analysed as
        binary data (y = correct) and :meth:`top1` returns them as they are: the confidence may be below
        0.5, and the top-1 prediction is the one whose correctness is given.

    weights : ndarray of shape (n,) or None
        The rows' sample weights (:func:`calviz._weights.with_weights`: a file's weight column), read by
        the views that take weights; None: unweighted.
    Notes
    -----
    Views of the data used by the calibration targets: :meth:`binary`, :meth:`top1` (confidence,
    correct), :meth:`topk`, :meth:`classwise`, :meth:`full_probs`, :meth:`onehot`; :meth:`subsample`
    draws a reproducible uniform subsample.

    Examples
    --------
    >>> import calviz
    >>> data = calviz.as_calibration_data([0, 2, 1], [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3]])
    >>> data.n, data.n_classes
    (3, 3)
    >>> confidence, correct = data.top1()
    >>> confidence.tolist(), correct.tolist()
    ([0.7, 0.6, 0.5], [1.0, 1.0, 1.0])
    """

    probs: np.ndarray = _WidenedOnRead()
    labels: np.ndarray
    confidence_form: bool = False
    _cache: dict = field(default_factory=dict, compare=False, hash=False)
    #: sample weights of the rows (:func:`calviz._weights.with_weights`), or None: unweighted
    weights: np.ndarray | None = field(default=None, compare=False, hash=False)

    @property
    def n(self) -> int:
        return int(self.labels.shape[0])

    @property
    def is_binary(self) -> bool:
        return self._probs_as_stored().ndim == 1

    @property
    def n_classes(self) -> int:
        return 2 if self.is_binary else int(self._probs_as_stored().shape[1])

    def __repr__(self) -> str:
        kind = "binary" if self.is_binary else f"{self.n_classes}-class"
        return f"CalibrationData(n={self.n}, {kind}{', confidence form' if self.confidence_form else ''})"

    # -- views -------------------------------------------------------------------------------------
    def _probs_as_stored(self) -> np.ndarray:
        """``probs`` without widening a float32 matrix held as given (:class:`_WidenedOnRead`)."""
        stored = self.__dict__.get("probs")
        return self.probs if stored is None else stored

    def _cached(self, key, make):
        cache = self._cache
        kept = cache.get(key)
        if kept is None:
            kept = tuple(_readonly_view(np.ascontiguousarray(a)) for a in make())
        kind = key[0] if isinstance(key, tuple) else None
        with _VIEWS_LOCK:  # (sessions and jobs share one data: a view formed twice meanwhile is kept once)
            kept = cache.setdefault(key, kept)
            if kind in _VIEWS_KEPT:
                cache[key] = cache.pop(key)  # the most recently used of its kind last
                same = [k for k in cache if isinstance(k, tuple) and k[0] == kind]
                for old in same[:-_VIEWS_KEPT[kind]]:
                    del cache[old]
        return kept

    def full_probs(self) -> np.ndarray:
        """(n, K) probability matrix (binary data as two columns [1-p, p])."""
        if self.is_binary:
            return self._cached("full", lambda: (np.column_stack([1.0 - self.probs, self.probs]),))[0]
        return self.probs

    def onehot(self) -> np.ndarray:
        """(n, K) float64 one-hot labels."""

        def make():
            out = np.zeros((self.n, self.n_classes))
            out[np.arange(self.n), self.labels] = 1.0
            return (out,)

        return self._cached("onehot", make)[0]

    def binary(self) -> tuple[np.ndarray, np.ndarray]:
        """(p, y) for binary data: P(y = 1) and y as float64."""
        if not self.is_binary:
            raise InputError("the binary view needs 1-D y_prob; use top1() or classwise() for multiclass")
        return self.probs, self._cached("y_float", lambda: (self.labels.astype(np.float64),))[0]

    def top1(self) -> tuple[np.ndarray, np.ndarray]:
        """(confidence, correct): the top-1 reduction z~ = max_k z_k, y~ = 1{argmax = label}.

        Ties go to the lowest class index (``argmax``), the same order as :meth:`topk`.  Multiclass data
        built by :func:`as_calibration_data` hold it already (formed in the read that checked the
        matrix, 16 bytes a row); otherwise it is formed at the first call and kept."""

        def make():
            if self.confidence_form:  # already (confidence, correct)
                return self.probs, self.labels.astype(np.float64)
            from calviz._kernels.views import top1_of_binary, top1_of_rows

            if self.is_binary:  # argmax of [1 - p, p] without building the (n, 2) matrix
                return top1_of_binary(self.probs, self.labels)
            return top1_of_rows(self._probs_as_stored(), self.labels)  # (float32 read as it is)

        return self._cached("top1", make)

    def topk(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-1-to-k view (Sun et al., 2024): the k largest probabilities sorted decreasingly (n, k) and the
        matching label indicators (n, k).  Ties keep class order (stable sort), so topk(1) == top1().
        ``k`` is an int in [1, K]."""
        k = check_int_in(k, "k", 1, self.n_classes, "CalibrationData.topk", " (the number of classes)")

        def make():
            full = self.full_probs()
            order = np.argsort(-full, axis=1, kind="stable")[:, :k]
            return np.take_along_axis(full, order, axis=1), (order == self.labels[:, None]).astype(np.float64)

        return self._cached(("topk", k), make)

    def classwise(self, class_index: int, *, cache: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """One-vs-rest view for one class: (P(y = c), 1{y = c}).  ``cache=False`` does not keep the two
        arrays on the data (a pass over every class would otherwise hold K·n·16 bytes).  ``class_index``
        is an int in [0, K − 1]."""
        c = check_int_in(class_index, "class_index", 0, self.n_classes - 1, "CalibrationData.classwise")
        check_param(cache, "cache", BOOLEAN, "CalibrationData.classwise")

        def make():
            return self._class_probs(c), (self.labels == c).astype(np.float64)

        key = ("classwise", c)
        if not cache and key not in self._cache:
            return tuple(_readonly_view(np.ascontiguousarray(a)) for a in make())
        return self._cached(key, make)

    def _class_probs(self, c: int) -> np.ndarray:
        """P(y = c) for every row (the z of the one-vs-rest view)."""
        if self.is_binary:
            return self.probs if c == 1 else 1.0 - self.probs
        column = self._probs_as_stored()[:, c]  # (one float32 column widened, not the matrix)
        return column.astype(np.float64) if column.dtype == np.float32 else column

    def _rows(self, idx: np.ndarray) -> CalibrationData:
        """The data of rows ``idx`` (validated already: no second validation)."""
        return CalibrationData(_readonly_view(self._probs_as_stored()[idx]), _readonly_view(self.labels[idx]),
                               self.confidence_form,
                               weights=None if self.weights is None else _readonly_view(self.weights[idx]))

    def subsample(self, n: int, seed=None) -> CalibrationData:
        """A uniform subsample of n rows without replacement (``n``: an int in [2, inf); reproducible with
        ``seed``: None, a non-negative int or a numpy Generator).  ``n >= self.n`` returns the data
        unchanged."""
        check_param(n, "n", _SUBSAMPLE_SIZE, "CalibrationData.subsample")
        check_param(seed, "seed", SEED, "CalibrationData.subsample")
        if n >= self.n:
            return self
        return self._rows(self.subsample_rows(n, seed))

    def subsample_rows(self, n: int, seed=None) -> np.ndarray:
        """The sorted row indices :meth:`subsample` keeps (``n``: an int in [0, number of rows]), e.g. to
        subsample a column that belongs to the same rows."""
        n = check_int_in(n, "n", 0, self.n, "CalibrationData.subsample_rows")
        rng = as_generator(seed, "CalibrationData.subsample_rows")
        return np.sort(rng.choice(self.n, size=n, replace=False))

    def view(
        self, target: str = "auto", *, top_k: int = 1, class_index: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        """The (z, y) arrays for a calibration target (decided by :func:`calviz.targets.resolve`).

        ``auto``: binary data → ``binary``; multiclass → ``top1`` (``topk`` when ``top_k > 1``).
        ``binary``/``top1``/``classwise`` return 1-D arrays; ``topk`` and ``full`` return (n, k) arrays.
        ``top_k`` is an int in [1, K] and ``class_index`` an int in [0, K − 1] (checked as by
        :func:`calviz.targets.resolve`).
        """
        return resolve_once(self, target, top_k, class_index, caller="CalibrationData.view").view(self)


#: ``n`` of :meth:`CalibrationData.subsample`
_SUBSAMPLE_SIZE = Interval(int, 2, None)


@validate_params({"renormalize": BOOLEAN, "min_samples": NON_NEGATIVE_INT, "logits": BOOLEAN,
                  "confidence_form": NoneOr(BOOLEAN),
                  "pos_label": NoneOr(Instance((str, int, np.integer), "a str or an int"))})
def as_calibration_data(
    y_true,
    y_prob=None,
    *,
    renormalize: bool = False,
    min_samples: int = 2,
    logits: bool = False,
    confidence_form: bool | None = None,
    pos_label: str | int | None = None,
) -> CalibrationData:
    """Validate ``(y_true, y_prob)`` into a :class:`CalibrationData` (or return it unchanged).

    Raises :class:`InputError` for: non-numeric or NaN/inf values, probabilities outside [0, 1], rows not
    summing to 1 within ``SIMPLEX_TOLERANCE`` (unless ``renormalize``, which divides each row by its
    sum), labels out of range or not integers, one-hot rows that are not one-hot, mismatched lengths,
    fewer than ``min_samples`` rows, and a single-class (n, 1) probability matrix.

    Validation costs a few vectorised passes and copies nothing that is already float64 / int64 (the
    stored arrays are read-only *views*: do not modify your arrays afterwards).  An (n, K) matrix is read
    once: the read that checks it also forms its top-1 view (:meth:`CalibrationData.top1`), which the data
    keep (16 bytes a row beside the matrix's 8·K).

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, K), or CalibrationData
        Labels: 0/1 for binary predictions, class ids 0..K−1 or one-hot rows for (n, K) predictions.
    y_prob : array-like of shape (n,) or (n, K), optional
        P(y = 1), or one probability row per sample; omitted when ``y_true`` is a CalibrationData.
    renormalize : bool, default False
        Divide each probability row by its sum instead of refusing rows that do not sum to 1.
    min_samples : int, default 2
        Fewest rows accepted (an int ≥ 0).
    logits : bool, default False
        ``y_prob`` holds unnormalised scores, turned into probabilities by a numerically stable softmax
        per row (a sigmoid for a single column) — :func:`from_logits`.
    confidence_form : bool, optional
        Whether the pairs are (confidence, correct) of a classifier's top-1 prediction
        (:attr:`CalibrationData.confidence_form`); they must be 1-D.  None: as ``y_true`` says when it
        is a CalibrationData, else False.
    pos_label : str or int, optional
        Binary predictions: the class whose probability ``y_prob`` is, when ``y_true`` holds class names
        (e.g. "no"/"yes") or two labels other than 0/1 such as {−1, 1} (scikit-learn's convention).
        Multiclass class names are mapped to the columns of ``y_prob`` in sorted order, as a fitted
        classifier's ``classes_``.

    Returns
    -------
    CalibrationData
        The validated data.

    Raises
    ------
    InputError
        With a message naming the row / column and the rule broken; an option of the wrong type or out
        of range (e.g. ``logits="no"``) is an :class:`~calviz._params.InvalidParameterError`, an
        InputError with the uniform parameter message.

    Examples
    --------
    >>> import calviz
    >>> data = calviz.as_calibration_data([0, 1, 1], [0.2, 0.9, 0.6])
    >>> data.n, data.n_classes, data.is_binary
    (3, 2, True)
    >>> calviz.as_calibration_data([0, 1], [0.2, 1.3])
    Traceback (most recent call last):
    ...
    calviz.InputError: ...
    """
    if isinstance(y_true, CalibrationData):
        if y_prob is not None:
            raise InputError("pass either CalibrationData or (y_true, y_prob), not both")
        if y_true.n < min_samples:
            raise InputError(f"need at least {min_samples} samples; got {y_true.n}")
        if confidence_form is None or bool(confidence_form) == y_true.confidence_form:
            return y_true
        _check_confidence_form(y_true.probs)
        return replace(y_true, confidence_form=bool(confidence_form))
    if y_prob is None:
        raise InputError("y_prob is required")
    if logits:
        scores = _as_float_array(_as_array(y_prob, "y_prob"), "y_prob")
        y_prob = from_logits(scores.ravel() if scores.ndim == 2 and scores.shape[1] == 1 else scores)
    prob_array = _as_array(y_prob, "y_prob")
    if prob_array.dtype.kind == "b" or (prob_array.dtype.kind == "O" and any(
            isinstance(v, (bool, np.bool_)) for v in prob_array.ravel())):  # numpy or pandas booleans
        raise InputError(
            "y_prob must be probabilities; got booleans (True/False are labels: pass them as y_true)"
        )
    # An (n, K) float32 matrix is checked and reduced to its top-1 view as it is, without a float64 copy
    # (CalibrationData widens it, exactly, when a view needs it: _WidenedOnRead); rescaled rows are
    # divided in float64, as before.
    probs = _as_float_array(prob_array, "y_prob", keep_float32=not renormalize)
    if probs.ndim == 2 and probs.shape[1] == 1:
        raise InputError(
            "y_prob has a single column (a single class); pass binary P(y=1) as a 1-D array or all K columns"
        )
    if probs.ndim not in (1, 2):
        raise InputError(f"y_prob must be 1-D (binary) or 2-D (n, K); got shape {probs.shape}")
    if probs.ndim == 2 and probs.shape[1] == 0:
        raise InputError("y_prob has no columns; multiclass y_prob needs K >= 2 columns")
    n = probs.shape[0]
    labels_in = _as_array(y_true, "y_true")
    if labels_in.ndim >= 1 and labels_in.shape[0] != n:
        raise InputError(f"y_true has {labels_in.shape[0]} rows but y_prob has {n}; lengths must match")
    if n < min_samples:
        raise InputError(f"need at least {min_samples} samples; got {n}")
    if probs.ndim == 2:
        n_classes = probs.shape[1]
        check_n_classes(n_classes)
        if renormalize:
            _check_nonnegative_finite(probs)
            sums = probs.sum(axis=1)
            if n and not sums.min() > 0:
                raise InputError(f"y_prob row {_first_bad(~(sums > 0))} sums to 0 and cannot be renormalized")
            probs = probs / sums[:, None]
        # The labels first (a refusal of them waits: a refusal of y_prob is reported before it, as the
        # checks ran in that order), so that the one read of the matrix that checks it also reduces it
        # to its top-1 view (kept: 16 bytes a row; the default target of multiclass data).
        try:
            labels = _labels(labels_in, n, n_classes, pos_label, binary=False)
        except Exception as exc:  # re-raised below once y_prob has passed its checks
            labels, label_error = None, exc
        else:
            label_error = None
        if labels is not None:
            ok, conf, correct = on_simplex_top1(probs, labels, ROW_SUM_LIMIT)
        else:
            ok, conf, correct = on_simplex(probs, ROW_SUM_LIMIT), None, None
        if not ok:  # the checks that word the message on failure (on the float64 values, as before)
            probs = probs.astype(np.float64, copy=False)
            _check_finite_unit(probs, "y_prob")
            if not max_row_sum_deviation(probs) <= ROW_SUM_LIMIT:
                dev = np.abs(probs.sum(axis=1) - 1.0)
                i = _first_bad(~(dev <= ROW_SUM_LIMIT))
                raise InputError(
                    f"y_prob rows must sum to 1 (tolerance {SIMPLEX_TOLERANCE:g}); row {i} sums to "
                    f"{float(probs[i].sum())!r}. Pass renormalize=True to rescale rows."
                )
        if label_error is not None:
            raise label_error
        if confidence_form:
            _check_confidence_form(probs)
        data = CalibrationData(_readonly_view(probs), _readonly_view(labels), bool(confidence_form))
        data._cache["top1"] = (_readonly_view(conf), _readonly_view(correct))
        return data
    _check_finite_unit(probs, "y_prob")
    labels = _labels(labels_in, n, 2, pos_label, binary=True)
    if confidence_form:
        _check_confidence_form(probs)
    return CalibrationData(_readonly_view(probs), _readonly_view(labels), bool(confidence_form))


def _labels(labels_in: np.ndarray, n: int, n_classes: int, pos_label, *, binary: bool) -> np.ndarray:
    """The validated int64 class ids of ``y_true`` (class names encoded first)."""
    encoded = encode_labels(labels_in, n_classes, pos_label, binary=binary) if labels_in.ndim == 1 else None
    return _labels_from(labels_in if encoded is None else encoded, n, n_classes)


#: dtypes the one-pass checking kernels read as stored (native byte order): predictions, labels
_PLAIN_PROB_DTYPES = frozenset(np.dtype(t) for t in (np.float64, np.float32))
_PLAIN_LABEL_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float32,
    np.float64))


def plain_arrays(y_true, y_prob) -> tuple[np.ndarray, np.ndarray] | None:
    """(y_prob, y_true) as they are when :func:`as_calibration_data` (with its defaults) would refuse them
    only for their values — a probability outside [0, 1] or not finite, a row not summing to 1, a label
    that is not a class id — and a one-pass kernel that checks those values while it reads them
    (:func:`calviz._sums.checked_first_order_sums`) may read them without a copy: C-contiguous numpy
    arrays, float64 or float32 predictions of shape (n,) or (n, K) with 2 ≤ K ≤ MAX_CLASSES, 1-D labels
    of a real dtype, n ≥ 2.  Else None (the caller validates as usual).  Nothing is
    widened: float32 predictions stay float32."""
    if type(y_prob) is not np.ndarray or type(y_true) is not np.ndarray:
        return None
    if y_prob.dtype not in _PLAIN_PROB_DTYPES or y_true.dtype not in _PLAIN_LABEL_DTYPES:
        return None
    if not (y_prob.flags.c_contiguous and y_true.flags.c_contiguous) or y_true.ndim != 1:
        return None
    n = y_true.shape[0]
    if y_prob.ndim not in (1, 2) or y_prob.shape[0] != n or n < 2:
        return None
    if y_prob.ndim == 2 and not 2 <= y_prob.shape[1] <= MAX_CLASSES:
        return None
    return y_prob, y_true


def validate_once(y_true, y_prob=None, *, min_samples: int = 2) -> CalibrationData:
    """:func:`as_calibration_data` at an estimator's entry, skipped for data already validated.

    A user's arrays are validated here; a :class:`CalibrationData` — what an outer call (``calviz.analyze``,
    an estimator calling another) validated once and hands down, or what the user built with
    :func:`as_calibration_data` — is used as it is, without the nested call (validate once at the outermost
    call, as scikit-learn's ``prefer_skip_nested_validation``).  The result and every error are
    ``as_calibration_data(y_true, y_prob, min_samples=min_samples)``'s.

    Examples
    --------
    >>> import calviz
    >>> from calviz._data import validate_once
    >>> data = validate_once([0, 1, 1], [0.2, 0.9, 0.6])     # arrays: validated
    >>> validate_once(data) is data                          # validated data: used as it is
    True
    """
    if y_prob is None and isinstance(y_true, CalibrationData) and type(min_samples) is int \
            and y_true.n >= min_samples:
        return y_true  # (as_calibration_data returns it unchanged: nothing to check again)
    return as_calibration_data(y_true, y_prob, min_samples=min_samples)


def _check_confidence_form(probs: np.ndarray) -> None:
    if probs.ndim != 1:
        raise InputError(f"the confidence form holds one confidence per row (1-D); got shape {probs.shape}")


def _check_nonnegative_finite(probs: np.ndarray) -> None:
    if probs.size and bool(probs.min() >= 0.0) and bool(np.isfinite(probs.max())):
        return
    bad = ~np.isfinite(probs)
    if bad.any():
        i = _first_bad(bad)
        raise InputError(
            f"y_prob has a non-finite value (NaN or inf) at row {i}, column {int(np.flatnonzero(bad[i])[0])}"
        )
    bad = probs < 0
    if bad.any():
        raise _out_of_range(probs, bad)


def binary_view(
    y_true, y_prob, *, target: str = "auto", class_index: int = 0, min_samples: int = 2,
    caller: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Validate and reduce to one-dimensional (z, y) float64 arrays: binary, top-1 or one-vs-rest.

    The entry point of every estimator defined for scalar predictions (the distance family, the smooth
    reliability diagram); ``caller`` names that estimator in error messages.
    """
    data = validate_once(y_true, y_prob, min_samples=min_samples)
    target = resolve_once(data, target, 1, class_index, allowed=("auto", *SCALAR_TARGETS), caller=caller)
    return target.view(data)


@positional_deprecated("y_true")
def from_logits(logits, *, y_true=None):
    """Numerically stable softmax of (n, K) logits, or sigmoid of (n,) binary logits.

    softmax(x)_k = exp(x_k − max_j x_j) / Σ_j exp(x_j − max_j x_j) never overflows, whatever the size of
    the logits; the sigmoid uses exp(−|x|) on both branches for the same reason.

    Parameters
    ----------
    logits : array-like of shape (n,) or (n, K)
        Unnormalised scores (finite).
    y_true : array-like of shape (n,), optional
        Labels; when given, the result is validated :class:`CalibrationData`.

    Returns
    -------
    ndarray or CalibrationData
        The probabilities, or the validated data when ``y_true`` is given.

    Examples
    --------
    >>> import numpy as np
    >>> import calviz
    >>> np.round(calviz.from_logits([[2.0, 0.0], [1000.0, -1000.0]]), 3)
    array([[0.881, 0.119],
           [1.   , 0.   ]])
    >>> calviz.from_logits([0.0, 3.0], y_true=[0, 1]).probs.round(3).tolist()
    [0.5, 0.953]
    """
    z = _as_float_array(logits, "logits")
    if z.ndim not in (1, 2):
        raise InputError(f"logits must be 1-D (binary) or 2-D (n, K); got shape {z.shape}")
    if z.ndim == 2 and z.shape[1] < 2:
        raise InputError(f"2-D logits need K >= 2 columns; got shape {z.shape} (pass binary logits as 1-D)")
    bad = ~np.isfinite(z)
    if bad.any():
        i = _first_bad(bad)
        col = "" if z.ndim == 1 else f", column {int(np.flatnonzero(bad[i])[0])}"
        raise InputError(f"logits has a non-finite value (NaN or inf) at row {i}{col}")
    if z.ndim == 1:
        e = np.exp(-np.abs(z))  # in (0, 1]: no overflow
        probs = np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    else:
        with np.errstate(over="ignore"):  # a spread beyond 1.8e308 gives −inf, and exp(−inf) = 0 is right
            e = np.exp(z - z.max(axis=1, keepdims=True))
        probs = e / e.sum(axis=1, keepdims=True)
    if y_true is None:
        return probs
    return as_calibration_data(y_true, probs)


def check_alpha(alpha: float, name: str = "alpha", caller: str | None = None) -> float:
    """α must be a number in the open interval (0, 1) (the uniform message of :mod:`calviz._params`)."""
    return float(check_param(alpha, name, UNIT_OPEN, caller))
