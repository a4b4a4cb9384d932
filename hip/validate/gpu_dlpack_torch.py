#!/usr/bin/env python3
"""Issue 22 on the H200: numoracle.check on torch CUDA outputs through the GPU tier (the
output's device pointer to libnumoracle_gpu.so, no host copy of it) against the same
check on host copies of the same tensors (the CPU oracle): equal verdicts, counts, R and
worst element, for rms_norm, swiglu and matmul, a correct output and one with a wrong
element each. Prints a table (wall time of each path) and exits 0 when every pair is equal.

    PYTHONPATH=python NUMORACLE_LIB=B/oracle/libnumoracle.so \\
    NUMORACLE_GPU_LIB=B/hip/libnumoracle_gpu.so python3 hip/validate/gpu_dlpack_torch.py"""
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import numoracle
from numoracle import _lib


def arr(v):
    v = list(v.values())[0] if isinstance(v, dict) else v
    return v.cpu().numpy() if hasattr(v, "cpu") else np.asarray(v)


def same(h, d):
    if (h.verdict, h.n, h.n_pass, h.n_fail, h.n_inconclusive) != (d.verdict, d.n, d.n_pass, d.n_fail, d.n_inconclusive):
        return "counts"
    for a, b in ((h.verdicts, d.verdicts), (h.r_lo, d.r_lo), (h.r_hi, d.r_hi)):
        if not np.array_equal(arr(a), arr(b), equal_nan=True):
            return "elements"
    if (h.worst is None) != (d.worst is None):
        return "worst"
    if h.worst is not None and (h.worst.index, h.worst.verdict, h.worst.r_lo, h.worst.r_hi) != \
            (d.worst.index, d.worst.verdict, d.worst.r_lo, d.worst.r_hi):
        return "worst"
    return ""


def main():
    ok, where = _lib.gpu()
    print(f"gpu tier: {ok} {where}")
    if not ok or not torch.cuda.is_available():
        return 2
    dev = "cuda"
    rows, bad = [], 0
    cases = []
    x, w = numoracle.inputs("rms_norm", "1024x4096", "bf16", "gaussian", seed=1, like="torch", device=dev).values()
    xf = x.float()
    y = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(torch.bfloat16)
    cases.append(("rms_norm", "1024x4096", {"x": x, "w": w}, y))
    a, b = numoracle.inputs("swiglu", "1024x4096", "bf16", "gaussian", seed=2, like="torch", device=dev).values()
    cases.append(("swiglu", "1024x4096", [a, b], (F.silu(a.float()) * b.float()).to(torch.bfloat16)))
    A, B = numoracle.inputs("matmul", "512x512x1024", "bf16", "gaussian", seed=3, like="torch", device=dev).values()
    cases.append(("matmul", "512x512x1024", [A, B], (A.float() @ B.float()).to(torch.bfloat16)))
    for op, shape, ins, out in cases:
        mut = out.clone()
        mut.view(-1)[12345] = mut.view(-1)[12345] * 1.5 + 0.25
        for tag, o in (("correct", out), ("mutant", mut)):
            torch.cuda.synchronize()
            t0 = time.time()
            d = numoracle.check(op, ins, o, dtype="bf16", details=True)
            t1 = time.time()
            hin = {k: v.cpu() for k, v in ins.items()} if isinstance(ins, dict) else [v.cpu() for v in ins]
            t2 = time.time()
            h = numoracle.check(op, hin, o.cpu(), dtype="bf16", details=True)
            t3 = time.time()
            diff = same(h, d)
            bad += bool(diff)
            rows.append((op, shape, tag, d.verdict, h.verdict, d.n_fail, diff or "equal", t1 - t0, t3 - t2))
    g = _lib._gpu_keep
    g.nmo_gpu_bind_device_checks.restype = __import__("ctypes").c_long
    print(f"{'op':9} {'shape':13} {'output':8} {'device':12} {'host':12} {'fails':>6} {'cmp':9} {'device s':>9} {'host s':>9}")
    for r in rows:
        print(f"{r[0]:9} {r[1]:13} {r[2]:8} {r[3]:12} {r[4]:12} {r[5]:6d} {r[6]:9} {r[7]:9.3f} {r[8]:9.3f}")
    print(f"checks judged in device memory: {g.nmo_gpu_bind_device_checks()} of {len(rows)}")
    print("RESULT", "PASS" if bad == 0 else "FAIL")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
