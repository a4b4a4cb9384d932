"""Arrays of every kind give the same report: NumPy (contiguous or not, either byte order),
__array_interface__, __dlpack__, memoryview, PyTorch when installed; and nothing imports
NumPy or PyTorch on its own."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numoracle

from conftest import comparable, f32_to_bf16


class ArrayInterface:
    """Only __array_interface__ (the data as a buffer object, or as an address)."""

    def __init__(self, a, as_buffer):
        self._a = np.ascontiguousarray(a)
        ai = dict(self._a.__array_interface__)
        if as_buffer:
            ai["data"] = self._a.tobytes()  # read-only bytes: the package copies once
        self.__array_interface__ = ai


class DLPackOnly:
    """Only __dlpack__ / __dlpack_device__, delegating to a NumPy array."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kw):
        return self._a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


@pytest.fixture(scope="module")
def case():
    inp = numoracle.inputs("layer_norm", "12x40", "fp32", "gaussian", 8)
    lo, hi, _ = numoracle.bounds("layer_norm", inp)
    y = hi.copy()
    y[3, 5] = np.nextafter(y[3, 5], np.float32(np.inf))  # one FAIL
    ref = numoracle.check("layer_norm", inp, y).to_dict()
    assert ref["verdict"] == "FAIL" and ref["counts"]["fail"] == 1
    return inp, y, comparable(ref)


@pytest.mark.parametrize("wrap", ["array_interface_ptr", "array_interface_buffer", "dlpack", "memoryview",
                                  "fortran", "strided", "bigendian"])
def test_same_report_for_every_array_kind(case, wrap):
    inp, y, ref = case

    def w(a):
        if wrap == "array_interface_ptr":
            return ArrayInterface(a, False)
        if wrap == "array_interface_buffer":
            return ArrayInterface(a, True)
        if wrap == "dlpack":
            return DLPackOnly(np.ascontiguousarray(a))
        if wrap == "memoryview":
            return memoryview(np.ascontiguousarray(a))
        if wrap == "fortran":
            return np.asfortranarray(a)
        if wrap == "strided":  # every other element of a wider array
            big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
            big[..., ::2] = a
            return big[..., ::2]
        return a.astype(a.dtype.newbyteorder(">"))

    got = numoracle.check("layer_norm", {k: w(v) for k, v in inp.items()}, w(y))
    assert comparable(got.to_dict()) == ref


def test_bf16_wrappers_take_dtype():
    inp = numoracle.inputs("softmax", "3x30", "bf16", "gaussian", 1)
    lo, hi, _ = numoracle.bounds("softmax", inp, dtype="bf16")
    a = numoracle.check("softmax", inp, lo, dtype="bf16")
    b = numoracle.check("softmax", {"x": DLPackOnly(inp["x"])}, memoryview(lo), dtype="bf16")
    assert comparable(a.to_dict()) == comparable(b.to_dict()) and a.verdict == "PASS"
    with pytest.raises(numoracle.Error, match="raw bit patterns"):
        numoracle.check("softmax", {"x": DLPackOnly(inp["x"])}, lo)


def test_zero_dim_output_is_one_element():
    inp = numoracle.inputs("cross_entropy", "4x16", "fp32", "gaussian", 2)
    lo, hi, _ = numoracle.bounds("cross_entropy", inp)
    assert lo.shape == (1,)
    rep = numoracle.check("cross_entropy", inp, np.float32(lo[0]).reshape(()))
    assert rep.verdict == "PASS" and rep.n == 1


def test_results_come_back_in_the_callers_kind():
    inp = numoracle.inputs("softmax", "2x8", "fp32", "gaussian", 0, like="memoryview")
    assert isinstance(inp["x"], memoryview) and inp["x"].shape == (2, 8) and inp["x"].format == "f"
    lo, hi, fl = numoracle.bounds("softmax", inp)
    assert isinstance(lo, memoryview) and lo.shape == (2, 8)
    rep = numoracle.check("softmax", inp, lo, details=True)
    assert isinstance(rep.verdicts["y"], memoryview) and rep.failing() == []


def test_no_numpy_or_torch_imported():
    """A caller that passes no NumPy array gets no NumPy import (nor PyTorch)."""
    code = textwrap.dedent("""
        import sys, numoracle
        from numoracle.testing import assert_certified
        numoracle.ops(); numoracle.plans(); numoracle.candidates("rms_norm")
        inp = numoracle.inputs("rms_norm", "4x16", "bf16", "gaussian", 3, like="memoryview")
        lo, hi, fl = numoracle.bounds("rms_norm", inp, dtype="bf16")
        rep = numoracle.check("rms_norm", inp, lo, dtype="bf16", details=True)
        assert rep.verdict == "PASS", rep
        assert_certified(hi, op="rms_norm", inputs=inp, dtype="bf16")
        bad = [m for m in ("numpy", "torch") if m in sys.modules]
        print("imported:", bad)
        sys.exit(1 if bad else 0)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_torch_tensors():
    torch = pytest.importorskip("torch")  # optional here; hip/validate/gpu_check.py runs it on a GPU
    inp = numoracle.inputs("rms_norm", "8x64", "bf16", "gaussian", 4, like="torch")
    assert inp["x"].dtype == torch.bfloat16
    y = (inp["x"].float() * torch.rsqrt(inp["x"].float().pow(2).mean(-1, keepdim=True) + 1e-6)
         * inp["w"].float()).to(torch.bfloat16)
    rep = numoracle.check("rms_norm", inp, y, details=True)  # dtype from the tensor
    assert rep.verdict == "PASS", rep.to_dict()
    assert isinstance(rep.verdicts["y"], torch.Tensor)
    rep2 = numoracle.check("rms_norm", {"x": inp["x"].t().contiguous().t(), "w": inp["w"]}, y)
    assert rep2.verdict == "PASS"
    lo, hi, fl = numoracle.bounds("rms_norm", inp)
    assert lo.dtype == torch.bfloat16 and lo.shape == y.shape
    x8 = numoracle.inputs("matmul", "4x8x16", "fp8_e4m3", "uniform", 1, like="torch")
    lo8, _, _ = numoracle.bounds("matmul", x8, dtype="fp8_e4m3")
    native = hasattr(torch, "float8_e4m3fn")  # PyTorch >= 2.1; before, uint8 bits
    assert lo8.dtype == (torch.float8_e4m3fn if native else torch.uint8)
    assert numoracle.check("matmul", x8, lo8, dtype=None if native else "fp8_e4m3").verdict == "PASS"
    # a CUDA tensor is copied to the host once (python/tests/gpu_check.py on a GPU)
    if torch.cuda.is_available():
        xc = {k: v.cuda() for k, v in inp.items()}
        assert numoracle.check("rms_norm", xc, y.cuda()).verdict == "PASS"


def test_bf16_numpy_ints_not_mistaken():
    """uint16 bits and an fp16 dtype: read as fp16 values, not as bf16."""
    inp = numoracle.inputs("softmax", "2x16", "fp16", "gaussian", 3)
    bits = {"x": inp["x"].view(np.uint16)}
    lo, hi, _ = numoracle.bounds("softmax", inp)
    a = numoracle.check("softmax", bits, lo.view(np.uint16), dtype="fp16")
    assert a.verdict == "PASS"
    b = numoracle.check("softmax", {"x": f32_to_bf16(inp["x"].astype(np.float32))},
                        f32_to_bf16(lo.astype(np.float32)), dtype="bf16")
    assert b.dtype == "bf16"
