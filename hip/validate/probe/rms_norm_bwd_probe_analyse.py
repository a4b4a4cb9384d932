#!/usr/bin/env python3
"""Host analysis of rms_norm_bwd_probe.py's output: which rstd and which formula did eager
PyTorch's CUDA rms_norm backward use, and what does numoracle say about each output?

  1. rstd: the forward's saved rstd (and autograd's) against the rstd numoracle derives
     (RN32 of the exact value), in fp32 ulps, per row.
  2. formula: fp32 emulations of the candidate formulas (numpy float32, the row sums S
     computed exactly in fp64 and rounded once: the order of the GPU's tree is unknown),
     each given the forward's rstd; the share of dx elements bit-identical to the GPU's.
  3. verdicts (numoracle.check, preset torch-eager): autograd's dx/dw with rstd absent
     (what the contract now judges), given the forward's rstd, given the derived rstd (what
     the contract judged before); _fused_rms_norm_backward with the derived rstd.

    PYTHONPATH=python NUMORACLE_LIB=build/oracle/libnumoracle.so \\
        python3 hip/validate/probe/rms_norm_bwd_probe_analyse.py INPUTS.npz probe.npz
"""
import sys

import numpy as np

import numoracle

inp, pr = np.load(sys.argv[1]), np.load(sys.argv[2])
f32 = np.float32


def ulps(a, b):
    ia = a.astype(np.float32).view(np.int32).astype(np.int64)
    ib = b.astype(np.float32).view(np.int32).astype(np.int64)
    return ia - ib


def fma32(a, b, c):
    # fp32 fma through fp64: a*b is exact in fp64; the sum is rounded twice (fp64, fp32),
    # which can differ from one rounding only on exact ties of the fp64 sum: rare enough for
    # a share of identical bits
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(f32)


names = sorted({k.split("/")[0] for k in inp.files})
for name in names:
    x, w, dy, rd = (inp[f"{name}/{k}"] for k in ("x", "w", "dy", "rstd"))
    eps = float(inp[f"{name}/eps"])
    M, N = x.shape
    print(f"== {name} ({M}x{N})")
    if f"{name}/rstd_fwd" not in pr.files:
        print("  no probe output")
        continue
    rf = pr[f"{name}/rstd_fwd"].reshape(-1)
    d = ulps(rf, rd)
    print(f"  rstd_fwd - rstd_derived in fp32 ulps: min {d.min()} max {d.max()}, rows differing "
          f"{int((d != 0).sum())}/{M}")
    if f"{name}/rstd_autograd" in pr.files:
        print(f"  autograd's saved rstd == _fused_rms_norm's: {np.array_equal(pr[f'{name}/rstd_autograd'], rf)}")
    dxg = pr[f"{name}/dx_auto"]
    r = rf[:, None]
    m = dy * w
    xd, wd, dyd, rdd = x.astype(np.float64), w.astype(np.float64), dy.astype(np.float64), r.astype(np.float64)
    # S sums, exact in fp64 then rounded once to fp32
    S_mx = (m.astype(np.float64) * xd).sum(1, keepdims=True).astype(f32)          # sum m*x
    S_aten = ((m * x).astype(np.float64) * rdd).sum(1, keepdims=True).astype(f32)  # sum ((dy*w)*x)*rstd
    xh = x * r
    S_xh = (m.astype(np.float64) * xh.astype(np.float64)).sum(1, keepdims=True).astype(f32)
    nf, inv_n = f32(N), f32(1) / f32(N)
    forms = {}
    term1 = inv_n * r
    fN = (nf * w) * dy
    forms["aten (fma)"] = fma32(-(x * r), S_aten, fN) * term1
    forms["aten (no fma)"] = (fN - (x * r) * S_aten) * term1
    c_fact = (S_mx * (r * r)) / nf
    forms["factored"] = r * fma32(-x, c_fact, m)
    forms["xhat"] = r * (m - xh * (S_xh * inv_n))
    c3 = ((-inv_n * r) * r) * S_mx
    forms["liger"] = fma32(r, c3 * x, r * m)
    exact = rdd * wd * dyd - xd * rdd ** 3 * (wd * dyd * xd).sum(1, keepdims=True) / N
    forms["exact (fp64, rounded once)"] = exact.astype(f32)
    for k, v in forms.items():
        same = float((v.view(np.int32) == dxg.view(np.int32)).mean())
        du = np.abs(ulps(v, dxg))
        print(f"  dx {k:28s}: bit-identical {100 * same:6.2f}%, max |ulps| {int(du.max())}")
    # numoracle's verdicts
    plan = "preset=torch-eager"
    base = {"dy": dy, "x": x, "w": w}
    outs = {"dx": dxg, "dw": pr[f"{name}/dw_auto"]}
    for tag, extra in (("rstd absent (recomputed)", {}), ("rstd = forward's", {"rstd": rf}),
                       ("rstd = derived", {"rstd": rd})):
        rep = numoracle.check("rms_norm_bwd", {**base, **extra}, outs, plan=plan, params={"eps": eps})
        print(f"  autograd dx/dw, {tag:26s}: {rep.verdict} {rep.counts}"
              + (f" worst {rep.worst}" if rep.verdict != "PASS" else ""))
    if f"{name}/dx_fb_derived" in pr.files:
        rep = numoracle.check("rms_norm_bwd", {**base, "rstd": rd},
                              {"dx": pr[f"{name}/dx_fb_derived"], "dw": pr[f"{name}/dw_fb_derived"]},
                              plan=plan, params={"eps": eps})
        print(f"  _fused_rms_norm_backward(rstd derived), given it: {rep.verdict} {rep.counts}")
    for tag in ("tfix", "tbv"):
        if f"{name}/dx_{tag}" in pr.files:
            rep = numoracle.check("rms_norm_bwd", base, {"dx": pr[f"{name}/dx_{tag}"], "dw": pr[f"{name}/dw_{tag}"]},
                                  plan=plan, params={"eps": eps})
            print(f"  triton {tag} (rstd recomputed): {rep.verdict} {rep.counts}")
