#!/usr/bin/env python3
"""Validate the matmul plans against vendor GEMMs (cuBLAS through PyTorch).

Two steps, so the GPU machine only runs the GEMMs:

  produce NUMORACLE OUTDIR   (GPU machine) for each dtype x shape x family x setting of
      PyTorch's "reduced precision reduction" flag: `numoracle gen` writes A and B, torch
      computes C = A @ B on the GPU (tensor cores, fp32 accumulation), C is written to
      OUTDIR/<case>.C.bin and packed into one tar per (dtype, flag). fp8 (e4m3 inputs,
      bf16 out) through torch._scaled_mm when available.
  judge NUMORACLE INDIR      (any machine) regenerates A and B with `numoracle gen` (same
      family and seed: bit-identical), and judges each C with `numoracle check
      --candidate file:` under sum=any and sum=mma plans; prints a table.
"""
import ctypes
import glob
import json
import os
import subprocess
import sys
import tarfile
import tempfile

SHAPES = [(256, 256, 4096), (1024, 1024, 1024), (512, 512, 8192)]  # M, N, K
FAMILIES = ["gaussian", "uniform", "large"]
PLANS = ["sum=any", "sum=mma:16", "sum=mma:32"]
FP8_PLANS = ["sum=any", "sum=mma:32", "sum=mma:32:14"]


def cases():
    seed = 1
    for dt in ("bf16", "fp16"):
        for rpr in (0, 1):
            for (m, n, k) in SHAPES:
                for fam in FAMILIES:
                    yield dict(dt=dt, rpr=rpr, m=m, n=n, k=k, fam=fam, seed=seed,
                               tag=f"{dt}_rpr{rpr}_{m}x{n}x{k}_{fam}")
                    seed += 1
    for fam in FAMILIES:
        yield dict(dt="fp8_e4m3", rpr=0, m=512, n=512, k=4096, fam=fam, seed=seed,
                   tag=f"fp8_e4m3_512x512x4096_{fam}")
        seed += 1


def gen(nmo, cs, d, plan=None):
    args = [nmo, "gen", "--op", "matmul", "--dtype", cs["dt"], "--shape",
            f"{cs['m']}x{cs['n']}x{cs['k']}", "--family", cs["fam"], "--seed", str(cs["seed"]),
            "--out-dir", d]
    if cs["dt"] == "fp8_e4m3":
        args += ["--plan", "in=fp8_e4m3 out=bf16"]
    subprocess.run(args, check=True, capture_output=True)


def produce(nmo, out):
    import torch
    dev = "cuda"
    tdt = {"bf16": torch.bfloat16, "fp16": torch.float16}
    os.makedirs(out, exist_ok=True)
    tars = {}
    prov = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
            "cuda": torch.version.cuda, "cublas": "via torch.matmul"}
    for cs in cases():
        with tempfile.TemporaryDirectory() as d:
            gen(nmo, cs, d)
            m, n, k = cs["m"], cs["n"], cs["k"]
            raw_a = open(os.path.join(d, "A.bin"), "rb").read()
            raw_b = open(os.path.join(d, "B.bin"), "rb").read()
            if cs["dt"] == "fp8_e4m3":
                if not hasattr(torch, "_scaled_mm"):
                    continue
                a = torch.frombuffer(bytearray(raw_a), dtype=torch.uint8).view(torch.float8_e4m3fn).reshape(m, k).to(dev)
                b = torch.frombuffer(bytearray(raw_b), dtype=torch.uint8).view(torch.float8_e4m3fn).reshape(k, n).to(dev)
                one = torch.tensor(1.0, device=dev)
                try:
                    c = torch._scaled_mm(a, b.t().contiguous().t(), scale_a=one, scale_b=one,
                                         out_dtype=torch.bfloat16)
                except Exception as e:  # noqa: BLE001
                    prov[f"fp8_error"] = str(e)[:300]
                    continue
                if isinstance(c, tuple):
                    c = c[0]
            else:
                a = torch.frombuffer(bytearray(raw_a), dtype=torch.int16).view(tdt[cs["dt"]]).reshape(m, k).to(dev)
                b = torch.frombuffer(bytearray(raw_b), dtype=torch.int16).view(tdt[cs["dt"]]).reshape(k, n).to(dev)
                torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = bool(cs["rpr"])
                torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = bool(cs["rpr"])
                c = torch.matmul(a, b)
            torch.cuda.synchronize()
            c = c.contiguous().cpu()
            path = os.path.join(out, cs["tag"] + ".C.bin")
            with open(path, "wb") as f:
                f.write(ctypes.string_at(c.data_ptr(), c.numel() * c.element_size()))
            key = f"gemm_{cs['dt']}_rpr{cs['rpr']}.tar"
            tars.setdefault(key, []).append(path)
    for key, paths in tars.items():
        with tarfile.open(os.path.join(out, key), "w") as t:
            for p in paths:
                t.add(p, arcname=os.path.basename(p))
        for p in paths:
            os.remove(p)
    json.dump(prov, open(os.path.join(out, "gemm_provenance.json"), "w"), indent=1)
    print("produced:", sorted(tars), prov)


def judge(nmo, indir):
    work = tempfile.mkdtemp()
    for t in glob.glob(os.path.join(indir, "gemm_*.tar")):
        with tarfile.open(t) as tf:
            tf.extractall(work)
    rows = []
    for cs in cases():
        cpath = os.path.join(work, cs["tag"] + ".C.bin")
        if not os.path.exists(cpath):
            continue
        with tempfile.TemporaryDirectory() as d:
            gen(nmo, cs, d)
            res = {}
            for plan in (FP8_PLANS if cs["dt"] == "fp8_e4m3" else PLANS):
                full = f"in=fp8_e4m3 out=bf16 {plan}" if cs["dt"] == "fp8_e4m3" else plan
                js = os.path.join(d, "r.json")
                p = subprocess.run([nmo, "check", "--op", "matmul", "--dtype", cs["dt"], "--shape",
                                    f"{cs['m']}x{cs['n']}x{cs['k']}", "--input", f"A={d}/A.bin",
                                    "--input", f"B={d}/B.bin", "--candidate", f"file:{cpath}",
                                    "--plan", full, "--json", js], capture_output=True, text=True)
                try:
                    j = json.load(open(js))
                    res[plan] = dict(verdict=j["verdict"], fail=j["counts"]["fail"],
                                     inconclusive=j["counts"]["inconclusive"], n=j["counts"]["elements"],
                                     w50=j["width_ulps"]["median"], w99=j["width_ulps"]["p99"],
                                     worst_out=j.get("worst", {}).get("outside_ulps"))
                except Exception:  # noqa: BLE001
                    res[plan] = dict(verdict="ERROR", rc=p.returncode, text=(p.stdout + p.stderr)[-200:])
            rows.append((cs["tag"], res))
            print(f"{cs['tag']:36s} " + " | ".join(
                f"{pl}: {r['verdict'][:5]} fail={r.get('fail')} inc={r.get('inconclusive')}"
                for pl, r in res.items()), flush=True)
    json.dump(rows, open(os.path.join(indir if os.access(indir, os.W_OK) else work, "gemm_judged.json"), "w"), indent=1)
    return rows


if __name__ == "__main__":
    mode, nmo, d = sys.argv[1], sys.argv[2], sys.argv[3]
    produce(nmo, d) if mode == "produce" else judge(nmo, d)
