"""The four-judgment contract from Python: numoracle.judge and
numoracle.testing.assert_invariant drive NumPy kernels through the same contract file as
`numoracle judge --contract` (contracts/default.json), and provenance is checked before
any PASS."""
import json
import os
import re

import numpy as np
import pytest

import numoracle
from numoracle.testing import assert_invariant

from conftest import ROOT, Counting, bf16_to_f32, f32_to_bf16, run_cli

F32 = np.float32
CONTRACT = os.path.join(ROOT, "contracts", "default.json")


def _vals(a, dt):
    return bf16_to_f32(a) if dt == "bf16" else np.asarray(a, dtype=F32)


def _store(y, dt):
    return f32_to_bf16(y) if dt == "bf16" else np.asarray(y, dtype=F32)


def _rms(x, w, eps, dt, block):
    """rms_norm in fp32, the sum of squares in blocks of `block` columns (each block
    left to right, block partials added in order); block(B) picks it from the batch."""
    xv, wv = _vals(x, dt), _vals(w, dt)
    B, N = xv.shape
    bs = block(B)
    ss = np.zeros(B, F32)
    for s in range(0, N, bs):
        part = np.zeros(B, F32)
        for j in range(s, min(s + bs, N)):
            part = (part + xv[:, j] * xv[:, j]).astype(F32)
        ss = (ss + part).astype(F32)
    r = (F32(1) / np.sqrt((ss / F32(N) + F32(eps)).astype(F32))).astype(F32)
    return _store((xv * r[:, None] * wv).astype(F32), dt)


def rms_fixed(dt):
    def rms_norm(x, w, eps):
        return _rms(x, w, eps, dt, lambda B: 16)
    return rms_norm


def rms_batch_variant(dt):
    # a launch heuristic: small batches split each row's reduction finer (more blocks)
    def rms_norm_bv(x, w, eps):
        return _rms(x, w, eps, dt, lambda B: 4 if B < 4 else 16)
    return rms_norm_bv


def softmax_bwd_np(y, dy, x=None):
    yv, dv = y.astype(F32), dy.astype(F32)
    s = np.zeros(yv.shape[0], F32)
    for j in range(yv.shape[1]):
        s = (s + yv[:, j] * dv[:, j]).astype(F32)
    return (yv * (dv - s[:, None])).astype(F32)


# ---- invariance ---------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ["fp32", "bf16"])
def test_invariant_numpy_kernel_passes(dt):
    cell = assert_invariant(rms_fixed(dt), op="rms_norm", dtype=dt, contract=CONTRACT)
    assert cell.verdict == "PASS"
    names = [c["name"] for c in cell.configurations]
    assert names == ["sizes", "chunks:3", "reverse", "rotate:3", "pad:2", "stride:5", "repeat"]
    assert all(c["identical"] and c["calls"] >= 1 and c["compared"] > 0 for c in cell.configurations)
    assert cell.provenance["backend"] == "python" and cell.provenance["device"] == "cpu"
    assert cell.provenance["output_dtypes"] == [dt]


def test_the_matrix_from_python():
    m = numoracle.judge("rms_norm", "fp32", rms_fixed("fp32"), contract=CONTRACT)
    assert m.profile == "python-host"
    assert {j: c.verdict for j, c in m.cells.items()} == {
        "forward_accuracy": "PASS", "gradient_accuracy": "SKIPPED",
        "forward_invariance": "PASS", "gradient_invariance": "SKIPPED"}
    assert m.exit == 3 and m.verdict == "INCONCLUSIVE"  # a required cell without a candidate
    acc = m.cells["forward_accuracy"].to_dict()
    assert [s["seed"] for s in acc["seeds"]] == [0, 1] and acc["failing"] == 0 and acc["elements"] == 2 * 8 * 64
    assert "rms_norm" in m.text() and "SKIPPED" in m.text()


def test_gradient_invariance_from_python():
    cell = assert_invariant(softmax_bwd_np, op="softmax", gradient=True, contract=CONTRACT)
    assert cell.operator == "softmax_bwd" and cell.verdict == "PASS"
    m = numoracle.judge("softmax", "fp32", None, softmax_bwd_np, contract=CONTRACT,
                        judgments=["gradient_accuracy", "gradient_invariance"])
    assert [c.verdict for c in m.cells.values()] == ["PASS", "PASS"] and m.exit == 0


@pytest.mark.parametrize("dt", ["fp32"])
def test_batch_variant_reduction_fails_naming_row_and_element(dt):
    fn = rms_batch_variant(dt)
    with pytest.raises(AssertionError) as ei:
        assert_invariant(fn, op="rms_norm", dtype=dt, contract=CONTRACT)
    msg = str(ei.value)
    m = re.search(r"first difference: composition (\S+), output y, row (\d+), element (\d+)", msg)
    assert m, msg
    comp, row, elem = m.group(1), int(m.group(2)), int(m.group(3))
    assert comp == "sizes"
    # the reported element really differs: recompute it here from the same inputs
    inp = numoracle.inputs("rms_norm", "8x64", dt, "gaussian", 0)
    x, w = inp["x"], inp["w"]
    ref = fn(x, w, 1e-6)
    bits = re.search(r"reference \(whole batch\): \S+ \((0x[0-9a-f]+)\)\n\s+this composition:\s+\S+ \((0x[0-9a-f]+)\)",
                     msg)
    assert bits, msg
    assert int(bits.group(1), 16) == int(ref.view(np.uint32)[row, elem])
    got = [fn(x[:b], w, 1e-6) for b in range(row + 1, 9)]
    assert any(int(g.view(np.uint32)[row, elem]) == int(bits.group(2), 16) for g in got)
    # the same kernel is accurate: the judgments are independent
    mm = numoracle.judge("rms_norm", dt, fn, contract=CONTRACT, judgments=["forward_accuracy"])
    assert mm.cells["forward_accuracy"].verdict == "PASS"
    assert "compositions: sizes: differs, chunks:3: differs, reverse: identical" in msg


def test_declined_composition_is_never_a_pass():
    def packed_only(x, w, eps):
        if not x.flags["C_CONTIGUOUS"]:
            raise NotImplementedError("strided rows")
        return rms_fixed("fp32")(x, w, eps)
    with pytest.raises(AssertionError, match="INCONCLUSIVE"):
        assert_invariant(packed_only, op="rms_norm", contract=CONTRACT)
    cell = assert_invariant(packed_only, op="rms_norm", contract=CONTRACT, allow_inconclusive=True)
    st = {c["name"]: c for c in cell.configurations}["stride:5"]
    assert st["skipped"] and "strided rows" in st["why"]


# ---- provenance before any PASS ---------------------------------------------------------------

@pytest.mark.parametrize("fake,why", [
    ({"tf32": True}, "the run has tf32=on; the profile requires tf32=off"),
    ({"reduced_precision_reduction": True}, "reduced_precision_reduction=on"),
    ({"reduced_precision_reduction": None}, "does not record reduced_precision_reduction"),
    ({"backend": "cpu"}, "the run's backend is cpu; profile python-host requires python"),
    ({"device": "cuda:0"}, "the run's device is cuda:0; profile python-host requires cpu"),
])
def test_provenance_disagreeing_is_rejected_before_running(fake, why):
    fn = Counting(rms_fixed("fp32"))
    m = numoracle.judge("rms_norm", "fp32", fn, contract=CONTRACT, provenance=fake)
    for j in ("forward_accuracy", "forward_invariance"):
        c = m.cells[j]
        assert c.verdict == "REJECTED" and why in c.detail, c.detail
    assert fn.calls == 0  # rejected before anything ran
    assert m.exit == 1
    with pytest.raises(AssertionError, match="REJECTED"):
        assert_invariant(fn, op="rms_norm", contract=CONTRACT, provenance=fake)


def test_a_call_that_falls_back_is_rejected_mid_run():
    n = {"calls": 0, "flip": 4}

    def rec(r):  # records: the pre-run one, then one per call; call flip-1 ran elsewhere
        n["calls"] += 1
        return {**r, "device": "cuda:0"} if n["calls"] == n["flip"] else r
    cell = numoracle.judge("rms_norm", "fp32", rms_fixed("fp32"), contract=CONTRACT, provenance=rec,
                           judgments=["forward_invariance"]).cells["forward_invariance"]
    assert cell.verdict == "REJECTED", cell.detail
    assert "call 3 of rms_norm: the run's device is cuda:0; profile python-host requires cpu" in cell.detail
    assert cell.configurations == []  # nothing judged is reported
    n.update(calls=0, flip=3)
    acc = numoracle.judge("rms_norm", "fp32", rms_fixed("fp32"), contract=CONTRACT, provenance=rec,
                          judgments=["forward_accuracy"]).cells["forward_accuracy"].to_dict()
    assert acc["verdict"] == "REJECTED" and "call 2 of rms_norm" in acc["detail"], acc
    assert acc["seeds"] == [] and acc["elements"] == 0  # seed 0 was judged: not reported


def test_dtype_drift_is_rejected():
    def upcast(x, w, eps):
        return rms_fixed("fp32")(x, w, eps).astype(np.float64)
    cell = numoracle.judge("rms_norm", "fp32", upcast, contract=CONTRACT,
                           judgments=["forward_accuracy"]).cells["forward_accuracy"]
    assert cell.verdict == "REJECTED"
    assert "output y is fp64; the cell stores fp32" in cell.detail


def test_a_numpy_kernel_under_the_cuda_profile_is_a_fallback():
    cell = numoracle.judge("rms_norm", "fp32", rms_fixed("fp32"), contract=CONTRACT, profile="torch-cuda",
                           judgments=["forward_invariance"]).cells["forward_invariance"]
    assert cell.verdict == "REJECTED" and "device is cpu; profile torch-cuda requires cuda" in cell.detail


def test_record_provenance_of_numpy(monkeypatch):
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    r = numoracle.record_provenance("numpy", "bf16", "cpu")
    assert r == {"backend": "python", "device": "cpu", "device_name": "cpu", "tf32": False,
                 "reduced_precision_reduction": False, "deterministic": None, "cublas_workspace": "unset"}


# ---- errors ---------------------------------------------------------------------------------

def test_errors_name_the_field(tmp_path):
    with pytest.raises(numoracle.Error) as ei:
        numoracle.judge("no_such_op", "fp32", rms_fixed("fp32"), contract=CONTRACT)
    assert ei.value.status == 6 and "no operator 'no_such_op'" in ei.value.message
    with pytest.raises(numoracle.Error, match="no profile 'gpu'"):
        numoracle.judge("rms_norm", "fp32", rms_fixed("fp32"), contract=CONTRACT, profile="gpu")
    bad = json.load(open(CONTRACT))
    bad["profiles"]["python-host"]["device"] = "tpu"
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(bad))
    with pytest.raises(numoracle.Error) as ei:
        numoracle.judge("rms_norm", "fp32", rms_fixed("fp32"), contract=str(p))
    assert ei.value.status == 4 and f"{p}: profiles.python-host.device: unknown device kind 'tpu'" in ei.value.message
    with pytest.raises(numoracle.Error, match="unknown judgment"):
        numoracle.judge("rms_norm", "fp32", rms_fixed("fp32"), contract=CONTRACT, judgments=["speed"])


def test_a_callable_exception_propagates():
    def broken(x, w, eps):
        raise RuntimeError("kernel launch failed")
    with pytest.raises(RuntimeError, match="kernel launch failed"):
        numoracle.judge("rms_norm", "fp32", broken, contract=CONTRACT)


def test_a_parameter_the_callable_ignores_is_refused(tmp_path):
    d = json.load(open(CONTRACT))
    d["operators"]["rms_norm"]["params"] = {"offset": 1}
    p = tmp_path / "gemma.json"
    p.write_text(json.dumps(d))
    with pytest.raises(ValueError, match="takes no parameter offset"):
        numoracle.judge("rms_norm", "fp32", rms_fixed("fp32"), contract=str(p), judgments=["forward_accuracy"])


def test_same_contract_as_the_cli():
    """The CLI loads the same file with the profiles the Python side uses."""
    rc, out, err = run_cli(["judge", "--contract", CONTRACT, "--op", "rms_norm", "--dtype", "fp32",
                            "--profile", "python-host"])
    assert rc == 1, (out, err)  # the CLI's CPU candidates are not python runs: rejected
    assert "the run's backend is cpu; profile python-host requires python" in out


# ---- PyTorch callables (CPU here; the H200 script runs them on CUDA) --------------------------

def _torch():
    return pytest.importorskip("torch")


def rms_torch(x, w, eps):
    xf = x.float()
    return (xf * _torch().rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


@pytest.mark.parametrize("dt", ["fp32", "bf16"])
def test_torch_callable_matrix(dt):
    torch = _torch()
    seen = []

    def fn(x, w, eps):
        seen.append((x.dtype, tuple(x.stride())))
        return rms_torch(x, w, eps)
    m = numoracle.judge("rms_norm", dt, fn, like="torch", contract=CONTRACT,
                        judgments=["forward_accuracy", "forward_invariance"])
    assert [c.verdict for c in m.cells.values()] == ["PASS", "PASS"], m.text()
    want = torch.float32 if dt == "fp32" else torch.bfloat16
    assert all(d == want for d, _ in seen)
    assert (69, 1) in [s for _, s in seen]  # stride:5: rows 64 + 5 elements apart, as the harness laid them
    pv = m.cells["forward_invariance"].provenance
    assert pv["device"] == "cpu" and pv["tf32"] is False and pv["output_dtypes"] == [dt]


def test_torch_settings_are_recorded_per_run():
    torch = _torch()
    m = torch.backends.cuda.matmul
    try:
        old = m.allow_fp16_reduced_precision_reduction
    except Exception:  # noqa: BLE001
        pytest.skip("this torch has no allow_fp16_reduced_precision_reduction")
    try:
        m.allow_fp16_reduced_precision_reduction = True
        r = numoracle.judge("rms_norm", "fp16", rms_torch, like="torch", contract=CONTRACT,
                            judgments=["forward_invariance"]).cells["forward_invariance"]
        assert r.verdict == "REJECTED" and "reduced_precision_reduction=on" in r.detail
        m.allow_fp16_reduced_precision_reduction = False
        r = numoracle.judge("rms_norm", "fp16", rms_torch, like="torch", contract=CONTRACT,
                            judgments=["forward_invariance"]).cells["forward_invariance"]
        assert r.verdict == "PASS", r.detail
        assert numoracle.record_provenance("torch", "fp16", "cpu")["reduced_precision_reduction"] is False
    finally:
        m.allow_fp16_reduced_precision_reduction = old
    # the torch-cuda profile requires deterministic algorithms: off by default
    r = numoracle.judge("rms_norm", "fp32", rms_torch, like="torch", contract=CONTRACT, profile="torch-cuda",
                        device="cuda:0" if torch.cuda.is_available() else None,
                        provenance={"device": "cuda:0"}, judgments=["forward_invariance"])
    if not torch.are_deterministic_algorithms_enabled():
        assert r.cells["forward_invariance"].verdict == "REJECTED"
        assert "does not record" not in r.cells["forward_invariance"].detail
        assert "deterministic=off" in r.cells["forward_invariance"].detail
