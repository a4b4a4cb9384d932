"""Arrays handed to numoracle: NumPy arrays, PyTorch tensors, and anything exposing
``__array_interface__`` or ``__dlpack__``, seen as packed host memory of a numoracle
storage type, without importing NumPy or PyTorch (a module is used only when the caller
passed one of its arrays, so it is already imported: ``sys.modules``).

NumPy has no bfloat16 or fp8: such data are passed as ``uint16`` / ``uint8`` bit patterns
together with ``dtype="bf16"`` (or an fp8 name), and the raw integers are read as that
format. PyTorch tensors carry bf16 and fp8 natively; tensors on a GPU are copied to the
host once, non-contiguous ones made contiguous. An output in CUDA memory (a torch CUDA
tensor, a DLPack tensor of device type kDLCUDA) stays there when the GPU tier is at hand
(``device_ok``: libnumoracle_gpu.so loaded, see ``_lib.gpu``): its device pointer goes to
the library (``Buf.on_device``), and only the inputs are copied to the host."""

from __future__ import annotations

import ctypes
import sys
from ctypes import POINTER, Structure, c_int32, c_int64, c_uint8, c_uint16, c_uint64, c_void_p
from typing import Any, Optional, Tuple

#: bytes per element of each numoracle storage type
FMT_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1,
             "fp8_e4m3fnuz": 1, "fp8_e5m2fnuz": 1, "int32": 4, "int64": 8}

# names a caller may write for dtype= (the library accepts more; these are resolved here
# so that a raw uint16 array can be matched against them)
_ALIASES = {"float64": "fp64", "double": "fp64", "float32": "fp32", "float": "fp32",
            "bfloat16": "bf16", "float16": "fp16", "half": "fp16", "e4m3": "fp8_e4m3",
            "float8_e4m3fn": "fp8_e4m3", "fp8_e4m3fn": "fp8_e4m3", "e5m2": "fp8_e5m2",
            "float8_e5m2": "fp8_e5m2", "float8_e4m3fnuz": "fp8_e4m3fnuz",
            "float8_e5m2fnuz": "fp8_e5m2fnuz"}

# element types by name, as NumPy (and ml_dtypes), PyTorch and DLPack spell them; None:
# raw bits that take the dtype= of the call
_BY_NAME = {"float64": "fp64", "float32": "fp32", "float16": "fp16", "bfloat16": "bf16",
            "float8_e4m3fn": "fp8_e4m3", "float8_e5m2": "fp8_e5m2",
            "float8_e4m3fnuz": "fp8_e4m3fnuz", "float8_e5m2fnuz": "fp8_e5m2fnuz",
            "int32": "int32", "int64": "int64", "uint16": None, "int16": None, "uint8": None}

_TYPESTR = {"f8": "float64", "f4": "float32", "f2": "float16", "i4": "int32", "i8": "int64",
            "u2": "uint16", "i2": "int16", "u1": "uint8"}


def canonical_dtype(name: Optional[str]) -> Optional[str]:
    """numoracle's name for a dtype= argument (unknown names pass through: the library
    names them in its error)."""
    if name is None:
        return None
    if not isinstance(name, str):  # a NumPy or PyTorch dtype object
        name = str(name).replace("torch.", "")
    n = name.strip()
    return _ALIASES.get(n.lower(), n)


class Buf:
    """One array as packed host memory: numoracle dtype name, dims, address; ``keep``
    holds whatever keeps the memory alive (the array, a contiguous or host copy, a
    DLPack capsule). ``kind`` is the family of the original ("numpy", "torch", "other")
    so that results can be handed back in the same kind."""

    __slots__ = ("dtype", "shape", "ptr", "keep", "kind", "device", "on_device", "host")

    def __init__(self, dtype: str, shape: Tuple[int, ...], ptr: int, keep: Any, kind: str,
                 device: Optional[Any] = None, on_device: bool = False, host: Any = None):
        self.dtype, self.shape, self.ptr, self.keep, self.kind = dtype, shape, ptr, keep, kind
        self.device = device
        self.on_device = on_device  # ptr is device memory (never read from the host)
        self.host = host            # on_device: a callable giving the bytes (a failure's repro)

    def nbytes(self) -> int:
        n = FMT_BYTES.get(self.dtype, 0)
        for d in self.shape:
            n *= d
        return n

    def tobytes(self) -> bytes:
        if self.on_device:
            return self.host() if self.host else b""
        return ctypes.string_at(self.ptr, self.nbytes()) if self.nbytes() else b""


def _raw(elem: str, hint: Optional[str], what: str, Error) -> str:
    """Storage type of raw-bits elements (uint16, uint8, int16) under dtype=hint."""
    size = {"uint16": 2, "int16": 2, "uint8": 1}[elem]
    if hint is not None and FMT_BYTES.get(hint) == size and hint not in ("int32", "int64"):
        return hint
    want = "'bf16' or 'fp16'" if size == 2 else "'fp8_e4m3' or 'fp8_e5m2' (or an fnuz one)"
    raise Error(2, f"{what}: a {elem} array holds raw bit patterns; say which format with dtype={want}"
                   f"{'' if hint is None else f' (dtype={hint!r} has {FMT_BYTES.get(hint, 0)}-byte elements)'}")


def _elem(name: str, hint: Optional[str], what: str, Error) -> str:
    if name not in _BY_NAME:
        raise Error(7, f"{what}: element type {name} is not a numoracle storage type "
                       "(fp64, fp32, fp16, bf16, fp8; int32/int64 for labels)")
    t = _BY_NAME[name]
    return _raw(name, hint, what, Error) if t is None else t


def _numpy(obj, hint, what, Error) -> Buf:
    np = sys.modules["numpy"]
    a = obj
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    dt = _elem(a.dtype.name, hint, what, Error)
    return Buf(dt, tuple(int(d) for d in a.shape), a.__array_interface__["data"][0] if a.size else 0,
               a, "numpy")


def _torch(obj, hint, what, Error, device_ok=False) -> Buf:
    t = obj.detach()
    device = t.device
    if t.layout is not sys.modules["torch"].strided:
        raise Error(2, f"{what}: a {t.layout} tensor; pass a dense (strided) one")
    if device_ok and t.device.type == "cuda" and t.is_contiguous() and not t.is_conj() and not t.is_neg():
        dt = _elem(str(t.dtype).replace("torch.", ""), hint, what, Error)
        sys.modules["torch"].cuda.synchronize(t.device)  # the kernel that wrote it has finished
        return Buf(dt, tuple(int(d) for d in t.shape), t.data_ptr() if t.numel() else 0, t, "torch", device,
                   on_device=True, host=lambda: t.cpu().contiguous().view(sys.modules["torch"].uint8).numpy().tobytes())
    if t.device.type != "cpu":
        t = t.to("cpu")  # once: the check runs on the host
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    if not t.is_contiguous():
        t = t.contiguous()
    dt = _elem(str(t.dtype).replace("torch.", ""), hint, what, Error)
    return Buf(dt, tuple(int(d) for d in t.shape), t.data_ptr() if t.numel() else 0, t, "torch", device)


def _array_interface(obj, hint, what, Error) -> Buf:
    ai = obj.__array_interface__
    ts = ai.get("typestr", "")
    if len(ts) < 3 or ts[0] not in "<|=" or ts[1:] not in _TYPESTR:
        raise Error(7, f"{what}: array interface typestr {ts!r} is not a numoracle storage type "
                       "(little-endian f8 f4 f2, u2/u1 raw bits with dtype=, i4/i8 labels)")
    shape = tuple(int(d) for d in ai.get("shape", ()))
    strides = ai.get("strides")
    size = int(ts[2:])
    if strides is not None:
        want, s = [], size
        for d in reversed(shape):
            want.append(s)
            s *= d
        if tuple(reversed(want)) != tuple(strides) and all(d > 1 for d in shape):
            raise Error(2, f"{what}: a strided (non-contiguous) array; pass a contiguous one")
    data = ai.get("data")
    if isinstance(data, tuple):
        ptr = int(data[0])
    else:  # an object exposing the buffer protocol
        ptr, keep = _address(memoryview(data if data is not None else obj))
        obj = (obj, keep)
    return Buf(_elem(_TYPESTR[ts[1:]], hint, what, Error), shape, ptr, obj, "other")


# struct format characters (memoryview.format) -> element names
_STRUCT = {"d": "float64", "f": "float32", "e": "float16", "i": "int32", "l": "int64", "q": "int64",
           "H": "uint16", "h": "int16", "B": "uint8"}


def _memoryview(mv: memoryview, hint, what, Error) -> Buf:
    f = mv.format.lstrip("@=<")
    if f not in _STRUCT or (f == "l" and mv.itemsize != 8):
        raise Error(7, f"{what}: memoryview format {mv.format!r} is not a numoracle storage type")
    if not mv.c_contiguous:
        raise Error(2, f"{what}: a strided (non-contiguous) memoryview; pass a contiguous one")
    ptr, keep = _address(mv)
    return Buf(_elem(_STRUCT[f], hint, what, Error), tuple(int(d) for d in mv.shape), ptr, keep, "other")


def _address(mv: memoryview):
    """Address of a contiguous buffer, and what keeps it alive (ctypes takes the address
    of writable buffers only: a read-only one is copied once)."""
    if not mv.nbytes:
        return 0, mv
    flat = mv.cast("B") if mv.ndim != 1 or mv.format != "B" else mv
    if flat.readonly:
        flat = bytearray(flat)
    return ctypes.addressof(ctypes.c_char.from_buffer(flat)), (mv, flat)


class _DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class _DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class _DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", _DLDevice), ("ndim", c_int32), ("dtype", _DLDataType),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


# dlpack.h DLDataTypeCode, bits -> element name
_DL_CODES = {(2, 64): "float64", (2, 32): "float32", (2, 16): "float16", (4, 16): "bfloat16",
             (0, 32): "int32", (0, 64): "int64", (1, 16): "uint16", (0, 16): "int16", (1, 8): "uint8",
             (10, 8): "float8_e4m3fn", (11, 8): "float8_e4m3fnuz", (12, 8): "float8_e5m2",
             (13, 8): "float8_e5m2fnuz"}
_DL_HOST = (1, 3, 11)  # kDLCPU, kDLCUDAHost, kDLROCMHost: readable from the host
_DL_CUDA = 2  # kDLCUDA: the GPU tier reads it in place (device_ok)


def _dlpack(obj, hint, what, Error, device_ok=False) -> Buf:
    dev = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (1, 0)
    on_dev = device_ok and int(dev[0]) == _DL_CUDA
    if on_dev:
        cap = obj.__dlpack__()  # stream None: the producer orders its work before ours (DLPack)
    elif int(dev[0]) not in _DL_HOST:
        try:  # DLPack 1.0 consumers may ask the producer for a host copy
            cap = obj.__dlpack__(dl_device=(1, 0), copy=True)
        except (TypeError, BufferError, NotImplementedError) as e:
            raise Error(2, f"{what}: device memory (DLPack device {tuple(dev)}) that its producer will not "
                           f"copy to the host ({e}); copy it to the host first") from None
    else:
        cap = obj.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = c_void_p, [ctypes.py_object, ctypes.c_char_p]
    # a legacy capsule ("dltensor") holds a DLManagedTensor, whose first member is the
    # DLTensor; it stays valid while the capsule lives (its destructor calls the deleter)
    ptr = get(cap, b"dltensor")
    t = _DLTensor.from_address(ptr)
    if not (on_dev and t.device.device_type == _DL_CUDA) and t.device.device_type not in _DL_HOST:
        raise Error(2, f"{what}: DLPack tensor on device type {t.device.device_type}; copy it to the host first")
    key = (t.dtype.code, t.dtype.bits)
    if t.dtype.lanes != 1 or key not in _DL_CODES:
        raise Error(7, f"{what}: DLPack dtype code {t.dtype.code} bits {t.dtype.bits} lanes {t.dtype.lanes} "
                       "is not a numoracle storage type")
    shape = tuple(int(t.shape[i]) for i in range(t.ndim))
    if t.strides:
        s, ok = 1, True
        for i in reversed(range(t.ndim)):
            ok &= shape[i] == 1 or int(t.strides[i]) == s
            s *= shape[i]
        if not ok:
            raise Error(2, f"{what}: a strided (non-contiguous) DLPack tensor; pass a contiguous one")
    return Buf(_elem(_DL_CODES[key], hint, what, Error), shape, (t.data or 0) + t.byte_offset, (obj, cap),
               "other", on_device=on_dev)


def as_buffer(obj: Any, hint: Optional[str], what: str, Error, device_ok: bool = False) -> Buf:
    """``obj`` as packed host memory (see the module doc). ``hint``: the call's dtype
    (numoracle name), which raw-bits arrays take; ``what`` names the tensor in errors;
    ``device_ok``: a CUDA tensor may stay in device memory (``Buf.on_device``)."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(obj, np.ndarray):
        return _numpy(obj, hint, what, Error)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        return _torch(obj, hint, what, Error, device_ok)
    if isinstance(obj, memoryview):
        return _memoryview(obj, hint, what, Error)
    if hasattr(obj, "__array_interface__"):
        return _array_interface(obj, hint, what, Error)
    if hasattr(obj, "__dlpack__"):
        return _dlpack(obj, hint, what, Error, device_ok)
    if hasattr(obj, "__cuda_array_interface__"):
        raise Error(2, f"{what}: a device array without a host view; copy it to the host (or pass a torch tensor)")
    raise Error(2, f"{what}: {type(obj).__name__} is not an array (NumPy, PyTorch, __array_interface__ or "
                   "__dlpack__)")


class Maker:
    """Arrays handed back (per-element verdicts, R, bounds, generated inputs) in the kind
    of the caller's arrays: NumPy for NumPy, PyTorch (on the caller's device) for
    PyTorch, else a memoryview of that shape, so that nothing is imported that the caller
    did not use."""

    def __init__(self, kind: str, device: Any = None):
        self.kind, self.device = kind, device

    @classmethod
    def like(cls, bufs) -> "Maker":
        for b in bufs:
            if b.kind in ("torch", "numpy"):
                return cls(b.kind, b.device)
        return cls("other")

    def make(self, raw: bytes, dtype: str, shape: Tuple[int, ...]):
        """An array of numoracle dtype ``dtype`` (or 'uint8') from its packed bytes."""
        if self.kind == "torch":
            torch = sys.modules["torch"]
            tdt = {"fp64": torch.float64, "fp32": torch.float32, "bf16": torch.bfloat16,
                   "fp16": torch.float16, "int32": torch.int32, "int64": torch.int64,
                   "uint8": torch.uint8, "tf32": torch.float32}
            for name, attr in (("fp8_e4m3", "float8_e4m3fn"), ("fp8_e5m2", "float8_e5m2"),
                               ("fp8_e4m3fnuz", "float8_e4m3fnuz"), ("fp8_e5m2fnuz", "float8_e5m2fnuz")):
                if hasattr(torch, attr):
                    tdt[name] = getattr(torch, attr)
            if dtype not in tdt:  # fp8 before PyTorch 2.1: the bits, as uint8 (as for NumPy)
                tdt[dtype] = torch.uint8
            buf = bytearray(raw)
            t = torch.frombuffer(buf, dtype=torch.uint8) if buf else torch.empty(0, dtype=torch.uint8)
            t = t.view(tdt[dtype]).reshape(shape).clone()
            if self.device is not None and self.device.type != "cpu":
                t = t.to(self.device)
            return t
        if self.kind == "numpy":
            np = sys.modules["numpy"]
            ndt = {"fp64": np.float64, "fp32": np.float32, "tf32": np.float32, "fp16": np.float16,
                   "bf16": np.uint16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8}
            return np.frombuffer(bytearray(raw), dtype=ndt.get(dtype, np.uint8)).reshape(shape)
        # memoryview cannot cast to "e": fp16, like bf16, comes as raw uint16 bits ("H")
        fmt = {"fp64": "d", "fp32": "f", "tf32": "f", "fp16": "H", "bf16": "H", "int32": "i", "int64": "q"}
        mv = memoryview(bytearray(raw)).cast("B")
        f = fmt.get(dtype, "B")
        if not shape or 0 in shape:
            return mv.cast(f)
        return mv.cast(f, shape)
