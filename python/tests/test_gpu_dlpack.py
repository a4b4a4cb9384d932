"""Outputs in CUDA memory (issue 22): a DLPack producer of device type kDLCUDA hands its
pointer to the GPU tier (libnumoracle_gpu.so, bind.h NMO_BIND_DEVICE_OUT) without a host
copy; the report must be the host path's, element for element.

With a simulator build (-Dgpu=sim: "device memory" is host memory, so a kDLCUDA tensor
over a NumPy buffer is a valid device tensor there) and NUMORACLE_GPU_LIB pointing at its
libnumoracle_gpu.so, rms_norm, swiglu and matmul go through the device path. Without a
GPU tier, the same producer falls back to a host copy with a warning naming what is
missing. On an H200, hip/validate/gpu_dlpack_torch.py does the same with torch tensors."""
import ctypes
import warnings

import numpy as np
import pytest

import numoracle
from numoracle import _lib


class _DLManaged(ctypes.Structure):
    _fields_ = [("t", numoracle._arrays._DLTensor), ("ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class FakeCuda:
    """A DLPack producer over a host array that says kDLCUDA (device 0); on request
    (dl_device=(1, 0), copy=True) it hands the host view, as a DLPack 1.0 producer would."""

    def __init__(self, a):
        self.a = np.ascontiguousarray(a)
        self.shape = (ctypes.c_int64 * self.a.ndim)(*self.a.shape)
        code = {np.dtype(np.uint16): (1, 16), np.dtype(np.float32): (2, 32)}[self.a.dtype]
        self.keep = []

        def cap(dev):
            m = _DLManaged()
            m.t.data = self.a.ctypes.data
            m.t.device.device_type, m.t.device.device_id = dev, 0
            m.t.ndim = self.a.ndim
            m.t.dtype.code, m.t.dtype.bits, m.t.dtype.lanes = code[0], code[1], 1
            m.t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
            m.t.strides = None
            m.t.byte_offset = 0
            self.keep.append(m)
            new = ctypes.pythonapi.PyCapsule_New
            new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
            return new(ctypes.addressof(m), b"dltensor", None)

        self.cap = cap

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None, dl_device=None, copy=None):
        if dl_device is not None and tuple(dl_device) == (1, 0):
            return self.cap(1)
        return self.cap(2)


def _to_f32(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def _to_bf16(f):
    u = f.astype(np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def _cases():
    inp = numoracle.inputs("rms_norm", "16x257", "bf16", "gaussian", seed=3)
    x, w = _to_f32(inp["x"]), _to_f32(inp["w"])
    r = 1 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32) + np.float32(1e-6))
    good = _to_bf16(x * r * w)
    bad = good.copy()
    bad[3, 7] ^= 0x40  # a wrong element
    yield "rms_norm", inp, good
    yield "rms_norm", inp, bad
    s = numoracle.inputs("swiglu", "8x100", "bf16", "gaussian", seed=5)
    a, b = _to_f32(s[list(s)[0]]), _to_f32(s[list(s)[1]])
    yield "swiglu", s, _to_bf16(a / (1 + np.exp(-a)) * b)
    m = numoracle.inputs("matmul", "9x17x300", "bf16", "gaussian", seed=2)
    A, B = _to_f32(m["A"]), _to_f32(m["B"])
    yield "matmul", m, _to_bf16(A.astype(np.float64) @ B.astype(np.float64))


def _arr(v):
    return np.asarray(list(v.values())[0] if isinstance(v, dict) else v)


def _same(h, d):
    assert h.verdict == d.verdict
    assert (h.n, h.n_pass, h.n_fail, h.n_inconclusive) == (d.n, d.n_pass, d.n_fail, d.n_inconclusive)
    assert np.array_equal(_arr(h.verdicts), _arr(d.verdicts))
    assert np.array_equal(_arr(h.r_lo), _arr(d.r_lo), equal_nan=True)
    assert np.array_equal(_arr(h.r_hi), _arr(d.r_hi), equal_nan=True)
    assert (h.worst is None) == (d.worst is None)
    if h.worst is not None:
        for f in ("index", "verdict", "candidate", "r_lo", "r_hi", "outside_ulps", "width_ulps"):
            assert getattr(h.worst, f) == getattr(d.worst, f), f


def test_device_path_equals_host_path():
    ok, where = _lib.gpu()
    if not ok:
        pytest.skip(where)
    if "sim" not in where:
        pytest.skip(f"a kDLCUDA producer over host memory is valid on the simulator only ({where})")
    g = _lib._gpu_keep
    g.nmo_gpu_bind_device_checks.restype = ctypes.c_long
    n, d0 = 0, g.nmo_gpu_bind_device_checks()
    for op, inp, out in _cases():
        h = numoracle.check(op, inp, out, dtype="bf16", details=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no fallback warning: the device path ran
            d = numoracle.check(op, inp, FakeCuda(out), dtype="bf16", details=True)
        _same(h, d)
        n += 1
    assert n == 4
    assert g.nmo_gpu_bind_device_checks() - d0 == 4  # all four judged in "device" memory


def test_no_gpu_tier_falls_back_with_a_message():
    inp = numoracle.inputs("rms_norm", "4x64", "bf16", "gaussian", seed=1)
    x, w = _to_f32(inp["x"]), _to_f32(inp["w"])
    r = 1 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32) + np.float32(1e-6))
    out = _to_bf16(x * r * w)
    ok, why = _lib.gpu()
    if ok:
        pytest.skip(f"a GPU tier was found next to the library ({why})")
    numoracle._api._gpu_warned = False
    with pytest.warns(RuntimeWarning, match="copied to the host.*libnumoracle_gpu.so"):
        d = numoracle.check("rms_norm", inp, FakeCuda(out), dtype="bf16")
    h = numoracle.check("rms_norm", inp, out, dtype="bf16")
    assert d.verdict == h.verdict == "PASS" and d.n_pass == h.n_pass
