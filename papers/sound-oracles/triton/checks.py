"""The campaign's six fixed baselines, in NumPy, judging one output tensor against the
reference (the midpoint of numoracle's certified enclosure rounded to the output format).

The rules and their sources are those of apps/campaign/checks.c (read there: torch
assert_close defaults, vLLM's flat 1e-2, hipDNN's fixed table, TransformerEngine's
compareResults, a Higham-style dynamic tolerance, the calibrated p99.9); this file
restates them for arrays. hipDNN's figures are not copied: they are read from the one
table in oracle/tolerance.c at import time.
"""

import fnmatch
import math
import os
import re

import numpy as np

CHECKS = ("numoracle", "torch", "vllm", "hipdnn", "te", "higham", "p999")
LABELS = {"numoracle": "numoracle", "torch": "torch assert_close", "vllm": "vLLM 1e-2",
          "hipdnn": "hipDNN fixed", "te": "TransformerEngine", "higham": "Higham dynamic",
          "p999": "calibrated p99.9"}

EPS = {"fp32": 2.0 ** -23, "bf16": 2.0 ** -7, "fp16": 2.0 ** -10, "fp64": 2.0 ** -52}
TORCH = {"fp32": (1e-5, 1.3e-6), "bf16": (1e-5, 1.6e-2), "fp16": (1e-5, 1e-3), "fp64": (1e-7, 1e-7)}
TE = {"fp32": (1e-6, 5e-6), "fp16": (1e-5, 1e-3), "bf16": (1e-5, 1e-2)}

_ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def _hipdnn_table():
    """Rows (globs, family, fp64, fp32, fp16, bf16) of oracle/tolerance.c's tol_table."""
    src = open(os.path.join(_ROOT, "oracle", "tolerance.c")).read()
    body = src[src.index("tol_table[] = {"):]
    body = body[:body.index("};")]
    rows = []
    for m in re.finditer(r'\{"([^"]+)",\s*"([^"]+)",\s*([0-9.e+-]+),\s*([0-9.e+-]+),\s*([0-9.e+-]+),\s*([0-9.e+-]+)', body):
        rows.append((m.group(1).split(":"), m.group(2), *(float(m.group(i)) for i in range(3, 7))))
    if not rows or rows[-1][0] != ["*"]:
        raise RuntimeError("oracle/tolerance.c: tol_table not found or without its '*' row")
    return rows


_HIPDNN = _hipdnn_table()


def hipdnn_tol(op, out):
    for globs, fam, f64, f32, f16, b16 in _HIPDNN:
        if any(fnmatch.fnmatchcase(op, g) for g in globs):
            return {"fp64": f64, "fp32": f32, "fp16": f16, "bf16": b16}.get(out, math.nan), fam
    raise AssertionError("unreachable: the '*' row matches")


def gamma(k, eps):
    nu = 2.0 * k * eps
    return nu / (1.0 - nu) if nu < 0.01 else 6.0 * math.sqrt(2.0 * k) * eps


def _torch_close(a, e, atol, rtol):
    with np.errstate(invalid="ignore"):
        ok = np.abs(a - e) <= atol + rtol * np.abs(e)
    fin = np.isfinite(a) & np.isfinite(e)
    return (a == e) | (ok & fin)


def _hipdnn_close(a, e, atol, rtol):
    bad_e, bad_a = ~np.isfinite(e), ~np.isfinite(a)
    with np.errstate(invalid="ignore"):
        ok = np.abs(a - e) <= atol + rtol * np.abs(e)
    return np.where(bad_e | bad_a, bad_e & bad_a, ok)


def round_to(x, fmt):
    """float64 -> the value of fmt nearest (RNE), as float64."""
    x = np.asarray(x, dtype=np.float64)
    if fmt == "fp64":
        return x
    if fmt == "fp32":
        return x.astype(np.float32).astype(np.float64)
    if fmt == "fp16":
        return x.astype(np.float16).astype(np.float64)
    if fmt == "bf16":
        # double rounding through fp32 is exact for bf16 except at fp32 ties of bf16
        # ties; the reference is the midpoint of an enclosure, a tie there is harmless
        f = x.astype(np.float32)
        b = f.view(np.uint32).astype(np.uint64)
        lsb = (b >> 16) & 1
        r = ((b + 0x7FFF + lsb) >> 16) << 16
        r = np.where(np.isnan(f), b, r).astype(np.uint32)
        return r.view(np.float32).astype(np.float64)
    raise ValueError(fmt)


def _te_close(t, r, atol, rtol, out):
    with np.errstate(invalid="ignore", divide="ignore"):
        mism = (np.abs(t - r) > atol) & ((r == 0) | (np.abs((t - r) / r) > rtol))
    if out == "fp32" or not mism.any():
        return ~mism
    mean = (t + r) / 2
    mp = np.where(mean >= 0, mean * (1 + 1e-6), mean * (1 - 1e-6))
    mm = np.where(mean >= 0, mean * (1 - 1e-6), mean * (1 + 1e-6))
    cp, cm = round_to(mp, out), round_to(mm, out)
    tie = (cm == np.minimum(t, r)) & (cp == np.maximum(t, r))
    return ~mism | tie


class Tensor:
    """Per-output tolerances (checks.c nmo_ck_setup), computed once per input."""

    def __init__(self, op, out_fmt, compute_fmt, ref, inputs, roles, row_len, p999=None):
        self.op, self.out, self.ref = op, out_fmt, ref
        self.hipdnn, self.hipdnn_cat = hipdnn_tol(op, out_fmt)
        ec, eo = EPS[compute_fmt], EPS[out_fmt]
        cast = eo if eo > ec else 0.0
        rl = max(1, int(row_len))
        norm_fwd = "norm" in op and not any(s in op for s in ("bwd", "backward", "grad"))
        if norm_fwd:
            S = max([np.nanmax(np.abs(v)) for k, v in inputs.items() if roles.get(k) == "weight"] or [1.0])
            B = max([np.nanmax(np.abs(v)) for k, v in inputs.items() if roles.get(k) == "bias"] or [0.0])
            g = gamma(rl * (2 if "layer" in op else 1), ec)
            self.higham = g / 2 * S + 5 * ec * S + B * ec + cast * (S + B)
        else:
            fin = ref[np.isfinite(ref)]
            scale = float(np.max(np.abs(fin))) if fin.size else 0.0
            self.higham = (gamma(rl, ec) + 8 * ec) * scale + cast * scale
        self.p999 = p999

    def judge(self, check, cand):
        a, e = cand, self.ref
        if check == "torch":
            atol, rtol = TORCH[self.out]
            return "P" if _torch_close(a, e, atol, rtol).all() else "F"
        if check == "vllm":
            return "P" if _torch_close(a, e, 1e-2, 1e-2).all() else "F"
        if check == "hipdnn":
            return "P" if _hipdnn_close(a, e, self.hipdnn, self.hipdnn).all() else "F"
        if check == "higham":
            return "P" if _hipdnn_close(a, e, self.higham, self.higham).all() else "F"
        if check == "p999":
            if self.p999 is None:
                return "-"
            return "P" if _hipdnn_close(a, e, self.p999[0], self.p999[1]).all() else "F"
        if check == "te":
            if self.out not in TE:
                return "-"
            return "P" if _te_close(a, e, *TE[self.out], self.out).all() else "F"
        raise ValueError(check)


def errors(cand, ref):
    """(max |a-e|, max |a-e|/|e|) over elements that differ; inf for non-finite mismatches."""
    a, e = np.asarray(cand, np.float64), np.asarray(ref, np.float64)
    diff = (a != e) & ~(np.isnan(a) & np.isnan(e))
    if not diff.any():
        return 0.0, 0.0
    a, e = a[diff], e[diff]
    if not (np.isfinite(a).all() and np.isfinite(e).all()):
        return math.inf, math.inf
    d = np.abs(a - e)
    nz = e != 0
    return float(d.max()), float((d[nz] / np.abs(e[nz])).max()) if nz.any() else 0.0


def combine(letters):
    """One verdict letter for a run from its per-output letters: F if any output F."""
    if "F" in letters:
        return "F"
    if "-" in letters:
        return "-"
    return "P"
