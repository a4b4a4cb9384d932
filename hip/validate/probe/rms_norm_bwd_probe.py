#!/usr/bin/env python3
"""What does eager PyTorch's CUDA rms_norm backward compute (issue 21's false FAIL)?

Runs, on numoracle's own inputs (an .npz written on the host by
`rms_norm_bwd_probe_inputs.py`: x, w, dy and the rstd numoracle derives, per case):
  - the forward torch.ops.aten._fused_rms_norm (what F.rms_norm dispatches to on CUDA in
    PyTorch >= 2.9), keeping the rstd it saves;
  - autograd through F.rms_norm (hip/validate/invariance_h200.py's rms_bwd), as the
    contract's gradient callable runs it;
  - torch.ops.aten._fused_rms_norm_backward given numoracle's derived rstd, and given the
    forward's own rstd;
  - the kernels the autograd backward launches (torch.profiler);
  - the Triton backward kernels of invariance_h200.py (triton_fixed_bwd, triton_bv_bwd),
    as a smoke test before they are judged.
Writes every tensor to $OUT/probe.npz and a text summary to stdout; the analysis (which
formula, order and precision reproduce the bits) is done on the host from the npz:
`rms_norm_bwd_probe_analyse.py`.

    python3 hip/validate/probe/rms_norm_bwd_probe.py INPUTS.npz
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
import invariance_h200 as ih  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
inp = np.load(sys.argv[1])
out = {}
dev = "cuda"
print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0), flush=True)
names = sorted({k.split("/")[0] for k in inp.files})
for name in names:
    g = lambda k: torch.from_numpy(inp[f"{name}/{k}"]).to(dev)  # noqa: E731
    x, w, dy, rd = g("x"), g("w"), g("dy"), g("rstd")
    eps = float(inp[f"{name}/eps"])
    M, N = x.shape
    res = {}
    try:
        y, rf = torch.ops.aten._fused_rms_norm(x, [N], w, eps)
        res["y"], res["rstd_fwd"] = y, rf
        print(f"{name}: _fused_rms_norm rstd shape {tuple(rf.shape)} dtype {rf.dtype}; "
              f"rstd_fwd == derived: {int((rf.reshape(-1) == rd).sum())}/{M}", flush=True)
    except Exception as e:  # noqa: BLE001
        print(f"{name}: _fused_rms_norm: {type(e).__name__}: {e}", flush=True)
        rf = None
    xg = x.detach().requires_grad_(True)
    wg = w.detach().requires_grad_(True)
    yy = ih.rms_fwd(xg, wg, eps)
    gf = yy.grad_fn
    saved = [a for a in dir(gf) if a.startswith("_saved")]
    print(f"{name}: grad_fn {type(gf).__name__} saved {saved}", flush=True)
    for a in saved:
        v = getattr(gf, a)
        if isinstance(v, torch.Tensor) and v.dtype == torch.float32 and v.numel() == M:
            res["rstd_autograd"] = v.detach().reshape(-1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        dx, dw = torch.autograd.grad(yy, (xg, wg), dy)
        torch.cuda.synchronize()
    ks = sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})
    print(f"{name}: backward kernels: {ks}", flush=True)
    res["dx_auto"], res["dw_auto"] = dx, dw
    dx2, dw2 = ih.rms_bwd(dy, x, w, eps)
    print(f"{name}: rms_bwd == autograd above: dx {bool(torch.equal(dx2, dx))} dw {bool(torch.equal(dw2, dw))}")
    for tag, r in (("derived", rd), ("fwd", rf)):
        if r is None:
            continue
        try:
            rr = r.reshape(rf.shape if rf is not None else (M, 1)).contiguous()
            a, b = torch.ops.aten._fused_rms_norm_backward(dy, x, [N], rr, w, [True, True])
            res[f"dx_fb_{tag}"], res[f"dw_fb_{tag}"] = a, b
            print(f"{name}: _fused_rms_norm_backward(rstd {tag}) == autograd: dx {bool(torch.equal(a, dx))} "
                  f"dw {bool(torch.equal(b, dw))}", flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"{name}: _fused_rms_norm_backward({tag}): {type(e).__name__}: {e}", flush=True)
    if ih.triton is not None:
        for tag, fn in (("tfix", ih.triton_fixed_bwd), ("tbv", ih.triton_bv_bwd)):
            try:
                a, b = fn(dy, x, w, eps)
                res[f"dx_{tag}"], res[f"dw_{tag}"] = a, b
                ex = (dx.double() - a.double()).abs().max().item()
                print(f"{name}: {tag}: max |dx - eager dx| {ex:.3g}; dw {(dw.double() - b.double()).abs().max().item():.3g}",
                      flush=True)
                # the per-row dx of the first 4 rows alone must equal the batch's (fixed order)
                a4, _ = fn(dy[:4].contiguous(), x[:4].contiguous(), w, eps)
                print(f"{name}: {tag}: rows 0..3 alone == in the batch: {bool(torch.equal(a4, a[:4]))}", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"{name}: {tag}: {type(e).__name__}: {e}", flush=True)
    for k, v in res.items():
        out[f"{name}/{k}"] = v.detach().cpu().numpy()
np.savez_compressed(os.path.join(os.environ.get("OUT", "."), "probe.npz"), **out)
print("probe: wrote", len(out), "arrays", flush=True)
