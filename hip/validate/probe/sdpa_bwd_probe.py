#!/usr/bin/env python3
"""Which formulas does each SDPA backward backend follow? fp64 emulations under several
hypotheses (where D_i = rowsum(dO*O) comes from, whether P and dS are rounded to the dtype
before the tensor-core products) against the backend's gradients; prints, per backend and
hypothesis, the largest error measured against each element's scale sc*sum|dS||k|."""
import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
torch.manual_seed(1)
dev = "cuda"
BK = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
      "math": SDPBackend.MATH, "cudnn": SDPBackend.CUDNN_ATTENTION}
B, H, S, D = 1, 4, 200, 64
for dt in (torch.bfloat16, torch.float16):
    q, k, v, dO = (torch.randn(B, H, S, D, device=dev).to(dt) for _ in range(4))
    for fam in ("gaussian", "shifted"):
        if fam == "shifted":
            q, k, v = q + 2, k + 2, v + 2
            q, k, v = q.to(dt), k.to(dt), v.to(dt)
        sc = D ** -0.5
        qd, kd, vd, dOd = (t.double() for t in (q, k, v, dO))
        s = qd @ kd.transpose(-1, -2) * sc
        P = torch.softmax(s, -1)
        Oex = P @ vd
        dP = dOd @ vd.transpose(-1, -2)
        for be in ("flash", "efficient", "math", "cudnn"):
            qq, kk, vv = (t.clone().requires_grad_(True) for t in (q, k, v))
            try:
                with sdpa_kernel([BK[be]]):
                    o = F.scaled_dot_product_attention(qq, kk, vv)
                o.backward(dO)
            except Exception as e:
                print(dt, be, "n/a", e); continue
            g = {"dq": qq.grad.double(), "dk": kk.grad.double(), "dv": vv.grad.double()}
            od = o.detach().double()
            res = []
            for Dsrc in ("exact", "o"):
                Dd = (dOd * (Oex if Dsrc == "exact" else od)).sum(-1, keepdim=True)
                for inter in (0, 1):
                    Pm = P.to(dt).double() if inter else P
                    dS = P * (dP - Dd)
                    dSm = dS.to(dt).double() if inter else dS
                    e = {"dq": sc * dSm @ kd, "dk": sc * dSm.transpose(-1, -2) @ qd, "dv": Pm.transpose(-1, -2) @ dOd}
                    _scl = {"dq": sc * dS.abs() @ kd.abs(), "dk": sc * dS.abs().transpose(-1, -2) @ qd.abs(),
                           "dv": P.transpose(-1, -2) @ dOd.abs()}
                    # error in ulps of the element's own value (the output lattice): a right
                    # hypothesis stays near 0.5 (the store) everywhere
                    def ulps(x):
                        m, ex = torch.frexp(x.abs().clamp_min(2.0 ** -126).float())
                        return torch.ldexp(torch.ones_like(m), ex - (8 if dt == torch.bfloat16 else 11)).double()
                    errs = {n: float(((g[n] - e[n]).abs() / ulps(e[n])).quantile(0.999)) for n in g}
                    res.append(f"D={Dsrc:5s} inter={inter}: " + " ".join(f"{n}={errs[n]:.4f}" for n in ("dq", "dk", "dv")))
            print(str(dt)[6:], fam, be, " | ".join(res), flush=True)
