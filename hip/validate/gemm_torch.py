#!/usr/bin/env python3
"""Validate the matmul plans against vendor GEMMs on the GPU (cuBLAS through PyTorch).

For each dtype (bf16, fp16) x shape x family, PyTorch's matmul (cuBLAS, tensor cores,
fp32 accumulation) computes C = A B; inputs and output are written as raw .bin files and
`numoracle check --candidate file:` judges C under several plans (sum=any, sum=mma:K).
Both settings of PyTorch's "reduced precision reduction" flag are run (it lets cuBLAS
reduce split-K partials in the low-precision format). fp8 (e4m3 inputs, bf16 output)
runs through torch._scaled_mm when available.

Usage: gemm_torch.py NUMORACLE_BINARY OUTDIR  (prints one table line per run)
"""
import ctypes
import json
import os
import subprocess
import sys

import torch

NMO, OUT = sys.argv[1], sys.argv[2]
os.makedirs(OUT, exist_ok=True)
dev = "cuda"

SHAPES = [(256, 256, 4096), (1024, 1024, 1024), (512, 768, 16384)]  # M, N, K
FAMILIES = ["gaussian", "uniform", "large"]
PLANS = ["sum=any", "sum=mma:16", "sum=mma:32"]


def family(name, shape, gen):
    x = torch.randn(shape, generator=gen, device=dev, dtype=torch.float32)
    if name == "uniform":
        x = torch.rand(shape, generator=gen, device=dev, dtype=torch.float32) * 2 - 1
    elif name == "large":
        x = x * 300
    return x


def dump(t, path):
    """Raw little-endian bytes of a tensor (no numpy needed)."""
    t = t.contiguous().cpu()
    with open(path, "wb") as f:
        f.write(ctypes.string_at(t.data_ptr(), t.numel() * t.element_size()))


def run_check(args):
    p = subprocess.run([NMO, "check"] + args, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def one(dt_name, dt, m, n, k, fam, rpr, seed):
    gen = torch.Generator(device=dev).manual_seed(seed)
    a = family(fam, (m, k), gen).to(dt)
    b = family(fam, (k, n), gen).to(dt)
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = rpr
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = rpr
    c = torch.matmul(a, b)
    torch.cuda.synchronize()
    tag = f"{dt_name}_{m}x{n}x{k}_{fam}_rpr{int(rpr)}"
    files = {}
    for nm, t in (("A", a), ("B", b), ("C", c)):
        path = os.path.join(OUT, f"{tag}_{nm}.bin")
        dump(t, path)
        files[nm] = path
    res = {}
    for plan in PLANS:
        js = os.path.join(OUT, f"{tag}_{plan.replace('=', '_').replace(':', '_')}.json")
        rc, txt = run_check(["--op", "matmul", "--dtype", dt_name, "--shape", f"{m}x{n}x{k}",
                             "--input", f"A={files['A']}", "--input", f"B={files['B']}",
                             "--candidate", f"file:{files['C']}", "--plan", plan, "--json", js])
        info = {"rc": rc}
        try:
            j = json.load(open(js))
            info.update(verdict=j["verdict"], fail=j["counts"]["fail"],
                        inconclusive=j["counts"]["inconclusive"], n=j["counts"]["elements"],
                        w50=j["width_ulps"]["median"], w99=j["width_ulps"]["p99"],
                        worst=j.get("worst", {}).get("outside_ulps"))
        except Exception:
            info.update(verdict="ERROR", text=txt[-300:])
        res[plan] = info
    for f in files.values():
        os.remove(f)
    return tag, res


def fp8_one(m, n, k, fam, seed):
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        return None
    gen = torch.Generator(device=dev).manual_seed(seed)
    a = family(fam, (m, k), gen).clamp(-448, 448).to(torch.float8_e4m3fn)
    b = family(fam, (n, k), gen).clamp(-448, 448).to(torch.float8_e4m3fn).t()  # column-major B
    one_ = torch.tensor(1.0, device=dev)
    try:
        c = torch._scaled_mm(a, b, scale_a=one_, scale_b=one_, out_dtype=torch.bfloat16)
    except Exception as e:  # noqa: BLE001
        return ("fp8_e4m3_error", {"error": str(e)[:200]})
    if isinstance(c, tuple):
        c = c[0]
    tag = f"fp8e4m3_{m}x{n}x{k}_{fam}"
    paths = {}
    for nm, t in (("A", a.contiguous()), ("B", b.contiguous()), ("C", c.contiguous())):
        p = os.path.join(OUT, f"{tag}_{nm}.bin")
        dump(t, p)
        paths[nm] = p
    res = {}
    for plan in ["sum=any", "sum=mma:32", "sum=mma:32:14"]:
        js = os.path.join(OUT, f"{tag}_{plan.replace('=', '_').replace(':', '_')}.json")
        rc, txt = run_check(["--op", "matmul", "--dtype", "fp8_e4m3", "--shape", f"{m}x{n}x{k}",
                             "--plan", f"in=fp8_e4m3 out=bf16 {plan}",
                             "--input", f"A={paths['A']}", "--input", f"B={paths['B']}",
                             "--candidate", f"file:{paths['C']}", "--json", js])
        try:
            j = json.load(open(js))
            res[plan] = dict(rc=rc, verdict=j["verdict"], fail=j["counts"]["fail"],
                             inconclusive=j["counts"]["inconclusive"], n=j["counts"]["elements"],
                             worst=j.get("worst", {}).get("outside_ulps"))
        except Exception:
            res[plan] = dict(rc=rc, verdict="ERROR", text=txt[-300:])
    for p in paths.values():
        os.remove(p)
    return tag, res


rows = []
seed = 1
for dt_name, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
    for (m, n, k) in SHAPES:
        for fam in FAMILIES:
            for rpr in (False, True):
                rows.append(one(dt_name, dt, m, n, k, fam, rpr, seed))
                seed += 1
for fam in FAMILIES:
    r = fp8_one(512, 512, 4096, fam, seed)
    seed += 1
    if r:
        rows.append(r)

json.dump(rows, open(os.path.join(OUT, "gemm_results.json"), "w"), indent=1)
print(f"{'case':42s} " + " ".join(f"{p:>28s}" for p in PLANS))
for tag, res in rows:
    cells = []
    for p, info in res.items():
        if "verdict" in info:
            cells.append(f"{p}:{info['verdict'][:5]} f={info.get('fail')} i={info.get('inconclusive')}")
        else:
            cells.append(f"{p}:{info}")
    print(f"{tag:42s} " + " | ".join(cells))
