"""Two threads checking at once give the reports one after the other gives (the GIL is
released during a check: ctypes.CDLL; the library keeps no global state, MPFR its state
per thread)."""
import ctypes
import ctypes.util
import threading

import numpy as np
import pytest

import numoracle

from conftest import comparable


def test_mpfr_is_thread_safe():
    name = ctypes.util.find_library("mpfr")
    if not name:
        pytest.skip("libmpfr not found by name")
    mpfr = ctypes.CDLL(name)
    assert mpfr.mpfr_buildopt_tls_p() != 0, "this MPFR keeps global state: concurrent checks are unsafe"


def test_the_library_is_called_without_the_gil():
    from numoracle import _lib
    lib = _lib.load()
    assert isinstance(lib, ctypes.CDLL) and not isinstance(lib, ctypes.PyDLL)


def _cases():
    a = numoracle.inputs("rms_norm", "64x512", "bf16", "gaussian", 1)
    lo, hi, _ = numoracle.bounds("rms_norm", a, dtype="bf16")
    ya = hi.copy()
    ya[::7, 3] += 2  # some FAIL
    b = numoracle.inputs("softmax", "8x300", "fp32", "outlier", 2)
    lo, hi, _ = numoracle.bounds("softmax", b)
    c = numoracle.inputs("rms_norm", "16x200", "bf16", "gaussian", 4)
    yc, _, _ = numoracle.bounds("rms_norm", c, dtype="bf16")
    yc = yc.copy()
    yc[5, 5] ^= 0x40  # one FAIL
    m = numoracle.inputs("matmul", "128x96x256", "fp16", "gaussian", 3)  # the BLAS path
    mlo, _, _ = numoracle.bounds("matmul", m)
    return [("rms_norm", a, ya, "bf16", "auto"), ("softmax", b, lo, None, "certified"),
            ("matmul", m, mlo, None, "auto"), ("rms_norm", c, yc, "bf16", "certified")]


def test_two_threads_same_reports():
    cases = _cases()

    def run(c):
        op, inp, out, dt, eng = c
        r = numoracle.check(op, inp, out, dtype=dt, engine=eng, details=True)
        return comparable(r.to_dict()), r.verdicts

    serial = [run(c) for c in cases]
    assert [s[0]["verdict"] for s in serial] == ["FAIL", "PASS", "PASS", "FAIL"]
    for rnd in range(2):
        got = [None] * (2 * len(cases))
        errors = []

        def worker(i, c):
            try:
                got[i] = run(c)
            except Exception as e:  # reported below, with the case
                errors.append((i, e))

        ts = [threading.Thread(target=worker, args=(i, cases[i % len(cases)])) for i in range(len(got))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert not errors
        for i, g in enumerate(got):
            s = serial[i % len(cases)]
            assert g[0] == s[0], (rnd, i)
            for k in s[1]:
                assert np.array_equal(g[1][k], s[1][k]), (rnd, i, k)
