"""Every module of the package can be the first one imported: no import cycle between the validation
modules (``calviz._params`` raises the ``InputError`` that ``calviz._data`` defines the rules of)."""

import pkgutil
import subprocess
import sys

import calviz

_SCRIPT = """
import importlib, sys, warnings
warnings.simplefilter("ignore")
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "calviz" or m.startswith("calviz.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed.append(f"{name}: {type(exc).__name__}: {exc}")
print("\\n".join(failed))
"""

# optional extras and entry points that need a server or a display are imported by their own tests
_OPTIONAL = ("calviz.__main__",)


def test_every_module_imports_first_in_a_fresh_interpreter():
    names = sorted(m.name for m in pkgutil.walk_packages(calviz.__path__, "calviz.")
                   if m.name not in _OPTIONAL)
    assert "calviz._params" in names and "calviz._data" in names and len(names) > 40
    done = subprocess.run([sys.executable, "-c", _SCRIPT, *names], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", done.stdout
