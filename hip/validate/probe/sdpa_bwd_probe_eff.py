#!/usr/bin/env python3
"""Memory-efficient SDPA backward: which intermediate does it round? fp64 emulations with
D from the stored O and dS rounded to the dtype (FA2's formulas), plus one more rounding
each: P (as used in dS), dP, dP - D, D itself; the error is the 99.9% quantile in ulps of
each element's own value."""
import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
torch.manual_seed(1)
dev = "cuda"
B, H, S, D = 1, 4, 200, 64
def ulps(x, dt):
    m, ex = torch.frexp(x.abs().clamp_min(2.0 ** -126).float())
    return torch.ldexp(torch.ones_like(m), ex - (8 if dt == torch.bfloat16 else 11)).double()
for dt in (torch.bfloat16, torch.float16):
    for fam in ("gaussian", "shifted"):
        q, k, v, dO = (torch.randn(B, H, S, D, device=dev) for _ in range(4))
        if fam == "shifted":
            q, k, v = q + 2, k + 2, v + 2
        q, k, v, dO = (t.to(dt) for t in (q, k, v, dO))
        sc = D ** -0.5
        qd, kd, vd, dOd = (t.double() for t in (q, k, v, dO))
        s = qd @ kd.transpose(-1, -2) * sc
        P = torch.softmax(s, -1)
        dP = dOd @ vd.transpose(-1, -2)
        for be, bk in (("efficient", SDPBackend.EFFICIENT_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
            qq, kk, vv = (t.clone().requires_grad_(True) for t in (q, k, v))
            with sdpa_kernel([bk]):
                o = F.scaled_dot_product_attention(qq, kk, vv)
            o.backward(dO)
            g = {"dq": qq.grad.double(), "dk": kk.grad.double()}
            od = o.detach().double()
            r = lambda t: t.to(dt).double()
            Do = (dOd * od).sum(-1, keepdim=True)
            hyps = {
                "fa2": P * (dP - Do),
                "P_rnd": r(P) * (dP - Do),
                "dP_rnd": P * (r(dP) - Do),
                "diff_rnd": P * r(dP - Do),
                "D_rnd": P * (dP - r(Do)),
                "P_dP_rnd": r(P) * (r(dP) - Do),
                "P_diff_rnd": r(P) * r(dP - Do),
                "P_D_rnd": r(P) * (dP - r(Do)),
            }
            out = []
            for name, dS in hyps.items():
                dSm = r(dS)
                e = {"dq": sc * dSm @ kd, "dk": sc * dSm.transpose(-1, -2) @ qd}
                errs = {n: float(((g[n] - e[n]).abs() / ulps(e[n], dt)).quantile(0.999)) for n in g}
                out.append(f"{name}: dq={errs['dq']:.2f} dk={errs['dk']:.2f}")
            print(str(dt)[6:], fam, be, " | ".join(out), flush=True)
