#!/usr/bin/env python3
"""The Python package on a GPU: PyTorch eager, torch.compile and a Triton kernel written in
the Liger-Kernel style, on CUDA tensors, checked with numoracle.check / assert_certified
straight from the tensors (bf16 natively, copied to the host once); plus one negative
control (the Triton kernel with a realistic bug: rstd rounded to bf16 before it scales the
row, as a kernel computing in the storage dtype does) that must FAIL. (A mean over N-1 is
no control at N = 4096: under sum=any the sum of squares may err by N*u*sum x^2, 2.4e-4
relative, more than the 1/N that bug moves it; the plan allows it there.) Prints a short table;
exit 0 when every row met its expectation, 1 otherwise, 2 when there is no CUDA device.

    PYTHONPATH=python NUMORACLE_LIB=build/oracle/libnumoracle.so python3 python/tests/gpu_check.py

Self-contained: needs torch with CUDA; Triton rows are SKIP without triton. Options:
--shapes 4096x4096,8x1001 (rms_norm MxN), --families gaussian,outlier, --seed S.
Each implementation is judged under the preset that names what it does (numoracle plans):
F.rms_norm eager: torch-eager; the Hugging Face LlamaRMSNorm composition (the normalized
x cast to bf16 before the weight): hf-llama; torch.compile of either: torch-compile (one
fused fp32 kernel); the Liger-style Triton kernel ('llama' casting, tl.rsqrt): liger."""
import argparse
import sys
import time
import traceback

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:  # noqa: F841
    print(f"gpu_check: no torch ({e})")
    sys.exit(2)

import numoracle
from numoracle.testing import assert_certified

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None

EPS = 1e-6


def hf_llama_rms_norm(x, w, eps=EPS):
    """transformers' LlamaRMSNorm.forward: fp32 statistics, cast to the dtype, then times w."""
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return w * h.to(x.dtype)


def eager_rms_norm(x, w, eps=EPS):
    return F.rms_norm(x, (x.shape[-1],), w, eps)


if triton is not None:
    @triton.jit
    def _liger_style_rms_fwd(X, W, Y, RSTD, stride, n_cols, eps, BUG_RSTD_IN_DTYPE: tl.constexpr,
                             BLOCK: tl.constexpr):
        # one program per row, the Liger-Kernel rms_norm layout: statistics in fp32, the
        # normalized row cast back to the input dtype ('llama' casting), then the weight
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(X + row * stride + cols, mask=mask, other=0.0)
        w = tl.load(W + cols, mask=mask, other=0.0)
        xf = x.to(tl.float32)
        ms = tl.sum(xf * xf, axis=0) / n_cols
        rstd = tl.rsqrt(ms + eps)
        if BUG_RSTD_IN_DTYPE:  # the negative control: rstd kept in the input dtype
            rstd = rstd.to(x.dtype).to(tl.float32)
        tl.store(RSTD + row, rstd)
        h = (xf * rstd).to(x.dtype)
        tl.store(Y + row * stride + cols, (h * w).to(Y.dtype.element_ty), mask=mask)

    def liger_style_rms_norm(x, w, eps=EPS, bug=False):
        M, N = x.shape
        y = torch.empty_like(x)
        rstd = torch.empty(M, dtype=torch.float32, device=x.device)
        _liger_style_rms_fwd[(M,)](x, w, y, rstd, x.stride(0), N, eps, BUG_RSTD_IN_DTYPE=bug,
                                   BLOCK=triton.next_power_of_2(N))
        return y


def compiled(fn):
    """torch.compile(fn), compiled on first use (so that a torch without it, or a failing
    compile, breaks only its own rows)."""
    box = []

    def run(*a):
        if not box:
            box.append(torch.compile(fn))
        return box[0](*a)
    return run


ROWS = None


def rows():
    """(name, preset, function, expected verdict), built once (compiled functions cached)"""
    global ROWS
    if ROWS is not None:
        return ROWS
    r = [("eager F.rms_norm", "torch-eager", eager_rms_norm, "PASS"),
         ("eager HF LlamaRMSNorm", "hf-llama", hf_llama_rms_norm, "PASS"),
         ("torch.compile F.rms_norm", "torch-compile", compiled(eager_rms_norm), "PASS"),
         ("torch.compile HF Llama", "torch-compile", compiled(hf_llama_rms_norm), "PASS")]
    if triton is not None:
        r += [("triton liger-style", "liger", liger_style_rms_norm, "PASS"),
              ("triton liger-style, rstd in bf16 (negative)", "liger",
               lambda x, w: liger_style_rms_norm(x, w, bug=True), "FAIL")]
    else:
        r += [("triton liger-style", "liger", None, "PASS"),
              ("triton liger-style, rstd in bf16 (negative)", "liger", None, "FAIL")]
    ROWS = r
    return r


def main():
    ap = argparse.ArgumentParser(description="numoracle's Python package on CUDA tensors")
    ap.add_argument("--shapes", default="4096x4096,8x1001")
    ap.add_argument("--families", default="gaussian,outlier")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda", help="cuda (default); cpu only smoke-tests the script")
    a = ap.parse_args()
    if a.device == "cuda" and not torch.cuda.is_available():
        print("gpu_check: torch has no CUDA device")
        return 2
    dev = torch.device(a.device)
    print(f"numoracle {numoracle.version()} from {numoracle.library_path()}")
    print(f"torch {torch.__version__}, triton {getattr(triton, '__version__', 'absent')}, "
          f"{torch.cuda.get_device_name(dev) if dev.type == 'cuda' else dev}")
    hdr = f"{'implementation':46} {'plan':14} {'shape':10} {'family':9} {'verdict':13} {'fail/n':>16} {'s':>6}  note"
    print(hdr)
    print("-" * len(hdr))
    ok = True
    for shape in a.shapes.split(","):
        for fam in a.families.split(","):
            inp = numoracle.inputs("rms_norm", shape, "bf16", fam, a.seed, like="torch", device=dev)
            x, w = inp["x"], inp["w"]
            assert x.device.type == dev.type and x.dtype == torch.bfloat16
            for name, preset, fn, want in rows():
                if fn is None:  # every row is part of the evidence: a skipped one is not met
                    ok = False
                    print(f"{name:46} {preset:14} {shape:10} {fam:9} {'SKIP':13} {'':>16} {'':>6}  no triton")
                    continue
                note = ""
                try:
                    y = fn(x, w)
                    if dev.type == "cuda":
                        torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    rep = numoracle.check("rms_norm", {"x": x, "w": w}, y, plan=f"preset={preset}",
                                          params={"eps": EPS})
                    dt = time.perf_counter() - t0
                    got = rep.verdict
                    if rep.worst is not None and got != "PASS":
                        wst = rep.worst
                        note = f"worst {wst.where()} = {wst.candidate:.6g}, R=[{wst.r_lo:.6g}, {wst.r_hi:.6g}]"
                    # the pytest form: silent on PASS, AssertionError on FAIL
                    try:
                        assert_certified(y, op="rms_norm", inputs={"x": x, "w": w}, plan=f"preset={preset}",
                                         params={"eps": EPS}, reproduce=False)
                        asserted = "PASS"
                    except AssertionError as e:
                        asserted = str(e).splitlines()[0].rsplit(": ", 1)[-1]
                    if asserted != got:
                        note += f" assert_certified said {asserted}"
                        got += "!"
                    cnt = f"{rep.n_fail}/{rep.n}"
                except Exception as e:  # a row that breaks is reported, not fatal
                    got, cnt, dt = "ERROR", "", 0.0
                    note = f"{type(e).__name__}: {e}".splitlines()[0][:120]
                    traceback.print_exc(file=sys.stderr)
                met = got == want
                ok &= met
                mark = got if met else f"{got} (want {want})"
                print(f"{name:46} {preset:14} {shape:10} {fam:9} {mark:13} {cnt:>16} {dt:6.2f}  {note}")
    print("all rows as expected" if ok else "SOME ROWS NOT AS EXPECTED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
