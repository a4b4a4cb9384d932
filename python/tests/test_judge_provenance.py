"""Provenance beyond output dtypes (issue 21): the device model, CUBLAS_WORKSPACE_CONFIG
and the dtype every input reached the kernel in are recorded and checked against the
contract's profile; a run that disagrees is REJECTED before any PASS. And a gradient
callable that recomputes a saved statistic (the contract's "recomputed") is judged with
that input absent, never against a value it did not see."""
import json
import os

import numpy as np
import pytest

import numoracle

from conftest import ROOT, Counting

F32 = np.float32
CONTRACT = os.path.join(ROOT, "contracts", "default.json")


def rms_fwd(x, w, eps):
    x, w = np.asarray(x, F32), np.asarray(w, F32)
    ss = np.zeros(x.shape[0], F32)
    for j in range(x.shape[1]):
        ss = (ss + x[:, j] * x[:, j]).astype(F32)
    r = (F32(1) / np.sqrt((ss / F32(x.shape[1]) + F32(eps)).astype(F32))).astype(F32)
    return ((x * r[:, None]).astype(F32) * w).astype(F32)


def contract(tmp_path, profile_extra=None, settings_extra=None, gradient_extra=None):
    """default.json's rms_norm alone, under one python profile with the given fields."""
    d = json.load(open(CONTRACT))
    prof = {"backend": "python", "device": "cpu",
            "settings": {"tf32": False, "reduced_precision_reduction": False, **(settings_extra or {})}}
    prof.update(profile_extra or {})
    d["profiles"] = {"p": prof}
    d["operators"] = {"rms_norm": {**d["operators"]["rms_norm"], "dtypes": ["fp32"]}}
    d["operators"]["rms_norm"]["gradient"].update(gradient_extra or {})
    rules = []
    for r in d["rules"]:
        r.pop("profiles", None)
        if "operators" in r:
            if "rms_norm" not in r["operators"]:
                continue
            r["operators"] = ["rms_norm"]
        rules.append(r)
    d["rules"] = rules
    p = tmp_path / "c.json"
    p.write_text(json.dumps(d))
    return str(p)


def test_records_name_the_device_model_and_the_cublas_workspace(monkeypatch):
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    r = numoracle.record_provenance("numpy", "fp32", "cpu")
    assert r["device_name"] == "cpu" and r["cublas_workspace"] == ":4096:8"
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG")
    assert numoracle.record_provenance("numpy", "fp32", "cpu")["cublas_workspace"] == "unset"


@pytest.mark.parametrize("profile_extra,settings_extra,fake,why", [
    ({"device_name": "NVIDIA H200"}, {}, None,
     "the run's device name is cpu; profile p requires NVIDIA H200"),
    ({"device_name": "cpu"}, {}, {"device_name": "NVIDIA A100-SXM4-80GB"},
     "the run's device name is NVIDIA A100-SXM4-80GB; profile p requires cpu"),
    ({}, {"cublas_workspace": [":4096:8", ":16:8"]}, {"cublas_workspace": "unset"},
     "the run has CUBLAS_WORKSPACE_CONFIG unset; profile p allows :4096:8;:16:8"),
    ({}, {"cublas_workspace": [":4096:8"]}, {"cublas_workspace": ":16:8"},
     "the run has CUBLAS_WORKSPACE_CONFIG :16:8; profile p allows :4096:8"),
])
def test_a_run_on_another_device_or_workspace_is_rejected_before_running(tmp_path, profile_extra, settings_extra,
                                                                          fake, why):
    c = contract(tmp_path, profile_extra, settings_extra)
    fn = Counting(rms_fwd)
    m = numoracle.judge("rms_norm", "fp32", fn, contract=c, provenance=fake,
                        judgments=["forward_accuracy", "forward_invariance"])
    for cell in m.cells.values():
        assert cell.verdict == "REJECTED" and why in cell.detail, cell.detail
    assert fn.calls == 0  # the record before the first call already disagrees
    assert m.exit == 1


def test_the_same_profile_passes_when_the_run_agrees(tmp_path, monkeypatch):
    # the negative of the test above: the rule is not "always reject"
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")
    c = contract(tmp_path, {"device_name": "cpu"}, {"cublas_workspace": [":4096:8", ":16:8"]})
    fn = Counting(rms_fwd)
    m = numoracle.judge("rms_norm", "fp32", fn, contract=c, judgments=["forward_accuracy"])
    cell = m.cells["forward_accuracy"]
    assert cell.verdict == "PASS", cell.detail
    assert cell.provenance["device_name"] == "cpu" and cell.provenance["cublas_workspace"] == ":16:8"
    assert cell.provenance["input_dtypes"] == {"x": "fp32", "w": "fp32"}
    assert fn.calls == 2


def test_an_input_cast_on_the_way_is_rejected(tmp_path):
    c = contract(tmp_path)
    fn = Counting(rms_fwd)
    m = numoracle.judge("rms_norm", "fp32", fn, contract=c, provenance={"input_dtypes": {"w": "fp64"}},
                        judgments=["forward_accuracy", "forward_invariance"])
    for cell in m.cells.values():
        assert cell.verdict == "REJECTED", cell.detail
        assert "call 1 of rms_norm: input w reached the kernel as fp64; the cell gives fp32" in cell.detail
    assert fn.calls == 2  # one call per cell, then rejected: nothing judged is reported
    assert m.cells["forward_accuracy"].to_dict()["elements"] == 0


@pytest.mark.parametrize("where,value,msg", [
    ("settings", {"cublas_workspace": ":4096:8"}, "settings.cublas_workspace: expected a non-empty array"),
    ("settings", {"cublas_workspace": ["a;b"]}, "settings.cublas_workspace[0]: expected a non-empty string without ';'"),
    ("profile", {"device_name": ""}, "profiles.p.device_name: expected a non-empty string"),
    ("gradient", {"recomputed": ["x"]}, "operators.rms_norm.gradient.recomputed[0]: input x of op rms_norm_bwd is not optional"),
    ("gradient", {"recomputed": ["nope"]}, "operators.rms_norm.gradient.recomputed[0]: op rms_norm_bwd has no input nope"),
    ("gradient", {"recomputed": "rstd"}, "operators.rms_norm.gradient.recomputed: expected an array"),
])
def test_contract_errors_name_the_field(tmp_path, where, value, msg):
    c = contract(tmp_path, value if where == "profile" else None, value if where == "settings" else None,
                 value if where == "gradient" else None)
    with pytest.raises(numoracle.Error) as ei:
        numoracle.judge("rms_norm", "fp32", rms_fwd, contract=c)
    assert ei.value.status == 4 and f"{c}: " in ei.value.message and msg in ei.value.message, ei.value.message


# ---- a gradient that recomputes rstd --------------------------------------------------------

def rms_bwd_recomputing(seen):
    """rms_norm_bwd as autograd runs it: rstd from its own forward (1/sqrt in fp32, the sum
    of squares in fp64: not numoracle's derived RN32 value in every row), the factored
    formula; `seen` collects the rstd argument it was handed."""
    def rms_norm_bwd(dy, x, w, eps, rstd=None):
        seen.append(rstd)
        dy, x, w = (np.asarray(a, F32) for a in (dy, x, w))
        n = x.shape[1]
        ss = (x.astype(np.float64) ** 2).sum(1).astype(F32)
        r = (F32(1) / np.sqrt((ss / F32(n) + F32(eps)).astype(F32))).astype(F32)[:, None]
        m = (dy * w).astype(F32)
        S = (m.astype(np.float64) * x).sum(1, keepdims=True).astype(F32)
        c = ((r * r).astype(F32) * S / F32(n)).astype(F32)
        dx = (r * (m - (x * c).astype(F32))).astype(F32)
        dw = (dy.astype(np.float64) * x * r).sum(0).astype(F32)
        return dx, dw
    return rms_norm_bwd


def test_a_recomputed_statistic_is_not_handed_over_and_is_judged_absent(tmp_path):
    seen = []
    c = contract(tmp_path, gradient_extra={"recomputed": ["rstd"]})
    m = numoracle.judge("rms_norm", "fp32", None, rms_bwd_recomputing(seen), contract=c,
                        judgments=["gradient_accuracy", "gradient_invariance"])
    assert seen and all(r is None for r in seen)  # never the derived value
    assert m.cells["gradient_accuracy"].verdict == "PASS", m.cells["gradient_accuracy"].detail
    assert m.cells["gradient_invariance"].verdict == "PASS", m.cells["gradient_invariance"].detail
    # without "recomputed" the same callable is handed numoracle's derived rstd
    seen.clear()
    c2 = contract(tmp_path)
    numoracle.judge("rms_norm", "fp32", None, rms_bwd_recomputing(seen), contract=c2,
                    judgments=["gradient_accuracy"])
    assert seen and all(r is not None and r.shape == (8,) for r in seen)


# ---- the H200's own row: the false FAIL of issue 21 --------------------------------------

ROW = os.path.join(ROOT, "hip", "results", "h200-2026-12-02b", "rms_norm_bwd_row.npz")


def test_the_h200_row_passes_with_the_rstd_the_kernel_used_and_failed_with_the_derived_one():
    """Eager PyTorch 2.11 rms_norm backward on the H200, 64x4096 seed 1, row 2 (dx[11337]
    = dx[2, 3145] was the false FAIL): autograd used its forward's rstd, 2 ulps above the
    derived RN32(1/sqrt(mean x^2 + eps)). Judged against the derived value the row FAILs at
    that element (what the contract did before "recomputed"); with rstd absent (what the
    contract does now) or the forward's own value it PASSes. dw is this row's alone."""
    d = np.load(ROW)
    dy, x, w, dx = d["dy"], d["x"], d["w"], d["dx"]
    assert int(d["rstd_fwd"].view(np.int32)[0]) - int(d["rstd_derived"].view(np.int32)[0]) == 2
    dw = (dy.astype(np.float64) * x * d["rstd_fwd"].astype(np.float64)).astype(F32).reshape(-1)
    outs = {"dx": dx, "dw": dw}
    base = {"dy": dy, "x": x, "w": w}
    plan = "preset=torch-eager"
    bad = numoracle.check("rms_norm_bwd", {**base, "rstd": d["rstd_derived"]}, outs, plan=plan,
                          params={"eps": 1e-6})
    assert bad.verdict == "FAIL" and bad.worst.where() == "dx[0, 3145]", bad.worst
    assert bad.worst.candidate == float(F32(-0.789503872)), bad.worst
    for rstd in ({}, {"rstd": d["rstd_fwd"]}):
        rep = numoracle.check("rms_norm_bwd", {**base, **rstd}, outs, plan=plan, params={"eps": 1e-6})
        assert rep.verdict == "PASS", (rstd.keys(), rep.worst)
