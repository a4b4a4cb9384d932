#!/usr/bin/env python3
"""The four-judgment matrix on the H200, from the Python package (issue 21).

For each GPU implementation below, numoracle.judge runs the contract
hip/validate/invariance_h200.json (profile torch-cuda): forward and gradient accuracy
(the certified oracle under the dtype's default plan, two seeds) and forward and gradient
invariance (the same rows, bitwise, across batch sizes 1..B, chunks, reversed / rotated
rows, padding rows, strided rows, a repeat run). The library builds every composition on
the host; each call copies the tensors to the GPU with their strides, runs, copies back.

    eager        rms_norm (F.rms_norm, autograd backward), softmax (torch.softmax,
                 torch._softmax_backward_data)                      fp32 bf16 fp16
    cublas       matmul A @ B at 32 rows x 1024 x 4096 (autograd backward at 32x256x1024):
                 cuBLAS picks its kernel by shape, so rows may differ with the batch
                                                                    fp32 bf16
    triton-fixed a Triton rms_norm with one fixed reduction order (a row per program, the
                 whole row in one tl.sum, IEEE sqrt/div): must be forward-invariant
                 Its gradient: triton_fixed_bwd (dx a row per program, rstd recomputed,
                 one tl.sum for S; dw summed row after row): must PASS all four
    triton-bv    NEGATIVE CONTROL: the same kernels with a launch heuristic (batches under
                 16 rows reduce in 8 chunks, S in 8 interleaved parts): accurate, must FAIL
                 forward and gradient invariance in fp32
    defaults     eager rms_norm under PyTorch's default settings (cuDNN TF32 on, 16-bit
                 reduced-precision reductions allowed, nondeterministic algorithms
                 allowed): must be REJECTED before anything runs
    no-cublas-ws the strict settings, CUBLAS_WORKSPACE_CONFIG removed from the environment
                 for the row: every cell REJECTED before anything runs
eager rms_norm and softmax must PASS all four judgments (correct library kernels). The
gradient callables do not take rms_norm_bwd's rstd: autograd uses the rstd its own forward
saved, so the contract declares it recomputed (the reference encloses every recomputation).

Settings for the judged runs: TF32 off (matmul and cuDNN), allow_{bf16,fp16}_reduced_
precision_reduction off, torch.use_deterministic_algorithms(True) (CUBLAS_WORKSPACE_CONFIG
=:4096:8 set before CUDA starts). Each call's record (device of every output and its model,
settings, CUBLAS_WORKSPACE_CONFIG, the dtype of every input and output) is checked against
the profile (device_name "NVIDIA H200"): a CPU fallback, another GPU, a changed flag or a
cast REJECTS.

Prints each matrix as the CLI does, writes $OUT/inv/<impl>_<op>_<dtype>.json (the matrix,
torch / triton / CUDA versions, device name, seconds) and $OUT/inv/summary.json. Exit 0
when every expectation above holds (the other cells are evidence, reported as they come),
1 otherwise, 2 without CUDA (unless --device cpu, a smoke run under profile torch-host).

    PYTHONPATH=python NUMORACLE_LIB=build-dev/oracle/libnumoracle.so \\
        python3 hip/validate/invariance_h200.py [--out DIR] [--only eager,cublas,...]
"""
import argparse
import json
import os
import sys
import time
import traceback

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before CUDA starts

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:
    print(f"invariance_h200: no torch ({e})")
    sys.exit(2)

import numoracle

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None

HERE = os.path.dirname(os.path.abspath(__file__))
CONTRACT = os.path.join(HERE, "invariance_h200.json")


def _set(obj, name, value):
    try:
        setattr(obj, name, value)
    except Exception:  # noqa: BLE001 -- a flag this torch does not have
        pass


def settings(strict):
    """strict: the profile's settings; else PyTorch's defaults."""
    m = torch.backends.cuda.matmul
    _set(m, "allow_tf32", False)  # PyTorch's default for matmul too
    _set(torch.backends.cudnn, "allow_tf32", not strict)
    _set(m, "allow_bf16_reduced_precision_reduction", not strict)
    _set(m, "allow_fp16_reduced_precision_reduction", not strict)
    torch.use_deterministic_algorithms(bool(strict))


# ---- implementations ------------------------------------------------------------------------

def rms_fwd(x, w, eps):
    if hasattr(F, "rms_norm"):
        return F.rms_norm(x, (x.shape[-1],), w, eps)
    xf = x.float()  # torch < 2.4: the composition F.rms_norm replaced
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


def rms_bwd(dy, x, w, eps):
    xg = x.detach().requires_grad_(True)
    wg = w.detach().requires_grad_(True)
    dx, dw = torch.autograd.grad(rms_fwd(xg, wg, eps), (xg, wg), dy)
    return dx, dw


def softmax_fwd(x):
    return torch.softmax(x, dim=-1)


def softmax_bwd(y, dy, x):
    # the eager backward kernel autograd calls (from the saved output y)
    return torch._softmax_backward_data(dy, y, -1, x.dtype)


def mm_fwd(A, B):
    return A @ B


def mm_bwd(A, B, dC):
    ag = A.detach().requires_grad_(True)
    bg = B.detach().requires_grad_(True)
    dA, dB = torch.autograd.grad(ag @ bg, (ag, bg), dC)
    return dA, dB


if triton is not None:
    @triton.jit
    def _rms_fwd_kernel(X, W, Y, sx, sy, N, eps, CHUNK: tl.constexpr):
        # one program per row; the sum of squares over CHUNK-wide slices accumulated
        # elementwise, then one tl.sum: with CHUNK >= N a single tree over the row whose
        # shape does not depend on the batch
        row = tl.program_id(0)
        acc = tl.zeros([CHUNK], dtype=tl.float32)
        for start in range(0, N, CHUNK):
            cols = start + tl.arange(0, CHUNK)
            x = tl.load(X + row * sx + cols, mask=cols < N, other=0.0).to(tl.float32)
            acc += x * x
        ss = tl.sum(acc, axis=0)
        r = tl.div_rn(1.0, tl.sqrt_rn(tl.div_rn(ss, N.to(tl.float32)) + eps))
        for start in range(0, N, CHUNK):
            cols = start + tl.arange(0, CHUNK)
            x = tl.load(X + row * sx + cols, mask=cols < N, other=0.0).to(tl.float32)
            w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
            tl.store(Y + row * sy + cols, ((x * r) * w).to(Y.dtype.element_ty), mask=cols < N)

    def _triton_rms(x, w, eps, chunk):
        M, N = x.shape
        if x.stride(1) != 1:
            raise NotImplementedError("rows must be contiguous within the row")
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        _rms_fwd_kernel[(M,)](x, w, y, x.stride(0), y.stride(0), N, eps, CHUNK=chunk(M, triton.next_power_of_2(N)))
        return y

    def triton_fixed(x, w, eps):
        return _triton_rms(x, w, eps, lambda M, block: block)

    def triton_bv(x, w, eps):
        # NEGATIVE CONTROL: small batches get a finer split (a heuristic that fills SMs)
        return _triton_rms(x, w, eps, lambda M, block: block if M >= 16 else block // 8)

    @triton.jit
    def _rms_bwd_dx_kernel(DY, X, W, DX, RSTD, sdy, sx, sdx, N, eps, inv_n, BLOCK: tl.constexpr,
                           PARTS: tl.constexpr):
        # one program per row, the whole row in registers. rstd recomputed as the forward
        # kernel does (one tl.sum of x*x, IEEE div/sqrt); the factored form of
        # refs/rms_norm_bwd.c: m = dy*w, S = sum m*x, c = (rstd*rstd)*S*RN(1/N),
        # dx = rstd*(m - x*c). PARTS > 1 (the negative control only) sums S as PARTS
        # partial tl.sums over interleaved slices, added in order.
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(X + row * sx + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + row * sdy + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        ss = tl.sum(x * x, axis=0)
        r = tl.div_rn(1.0, tl.sqrt_rn(tl.div_rn(ss, N.to(tl.float32)) + eps))
        m = dy * w
        if PARTS == 1:
            S = tl.sum(m * x, axis=0)
        else:
            S = 0.0
            for p in tl.static_range(PARTS):
                S += tl.sum(tl.where(cols % PARTS == p, m * x, 0.0), axis=0)
        c = ((r * r) * S) * inv_n
        dx = r * (m - x * c)
        tl.store(DX + row * sdx + cols, dx.to(DX.dtype.element_ty), mask=mask)
        tl.store(RSTD + row, r)

    @triton.jit
    def _rms_bwd_dw_kernel(DY, X, RSTD, DW, sdy, sx, M, N, BLOCK_N: tl.constexpr):
        # one program per BLOCK_N columns; rows summed one after another, 0..M-1: the
        # order of the rows is the only order (invariant under order-keeping compositions)
        cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
        mask = cols < N
        acc = tl.zeros([BLOCK_N], dtype=tl.float32)
        for i in range(0, M):
            dy = tl.load(DY + i * sdy + cols, mask=mask, other=0.0).to(tl.float32)
            x = tl.load(X + i * sx + cols, mask=mask, other=0.0).to(tl.float32)
            acc += (dy * x) * tl.load(RSTD + i)
        tl.store(DW + cols, acc.to(DW.dtype.element_ty), mask=mask)

    def _triton_rms_bwd(dy, x, w, eps, parts):
        M, N = x.shape
        if x.stride(1) != 1 or dy.stride(1) != 1 or w.stride(0) != 1:
            raise NotImplementedError("rows must be contiguous within the row")
        dx = torch.empty((M, N), dtype=x.dtype, device=x.device)
        dw = torch.empty((N,), dtype=w.dtype, device=x.device)
        rstd = torch.empty((M,), dtype=torch.float32, device=x.device)
        inv_n = float(torch.tensor(1.0 / N, dtype=torch.float32))  # RN32(1/N), as a float32 argument
        _rms_bwd_dx_kernel[(M,)](dy, x, w, dx, rstd, dy.stride(0), x.stride(0), dx.stride(0), N, eps, inv_n,
                                 BLOCK=triton.next_power_of_2(N), PARTS=parts(M))
        _rms_bwd_dw_kernel[(triton.cdiv(N, 64),)](dy, x, rstd, dw, dy.stride(0), x.stride(0), M, N, BLOCK_N=64)
        return dx, dw

    def triton_fixed_bwd(dy, x, w, eps):
        return _triton_rms_bwd(dy, x, w, eps, lambda M: 1)

    def triton_bv_bwd(dy, x, w, eps):
        # NEGATIVE CONTROL: batches under 16 rows sum S in 8 interleaved parts
        return _triton_rms_bwd(dy, x, w, eps, lambda M: 1 if M >= 16 else 8)


# (impl, op, dtypes, forward, gradient, expectation: {judgment: verdict} that must hold,
#  strict settings)
ALL_PASS = {j: "PASS" for j in numoracle.JUDGMENTS}


def plan_rows():
    rows = [
        # correct library kernels: every cell must PASS (a FAIL would be a false alarm)
        ("eager", "rms_norm", ["fp32", "bf16", "fp16"], rms_fwd, rms_bwd, ALL_PASS, True),
        ("eager", "softmax", ["fp32", "bf16", "fp16"], softmax_fwd, softmax_bwd, ALL_PASS, True),
        ("cublas", "matmul", ["fp32", "bf16"], mm_fwd, mm_bwd, {}, True),
    ]
    if triton is not None:
        rows += [
            ("triton-fixed", "rms_norm", ["fp32", "bf16", "fp16"], triton_fixed, triton_fixed_bwd, ALL_PASS, True),
            ("triton-bv", "rms_norm", ["fp32"], triton_bv, triton_bv_bwd,
             {"forward_accuracy": "PASS", "gradient_accuracy": "PASS", "forward_invariance": "FAIL",
              "gradient_invariance": "FAIL"}, True),
        ]
    rows.append(("defaults", "rms_norm", ["bf16"], rms_fwd, rms_bwd,
                 {"forward_accuracy": "REJECTED", "forward_invariance": "REJECTED"}, False))
    # the strict settings but no CUBLAS_WORKSPACE_CONFIG in the record: REJECTED before
    # anything runs (cuBLAS is reproducible only with a fixed workspace)
    rows.append(("no-cublas-ws", "rms_norm", ["fp32"], rms_fwd, rms_bwd,
                 {j: "REJECTED" for j in numoracle.JUDGMENTS}, "no-ws"))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "inv"))
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--contract", default=CONTRACT)
    ap.add_argument("--only", default="", help="comma-separated implementations")
    a = ap.parse_args()
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        print("invariance_h200: no CUDA device")
        return 2
    profile = "torch-cuda" if a.device.startswith("cuda") else "torch-host"
    os.makedirs(a.out, exist_ok=True)
    env = {"torch": torch.__version__, "triton": getattr(triton, "__version__", None),
           "cuda": torch.version.cuda, "numoracle": numoracle.version(), "library": numoracle.library_path(),
           "device": torch.cuda.get_device_name(0) if a.device.startswith("cuda") else "cpu",
           "contract": a.contract, "profile": profile}
    print("invariance_h200: " + ", ".join(f"{k} {v}" for k, v in env.items()))
    only = set(filter(None, a.only.split(",")))
    summary, ok_all, t_all = [], True, time.time()
    print(f"{'impl':<13}{'operator':<21}{'dtype':<6}{'forward_accuracy':<20}{'gradient_accuracy':<20}"
          f"{'forward_invariance':<20}{'gradient_invariance':<20}seconds")
    for impl, op, dtypes, fwd, grad, expect, strict in plan_rows():
        if only and impl not in only:
            continue
        for dt in dtypes:
            settings(bool(strict))
            ws = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
            if strict == "no-ws":
                os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
            t0 = time.time()
            row = {"impl": impl, "op": op, "dtype": dt, "expect": expect}
            try:
                m = numoracle.judge(op, dt, fwd, grad, contract=a.contract, profile=profile, like="torch",
                                    device=a.device, label=f"{impl}:{op}")
                if a.device.startswith("cuda"):
                    torch.cuda.synchronize()
                cells = {j: c.verdict for j, c in m.cells.items()}
                row.update(cells=cells, exit=m.exit)
                met = all(cells.get(j) == v for j, v in expect.items())
                dt_s = time.time() - t0
                print(f"{impl:<13}{m.text().splitlines()[0]:<107}{dt_s:7.1f}"
                      f"{'' if met else '   EXPECTATION NOT MET: ' + str(expect)}")
                for line in m.text().splitlines()[1:]:
                    print(f"{'':13}{line}")
                with open(os.path.join(a.out, f"{impl}_{op}_{dt}.json"), "w") as f:
                    json.dump({"env": env, "impl": impl, "expect": expect, "expectation_met": met,
                               "seconds": dt_s, "matrix": m.to_dict()}, f, indent=1)
            except Exception as e:  # noqa: BLE001 -- one row's error is reported, the others run
                met = False
                row["error"] = f"{type(e).__name__}: {e}"
                print(f"{impl:<13}{op:<21}{dt:<6}ERROR {row['error']}")
                traceback.print_exc(limit=3)
            if ws is not None:
                os.environ["CUBLAS_WORKSPACE_CONFIG"] = ws
            row["expectation_met"] = met
            ok_all &= met
            summary.append(row)
    settings(True)
    total = time.time() - t_all
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump({"env": env, "rows": summary, "seconds": total, "all_expectations_met": ok_all}, f, indent=1)
    print(f"invariance_h200: {len(summary)} matrices in {total:.1f} s; expectations "
          f"{'all met' if ok_all else 'NOT all met'}; JSON under {a.out}")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
