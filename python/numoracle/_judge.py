"""The four-judgment matrix (forward and gradient x accuracy and invariance) for a Python
callable, under the same contract as ``numoracle judge --contract`` (contracts/README.md),
through ``nmo_bind_judge`` (numoracle/bind.h): the library loads and resolves the contract,
builds every batch composition (nmo_inv_judge) and every accuracy case (nmo_check), and
calls back here to run the kernel; this module only turns the library's strided host
buffers into NumPy arrays or PyTorch tensors (on the kernel's device), writes the outputs
back bit for bit, and records each call's provenance (backend, device, output dtypes,
TF32 / reduced-precision reduction / deterministic-algorithm settings).

The callable is called with the operator's tensors and parameters by name
(``numoracle.ops()[op]``), e.g. ``fn(x=..., w=..., eps=1e-6)`` for rms_norm, and returns
its outputs: one array, a sequence in the operator's order, or a dict by name. Inputs
may be strided (the ``stride:S`` composition) and must not be written.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from ctypes import POINTER, Structure, c_char, c_char_p, c_double, c_int, c_int64, c_uint, c_void_p
from typing import Any, Callable, Dict, List, Mapping, Optional

from . import _lib
from ._api import Error, _result, _s

JUDGMENTS = ("forward_accuracy", "gradient_accuracy", "forward_invariance", "gradient_invariance")
_UNSUPPORTED = 11  # NMO_ERR_UNSUPPORTED: the callable declines this composition
_GENERIC = 1


class _View(Structure):
    """nmo_bind_view"""
    _fields_ = [("name", c_char_p), ("dtype", c_char_p), ("ndims", c_int), ("dims", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("span", c_int64), ("data", c_void_p),
                ("got_dtype", c_char * 16)]


class _Prov(Structure):
    """nmo_bind_prov"""
    _fields_ = [("backend", c_char * 16), ("device", c_char * 32), ("tf32", c_int), ("rpr", c_int),
                ("deterministic", c_int), ("device_name", c_char * 64), ("cublas_ws", c_char * 32)]


_RUN = ctypes.CFUNCTYPE(c_int, c_void_p, c_char_p, c_int, POINTER(c_char_p), POINTER(c_double), c_int,
                        POINTER(_View), c_int, POINTER(_View), POINTER(_Prov), POINTER(c_char), c_int)


class _Req(Structure):
    """nmo_bind_judge_req"""
    _fields_ = [("api_version", c_int), ("contract", c_char_p), ("op", c_char_p), ("dtype", c_char_p),
                ("profile", c_char_p), ("judgments", c_uint), ("run_fwd", _RUN), ("run_grad", _RUN),
                ("ctx", c_void_p), ("label", c_char_p), ("prov", _Prov)]


_declared = False


def _lib_judge():
    global _declared
    lib = _lib.load()
    if not _declared:
        lib.nmo_bind_judge.argtypes = [POINTER(_Req)]
        lib.nmo_bind_judge.restype = c_void_p
        _declared = True
    return lib


# ---- the contract ---------------------------------------------------------------------------

def default_contract() -> str:
    """The contract used when none is given: ``$NUMORACLE_CONTRACT``, else the source
    tree's contracts/default.json next to this package (python/numoracle -> contracts/)."""
    env = os.environ.get("NUMORACLE_CONTRACT")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    cand = os.path.normpath(os.path.join(here, "..", "..", "contracts", "default.json"))
    if os.path.isfile(cand):
        return cand
    raise Error(2, f"no contract given, $NUMORACLE_CONTRACT unset and {cand} absent: pass contract=PATH")


# ---- provenance -----------------------------------------------------------------------------

def _get(obj, name, default=None):
    """getattr that survives torch.backends' __getattr__ (it raises AssertionError for a
    name the installed version lacks)."""
    try:
        return getattr(obj, name, default)
    except Exception:  # noqa: BLE001
        return default


def _torch_settings(dtype: str) -> Dict[str, Optional[bool]]:
    """What PyTorch's global settings say now (None: not recorded: torch not imported)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {"tf32": None, "reduced_precision_reduction": None, "deterministic": None}
    m = torch.backends.cuda.matmul
    tf32 = bool(_get(m, "allow_tf32", False))
    # PyTorch >= 2.9 also spells it fp32_precision ("tf32" / "ieee"); either means TF32
    fp = _get(m, "fp32_precision")
    if isinstance(fp, str) and fp.lower() == "tf32":
        tf32 = True
    cudnn = _get(torch.backends, "cudnn")
    if cudnn is not None and _get(cudnn, "allow_tf32", False) and torch.cuda.is_available():
        tf32 = True  # convolutions on a GPU: cuDNN's own TF32 switch (on by default)
    rpr = False
    if dtype == "bf16":
        rpr = bool(_get(m, "allow_bf16_reduced_precision_reduction", False))
    elif dtype == "fp16":
        rpr = bool(_get(m, "allow_fp16_reduced_precision_reduction", False))
    return {"tf32": tf32, "reduced_precision_reduction": rpr,
            "deterministic": bool(torch.are_deterministic_algorithms_enabled())}


def _device_name(kind: str, device: Optional[str]) -> Optional[str]:
    """The model of the device a run used ("NVIDIA H200"; "cpu" on the host); None when
    it cannot be told."""
    if not device:
        return None
    first = device.split(",")[-1]
    if kind != "torch" or not first.startswith("cuda"):
        return "cpu" if first.startswith("cpu") else None
    torch = sys.modules.get("torch")
    try:
        return torch.cuda.get_device_name(torch.device(first)) if torch is not None else None
    except Exception:  # noqa: BLE001 -- no such device: not recorded
        return None


def record_provenance(kind: str, dtype: str, device: Optional[str]) -> Dict[str, Any]:
    """The record of a run of a ``kind`` ("numpy" or "torch") kernel storing ``dtype`` on
    ``device``: backend "python", the device and its model (``device_name``), the
    settings that change a kernel's arithmetic, and ``cublas_workspace``
    (CUBLAS_WORKSPACE_CONFIG now: "unset" without one). NumPy has no TF32 and no
    reduced-precision reductions (recorded off) and nothing that states whether its BLAS
    is deterministic (not recorded)."""
    if kind == "torch":
        st = _torch_settings(dtype)
    else:
        st = {"tf32": False, "reduced_precision_reduction": False, "deterministic": None}
    return {"backend": "python", "device": device, "device_name": _device_name(kind, device), **st,
            "cublas_workspace": os.environ.get("CUBLAS_WORKSPACE_CONFIG") or "unset"}


def _fill_prov(p: _Prov, rec: Mapping[str, Any]) -> None:
    def b(v):
        return -1 if v is None else int(bool(v))
    p.backend = (rec.get("backend") or "").encode()[:15]
    p.device = (rec.get("device") or "").encode()[:31]
    p.tf32 = b(rec.get("tf32"))
    p.rpr = b(rec.get("reduced_precision_reduction"))
    p.deterministic = b(rec.get("deterministic"))
    p.device_name = (rec.get("device_name") or "").encode()[:63]
    p.cublas_ws = (rec.get("cublas_workspace") or "").encode()[:31]


# ---- buffers ----------------------------------------------------------------------------------

_ESZ = {"fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1,
        "fp8_e4m3fnuz": 1, "fp8_e5m2fnuz": 1}


def _np_dtype(np, dt: str):
    return {"fp64": np.float64, "fp32": np.float32, "tf32": np.float32, "fp16": np.float16,
            "bf16": np.uint16}.get(dt, np.uint8)


def _np_view(np, v: _View, writable: bool):
    dt = v.dtype.decode()
    esz = _ESZ[dt]
    nd = v.ndims
    dims = tuple(v.dims[i] for i in range(nd))
    strides = tuple(v.strides[i] * esz for i in range(nd))
    raw = (c_char * (v.span * esz)).from_address(v.data)
    a = np.ndarray(dims, dtype=_np_dtype(np, dt), buffer=raw, strides=strides)
    if not writable:
        a.flags.writeable = False
    return a


def _torch_dtype(torch, dt: str):
    return {"fp64": torch.float64, "fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16,
            "fp16": torch.float16}[dt]


def _torch_view(torch, v: _View):
    """A CPU tensor over the library's strided buffer (no copy)."""
    dt = v.dtype.decode()
    esz = _ESZ[dt]
    raw = (c_char * (v.span * esz)).from_address(v.data)
    flat = torch.frombuffer(raw, dtype=torch.uint8).view(_torch_dtype(torch, dt))
    nd = v.ndims
    return flat.as_strided(tuple(v.dims[i] for i in range(nd)), tuple(v.strides[i] for i in range(nd)))


def _to_device(torch, t, device):
    """t on device with the same strides (a strided composition stays strided there)."""
    if device is None or str(device) == "cpu":
        return t
    span = 1 + sum((d - 1) * s for d, s in zip(t.shape, t.stride()))
    buf = torch.empty(span, dtype=t.dtype, device=device)
    out = buf.as_strided(t.shape, t.stride())
    out.copy_(t)
    return out


def _name_of(kind: str, arr, want: str) -> str:
    """numoracle's dtype name for a returned array (NumPy uint16 = bf16 bits, as elsewhere
    in the package, only where bf16 is expected)."""
    s = str(arr.dtype).replace("torch.", "")
    m = {"float64": "fp64", "float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}
    if s == "uint16" and want == "bf16":
        return "bf16"
    return m.get(s, s)


class _Runner:
    """Holds the callables and what the calls recorded; the ctypes callback must not let
    an exception escape (it would be printed and 0 returned), so the first one is kept
    and re-raised after the library returns."""

    def __init__(self, fwd, grad, kind: str, device, dtype: str, provenance):
        self.fns = {"fwd": fwd, "grad": grad}
        self.kind, self.device, self.dtype = kind, device, dtype
        self.provenance = provenance
        self.exc: Optional[BaseException] = None
        self.calls = 0
        self.cb_fwd = _RUN(lambda *a: self._call("fwd", *a))
        self.cb_grad = _RUN(lambda *a: self._call("grad", *a))

    def _record(self, outs: List[Any], before: Optional[str] = None) -> Dict[str, Any]:
        devs = [before] if before else []
        for o in outs:
            d = "cpu" if self.kind == "numpy" else str(getattr(o, "device", "cpu"))
            if d not in devs:
                devs.append(d)
        rec = record_provenance(self.kind, self.dtype, ",".join(devs) if devs else None)
        if callable(self.provenance):
            rec = dict(self.provenance(rec))
        elif self.provenance:
            rec.update(self.provenance)
        return rec

    def _fake_inputs(self, n_in, ins) -> None:
        """A test's faked record may name input dtypes ({"input_dtypes": {"x": "fp64"}})."""
        fake = self.provenance["input_dtypes"]
        for k in range(n_in):
            name = ins[k].name.decode()
            if name in fake:
                ins[k].got_dtype = str(fake[name]).encode()[:15]

    def _accepted(self, fn, op: str, kw: Dict[str, Any]) -> Dict[str, Any]:
        """The arguments fn takes (all of them when it has **kwargs). A parameter fn does
        not take is refused unless it has the operator's default value: the kernel would
        silently compute another case (an input it does not take it simply does not read)."""
        import inspect

        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return kw
        ps = sig.parameters.values()
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in ps):
            return kw
        names = {p.name for p in ps if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                  inspect.Parameter.KEYWORD_ONLY)}
        from ._api import ops
        defaults = {p["name"]: p["default"] for p in ops()[op]["params"]}
        for k, v in kw.items():
            if k not in names and k in defaults and v != defaults[k]:
                raise ValueError(f"{getattr(fn, '__name__', fn)} takes no parameter {k}, but the case sets "
                                 f"{k}={v} (default {defaults[k]})")
        return {k: v for k, v in kw.items() if k in names}

    def _call(self, which, _ctx, op, n_param, pnames, pvals, n_in, ins, n_out, outs, prov, msg, msg_n):
        try:
            return self._run(which, op.decode(), n_param, pnames, pvals, n_in, ins, n_out, outs, prov)
        except BaseException as e:  # noqa: BLE001 -- re-raised by judge()
            if isinstance(e, NotImplementedError):
                text = f"{type(e).__name__}: {e}".encode()[: msg_n - 1]
                ctypes.memmove(msg, text + b"\0", len(text) + 1)
                return _UNSUPPORTED
            if self.exc is None:
                self.exc = e
            text = f"{type(e).__name__}: {e}".encode(errors="replace")[: msg_n - 1]
            ctypes.memmove(msg, text + b"\0", len(text) + 1)
            return _GENERIC

    def _run(self, which, op, n_param, pnames, pvals, n_in, ins, n_out, outs, prov):
        self.calls += 1
        fn = self.fns[which]
        kw: Dict[str, Any] = {}
        if self.kind == "numpy":
            np = sys.modules.get("numpy") or __import__("numpy")
            for k in range(n_in):
                v = ins[k]
                kw[v.name.decode()] = _np_view(np, v, False) if v.data else None
        else:
            torch = sys.modules.get("torch") or __import__("torch")
            for k in range(n_in):
                v = ins[k]
                kw[v.name.decode()] = _to_device(torch, _torch_view(torch, v), self.device) if v.data else None
        for i in range(n_param):
            kw[pnames[i].decode()] = float(pvals[i])
        # the dtype each input reaches the kernel in (after the transfer to its device)
        for k in range(n_in):
            v = ins[k]
            a = kw.get(v.name.decode())
            v.got_dtype = _name_of(self.kind, a, v.dtype.decode()).encode()[:15] if a is not None else b""
        if isinstance(self.provenance, Mapping) and "input_dtypes" in self.provenance:
            self._fake_inputs(n_in, ins)
        res = fn(**self._accepted(fn, op, kw))
        names = [outs[k].name.decode() for k in range(n_out)]
        if isinstance(res, Mapping):
            missing = [n for n in names if n not in res]
            if missing:
                raise ValueError(f"{op}: the callable returned no {', '.join(missing)} (outputs: {', '.join(names)})")
            got = [res[n] for n in names]
        elif isinstance(res, (tuple, list)):
            got = list(res)
        else:
            got = [res]
        if len(got) != n_out:
            raise ValueError(f"{op}: the callable returned {len(got)} output(s); {op} has {n_out} ({', '.join(names)})")
        _fill_prov(prov.contents, self._record(got))
        for k in range(n_out):
            v = outs[k]
            want = v.dtype.decode()
            g = got[k]
            gname = _name_of(self.kind, g, want)
            v.got_dtype = gname.encode()[:15]
            if gname != want:
                continue  # dtype drift: the library rejects the run (nothing written)
            dims = tuple(v.dims[i] for i in range(v.ndims))
            if tuple(g.shape) != dims:
                raise ValueError(f"{op}: output {names[k]} has shape {tuple(g.shape)}; expected {dims}")
            if self.kind == "numpy":
                np = sys.modules["numpy"]
                _np_view(np, v, True)[...] = np.asarray(g)
            else:
                torch = sys.modules["torch"]
                _torch_view(torch, v).copy_(g.detach().to("cpu"))
        return 0


# ---- results ----------------------------------------------------------------------------------

class Cell:
    """One judgment: ``verdict`` (PASS, FAIL, INCONCLUSIVE, N/A, SKIPPED, REJECTED),
    ``required``, ``detail`` (one line: why), ``configurations`` (invariance: each batch
    composition with its first difference), ``provenance`` (the first call's record)."""

    def __init__(self, d: dict):
        self._d = d
        self.judgment: str = d["judgment"]
        self.operator: str = d["operator"]
        self.verdict: str = d["verdict"]
        self.required: bool = d["required"]
        self.detail: str = d["detail"]
        self.configurations: List[dict] = d.get("configurations", [])
        self.provenance: Optional[dict] = d.get("provenance")

    def first_difference(self) -> Optional[dict]:
        """The first composition that differs: {"configuration", "output", "row",
        "element", "reference", "candidate", "reference_bits", "candidate_bits"}."""
        for c in self.configurations:
            if "first_difference" in c:
                return {"configuration": c["name"], **c["first_difference"]}
        return None

    def to_dict(self) -> dict:
        return self._d

    def __repr__(self) -> str:
        return f"<numoracle.Cell {self.operator} {self.judgment} {self.verdict}>"


class Matrix:
    """The cells judged for one (operator, dtype, profile): ``cells`` by judgment name,
    ``verdict`` (PASS when every required cell PASSes), ``exit`` as the CLI's judge (0 / 1
    a required FAIL or REJECTED / 3 a required INCONCLUSIVE or SKIPPED)."""

    def __init__(self, d: dict):
        self._d = d
        self.op: str = d["op"]
        self.dtype: str = d["dtype"]
        self.profile: str = d["profile"]["name"]
        self.cells: Dict[str, Cell] = {c["judgment"]: Cell(c) for c in d["cells"]}
        self.verdict: str = d["summary"]["verdict"]
        self.exit: int = int(d["summary"]["exit"])

    def to_dict(self) -> dict:
        return self._d

    def text(self) -> str:
        """One line as the CLI's matrix prints it, then the detail of every cell that is
        not PASS."""
        cols = [self.cells[j].verdict if j in self.cells else "-" for j in JUDGMENTS]
        lines = [f"{self.op:<20} {self.dtype:<5} " + " ".join(f"{c:<19}" for c in cols).rstrip()]
        for j in JUDGMENTS:
            c = self.cells.get(j)
            if c is not None and c.verdict != "PASS":
                lines.append(f"  {c.operator} {j}: {c.verdict}{' (required)' if c.required else ''}: {c.detail}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<numoracle.Matrix {self.op} {self.dtype} {self.profile} {self.verdict}>"


def judge(op: str, dtype: str, forward: Optional[Callable] = None, gradient: Optional[Callable] = None, *,
          contract: Optional[str] = None, profile: Optional[str] = None, judgments=None, like: str = "numpy",
          device: Any = None, provenance=None, label: Optional[str] = None) -> Matrix:
    """Judge ``forward`` (a callable of the operator ``op``) and ``gradient`` (a callable of
    its gradient operator, as the contract names it: rms_norm -> rms_norm_bwd) in
    ``dtype`` under the contract's ``profile`` (default: its first profile of backend
    python). ``judgments``: a subset of :data:`JUDGMENTS` (default all four). ``like``:
    "numpy" (arrays; bf16 as uint16 bits) or "torch" (tensors, copied to ``device`` with
    their strides). ``provenance``: a dict merged into (or a callable that rewrites) each
    call's record; for tests that fake a setting (a dict may also name
    ``input_dtypes``, {"x": "fp64"}: the dtype an input reached the kernel in). Raises
    :class:`numoracle.Error` for a contract the library refuses, an unknown op/dtype/profile; re-raises what a callable
    raised (a callable may raise ``NotImplementedError`` to decline a composition: that
    configuration is skipped, the cell INCONCLUSIVE)."""
    if like not in ("numpy", "torch"):
        raise Error(2, f"like={like!r}: expected 'numpy' or 'torch'")
    mask = 0
    for j in (judgments or ()):
        if j not in JUDGMENTS:
            raise Error(2, f"unknown judgment {j!r} (known: {', '.join(JUDGMENTS)})")
        mask |= 1 << JUDGMENTS.index(j)
    path = contract or default_contract()
    dev = None if device is None else str(device)
    run = _Runner(forward, gradient, like, device, dtype, provenance)
    q = _Req()
    q.api_version = _lib.API_VERSION
    q.contract, q.op, q.dtype = _s(path), _s(op), _s(dtype)
    q.profile = _s(profile)
    q.judgments = mask
    q.run_fwd = run.cb_fwd if forward is not None else _RUN()
    q.run_grad = run.cb_grad if gradient is not None else _RUN()
    q.label = _s(label or getattr(forward or gradient, "__name__", "python"))
    # the record before any call (the library checks it before anything runs)
    _fill_prov(q.prov, run._record([], "cpu" if like == "numpy" else dev or "cpu"))
    lib = _lib_judge()
    r = lib.nmo_bind_judge(ctypes.byref(q))
    if run.exc is not None:
        if r:
            lib.nmo_bind_free(r)
        raise run.exc
    r = _result(r)
    try:
        d = json.loads(lib.nmo_bind_json(r).decode())
    finally:
        lib.nmo_bind_free(r)
    return Matrix(d)
