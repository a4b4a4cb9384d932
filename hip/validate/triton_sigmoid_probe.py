"""Exhaustive probe of Triton's fp32 tl.sigmoid on the GPU it runs on (issue 19).

The fn=triton preset (oracle/plan.c, nmo_plan_sigmoid_composed) models tl.sigmoid as the
formula of Triton's standard library, 1 / (1 + tl.exp(-x)): tl.exp (ex2.approx, probed by
triton_fn_probe.py), one fp32 add rounded to nearest, and fp32 '/' within fn_ulps[DIV] = 2
ulps (div.full.f32) -- no library sigmoid beside it. This script reads the PTX Triton emits
for tl.sigmoid and runs it on EVERY finite fp32 input next to e = tl.exp(-x) of the same
device, and prints:
  the PTX instructions (ex2 / div / rcp);
  the division's error: y against 1 / RN32(1 + e) in binary64, in fp32 ulps (subnormal
    spacing 2^-149 below 2^-126), the maximum over normal and over subnormal quotients,
    and how many subnormal quotients came back as 0 (a flush);
  the zero edge: the largest x with y == 0, and whether every x <= -0x1.62e43p+6 (where
    tl.exp(-x) is +inf exactly) gives +0.
usage: python3 triton_sigmoid_probe.py [--chunk-log2 26]
"""
import argparse
import sys

import torch
import triton
import triton.language as tl

from triton_fn_probe import ulp32  # fp32 ulp with subnormal spacing: one copy

T_INF = float.fromhex("0x1.62e43p+6")  # tl.exp(x) = +inf exactly for x >= this (probe of exp)


@triton.jit
def _k(X, Y, E, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(X + offs, mask=m)
    tl.store(Y + offs, tl.sigmoid(x), mask=m)
    tl.store(E + offs, tl.exp(-x), mask=m)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunk-log2", type=int, default=26)
    args = ap.parse_args()
    dev = torch.device("cuda")
    C = 1 << args.chunk_log2
    xs = torch.zeros(C, dtype=torch.float32, device=dev)
    yy = torch.empty_like(xs)
    ee = torch.empty_like(xs)
    ck = _k[(triton.cdiv(C, 1024),)](xs, yy, ee, C, BLOCK=1024)
    ptx = ck.asm["ptx"]
    ins = sorted({w for w in ptx.replace(";", " ").split() if w.startswith(("ex2.", "div.", "rcp.", "call"))})
    print("ptx instructions:", " ".join(ins) or "(none)")
    st = dict(n=0, div_norm=0.0, div_norm_x=0.0, div_sub=0.0, div_sub_x=0.0, flushed=0, sub_n=0,
              zero_max=-float("inf"), deep_bad=0, deep_n=0, neg_zero=0)
    for sign in (0, 1):
        for lo in range(0, 0x7F800000, C):
            hi = min(lo + C, 0x7F800000)
            bits = torch.arange(lo, hi, dtype=torch.int64, device=dev) | (sign << 31)
            x = (bits - (1 << 32) if sign else bits).to(torch.int32).view(torch.float32)
            n = x.numel()
            y, e = yy[:n], ee[:n]
            _k[(triton.cdiv(n, 1024),)](x, y, e, n, BLOCK=1024)
            st["n"] += n
            d = (torch.ones_like(e) + e).double()          # RN32(1 + e): fp32 tensor add
            q = 1.0 / d                                    # binary64 quotient (exact to 2^-53)
            err = (y.double() - q).abs() / ulp32(q)
            norm = q >= 2.0 ** -126
            sub = (q < 2.0 ** -126) & (q >= 2.0 ** -150)
            for key, keyx, msk in (("div_norm", "div_norm_x", norm), ("div_sub", "div_sub_x", sub)):
                v = torch.where(msk, err, torch.zeros_like(err))
                i = int(v.argmax())
                if float(v[i]) > st[key]:
                    st[key], st[keyx] = float(v[i]), float(x[i])
            st["sub_n"] += int(sub.sum())
            st["flushed"] += int((sub & (q >= 2.0 ** -148) & (y == 0)).sum())
            z = y == 0
            if bool(z.any()):
                st["zero_max"] = max(st["zero_max"], float(x[z].max()))
            deep = x.double() <= -T_INF
            st["deep_n"] += int(deep.sum())
            st["deep_bad"] += int((deep & ~((y == 0) & ~torch.signbit(y))).sum())
            st["neg_zero"] += int((z & torch.signbit(y)).sum())
    torch.cuda.synchronize()
    print(f"inputs: {st['n']} finite fp32 values")
    print(f"div: max error of y against 1/RN32(1+e), normal quotients: {st['div_norm']:.3f} ulps at x={st['div_norm_x']!r}")
    print(f"div: subnormal quotients ({st['sub_n']}): max error {st['div_sub']:.3f} ulps (of 2^-149) at "
          f"x={st['div_sub_x']!r}; flushed to 0 (quotient >= 2^-148): {st['flushed']}")
    print(f"zero edge: largest x with y == 0: {st['zero_max']!r} ({st['zero_max'].hex()}); "
          f"x <= -{T_INF.hex()}: {st['deep_n']} inputs, not +0: {st['deep_bad']}; -0 results: {st['neg_zero']}")
    print(f"device: {torch.cuda.get_device_name()} torch {torch.__version__} triton {triton.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
