"""Loading libnumoracle and declaring its binding entry point (numoracle/bind.h).

The library is looked up, first hit wins:

1. ``$NUMORACLE_LIB``: a path to the shared library (an explicit choice beats an implicit
   one, so a build tree can be tested against an installed package); it must load;
2. next to this package: ``libnumoracle.so`` in the package directory (``meson install``
   puts a link to the installed library there);
3. the system path: the dynamic loader's search (``LD_LIBRARY_PATH``, ``ldconfig``).

:func:`library_path` says which file was loaded and how it was found.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from ctypes import (POINTER, Structure, c_char_p, c_double, c_int, c_int64, c_long, c_uint,
                    c_uint64, c_void_p)
from typing import Optional, Tuple

#: The binding contract this package speaks (bind.h NMO_API_VERSION).
API_VERSION = 2


class BindTensor(Structure):
    """nmo_bind_tensor"""
    _fields_ = [("name", c_char_p), ("dtype", c_char_p), ("ndims", c_int),
                ("dims", POINTER(c_int64)), ("data", c_void_p)]


class BindReq(Structure):
    """nmo_bind_req"""
    _fields_ = [("api_version", c_int), ("op", c_char_p), ("dtype", c_char_p), ("plan", c_char_p),
                ("nshape", c_int), ("shape", POINTER(c_int64)),
                ("n_param", c_int), ("param_names", POINTER(c_char_p)),
                ("param_values", POINTER(c_double)),
                ("n_in", c_int), ("inputs", POINTER(BindTensor)),
                ("n_out", c_int), ("outputs", POINTER(BindTensor)),
                ("max_ulps", c_long), ("engine", c_char_p), ("flags", c_uint),
                ("family", c_char_p), ("seed", c_uint64), ("name", c_char_p)]


# bind.h constants
FLAG_VERDICTS = 1
FLAG_BOUNDS = 2
FLAG_DEVICE_OUT = 4  # NMO_BIND_DEVICE_OUT: outputs are device pointers (the GPU tier)
A_VERDICTS, A_RLO, A_RHI, A_FLAGS, A_LO_BITS, A_HI_BITS = range(6)

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_where: Optional[Tuple[str, str]] = None


class LibraryNotFound(OSError):
    """libnumoracle could not be loaded (the message lists every place tried)."""


def _declare(lib: ctypes.CDLL) -> None:
    R = c_void_p  # nmo_bind_result *
    sig = {
        "nmo_bind_api_version": ([], c_int),
        "nmo_bind_check": ([POINTER(BindReq)], R),
        "nmo_bind_gen": ([POINTER(BindReq)], R),
        "nmo_bind_list": ([c_char_p, c_char_p, c_char_p], R),
        "nmo_bind_status": ([R], c_int),
        "nmo_bind_message": ([R], c_char_p),
        "nmo_bind_json": ([R], c_char_p),
        "nmo_bind_verdict": ([R], c_int),
        "nmo_bind_count": ([R], c_int),
        "nmo_bind_tensor_at": ([R, c_int, POINTER(BindTensor)], c_int),
        "nmo_bind_array": ([R, c_int, c_int, POINTER(c_int64)], c_void_p),
        "nmo_bind_free": ([R], None),
        "nmo_version": ([], c_char_p),
        "nmo_bind_set_device_checker": ([c_void_p], None),
        "nmo_bind_has_device_checker": ([], c_int),
    }
    for name, (args, res) in sig.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = res


def _try_load(path: str) -> ctypes.CDLL:
    # ctypes.CDLL (not PyDLL): every call releases the GIL while the library works.
    lib = ctypes.CDLL(path)
    try:
        _declare(lib)
    except AttributeError as e:
        raise LibraryNotFound(f"{path}: not a libnumoracle with the binding entry point ({e})") from None
    v = lib.nmo_bind_api_version()
    if v != API_VERSION:
        raise LibraryNotFound(f"{path}: binding API version {v}, this package needs {API_VERSION}")
    return lib


def _dlinfo_path(lib: ctypes.CDLL, fallback: str) -> str:
    """The file the dynamic loader actually opened (for a name found on the system path)."""
    try:
        class DlInfo(Structure):
            _fields_ = [("dli_fname", c_char_p), ("dli_fbase", c_void_p),
                        ("dli_sname", c_char_p), ("dli_saddr", c_void_p)]
        libdl = ctypes.CDLL(None)
        info = DlInfo()
        addr = ctypes.cast(lib.nmo_bind_api_version, c_void_p)
        if libdl.dladdr(addr, ctypes.byref(info)) and info.dli_fname:
            return os.path.realpath(info.dli_fname.decode())
    except (AttributeError, OSError):
        pass
    return fallback


def load() -> ctypes.CDLL:
    """The loaded library (loaded on first use)."""
    global _lib, _where
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        env = os.environ.get("NUMORACLE_LIB")
        if env:
            try:
                lib = _try_load(env)
            except OSError as e:
                raise LibraryNotFound(f"NUMORACLE_LIB={env} does not load: {e}") from None
            _lib, _where = lib, (os.path.realpath(env), "NUMORACLE_LIB")
            return _lib
        tried.append("$NUMORACLE_LIB (not set)")
        here = os.path.dirname(os.path.abspath(__file__))
        for name in ("libnumoracle.so", "libnumoracle.so.0", "libnumoracle.dylib"):
            p = os.path.join(here, name)
            if not os.path.exists(p):
                tried.append(p + " (absent)")
                continue
            try:
                lib = _try_load(p)
            except OSError as e:
                tried.append(f"{p} ({e})")
                continue
            _lib, _where = lib, (os.path.realpath(p), "next to the package")
            return _lib
        names = ["libnumoracle.so.0", "libnumoracle.so"]
        found = ctypes.util.find_library("numoracle")
        if found and found not in names:
            names.insert(0, found)
        for name in names:
            try:
                lib = _try_load(name)
            except OSError as e:
                tried.append(f"{name} on the system path ({e})")
                continue
            _lib, _where = lib, (_dlinfo_path(lib, name), "system path")
            return _lib
        raise LibraryNotFound("libnumoracle not found; tried: " + "; ".join(tried) +
                              ". Set NUMORACLE_LIB=/path/to/libnumoracle.so (a build tree: "
                              "NUMORACLE_LIB=build/oracle/libnumoracle.so)")


def library_path() -> str:
    """Path of the libnumoracle that was loaded, and how it was found, e.g.
    ``'/usr/local/lib/x86_64-linux-gnu/libnumoracle.so.0.1.0 (system path)'``."""
    load()
    assert _where is not None
    return f"{_where[0]} ({_where[1]})"


_gpu_state: Optional[Tuple[bool, str]] = None


def gpu() -> Tuple[bool, str]:
    """(True, where) when the GPU tier is installed into the loaded libnumoracle: outputs
    in CUDA memory are then judged there (bind.h NMO_BIND_DEVICE_OUT); else (False, why).
    The tier is libnumoracle_gpu.so of a -Dgpu=cuda|hip|sim build: ``$NUMORACLE_GPU_LIB``,
    else next to the loaded libnumoracle, else the build tree's hip/ beside its oracle/,
    else the system path. Looked up once."""
    global _gpu_state
    if _gpu_state is not None:
        return _gpu_state
    lib = load()
    with _lock:
        if _gpu_state is not None:
            return _gpu_state
        here = os.path.dirname(_where[0]) if _where else ""
        env = os.environ.get("NUMORACLE_GPU_LIB")
        cands = [env] if env else [os.path.join(here, "libnumoracle_gpu.so"),
                                   os.path.join(os.path.dirname(here), "hip", "libnumoracle_gpu.so"),
                                   "libnumoracle_gpu.so"]
        tried = []
        for p in cands:
            if p != "libnumoracle_gpu.so" and not os.path.exists(p):
                tried.append(p + " (absent)")
                continue
            try:
                g = ctypes.CDLL(p)
                g.nmo_gpu_bind_checker.restype = c_void_p
                g.nmo_gpu_bind_platform.restype = c_char_p
                fn = g.nmo_gpu_bind_checker()
            except (OSError, AttributeError) as e:
                tried.append(f"{p} ({e})")
                continue
            lib.nmo_bind_set_device_checker(fn)
            _gpu_state = (True, f"{p} ({g.nmo_gpu_bind_platform().decode()})")
            globals()["_gpu_keep"] = g
            return _gpu_state
        _gpu_state = (False, "no GPU tier (libnumoracle_gpu.so of a -Dgpu=cuda|hip|sim build; set "
                             "NUMORACLE_GPU_LIB): tried " + "; ".join(tried))
        return _gpu_state
