"""Where the package finds libnumoracle: $NUMORACLE_LIB, next to the package (what
`meson install` sets up), the system path; library_path() says which."""
import os
import shutil
import subprocess
import sys

import pytest

import numoracle

PKG = os.path.dirname(os.path.abspath(numoracle.__file__))


def _lib_file():
    return numoracle.library_path().split(" (")[0]


def _run(env, cwd):
    code = "import numoracle; print(numoracle.library_path()); print(len(numoracle.ops()))"
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def _env(tmp, **extra):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMORACLE_LIB", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(tmp)
    env.update(extra)
    return env


def test_next_to_the_package(tmp_path):
    shutil.copytree(PKG, tmp_path / "numoracle", ignore=shutil.ignore_patterns("__pycache__", "libnumoracle*"))
    os.symlink(_lib_file(), tmp_path / "numoracle" / "libnumoracle.so")
    rc, out, err = _run(_env(tmp_path), tmp_path)
    assert rc == 0, err
    where, n = out.splitlines()
    assert where == f"{os.path.realpath(_lib_file())} (next to the package)" and int(n) > 20


def test_env_beats_next_to_the_package(tmp_path):
    shutil.copytree(PKG, tmp_path / "numoracle", ignore=shutil.ignore_patterns("__pycache__", "libnumoracle*"))
    (tmp_path / "numoracle" / "libnumoracle.so").write_bytes(b"not a library")
    rc, out, err = _run(_env(tmp_path, NUMORACLE_LIB=_lib_file()), tmp_path)
    assert rc == 0 and out.splitlines()[0].endswith("(NUMORACLE_LIB)"), err
    rc, out, err = _run(_env(tmp_path), tmp_path)  # the bad file next to it is skipped, said so
    assert rc != 0 and "libnumoracle.so (" in err and "not found; tried" in err


def test_system_path(tmp_path):
    shutil.copytree(PKG, tmp_path / "numoracle", ignore=shutil.ignore_patterns("__pycache__", "libnumoracle*"))
    rc, out, err = _run(_env(tmp_path, LD_LIBRARY_PATH=os.path.dirname(_lib_file())), tmp_path)
    if rc != 0 and "not found" in err:
        pytest.fail(err)
    assert rc == 0, err
    where = out.splitlines()[0]
    assert where == f"{os.path.realpath(_lib_file())} (system path)"  # LD_LIBRARY_PATH comes first
