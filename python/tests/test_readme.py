"""The README's NumPy example (the python block that imports numpy) runs and holds."""
import os
import re

from conftest import ROOT


def test_readme_numpy_example(capsys):
    text = open(os.path.join(ROOT, "README.md")).read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks and "assert_certified" in blocks[0]  # the five lines of pytest come first
    code = [b for b in blocks if "import numpy as np" in b]
    assert len(code) == 1
    exec(compile(code[0], "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "FAIL" in out and " of 262144" in out
