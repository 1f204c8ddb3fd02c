"""The ``calviz`` command line: ``calviz serve | report | check``."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="calviz", description="Calibration analysis for classifiers.")
    parser.add_argument("--version", action="store_true", help="print the calviz version and exit")
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="open the interactive dashboard in a browser")
    serve.add_argument("file", nargs="?", help="predictions file (CSV, Parquet, NPZ, NPY)")
    serve.add_argument("--port", type=int, default=5006)
    serve.add_argument("--address", default="127.0.0.1")
    serve.add_argument("--show", dest="show", action="store_true", default=True)
    serve.add_argument("--no-show", dest="show", action="store_false")
    report = sub.add_parser("report", help="write a self-contained static HTML report")
    report.add_argument("file")
    report.add_argument("-o", "--output", default="report.html")
    check = sub.add_parser("check", help="print the T-Cal decision, ECE interval and distance bounds")
    check.add_argument("file")
    check.add_argument("--json", action="store_true")
    check.add_argument("--fail-on-reject", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.version:
        from calviz import __version__

        print(__version__)
        return 0
    if args.command is None:
        build_parser().print_help()
        return 0
    print(f"calviz {args.command}: not yet available", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
