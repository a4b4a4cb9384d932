"""numoracle's Python API over the binding entry point (numoracle/bind.h)."""

from __future__ import annotations

import ctypes
import sys
import warnings
import hashlib
import json
import os
import shlex
import tempfile
from ctypes import POINTER, byref, c_char_p, c_double, c_int64
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _lib
from ._arrays import FMT_BYTES, Buf, Maker, as_buffer, canonical_dtype

#: per-element verdict values (Report.verdicts), as nmo_verdict and the CLI's exit codes
PASS, FAIL, INCONCLUSIVE = 0, 1, 3

ArrayLike = Any
Tensors = Union[Mapping[str, ArrayLike], Sequence[ArrayLike], ArrayLike]
Shape = Union[str, Sequence[int]]

#: the CLI's exit code for usage and input errors
EXIT_USAGE = 2


class Error(Exception):
    """A request numoracle refuses: unknown op, dtype, parameter or tensor name, a
    missing tensor, dims or a dtype that do not fit the operator, a bad plan.

    ``status`` is the library's status code (numoracle/status.h: 2 usage, 4 parse,
    6 unknown op, 7 unknown dtype, 12 shape, 13 data, ...), ``message`` the one line the
    CLI prints after ``numoracle: error:`` for the same request; the CLI exits with
    ``exit_code`` (2) for every one of them."""

    exit_code = EXIT_USAGE

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = int(status)
        self.message = message

    def __repr__(self) -> str:
        return f"numoracle.Error({self.status}, {self.message!r})"


def _s(x: Optional[str]) -> Optional[bytes]:
    return None if x is None else str(x).encode()


def _result(r: int):
    """Status check of a result handle; raises Error (and frees) on failure."""
    lib = _lib.load()
    if not r:
        raise MemoryError("numoracle: out of memory")
    st = lib.nmo_bind_status(r)
    if st != 0:
        msg = (lib.nmo_bind_message(r) or b"").decode(errors="replace")
        lib.nmo_bind_free(r)
        raise Error(st, msg)
    return r


def _listing(what: str, op: Optional[str] = None, dtype: Optional[str] = None):
    lib = _lib.load()
    r = _result(lib.nmo_bind_list(_s(what), _s(op), _s(canonical_dtype(dtype))))
    try:
        return json.loads(lib.nmo_bind_json(r).decode())
    finally:
        lib.nmo_bind_free(r)


def ops() -> Dict[str, dict]:
    """Every operator, by name, in registry order: ``summary``, ``shape`` (what the problem
    shape means), ``inputs`` and ``outputs`` (``name``, ``role``, ``doc``, ``optional``:
    a saved statistic the reference recomputes when not given, ``source_only``: never
    read), ``params`` (``name``, ``default``, ``doc``), ``dtypes`` (dtype -> its default
    plan), ``rounding`` (the rounding points the reference encloses) and ``test_shapes``
    (small shapes the generic tests use). The same as ``numoracle ops``."""
    return {o["name"]: o for o in _listing("ops")}


def candidates(op: str) -> List[dict]:
    """The CPU candidates of ``op`` (C emulations of kernels, as ``numoracle candidates``):
    ``name``, ``correct`` (False: a mutant, a realistic bug), ``desc``, ``plan`` (None, or
    the plan under which a mutant of the default plan is correct)."""
    return _listing("candidates", op)


def plans(op: Optional[str] = None, dtype: Optional[str] = None) -> List[dict]:
    """The named plan presets (``numoracle plans``): ``name``, ``summary``, ``sources``,
    ``rules`` (operators -> fields). With ``op``: also ``plan``, the full plan each preset
    gives that operator at ``dtype`` (default bf16). Use one as ``plan="preset=NAME"``."""
    return _listing("plans", op, dtype)


def version() -> str:
    """Version of the loaded library."""
    return _lib.load().nmo_version().decode()


# ---- requests -----------------------------------------------------------------------

def _pairs(ts: Tensors, what: str) -> List[Tuple[Optional[str], Any]]:
    if ts is None:
        return []
    if isinstance(ts, Mapping):
        return [(str(k), v) for k, v in ts.items()]
    if isinstance(ts, (list, tuple)):
        return [(None, v) for v in ts]
    return [(None, ts)]


def _shape(shape: Optional[Shape]) -> Tuple[int, ...]:
    if shape is None:
        return ()
    if isinstance(shape, str):
        try:
            return tuple(int(x) for x in shape.lower().split("x"))
        except ValueError:
            raise Error(4, f"bad shape '{shape}': expected dims joined by x, e.g. 64x4097") from None
    return tuple(int(x) for x in shape)


def _params(params: Optional[Mapping[str, float]]) -> Tuple[List[str], List[float]]:
    names, values = [], []
    for k, v in (params or {}).items():
        try:
            values.append(float(v))
        except (TypeError, ValueError):
            raise Error(2, f"bad value {v!r} for param {k} (expected a finite number)") from None
        names.append(str(k))
    return names, values


class _Case:
    """A request's arrays as packed host buffers, and the rest of it as given."""

    def __init__(self, op: str, inputs: Tensors, outputs: Tensors, dtype, plan, params, max_ulps, engine,
                 shape):
        self.op = str(op)
        self.dtype = canonical_dtype(dtype)
        self.plan = plan
        self.params = dict(params or {})
        self.max_ulps = max_ulps
        self.engine = engine
        self.shape = _shape(shape)
        if max_ulps is not None and (not isinstance(max_ulps, int) or isinstance(max_ulps, bool) or max_ulps < 1):
            raise Error(2, f"bad max_ulps {max_ulps!r}: expected a positive integer")
        self.ins = [(n, as_buffer(a, self.dtype, f"input {n if n is not None else i}", Error))
                    for i, (n, a) in enumerate(_pairs(inputs, "input"))]
        pairs = list(_pairs(outputs, "output"))
        dev_ok = len(pairs) == 1 and _on_cuda(pairs[0][1]) and _gpu_or_say()
        self.outs = [(n, as_buffer(a, self.dtype, f"output {n if n is not None else i}", Error, dev_ok))
                     for i, (n, a) in enumerate(pairs)]
        self.on_device = any(b.on_device for _, b in self.outs)

    def _tensors(self, lst):
        arr = (_lib.BindTensor * max(1, len(lst)))()
        keep = []
        for i, (name, b) in enumerate(lst):
            dims = (c_int64 * max(1, len(b.shape)))(*b.shape)
            keep.append(dims)
            arr[i].name = _s(name)
            arr[i].dtype = _s(b.dtype)
            arr[i].ndims = len(b.shape)
            arr[i].dims = ctypes.cast(dims, POINTER(c_int64))
            # an empty array has no address; the library refuses its dims first
            arr[i].data = b.ptr or None
        return arr, keep

    def request(self, with_outputs: bool, flags: int, name: Optional[str] = None):
        q = _lib.BindReq()
        q.api_version = _lib.API_VERSION
        q.op = _s(self.op)
        q.dtype = _s(self.dtype)
        q.plan = _s(self.plan)
        keep: List[Any] = []
        if self.shape:
            sh = (c_int64 * len(self.shape))(*self.shape)
            keep.append(sh)
            q.nshape, q.shape = len(self.shape), ctypes.cast(sh, POINTER(c_int64))
        pn, pv = _params(self.params)
        if pn:
            names = (c_char_p * len(pn))(*[_s(n) for n in pn])
            vals = (c_double * len(pv))(*pv)
            keep += [names, vals]
            q.n_param, q.param_names, q.param_values = len(pn), names, vals
        ins, k1 = self._tensors(self.ins)
        keep += [ins, k1]
        q.n_in, q.inputs = len(self.ins), ins
        if with_outputs:
            outs, k2 = self._tensors(self.outs)
            keep += [outs, k2]
            q.n_out, q.outputs = len(self.outs), outs
        q.max_ulps = int(self.max_ulps or 0)
        q.engine = _s(self.engine)
        q.flags = flags
        q.name = _s(name)
        return q, keep

    def maker(self) -> Maker:
        return Maker.like([b for _, b in self.outs] + [b for _, b in self.ins])


def _arrays(r, maker: Maker, kind: int, dtype_of, shapes, names) -> Optional[Dict[str, Any]]:
    lib = _lib.load()
    res = {}
    for k, name in enumerate(names):
        n = c_int64(0)
        p = lib.nmo_bind_array(r, kind, k, byref(n))
        if not p:
            return None
        dt = dtype_of(k)
        size = FMT_BYTES.get(dt, 1) if dt != "uint8" else 1
        res[name] = maker.make(ctypes.string_at(p, n.value * size), dt, shapes[k])
    return res


def _outputs_of(r) -> Tuple[List[str], List[str], List[Tuple[int, ...]]]:
    lib = _lib.load()
    names, dts, shapes = [], [], []
    for k in range(lib.nmo_bind_count(r)):
        t = _lib.BindTensor()
        lib.nmo_bind_tensor_at(r, k, byref(t))
        names.append(t.name.decode())
        dts.append(t.dtype.decode())
        shapes.append(tuple(t.dims[i] for i in range(t.ndims)))
    return names, dts, shapes


class Element:
    """One element of a report: the worst one (the FAIL farthest outside R, else the
    widest INCONCLUSIVE or PASS)."""

    __slots__ = ("tensor", "index", "coords", "candidate", "r_lo", "r_hi", "outside_ulps", "width_ulps",
                 "scale", "width_scale_ulps", "enclosure_lo", "enclosure_hi", "verdict")

    def __init__(self, d: Mapping[str, Any]):
        f = _num
        self.tensor: str = d["tensor"]
        self.index: int = int(d["index"])
        self.coords: Tuple[int, ...] = tuple(int(x) for x in d.get("coords", ()))
        self.candidate: float = f(d["candidate"])
        self.r_lo: float = f(d["r_lo"])
        self.r_hi: float = f(d["r_hi"])
        self.outside_ulps: float = f(d["outside_ulps"])
        self.width_ulps: int = int(d["width_ulps"])
        self.scale: float = f(d["scale"])
        self.width_scale_ulps: float = f(d["width_scale_ulps"])
        self.enclosure_lo: float = f(d["enclosure_lo"])
        self.enclosure_hi: float = f(d["enclosure_hi"])
        self.verdict: str = d["verdict"]

    def where(self) -> str:
        """``y[17, 4095]``"""
        return f"{self.tensor}[{', '.join(str(c) for c in self.coords)}]"

    def __repr__(self) -> str:
        return (f"Element({self.where()} flat {self.index}: candidate {self.candidate!r}, "
                f"R=[{self.r_lo!r}, {self.r_hi!r}], {self.verdict})")


def _num(v: Any) -> float:
    return float(v)  # "nan", "inf", "-inf" strings included


class Report:
    """The result of :func:`check`: the JSON report of ``numoracle check`` and, when asked
    for (``details=True``), per-element arrays.

    ``verdict`` is ``"PASS"``, ``"FAIL"`` or ``"INCONCLUSIVE"`` (never counted as a pass);
    ``n``, ``n_pass``, ``n_fail``, ``n_inconclusive`` the element counts over every
    output; ``worst`` the worst :class:`Element`; ``plan`` the plan in full as text;
    ``verdicts``, ``r_lo``, ``r_hi`` (details): dicts by output name of arrays shaped
    like the output (verdicts: uint8 PASS 0 / FAIL 1 / INCONCLUSIVE 3; R's ends as
    float64, exact values of the output format; NaN where every implementation gives
    NaN); ``failing()`` the flat indices of the failing elements."""

    def __init__(self, d: dict, verdicts=None, r_lo=None, r_hi=None, case: Optional[_Case] = None):
        self._d = d
        self.verdict: str = d["verdict"]
        self.op: str = d["op"]
        self.shape: Tuple[int, ...] = tuple(int(x) for x in d["shape"])
        self.dtype: str = d["dtype"]
        self.plan: str = d["plan_text"]
        self.max_ulps: int = int(d["max_ulps"])
        c = d["counts"]
        self.n: int = int(c["elements"])
        self.n_pass: int = int(c["pass"])
        self.n_fail: int = int(c["fail"])
        self.n_inconclusive: int = int(c["inconclusive"])
        self.worst: Optional[Element] = Element(d["worst"]) if "worst" in d else None
        self.seconds: float = float(d["seconds"])
        self.verdicts = verdicts
        self.r_lo = r_lo
        self.r_hi = r_hi
        self._case = case

    @property
    def passed(self) -> bool:
        """verdict == "PASS"."""
        return self.verdict == "PASS"

    @property
    def counts(self) -> Dict[str, int]:
        """The JSON report's counts (elements, pass, fail, inconclusive and its reasons)."""
        return dict(self._d["counts"])

    def to_dict(self) -> dict:
        """The JSON report (``numoracle check --json``), a fresh copy."""
        return json.loads(json.dumps(self._d))

    def failing(self, tensor: Optional[str] = None):
        """Flat (row-major) indices of the FAIL elements of output ``tensor`` (default: the
        first output), in the kind of the arrays given (NumPy, PyTorch, a list)."""
        if self.verdicts is None:
            raise ValueError("per-element verdicts were not kept: check(..., details=True)")
        name = tensor if tensor is not None else next(iter(self.verdicts))
        v = self.verdicts[name]
        mod = type(v).__module__.split(".")[0]
        if mod == "numpy":
            return (v.reshape(-1) == FAIL).nonzero()[0]
        if mod == "torch":
            return (v.reshape(-1) == FAIL).nonzero().reshape(-1)
        flat = v.cast("B") if isinstance(v, memoryview) else v
        return [i for i, x in enumerate(flat) if x == FAIL]

    def command(self, directory: Optional[str] = None) -> str:
        """Write this check's tensors as raw .bin files into ``directory`` (default: a
        folder under ``$NUMORACLE_REPRO_DIR`` or the temporary directory, named by the
        op and a digest of the data) and return the ``numoracle check`` command that
        judges them again from the CLI."""
        if self._case is None:
            raise ValueError("this report has no tensors to write")
        return _write_case(self._case, self._d, directory)

    def __repr__(self) -> str:
        return (f"<numoracle.Report {self.op} {self.verdict}: {self.n_pass} pass, {self.n_fail} fail, "
                f"{self.n_inconclusive} inconclusive of {self.n}>")


def check(op: str, inputs: Tensors, outputs: Tensors, *, dtype: Optional[str] = None,
          plan: Optional[str] = None, params: Optional[Mapping[str, float]] = None,
          max_ulps: Optional[int] = None, engine: str = "auto", shape: Optional[Shape] = None,
          details: bool = False, name: Optional[str] = None) -> Report:
    """Judge a kernel's ``outputs`` for ``inputs`` against the certified reachable sets of
    the precision ``plan``: every element PASS (in R, R informative), FAIL (outside R,
    certain given the plan) or INCONCLUSIVE (the oracle cannot decide).

    ``inputs``/``outputs``: dicts by the tensor names ``numoracle.ops()[op]`` lists, or
    sequences in that order (one output may be passed bare): NumPy arrays (float64/32/16;
    bf16 and fp8 as uint16/uint8 bits with ``dtype=``), PyTorch tensors (any device,
    bf16 and fp8 natively), or objects with ``__array_interface__`` / ``__dlpack__``.
    Every input the reference reads must be given; optional ones (saved statistics such
    as rstd) that are not are recomputed by the reference.

    ``dtype``: the storage dtype selecting the default plan (default: the outputs');
    ``plan``: plan text over it (``"fn=ulp:2"``, ``"preset=triton"``); ``params``: the
    operator's parameters by name (``{"eps": 1e-5}``); ``max_ulps``: accept reachable
    sets up to this wide; ``engine``: ``"auto"`` (fast engine, certified escalation) or
    ``"certified"``; ``shape``: the problem shape (default: inferred from the dims);
    ``details``: keep per-element verdicts and R. Raises :class:`Error` for a request
    the CLI would refuse (exit 2)."""
    case = _Case(op, inputs, outputs, dtype, plan, params, max_ulps, engine, shape)
    if not case.outs:
        raise Error(2, f"op {op}: no outputs given (bounds() computes the reachable sets alone)")
    return _run_check(case, details, name)


def _on_cuda(a) -> bool:
    """a torch CUDA tensor, or a DLPack producer on kDLCUDA"""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(a, torch.Tensor):
        return a.device.type == "cuda"
    try:
        return hasattr(a, "__dlpack_device__") and int(a.__dlpack_device__()[0]) == 2
    except Exception:  # a producer that cannot say: the host path decides
        return False


def _gpu_or_say() -> bool:
    """True when the GPU tier is installed; else warn once why the output is copied"""
    ok, why = _lib.gpu()
    global _gpu_warned
    if not ok and not _gpu_warned:
        _gpu_warned = True
        warnings.warn(f"numoracle: output in CUDA memory copied to the host: {why}", RuntimeWarning, stacklevel=4)
    return ok


_gpu_warned = False


def _run_check(case: _Case, details: bool, name: Optional[str]) -> Report:
    lib = _lib.load()
    flags = (_lib.FLAG_VERDICTS | _lib.FLAG_BOUNDS) if details else 0
    if getattr(case, "on_device", False):
        flags |= _lib.FLAG_DEVICE_OUT
    q, keep = case.request(True, flags, name)
    r = _result(lib.nmo_bind_check(byref(q)))  # releases the GIL while it runs
    try:
        d = json.loads(lib.nmo_bind_json(r).decode())
        verdicts = r_lo = r_hi = None
        if details:
            names, dts, shapes = _outputs_of(r)
            mk = case.maker()
            verdicts = _arrays(r, mk, _lib.A_VERDICTS, lambda k: "uint8", shapes, names)
            r_lo = _arrays(r, mk, _lib.A_RLO, lambda k: "fp64", shapes, names)
            r_hi = _arrays(r, mk, _lib.A_RHI, lambda k: "fp64", shapes, names)
    finally:
        lib.nmo_bind_free(r)
    del keep
    return Report(d, verdicts, r_lo, r_hi, case)


def bounds(op: str, inputs: Tensors, *, dtype: Optional[str] = None, plan: Optional[str] = None,
           params: Optional[Mapping[str, float]] = None, max_ulps: Optional[int] = None,
           engine: str = "auto", shape: Optional[Shape] = None):
    """The reachable set R = [lo, hi] of every output element for ``inputs`` under the
    plan (``numoracle bounds``): returns ``(lo, hi, flags)``, lo and hi arrays of the
    output dtype (NumPy: bf16 as uint16 bits), flags uint8 (1 NaN possible, 2 R not
    finite, 4 R too wide: INCONCLUSIVE at best, 8 every implementation gives NaN,
    16 informative by the error scale, 32 no error scale). A value c of the output
    dtype is one a plan-following kernel can produce iff lo <= c <= hi (or c is NaN and
    flags has 1). An operator with several outputs gives dicts by output name.
    Arguments as :func:`check`; ``dtype`` defaults to the first data input's (else the
    first input's that is not a label)."""
    lib = _lib.load()
    case = _Case(op, inputs, None, dtype, plan, params, max_ulps, engine, shape)
    q, keep = case.request(False, _lib.FLAG_BOUNDS)
    r = _result(lib.nmo_bind_check(byref(q)))
    try:
        names, dts, shapes = _outputs_of(r)
        mk = case.maker()
        lo = _arrays(r, mk, _lib.A_LO_BITS, lambda k: dts[k], shapes, names)
        hi = _arrays(r, mk, _lib.A_HI_BITS, lambda k: dts[k], shapes, names)
        fl = _arrays(r, mk, _lib.A_FLAGS, lambda k: "uint8", shapes, names)
    finally:
        lib.nmo_bind_free(r)
    del keep
    if len(names) == 1:
        return lo[names[0]], hi[names[0]], fl[names[0]]
    return lo, hi, fl


def inputs(op: str, shape: Shape, dtype: str, family: str = "gaussian", seed: int = 0, *,
           plan: Optional[str] = None, params: Optional[Mapping[str, float]] = None,
           like: str = "numpy", device: Any = None) -> Dict[str, Any]:
    """The inputs the CLI generates for this problem (``numoracle gen``, and what
    ``numoracle check --family F --seed S`` judges against), by input name, each of the
    dtype the plan stores it in (NumPy: bf16 as uint16 bits): drive a kernel with
    numoracle's input families. ``like``: ``"numpy"`` (imports NumPy), ``"torch"``
    (imports PyTorch; tensors on ``device``) or ``"memoryview"``."""
    lib = _lib.load()
    if like not in ("numpy", "torch", "memoryview"):
        raise Error(2, f"bad like={like!r}: expected 'numpy', 'torch' or 'memoryview'")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0 or seed >= 1 << 64:
        raise Error(2, f"bad seed {seed!r}: expected an unsigned 64-bit integer")
    case = _Case(op, None, None, dtype, plan, params, None, None, shape)
    if not case.shape:
        raise Error(12, f"op {op}: give the shape")
    q, keep = case.request(False, 0)
    q.family = _s(family)
    q.seed = seed
    r = _result(lib.nmo_bind_gen(byref(q)))
    try:
        if like == "numpy":
            import numpy  # noqa: F401  (asked for: the arrays are NumPy arrays)
            mk = Maker("numpy")
        elif like == "torch":
            import torch
            mk = Maker("torch", torch.device(device) if device is not None else None)
        else:
            mk = Maker("other")
        res = {}
        for k in range(lib.nmo_bind_count(r)):
            t = _lib.BindTensor()
            lib.nmo_bind_tensor_at(r, k, byref(t))
            sh = tuple(t.dims[i] for i in range(t.ndims))
            dt = t.dtype.decode()
            n = FMT_BYTES[dt]
            for d in sh:
                n *= d
            res[t.name.decode()] = mk.make(ctypes.string_at(t.data, n), dt, sh)
    finally:
        lib.nmo_bind_free(r)
    del keep
    return res


# ---- reproducing a check from the CLI ---------------------------------------------

def _op_names(op: str, which: str) -> List[str]:
    return [t["name"] for t in ops()[op][which]]


def _write_case(case: _Case, d: dict, directory: Optional[str]) -> str:
    in_names = _op_names(case.op, "inputs")
    out_names = _op_names(case.op, "outputs")
    ins = [(n if n is not None else in_names[i], b) for i, (n, b) in enumerate(case.ins)]
    outs = {(n if n is not None else out_names[i]): b for i, (n, b) in enumerate(case.outs)}
    if directory is None:
        h = hashlib.sha1(json.dumps([case.op, d["shape"], d["plan_text"], sorted(case.params.items())]).encode())
        for _, b in ins + list(outs.items()):
            h.update(b.tobytes())
        base = os.environ.get("NUMORACLE_REPRO_DIR") or os.path.join(tempfile.gettempdir(), "numoracle-repro")
        directory = os.path.join(base, f"{case.op}-{h.hexdigest()[:12]}")
    os.makedirs(directory, exist_ok=True)

    def put(fname: str, b: Buf) -> str:
        path = os.path.join(directory, fname)
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(b.tobytes())
        os.replace(tmp, path)
        return path

    cmd = ["numoracle", "check", "--op", case.op, "--dtype", d["dtype"],
           "--shape", "x".join(str(s) for s in d["shape"])]
    if case.plan:
        cmd += ["--plan", str(case.plan)]
    if case.max_ulps:
        cmd += ["--max-ulps", str(case.max_ulps)]
    for k, v in case.params.items():
        cmd += ["--param", f"{k}={float(v)!r}"]
    if case.engine and case.engine != "auto":
        cmd += ["--engine", str(case.engine)]
    for name, b in ins:
        cmd += ["--input", f"{name}={put(f'in_{name}.bin', b)}"]
        if b.dtype in ("int32", "int64"):
            cmd += ["--input-dtype", f"{name}={b.dtype}"]
    files = [put(f"out_{n}.bin", outs[n]) for n in out_names if n in outs]
    cmd += ["--candidate", "file:" + ",".join(files)]
    return " ".join(shlex.quote(c) for c in cmd)
