"""Exhaustive probe of Triton's fp32 tl.exp and tl.log on the GPU it runs on (issue 19).

The fn=triton preset (oracle/plan.c) models tl.exp as ex2.approx.f32 of x*log2(e) (112 ulps
cap, 2 + 1.23|x| inside it) and tl.log as lg2.approx times ln 2 (64 ulps, which the CUDA
guide's __logf figure does not give near x = 1). This script reads the PTX Triton emits and
runs both functions on EVERY fp32 input, comparing with the binary64 result of torch (exp
and log in binary64 are within 1 ulp of binary64, 2^-29 of an fp32 ulp: negligible here).
It prints, for the plan's comments and tests:
  exp: the instruction; max ulp error over |x| <= 88.72 and against 2 + 1.23|x|; the
       overflow edge (largest x with a finite result, smallest with +inf, and whether every
       x at or above the smallest gives +inf); the flush edge (smallest x with a nonzero
       result, and whether every x below it gives +0).
  log: the instruction; max ulp error over all positive finite x, over [0.5, 2] and
       outside it; max absolute error over [0.5, 2].
usage: python3 triton_fn_probe.py [--chunk-log2 26]
"""
import argparse
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def _k(X, E, L, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(X + offs, mask=m)
    tl.store(E + offs, tl.exp(x), mask=m)
    tl.store(L + offs, tl.log(x), mask=m)


def ulp32(r):
    """fp32 ulp at binary64 values r (subnormal spacing 2^-149 below 2^-126)."""
    a = r.abs().clamp(min=2.0 ** -126)
    _, e = torch.frexp(a)
    return torch.ldexp(torch.ones_like(a), (e - 24).to(torch.int32))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunk-log2", type=int, default=26)
    args = ap.parse_args()
    dev = torch.device("cuda")
    C = 1 << args.chunk_log2
    xs = torch.zeros(C, dtype=torch.float32, device=dev)
    ee = torch.empty_like(xs)
    ll = torch.empty_like(xs)
    ck = _k[(triton.cdiv(C, 1024),)](xs, ee, ll, C, BLOCK=1024)
    ptx = ck.asm["ptx"]
    ins = sorted({w for w in ptx.replace(";", " ").split() if w.startswith(("ex2.", "lg2.", "call"))})
    print("ptx instructions:", " ".join(ins) or "(none)")
    print("ptx calls libdevice:", "__nv_" in ptx)
    st = dict(exp_max=0.0, exp_max_x=0.0, exp_over_model=0.0, exp_over_model_x=0.0,
              fin_max=-1.0, inf_min=float("inf"), ovf_bad=0, nz_min=float("inf"),
              log_max=0.0, log_max_x=0.0, log_in_max=0.0, log_in_x=0.0, log_out_max=0.0,
              log_out_x=0.0, log_abs_in=0.0, log_abs_in_x=0.0, n=0)
    # all finite fp32 bit patterns, positive then negative (sign bit set)
    for sign in (0, 1):
        for lo in range(0, 0x7F800000, C):
            hi = min(lo + C, 0x7F800000)
            bits = torch.arange(lo, hi, dtype=torch.int64, device=dev) | (sign << 31)
            x = (bits - (1 << 32) if sign else bits).to(torch.int32).view(torch.float32)
            n = x.numel()
            e = ee[:n]
            l = ll[:n]
            _k[(triton.cdiv(n, 1024),)](x, e, l, n, BLOCK=1024)
            xd = x.double()
            st["n"] += n
            # exp
            r = torch.exp(xd)
            fin = torch.isfinite(e)
            inr = (xd.abs() <= 88.72) & (r >= 2.0 ** -126)
            err = torch.where(inr, (e.double() - r).abs() / ulp32(r), torch.zeros_like(r))
            i = int(err.argmax())
            if float(err[i]) > st["exp_max"]:
                st["exp_max"], st["exp_max_x"] = float(err[i]), float(xd[i])
            over = err - (2 + 1.23 * xd.abs())
            i = int(over.argmax())
            if float(over[i]) > st["exp_over_model"]:
                st["exp_over_model"], st["exp_over_model_x"] = float(over[i]), float(xd[i])
            if sign == 0:
                if bool(fin.any()):
                    st["fin_max"] = max(st["fin_max"], float(xd[fin].max()))
                isinf = torch.isinf(e) & (e > 0)
                if bool(isinf.any()):
                    st["inf_min"] = min(st["inf_min"], float(xd[isinf].min()))
            else:
                nz = e != 0
                if bool(nz.any()):
                    st["nz_min"] = min(st["nz_min"], float(xd[nz].min()))
            # log (positive x only; log of a negative is NaN in both)
            if sign == 0:
                r = torch.log(xd)
                ok = torch.isfinite(r) & (xd > 0)
                errl = torch.where(ok, (l.double() - r).abs() / ulp32(r.where(r != 0, torch.ones_like(r) * 2.0 ** -149)),
                                   torch.zeros_like(r))
                errl = torch.where(ok & (r == 0) & (l == 0), torch.zeros_like(r), errl)
                inside = ok & (xd >= 0.5) & (xd <= 2.0)
                for key, keyx, msk in (("log_max", "log_max_x", ok), ("log_in_max", "log_in_x", inside),
                                       ("log_out_max", "log_out_x", ok & ~inside)):
                    v = torch.where(msk, errl, torch.zeros_like(errl))
                    i = int(v.argmax())
                    if float(v[i]) > st[key]:
                        st[key], st[keyx] = float(v[i]), float(xd[i])
                ab = torch.where(inside, (l.double() - r).abs(), torch.zeros_like(r))
                i = int(ab.argmax())
                if float(ab[i]) > st["log_abs_in"]:
                    st["log_abs_in"], st["log_abs_in_x"] = float(ab[i]), float(xd[i])
    # overflow edge: every x >= inf_min gives +inf iff no finite result above it
    st["ovf_exact"] = st["fin_max"] < st["inf_min"]
    torch.cuda.synchronize()
    print(f"inputs: {st['n']} finite fp32 values")
    print(f"exp: max ulp error {st['exp_max']:.2f} at x={st['exp_max_x']!r} (|x|<=88.72, normal results)")
    print(f"exp: max of error - (2 + 1.23|x|) = {st['exp_over_model']:.3f} at x={st['exp_over_model_x']!r} (<= 0: the model holds)")
    print(f"exp: largest x with a finite result {st['fin_max']!r} ({st['fin_max'].hex()}); smallest x with +inf "
          f"{st['inf_min']!r} ({st['inf_min'].hex()}); every x >= it gives +inf: {st['ovf_exact']}")
    print(f"exp: smallest x with a nonzero result {st['nz_min']!r} ({st['nz_min'].hex()})")
    print(f"log: max ulp error {st['log_max']:.2f} at x={st['log_max_x']!r}; in [0.5,2] {st['log_in_max']:.2f} at "
          f"x={st['log_in_x']!r}; outside {st['log_out_max']:.2f} at x={st['log_out_x']!r}")
    print(f"log: max absolute error in [0.5,2] {st['log_abs_in']:.3e} at x={st['log_abs_in_x']!r}")
    print(f"device: {torch.cuda.get_device_name()} torch {torch.__version__} triton {triton.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
