"""Columns: which columns of a table (or arrays of an archive) hold the labels and the probabilities,
their values as numbers, messages in the file's column names, and a group column."""

from __future__ import annotations

import io as _io
import re
from pathlib import Path

import numpy as np

from calviz._data import CalibrationData, InputError, as_calibration_data, cell_repr, check_unique_columns
from calviz._params import check_n_classes
from calviz.io._sniff import FORMATS

#: the column (and array) names looked for by default (:func:`select_columns`)
COLUMN_NAMES = {"y_true": "y_true", "y_prob": "y_prob", "prob_prefix": "p_", "confidence": "confidence",
                "correct": "correct"}


def _prob_columns(columns, prefix: str, kind: str = "column") -> list[str]:
    pattern = re.compile(re.escape(prefix) + r"(\d+)$")
    numbered = {}
    for c in columns:
        m = pattern.match(str(c))
        if m:
            numbered[int(m.group(1))] = c
    if not numbered:
        return []
    k = max(numbered) + 1
    if k > len(numbered):  # a gap; the first lies in 0..len(numbered): found in O(K), whatever "p_10¹²" says
        gap = next(i for i in range(len(numbered) + 1) if i not in numbered)
        raise InputError(
            f"probability {kind}s {prefix}0..{prefix}{k - 1} must all be present; missing {prefix}{gap}"
        )
    return [numbered[i] for i in range(k)]


def _from_frame(frame, names, header_lines):
    check_unique_columns(list(frame.columns))
    found = [str(c) for c in frame.columns]
    frame.columns = found
    if len(frame) == 0:
        raise InputError(f"no data rows (columns {found})")
    label_col, prob_cols = select_columns(found, names)
    y = _numeric_column(frame, label_col, header_lines, labels=True)
    ps = [_numeric_column(frame, c, header_lines) for c in prob_cols]
    p = ps[0] if len(ps) == 1 else np.column_stack(ps)
    return y, p, {"y_true": label_col, "y_prob": prob_cols}


def is_confidence_form(columns: dict, names: dict) -> bool:
    """Whether the columns :func:`select_columns` chose are the confidence form, ``confidence`` + ``correct``.

    That form is the top-1 reduction of a classifier (:attr:`calviz.CalibrationData.confidence_form`), not
    P(y = 1) of a binary one.

    Parameters
    ----------
    columns : dict
        ``{"y_true": label column, "y_prob": [probability columns]}`` as chosen.
    names : dict
        The names looked for (:data:`COLUMN_NAMES` and the caller's).

    Returns
    -------
    bool

    Examples
    --------
    >>> from calviz.io import COLUMN_NAMES, is_confidence_form, select_columns
    >>> label, probs = select_columns(["correct", "confidence"], COLUMN_NAMES)
    >>> is_confidence_form({"y_true": label, "y_prob": probs}, COLUMN_NAMES)
    True
    >>> label, probs = select_columns(["y_true", "y_prob"], COLUMN_NAMES)
    >>> is_confidence_form({"y_true": label, "y_prob": probs}, COLUMN_NAMES)
    False
    """
    return columns == {"y_true": names["correct"], "y_prob": [names["confidence"]]}


def select_columns(found: list[str], names, kind: str = "column") -> tuple[str, list[str]]:
    """The label column and the probability columns of a table, by the rule of :func:`read_predictions`.

    ``y_true`` + ``y_prob`` (binary), else ``y_true`` + ``p_0`` … ``p_{K−1}``, else ``correct`` +
    ``confidence`` (the top-1 form); :func:`calviz.dask.from_dataframe` finds its columns, and the NPZ
    reader its arrays, the same way.

    Parameters
    ----------
    found : list of str
        The table's columns.
    names : dict
        The names looked for under the keys ``y_true``, ``y_prob``, ``prob_prefix``, ``confidence`` and
        ``correct`` (defaults: :data:`COLUMN_NAMES`); a list as ``y_prob`` names the probability columns
        themselves.  A ``y_prob`` other than the default must be a column.
    kind : str, default "column"
        What the names are, in messages ("array": the arrays of an NPZ archive).

    Returns
    -------
    (str, list of str)
        The label column and the probability column(s).

    Raises
    ------
    InputError
        A column is missing (the message lists those found), ``p_0`` … have a gap, a single ``p_*``
        column would make a one-class model, or more than ``MAX_CLASSES`` probability columns.

    Examples
    --------
    >>> from calviz.io import COLUMN_NAMES, select_columns
    >>> select_columns(["id", "y_true", "p_1", "p_0"], COLUMN_NAMES)
    ('y_true', ['p_0', 'p_1'])
    >>> select_columns(["correct", "confidence"], COLUMN_NAMES)
    ('correct', ['confidence'])
    """
    if any(names[k] != COLUMN_NAMES[k] for k in ("confidence", "correct")):
        # the caller named the confidence form: it is read, or refused, never another layout instead
        pair = [names["confidence"], names["correct"]]
        missing = [c for c in pair if c not in found]
        if missing:
            raise InputError(f"missing {kind}(s) {missing} of the confidence form ({pair[0]!r} + "
                             f"{pair[1]!r}); found {kind}s {found}")
        return names["correct"], [names["confidence"]]
    given = names["y_prob"]
    explicit = not isinstance(given, str) or given != COLUMN_NAMES["y_prob"]  # (not the default name)
    if not isinstance(given, str) and len(given) == 1:  # one named column: binary P(y=1), as its name alone
        given = given[0]
    listed = not isinstance(given, str)  # the probability columns themselves
    named = list(given) if listed else [given] if explicit else []
    missing = [c for c in named if c not in found]
    if missing:  # columns the caller named must be there: never fall back to other columns
        raise InputError(f"missing probability {kind}(s) {missing}; found {kind}s {found}")
    # columns the caller named are used as they are; otherwise p_0..p_{K-1} are looked for
    prob_cols = [] if listed or named else _prob_columns(found, names["prob_prefix"], kind)
    if listed:
        label_col, prob_cols = names["y_true"], named
    elif given in found:
        label_col, prob_cols = names["y_true"], [given]
    elif prob_cols:
        label_col = names["y_true"]
    elif names["confidence"] in found and names["correct"] in found:
        label_col, prob_cols = names["correct"], [names["confidence"]]
    else:
        raise InputError(
            f"no probability {kind}s: expected {names['y_prob']!r}, {names['prob_prefix']}0.."
            f"{names['prob_prefix']}{{K-1}}, or {names['confidence']!r} + {names['correct']!r}; "
            f"found {kind}s {found}"
        )
    if label_col not in found:
        raise InputError(f"missing label {kind} {label_col!r}; found {kind}s {found}")
    if len(prob_cols) == 1 and prob_cols[0] not in (given, names["confidence"]):
        raise InputError(
            f"only one probability {kind} {prob_cols[0]!r} (a single class): binary files use "
            f"{names['y_prob']!r} = P(y=1), or {names['prob_prefix']}0 and {names['prob_prefix']}1"
        )
    check_n_classes(len(prob_cols))
    return label_col, prob_cols


def _row_ref(i: int, header_lines) -> str:
    return f"row {i}" + (f" (line {i + 1 + header_lines} of the file)" if header_lines else "")


def _numeric_column(frame, name: str, header_lines, *, labels: bool = False) -> np.ndarray:
    """One column as a numpy array for :func:`as_calibration_data`, which applies the in-memory rules
    (booleans are labels, never probabilities; text is not a number).  Only CSV text is parsed here:
    a typed column (Parquet: ``header_lines`` None) holding strings is refused like a string array.
    The label column (``labels``) may hold class names ("no"/"yes"): returned as strings, which
    :func:`as_calibration_data` maps with ``pos_label`` (binary) or to the columns in sorted order."""
    import pandas as pd

    col = frame[name]
    if col.dtype == bool or pd.api.types.is_bool_dtype(col.dtype):
        if col.isna().any():
            i = int(np.flatnonzero(col.isna().to_numpy())[0])
            raise InputError(f"column {name!r} has an empty cell at {_row_ref(i, header_lines)}")
        return col.to_numpy(dtype=bool)
    if isinstance(col.dtype, np.dtype) and col.dtype.kind in "iu":  # integers as they are (uint64 included)
        return col.to_numpy()
    if header_lines is not None and pd.api.types.is_object_dtype(col.dtype) and col.map(
            lambda v: isinstance(v, int) and not isinstance(v, bool)).all():
        return col.to_numpy(dtype=object)  # integers beyond 64 bits (pandas keeps them as ints): as written
    if not pd.api.types.is_numeric_dtype(col.dtype):
        if header_lines is None:
            return col.to_numpy(dtype=object, na_value=None)
        values = col.astype("string") if not pd.api.types.is_object_dtype(col.dtype) else col
        coerced = pd.to_numeric(values, errors="coerce")
        bad = coerced.isna().to_numpy() & values.notna().to_numpy()
        if bad.any() and labels and not values.isna().any():  # class names: every cell as its text
            return values.astype(str).to_numpy(dtype=object)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"column {name!r} has a non-numeric cell {cell_repr(values.iloc[i])} at "
                f"{_row_ref(i, header_lines)}"
            )
        col = coerced
    arr = col.to_numpy(dtype=np.float64, na_value=np.nan)
    missing = np.isnan(arr)
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise InputError(f"column {name!r} has an empty or NaN cell at {_row_ref(i, header_lines)}")
    return arr


def _file_pos_label(pos_label, y: np.ndarray):
    """``pos_label`` as a value of the label column: text given for numeric labels (a command-line flag,
    ``--pos-label 1``) is read as the number it spells."""
    if not isinstance(pos_label, str) or y.dtype.kind not in "iufb":
        return pos_label
    try:
        value = float(pos_label)
    except ValueError:
        raise InputError(f"pos_label {pos_label!r} is not a label of y_true, which holds numbers") from None
    return int(value) if value.is_integer() else pos_label


def _validate(y, p, columns, renormalize, logits=False, confidence_form=False,
              pos_label=None) -> CalibrationData:
    """as_calibration_data, with messages naming the file's columns instead of y_true / y_prob and
    positions in the probability matrix."""
    try:
        return as_calibration_data(y, p, renormalize=renormalize, logits=logits,
                                   confidence_form=confidence_form, pos_label=_file_pos_label(pos_label, y))
    except InputError as exc:
        raise _named(exc, columns) from None


def _named(exc: InputError, columns) -> InputError:
    """A validation error with the file's column names in place of y_true / y_prob."""
    return InputError(name_columns(str(exc), columns))


def name_columns(message: str, columns) -> str:
    """A validation message that names a table's columns instead of the arguments y_true and y_prob.

    The readers of files and of Dask partitions both word :func:`calviz.as_calibration_data`'s messages
    this way, so that a user reads the names of their own columns.

    Parameters
    ----------
    message : str
        The message of :func:`calviz.as_calibration_data` (it names ``y_true``, ``y_prob`` and positions
        in the probability matrix, "column 1").
    columns : dict
        ``{"y_true": label column, "y_prob": [probability columns]}``.

    Returns
    -------
    str
        The message with the columns' names.

    Examples
    --------
    >>> from calviz.io import name_columns
    >>> columns = {"y_true": "label", "y_prob": ["p_0", "p_1", "p_2"]}
    >>> name_columns("y_prob must lie in [0, 1]; row 4, column 1 has 1.5", columns)
    "probabilities must lie in [0, 1]; row 4, column 'p_1' has 1.5"
    >>> name_columns("y_true has 2 rows but y_prob has 3", {"y_true": "label", "y_prob": ["score"]})
    "'label' has 2 rows but 'score' has 3"
    """
    prob_cols = columns["y_prob"]
    if len(prob_cols) > 1:
        message = re.sub(r"column (\d+)", lambda m: f"column {prob_cols[int(m.group(1))]!r}", message)
        message = re.sub(r"\by_prob\b", "probabilities", message)
    else:
        message = re.sub(r"\by_prob\b", repr(prob_cols[0]), message)
    return re.sub(r"\by_true\b", repr(columns["y_true"]), message)


def read_group_column(file: str, column: str, n: int, *, label_column: str = "y_true", labels=None,
                      content: bytes | None = None):
    """The values of one column of a predictions file, one per row.

    They are the groups of :func:`calviz.calibration_by_group` (``calviz check --group-by``,
    ``analyze(path, group=...)``).

    Parameters
    ----------
    file : str
        A CSV/TSV, Parquet or NPZ file (the format from its extension), or ``dataset:NAME``.
    column : str
        The column (NPZ: the array) to read.
    n : int
        The number of rows of the predictions; the column must have as many values.
    label_column : str, default "y_true"
        The name of the label column: naming it returns ``labels`` (so ``dataset:NAME``, which has no
        other column, can be grouped by its labels).
    labels : array-like, optional
        The validated labels, returned when ``column`` is ``label_column``.
    content : bytes, optional
        The file's bytes (an upload; ``file`` is then only its name).

    Returns
    -------
    numpy.ndarray of shape (n,)
        The column's values as read (strings stay strings, missing text is the empty string).

    Raises
    ------
    InputError
        No such column or array, a format without columns, or not one value per row.

    Examples
    --------
    >>> from calviz.io import read_group_column
    >>> csv = b"y_true,y_prob,region\\n1,0.9,north\\n0,0.2,south\\n1,0.7,north\\n"
    >>> read_group_column("predictions.csv", "region", 3, content=csv)
    array(['north', 'south', 'north'], dtype=object)
    >>> try:
    ...     read_group_column("predictions.csv", "city", 3, content=csv)
    ... except ValueError as error:                       # calviz.InputError is a ValueError
    ...     print(str(error)[:39])
    predictions.csv: no column 'city' (Usec
    """
    if column == label_column and labels is not None:
        return np.asarray(labels)
    if file.startswith("dataset:"):
        raise InputError(f"embedded datasets have no column {column!r}; group by the labels with "
                         f"--group-by {label_column}")
    path = Path(file)
    suffix = path.suffix.lower()
    source = _io.BytesIO(content) if content is not None else path
    try:
        if suffix in FORMATS["npz"]:
            with np.load(source, allow_pickle=False) as f:
                if column not in f.files:
                    raise InputError(f"{file}: no array {column!r}; arrays: {', '.join(f.files)}")
                values = np.asarray(f[column])
        elif suffix in FORMATS["parquet"]:
            import pandas as pd

            # text read as a dictionary: each distinct value decoded once, the rows referring to it (the
            # decoded-size check of the predictions did not count this column; 10⁶ rows of a 1 MB text
            # take a few kB in the file)
            read = pd.read_parquet(source, columns=[column], read_dictionary=[column]).iloc[:, 0]
            if isinstance(read.dtype, pd.CategoricalDtype):
                distinct = np.asarray(read.cat.categories, dtype=object)
                codes = read.cat.codes.to_numpy()
                values = np.where(codes >= 0, distinct[np.maximum(codes, 0)], None)
            else:
                values = read.to_numpy()
        elif suffix in FORMATS["csv"]:
            import pandas as pd

            frame = pd.read_csv(source, sep="\t" if suffix == ".tsv" else ",", usecols=[column],
                                keep_default_na=False)
            values = frame.iloc[:, 0].to_numpy()
        else:
            raise InputError(f"{file}: a group column needs a CSV, Parquet or NPZ file")
    except InputError:
        raise
    except (KeyError, ValueError, OSError) as exc:
        raise InputError(f"{file}: no column {column!r} ({str(exc).strip().splitlines()[0]})") from None
    if values.ndim != 1 or values.shape[0] != n:
        raise InputError(f"{file}: column {column!r} has shape {values.shape}, expected one value per row "
                         f"({n})")
    return values


def read_weight_column(file: str, column: str, n: int, *, content: bytes | None = None) -> np.ndarray:
    """The sample weights of a predictions file: one column, one number per row.

    ``--weight-column`` and the app's weight column box read it; the column is read as
    :func:`read_group_column` reads it.  A text column (a CSV column with a missing cell or a word) is
    converted: missing cells become NaN, refused with their row when the weights are validated
    (:func:`calviz._weights.with_weights`), which happens once, after this read.

    Parameters
    ----------
    file : str
        A CSV/TSV, Parquet or NPZ file (the format from its extension).
    column : str
        The column (NPZ: the array) to read.
    n : int
        The number of rows of the predictions; the column must have as many values.
    content : bytes, optional
        The file's bytes (an upload; ``file`` is then only its name).

    Returns
    -------
    numpy.ndarray of shape (n,)
        The weights as read (not yet validated).

    Raises
    ------
    InputError
        No such column, not one value per row, or a cell that is not a number (naming its row).

    Examples
    --------
    >>> from calviz.io import read_weight_column
    >>> read_weight_column("p.csv", "w", 3, content=b"y_true,y_prob,w\\n1,0.9,2\\n0,0.2,\\n1,0.7,1\\n")
    array([ 2., nan,  1.])
    """
    values = np.asarray(read_group_column(file, column, n, content=content))
    if values.dtype.kind not in "OUS":
        return values
    numbers = np.empty(values.shape[0])
    for i, value in enumerate(values):
        try:
            numbers[i] = np.nan if value is None or str(value).strip() == "" else float(value)
        except ValueError:
            raise InputError(f"{file}: weight column {column!r} must be numbers; row {i} has "
                             f"{value!r}") from None
    return numbers
