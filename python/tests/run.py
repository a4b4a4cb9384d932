"""meson test entry for the Python suite: pytest over python/tests with Debian's numpy.
Exits 77 (meson: skipped, said so) when this python3 lacks pytest or numpy: `make deps`
installs python3-pytest and python3-numpy."""
import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f"python suite skipped: {e} (install python3-pytest python3-numpy: make deps)")
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
rc = pytest.main(["-q", "-p", "no:cacheprovider", "-rs", here] + sys.argv[1:])
# 5: no test collected, which must not read as green
sys.exit(1 if rc == 5 else int(rc))
