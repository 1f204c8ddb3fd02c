"""No module of the package grows past 1,000 lines: a longer one is split by concern (the argument
parsing, a subcommand, the figures, the sentences) before it becomes several modules under one name.
The T-Cal kernels are the one exception: one family of compiled loops that share their helpers."""

from __future__ import annotations

import pathlib

import calviz

ROOT = pathlib.Path(calviz.__file__).resolve().parent
MAX_LINES = 1_000
#: modules allowed to be longer, each with its reason
EXCEPTIONS = {"_kernels/tcal.py": "the T-Cal kernels: one family of compiled loops sharing their helpers"}


def _lines(path: pathlib.Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_exceeds_a_thousand_lines():
    modules = {path.relative_to(ROOT).as_posix(): path for path in ROOT.rglob("*.py")}
    # the scan sees every subpackage (a glob that missed them would pass on nothing)
    assert {"cli.py", "analysis/views.py", "present/text.py", "app/over_time.py"} <= set(modules)
    assert set(EXCEPTIONS) <= set(modules), "an exception names a module that no longer exists"
    too_long = {name: _lines(path) for name, path in sorted(modules.items())
                if name not in EXCEPTIONS and _lines(path) > MAX_LINES}
    assert not too_long, f"modules over {MAX_LINES:,} lines (split them by concern): {too_long}"


def test_the_line_count_counts_lines(tmp_path):
    short, long = tmp_path / "short.py", tmp_path / "long.py"
    short.write_text("x = 1\n" * MAX_LINES, encoding="utf-8")
    long.write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    assert (_lines(short), _lines(long)) == (MAX_LINES, MAX_LINES + 1)
