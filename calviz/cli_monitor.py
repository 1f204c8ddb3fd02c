"""``calviz monitor LOG --time-column ts --window 1D``: calibration of a prediction log over time.

Prints the anytime-valid monitor's state (:func:`calviz.monitor_calibration`: alarm when its e-value
reaches 1/α at some window) and the per-window table (:func:`calviz.calibration_over_time`), or one JSON
object with ``--json``.  Exit status: 1 when the monitor alarms (for cron and CI), 0 when it does not,
2 on bad input (one line on stderr).

The time column is read here (:func:`read_time_column`), next to the predictions the shared reader
(:func:`calviz.io.read_predictions`) reads from the same file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

__all__ = ["add_monitor_parser", "cmd_monitor", "read_time_column", "monitor_summary", "add_time_options",
           "with_time_column"]

EXIT_OK, EXIT_ALARM = 0, 1


def add_monitor_parser(sub, formatter_class, add_file_options) -> None:
    """Register the ``monitor`` subcommand on the ``calviz`` subparsers."""
    monitor = sub.add_parser(
        "monitor", formatter_class=formatter_class,
        help="calibration of a prediction log over time; exit 1 on an alarm",
        description="Calibration of a prediction log over time: the anytime-valid monitor (an e-process "
                    "that may be checked after every window; alarm when it reaches 1/alpha) and per window "
                    "the ECE with its interval, mean prediction, observed rate and T-Cal's analytic p-value "
                    "(Holm-corrected over the windows).",
        epilog="exit status: 0 no alarm, 1 the monitor alarms (calibration rejected at level alpha, valid "
               "however often the log is checked), 2 bad usage or input file")
    monitor.add_argument("file", help="prediction log (CSV, Parquet, NPZ) with a time column")
    monitor.add_argument("--time-column", required=True, metavar="COL",
                         help="the time column: datetimes, numbers or batch ids")
    monitor.add_argument("--window", default="1D",
                         help="window: a duration ('1D', '6h', '30min'; datetime times), 'N rows', a width "
                              "(numeric times) or 'each' (one window per distinct time)")
    monitor.add_argument("--mode", choices=("fixed", "expanding", "since_reference"), default="fixed",
                         help="what each window's statistics cover: its own rows, every row up to its end, "
                              "or every row after the reference window")
    monitor.add_argument("--reference", type=int, default=0, help="the reference window (index)")
    monitor.add_argument("--alpha", type=float, default=0.05,
                         help="level of the monitor (alarm at e-value >= 1/alpha) and of the per-window "
                              "tests")
    monitor.add_argument("--n-bins", type=int, default=15, help="equal-width bins of the ECE")
    monitor.add_argument("--target", choices=("auto", "binary", "top1"), default="auto",
                         help="binary P(y=1), or top-1 calibration of multiclass predictions")
    monitor.add_argument("--no-tcal", action="store_true", help="skip the per-window T-Cal p-values")
    monitor.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    add_file_options(monitor)


def add_time_options(parser) -> None:
    """``--time-column`` and ``--time-window`` of ``calviz serve | report | check`` (the over-time view)."""
    group = parser.add_argument_group("time (the over-time view)")
    group.add_argument("--time-column", metavar="COL",
                       help="a time column (datetimes, numbers or batch ids): adds calibration over time")
    group.add_argument("--time-window", default="auto", metavar="W",
                       help="window of the over-time view: a duration ('1D', '6h'), 'N rows', a width "
                            "(numeric times), 'each' (one window per distinct time) or 'auto' (default: "
                            "at most 400 windows)")


def with_time_column(data, args):
    """``data`` with the time column ``args.time_column`` read from ``args.file`` (unchanged without one)."""
    from calviz._data import InputError
    from calviz._timed import AUTO_WINDOW, with_time
    from calviz.cli import CLIError

    column = getattr(args, "time_column", None)
    if column is None or data is None:
        return data
    window = args.time_window
    window = AUTO_WINDOW if window == AUTO_WINDOW else _window_arg(window)
    try:
        return with_time(data, read_time_column(args.file, column, data.n), window=window)
    except InputError as exc:
        raise CLIError(str(exc)) from None


def read_time_column(file: str, column: str, n: int):
    """The time column of a prediction log, one value per row: Parquet timestamps stay timestamps (time-zone
    aware ones become UTC), CSV text that reads as ISO dates becomes datetimes, numbers stay numbers, other
    text is batch ids.  Missing values are kept missing (the time validation refuses them)."""
    from calviz._data import InputError

    path = Path(file)
    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq") or path.is_dir():
            values = _parquet_time(path, column)
        elif suffix in (".csv", ".tsv", ".txt"):
            import pandas as pd

            sep = "\t" if suffix == ".tsv" else ","
            values = _csv_time(path, column, sep)
            if values is None:
                values = pd.read_csv(path, sep=sep, usecols=[column]).iloc[:, 0]
                if pd.api.types.is_string_dtype(values.dtype) or values.dtype == object:
                    values = _maybe_datetimes(values)
        elif suffix == ".npz":
            with np.load(path, allow_pickle=False) as archive:
                if column not in archive.files:
                    raise InputError(f"{file}: no array {column!r}; arrays: {', '.join(archive.files)}")
                values = np.asarray(archive[column])
        else:
            raise InputError(f"{file}: a time column needs a CSV, Parquet or NPZ file")
    except InputError:
        raise
    except (KeyError, ValueError, OSError) as exc:
        raise InputError(f"{file}: no time column {column!r} ({str(exc).strip().splitlines()[0]})") from None
    if values.shape[0] != n:
        raise InputError(f"{file}: time column {column!r} has {values.shape[0]} values for {n} rows")
    return values


def _parquet_time(path: Path, column: str):
    """A Parquet time column: timestamps as one datetime64[ns] array (UTC for time-zone aware ones, as Arrow
    stores them; missing ones NaT), without a pandas Series or a second copy; other types through pandas."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    chunks = pq.read_table(path, columns=[column]).column(0)
    try:
        values = _arrow_datetimes(chunks) if pa.types.is_timestamp(chunks.type) else None
        return chunks.to_pandas() if values is None else values
    finally:
        del chunks
        pa.default_memory_pool().release_unused()  # (Arrow's allocator keeps freed pages otherwise)


#: the times datetime64[ns] holds (1677-09-21 to 2262-04-11), rounded inwards to whole years
_NS_YEARS = np.array(["1678-01-01", "2262-01-01"], dtype="datetime64[D]")


def _arrow_datetimes(chunks) -> np.ndarray | None:
    """Arrow timestamps or dates as one datetime64[ns] array (UTC for time-zone aware ones, as Arrow stores
    them).  None when one is missing or beyond datetime64[ns]'s years: pandas' reading says so then."""
    if chunks.null_count:
        return None
    values = chunks.to_numpy()
    if values.dtype == np.dtype("datetime64[ns]") or values.size == 0:
        return values.astype("datetime64[ns]")
    low, high = _NS_YEARS.astype(values.dtype)
    if not (low <= values.min() and values.max() <= high):
        return None
    return values.astype("datetime64[ns]")


def _csv_time(path: Path, column: str, sep: str):
    """A CSV time column parsed by Arrow when it reads as ISO 8601 timestamps or dates (UTC for ones with an
    offset; missing ones NaT) or as numbers without gaps: one numpy array, no pandas parsing of the text.
    None otherwise (other text, or a file Arrow does not parse): pandas reads it then, with its messages."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    try:
        chunks = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=sep),
                                convert_options=pacsv.ConvertOptions(include_columns=[column])).column(0)
        kind = chunks.type
        if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
            return _arrow_datetimes(chunks)
        if (pa.types.is_integer(kind) or pa.types.is_floating(kind)) and chunks.null_count == 0:
            return chunks.to_numpy()
    except pa.ArrowException:
        pass
    finally:
        pa.default_memory_pool().release_unused()
    return None


def _maybe_datetimes(values):
    import pandas as pd

    text = values.dropna()
    if text.empty:
        return values
    try:
        return pd.to_datetime(values, format="ISO8601", utc=_has_offset(str(text.iloc[0])))
    except (ValueError, TypeError):
        return values.astype(object)


def _has_offset(text: str) -> bool:
    tail = text[10:]
    return tail.endswith("Z") or "+" in tail or tail.count("-") > 0


def _window_arg(text: str):
    if text.strip().lower() == "each":
        return None
    try:
        return float(text) if text.strip().replace(".", "", 1).isdigit() else text
    except ValueError:
        return text


def _iso(value) -> str | float | int:
    if isinstance(value, np.datetime64):
        return str(value.astype("datetime64[s]")) if value == value.astype("datetime64[s]") else str(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def monitor_summary(over_time, monitor, *, file: str) -> dict:
    """The JSON-ready summary of ``calviz monitor``."""
    from calviz._results import strict_json

    windows = []
    frame = over_time.to_dict()
    fields = ("n", "mean_prediction", "mean_prediction_low", "mean_prediction_high", "observed_rate",
              "observed_low", "observed_high", "gap", "gap_low", "gap_high", "ece", "ece_low", "ece_high",
              "tcal_pvalue", "tcal_pvalue_adjusted", "reject")
    evalues = monitor.log_evalues if monitor.log_evalues.shape[0] == over_time.n_windows else None
    for i in range(over_time.n_windows):
        row = {"start": _iso(over_time.start[i]), "end": _iso(over_time.end[i])}
        row.update({f: frame[f][i] for f in fields})
        if evalues is not None:
            row["log_evalue"] = float(evalues[i])
        windows.append(row)
    return strict_json({
        "file": file, "n": int(monitor.n), "window": over_time.window, "mode": over_time.mode,
        "target": over_time.target, "alpha": monitor.alpha, "threshold": monitor.threshold,
        "alarm": bool(monitor.alarm), "alarm_index": monitor.alarm_index,
        "alarm_time": None if monitor.alarm_time is None else _iso(monitor.alarm_time),
        "evalue": monitor.statistic, "max_log_evalue": float(np.max(monitor.log_evalues)),
        "anytime_pvalue": monitor.pvalue, "correction": over_time.correction,
        "windows_rejected": int(np.sum(over_time.reject)), "windows": windows,
    })


def _fmt(value, digits=4) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{value:.{digits}f}"


def _print_text(summary: dict) -> None:
    from calviz._results import format_pvalue

    alpha = summary["alpha"]
    print(f"{summary['file']}: {summary['n']:,} rows, {len(summary['windows'])} windows "
          f"({summary['window']}, {summary['mode']}), target {summary['target']}")
    top = math.exp(min(summary["max_log_evalue"], 700.0))
    if summary["alarm"]:
        print(f"ALARM: the e-process reached 1/alpha = {summary['threshold']:g} in the window ending "
              f"{summary['alarm_time']} (window {summary['alarm_index']}); now E = {summary['evalue']:.3g}, "
              f"anytime-valid p = {format_pvalue(summary['anytime_pvalue'])} — calibration rejected at "
              f"level {alpha:g}")
    else:
        print(f"no alarm: largest e-value {top:.3g} < 1/alpha = {summary['threshold']:g} (anytime-valid "
              f"p = {format_pvalue(summary['anytime_pvalue'])})")
    print(f"per-window T-Cal: {summary['windows_rejected']} of {len(summary['windows'])} windows reject at "
          f"level {alpha:g} after Holm's correction over the windows")
    header = (f"{'start':<20} {'n':>9} {'mean pred':>9} {'observed':>9} {'gap':>8} {'gap interval':>19} "
              f"{'ECE':>7} {'ECE interval':>17} {'T-Cal p':>8} {'Holm p':>8} {'E':>9}")
    print(header)
    for row in summary["windows"]:
        e = row.get("log_evalue")
        evalue = "—" if e is None else f"{math.exp(min(e, 700.0)):.3g}"
        print(f"{str(row['start'])[:20]:<20} {row['n']:>9,} {_fmt(row['mean_prediction']):>9} "
              f"{_fmt(row['observed_rate']):>9} {_fmt(row['gap']):>8} "
              f"[{_fmt(row['gap_low']):>8}, {_fmt(row['gap_high']):>8}] {_fmt(row['ece']):>7} "
              f"[{_fmt(row['ece_low']):>7}, {_fmt(row['ece_high']):>7}] {_fmt(row['tcal_pvalue']):>8} "
              f"{_fmt(row['tcal_pvalue_adjusted']):>8}{' *' if row['reject'] else '  '}{evalue:>7}")


def cmd_monitor(args) -> int:
    """Run ``calviz monitor``; returns the exit status (1: alarm)."""
    import calviz
    from calviz._monitor import monitor_of_over_time
    from calviz.cli import CLIError, load_input

    path = Path(args.file)
    if not path.exists():
        raise CLIError(f"{args.file}: no such file")
    data = load_input(args.file, args, keep_matrix=False)
    time = read_time_column(args.file, args.time_column, data.n)
    window = _window_arg(args.window)
    # validated, sorted by time and cut into windows once: the monitor's batches are the result's windows
    over_time = calviz.calibration_over_time(
        data, time=time, window=window, mode=args.mode, reference=args.reference, alpha=args.alpha,
        n_bins=args.n_bins, target=args.target, tcal=not args.no_tcal)
    del data, time  # (the result holds the sorted log it needs)
    monitor = monitor_of_over_time(over_time, alpha=args.alpha)
    summary = monitor_summary(over_time, monitor, file=args.file)
    if args.json:
        print(json.dumps(summary))
    else:
        _print_text(summary)
    return EXIT_ALARM if monitor.alarm else EXIT_OK
