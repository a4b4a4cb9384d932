"""numoracle: certified per-element verdicts for low-precision kernels, from Python.

Checks a PyTorch, Triton or NumPy kernel's output against the reachable sets of a
precision plan, element by element (PASS / FAIL / INCONCLUSIVE), through libnumoracle's
binding entry point (numoracle/bind.h) by ctypes: pure Python, no compiled extension.

    import numoracle
    rep = numoracle.check("rms_norm", {"x": x, "w": w}, y, params={"eps": 1e-6})
    rep.verdict                                   # "PASS"

    from numoracle.testing import assert_certified
    assert_certified(y, op="rms_norm", inputs={"x": x, "w": w})   # in a pytest test

From a build tree: ``PYTHONPATH=python NUMORACLE_LIB=build/oracle/libnumoracle.so``.
"""

from ._api import (EXIT_USAGE, FAIL, INCONCLUSIVE, PASS, Element, Error, Report, bounds,
                   candidates, check, inputs, ops, plans, version)
from ._judge import JUDGMENTS, Cell, Matrix, judge, record_provenance
from ._lib import API_VERSION, LibraryNotFound, library_path

__version__ = "0.1.0"

__all__ = ["check", "bounds", "inputs", "ops", "candidates", "plans", "library_path", "version",
           "Report", "Element", "Error", "LibraryNotFound", "PASS", "FAIL", "INCONCLUSIVE",
           "API_VERSION", "EXIT_USAGE", "testing", "judge", "Matrix", "Cell", "JUDGMENTS",
           "record_provenance"]


def __getattr__(name):
    # numoracle.testing without an explicit import (it imports nothing heavy either)
    if name == "testing":
        from . import testing
        return testing
    raise AttributeError(f"module 'numoracle' has no attribute {name!r}")
